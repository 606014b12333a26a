/* int8 and int16 pooling's lanes on cores with the DSP extension (mtk_pool.h): SXTAB16 adds 4 signed bytes into two
 * registers of 16-bit lanes, SSUB8/SSUB16 then SEL keep the larger bytes or halfwords. Where the compiler takes no
 * assembly (no MTK_DSP_ASM: the host) the same lanes in portable C. */
#ifndef MTK_POOL_DSP_H_
#define MTK_POOL_DSP_H_

#include <stdint.h>

#include "mtk_dsp_intrinsics.h"   /* MTK_DSP_ASM */
#include "mtk_pool_window.h"

#define MTK_POOL_LANE_BIAS 0   /* the lanes add the signed bytes */

#ifdef MTK_DSP_ASM
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
#else
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
#endif

/* n >= 1 taps `step` bytes apart from q, 4 int8 channels a word, added into the 16-bit lanes of even (channels
 * 0, 2) and odd (1, 3): signed (SXTAB16) with SIMD, else biased to unsigned; returns the tap after the last. */
static inline const int8_t* mtk_pool_taps_s8x4(const int8_t* q, int32_t n, int32_t step, uint32_t* even,
                                               uint32_t* odd) {
  uint32_t e = *even, o = *odd;
#ifdef MTK_DSP_ASM
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
    e = mtk_pool_sxtab16(e, w);
    o = mtk_pool_sxtab16(o, w >> 8 | w << 24);
  }
#endif
  *even = e;
  *odd = o;
  return q;
}

/* The bytewise (bits 8) or halfwordwise (bits 16) max of m and n >= 1 words `step` bytes apart from q. */
static inline uint32_t mtk_pool_max_taps(const void* q, int32_t n, int32_t step, uint32_t m, int bits) {
#ifdef MTK_DSP_ASM
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
  for (const uint8_t* p = (const uint8_t*)q; n > 0; --n, p += step)
    m = bits == 8 ? mtk_pool_max_s8x4(mtk_pool_load4(p), m) : mtk_pool_max_s16x2(mtk_pool_load4(p), m);
#endif
  return m;
}

/* The lanes' sums into s[0..3] (channels 0, 2 from even, 1, 3 from odd). */
static inline void mtk_pool_flush(uint32_t even, uint32_t odd, int32_t* s) {
  s[0] += (int16_t)(even & 0xffffu);
  s[2] += (int32_t)even >> 16;
  s[1] += (int16_t)(odd & 0xffffu);
  s[3] += (int32_t)odd >> 16;
}

/* int16 max, 2 channels a word (SSUB16 then SEL): channels c.. of the pixel while 2 are left; returns the next. */
MTK_POOL_INLINE int32_t mtk_pool_max_pairs_s16(const int16_t* corner, int16_t* o, int32_t c, int32_t C,
                                               mtk_pool_window win, int32_t act_min, int32_t act_max) {
  const uint32_t lo = (uint32_t)(uint16_t)act_min * 0x10001u, hi = (uint32_t)(uint16_t)act_max * 0x10001u;
  for (; c + 2 <= C; c += 2) {
    uint32_t m = lo;
    for (int32_t r = 0; r < win.runs; ++r)
      m = mtk_pool_max_taps(corner + r * win.run_step + c, win.taps, 2 * win.tap_step, m, 16);
    if (act_max < 32767) m = mtk_pool_min_s16x2(m, hi);
    MTK_COPY(o + c, &m, 4);
  }
  return c;
}

#endif /* MTK_POOL_DSP_H_ */
