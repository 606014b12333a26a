/* int8 and int16 AVERAGE_POOL_2D and MAX_POOL_2D on Helium (MVE) cores (pooling.py), the whole layer in one call.
 * Per output pixel the window's taps inside the input (TFLM counts only those for the average):
 * - average, 8 channels a vector: int16 sums of the taps (VLDRB.S16; 256 taps at most, then added into int32
 *   sums: no overflow), widened to int32 and divided by the count as TFLM rounds ((|sum| + count/2) / count,
 *   the sign put back) through an unsigned multiply-high by m = ceil(2^32 / count): exact while
 *   |sum| * (m * count - 2^32) < 2^32, so for |sum| <= 128.5 * count up to 4096 taps (pooling.py);
 * - max, 16 channels a vector: VMAX.S8 from -128;
 * - int16 average, 8 channels in two vectors of int32 sums (VLDRH.S32), divided exactly: the quotient by
 *   m = floor((2^32 - 1) / count) is at most one short, checked by a multiply-back;
 * - int16 max, 8 channels a vector: VMAX.S16 from -32768;
 * then clamped to the activation range and stored (predicated past the last channel). */
#ifndef MTK_POOL_MVE_H_
#define MTK_POOL_MVE_H_

#include <stdint.h>

#include "mtk_gemm_mve.h"   /* MTK_MVE_INLINE */
#include "mtk_pool_window.h"   /* mtk_pool_layer */

/* TFLM's rounded sum / count for int32 lanes, count >= 1; recip = ceil(2^32 / count) (count 1: unused). */
MTK_MVE_INLINE int32x4_t mtk_pool_mve_divide(int32x4_t sum, int32_t count, uint32x4_t recip) {
  if (count == 1) return sum;
  const int32x4_t sign = vshrq_n_s32(sum, 31);
  const uint32x4_t n = vreinterpretq_u32_s32(vaddq_n_s32(vabsq_s32(sum), count / 2));
  const int32x4_t q = vreinterpretq_s32_u32(vmulhq_u32(n, recip));
  return vsubq_s32(veorq_s32(q, sign), sign);
}

/* TFLM's rounded sum / count for int32 lanes of any sum, count >= 1; recip = floor((2^32 - 1) / count). */
MTK_MVE_INLINE int32x4_t mtk_pool_mve_divide_exact(int32x4_t sum, int32_t count, uint32x4_t recip) {
  if (count == 1) return sum;
  const int32x4_t sign = vshrq_n_s32(sum, 31);
  const uint32x4_t n = vreinterpretq_u32_s32(vaddq_n_s32(vabsq_s32(sum), count / 2));
  uint32x4_t q = vmulhq_u32(n, recip);
  const uint32x4_t r = vsubq_u32(n, vmulq_n_u32(q, (uint32_t)count));
  q = vaddq_m_n_u32(q, q, 1u, vcmpcsq_n_u32(r, (uint32_t)count));
  const int32x4_t s = vreinterpretq_s32_u32(q);
  return vsubq_s32(veorq_s32(s, sign), sign);
}

MTK_MVE_INLINE int32x4_t mtk_pool_mve_clamp_s32(int32x4_t v, int32_t act_min, int32_t act_max) {
  return vminq_s32(vmaxq_s32(v, vdupq_n_s32(act_min)), vdupq_n_s32(act_max));
}

/* One int8 output pixel, 8 channels a vector (average) or 16 (max). */
MTK_MVE_INLINE void mtk_pool_mve_pixel_s8(const void* at, void* out, int32_t C, mtk_pool_window win, int32_t act_min,
                                          int32_t act_max, int average) {
  const int8_t* corner = (const int8_t*)at;
  int8_t* o = (int8_t*)out;
  if (average) {
    const int32_t count = win.count;
    const uint32x4_t recip = vdupq_n_u32(count > 1 ? (uint32_t)((0xFFFFFFFFu / (uint32_t)count) + 1u) : 0u);
    for (int32_t c = 0; c < C; c += 8) {
      const mve_pred16_t in_c = vctp16q((uint32_t)(C - c));
      int16x8_t sum = vdupq_n_s16(0);
      int32x4_t even = vdupq_n_s32(0), odd = vdupq_n_s32(0);
      if (count <= 256) {
        for (int32_t r = 0; r < win.runs; ++r)
          for (const int8_t *q = corner + r * win.run_step + c, *end = q + win.taps * win.tap_step; q != end;
               q += win.tap_step)
            sum = vaddq_s16(sum, vldrbq_z_s16(q, in_c));
      } else {   /* int16 lanes: 256 taps, then into int32 */
        for (int32_t r = 0, taps = 0; r < win.runs; ++r)
          for (const int8_t *q = corner + r * win.run_step + c, *end = q + win.taps * win.tap_step; q != end;
               q += win.tap_step) {
            sum = vaddq_s16(sum, vldrbq_z_s16(q, in_c));
            if (++taps == 256) {
              even = vaddq_s32(even, vmovlbq_s16(sum));
              odd = vaddq_s32(odd, vmovltq_s16(sum));
              sum = vdupq_n_s16(0);
              taps = 0;
            }
          }
      }
      even = mtk_pool_mve_clamp_s32(mtk_pool_mve_divide(vaddq_s32(even, vmovlbq_s16(sum)), count, recip), act_min,
                                    act_max);
      odd = mtk_pool_mve_clamp_s32(mtk_pool_mve_divide(vaddq_s32(odd, vmovltq_s16(sum)), count, recip), act_min,
                                   act_max);
      vstrbq_p_s16(o + c, vmovntq_s32(vreinterpretq_s16_s32(even), odd), in_c);
    }
  } else {
    for (int32_t c = 0; c < C; c += 16) {
      const mve_pred16_t in_c = vctp8q((uint32_t)(C - c));
      int8x16_t m = vdupq_n_s8(-128);
      for (int32_t r = 0; r < win.runs; ++r)
        for (const int8_t *q = corner + r * win.run_step + c, *end = q + win.taps * win.tap_step; q != end;
             q += win.tap_step)
          m = vmaxq_s8(m, vldrbq_z_s8(q, in_c));
      m = vminq_s8(vmaxq_s8(m, vdupq_n_s8((int8_t)act_min)), vdupq_n_s8((int8_t)act_max));
      vstrbq_p_s8(o + c, m, in_c);
    }
  }
}

