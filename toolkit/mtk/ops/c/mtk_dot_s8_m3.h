/* The micro-kernels on v7-M cores without DSP (Cortex-M3, and the host; mtk_dot_s8.h): a pair of rows
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

#endif /* MTK_DOT_S8_M3_H_ */
