/* int8 dot-product micro-kernels called by the TVM-generated GEMM (conv, fully connected) and
 * depthwise kernels (mtk/ops/gemm.py, depthwise.py).
 *
 * Data layouts, prepared so that the DSP path needs one SXTB16 per 2 weights and none per input:
 * - activation rows are packed into int16 groups of 4 in SXTB16 order (x0, x2, x1, x3)
 *   (mtk_pack_row_s16, mtk_pack_pair_s16; the pair version interleaves two rows per group);
 * - weight rows are interleaved offline in groups of 4 bytes, 2 or 4 rows per tile
 *   (gemm.py pack_weights). SXTB16 of a weight word gives (w0, w2), after ROR 8 (w1, w3), so
 *   SMLAD with the packed activation words adds x0*w0 + x2*w2 and x1*w1 + x3*w3. A tuned schedule
 *   may take them int16-expanded offline instead (mtk_dot_*_w16_s8: no SXTB16, twice the flash).
 * Elsewhere (M0+, M3, host) scalar loops compute the same sums from the same layouts.
 * Helium cores (M55) keep rows and weights as int8, in chunks of 16 values (gemm.py packs their
 * weights in groups of 16): one VMLADAVA adds 16 products.
 * Defining MTK_EMULATE_DSP runs the DSP formulation in portable C (host tests of that path). */
#ifndef MTK_DOT_S8_H_
#define MTK_DOT_S8_H_

#include <stdint.h>
#include <string.h>

#include "mtk_fixedpoint.h"   /* MTK_NO_MUL64 */

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>
#define MTK_DOT_SIMD 1
#define mtk_sxtb16(x) __sxtb16(x)
#define mtk_smlad(a, b, acc) __smlad((a), (b), (acc))
#define mtk_smlabb(a, b, acc) __smlabb((a), (b), (acc))
#define mtk_smlatt(a, b, acc) __smlatt((a), (b), (acc))
/* gcc 12 does not fold the rotate into SXTB16's ROR operand: say it directly. */
static inline uint32_t mtk_sxtb16_ror8(uint32_t x) {
  uint32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
  return r;
}
#elif defined(MTK_EMULATE_DSP)
#define MTK_DOT_SIMD 1
static inline uint32_t mtk_sxtb16(uint32_t x) {
  return ((uint32_t)(uint16_t)(int16_t)(int8_t)(x & 0xff)) | ((uint32_t)(uint16_t)(int16_t)(int8_t)((x >> 16) & 0xff) << 16);
}
static inline uint32_t mtk_sxtb16_ror8(uint32_t x) { return mtk_sxtb16((x >> 8) | (x << 24)); }
static inline int32_t mtk_smlad(uint32_t a, uint32_t b, int32_t acc) {
  return (int32_t)((uint32_t)acc + (uint32_t)((int32_t)(int16_t)(a & 0xffff) * (int32_t)(int16_t)(b & 0xffff))
                   + (uint32_t)((int32_t)(int16_t)(a >> 16) * (int32_t)(int16_t)(b >> 16)));
}
static inline int32_t mtk_smlabb(uint32_t a, uint32_t b, int32_t acc) {
  return (int32_t)((uint32_t)acc + (uint32_t)((int32_t)(int16_t)(a & 0xffff) * (int32_t)(int16_t)(b & 0xffff)));
}
static inline int32_t mtk_smlatt(uint32_t a, uint32_t b, int32_t acc) {
  return (int32_t)((uint32_t)acc + (uint32_t)((int32_t)(int16_t)(a >> 16) * (int32_t)(int16_t)(b >> 16)));
}
#endif

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
/* Two words at p, p then advanced by `step` bytes, in one LDRD: gcc 12 splits such loads into
 * single ones with separate pointer increments. p must be word-aligned. */
