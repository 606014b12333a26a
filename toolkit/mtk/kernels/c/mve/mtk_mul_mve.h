/* MUL on Helium (MVE) cores (elementwise.py): int8 and int16, 4 elements a vector over a run of the output in
 * which each input either steps with the output or stays at one element (broadcast). TFLM's MulElementwise
 * (reference/integer_ops/mul.h): (a - a_zp) * (b - b_zp) within int32 (int16: zero points 0), then
 * MultiplyByQuantizedMultiplier for any shift (mtk_requant_lshift_mve), + out_zp, clamped. */
#ifndef MTK_MUL_MVE_H_
#define MTK_MUL_MVE_H_

#include <stdint.h>

#include "mtk_gemm_mve.h"   /* MTK_MVE_INLINE, mtk_requant_lshift_mve */

/* The parameters of a MUL as the lanes take them: offsets -zp, the rescale's vectors (lshift >= 0, rshift <= 0). */
typedef struct {
  int32_t a_offset, b_offset, out_zp;
  int32x4_t mult, lshift, rshift, lo, hi;
} mtk_mul_params;

MTK_MVE_INLINE mtk_mul_params mtk_mul_mve_params(int32_t a_zp, int32_t b_zp, int32_t mult, int32_t shift,
                                                 int32_t out_zp, int32_t act_min, int32_t act_max) {
  const mtk_mul_params q = {-a_zp, -b_zp, out_zp, vdupq_n_s32(mult), vdupq_n_s32(shift > 0 ? shift : 0),
                            vdupq_n_s32(shift < 0 ? shift : 0), vdupq_n_s32(act_min), vdupq_n_s32(act_max)};
  return q;
}

/* 4 outputs from 4 raw elements of each input. */
MTK_MVE_INLINE int32x4_t mtk_mul_mve_lanes(int32x4_t xa, int32x4_t xb, const mtk_mul_params* q) {
  const int32x4_t product = vmulq_s32(vaddq_n_s32(xa, q->a_offset), vaddq_n_s32(xb, q->b_offset));
  const int32x4_t scaled = mtk_requant_lshift_mve(product, q->mult, q->rshift, q->lshift);
  return vminq_s32(vmaxq_s32(vaddq_n_s32(scaled, q->out_zp), q->lo), q->hi);
}

/* One run, the steps known where it is inlined (each pair of steps its own loop, no test inside): an input that
 * stays reads its one element once; the last 1-3 elements predicated (inactive lanes read and write nothing). */
#define MTK_MUL_MVE_RUN(NAME, T, LOAD, LOAD_Z, STORE, STORE_P)                                                    \
  MTK_MVE_INLINE void NAME(const T* pa, const T* pb, T* po, int32_t n, int32_t a_step, int32_t b_step,            \
                           const mtk_mul_params* q) {                                                             \
    const int32x4_t fixed_a = vdupq_n_s32(pa[0]), fixed_b = vdupq_n_s32(pb[0]);                                   \
    for (int32_t i = n >> 2; i > 0; --i, pa += 4 * a_step, pb += 4 * b_step, po += 4)                             \
      STORE(po, mtk_mul_mve_lanes(a_step ? LOAD(pa) : fixed_a, b_step ? LOAD(pb) : fixed_b, q));                  \
    if (n & 3) {                                                                                                  \
      const mve_pred16_t lanes = vctp32q((uint32_t)(n & 3));                                                      \
      const int32x4_t xa = a_step ? LOAD_Z(pa, lanes) : fixed_a, xb = b_step ? LOAD_Z(pb, lanes) : fixed_b;       \
      STORE_P(po, mtk_mul_mve_lanes(xa, xb, q), lanes);                                                           \
    }                                                                                                             \
  }
MTK_MUL_MVE_RUN(mtk_mul_mve_run_s8, int8_t, vldrbq_s32, vldrbq_z_s32, vstrbq_s32, vstrbq_p_s32)
MTK_MUL_MVE_RUN(mtk_mul_mve_run_s16, int16_t, vldrhq_s32, vldrhq_z_s32, vstrhq_s32, vstrhq_p_s32)
#undef MTK_MUL_MVE_RUN

/* NAME: out[i] = a[i * a_step] * b[i * b_step] rescaled, for i < n (steps 0 or 1; not both 0 unless n is 1), of T
 * (int16: TFLM's zero points 0, the product within int32), by RUN specialised on the steps. */
#define MTK_MUL_MVE_ENTRY(NAME, T, RUN)                                                                         \
  MTK_MVE_INLINE int32_t NAME(const void* a, const void* b, void* out, int32_t n, int32_t a_step, int32_t b_step, \
                              int32_t a_zp, int32_t b_zp, int32_t mult, int32_t shift, int32_t out_zp,           \
                              int32_t act_min, int32_t act_max) {                                                \
    const mtk_mul_params q = mtk_mul_mve_params(a_zp, b_zp, mult, shift, out_zp, act_min, act_max);             \
    const T *pa = (const T*)a, *pb = (const T*)b;                                                                \
    T* po = (T*)out;                                                                                             \
    if (a_step && b_step) RUN(pa, pb, po, n, 1, 1, &q);                                                          \
    else if (a_step) RUN(pa, pb, po, n, 1, 0, &q);                                                               \
    else RUN(pa, pb, po, n, 0, b_step, &q);                                                                      \
    return 0;                                                                                                    \
  }
MTK_MUL_MVE_ENTRY(mtk_mul_mve_s8, int8_t, mtk_mul_mve_run_s8)
MTK_MUL_MVE_ENTRY(mtk_mul_mve_s16, int16_t, mtk_mul_mve_run_s16)
#undef MTK_MUL_MVE_ENTRY

#endif /* MTK_MUL_MVE_H_ */
