/* int8 and int16 AVERAGE_POOL_2D and MAX_POOL_2D on cores without Helium (pooling.py), the whole layer in one
 * call: TFLM's reference pooling (reference/integer_ops/pooling.h), bit for bit. Per output pixel the window's
 * taps inside the input (the average divides by their count, rounding half away from zero with C's truncating
 * division), then the activation range.
 * - int8 average, 4 channels a word: two registers of 16-bit lanes (channels 0, 2 and 1, 3) summed over at most
 *   256 taps, then added into int32 sums. With the DSP extension (or MTK_EMULATE_DSP) SXTAB16 adds the signed
 *   bytes; elsewhere the bytes are biased to unsigned (x ^ 0x80) and masked into the lanes (255 * 256 fits),
 *   the bias taken off the int32 sums at the end.
 * - int8 max, 4 channels a word: with the DSP extension SSUB8 then SEL keeps the larger bytes; elsewhere the
 *   bytes are compared within the word (mtk_pool_ge_s8x4: 12 instructions a word, one byte at a time 6 a byte);
 *   the max starts from the activation's low end, so only a high end below 127 clamps afterwards;
 * - int16 average, 2 channels a word: the halves sign-extended into two int32 sums;
 * - int16 max with the DSP extension: SSUB16 then SEL;
 * the channels left over (and int16 max without the DSP extension) one at a time. */
#ifndef MTK_POOL_H_
#define MTK_POOL_H_

#include <stdint.h>

#include "mtk_support.h"   /* MTK_COPY */

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && defined(__GNUC__)
#define MTK_POOL_SIMD 1
#define MTK_POOL_ASM 1   /* the tap loops in assembly: gcc splits the ROR off SXTAB16 and adds moves */
/* r = the larger (pick "%1, %2") or smaller ("%2, %1") signed lanes of a and b: SSUB8/SSUB16 set GE, SEL picks. */
#define MTK_POOL_LANEWISE(name, sub, pick)                                                  \
  static inline uint32_t name(uint32_t a, uint32_t b) {                                     \
    uint32_t r;                                                                             \
    __asm__(sub " %0, %1, %2\n\tsel %0, " pick : "=&r"(r) : "r"(a), "r"(b));               \
    return r;                                                                               \
  }
MTK_POOL_LANEWISE(mtk_pool_max_s8x4, "ssub8", "%1, %2")
MTK_POOL_LANEWISE(mtk_pool_min_s8x4, "ssub8", "%2, %1")
MTK_POOL_LANEWISE(mtk_pool_max_s16x2, "ssub16", "%1, %2")
MTK_POOL_LANEWISE(mtk_pool_min_s16x2, "ssub16", "%2, %1")
#elif defined(MTK_EMULATE_DSP)
#define MTK_POOL_SIMD 1
static inline uint32_t mtk_pool_sxtab16(uint32_t acc, uint32_t x) {
  const uint32_t lo = (acc + (uint32_t)(int32_t)(int8_t)(x & 0xffu)) & 0xffffu;
  const uint32_t hi = ((acc >> 16) + (uint32_t)(int32_t)(int8_t)((x >> 16) & 0xffu)) & 0xffffu;
  return lo | hi << 16;
}
static inline uint32_t mtk_pool_lanes(uint32_t a, uint32_t b, int bits, int larger) {
  uint32_t r = 0;
  for (int shift = 0; shift < 32; shift += bits) {
    const uint32_t mask = (bits == 8 ? 0xffu : 0xffffu) << shift;
    const int32_t x = bits == 8 ? (int8_t)(a >> shift) : (int16_t)(a >> shift);
    const int32_t y = bits == 8 ? (int8_t)(b >> shift) : (int16_t)(b >> shift);
    r |= ((x >= y) == larger ? a : b) & mask;
  }
  return r;
}
#define mtk_pool_max_s8x4(a, b) mtk_pool_lanes((a), (b), 8, 1)
#define mtk_pool_min_s8x4(a, b) mtk_pool_lanes((a), (b), 8, 0)
#define mtk_pool_max_s16x2(a, b) mtk_pool_lanes((a), (b), 16, 1)
#define mtk_pool_min_s16x2(a, b) mtk_pool_lanes((a), (b), 16, 0)
#else
/* 0xff in the signed byte lanes where a >= b: (a | 0x80..) - (b & 0x7f..) subtracts the low 7 bits lane by lane
 * without a borrow crossing a lane and leaves a_low >= b_low in each lane's top bit; the signs decide where
 * they differ (b negative, a not). */
