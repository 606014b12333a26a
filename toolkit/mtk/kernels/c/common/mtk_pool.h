/* int8 and int16 AVERAGE_POOL_2D and MAX_POOL_2D on cores without Helium (pooling.py), the whole layer in one
 * call: TFLM's reference pooling (reference/integer_ops/pooling.h), bit for bit. Per output pixel the window's
 * taps inside the input (the average divides by their count, rounding half away from zero as C's truncating
 * division does: by a multiply with the count's reciprocal, one division a pixel, up to mtk_pool_window.h's
 * bounds), then the activation range.
 * - int8 average, 4 channels a word: two registers of 16-bit lanes (channels 0, 2 and 1, 3) summed over at most
 *   256 taps, then added into int32 sums;
 * - int8 max, 4 channels a word, the max from the activation's low end (only a high end below 127 clamps after);
 * - int16 average, 2 channels a word: the halves sign-extended into two int32 sums;
 * - int16 max 2 channels a pass (a word with SIMD, two registers without);
 * the channels left over one at a time. The instruction set's lanes (mtk_pool_dsp.h, mtk_pool_plain.h) come first
 * (kernels/files.py): MTK_POOL_LANE_BIAS, mtk_pool_taps_s8x4, mtk_pool_max_taps, mtk_pool_min_s8x4, mtk_pool_flush,
 * mtk_pool_max_pairs_s16. */
#ifndef MTK_POOL_H_
#define MTK_POOL_H_

#include <stdint.h>

#include "mtk_pool_window.h"

#define MTK_POOL_LANE_TAPS 256   /* taps a 16-bit lane sums without overflow */

/* 4 int8 channels' sums over the window from p into s[0..3]. */
MTK_POOL_INLINE void mtk_pool_sum_s8x4(const int8_t* p, mtk_pool_window win, int32_t* s) {
  uint32_t even = 0, odd = 0;
  s[0] = s[1] = s[2] = s[3] = MTK_POOL_LANE_BIAS * win.count;
  if (win.count <= MTK_POOL_LANE_TAPS) {
    for (int32_t r = 0; r < win.runs; ++r, p += win.run_step)
      mtk_pool_taps_s8x4(p, win.taps, win.tap_step, &even, &odd);
  } else {
    int32_t budget = MTK_POOL_LANE_TAPS;
    for (int32_t r = 0; r < win.runs; ++r, p += win.run_step) {
      const int8_t* q = p;
      for (int32_t left = win.taps; left > 0;) {
        const int32_t n = left < budget ? left : budget;
        left -= n;
        budget -= n;
        q = mtk_pool_taps_s8x4(q, n, win.tap_step, &even, &odd);
        if (budget == 0) {
          mtk_pool_flush(even, odd, s);
          even = odd = 0;
          budget = MTK_POOL_LANE_TAPS;
        }
      }
    }
  }
  mtk_pool_flush(even, odd, s);
}

/* One int8 output pixel: 4 channels a word, then the rest. */
MTK_POOL_INLINE void mtk_pool_pixel_s8(const void* at, void* out, int32_t C, mtk_pool_window win, int32_t act_min,
                                       int32_t act_max, int average) {
  const int8_t* corner = (const int8_t*)at;
  int8_t* o = (int8_t*)out;
  int32_t c = 0;
  if (average) {
    const uint32_t reciprocal = C >= 4 ? mtk_pool_reciprocal(win.count, 1) : 0u;
    for (; c + 4 <= C; c += 4) {
      int32_t s[4];
      mtk_pool_sum_s8x4(corner + c, win, s);
      for (int32_t i = 0; i < 4; ++i)
        o[c + i] = (int8_t)mtk_pool_average_of(s[i], win.count, reciprocal, act_min, act_max);
    }
  } else {
    const uint32_t lo = (uint32_t)(uint8_t)act_min * 0x01010101u, hi = (uint32_t)(uint8_t)act_max * 0x01010101u;
    for (; c + 4 <= C; c += 4) {
      uint32_t m = lo;   /* the max from the range's low end: clamped below for free */
      for (int32_t r = 0; r < win.runs; ++r)
        m = mtk_pool_max_taps(corner + r * win.run_step + c, win.taps, win.tap_step, m, 8);
      if (act_max < 127) m = mtk_pool_min_s8x4(m, hi);
      MTK_COPY(o + c, &m, 4);
    }
  }
  mtk_pool_channels(corner, o, c, C, win, act_min, act_max, average, 1);
}

/* One int16 output pixel: 2 channels a word, then the rest. */
MTK_POOL_INLINE void mtk_pool_pixel_s16(const void* at, void* out, int32_t C, mtk_pool_window win, int32_t act_min,
                                        int32_t act_max, int average) {
  const int16_t* corner = (const int16_t*)at;
  int16_t* o = (int16_t*)out;
  int32_t c = 0;
  if (average) {
    const uint32_t reciprocal = C >= 2 ? mtk_pool_reciprocal(win.count, 2) : 0u;
    for (; c + 2 <= C; c += 2) {
      int32_t s0 = 0, s1 = 0;
      for (int32_t r = 0; r < win.runs; ++r)
        for (const int16_t *q = corner + r * win.run_step + c, *end = q + win.taps * win.tap_step; q != end;
             q += win.tap_step) {
          const uint32_t w = mtk_pool_load4(q);
          s0 += (int16_t)(w & 0xffffu);
          s1 += (int32_t)w >> 16;
        }
      o[c] = (int16_t)mtk_pool_average_of(s0, win.count, reciprocal, act_min, act_max);
      o[c + 1] = (int16_t)mtk_pool_average_of(s1, win.count, reciprocal, act_min, act_max);
    }
  }
  else {
    c = mtk_pool_max_pairs_s16(corner, o, c, C, win, act_min, act_max);
  }
  mtk_pool_channels(corner, o, c, C, win, act_min, act_max, average, 2);
}

/* The layer: int16 != 0 for int16 activations. */
MTK_OUT_OF_LINE int32_t mtk_pool(const void* x, void* out, int32_t in_h, int32_t in_w, int32_t C, int32_t out_h,
                                 int32_t out_w, int32_t kh, int32_t kw, int32_t stride_h, int32_t stride_w,
                                 int32_t pad_top, int32_t pad_left, int32_t act_min, int32_t act_max, int average,
                                 int int16) {
  if (int16)
    return mtk_pool_layer(mtk_pool_pixel_s16, 2, x, out, in_h, in_w, C, out_h, out_w, kh, kw, stride_h, stride_w,
                          pad_top, pad_left, act_min, act_max, average);
  return mtk_pool_layer(mtk_pool_pixel_s8, 1, x, out, in_h, in_w, C, out_h, out_w, kh, kw, stride_h, stride_w, pad_top,
                        pad_left, act_min, act_max, average);
}

#endif /* MTK_POOL_H_ */
