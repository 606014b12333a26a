/* The int8 GEMM micro-kernels on cores with the DSP extension (Cortex-M4, M7, M33): rows packed as int16 pairs in
 * SXTB16 order, SMLAD adds two products (on the host, mtk_dsp_intrinsics.h's portable C). */
#ifndef MTK_DOT_S8_DSP_H_
#define MTK_DOT_S8_DSP_H_

#include "mtk_dot_s8_common.h"
#include "mtk_dsp_intrinsics.h"

static inline uint32_t mtk_load4_s8(const int8_t* p) {
  uint32_t v;
  MTK_COPY4(&v, p);
  return v;
}

/* A group as (x0, x2), (x1, x3) int16 pairs, 8 bytes. */
static inline void mtk_pack_row_group(const int8_t* src, uint8_t* row, int32_t g) {
  uint32_t v = mtk_load4_s8(src);
  ((uint32_t*)(row + 8 * g))[0] = mtk_sxtb16(v);
  ((uint32_t*)(row + 8 * g))[1] = mtk_sxtb16_ror8(v);
}

/* The two rows' row groups, 16 bytes a group. */
static inline void mtk_pack_pair_group(const int8_t* src0, const int8_t* src1, uint8_t* pair, int32_t g) {
  mtk_pack_row_group(src0, pair + 8 * g, g);
  mtk_pack_row_group(src1, pair + 8 * g + 8, g);
}

#ifdef MTK_DSP_ASM
/* The whole groups of a pair of rows in one loop of 10 instructions a group (gcc 12 takes 14: it does not
 * post-increment the loads and stores). src0, src1 may be unaligned (LDR allows it), pair not. */
#define MTK_PACK_PAIR_WHOLE 1
static inline void mtk_pack_pair_whole(const int8_t* src0, const int8_t* src1, int32_t groups, uint8_t* pair,
                                       int32_t g0) {
  uint8_t* d = pair + 16 * g0;
  uint32_t a, b, c;
  if (groups <= 0) return;
  __asm__ volatile(
      "1:\n\t"
      "ldr %[a], [%[p0]], #4\n\t"
      "ldr %[b], [%[p1]], #4\n\t"
      "sxtb16 %[c], %[a]\n\t"
      "sxtb16 %[a], %[a], ror #8\n\t"
      "strd %[c], %[a], [%[d]], #8\n\t"
      "sxtb16 %[c], %[b]\n\t"
      "sxtb16 %[b], %[b], ror #8\n\t"
      "strd %[c], %[b], [%[d]], #8\n\t"
      "subs %[n], %[n], #1\n\t"
      "bne 1b\n\t"
      : [p0] "+r"(src0), [p1] "+r"(src1), [d] "+r"(d), [n] "+r"(groups), [a] "=&r"(a), [b] "=&r"(b), [c] "=&r"(c)
      :
      : "cc", "memory");
}
#endif

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

static inline int32_t mtk_dot_2x2(const void* x, const void* w, int32_t groups, int32_t* acc, int wide) {
  int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
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
  return mtk_store4(acc, s00, s01, s10, s11);
}

static inline int32_t mtk_dot_1x4(const void* x, const void* w, int32_t groups, int32_t* acc, int wide) {
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
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
  return mtk_store4(acc, s0, s1, s2, s3);
}

typedef mtk_sums4_t mtk_dw_sums_t;
#define MTK_DW_SUMS_ZERO MTK_SUMS4_ZERO

/* sums[j] += v[j] * w_j for 4 consecutive channels of one depthwise tap (mtk_depthwise_s8.h); the tap's
 * weights int16 in SXTB16 order (w0, w2, w1, w3), prepared offline (depthwise.py). */
