/* ADD on Helium (MVE) cores (elementwise.py): int8 ADD and int16 ADD/SUB, 4 elements a vector over a run of the
 * output in which each input either steps with the output or stays at one element (broadcast: its contribution
 * is one constant). int8: each input's contribution on the common scale from its 256-entry table (gather loads
 * indexed by the raw byte: the tables are rotated by 128); int16: computed, TFLM's AddElementwise/SubElementwise
 * (reference/add.h, sub.h) with left shift 15. Summed (int16 SUB: subtracted), then TFLM's
 * MultiplyByQuantizedMultiplierSmallerThanOneExp (shift <= 0), + out_zp, clamped.
 * VQRDMULH is gemmlowp's SaturatingRoundingDoublingHighMul for every sign: both are floor((ab + 2^30) / 2^31). */
#ifndef MTK_ADD_MVE_H_
#define MTK_ADD_MVE_H_

#include <stdint.h>

#include "mtk_gemm_mve.h"   /* MTK_MVE_INLINE */

/* An input's contributions for 4 elements at p: looked up, or `fixed` when the input stays (step 0). */
MTK_MVE_INLINE int32x4_t mtk_add_mve_term(const uint8_t* p, const int32_t* table, int32_t step, int32x4_t fixed) {
  return step ? vldrwq_gather_shifted_offset_s32(table, vldrbq_u32(p)) : fixed;
}

/* MultiplyByQuantizedMultiplierSmallerThanOneExp(s, mult, shift), shift <= 0. */
MTK_MVE_INLINE int32x4_t mtk_add_mve_rescale(int32x4_t s, int32_t mult, int32_t shift) {
  s = vqrdmulhq_n_s32(s, mult);
  if (shift < 0) s = vrshlq_n_s32(vqaddq_s32(s, vshrq_n_s32(s, 31)), shift);   /* RoundingDivideByPOT */
  return s;
}

MTK_MVE_INLINE int32x4_t mtk_add_mve_lanes(int32x4_t s, int32_t mult, int32_t shift, int32_t out_zp, int32x4_t lo,
                                           int32x4_t hi) {
  return vminq_s32(vmaxq_s32(vaddq_n_s32(mtk_add_mve_rescale(s, mult, shift), out_zp), lo), hi);
}

/* out[i] = a[i * a_step] + b[i * b_step] for i < n (steps 0 or 1). */
MTK_MVE_INLINE int32_t mtk_add_mve_s8(const void* a, const void* b, const void* ta, const void* tb, void* out,
                                      int32_t n, int32_t a_step, int32_t b_step, int32_t mult, int32_t shift,
                                      int32_t out_zp, int32_t act_min, int32_t act_max) {
  const uint8_t* pa = (const uint8_t*)a;
  const uint8_t* pb = (const uint8_t*)b;
  const int32_t* qa = (const int32_t*)ta;
  const int32_t* qb = (const int32_t*)tb;
  int8_t* po = (int8_t*)out;
  const int32x4_t lo = vdupq_n_s32(act_min), hi = vdupq_n_s32(act_max);
  const int32x4_t fixed_a = vdupq_n_s32(qa[pa[0]]), fixed_b = vdupq_n_s32(qb[pb[0]]);
  for (int32_t i = n >> 2; i > 0; --i, pa += 4 * a_step, pb += 4 * b_step, po += 4) {
    const int32x4_t s = vaddq_s32(mtk_add_mve_term(pa, qa, a_step, fixed_a), mtk_add_mve_term(pb, qb, b_step, fixed_b));
    vstrbq_s32(po, mtk_add_mve_lanes(s, mult, shift, out_zp, lo, hi));
  }
  if (n & 3) {   /* the last 1-3 elements, copied: no byte past the inputs is read */
    uint8_t ra[4] = {0}, rb[4] = {0};
    for (int32_t k = 0; k < (n & 3); ++k) ra[k] = pa[k * a_step], rb[k] = pb[k * b_step];
    const int32x4_t s = vaddq_s32(mtk_add_mve_term(ra, qa, a_step, fixed_a), mtk_add_mve_term(rb, qb, b_step, fixed_b));
    vstrbq_p_s32(po, mtk_add_mve_lanes(s, mult, shift, out_zp, lo, hi), vctp32q((uint32_t)(n & 3)));
  }
  return 0;
}