static inline uint32_t mtk_pool_ge_s8x4(uint32_t a, uint32_t b) {
  const uint32_t low_ge = (a | 0x80808080u) - (b & 0x7f7f7f7fu);
  const uint32_t ge = ((low_ge & ~(a ^ b)) | (b & ~a)) & 0x80808080u;
  return (ge - (ge >> 7)) | ge;
}
#define mtk_pool_max_s8x4(a, b) ((b) ^ (((a) ^ (b)) & mtk_pool_ge_s8x4((a), (b))))
#define mtk_pool_min_s8x4(a, b) ((a) ^ (((a) ^ (b)) & mtk_pool_ge_s8x4((a), (b))))
#endif

static inline uint32_t mtk_pool_load4(const void* p) {
  uint32_t w;
  MTK_COPY(&w, p, 4);
  return w;
}

/* n >= 1 taps `step` bytes apart from q, 4 int8 channels a word, added into the 16-bit lanes of even (channels
 * 0, 2) and odd (1, 3): signed (SXTAB16) with SIMD, else biased to unsigned; returns the tap after the last. */
static inline const int8_t* mtk_pool_taps_s8x4(const int8_t* q, int32_t n, int32_t step, uint32_t* even,
                                               uint32_t* odd) {
  uint32_t e = *even, o = *odd;
#ifdef MTK_POOL_ASM
  uint32_t w;
  __asm__("1:\n\t"
          "ldr %[w], [%[q]]\n\t"
          "add %[q], %[q], %[step]\n\t"
          "sxtab16 %[e], %[e], %[w]\n\t"
          "sxtab16 %[o], %[o], %[w], ror #8\n\t"
          "subs %[n], %[n], #1\n\t"
          "bne 1b"
          : [w] "=&r"(w), [q] "+&r"(q), [e] "+&r"(e), [o] "+&r"(o), [n] "+&r"(n)
          : [step] "r"(step)
          : "cc");
#else
  for (; n > 0; --n, q += step) {
    uint32_t w = mtk_pool_load4(q);
#ifdef MTK_POOL_SIMD
    e = mtk_pool_sxtab16(e, w);
    o = mtk_pool_sxtab16(o, w >> 8 | w << 24);
#else
    w ^= 0x80808080u;
    e += w & 0x00ff00ffu;
    o += (w >> 8) & 0x00ff00ffu;
#endif
  }
#endif
  *even = e;
  *odd = o;
  return q;
}

