/* The micro-kernels on v7-M cores without DSP (Cortex-M3): a pair of rows
 * as 4 int32 a group, r0 + r1 * 2^23, so that one 32x32->64 multiply-accumulate by a weight sums both
 * rows' products. */
#ifndef MTK_DOT_S8_M3_H_
#define MTK_DOT_S8_M3_H_

#include "mtk_dot_s8_plain.h"

static inline void mtk_pack_pair_group(const int8_t* src0, const int8_t* src1, uint8_t* pair, int32_t g) {
  for (int32_t t = 0; t < 4; ++t) ((int32_t*)(pair + 16 * g))[t] = src0[t] + src1[t] * (1 << 23);
}

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

static inline int32_t mtk_dot_2x2(const void* x, const void* w, int32_t groups, int32_t* acc, int wide) {
  int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
  const int32_t* xp = (const int32_t*)x;   /* pixel pairs */
  const uint8_t* wp = (const uint8_t*)w;
#define MTK_BY_W0(t) ((int64_t)xp[t] * mtk_weight(wp, wide, t))
#define MTK_BY_W1(t) ((int64_t)xp[t] * mtk_weight(wp, wide, 4 + (t)))
  MTK_PAIR_SUMS(groups, 4, 8 << wide, MTK_BY_W0, MTK_BY_W1, s00, s10, s01, s11)
#undef MTK_BY_W0
#undef MTK_BY_W1
  return mtk_store4(acc, s00, s01, s10, s11);
}

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

/* Pair sums a[j] of one chunk of n <= MTK_PAIR_GROUPS groups: a pair of rows (int32 r0 + r1 * 2^23 a value)
 * times 4 channels' int8 weights (gemm.py pack_weights(w, 4)), xp and wp advanced past them. On the Cortex-M3 a
 * group is 4 LDR, 16 LDRSB and 16 SMLAL (gcc 12 adds moves: 42 instructions a group, the assembly 38). */
#if defined(__GNUC__) && defined(__thumb2__) && defined(__OPTIMIZE__)   /* -O0: no registers for its 13 operands */
#define MTK_2X4_VALUE(t)                     \
  "ldr %[x], [%[xp], #" #t "*4-16]\n\t"   \
  "ldrsb %[w], [%[wp], #" #t "-16]\n\t"   \
  "smlal %[l0], %[h0], %[x], %[w]\n\t"   \
  "ldrsb %[w], [%[wp], #" #t "-12]\n\t"   \
  "smlal %[l1], %[h1], %[x], %[w]\n\t"   \
  "ldrsb %[w], [%[wp], #" #t "-8]\n\t"    \
  "smlal %[l2], %[h2], %[x], %[w]\n\t"   \
  "ldrsb %[w], [%[wp], #" #t "-4]\n\t"    \
  "smlal %[l3], %[h3], %[x], %[w]\n\t"
static inline void mtk_pair_chunk_2x4(const int32_t** xpp, const int8_t** wpp, int32_t n, int64_t* a) {
  const int32_t* xp = *xpp;
  const int8_t* wp = *wpp;
  uint32_t l0 = 0, h0 = 0, l1 = 0, h1 = 0, l2 = 0, h2 = 0, l3 = 0, h3 = 0, x, w;
  /* the group's first loads step the pointers past it, the others reach back */
  __asm__("1:\n\t"
          "ldr %[x], [%[xp]], #16\n\t"
          "ldrsb %[w], [%[wp]], #16\n\t"
          "smlal %[l0], %[h0], %[x], %[w]\n\t"
          "ldrsb %[w], [%[wp], #-12]\n\t"
          "smlal %[l1], %[h1], %[x], %[w]\n\t"
          "ldrsb %[w], [%[wp], #-8]\n\t"
          "smlal %[l2], %[h2], %[x], %[w]\n\t"
          "ldrsb %[w], [%[wp], #-4]\n\t"
          "smlal %[l3], %[h3], %[x], %[w]\n\t"
          MTK_2X4_VALUE(1) MTK_2X4_VALUE(2) MTK_2X4_VALUE(3)
          "subs %[n], %[n], #1\n\t"
          "bne 1b"
          : [l0] "+r"(l0), [h0] "+r"(h0), [l1] "+r"(l1), [h1] "+r"(h1), [l2] "+r"(l2), [h2] "+r"(h2), [l3] "+r"(l3),
            [h3] "+r"(h3), [xp] "+r"(xp), [wp] "+r"(wp), [n] "+r"(n), [x] "=&r"(x), [w] "=&r"(w)
          :
          : "cc", "memory");
  a[0] = (int64_t)(((uint64_t)h0 << 32) | l0), a[1] = (int64_t)(((uint64_t)h1 << 32) | l1);
  a[2] = (int64_t)(((uint64_t)h2 << 32) | l2), a[3] = (int64_t)(((uint64_t)h3 << 32) | l3);
  *xpp = xp, *wpp = wp;
}
#undef MTK_2X4_VALUE
#else
static inline void mtk_pair_chunk_2x4(const int32_t** xpp, const int8_t** wpp, int32_t n, int64_t* a) {
  const int32_t* xp = *xpp;
  const int8_t* wp = *wpp;
  a[0] = a[1] = a[2] = a[3] = 0;
  for (; n > 0; --n, xp += 4, wp += 16)
    for (int32_t t = 0; t < 4; ++t)
      for (int32_t j = 0; j < 4; ++j) a[j] += (int64_t)xp[t] * wp[4 * j + t];
  *xpp = xp, *wpp = wp;
}
#endif