/* One int16 output pixel, 8 channels a vector (average: in two of int32 sums). */
MTK_MVE_INLINE void mtk_pool_mve_pixel_s16(const void* at, void* out, int32_t C, mtk_pool_window win, int32_t act_min,
                                           int32_t act_max, int average) {
  const int16_t* corner = (const int16_t*)at;
  int16_t* o = (int16_t*)out;
  if (average) {
    const int32_t count = win.count;
    const uint32x4_t recip = vdupq_n_u32(count > 1 ? 0xFFFFFFFFu / (uint32_t)count : 0u);
    for (int32_t c = 0; c < C; c += 8) {
      const mve_pred16_t lo = vctp32q((uint32_t)(C - c)), hi = vctp32q(C - c > 4 ? (uint32_t)(C - c - 4) : 0u);
      int32x4_t s0 = vdupq_n_s32(0), s1 = vdupq_n_s32(0);
      for (int32_t r = 0; r < win.runs; ++r)
        for (const int16_t *q = corner + r * win.run_step + c, *end = q + win.taps * win.tap_step; q != end;
             q += win.tap_step) {
          s0 = vaddq_s32(s0, vldrhq_z_s32(q, lo));
          s1 = vaddq_s32(s1, vldrhq_z_s32(q + 4, hi));
        }
      vstrhq_p_s32(o + c, mtk_pool_mve_clamp_s32(mtk_pool_mve_divide_exact(s0, count, recip), act_min, act_max), lo);
      vstrhq_p_s32(o + c + 4, mtk_pool_mve_clamp_s32(mtk_pool_mve_divide_exact(s1, count, recip), act_min, act_max),
                   hi);
    }
  } else {
    for (int32_t c = 0; c < C; c += 8) {
      const mve_pred16_t in_c = vctp16q((uint32_t)(C - c));
      int16x8_t m = vdupq_n_s16(-32768);
      for (int32_t r = 0; r < win.runs; ++r)
        for (const int16_t *q = corner + r * win.run_step + c, *end = q + win.taps * win.tap_step; q != end;
             q += win.tap_step)
          m = vmaxq_s16(m, vldrhq_z_s16(q, in_c));
      m = vminq_s16(vmaxq_s16(m, vdupq_n_s16((int16_t)act_min)), vdupq_n_s16((int16_t)act_max));
      vstrhq_p_s16(o + c, m, in_c);
    }
  }
}

/* The layer: int16 != 0 for int16 activations. */
MTK_MVE_INLINE int32_t mtk_pool_mve(const void* x, void* out, int32_t in_h, int32_t in_w, int32_t C, int32_t out_h,
                                    int32_t out_w, int32_t kh, int32_t kw, int32_t stride_h, int32_t stride_w,
                                    int32_t pad_top, int32_t pad_left, int32_t act_min, int32_t act_max, int average,
                                    int int16) {
  if (int16)
    return mtk_pool_layer(mtk_pool_mve_pixel_s16, 2, x, out, in_h, in_w, C, out_h, out_w, kh, kw, stride_h, stride_w,
                          pad_top, pad_left, act_min, act_max, average);
  return mtk_pool_layer(mtk_pool_mve_pixel_s8, 1, x, out, in_h, in_w, C, out_h, out_w, kh, kw, stride_h, stride_w,
                        pad_top, pad_left, act_min, act_max, average);
}

#endif /* MTK_POOL_MVE_H_ */