/* An int16 input on the common scale: rescaled (x - zp) * 2^15. The input of the larger scale (multiplier 2^30,
 * shift 0) is (x - zp) * 2^14 exactly. */
MTK_MVE_INLINE int32x4_t mtk_add_mve_term_s16(int32x4_t x, int32_t zp, int32_t mult, int32_t shift) {
  if (mult == (1 << 30) && shift == 0) return vshlq_n_s32(vsubq_n_s32(x, zp), 14);
  return mtk_add_mve_rescale(vshlq_n_s32(vsubq_n_s32(x, zp), 15), mult, shift);
}

/* The parameters of an int16 ADD/SUB, as mtk_add_mve_s16 takes them. */
typedef struct {
  int32_t a_step, b_step, a_zp, a_mult, a_shift, b_zp, b_mult, b_shift, subtract, mult, shift, out_zp;
  int32x4_t lo, hi, fixed_a, fixed_b;
} mtk_add_s16_params;

/* 4 outputs from 4 elements of each input (an input that stays: ignored, its fixed vector used). */
MTK_MVE_INLINE int32x4_t mtk_add_mve_vector_s16(int32x4_t xa, int32x4_t xb, const mtk_add_s16_params* q) {
  const int32x4_t ta = q->a_step ? mtk_add_mve_term_s16(xa, q->a_zp, q->a_mult, q->a_shift) : q->fixed_a;
  const int32x4_t tb = q->b_step ? mtk_add_mve_term_s16(xb, q->b_zp, q->b_mult, q->b_shift) : q->fixed_b;
  const int32x4_t s = q->subtract ? vsubq_s32(ta, tb) : vaddq_s32(ta, tb);
  return mtk_add_mve_lanes(s, q->mult, q->shift, q->out_zp, q->lo, q->hi);
}

/* out[i] = a[i * a_step] + b[i * b_step] (subtract: -) for i < n (steps 0 or 1), int16; the last 1-3 elements
 * predicated (inactive lanes read and write nothing). */
MTK_MVE_INLINE int32_t mtk_add_mve_s16(const void* a, const void* b, void* out, int32_t n, int32_t a_step,
                                       int32_t b_step, int32_t a_zp, int32_t a_mult, int32_t a_shift, int32_t b_zp,
                                       int32_t b_mult, int32_t b_shift, int32_t subtract, int32_t mult, int32_t shift,
                                       int32_t out_zp, int32_t act_min, int32_t act_max) {
  const int16_t* pa = (const int16_t*)a;
  const int16_t* pb = (const int16_t*)b;
  int16_t* po = (int16_t*)out;
  const mtk_add_s16_params q = {
      a_step, b_step, a_zp, a_mult, a_shift, b_zp, b_mult, b_shift, subtract, mult, shift, out_zp,
      vdupq_n_s32(act_min), vdupq_n_s32(act_max),
      mtk_add_mve_term_s16(vdupq_n_s32(pa[0]), a_zp, a_mult, a_shift),
      mtk_add_mve_term_s16(vdupq_n_s32(pb[0]), b_zp, b_mult, b_shift)};
  const int32x4_t zero = vdupq_n_s32(0);   /* read for an input that stays: no load past its element */
  for (int32_t i = n >> 2; i > 0; --i, pa += 4 * a_step, pb += 4 * b_step, po += 4)
    vstrhq_s32(po, mtk_add_mve_vector_s16(a_step ? vldrhq_s32(pa) : zero, b_step ? vldrhq_s32(pb) : zero, &q));
  if (n & 3) {
    const mve_pred16_t lanes = vctp32q((uint32_t)(n & 3));
    const int32x4_t xa = a_step ? vldrhq_z_s32(pa, lanes) : zero, xb = b_step ? vldrhq_z_s32(pb, lanes) : zero;
    vstrhq_p_s32(po, mtk_add_mve_vector_s16(xa, xb, &q), lanes);
  }
  return 0;
}

#endif /* MTK_ADD_MVE_H_ */
