/* The Helium cores' requantization of mtk_depthwise_s8.h's sums (depthwise.py, a layer whose channels all shift right). */
#ifndef MTK_DEPTHWISE_S8_MVE_H_
#define MTK_DEPTHWISE_S8_MVE_H_

#include <arm_mve.h>
#include <stdint.h>

/* The group's n <= 4 outputs on Helium, from its sums and per-channel bias, multiplier and shift (< 0: every
 * channel shifts right, or has multiplier 0): TFLM's MultiplyByQuantizedMultiplier, whose
 * SaturatingRoundingDoublingHighMul is VQRDMULH and whose RoundingDivideByPOT (half away from zero) is a
 * rounding VRSHL (half up) of the value less 1 when negative (saturating: INT32_MIN stays exact);
 * + out_zp, clamped to the activation range, the low bytes stored. */
static inline int32_t mtk_dw_requant_mve_s8(const int32_t* acc, const int32_t* bias, const int32_t* mult,
                                            const int32_t* shift, int32_t out_zp, int32_t act_min, int32_t act_max,
                                            int32_t n, void* out) {
  int32x4_t v = vaddq_s32(vldrwq_s32(acc), vldrwq_s32(bias));
  v = vqrdmulhq_s32(v, vldrwq_s32(mult));
  v = vqaddq_s32(v, vshrq_n_s32(v, 31));
  v = vrshlq_s32(v, vldrwq_s32(shift));
  v = vaddq_n_s32(v, out_zp);
  v = vmaxq_s32(vminq_s32(v, vdupq_n_s32(act_max)), vdupq_n_s32(act_min));
  vstrbq_p_s32((int8_t*)out, v, vctp32q((uint32_t)n));
  return 0;
}

#endif /* MTK_DEPTHWISE_S8_MVE_H_ */