static inline void mtk_dw_tap(mtk_dw_sums_t* sums, const int8_t* v, const void* w) {
  const uint32_t* wp = (const uint32_t*)w;
  uint32_t x = mtk_load4_s8(v);
  uint32_t xe = mtk_sxtb16(x), xo = mtk_sxtb16_ror8(x);
  sums->c[0] = mtk_smlabb(xe, wp[0], sums->c[0]);
  sums->c[2] = mtk_smlatt(xe, wp[0], sums->c[2]);
  sums->c[1] = mtk_smlabb(xo, wp[1], sums->c[1]);
  sums->c[3] = mtk_smlatt(xo, wp[1], sums->c[3]);
}

/* sums[j] += v[off_j] * w[j] for one tap whose 4 channels are not next to each other (mtk_depthwise_s8.h). */
static inline void mtk_dw_lanes_tap(mtk_dw_sums_t* sums, const int8_t* v, const int16_t* w, int32_t off1,
                                    int32_t off2, int32_t off3) {
  uint32_t w01, w23;
  MTK_COPY4(&w01, w);
  MTK_COPY4(&w23, w + 2);
  sums->c[0] = mtk_smlabb((uint32_t)(int32_t)v[0], w01, sums->c[0]);
  sums->c[1] = mtk_smlabt((uint32_t)(int32_t)v[off1], w01, sums->c[1]);
  sums->c[2] = mtk_smlabb((uint32_t)(int32_t)v[off2], w23, sums->c[2]);
  sums->c[3] = mtk_smlabt((uint32_t)(int32_t)v[off3], w23, sums->c[3]);
}

static inline int32_t mtk_dw_store(int32_t* acc, mtk_dw_sums_t sums) {
  return mtk_store4(acc, sums.c[0], sums.c[1], sums.c[2], sums.c[3]);
}

/* The DSP cores' direct kernels (mtk_dot_rows_w16.h, microkernels.py "1x4/s16"): per group of x an LDR and two SXTB16, per
 * channel an LDRD and two SMLAD (a packed row would cost as much to write as these to read: with 1 to 3 channels
 * nothing amortizes it); a partial last group, zero-padded in w, one value at a time. */
static inline __attribute__((always_inline)) void mtk_dot_1xn_rows_w16(const int8_t* x, const uint32_t* w, int32_t k,
                                                                      int32_t* acc, int32_t n) {
  int32_t s[4] = {0, 0, 0, 0};
  const int8_t* end = x + (k & ~3);
  for (; x != end; x += 4, w += 2 * n) {
    uint32_t v = mtk_load4_s8(x), even = mtk_sxtb16(v), odd = mtk_sxtb16_ror8(v);
#pragma GCC unroll 4
    for (int32_t j = 0; j < n; ++j) s[j] = mtk_smlad(w[2 * j + 1], odd, mtk_smlad(w[2 * j], even, s[j]));
  }
  for (int32_t t = 0; t < (k & 3); ++t)   /* value t of a group: halfword (t & 1) * 2 + (t >> 1) of its channel's */
#pragma GCC unroll 4
    for (int32_t j = 0; j < n; ++j) s[j] += x[t] * ((const int16_t*)w)[4 * j + ((t & 1) << 1) + (t >> 1)];
#pragma GCC unroll 4
  for (int32_t j = 0; j < n; ++j) acc[j] = s[j];
}

#ifdef MTK_DSP_ASM
/* One and two channels: gcc 12 takes 11 and 14 instructions a group; here two groups a pass, 14 and 20 (1.75 and 1.25
 * a product), an odd group and the partial last one in C. Each pass loads ahead of its SMLADs and puts an SMLAD after
 * each SXTB16 (the Cortex-M7 issues a load or an SXTB16 with an SMLAD; the M7 and M33 stall on a load's result used
 * at once). */