/* The bytewise (bits 8) or halfwordwise (bits 16) max of m and n >= 1 words `step` bytes apart from q. */
static inline uint32_t mtk_pool_max_taps(const void* q, int32_t n, int32_t step, uint32_t m, int bits) {
#ifdef MTK_POOL_ASM
  uint32_t w, t;
#define MTK_POOL_MAX_LOOP(sub)                                                                          \
  __asm__("1:\n\t"                                                                                      \
          "ldr %[w], [%[q]]\n\t"                                                                        \
          "add %[q], %[q], %[step]\n\t" sub " %[t], %[w], %[m]\n\t"                                     \
          "sel %[m], %[w], %[m]\n\t"                                                                    \
          "subs %[n], %[n], #1\n\t"                                                                     \
          "bne 1b"                                                                                      \
          : [w] "=&r"(w), [t] "=&r"(t), [q] "+&r"(q), [m] "+&r"(m), [n] "+&r"(n)                        \
          : [step] "r"(step)                                                                            \
          : "cc")
  if (bits == 8)
    MTK_POOL_MAX_LOOP("ssub8");
  else
    MTK_POOL_MAX_LOOP("ssub16");
#undef MTK_POOL_MAX_LOOP
#else
  for (const uint8_t* p = (const uint8_t*)q; n > 0; --n, p += step) {
#ifdef MTK_POOL_SIMD
    m = bits == 8 ? mtk_pool_max_s8x4(mtk_pool_load4(p), m) : mtk_pool_max_s16x2(mtk_pool_load4(p), m);
#else
    (void)bits;   /* int16 max goes one channel at a time here (mtk_pool_pixel_s16) */
    m = mtk_pool_max_s8x4(mtk_pool_load4(p), m);
#endif
  }
#endif
  return m;
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

/* The lanes' sums into s[0..3] (channels 0, 2 from even, 1, 3 from odd). */
static inline void mtk_pool_flush(uint32_t even, uint32_t odd, int32_t* s) {
#ifdef MTK_POOL_SIMD
  s[0] += (int16_t)(even & 0xffffu);
  s[2] += (int32_t)even >> 16;
  s[1] += (int16_t)(odd & 0xffffu);
  s[3] += (int32_t)odd >> 16;
#else
  s[0] += (int32_t)(even & 0xffffu);
  s[2] += (int32_t)(even >> 16);
  s[1] += (int32_t)(odd & 0xffffu);
  s[3] += (int32_t)(odd >> 16);
#endif
}

#if defined(__GNUC__)
#define MTK_POOL_INLINE static inline __attribute__((always_inline))   /* the pixel loops inlined into the layer's */
#else
#define MTK_POOL_INLINE static inline
#endif

#define MTK_POOL_LANE_TAPS 256   /* taps a 16-bit lane sums without overflow */

/* 4 int8 channels' sums over the window from p into s[0..3]. */
MTK_POOL_INLINE void mtk_pool_sum_s8x4(const int8_t* p, mtk_pool_window win, int32_t* s) {
  uint32_t even = 0, odd = 0;
#ifdef MTK_POOL_SIMD
  s[0] = s[1] = s[2] = s[3] = 0;
#else
  s[0] = s[1] = s[2] = s[3] = -128 * win.count;   /* the bias the lanes add */
#endif
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

/* One int8 output pixel: 4 channels a word, then the rest. */
MTK_POOL_INLINE void mtk_pool_pixel_s8(const void* at, void* out, int32_t C, mtk_pool_window win, int32_t act_min,
                                       int32_t act_max, int average) {
  const int8_t* corner = (const int8_t*)at;
  int8_t* o = (int8_t*)out;
  int32_t c = 0;
  if (average) {
    for (; c + 4 <= C; c += 4) {
      int32_t s[4];
      mtk_pool_sum_s8x4(corner + c, win, s);
      for (int32_t i = 0; i < 4; ++i) o[c + i] = (int8_t)mtk_pool_average(s[i], win.count, act_min, act_max);
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
    for (; c + 2 <= C; c += 2) {
      int32_t s0 = 0, s1 = 0;
      for (int32_t r = 0; r < win.runs; ++r)
        for (const int16_t *q = corner + r * win.run_step + c, *end = q + win.taps * win.tap_step; q != end;
             q += win.tap_step) {
          const uint32_t w = mtk_pool_load4(q);
          s0 += (int16_t)(w & 0xffffu);
          s1 += (int32_t)w >> 16;
        }
      o[c] = (int16_t)mtk_pool_average(s0, win.count, act_min, act_max);
      o[c + 1] = (int16_t)mtk_pool_average(s1, win.count, act_min, act_max);
    }
  }
#ifdef MTK_POOL_SIMD   /* without it one channel at a time: 2 lanes a word compared within it cost more */
  else {
    const uint32_t lo = (uint32_t)(uint16_t)act_min * 0x10001u, hi = (uint32_t)(uint16_t)act_max * 0x10001u;
    for (; c + 2 <= C; c += 2) {
      uint32_t m = lo;
      for (int32_t r = 0; r < win.runs; ++r)
        m = mtk_pool_max_taps(corner + r * win.run_step + c, win.taps, 2 * win.tap_step, m, 16);
      if (act_max < 32767) m = mtk_pool_min_s16x2(m, hi);
      MTK_COPY(o + c, &m, 4);
    }
  }
#endif
  mtk_pool_channels(corner, o, c, C, win, act_min, act_max, average, 2);
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