/* The two rows' sums of a chunk's pair sum a (mtk_split_pair with 4 instructions: a >> 23 is r1's sum less 1 when
 * r0's is negative), set or (`add`) added. */
static inline void mtk_split_pair_into(int64_t a, int32_t* low, int32_t* high, int add) {
  int32_t lo = (int32_t)((uint32_t)a << 9) >> 9;
  int32_t hi = (int32_t)((uint32_t)a >> 23 | (uint32_t)(a >> 32) << 9) - (lo >> 31);
  *low = add ? *low + lo : lo;
  *high = add ? *high + hi : hi;
}

/* acc = {p0.w0 .. p0.w3, p1.w0 .. p1.w3} over `groups` (>= 1) groups of 4: x from mtk_pack_pair_s16, w four
 * weight rows interleaved per group (int8): per value of x one SMLAL a channel for both rows. */
static inline int32_t mtk_dot_2x4_s8(const void* x, const void* w, int32_t groups, int32_t* acc) {
  const int32_t* xp = (const int32_t*)x;
  const int8_t* wp = (const int8_t*)w;
  for (int add = 0; groups > 0; add = 1) {
    int32_t n = groups < MTK_PAIR_GROUPS ? groups : MTK_PAIR_GROUPS;
    int64_t a[4];
    groups -= n;
    mtk_pair_chunk_2x4(&xp, &wp, n, a);
#pragma GCC unroll 4
    for (int32_t j = 0; j < 4; ++j) mtk_split_pair_into(a[j], &acc[j], &acc[4 + j], add);
  }
  return 0;
}

/* One-row kernels reading the input's int8 row as it is (microkernels.py "1x8/s8": no packed scratch, no packing
 * pass): acc[j] = x.w_j, j < n, over the row's k values, weights n channels interleaved per group of 4 (gemm.py
 * pack_weights(w, n)), a partial last group zero-padded. Per value of x one LDRSB, per product an LDRSB and an MLA;
 * a layer's last tile holds only the channels left (pack_weights_narrow), so no product is computed for padding. */
static inline __attribute__((always_inline)) void mtk_dot_1xn_rows(const int8_t* x, const int8_t* w, int32_t k,
                                                                  int32_t* acc, int32_t n, int32_t* s) {
  const int8_t* end = x + (k & ~3);
  for (; x != end; x += 4, w += 4 * n) {
#pragma GCC unroll 4
    for (int32_t t = 0; t < 4; ++t) {
      int32_t v = x[t];
#pragma GCC unroll 8
      for (int32_t j = 0; j < n; ++j) {
        s[j] += v * w[4 * j + t];
        MTK_IN_REGISTER(s[j]);   /* as in mtk_dot_1xn_scalar: no spills */
      }
    }
  }
  for (int32_t t = 0; t < (k & 3); ++t) {
    int32_t v = x[t];
#pragma GCC unroll 8
    for (int32_t j = 0; j < n; ++j) s[j] += v * w[4 * j + t];
  }
#pragma GCC unroll 8
  for (int32_t j = 0; j < n; ++j) acc[j] = s[j];
}

#define MTK_DOT_ROWS(n)                                                                                  \
  MTK_OUT_OF_LINE int32_t mtk_dot_1x##n##_rows_s8(const void* x, const void* w, int32_t k, int32_t* acc) { \
    int32_t s[n] = {0};                                                                                  \
    mtk_dot_1xn_rows((const int8_t*)x, (const int8_t*)w, k, acc, n, s);                                  \
    return 0;                                                                                            \
  }
MTK_DOT_ROWS(1)
MTK_DOT_ROWS(2)
MTK_DOT_ROWS(3)
MTK_DOT_ROWS(4)
MTK_DOT_ROWS(5)
MTK_DOT_ROWS(6)
MTK_DOT_ROWS(7)
#undef MTK_DOT_ROWS

/* Two rows (x0, x1: x1 == x0 for an odd last row) by n = 1 or 2 channels (microkernels.py "2x2/s8", the several-rows
 * twin of "1x8/s8" for channel counts 2x4 pads): acc[2i + j] = x_i.w_j, weights as "1x8/s8" lays them out in tiles
 * of 2. Per value of each row an LDRSB, per weight an LDRSB and two MLAs: 2 instructions a product, where one row at
 * a time takes 2.5 (two channels) or 3 (one). */
