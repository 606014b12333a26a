/* The im2col rows' fills and copies on Helium cores (mtk_im2col_s8.h). */
#ifndef MTK_IM2COL_S8_MVE_H_
#define MTK_IM2COL_S8_MVE_H_

#include <arm_mve.h>
#include <stdint.h>

/* Helium: inlined into the GEMM's loop (its geometry folds), 16 bytes a vector, the last partial one predicated. */
#define MTK_IM2COL_INLINE static inline __attribute__((always_inline))
static inline int8_t* mtk_im2col_fill(int8_t* d, int8_t value, int32_t n) {
  const int8x16_t v = vdupq_n_s8(value);
  for (; n >= 16; n -= 16, d += 16) vstrbq_s8(d, v);
  if (n > 0) vstrbq_p_s8(d, v, vctp8q((uint32_t)n));
  return d + n;
}

static inline int8_t* mtk_im2col_copy(int8_t* d, const int8_t* s, int32_t n) {
  for (; n >= 16; n -= 16, d += 16, s += 16) vstrbq_s8(d, vldrbq_s8(s));
  if (n > 0) {
    const mve_pred16_t p = vctp8q((uint32_t)n);
    vstrbq_p_s8(d, vldrbq_z_s8(s, p), p);
  }
  return d + n;
}

#endif /* MTK_IM2COL_S8_MVE_H_ */