#define MTK_ROWS_W16_ASM 1
#define MTK_ROWS_W16_1X1                      \
  "ldrd %[a], %[b], [%[w]], #8\n\t"           \
  "ldr %[v], [%[x]], #4\n\t"                  \
  "ldrd %[c], %[d], [%[w]], #8\n\t"           \
  "ldr %[u], [%[x]], #4\n\t"                  \
  "sxtb16 %[e], %[v]\n\t"                     \
  "smlad %[s0], %[a], %[e], %[s0]\n\t"        \
  "sxtb16 %[v], %[v], ror #8\n\t"             \
  "smlad %[s0], %[b], %[v], %[s0]\n\t"        \
  "sxtb16 %[e], %[u]\n\t"                     \
  "smlad %[s0], %[c], %[e], %[s0]\n\t"        \
  "sxtb16 %[u], %[u], ror #8\n\t"             \
  "smlad %[s0], %[d], %[u], %[s0]\n\t"
#define MTK_ROWS_W16_1X2                      \
  "ldr %[v], [%[x]], #4\n\t"                  \
  "ldr %[u], [%[x]], #4\n\t"                  \
  "ldrd %[a], %[b], [%[w]], #8\n\t"           \
  "sxtb16 %[e], %[v]\n\t"                     \
  "smlad %[s0], %[a], %[e], %[s0]\n\t"        \
  "sxtb16 %[v], %[v], ror #8\n\t"             \
  "ldrd %[c], %[d], [%[w]], #8\n\t"           \
  "smlad %[s0], %[b], %[v], %[s0]\n\t"        \
  "sxtb16 %[f], %[u]\n\t"                     \
  "smlad %[s1], %[c], %[e], %[s1]\n\t"        \
  "sxtb16 %[u], %[u], ror #8\n\t"             \
  "smlad %[s1], %[d], %[v], %[s1]\n\t"        \
  "ldrd %[a], %[b], [%[w]], #8\n\t"           \
  "smlad %[s0], %[a], %[f], %[s0]\n\t"        \
  "ldrd %[c], %[d], [%[w]], #8\n\t"           \
  "smlad %[s0], %[b], %[u], %[s0]\n\t"        \
  "smlad %[s1], %[c], %[f], %[s1]\n\t"        \
  "smlad %[s1], %[d], %[u], %[s1]\n\t"
#define MTK_ROWS_W16_PAIRS(N, PASS)                                                                      \
  {                                                                                                     \
    const int8_t* xp = (const int8_t*)x;                                                                \
    const uint32_t* wp = (const uint32_t*)w;                                                            \
    int32_t s0 = 0, s1 = 0, pairs = k >> 3;                                                             \
    uint32_t v, u, e, f, a, b, c, d;                                                                    \
    if (pairs > 0)                                                                                      \
      __asm__("1:\n\t" PASS "subs %[n], %[n], #1\n\tbne 1b"                                             \
              : [s0] "+&r"(s0), [s1] "+&r"(s1), [x] "+&r"(xp), [w] "+&r"(wp), [n] "+&r"(pairs),        \
                [v] "=&r"(v), [u] "=&r"(u), [e] "=&r"(e), [f] "=&r"(f), [a] "=&r"(a), [b] "=&r"(b),    \
                [c] "=&r"(c), [d] "=&r"(d)                                                              \
              :                                                                                         \
              : "cc", "memory");                                                                        \
    mtk_dot_1xn_rows_w16(xp, wp, k & 7, acc, N);                                                        \
    acc[0] += s0;                                                                                       \
    if (N == 2) acc[1] += s1;                                                                           \
    return 0;                                                                                           \
  }
MTK_OUT_OF_LINE int32_t mtk_dot_1x1_rows_w16_s8(const void* x, const void* w, int32_t k, int32_t* acc)
    MTK_ROWS_W16_PAIRS(1, MTK_ROWS_W16_1X1)
MTK_OUT_OF_LINE int32_t mtk_dot_1x2_rows_w16_s8(const void* x, const void* w, int32_t k, int32_t* acc)
    MTK_ROWS_W16_PAIRS(2, MTK_ROWS_W16_1X2)
