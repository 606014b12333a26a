/* The 3x3 depthwise layers depthwise3x3_dsp.py generates assembly for, in C: what builds without the DSP
 * assembly run (host builds), the same arithmetic on the same stream.
 *
 * Output channel c reads input channel c / M (the depth multiplier). Per output channel the stream holds 8 int32:
 * mult, k, then the doubled weights as int16 pairs W<kx> = (w[0][kx], w[1][kx]), U = (w[2][0], w[2][1]),
 * V = (e, w[2][2]), and the doubled bias; taps outside the image read the input zero point zp. With a uniform
 * shift (> 0) the channels' sums are scaled to it (depthwise3x3_dsp.py uniform_shift): SMMLA's truncated product
 * plus k, shifted right by it, saturated. */
#ifndef MTK_DW3X3_DSP_H_
#define MTK_DW3X3_DSP_H_

#include <stdint.h>

#include "mtk_depthwise_dsp.h"

static inline int32_t mtk_dw3x3_half(int32_t v, int32_t high) {
  return (int16_t)(uint16_t)((uint32_t)v >> (high ? 16 : 0));
}

/* SMMLA acc2, mult, k, then SSAT #8 of it shifted right by `shift`. */
static inline int32_t mtk_dw3x3_uniform_requant(int32_t acc2, int32_t mult, int32_t k, int32_t shift) {
  const int32_t x = (int32_t)((uint32_t)k + (uint32_t)(int32_t)(mtk_mul_s32_s64(acc2, mult) >> 32)) >> shift;
  return x < -128 ? -128 : (x > 127 ? 127 : x);
}

static inline void mtk_dw3x3_c(const int8_t* x, const int32_t* stream, int8_t* out, int32_t in_h, int32_t in_w,
                               int32_t C_in, int32_t M, int32_t out_h, int32_t out_w, int32_t stride_h,
                               int32_t stride_w, int32_t pad_top, int32_t pad_left, int32_t in_row, int32_t in_col,
                               int32_t out_row, int32_t out_col, int32_t zp, int32_t act_min, int32_t act_max,
                               int32_t shift) {
  for (int32_t c = 0; c < C_in * M; ++c) {
    const int32_t* ch = stream + 8 * c;
    const int32_t q[3] = {ch[0], ch[1], mtk_dw3x3_half(ch[6], 0)};
    int32_t w[3][3];
    for (int32_t kx = 0; kx < 3; ++kx)
      w[0][kx] = mtk_dw3x3_half(ch[2 + kx], 0), w[1][kx] = mtk_dw3x3_half(ch[2 + kx], 1);
    w[2][0] = mtk_dw3x3_half(ch[5], 0), w[2][1] = mtk_dw3x3_half(ch[5], 1), w[2][2] = mtk_dw3x3_half(ch[6], 1);
    for (int32_t oy = 0; oy < out_h; ++oy)
      for (int32_t ox = 0; ox < out_w; ++ox) {
        int32_t acc = ch[7];
        for (int32_t ky = 0; ky < 3; ++ky)
          for (int32_t kx = 0; kx < 3; ++kx) {
            const int32_t iy = oy * stride_h - pad_top + ky, ix = ox * stride_w - pad_left + kx;
            const int inside = iy >= 0 && iy < in_h && ix >= 0 && ix < in_w;
            acc += w[ky][kx] * (inside ? x[iy * in_row + ix * in_col + c / M] : zp);
          }
        const int32_t y = shift ? mtk_dw3x3_uniform_requant(acc, ch[0], ch[1], shift) : mtk_dw_dsp_requant(acc, q);
        out[oy * out_row + ox * out_col + c] = (int8_t)mtk_dw_dsp_clamp(y, act_min, act_max);
      }
  }
}

#endif /* MTK_DW3X3_DSP_H_ */
