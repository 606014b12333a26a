/* DEPTHWISE_CONV_2D with depth multiplier 1 on Helium (MVE) cores, the whole layer in one call
 * (depthwise_mve.py), requantization fused.
 *
 * Per output pixel, a table of its kh * kw taps' input pixels (the input zero point's row `pad` for taps
 * outside the image: the folded bias cancels it, as in conv.py; windows inside it from precomputed
 * offsets); then per half-group of 8 channels and tap, 8 input bytes widened to int16 (VLDRB.S16) times
 * the tap's 8 weights (int16, prepared offline) as two widening multiplies (VMULLB/VMULLT.S16: channels
 * 0, 2, 4, 6 and 1, 3, 5, 7) added to int32 sums that start at the bias. Whole groups of 16 channels run
 * in assembly, both halves per tap (one table load for 16 channels); the channels past the last one in
 * groups of 8 (the last predicated). The sums requantize as vectors (mtk_requant_mve), narrow back into
 * channel order (VMOVNT) and store 8 bytes. The channels' bias, multiplier and shift come per group of 8
 * as even then odd lanes (depthwise_mve.py requant_params). */
#ifndef MTK_DEPTHWISE_MVE_H_
#define MTK_DEPTHWISE_MVE_H_

#include <stdint.h>

#include "mtk_gemm_mve.h"   /* mtk_requant_mve, MTK_MVE_INLINE */

/* Requantized, narrowed and stored: channels whose even and odd sums are `even` and `odd` (`n` of them, 8
 * when `full`), with the params of their group at q. */
MTK_MVE_INLINE void mtk_dw_mve_store(int32x4_t even, int32x4_t odd, const int32_t* q, int32_t out_zp, int32x4_t lo,
                                     int32x4_t hi, int full, int32_t n, int8_t* out) {
  even = mtk_requant_mve(even, vldrwq_s32(q + 8), vldrwq_s32(q + 16), out_zp, lo, hi);
  odd = mtk_requant_mve(odd, vldrwq_s32(q + 12), vldrwq_s32(q + 20), out_zp, lo, hi);
  const int16x8_t narrow = vmovntq_s32(vreinterpretq_s16_s32(even), odd);
  if (full)
    vstrbq_s16(out, narrow);
  else
    vstrbq_p_s16(out, narrow, vctp16q((uint32_t)n));
}

/* The output pixel's channels c .. c + 7 (`n` of them, 8 when `full`) from its taps at taps[]. */
MTK_MVE_INLINE void mtk_dw_mve_group(const int8_t* const* taps, int32_t n_taps, int32_t c, const int16_t* w,
                                     const int32_t* q, int32_t out_zp, int32x4_t lo, int32x4_t hi, int full,
                                     int32_t n, int8_t* out) {
  const mve_pred16_t pred = vctp16q((uint32_t)n);
  int32x4_t even = vldrwq_s32(q), odd = vldrwq_s32(q + 4);
  for (int32_t t = 0; t < n_taps; ++t, w += 8) {
    const int16x8_t x = full ? vldrbq_s16(taps[t] + c) : vldrbq_z_s16(taps[t] + c, pred), wv = vldrhq_s16(w);
    even = vaddq_s32(even, vmullbq_int_s16(x, wv));
    odd = vaddq_s32(odd, vmulltq_int_s16(x, wv));
  }
  mtk_dw_mve_store(even, odd, q, out_zp, lo, hi, full, n, out);
}

/* Sums of channels c .. c + 15 over taps: per tap, one table load and two halves of 8 channels (VLDRB.S16
 * takes a low register), once or (LOOP4) 4 taps a pass for `n` passes: written out (a .rept would make gcc
 * misjudge the code's length). */
#define MTK_DW_MVE_TAP                                                                                            \
  "ldr %[p], [%[t]], #4\n\t"                                                                                     \
  "add %[p], %[p], %[c]\n\t"                                                                                     \
  "vldrb.s16 q4, [%[p]]\n\t"                                                                                     \
  "vldrh.16 q5, [%[w]], #16\n\t"                                                                                 \
  "vmullb.s16 q6, q4, q5\n\t"                                                                                    \
  "vmullt.s16 q7, q4, q5\n\t"                                                                                    \
  "vadd.i32 %q[e0], %q[e0], q6\n\t"                                                                              \
  "vadd.i32 %q[o0], %q[o0], q7\n\t"                                                                              \
  "vldrb.s16 q4, [%[p], #8]\n\t"                                                                                 \
  "vldrh.16 q5, [%[w]], #16\n\t"                                                                                 \
  "vmullb.s16 q6, q4, q5\n\t"                                                                                    \
  "vmullt.s16 q7, q4, q5\n\t"                                                                                    \
  "vadd.i32 %q[e1], %q[e1], q6\n\t"                                                                              \
  "vadd.i32 %q[o1], %q[o1], q7\n\t"
#define MTK_DW_MVE_ONCE MTK_DW_MVE_TAP
#define MTK_DW_MVE_LOOP4 \
  "1:\n\t" MTK_DW_MVE_TAP MTK_DW_MVE_TAP MTK_DW_MVE_TAP MTK_DW_MVE_TAP "subs %[n], %[n], #1\n\tbne 1b\n\t"
