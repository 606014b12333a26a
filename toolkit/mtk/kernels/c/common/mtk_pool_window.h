/* What the pooling kernels share whatever the instruction set (mtk_pool.h, mtk_pool_mve.h): TFLM's rounded average,
 * the window of an output pixel inside the input, channels one at a time, and the layer's loop over the pixels. */
#ifndef MTK_POOL_WINDOW_H_
#define MTK_POOL_WINDOW_H_

#include <stdint.h>

#include "mtk_support.h"   /* MTK_COPY */

static inline uint32_t mtk_pool_load4(const void* p) {
  uint32_t w;
  MTK_COPY(&w, p, 4);
  return w;
}

static inline int32_t mtk_pool_clamp(int32_t v, int32_t act_min, int32_t act_max) {
  v = v < act_min ? act_min : v;
  return v > act_max ? act_max : v;
}

/* TFLM's rounded average, clamped to the activation range. */
static inline int32_t mtk_pool_average(int32_t sum, int32_t count, int32_t act_min, int32_t act_max) {
  const int32_t half = count / 2;
  return mtk_pool_clamp(sum > 0 ? (sum + half) / count : (sum - half) / count, act_min, act_max);
}

/* One output pixel's window inside the input, walked as `runs` runs (run_step elements apart) of `taps` taps
 * (tap_step apart): its rows of columns, or one run when the window spans whole input rows or is one column. */
typedef struct {
  int32_t offset, count, runs, taps, run_step, tap_step;
} mtk_pool_window;

static inline mtk_pool_window mtk_pool_window_at(int32_t oy, int32_t ox, int32_t in_h, int32_t in_w, int32_t C,
                                                 int32_t kh, int32_t kw, int32_t stride_h, int32_t stride_w,
                                                 int32_t pad_top, int32_t pad_left) {
  const int32_t iy = oy * stride_h - pad_top, ix = ox * stride_w - pad_left;
  const int32_t y0 = iy < 0 ? -iy : 0, y1 = kh < in_h - iy ? kh : in_h - iy;
  const int32_t x0 = ix < 0 ? -ix : 0, x1 = kw < in_w - ix ? kw : in_w - ix;
  const int32_t rows = y1 - y0, cols = x1 - x0;
  mtk_pool_window w = {((iy + y0) * in_w + ix + x0) * C, rows * cols, rows, cols, in_w * C, C};
  if (cols == in_w) {
    w.runs = 1;
    w.taps = rows * cols;
  } else if (cols == 1) {
    w.runs = 1;
    w.taps = rows;
    w.tap_step = in_w * C;
  }
  return w;
}

#if defined(__GNUC__)
#define MTK_POOL_INLINE static inline __attribute__((always_inline))   /* the pixel loops inlined into the layer's */
#else
#define MTK_POOL_INLINE static inline
#endif

/* Channels c.. of one output pixel, one at a time (bytes: 1 for int8, 2 for int16). */
static inline void mtk_pool_channels(const void* corner, void* o, int32_t c, int32_t C, mtk_pool_window win,
                                     int32_t act_min, int32_t act_max, int average, int bytes) {
  for (; c < C; ++c) {
    int32_t v = average ? 0 : (bytes == 1 ? -128 : -32768);
    for (int32_t r = 0; r < win.runs; ++r)
      for (const uint8_t *q = (const uint8_t*)corner + (r * win.run_step + c) * bytes,
                         *end = q + win.taps * win.tap_step * bytes; q != end; q += win.tap_step * bytes) {
        const int32_t t = bytes == 1 ? *(const int8_t*)q : *(const int16_t*)(const void*)q;
        v = average ? v + t : (t > v ? t : v);
      }
    v = average ? mtk_pool_average(v, win.count, act_min, act_max) : mtk_pool_clamp(v, act_min, act_max);
    if (bytes == 1)
      ((int8_t*)o)[c] = (int8_t)v;
    else
      ((int16_t*)o)[c] = (int16_t)v;
  }
}

/* Computes one output pixel's channels from its window's first tap inside the input. */
typedef void mtk_pool_pixel_fn(const void* corner, void* out, int32_t C, mtk_pool_window win, int32_t act_min,
                               int32_t act_max, int average);

/* The layer (batch 1), `bytes` an element, pixel by pixel (pixel: a constant, inlined). */
MTK_POOL_INLINE int32_t mtk_pool_layer(mtk_pool_pixel_fn* pixel, int32_t bytes, const void* x, void* out, int32_t in_h,
                                       int32_t in_w, int32_t C, int32_t out_h, int32_t out_w, int32_t kh, int32_t kw,
                                       int32_t stride_h, int32_t stride_w, int32_t pad_top, int32_t pad_left,
                                       int32_t act_min, int32_t act_max, int average) {
  uint8_t* o = (uint8_t*)out;
  for (int32_t oy = 0; oy < out_h; ++oy) {
    for (int32_t ox = 0; ox < out_w; ++ox, o += C * bytes) {
      const mtk_pool_window win = mtk_pool_window_at(oy, ox, in_h, in_w, C, kh, kw, stride_h, stride_w, pad_top,
                                                     pad_left);
      pixel((const uint8_t*)x + win.offset * bytes, o, C, win, act_min, act_max, average);
    }
  }
  return 0;
}

#endif /* MTK_POOL_WINDOW_H_ */