#define MTK_LOAD2_POST(a, b, p, step) __asm__("ldrd %0, %1, [%2], #" #step : "=r"(a), "=r"(b), "+r"(p) : : "memory")
#elif defined(MTK_EMULATE_DSP)
#define MTK_LOAD2_POST(a, b, p, step) ((a) = (p)[0], (b) = (p)[1], (p) += (step) / 4)
#endif

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>
#define MTK_DOT_MVE 1   /* Helium: the GEMM micro-kernels take 16 values of a row per instruction */
#endif

/* The compiler's own copy: Zephyr builds with -ffreestanding, where a plain memcpy of 4 bytes
 * stays a library call (2.4x the instructions for a whole model). */
#if defined(__GNUC__)
#define MTK_COPY4(dst, src) __builtin_memcpy((dst), (src), 4)
#define MTK_IN_REGISTER(v) __asm__("" : "+r"(v))   /* v materialized in a register here */
#define MTK_OUT_OF_LINE static __attribute__((noinline, unused))
#else
#define MTK_COPY4(dst, src) memcpy((dst), (src), 4)
#define MTK_IN_REGISTER(v) ((void)0)
#define MTK_OUT_OF_LINE static inline
#endif

#ifdef MTK_DOT_SIMD
static inline uint32_t mtk_load4_s8(const int8_t* p) {
  uint32_t v;
  MTK_COPY4(&v, p);
  return v;
}
#endif

/* The 4 sums a micro-kernel returns through acc (the caller's status is 0). */
static inline int32_t mtk_store4(int32_t* acc, int32_t a0, int32_t a1, int32_t a2, int32_t a3) {
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
  return 0;
}

/* Packing works on 4 input values at a time: full groups straight from the row, the last one
 * (k % 4 values) zero-padded through a copy. */
static inline const int8_t* mtk_group_src(const int8_t* src, int32_t k, int32_t t, int8_t* tail) {
  if (t + 4 <= k) return src + t;
  for (int32_t i = 0; i < 4; ++i) tail[i] = t + i < k ? src[t + i] : 0;
  return tail;
}

/* Packed group g (values 4g..4g+3) of a row: on Helium cores the 4 bytes as they are, rows kept whole
 * (mtk_dot_*_s8 load 16 values of a row at a time); elsewhere 8 bytes a group: SIMD (x0, x2), (x1, x3)
 * as int16 pairs, else 4 int16 in order. */
static inline void mtk_pack_row_group(const int8_t* src, uint8_t* row, int32_t g) {
#if defined(MTK_DOT_MVE)
  MTK_COPY4(row + 4 * g, src);
#elif defined(MTK_DOT_SIMD)
  uint32_t v = mtk_load4_s8(src);
  ((uint32_t*)(row + 8 * g))[0] = mtk_sxtb16(v);
  ((uint32_t*)(row + 8 * g))[1] = mtk_sxtb16_ror8(v);
#else
  for (int32_t t = 0; t < 4; ++t) ((int16_t*)(row + 8 * g))[t] = src[t];
#endif
}

/* Packed group g of a pair of rows: Helium cores interleave the rows every 16 values; SIMD and
 * no-long-multiply cores the two rows' row groups, 16 bytes a group; else (Cortex-M3, host) 4 int32
 * holding both rows' values, r0 + r1 * 2^23, so that one 32x32->64 multiply-accumulate by a weight
 * sums both rows' products (mtk_dot_2x2_s8). */
static inline void mtk_pack_pair_group(const int8_t* src0, const int8_t* src1, uint8_t* pair, int32_t g) {
#if defined(MTK_DOT_MVE)
  uint8_t* chunk = pair + 32 * (g >> 2) - 4 * (g & ~3);   /* row 0's 16 values, then row 1's */
  mtk_pack_row_group(src0, chunk, g);
  mtk_pack_row_group(src1, chunk + 16, g);
#elif defined(MTK_DOT_SIMD) || defined(MTK_NO_MUL64)
  mtk_pack_row_group(src0, pair + 8 * g, g);
  mtk_pack_row_group(src1, pair + 8 * g + 8, g);
#else
  for (int32_t t = 0; t < 4; ++t) ((int32_t*)(pair + 16 * g))[t] = src0[t] + src1[t] * (1 << 23);
#endif
}

