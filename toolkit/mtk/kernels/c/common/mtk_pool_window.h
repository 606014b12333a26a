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

/* The most taps whose average mtk_pool_average_of computes by a multiply (int8, int16 elements): n / count is
 * floor(n * ceil(2^32 / count) / 2^32) while n * count < 2^32 (the product's excess n * e / 2^32, e < count,
 * stays below 1 / count), and n = |sum| + count / 2 is at most 129 * count (int8), 32769 * count (int16). */
#define MTK_POOL_RECIPROCAL_TAPS_S8 4096
#define MTK_POOL_RECIPROCAL_TAPS_S16 256

/* Whether the compiler knows v's value (a layer whose windows all lie inside, its constants propagated). */
#if defined(__GNUC__)
#define MTK_POOL_KNOWN(v) __builtin_constant_p(v)
#else
#define MTK_POOL_KNOWN(v) 0
#endif

/* ceil(2^32 / count) for 2 .. the element's MTK_POOL_RECIPROCAL_TAPS_*, else 0 (a division); 0 too for a count the
 * compiler knows (its own multiply or shift). */
static inline uint32_t mtk_pool_reciprocal(int32_t count, int32_t bytes) {
  const int32_t most = bytes == 1 ? MTK_POOL_RECIPROCAL_TAPS_S8 : MTK_POOL_RECIPROCAL_TAPS_S16;
  return !MTK_POOL_KNOWN(count) && count >= 2 && count <= most ? 0xffffffffu / (uint32_t)count + 1u : 0u;
}

/* mtk_pool_average of `count` taps with mtk_pool_reciprocal's `reciprocal`: by its multiply where there is one. */
static inline int32_t mtk_pool_average_of(int32_t sum, int32_t count, uint32_t reciprocal, int32_t act_min,
                                          int32_t act_max) {
  if (reciprocal == 0) return mtk_pool_average(sum, count, act_min, act_max);
  const uint32_t n = sum > 0 ? (uint32_t)sum + (uint32_t)(count / 2) : (uint32_t)(count / 2) - (uint32_t)sum;
  const int32_t q = (int32_t)(((uint64_t)n * reciprocal) >> 32);
  return mtk_pool_clamp(sum > 0 ? q : -q, act_min, act_max);
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

/* Channels c.. of one output pixel, one at a time (bytes: 1 for int8, 2 for int16); out of line (inlined into a
 * layer of known channels, gcc may warn of iterations past them). */
MTK_OUT_OF_LINE void mtk_pool_channels(const void* corner, void* o, int32_t c, int32_t C, mtk_pool_window win,
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
