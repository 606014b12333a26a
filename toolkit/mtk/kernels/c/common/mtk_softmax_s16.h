/* int16 SOFTMAX (mtk/ops/softmax.py), TFLM's SoftmaxInt16 (reference/softmax.h) row by row: each exp is computed
 * once, kept in the output row, then scaled by the row's reciprocal in place. */
#ifndef MTK_SOFTMAX_S16_H_
#define MTK_SOFTMAX_S16_H_

#include <stdint.h>

#include "mtk_dsp_intrinsics.h"   /* mtk_smmulr */
#include "mtk_fixedpoint.h"       /* mtk_srdhm, mtk_sat_s16 (arm_acle.h where the core saturates) */

/* LUTLookup(int16_t value, lut) (kernels/internal/common.h): 513 entries, interpolated on the low 7 bits. */
static inline int16_t mtk_lut_s16(int32_t value, const int16_t* lut) {
  const int16_t* at = lut + 256 + (value >> 7);
  int16_t slope = (int16_t)(at[1] - at[0]);
  return (int16_t)(at[0] + ((slope * (value & 0x7f) + 64) >> 7));
}

/* CountLeadingZeros of v > 0 (ARMv6-M has no CLZ: a binary search rather than libgcc's __clzsi2). */
static inline int32_t mtk_clz_u32(uint32_t v) {
#if defined(__ARM_FEATURE_CLZ) || !defined(__arm__)
  return __builtin_clz(v);
#else
  int32_t n = 0;
  if (v < 0x10000u) n += 16, v <<= 16;
  if (v < 0x1000000u) n += 8, v <<= 8;
  if (v < 0x10000000u) n += 4, v <<= 4;
  if (v < 0x40000000u) n += 2, v <<= 2;
  return n + (v < 0x80000000u);
#endif
}

/* MultiplyByQuantizedMultiplier(int32_t x, mult, shift) of a difference x in [-65535, 0]: SRDHM of x·2^max(shift, 0),
 * then RoundingDivideByPOT. With mult >= 0 and x·2^(shift+1) within int32 (shift <= 14) the product is never positive,
 * so SRDHM is (x·2^(shift+1)·mult + 2^31) >> 32 (SMMULR on DSP cores) and the rounding division
 * (v + 2^(e−1) − 1) >> e. */
static inline int32_t mtk_softmax_scale_s16(int32_t x, int32_t mult, int32_t shift) {
  if (shift <= 14) {
    int32_t doubled = x * (1 << ((shift > 0 ? shift : 0) + 1)), v = mtk_smmulr(doubled, mult);
    return shift >= 0 ? v : (v + (1 << (-shift - 1)) - 1) >> -shift;
  }
  return mtk_srdhm((int32_t)((uint32_t)x << shift), mult);
}

static inline int32_t mtk_softmax_s16(const int16_t* x, const int16_t* exp_lut, const int16_t* reciprocal_lut,
                                      int16_t* y, int32_t rows, int32_t depth, int32_t mult, int32_t shift) {
  for (int32_t r = 0; r < rows; ++r, x += depth, y += depth) {
    int32_t max = -32768, sum = 0;
    for (int32_t j = 0; j < depth; ++j) max = x[j] > max ? x[j] : max;
    for (int32_t j = 0; j < depth; ++j) {
      int16_t e = mtk_lut_s16(mtk_sat_s16(mtk_softmax_scale_s16(x[j] - max, mult, shift) + 32767), exp_lut);
      y[j] = e;
      sum += e;
    }
    /* sum >= 1 (the row's maximum contributes exp(0)): CountLeadingZeros in [1, 31] */
    int32_t headroom = mtk_clz_u32((uint32_t)sum);
    int32_t shifted = (int32_t)((((int64_t)sum << (headroom - 1)) + (1 << 13)) >> 14) - ((1 << 15) + (1 << 16));
    int32_t reciprocal = mtk_lut_s16(mtk_sat_s16(shifted), reciprocal_lut);
    int32_t right = 31 - headroom, round = 1 << (right - 1);
    for (int32_t j = 0; j < depth; ++j) {
      int32_t v = (y[j] * reciprocal + round) >> right;
#if defined(__ARM_FEATURE_SAT) && __ARM_FEATURE_SAT
      y[j] = (int16_t)__usat(v, 15);
#else
      y[j] = (int16_t)(v < 0 ? 0 : (v > 32767 ? 32767 : v));
#endif
    }
  }
  return 0;
}

#endif /* MTK_SOFTMAX_S16_H_ */