/* k int8 values -> packed groups g0 .. g0 + ceil(k/4) - 1 (zero-padded) of the row at dst. */
static inline void mtk_pack_row_at(const int8_t* src, int32_t k, uint8_t* dst, int32_t g0) {
  int8_t tail[4];
  for (int32_t g = 0; 4 * g < k; ++g) mtk_pack_row_group(mtk_group_src(src, k, 4 * g, tail), dst, g0 + g);
}

/* Two rows of k int8 values -> packed pair groups g0 .. g0 + ceil(k/4) - 1 (zero-padded) at dst. */
static inline void mtk_pack_pair_at(const int8_t* src0, const int8_t* src1, int32_t k, uint8_t* dst, int32_t g0) {
  int8_t tail0[4], tail1[4];
  for (int32_t g = 0; 4 * g < k; ++g)
    mtk_pack_pair_group(mtk_group_src(src0, k, 4 * g, tail0), mtk_group_src(src1, k, 4 * g, tail1), dst, g0 + g);
}

static inline int32_t mtk_pack_row_s16(const void* src, int32_t k, void* dst) {
  mtk_pack_row_at((const int8_t*)src, k, (uint8_t*)dst, 0);
  return 0;
}

static inline int32_t mtk_pack_pair_s16(const void* src0, const void* src1, int32_t k, void* dst) {
  mtk_pack_pair_at((const int8_t*)src0, (const int8_t*)src1, k, (uint8_t*)dst, 0);
  return 0;
}

/* Geometry of im2col taps read straight from an NHWC input whose channels come in whole groups of 4. */
typedef struct {
  const int8_t* x;
  const int8_t* pad;   /* in_c input zero points, read by taps outside the image */
  int32_t in_h, in_w, in_c, kh, kw, dil_h, dil_w;
} mtk_taps_t;

/* The in_c values of tap (ky, kx) of the window whose top left input pixel is (iy, ix). */
static inline const int8_t* mtk_tap(const mtk_taps_t* g, int32_t iy, int32_t ix, int32_t ky, int32_t kx) {
  int32_t y = iy + ky * g->dil_h, x = ix + kx * g->dil_w;
  return y >= 0 && y < g->in_h && x >= 0 && x < g->in_w ? g->x + (y * g->in_w + x) * g->in_c : g->pad;
}

/* The im2col rows of the windows at (iy0, ix0) and (iy1, ix1), packed tap by tap as mtk_pack_pair_s16
 * packs two rows (the weights' depth order is tap, then channel). */
static inline int32_t mtk_pack_taps_pair_s16(const void* x, int32_t iy0, int32_t ix0, int32_t iy1, int32_t ix1,
                                             int32_t in_h, int32_t in_w, int32_t in_c, int32_t kh, int32_t kw,
                                             int32_t dil_h, int32_t dil_w, const void* pad, void* dst) {
  const mtk_taps_t g = {(const int8_t*)x, (const int8_t*)pad, in_h, in_w, in_c, kh, kw, dil_h, dil_w};
  for (int32_t ky = 0; ky < kh; ++ky)
    for (int32_t kx = 0; kx < kw; ++kx)
      mtk_pack_pair_at(mtk_tap(&g, iy0, ix0, ky, kx), mtk_tap(&g, iy1, ix1, ky, kx), in_c, (uint8_t*)dst,
                       (ky * kw + kx) * (in_c / 4));
  return 0;
}

/* The im2col row of the window at (iy, ix), packed tap by tap as mtk_pack_row_s16 packs a row. */
static inline int32_t mtk_pack_taps_row_s16(const void* x, int32_t iy, int32_t ix, int32_t in_h, int32_t in_w,
                                            int32_t in_c, int32_t kh, int32_t kw, int32_t dil_h, int32_t dil_w,
                                            const void* pad, void* dst) {
  const mtk_taps_t g = {(const int8_t*)x, (const int8_t*)pad, in_h, in_w, in_c, kh, kw, dil_h, dil_w};
  for (int32_t ky = 0; ky < kh; ++ky)
    for (int32_t kx = 0; kx < kw; ++kx)
      mtk_pack_row_at(mtk_tap(&g, iy, ix, ky, kx), in_c, (uint8_t*)dst, (ky * kw + kx) * (in_c / 4));
  return 0;
}

