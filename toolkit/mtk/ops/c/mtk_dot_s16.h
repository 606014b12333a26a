/* 16x8 micro-kernels (mtk/ops/int16x8.py): int16 activation rows times int8 weights that were expanded to
 * int16 offline, summed in int32 (the kernel is only used when no channel's sum can leave int32).
 *
 * Weights come in blocks of 2 output channels c0, c1 over depth k: for each pair of values j,
 * (w[c0][2j], w[c0][2j+1], w[c1][2j], w[c1][2j+1]), then for an odd k (w[c0][k-1], w[c1][k-1]).
 * On cores with the DSP extension one SMLAD adds two products: the int16 activations need no unpacking,
 * a word of a row is a pair as SMLAD takes it. Elsewhere, and on the host unless MTK_EMULATE_DSP (the
 * same pairs in portable C), a plain multiply-accumulate loop. */
#ifndef MTK_DOT_S16_H_
#define MTK_DOT_S16_H_

#include <stdint.h>

#include "mtk_support.h"   /* MTK_COPY, mtk_store4 */

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>
#define MTK_S16_PAIRS 1
#define mtk_s16_smlad(a, b, acc) __smlad((a), (b), (acc))
#elif defined(MTK_EMULATE_DSP)
#define MTK_S16_PAIRS 1
static inline int32_t mtk_s16_smlad(uint32_t a, uint32_t b, int32_t acc) {
  int32_t lo = (int32_t)(int16_t)(a & 0xffffu) * (int32_t)(int16_t)(b & 0xffffu);
  int32_t hi = (int32_t)(int16_t)(a >> 16) * (int32_t)(int16_t)(b >> 16);
  return (int32_t)((uint32_t)acc + (uint32_t)lo + (uint32_t)hi);
}
#endif

#ifdef MTK_S16_PAIRS
static inline uint32_t mtk_s16_pair(const int16_t* p) {   /* rows may start at any int16 */
  uint32_t v;
  MTK_COPY(&v, p, 4);
  return v;
}
#endif

/* acc[0..3] = r0·w(c0), r0·w(c1), r1·w(c0), r1·w(c1) over k values (r1 may be r0). */
static inline int32_t mtk_dot_2x2_s16(const int16_t* r0, const int16_t* r1, const int16_t* w, int32_t k,
                                      int32_t* acc) {
  int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;
  int32_t pairs = k >> 1;
#ifdef MTK_S16_PAIRS
  for (; pairs > 0; --pairs, r0 += 2, r1 += 2, w += 4) {
    uint32_t x0 = mtk_s16_pair(r0), x1 = mtk_s16_pair(r1), w0 = mtk_s16_pair(w), w1 = mtk_s16_pair(w + 2);
    a00 = mtk_s16_smlad(x0, w0, a00);
    a01 = mtk_s16_smlad(x0, w1, a01);
    a10 = mtk_s16_smlad(x1, w0, a10);
    a11 = mtk_s16_smlad(x1, w1, a11);
  }
#else
  for (; pairs > 0; --pairs, r0 += 2, r1 += 2, w += 4) {
    int32_t x00 = r0[0], x01 = r0[1], x10 = r1[0], x11 = r1[1];
    a00 += x00 * w[0] + x01 * w[1];
    a01 += x00 * w[2] + x01 * w[3];
    a10 += x10 * w[0] + x11 * w[1];
    a11 += x10 * w[2] + x11 * w[3];
  }
#endif
  if (k & 1) {
    a00 += (int32_t)r0[0] * w[0];
    a01 += (int32_t)r0[0] * w[1];
    a10 += (int32_t)r1[0] * w[0];
    a11 += (int32_t)r1[0] * w[1];
  }
  return mtk_store4(acc, a00, a01, a10, a11);
}

/* Helium cores (int16x8.py pack_channel_rows): the same sums from weights in rows, a block of 2 output channels being
 * w[c0][0..k) then w[c1][0..k); 8 int16 a vector, VMLADAVA per row and channel, the tail predicated (VCTP). Elsewhere
 * (host tests of a Helium build) the same layout in plain C. */
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#endif
static inline int32_t mtk_dot_2x2_rows_s16(const int16_t* r0, const int16_t* r1, const int16_t* w, int32_t k,
                                           int32_t* acc) {
  const int16_t* w1 = w + k;
  int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
  for (int32_t i = 0; i < k; i += 8) {
    mve_pred16_t p = vctp16q((uint32_t)(k - i));
    int16x8_t x0 = vldrhq_z_s16(r0 + i, p), x1 = vldrhq_z_s16(r1 + i, p);
    int16x8_t v0 = vldrhq_z_s16(w + i, p), v1 = vldrhq_z_s16(w1 + i, p);
    a00 = vmladavaq_s16(a00, x0, v0);
    a01 = vmladavaq_s16(a01, x0, v1);
    a10 = vmladavaq_s16(a10, x1, v0);
    a11 = vmladavaq_s16(a11, x1, v1);
  }
#else
  for (int32_t i = 0; i < k; ++i) {
    a00 += (int32_t)r0[i] * w[i];
    a01 += (int32_t)r0[i] * w1[i];
    a10 += (int32_t)r1[i] * w[i];
    a11 += (int32_t)r1[i] * w1[i];
  }
#endif
  acc[0] = a00;
  acc[1] = a01;
  acc[2] = a10;
  acc[3] = a11;
  return 0;
}

/* The im2col row of the output pixel whose window starts at (iy, ix) (may be outside): k_h·k_w taps of in_c
 * values, 0 for taps outside the image (16x8 tensors have zero point 0). */
static inline int32_t mtk_im2col_s16(const int16_t* x, int32_t iy, int32_t ix, int32_t in_h, int32_t in_w,
                                     int32_t in_c, int32_t k_h, int32_t k_w, int32_t dil_h, int32_t dil_w,
                                     int16_t* dst) {
  for (int32_t ky = 0; ky < k_h; ++ky) {
    int32_t y = iy + ky * dil_h;
    for (int32_t kx = 0; kx < k_w; ++kx, dst += in_c) {
      int32_t xx = ix + kx * dil_w;
      if (y >= 0 && y < in_h && xx >= 0 && xx < in_w) {
        MTK_COPY(dst, x + (y * in_w + xx) * in_c, (size_t)in_c * 2);
      } else {
        for (int32_t c = 0; c < in_c; ++c) dst[c] = 0;
      }
    }
  }
  return 0;
}

#endif /* MTK_DOT_S16_H_ */