#undef MTK_ROWS_W16_1X1
#undef MTK_ROWS_W16_1X2
#undef MTK_ROWS_W16_PAIRS
#endif

/* The DSP cores' direct kernels over two of the input's rows (microkernels.py "2x2/s16"; x1 == x0 for an odd last
 * row), the few-channel layers' block: acc[2r + j] += x_r.w_j for n = 1 or 2 channels of int16 weights as "1x4/s16"
 * lays them out in tiles of 2, each weight word read once for both rows. A partial last group, zero-padded in w, one
 * value at a time. */
static inline __attribute__((always_inline)) void mtk_dot_2xn_rows_w16(const int8_t* x0, const int8_t* x1,
                                                                      const uint32_t* w, int32_t k, int32_t* acc,
                                                                      int32_t n) {
  int32_t s[2][2] = {{acc[0], acc[1]}, {acc[2], acc[3]}};
  const int8_t* end = x0 + (k & ~3);
  for (; x0 != end; x0 += 4, x1 += 4, w += 2 * n) {
    uint32_t v0 = mtk_load4_s8(x0), v1 = mtk_load4_s8(x1);
    uint32_t e0 = mtk_sxtb16(v0), o0 = mtk_sxtb16_ror8(v0), e1 = mtk_sxtb16(v1), o1 = mtk_sxtb16_ror8(v1);
#pragma GCC unroll 2
    for (int32_t j = 0; j < n; ++j) {
      s[0][j] = mtk_smlad(w[2 * j + 1], o0, mtk_smlad(w[2 * j], e0, s[0][j]));
      s[1][j] = mtk_smlad(w[2 * j + 1], o1, mtk_smlad(w[2 * j], e1, s[1][j]));
    }
  }
  for (int32_t t = 0; t < (k & 3); ++t)
#pragma GCC unroll 2
    for (int32_t j = 0; j < n; ++j) {
      int32_t v = ((const int16_t*)w)[4 * j + ((t & 1) << 1) + (t >> 1)];
      s[0][j] += x0[t] * v;
      s[1][j] += x1[t] * v;
    }
#pragma GCC unroll 2
  for (int32_t j = 0; j < n; ++j) acc[j] = s[0][j], acc[2 + j] = s[1][j];
}

#ifdef MTK_DSP_ASM
/* The whole groups in assembly: a 2x2 group needs 14 registers, more than gcc 12 gives an asm statement, so a naked
 * function (x0 r0, x1 r1, w r2, groups r3 > 0, acc on the stack) keeps every one but sp: two groups a pass, an odd
 * count entering at the second. Sums s00 r4, s01 r5, s10 r6, s11 r7; rows r8/r9 and r10/r11 (odd/even pairs);
 * weights r12, lr. Each SXTB16 but the first is followed by an SMLAD that does not read it (the Cortex-M7 issues the
 * two together). */
#define MTK_2X1_ROWS_W16_GROUP             \
  "ldr r8, [r0], #4\n\t"                   \
  "ldr r10, [r1], #4\n\t"                  \
  "ldrd r12, lr, [r2], #8\n\t"             \
  "sxtb16 r9, r8\n\t"                      \
  "sxtb16 r11, r10\n\t"                    \
  "smlad r4, r12, r9, r4\n\t"              \
  "sxtb16 r8, r8, ror #8\n\t"              \
  "smlad r6, r12, r11, r6\n\t"             \
  "sxtb16 r10, r10, ror #8\n\t"            \
  "smlad r4, lr, r8, r4\n\t"               \
  "smlad r6, lr, r10, r6\n\t"
#define MTK_2X2_ROWS_W16_GROUP             \
  MTK_2X1_ROWS_W16_GROUP                   \
  "ldrd r12, lr, [r2], #8\n\t"             \
  "smlad r5, r12, r9, r5\n\t"              \
  "smlad r7, r12, r11, r7\n\t"             \
  "smlad r5, lr, r8, r5\n\t"               \
  "smlad r7, lr, r10, r7\n\t"
