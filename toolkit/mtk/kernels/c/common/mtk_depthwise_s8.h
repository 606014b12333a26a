/* Depthwise sums of one output pixel's group of 4 output channels (depthwise.py), tap by tap. Lane j
 * reads the input byte at offset off_j (off_0 = 0, off_j <= 3) from the group's first input channel:
 * - offsets (1, 2, 3): 4 consecutive input channels (depth multiplier 1): mtk_dw_tap (mtk_dot_s8_<isa>.h),
 *   one 4-byte load per tap, weights int16 in SXTB16 order (in order on Helium cores);
 * - otherwise (a multiplier above 1, where output channel c reads input channel c / multiplier; the last,
 *   partial group of a channel count that is not a multiple of 4, whose lanes past the last channel
 *   have weight 0 and offset 0): mtk_dw_lanes_tap, one byte load per lane, weights int16 in lane
 *   order: on DSP cores one LDRD of the tap's 4 weights and SMLABB/SMLABT per lane (x sign-extended
 *   in the bottom half), on Helium cores a 4-lane gather load, elsewhere one MLA per lane;
 * - on the Cortex-M3, groups whose lanes read their inputs in pairs (an even multiplier): mtk_dw_pairs_s8.
 * The weights are prepared offline, 8 bytes a tap. */
#ifndef MTK_DEPTHWISE_S8_H_
#define MTK_DEPTHWISE_S8_H_

#include <stdint.h>

#include "mtk_support.h"   /* MTK_COPY4, MTK_IN_REGISTER */

/* The instruction set's mtk_dot_s8_<isa>.h comes first (kernels/files.py): mtk_dw_sums_t, MTK_DW_SUMS_ZERO,
 * mtk_dw_tap, mtk_dw_lanes_tap, mtk_dw_store. */

/* acc[j] = sum over the kh x kw taps of x_tap[off_j] * w_tap[j]. Tap (ky, kx) reads at
 * x + ky*row_step + kx*col_step when ky_lo <= ky < ky_hi and kx_lo <= kx < kx_hi, and `pad` (the input
 * zero point) elsewhere. */
static inline int32_t mtk_dw_s8(const void* x, int32_t row_step, int32_t col_step, const void* w, int32_t kh,
                                      int32_t kw, int32_t ky_lo, int32_t ky_hi, int32_t kx_lo, int32_t kx_hi,
                                      int32_t pad, int32_t off1, int32_t off2, int32_t off3, int32_t* acc) {
  const int8_t* xb = (const int8_t*)x;
  const int16_t* wp = (const int16_t*)w;
  const int8_t pads[4] = {(int8_t)pad, (int8_t)pad, (int8_t)pad, (int8_t)pad};
  const int consecutive = off1 == 1 && off2 == 2 && off3 == 3;   /* constants at the call: folds */
  mtk_dw_sums_t sums = MTK_DW_SUMS_ZERO;
#pragma GCC unroll 8
  for (int32_t ky = 0; ky < kh; ++ky) {
    int row_inside = ky >= ky_lo && ky < ky_hi;
#pragma GCC unroll 8
    for (int32_t kx = 0; kx < kw; ++kx, wp += 4) {
      int inside = row_inside && kx >= kx_lo && kx < kx_hi;
      const int8_t* v = inside ? xb + ky * row_step + kx * col_step : pads;
      if (consecutive)
        mtk_dw_tap(&sums, v, wp);
      else
        mtk_dw_lanes_tap(&sums, v, wp, off1, off2, off3);
    }
  }
  return mtk_dw_store(acc, sums);
}

/* mtk_dw_s8 of a group whose lanes read their inputs in pairs (an even depth multiplier: lanes 0, 1 the group's first
 * input byte, lanes 2, 3 the byte at off2) on the Cortex-M3: one SMLAL a pair of lanes, against the pair's weights
 * packed as w0 + w1 * 2^23 (depthwise.pack_weights, paired; 8 bytes a tap as in the other layouts). A pair's 64-bit
 * sum is S0 + S1 * 2^23 with |S0| < 2^22 over at most MTK_DW_PAIR_TAPS taps (|x w| <= 2^14): S0 is its low 23 bits
 * sign-extended, S1 the rest. */
