/* int8 ADD and SUB of two tensors of one shape on cores with a long multiply (elementwise.py, add_s8_kernel):
 * TFLM's AddFunc (reference/integer_ops/add.h) with each input's rescale to the common scale read from its
 * 256-entry table (rotated by 128, so that the raw byte indexes it, and doubled; SUB: the second table negated),
 * and the output's MultiplyByQuantizedMultiplierSmallerThanOneExp, + out_zp, in one 64-bit multiply-add (SMMLAR
 * on DSP cores) and a shift: with x2 = 2*x (the tables' sum), SaturatingRoundingDoublingHighMul(x, m) =
 * floor((x*m + 2^30) / 2^31) = the high word of x2*m + 2^31, and RoundingDivideByPOT by e >= 1 then + out_zp is
 * floor((h + 2^(e-1) - [x < 0]) / 2^e) + out_zp: the high word of x2*m + 2^31 + c*2^32 with c = 2^(e-1) +
 * out_zp*2^e, then x2's sign bit the -[x < 0] (where x < 0 gives h = 0 instead of h < 0, both forms give out_zp).
 * elementwise.py checks offline that x2 and the sum with c stay within int32. */
#ifndef MTK_ADD_S8_H_
#define MTK_ADD_S8_H_

#include <stdint.h>

#include "mtk_fixedpoint.h"      /* mtk_mul_s32_s64, mtk_clamp_s8 */
#include "mtk_dsp_intrinsics.h"   /* MTK_DSP_ASM */

/* The sum's requantization: x2 = ta[a] + tb[b]. */
static inline int8_t mtk_add_s8_requant(int32_t x2, int32_t m, int32_t c, int32_t e, int32_t lo, int32_t hi) {
#ifdef MTK_DSP_ASM
  int32_t high;   /* SMMLAR: gcc 12 makes the C below an SMLAL on two fresh accumulator registers */
  __asm__("smmlar %0, %1, %2, %3" : "=r"(high) : "r"(x2), "r"(m), "r"(c));
#else
  const int64_t p = mtk_mul_s32_s64(x2, m) + (int64_t)((uint64_t)(int64_t)c << 32) + ((int64_t)1 << 31);
  const int32_t high = (int32_t)(p >> 32);
#endif
  return (int8_t)mtk_clamp_s8((high + (x2 >> 31)) >> e, lo, hi);
}

/* out[i] = a[i] + b[i] on the common scale, requantized, for i < n; four elements a step, each step's loads before
 * its stores (which may alias them: the compiler keeps the order), so that they issue back to back. */
static inline int32_t mtk_add_s8(const void* a, const void* b, const int32_t* ta, const int32_t* tb, void* out,
                                 int32_t n, int32_t m, int32_t c, int32_t e, int32_t lo, int32_t hi) {
  const uint8_t* pa = (const uint8_t*)a;
  const uint8_t* pb = (const uint8_t*)b;
  int8_t* po = (int8_t*)out;
  int32_t i = 0;
  for (; i < n - 3; i += 4) {
    const int32_t x0 = ta[pa[i]] + tb[pb[i]], x1 = ta[pa[i + 1]] + tb[pb[i + 1]];
    const int32_t x2 = ta[pa[i + 2]] + tb[pb[i + 2]], x3 = ta[pa[i + 3]] + tb[pb[i + 3]];
    po[i] = mtk_add_s8_requant(x0, m, c, e, lo, hi);
    po[i + 1] = mtk_add_s8_requant(x1, m, c, e, lo, hi);
    po[i + 2] = mtk_add_s8_requant(x2, m, c, e, lo, hi);
    po[i + 3] = mtk_add_s8_requant(x3, m, c, e, lo, hi);
  }
  for (; i < n; ++i) po[i] = mtk_add_s8_requant(ta[pa[i]] + tb[pb[i]], m, c, e, lo, hi);
  return 0;
}

#endif /* MTK_ADD_S8_H_ */