#define MTK_DW_MVE_TAPS(BODY, COUNT)                                                                                 \
  __asm__ volatile(BODY                                                                                          \
                   : [e0] "+w"(e0), [o0] "+w"(o0), [e1] "+w"(e1), [o1] "+w"(o1), [p] "=&l"(p), [t] "+r"(taps),      \
                     [w] "+r"(w), [n] "+r"(COUNT)                                                                   \
                   : [c] "r"(c)                                                                                     \
                   : "q4", "q5", "q6", "q7", "memory", "cc")

/* The output pixel's channels c .. c + 15 from its taps at taps[]: per tap, one table load and two halves of
 * 8 channels (weights [taps][16]: each tap's first half, then its second). VLDRB.S16 takes a low register. */
MTK_MVE_INLINE void mtk_dw_mve_group16(const int8_t* const* taps, int32_t n_taps, int32_t c, const int16_t* w,
                                       const int32_t* q, int32_t out_zp, int32x4_t lo, int32x4_t hi, int8_t* out) {
  int32x4_t e0 = vldrwq_s32(q), o0 = vldrwq_s32(q + 4), e1 = vldrwq_s32(q + 24), o1 = vldrwq_s32(q + 28);
  const int8_t* p;
  int32_t passes = n_taps / 4, once = 0;
  if (passes > 0) MTK_DW_MVE_TAPS(MTK_DW_MVE_LOOP4, passes);
  if (n_taps % 4 > 0) MTK_DW_MVE_TAPS(MTK_DW_MVE_ONCE, once);
  if (n_taps % 4 > 1) MTK_DW_MVE_TAPS(MTK_DW_MVE_ONCE, once);
  if (n_taps % 4 > 2) MTK_DW_MVE_TAPS(MTK_DW_MVE_ONCE, once);
  mtk_dw_mve_store(e0, o0, q, out_zp, lo, hi, 1, 8, out);
  mtk_dw_mve_store(e1, o1, q + 24, out_zp, lo, hi, 1, 8, out + 8);
}

/* x [in_h][in_w][C] -> out [out_h][out_w][C]: w int16 [groups of 8][kh * kw][8], q int32 [groups][24]. */
MTK_MVE_INLINE int32_t mtk_depthwise_mve_s8(const void* x, const void* w, const void* q, const void* pad, void* out,
                                            int32_t in_h, int32_t in_w, int32_t C, int32_t out_h, int32_t out_w,
                                            int32_t kh, int32_t kw, int32_t stride_h, int32_t stride_w,
                                            int32_t dil_h, int32_t dil_w, int32_t pad_top, int32_t pad_left,
                                            int32_t out_zp, int32_t act_min, int32_t act_max) {
  const int8_t* xb = (const int8_t*)x;
  int8_t* o = (int8_t*)out;
  const int32x4_t lo = vdupq_n_s32(act_min), hi = vdupq_n_s32(act_max);
  const int8_t* taps[kh * kw];
  int32_t offsets[kh * kw];   /* of each tap from the window's corner, when the window is inside the image */
  for (int32_t ky = 0; ky < kh; ++ky)
    for (int32_t kx = 0; kx < kw; ++kx) offsets[ky * kw + kx] = (ky * dil_h * in_w + kx * dil_w) * C;
  for (int32_t oy = 0; oy < out_h; ++oy) {
    const int32_t iy = oy * stride_h - pad_top;
    const int rows_inside = iy >= 0 && iy + (kh - 1) * dil_h < in_h;
    for (int32_t ox = 0; ox < out_w; ++ox) {
      const int32_t ix = ox * stride_w - pad_left;
      if (rows_inside && ix >= 0 && ix + (kw - 1) * dil_w < in_w) {
        const int8_t* corner = xb + (iy * in_w + ix) * C;
        for (int32_t t = 0; t < kh * kw; ++t) taps[t] = corner + offsets[t];
      } else {
        for (int32_t ky = 0; ky < kh; ++ky) {
          const int32_t y = iy + ky * dil_h;
          const int8_t** row_taps = taps + ky * kw;
          if (y < 0 || y >= in_h) {
            for (int32_t kx = 0; kx < kw; ++kx) row_taps[kx] = (const int8_t*)pad;
            continue;
          }
          const int8_t* row = xb + (y * in_w + ix) * C;
          for (int32_t kx = 0, px = ix; kx < kw; ++kx, px += dil_w)
            row_taps[kx] = px >= 0 && px < in_w ? row + kx * dil_w * C : (const int8_t*)pad;
        }
      }
      const int16_t* wp = (const int16_t*)w;
      const int32_t* qp = (const int32_t*)q;
      int32_t c = 0;
      for (; c + 16 <= C; c += 16, wp += 16 * kh * kw, qp += 48, o += 16)
        mtk_dw_mve_group16(taps, kh * kw, c, wp, qp, out_zp, lo, hi, o);
      for (; c + 8 <= C; c += 8, wp += 8 * kh * kw, qp += 24, o += 8)
        mtk_dw_mve_group(taps, kh * kw, c, wp, qp, out_zp, lo, hi, 1, 8, o);
      if (c < C) {
        mtk_dw_mve_group(taps, kh * kw, c, wp, qp, out_zp, lo, hi, 0, C - c, o);
        o += C - c;
      }
    }
  }
  return 0;
}

#endif /* MTK_DEPTHWISE_MVE_H_ */