static inline __attribute__((always_inline)) void mtk_dot_2xn_rows(const int8_t* x0, const int8_t* x1, const int8_t* w,
                                                                  int32_t k, int32_t* acc, int32_t n) {
  int32_t s[2][2] = {{0, 0}, {0, 0}};
  const int8_t* end = x0 + (k & ~3);
#define MTK_2XN_VALUE(u)                   \
  {                                        \
    int32_t a = x0[u], b = x1[u];          \
    _Pragma("GCC unroll 2")                \
    for (int32_t j = 0; j < n; ++j) {      \
      int32_t v = w[4 * j + (u)];          \
      s[0][j] += a * v;                    \
      s[1][j] += b * v;                    \
    }                                      \
  }
  for (; x0 != end; x0 += 4, x1 += 4, w += 4 * n) {
#pragma GCC unroll 4
    for (int32_t u = 0; u < 4; ++u) MTK_2XN_VALUE(u)
  }
  for (int32_t u = 0; u < (k & 3); ++u) MTK_2XN_VALUE(u)   /* the partial last group */
#undef MTK_2XN_VALUE
#pragma GCC unroll 2
  for (int32_t j = 0; j < n; ++j) acc[j] = s[0][j], acc[2 + j] = s[1][j];
}

MTK_OUT_OF_LINE int32_t mtk_dot_2x2_rows_s8(const void* x0, const void* x1, const void* w, int32_t k, int32_t* acc) {
  mtk_dot_2xn_rows((const int8_t*)x0, (const int8_t*)x1, (const int8_t*)w, k, acc, 2);
  return 0;
}

MTK_OUT_OF_LINE int32_t mtk_dot_2x1_rows_s8(const void* x0, const void* x1, const void* w, int32_t k, int32_t* acc) {
  mtk_dot_2xn_rows((const int8_t*)x0, (const int8_t*)x1, (const int8_t*)w, k, acc, 1);
  return 0;
}

/* 8 channels: gcc 12 keeps the loop's 13 values in registers only in assembly (a group: 4 + 64 loads and MLAs, SUBS,
 * BNE: 2.19 instructions a product; its C 2.34). The group's first loads step the pointers past it, the others reach
 * back. */
#if defined(__GNUC__) && defined(__thumb2__) && defined(__OPTIMIZE__)
#define MTK_1X8_MLA(t, j) "ldrsb %[w], [%[wp], #" #j "*4+" #t "-32]\n\tmla %[s" #j "], %[v], %[w], %[s" #j "]\n\t"
#define MTK_1X8_REST(t)                                                                                \
  MTK_1X8_MLA(t, 1) MTK_1X8_MLA(t, 2) MTK_1X8_MLA(t, 3) MTK_1X8_MLA(t, 4) MTK_1X8_MLA(t, 5) MTK_1X8_MLA(t, 6) \
  MTK_1X8_MLA(t, 7)
#define MTK_1X8_VALUE(t) "ldrsb %[v], [%[xp], #" #t "-4]\n\t" MTK_1X8_MLA(t, 0) MTK_1X8_REST(t)
MTK_OUT_OF_LINE int32_t mtk_dot_1x8_rows_s8(const void* x, const void* w, int32_t k, int32_t* acc) {
  const int8_t* xp = (const int8_t*)x;
  const int8_t* wp = (const int8_t*)w;
  int32_t s[8] = {0}, n = k >> 2, v, u;
  if (n > 0)
    __asm__("1:\n\t"
            "ldrsb %[v], [%[xp]], #4\n\t"
            "ldrsb %[w], [%[wp]], #32\n\t"
            "mla %[s0], %[v], %[w], %[s0]\n\t"
            MTK_1X8_REST(0) MTK_1X8_VALUE(1) MTK_1X8_VALUE(2) MTK_1X8_VALUE(3)
            "subs %[n], %[n], #1\n\t"
            "bne 1b"
            : [s0] "+r"(s[0]), [s1] "+r"(s[1]), [s2] "+r"(s[2]), [s3] "+r"(s[3]), [s4] "+r"(s[4]), [s5] "+r"(s[5]),
              [s6] "+r"(s[6]), [s7] "+r"(s[7]), [xp] "+r"(xp), [wp] "+r"(wp), [n] "+r"(n), [v] "=&r"(v), [w] "=&r"(u)
            :
            : "cc", "memory");
  mtk_dot_1xn_rows(xp, wp, k & 3, acc, 8, s);   /* the partial last group */
  return 0;
}
#undef MTK_1X8_MLA
#undef MTK_1X8_REST
#undef MTK_1X8_VALUE
#else
MTK_OUT_OF_LINE int32_t mtk_dot_1x8_rows_s8(const void* x, const void* w, int32_t k, int32_t* acc) {
  int32_t s[8] = {0};
  mtk_dot_1xn_rows((const int8_t*)x, (const int8_t*)w, k, acc, 8, s);
  return 0;
}
#endif

#include "mtk_dot_s8_calls.h"
#include "mtk_dot_s8_wide.h"
#include "mtk_dot_rows_w16.h"

#endif /* MTK_DOT_S8_M3_H_ */
