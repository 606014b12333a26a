/* int8 ADD of two same-shape tensors on Helium (MVE) cores (elementwise.py), 4 elements a vector: each
 * input's contribution on the common scale from its 256-entry table (gather loads indexed by the raw
 * byte: the tables are rotated by 128), summed, then TFLM's MultiplyByQuantizedMultiplierSmallerThanOneExp
 * (shift <= 0), + out_zp, clamped. */
#ifndef MTK_ADD_MVE_H_
#define MTK_ADD_MVE_H_

#include <stdint.h>

#include "mtk_gemm_mve.h"   /* MTK_MVE_INLINE */

MTK_MVE_INLINE int32x4_t mtk_add_mve_lanes(const uint8_t* a, const uint8_t* b, const int32_t* ta, const int32_t* tb,
                                           int32_t mult, int32_t shift, int32_t out_zp, int32x4_t lo, int32x4_t hi) {
  int32x4_t s = vaddq_s32(vldrwq_gather_shifted_offset_s32(ta, vldrbq_u32(a)),
                          vldrwq_gather_shifted_offset_s32(tb, vldrbq_u32(b)));
  s = vqrdmulhq_n_s32(s, mult);
  if (shift < 0) s = vrshlq_n_s32(vqaddq_s32(s, vshrq_n_s32(s, 31)), shift);   /* RoundingDivideByPOT */
  return vminq_s32(vmaxq_s32(vaddq_n_s32(s, out_zp), lo), hi);
}

MTK_MVE_INLINE int32_t mtk_add_mve_s8(const void* a, const void* b, const void* ta, const void* tb, void* out,
                                      int32_t n, int32_t mult, int32_t shift, int32_t out_zp, int32_t act_min,
                                      int32_t act_max) {
  const uint8_t* pa = (const uint8_t*)a;
  const uint8_t* pb = (const uint8_t*)b;
  int8_t* po = (int8_t*)out;
  const int32x4_t lo = vdupq_n_s32(act_min), hi = vdupq_n_s32(act_max);
  for (int32_t i = n >> 2; i > 0; --i, pa += 4, pb += 4, po += 4)
    vstrbq_s32(po, mtk_add_mve_lanes(pa, pb, (const int32_t*)ta, (const int32_t*)tb, mult, shift, out_zp, lo, hi));
  if (n & 3) {   /* the last 1-3 elements, copied: no byte past the inputs is read */
    uint8_t ra[4] = {0}, rb[4] = {0};
    for (int32_t k = 0; k < (n & 3); ++k) ra[k] = pa[k], rb[k] = pb[k];
    vstrbq_p_s32(po, mtk_add_mve_lanes(ra, rb, (const int32_t*)ta, (const int32_t*)tb, mult, shift, out_zp, lo, hi),
                 vctp32q((uint32_t)(n & 3)));
  }
  return 0;
}

#endif /* MTK_ADD_MVE_H_ */
