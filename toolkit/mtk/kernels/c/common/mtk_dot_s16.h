/* 16x8 micro-kernels (mtk/ops/int16x8.py): int16 activation rows times int8 weights, kept int8 in flash as
 * TFLM keeps them, summed in int32 (the kernels are only used when no channel's sum can leave int32); 2 rows
 * (mtk_dot_2x2_*) or 1 row (mtk_dot_1x2_*) times 2 output channels c0, c1 a call.
 *
 * Cores without Helium (int16x8.pack_channel_pairs): weights in blocks of 2 channels over depth k, for each pair
 * of values j the word (w[c0][2j], w[c1][2j], w[c0][2j+1], w[c1][2j+1]), then for an odd k (w[c0][k-1],
 * w[c1][k-1], 0, 0): whole words, a block word-aligned. On cores with the DSP extension SXTB16 and SXTB16 ROR #8
 * of a word give c0's and c1's int16 pair lined up with the activations' (mtk_dot_s16_dsp.h); elsewhere a plain
 * multiply-accumulate loop reads the bytes as they are (mtk_dot_s16_plain.h). Helium cores (mtk_dot_s16_mve.h) have
 * weight rows besides.
 * The instruction set's files come first (kernels/files.py): MTK_S16_PAIR_2X2 and MTK_S16_PAIR_1X2 (a pair of
 * values), MTK_S16_WHOLE_2X2 and MTK_S16_WHOLE_1X2 (an assembly loop over whole runs of pairs first, or nothing);
 * Helium's also mtk_copy_s16, mtk_zero_s16 and MTK_S16_RUNS. */
#ifndef MTK_DOT_S16_H_
#define MTK_DOT_S16_H_

#include <stdint.h>

#include "mtk_support.h"   /* MTK_COPY, mtk_store4 */

/* The last word's first 2 bytes times row r's value: an odd k's last value of c0 and c1. */
#define MTK_S16_ODD(r, w, a0, a1) (a0 += (r)[0] * (w)[0], a1 += (r)[0] * (w)[1])

/* acc[0..3] = r0·w(c0), r0·w(c1), r1·w(c0), r1·w(c1) over k values. */
static inline int32_t mtk_dot_2x2_s16(const int16_t* r0, const int16_t* r1, const int8_t* w, int32_t k,
                                      int32_t* acc) {
  int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;
  int32_t pairs = k >> 1;
  MTK_S16_WHOLE_2X2(r0, r1, w, k, pairs, a00, a01, a10, a11)
#pragma GCC unroll 2   /* without DSP (the M3): one loop test and one pointer step a 16 products */
  for (; pairs > 0; --pairs, r0 += 2, r1 += 2, w += 4) MTK_S16_PAIR_2X2(r0, r1, w, a00, a01, a10, a11);
  if (k & 1) {
    MTK_S16_ODD(r0, w, a00, a01);
    MTK_S16_ODD(r1, w, a10, a11);
  }
  return mtk_store4(acc, a00, a01, a10, a11);
}

/* acc[0..1] = r·w(c0), r·w(c1) over k values. */
static inline int32_t mtk_dot_1x2_s16(const int16_t* r, const int8_t* w, int32_t k, int32_t* acc) {
  int32_t a0 = 0, a1 = 0;
  int32_t pairs = k >> 1;
  MTK_S16_WHOLE_1X2(r, w, k, pairs, a0, a1)
#pragma GCC unroll 2
  for (; pairs > 0; --pairs, r += 2, w += 4) MTK_S16_PAIR_1X2(r, w, a0, a1);
  if (k & 1) MTK_S16_ODD(r, w, a0, a1);
  acc[0] = a0;
  acc[1] = a1;
  return 0;
}

#ifndef MTK_S16_RUNS   /* the compiler's copy, where the instruction set has no runs of its own (Helium's) */
#define MTK_S16_RUNS 0
static inline void mtk_copy_s16(int16_t* dst, const int16_t* src, int32_t n) { MTK_COPY(dst, src, (size_t)n * 2); }
static inline void mtk_zero_s16(int16_t* dst, int32_t n) {
  for (int32_t c = 0; c < n; ++c) dst[c] = 0;
}
#endif

/* The im2col row of the output pixel whose window starts at (iy, ix) (may be outside): k_h·k_w taps of in_c
 * values, 0 for taps outside the image (16x8 tensors have zero point 0). On Helium a window row outside the
 * image, or wholly inside it with taps next to each other (dilation 1), is one run of k_w·in_c values (elsewhere
 * the compiler's copy of a tap, whose length it knows, beats its call for a run: an386 s16-seanet-conv-16-3x3
 * 506,680 vs 665,320). */
static inline int32_t mtk_im2col_s16(const int16_t* x, int32_t iy, int32_t ix, int32_t in_h, int32_t in_w,
                                     int32_t in_c, int32_t k_h, int32_t k_w, int32_t dil_h, int32_t dil_w,
                                     int16_t* dst) {
  const int whole = dil_w == 1 && ix >= 0 && ix + k_w <= in_w;
  for (int32_t ky = 0; ky < k_h; ++ky) {
    int32_t y = iy + ky * dil_h;
    if (MTK_S16_RUNS && (y < 0 || y >= in_h || whole)) {
      if (y < 0 || y >= in_h) {
        mtk_zero_s16(dst, k_w * in_c);
      } else {
        mtk_copy_s16(dst, x + (y * in_w + ix) * in_c, k_w * in_c);
      }
      dst += k_w * in_c;
      continue;
    }
    for (int32_t kx = 0; kx < k_w; ++kx, dst += in_c) {
      int32_t xx = ix + kx * dil_w;
      if (y >= 0 && y < in_h && xx >= 0 && xx < in_w) {
        mtk_copy_s16(dst, x + (y * in_w + xx) * in_c, in_c);
      } else {
        mtk_zero_s16(dst, in_c);
      }
    }
  }
  return 0;
}

/* mtk_im2col_s16's row from an int8 input of zero point zp (an int8 TRANSPOSE_CONV's phases): each value less zp,
 * 0 for taps outside the image; 4 values at a time where the instruction set has mtk_s8_s16_quad. */
static inline int32_t mtk_im2col_s8_s16(const int8_t* x, int32_t iy, int32_t ix, int32_t in_h, int32_t in_w,
                                        int32_t in_c, int32_t k_h, int32_t k_w, int32_t dil_h, int32_t dil_w,
                                        int32_t zp, int16_t* dst) {
#ifdef MTK_S8_S16_QUADS
  const uint32_t zz = (uint16_t)zp * 0x10001u;
#endif
  for (int32_t ky = 0; ky < k_h; ++ky) {
    int32_t y = iy + ky * dil_h;
    for (int32_t kx = 0; kx < k_w; ++kx, dst += in_c) {
      int32_t xx = ix + kx * dil_w;
      if (y >= 0 && y < in_h && xx >= 0 && xx < in_w) {
        const int8_t* src = x + (y * in_w + xx) * in_c;
        int32_t c = 0;
#ifdef MTK_S8_S16_QUADS
        for (; c + 4 <= in_c; c += 4) mtk_s8_s16_quad(dst + c, src + c, zz);
#endif
        for (; c < in_c; ++c) dst[c] = (int16_t)(src[c] - zp);
      } else {
        mtk_zero_s16(dst, in_c);
      }
    }
  }
  return 0;
}

#endif /* MTK_DOT_S16_H_ */