#ifndef MTK_NO_MUL64
/* Sums of both rows from a 64-bit accumulator of (r0 + r1 * 2^23) * w products: r0's in the low 23
 * bits (as long as |sum| < 2^22: at most MTK_PAIR_GROUPS groups of int8 products), r1's above. */
#define MTK_PAIR_GROUPS 63
static inline void mtk_split_pair(int64_t a, int32_t* low, int32_t* high) {
  int32_t lo = (int32_t)((uint32_t)a << 9) >> 9;
  *low += lo;
  *high += (int32_t)((a - lo) >> 23);
}

/* The loop both Cortex-M3 kernels run: `groups` groups of 4 values, walking xp and wp by x_step and
 * w_step elements a group, in chunks of MTK_PAIR_GROUPS; sums a0 += PRODUCT0(t), a1 += PRODUCT1(t)
 * (products of pairs by values, t < 4 in the group) split into s_lo0/s_hi0 and s_lo1/s_hi1 after each. */
#define MTK_PAIR_SUMS(groups, x_step, w_step, PRODUCT0, PRODUCT1, s_lo0, s_hi0, s_lo1, s_hi1) \
  while ((groups) > 0) {                                                                     \
    int32_t n = (groups) < MTK_PAIR_GROUPS ? (groups) : MTK_PAIR_GROUPS;                     \
    int64_t a0 = 0, a1 = 0;                                                                  \
    (groups) -= n;                                                                           \
    for (; n > 0; --n, xp += (x_step), wp += (w_step)) {                                     \
      _Pragma("GCC unroll 4") for (int32_t t = 0; t < 4; ++t) {                              \
        a0 += PRODUCT0(t);                                                                   \
        a1 += PRODUCT1(t);                                                                   \
      }                                                                                      \
    }                                                                                        \
    mtk_split_pair(a0, &(s_lo0), &(s_hi0));                                                  \
    mtk_split_pair(a1, &(s_lo1), &(s_hi1));                                                  \
  }
#endif

/* Weights come int8, 4 values of a channel a group (gemm.py pack_weights), or int16-expanded offline
 * ("wide", gemm.py pack_weights_int16): each group's 4 values in SXTB16 order (w0, w2, w1, w3), so
 * that the DSP path loads them with LDRD and needs no SXTB16. Value i of a tile's weights (i % 4
 * the position in its group): */
static inline int32_t mtk_weight(const void* w, int wide, int32_t i) {
  return wide ? ((const int16_t*)w)[(i & ~3) | ((i & 1) << 1) | ((i >> 1) & 1)] : ((const int8_t*)w)[i];
}

#ifdef MTK_DOT_SIMD
/* The SXTB16 pairs (w0, w2) in e, (w1, w3) in o of two channels' groups, one channel at a time:
 * MTK_FIRST_PAIRS gives the first channel's (int8: one LDRD of both channels' words, the second
 * kept in w1), MTK_SECOND_PAIRS the second's. Wide weights are loaded as they are. */
#define MTK_FIRST_PAIRS(e, o, w1, wp, wide) \
  do {                                      \
    if (wide) {                             \
      MTK_LOAD2_POST(e, o, wp, 8);          \
    } else {                                \
      uint32_t w0_;                         \
      MTK_LOAD2_POST(w0_, w1, wp, 8);       \
      (e) = mtk_sxtb16(w0_);                \
      (o) = mtk_sxtb16_ror8(w0_);           \
    }                                       \
  } while (0)
#define MTK_SECOND_PAIRS(e, o, w1, wp, wide) \
  do {                                       \
    if (wide) {                              \
      MTK_LOAD2_POST(e, o, wp, 8);           \
    } else {                                 \
      (e) = mtk_sxtb16(w1);                  \
      (o) = mtk_sxtb16_ror8(w1);             \
    }                                        \
  } while (0)