#define MTK_DW_PAIR_TAPS 255

static inline int32_t mtk_dw_pairs_s8(const void* x, int32_t row_step, int32_t col_step, const void* w, int32_t kh,
                                      int32_t kw, int32_t ky_lo, int32_t ky_hi, int32_t kx_lo, int32_t kx_hi,
                                      int32_t pad, int32_t off2, int32_t* acc) {
  const int8_t* xb = (const int8_t*)x;
  const int32_t* wp = (const int32_t*)w;
  int64_t s01 = 0, s23 = 0;
#pragma GCC unroll 8
  for (int32_t ky = 0; ky < kh; ++ky) {
    int row_inside = ky >= ky_lo && ky < ky_hi;
#pragma GCC unroll 8
    for (int32_t kx = 0; kx < kw; ++kx, wp += 2) {
      int inside = row_inside && kx >= kx_lo && kx < kx_hi;
      const int8_t* v = xb + ky * row_step + kx * col_step;
      int32_t w01, w23;
      MTK_COPY4(&w01, wp);
      MTK_COPY4(&w23, wp + 1);
      s01 += (int64_t)(inside ? v[0] : pad) * w01;   /* SMLAL: gcc 12 multiplies all 64 bits out for a pads[] load */
      s23 += (int64_t)(inside ? v[off2] : pad) * w23;
    }
  }
  const int32_t a0 = (int32_t)((uint32_t)s01 << 9) >> 9, a2 = (int32_t)((uint32_t)s23 << 9) >> 9;
  return mtk_store4(acc, a0, (int32_t)((s01 - a0) >> 23), a2, (int32_t)((s23 - a2) >> 23));
}

/* mtk_dw_s8 of 4 consecutive input channels (offsets 1, 2, 3) at two output pixels whose windows lie inside the
 * image, the second's `pair_step` bytes after the first's: acc[j] the first pixel's, acc[4 + j] the second's. Each
 * weight loaded once for both pixels: 5 instructions per 2 products with one MLA each (6 for one pixel); two
 * channels at a time, so that their 4 sums, the weight and the pointers stay in registers (cores without DSP or
 * Helium: depthwise.py). */
static inline int32_t mtk_dw2_s8(const void* x, int32_t row_step, int32_t col_step, int32_t pair_step, const void* w,
                                 int32_t kh, int32_t kw, int32_t* acc) {
  static const int32_t lane[4] = {0, 2, 1, 3};   /* weights in SXTB16 order */
#pragma GCC unroll 2
  for (int32_t c = 0; c < 4; c += 2) {
    const int8_t* xb = (const int8_t*)x + c;
    const int16_t* wp = (const int16_t*)w;
    int32_t a0 = 0, a1 = 0, b0 = 0, b1 = 0;
#pragma GCC unroll 8
    for (int32_t ky = 0; ky < kh; ++ky)
#pragma GCC unroll 8
      for (int32_t kx = 0; kx < kw; ++kx, wp += 4) {
        const int8_t* v = xb + ky * row_step + kx * col_step;
        int32_t w0 = wp[lane[c]];
        MTK_IN_REGISTER(w0);   /* else gcc 12 loads each weight again for the second pixel */
        a0 += v[0] * w0, b0 += v[pair_step] * w0;
        int32_t w1 = wp[lane[c + 1]];
        MTK_IN_REGISTER(w1);
        a1 += v[1] * w1, b1 += v[pair_step + 1] * w1;
      }
    acc[c] = a0, acc[c + 1] = a1, acc[4 + c] = b0, acc[5 + c] = b1;
  }
  return 0;
}

#endif /* MTK_DEPTHWISE_S8_H_ */
