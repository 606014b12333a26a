/* int8 pooling's lanes on cores without the DSP extension (mtk_pool.h): the bytes biased to unsigned (x ^ 0x80) and
 * masked into 16-bit lanes (255 * 256 fits), the bias taken off the int32 sums at the end; max compares the bytes
 * within the word (12 instructions a word, one byte at a time 6 a byte); int16 max 2 channels a pass. */
#ifndef MTK_POOL_PLAIN_H_
#define MTK_POOL_PLAIN_H_

#include <stdint.h>

#include "mtk_pool_window.h"

#define MTK_POOL_LANE_BIAS (-128)   /* what the biased lanes add a tap */

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

/* n >= 1 taps `step` bytes apart from q, 4 int8 channels a word, added into the 16-bit lanes of even (channels
 * 0, 2) and odd (1, 3): signed (SXTAB16) with SIMD, else biased to unsigned; returns the tap after the last. */
static inline const int8_t* mtk_pool_taps_s8x4(const int8_t* q, int32_t n, int32_t step, uint32_t* even,
                                               uint32_t* odd) {
  uint32_t e = *even, o = *odd;
  for (; n > 0; --n, q += step) {
    uint32_t w = mtk_pool_load4(q) ^ 0x80808080u;
    e += w & 0x00ff00ffu;
    o += (w >> 8) & 0x00ff00ffu;
  }
  *even = e;
  *odd = o;
  return q;
}

/* The bytewise max of m and n >= 1 words `step` bytes apart from q (bits: 8; int16 max goes one channel at a time). */
static inline uint32_t mtk_pool_max_taps(const void* q, int32_t n, int32_t step, uint32_t m, int bits) {
  (void)bits;
  for (const uint8_t* p = (const uint8_t*)q; n > 0; --n, p += step) m = mtk_pool_max_s8x4(mtk_pool_load4(p), m);
  return m;
}

/* The lanes' sums into s[0..3] (channels 0, 2 from even, 1, 3 from odd). */
static inline void mtk_pool_flush(uint32_t even, uint32_t odd, int32_t* s) {
  s[0] += (int32_t)(even & 0xffffu);
  s[2] += (int32_t)(even >> 16);
  s[1] += (int32_t)(odd & 0xffffu);
  s[3] += (int32_t)(odd >> 16);
}

/* int16 max, 2 channels a pass in two registers (a word's lanes compared within it cost more): channels c.. of the
 * pixel while 2 are left, each max from the activation's low end (clamped below for free); returns the next. */
MTK_POOL_INLINE int32_t mtk_pool_max_pairs_s16(const int16_t* corner, int16_t* o, int32_t c, int32_t C,
                                               mtk_pool_window win, int32_t act_min, int32_t act_max) {
  for (; c + 2 <= C; c += 2) {
    int32_t m0 = act_min, m1 = act_min;
    for (int32_t r = 0; r < win.runs; ++r)
      for (const int16_t *q = corner + r * win.run_step + c, *end = q + win.taps * win.tap_step; q != end;
           q += win.tap_step) {
        m0 = q[0] > m0 ? q[0] : m0;
        m1 = q[1] > m1 ? q[1] : m1;
      }
    o[c] = (int16_t)(m0 < act_max ? m0 : act_max);
    o[c + 1] = (int16_t)(m1 < act_max ? m1 : act_max);
  }
  return c;
}

#endif /* MTK_POOL_PLAIN_H_ */