#endif

/* acc = {p0.w0, p0.w1, p1.w0, p1.w1} over `groups` groups of 4: x from mtk_pack_pair_s16, w two
 * weight rows interleaved per group, int8 or wide. */
static inline int32_t mtk_dot_2x2(const void* x, const void* w, int32_t groups, int32_t* acc, int wide) {
  int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
#if defined(MTK_DOT_MVE)
  const int8_t* xp = (const int8_t*)x;
  const int8_t* wp = (const int8_t*)w;
  (void)wide;   /* never wide: Helium reads int8 weights 16 at a time */
  for (int32_t c = (groups + 3) / 4; c > 0; --c, xp += 32, wp += 32) {
    int8x16_t x0 = vldrbq_s8(xp), x1 = vldrbq_s8(xp + 16), w0 = vldrbq_s8(wp), w1 = vldrbq_s8(wp + 16);
    s00 = vmladavaq_s8(s00, x0, w0);
    s01 = vmladavaq_s8(s01, x0, w1);
    s10 = vmladavaq_s8(s10, x1, w0);
    s11 = vmladavaq_s8(s11, x1, w1);
  }
#elif defined(MTK_DOT_SIMD)
  const uint32_t* xp = (const uint32_t*)x;
  const uint32_t* wp = (const uint32_t*)w;
  for (int32_t g = groups; g > 0; --g) {   /* unrolling makes gcc 12 spill the counter */
    uint32_t a0, b0, a1, b1, e, o, w1 = 0;
    MTK_LOAD2_POST(a0, b0, xp, 8);
    MTK_LOAD2_POST(a1, b1, xp, 8);
    MTK_FIRST_PAIRS(e, o, w1, wp, wide);
    s00 = mtk_smlad(b0, o, mtk_smlad(a0, e, s00));
    s10 = mtk_smlad(b1, o, mtk_smlad(a1, e, s10));
    MTK_SECOND_PAIRS(e, o, w1, wp, wide);
    s01 = mtk_smlad(b0, o, mtk_smlad(a0, e, s01));
    s11 = mtk_smlad(b1, o, mtk_smlad(a1, e, s11));
  }
#elif defined(MTK_NO_MUL64)
  const int16_t* xp = (const int16_t*)x;
  const uint8_t* wp = (const uint8_t*)w;
  for (int32_t g = groups; g > 0; --g, xp += 8, wp += 8 << wide) {
#pragma GCC unroll 4
    for (int32_t t = 0; t < 4; ++t) {   /* each value loaded once, each product one MLA */
      int32_t x0 = xp[t], x1 = xp[4 + t], w0 = mtk_weight(wp, wide, t), w1 = mtk_weight(wp, wide, 4 + t);
      s00 += x0 * w0;
      s01 += x0 * w1;
      s10 += x1 * w0;
      s11 += x1 * w1;
    }
  }
#else
  const int32_t* xp = (const int32_t*)x;   /* pixel pairs */
  const uint8_t* wp = (const uint8_t*)w;
#define MTK_BY_W0(t) ((int64_t)xp[t] * mtk_weight(wp, wide, t))
#define MTK_BY_W1(t) ((int64_t)xp[t] * mtk_weight(wp, wide, 4 + (t)))
  MTK_PAIR_SUMS(groups, 4, 8 << wide, MTK_BY_W0, MTK_BY_W1, s00, s10, s01, s11)
#undef MTK_BY_W0
#undef MTK_BY_W1
#endif
  return mtk_store4(acc, s00, s01, s10, s11);
}

#if !defined(MTK_DOT_SIMD) && !defined(MTK_DOT_MVE)
/* acc[j] = p.w_j, j < n (4 or 8), over `groups` groups of 4 on cores with neither DSP nor Helium: x from
 * mtk_pack_row_s16 (int16, in order), w n weight rows interleaved per group, int8 or wide; each value of
 * x loaded once, each product one MLA into a sum held in a register. */
