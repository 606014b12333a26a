/* int8 AVERAGE_POOL_2D and MAX_POOL_2D on Helium (MVE) cores (pooling.py), the whole layer in one call.
 * Per output pixel the window's taps inside the input (TFLM counts only those for the average):
 * - average, 8 channels a vector: int16 sums of the taps (VLDRB.S16; 256 taps at most, then added into int32
 *   sums: no overflow), widened to int32 and divided by the count as TFLM rounds ((|sum| + count/2) / count,
 *   the sign put back) through an unsigned multiply-high by m = ceil(2^32 / count): exact while
 *   |sum| * (m * count - 2^32) < 2^32, so for |sum| <= 128.5 * count up to 4096 taps (pooling.py);
 * - max, 16 channels a vector: VMAX.S8 from -128;
 * then clamped to the activation range and stored (predicated past the last channel). */
#ifndef MTK_POOL_MVE_H_
#define MTK_POOL_MVE_H_

#include <stdint.h>

#include "mtk_gemm_mve.h"   /* MTK_MVE_INLINE */

/* TFLM's rounded sum / count for int32 lanes, count >= 1; recip = ceil(2^32 / count) (count 1: unused). */
MTK_MVE_INLINE int32x4_t mtk_pool_mve_divide(int32x4_t sum, int32_t count, uint32x4_t recip) {
  if (count == 1) return sum;
  const int32x4_t sign = vshrq_n_s32(sum, 31);
  const uint32x4_t n = vreinterpretq_u32_s32(vaddq_n_s32(vabsq_s32(sum), count / 2));
  const int32x4_t q = vreinterpretq_s32_u32(vmulhq_u32(n, recip));
  return vsubq_s32(veorq_s32(q, sign), sign);
}

MTK_MVE_INLINE int32_t mtk_pool_mve_s8(const void* x, void* out, int32_t in_h, int32_t in_w, int32_t C,
                                       int32_t out_h, int32_t out_w, int32_t kh, int32_t kw, int32_t stride_h,
                                       int32_t stride_w, int32_t pad_top, int32_t pad_left, int32_t act_min,
                                       int32_t act_max, int average) {
  const int8_t* xb = (const int8_t*)x;
  int8_t* o = (int8_t*)out;
  for (int32_t oy = 0; oy < out_h; ++oy) {
    const int32_t iy = oy * stride_h - pad_top;
    const int32_t y0 = iy < 0 ? -iy : 0, y1 = kh < in_h - iy ? kh : in_h - iy;
    for (int32_t ox = 0; ox < out_w; ++ox, o += C) {
      const int32_t ix = ox * stride_w - pad_left;
      const int32_t x0 = ix < 0 ? -ix : 0, x1 = kw < in_w - ix ? kw : in_w - ix;
      const int8_t* corner = xb + ((iy + y0) * in_w + ix + x0) * C;
      if (average) {
        const int32_t count = (y1 - y0) * (x1 - x0);
        const uint32x4_t recip = vdupq_n_u32(count > 1 ? (uint32_t)((0xFFFFFFFFu / (uint32_t)count) + 1u) : 0u);
        for (int32_t c = 0; c < C; c += 8) {
          const mve_pred16_t in_c = vctp16q((uint32_t)(C - c));
          int16x8_t sum = vdupq_n_s16(0);
          int32x4_t even = vdupq_n_s32(0), odd = vdupq_n_s32(0);
          if (count <= 256) {
            for (int32_t y = y0; y < y1; ++y)
              for (int32_t k = 0, row = (y - y0) * in_w * C; k < x1 - x0; ++k)
                sum = vaddq_s16(sum, vldrbq_z_s16(corner + row + k * C + c, in_c));
          } else {
            for (int32_t y = y0, taps = 0; y < y1; ++y)
              for (int32_t k = 0, row = (y - y0) * in_w * C; k < x1 - x0; ++k) {
                sum = vaddq_s16(sum, vldrbq_z_s16(corner + row + k * C + c, in_c));
                if (++taps == 256) {
                  even = vaddq_s32(even, vmovlbq_s16(sum));
                  odd = vaddq_s32(odd, vmovltq_s16(sum));
                  sum = vdupq_n_s16(0);
                  taps = 0;
                }
              }
          }
          even = mtk_pool_mve_divide(vaddq_s32(even, vmovlbq_s16(sum)), count, recip);
          odd = mtk_pool_mve_divide(vaddq_s32(odd, vmovltq_s16(sum)), count, recip);
          even = vminq_s32(vmaxq_s32(even, vdupq_n_s32(act_min)), vdupq_n_s32(act_max));
          odd = vminq_s32(vmaxq_s32(odd, vdupq_n_s32(act_min)), vdupq_n_s32(act_max));
          vstrbq_p_s16(o + c, vmovntq_s32(vreinterpretq_s16_s32(even), odd), in_c);
        }
      } else {
        for (int32_t c = 0; c < C; c += 16) {
          const mve_pred16_t in_c = vctp8q((uint32_t)(C - c));
          int8x16_t m = vdupq_n_s8(-128);
          for (int32_t y = y0; y < y1; ++y)
            for (int32_t k = 0, row = (y - y0) * in_w * C; k < x1 - x0; ++k)
              m = vmaxq_s8(m, vldrbq_z_s8(corner + row + k * C + c, in_c));
          m = vminq_s8(vmaxq_s8(m, vdupq_n_s8((int8_t)act_min)), vdupq_n_s8((int8_t)act_max));
          vstrbq_p_s8(o + c, m, in_c);
        }
      }
    }
  }
  return 0;
}

#endif /* MTK_POOL_MVE_H_ */