#define MTK_2XN_ROWS_W16_DSP(NAME, GROUP)                                                                  \
  __attribute__((naked, noinline, unused)) static void NAME(                                             \
      __attribute__((unused)) const void* x0, __attribute__((unused)) const void* x1,                    \
      __attribute__((unused)) const void* w, __attribute__((unused)) int32_t groups,                     \
      __attribute__((unused)) int32_t* acc) {                                                            \
    __asm__ volatile(                                                                                    \
        "push {r4-r11, lr}\n\t"                                                                          \
        "movs r4, #0\n\t"                                                                                \
        "movs r5, #0\n\t"                                                                                \
        "movs r6, #0\n\t"                                                                                \
        "movs r7, #0\n\t"                                                                                \
        "adds r3, r3, #1\n\t"                                                                            \
        "lsrs r3, r3, #1\n\t"                                                                            \
        "bcc 2f\n"                                                                                       \
        "1:\n\t" GROUP "2:\n\t" GROUP                                                                    \
        "subs r3, r3, #1\n\t"                                                                            \
        "bne 1b\n\t"                                                                                     \
        "ldr r0, [sp, #36]\n\t"                                                                          \
        "stm r0, {r4-r7}\n\t"                                                                            \
        "pop {r4-r11, pc}\n\t");                                                                         \
  }
MTK_2XN_ROWS_W16_DSP(mtk_dot_2x1_rows_w16_dsp, MTK_2X1_ROWS_W16_GROUP)
MTK_2XN_ROWS_W16_DSP(mtk_dot_2x2_rows_w16_dsp, MTK_2X2_ROWS_W16_GROUP)
#undef MTK_2X1_ROWS_W16_GROUP
#undef MTK_2X2_ROWS_W16_GROUP
#undef MTK_2XN_ROWS_W16_DSP
#define MTK_2XN_ROWS_W16(N, WHOLE)                                                                   \
  {                                                                                                  \
    int32_t groups = k >> 2;                                                                         \
    const int8_t *r0 = (const int8_t*)x0, *r1 = (const int8_t*)x1;                                   \
    if (groups > 0) {                                                                                \
      WHOLE(r0, r1, w, groups, acc);                                                                 \
    } else {                                                                                         \
      acc[0] = acc[1] = acc[2] = acc[3] = 0;                                                         \
    }                                                                                                \
    mtk_dot_2xn_rows_w16(r0 + 4 * groups, r1 + 4 * groups, (const uint32_t*)w + 2 * N * groups, k & 3, acc, N); \
    return 0;                                                                                        \
  }
#else
#define MTK_2XN_ROWS_W16(N, WHOLE)                                                                   \
  {                                                                                                  \
    acc[0] = acc[1] = acc[2] = acc[3] = 0;                                                           \
    mtk_dot_2xn_rows_w16((const int8_t*)x0, (const int8_t*)x1, (const uint32_t*)w, k, acc, N);      \
    return 0;                                                                                        \
  }
#endif
MTK_OUT_OF_LINE int32_t mtk_dot_2x1_rows_w16_s8(const void* x0, const void* x1, const void* w, int32_t k, int32_t* acc)
    MTK_2XN_ROWS_W16(1, mtk_dot_2x1_rows_w16_dsp)
MTK_OUT_OF_LINE int32_t mtk_dot_2x2_rows_w16_s8(const void* x0, const void* x1, const void* w, int32_t k, int32_t* acc)
    MTK_2XN_ROWS_W16(2, mtk_dot_2x2_rows_w16_dsp)
#undef MTK_2XN_ROWS_W16

#include "mtk_dot_s8_calls.h"
#include "mtk_dot_s8_wide.h"
#include "mtk_dot_rows_w16.h"

#endif /* MTK_DOT_S8_DSP_H_ */