static inline int32_t mtk_dot_1xn_scalar(const void* x, const void* w, int32_t groups, int32_t* acc, int wide,
                                         int32_t n) {
  int32_t s[8] = {0};
  const int16_t* xp = (const int16_t*)x;
  const uint8_t* wp = (const uint8_t*)w;
  for (int32_t g = groups; g > 0; --g, xp += 4, wp += (4 * n) << wide) {
#pragma GCC unroll 4
    for (int32_t t = 0; t < 4; ++t) {
      int32_t v = xp[t];
#pragma GCC unroll 8
      for (int32_t j = 0; j < n; ++j) {
        s[j] += v * mtk_weight(wp, wide, 4 * j + t);
        /* Each sum updated in place: otherwise gcc 12 expands a sum's 4 products together, holding
         * the group's 4 values of x at once, and spills (8 sums on the Cortex-M3, 4 on the M0+). */
        MTK_IN_REGISTER(s[j]);
      }
    }
  }
#pragma GCC unroll 8
  for (int32_t j = 0; j < n; ++j) acc[j] = s[j];
  return 0;
}

/* The single-row micro-kernel over 8 channels (gemm.py pack_weights(w, 8)), int8 weights: per group
 * 4 + 32 loads and 32 MLAs (on the Cortex-M3, 2.25 instructions a product; 1x4: 2.5). One copy that
 * every layer calls: inlined, it leaves the loop no spare register (+4 instructions a group). */
MTK_OUT_OF_LINE int32_t mtk_dot_1x8_s8(const void* x, const void* w, int32_t groups, int32_t* acc) {
  return mtk_dot_1xn_scalar(x, w, groups, acc, 0, 8);
}
#endif

/* acc[j] = p.w_j, j < 4, over `groups` groups of 4: x from mtk_pack_row_s16, w four weight rows
 * interleaved per group, int8 or wide. */
static inline int32_t mtk_dot_1x4(const void* x, const void* w, int32_t groups, int32_t* acc, int wide) {
#if !defined(MTK_DOT_SIMD) && !defined(MTK_DOT_MVE)
  return mtk_dot_1xn_scalar(x, w, groups, acc, wide, 4);
#else
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#if defined(MTK_DOT_MVE)
  const int8_t* xp = (const int8_t*)x;
  const int8_t* wp = (const int8_t*)w;
  (void)wide;
  for (int32_t c = (groups + 3) / 4; c > 0; --c, xp += 16, wp += 64) {
    int8x16_t v = vldrbq_s8(xp);
    s0 = vmladavaq_s8(s0, v, vldrbq_s8(wp));
    s1 = vmladavaq_s8(s1, v, vldrbq_s8(wp + 16));
    s2 = vmladavaq_s8(s2, v, vldrbq_s8(wp + 32));
    s3 = vmladavaq_s8(s3, v, vldrbq_s8(wp + 48));
  }
#elif defined(MTK_DOT_SIMD)
  const uint32_t* xp = (const uint32_t*)x;
  const uint32_t* wp = (const uint32_t*)w;
#pragma GCC unroll 2
  for (int32_t g = groups; g > 0; --g) {
    uint32_t a, b, e, o, w1 = 0;   /* two weight words at a time: four would make gcc 12 copy registers */
    MTK_LOAD2_POST(a, b, xp, 8);
    MTK_FIRST_PAIRS(e, o, w1, wp, wide);
    s0 = mtk_smlad(b, o, mtk_smlad(a, e, s0));
    MTK_SECOND_PAIRS(e, o, w1, wp, wide);
    s1 = mtk_smlad(b, o, mtk_smlad(a, e, s1));
    MTK_FIRST_PAIRS(e, o, w1, wp, wide);
    s2 = mtk_smlad(b, o, mtk_smlad(a, e, s2));
    MTK_SECOND_PAIRS(e, o, w1, wp, wide);
    s3 = mtk_smlad(b, o, mtk_smlad(a, e, s3));
  }
#endif
  return mtk_store4(acc, s0, s1, s2, s3);
#endif
}

/* The micro-kernels the generated GEMMs call: int8 weights, and (not on Helium cores) wide ones. */
static inline int32_t mtk_dot_2x2_s8(const void* x, const void* w, int32_t groups, int32_t* acc) {
  return mtk_dot_2x2(x, w, groups, acc, 0);
}

static inline int32_t mtk_dot_1x4_s8(const void* x, const void* w, int32_t groups, int32_t* acc) {
  return mtk_dot_1x4(x, w, groups, acc, 0);
}

#ifndef MTK_DOT_MVE
static inline int32_t mtk_dot_2x2_w16_s8(const void* x, const void* w, int32_t groups, int32_t* acc) {
  return mtk_dot_2x2(x, w, groups, acc, 1);
}

static inline int32_t mtk_dot_1x4_w16_s8(const void* x, const void* w, int32_t groups, int32_t* acc) {
  return mtk_dot_1x4(x, w, groups, acc, 1);
}
#endif

#ifndef MTK_NO_MUL64
/* mtk_dot_1x4_s8 with the weights two channels to an int32, w0 + w1 * 2^23 (gemm.py
 * pack_weight_pairs): per value of x one SMLAL for channels 0 and 1, one for 2 and 3. */
static inline int32_t mtk_dot_1x4_paired_s8(const void* x, const void* w, int32_t groups, int32_t* acc) {
  const int16_t* xp = (const int16_t*)x;
  const int32_t* wp = (const int32_t*)w;   /* channel pairs */
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#define MTK_BY_W01(t) ((int64_t)xp[t] * wp[2 * (t)])
#define MTK_BY_W23(t) ((int64_t)xp[t] * wp[2 * (t) + 1])
  MTK_PAIR_SUMS(groups, 4, 8, MTK_BY_W01, MTK_BY_W23, s0, s1, s2, s3)
#undef MTK_BY_W01
#undef MTK_BY_W23
  return mtk_store4(acc, s0, s1, s2, s3);
}
#endif

/* Depthwise sums of 4 channels: a Helium vector, or 4 int32. */
#if defined(MTK_DOT_MVE)
typedef int32x4_t mtk_dw_sums_t;
#define MTK_DW_SUMS_ZERO vdupq_n_s32(0)
#else
typedef struct {
  int32_t c[4];
} mtk_dw_sums_t;
#define MTK_DW_SUMS_ZERO {{0, 0, 0, 0}}
#endif

/* sums[j] += v[j] * w_j for 4 consecutive channels of one depthwise tap (c/mtk_depthwise_s8.h). The tap's
 * weights are int16 prepared offline (depthwise.py): in order on Helium cores, else in SXTB16 order
 * (w0, w2, w1, w3). */
static inline void mtk_dw_tap(mtk_dw_sums_t* sums, const int8_t* v, const void* w) {
#if defined(MTK_DOT_MVE)
  *sums = vaddq_s32(*sums, vmulq_s32(vldrbq_s32(v), vldrhq_s32((const int16_t*)w)));   /* no vector-by-vector MLA in MVE */
#elif defined(MTK_DOT_SIMD)
  const uint32_t* wp = (const uint32_t*)w;
  uint32_t x = mtk_load4_s8(v);
  uint32_t xe = mtk_sxtb16(x), xo = mtk_sxtb16_ror8(x);
  sums->c[0] = mtk_smlabb(xe, wp[0], sums->c[0]);
  sums->c[2] = mtk_smlatt(xe, wp[0], sums->c[2]);
  sums->c[1] = mtk_smlabb(xo, wp[1], sums->c[1]);
  sums->c[3] = mtk_smlatt(xo, wp[1], sums->c[3]);
#else
  const int16_t* wp = (const int16_t*)w;
  sums->c[0] += v[0] * wp[0];
  sums->c[1] += v[1] * wp[2];
  sums->c[2] += v[2] * wp[1];
  sums->c[3] += v[3] * wp[3];
#endif
}

#endif /* MTK_DOT_S8_H_ */
