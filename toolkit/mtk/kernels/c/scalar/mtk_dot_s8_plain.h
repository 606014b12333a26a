/* What the micro-kernels of cores with neither DSP nor Helium share (mtk_dot_s8_m3.h,
 * mtk_dot_s8_scalar.h): rows packed as int16 in order, one MLA a product. */
#ifndef MTK_DOT_S8_PLAIN_H_
#define MTK_DOT_S8_PLAIN_H_

#include "mtk_dot_s8_common.h"

/* Weights come int8, 4 values of a channel a group (gemm.py pack_weights), or int16-expanded offline
 * ("wide", gemm.py pack_weights_int16): each group's 4 values in SXTB16 order (w0, w2, w1, w3), so
 * that the DSP path loads them with LDRD and needs no SXTB16. Value i of a tile's weights (i % 4
 * the position in its group): */
static inline int32_t mtk_weight(const void* w, int wide, int32_t i) {
  return wide ? ((const int16_t*)w)[(i & ~3) | ((i & 1) << 1) | ((i >> 1) & 1)] : ((const int8_t*)w)[i];
}

/* A group as 4 int16 in order, 8 bytes. */
static inline void mtk_pack_row_group(const int8_t* src, uint8_t* row, int32_t g) {
  for (int32_t t = 0; t < 4; ++t) ((int16_t*)(row + 8 * g))[t] = src[t];
}

/* acc[j] = p.w_j, j < n (4 or 8), over `groups` groups of 4: x from mtk_pack_row_s16 (int16, in order),
 * w n weight rows interleaved per group, int8 or wide; each value of x loaded once, each product one MLA
 * into a sum held in a register. */
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

static inline int32_t mtk_dot_1x4(const void* x, const void* w, int32_t groups, int32_t* acc, int wide) {
#ifdef MTK_DOT_1X4_INT8
  if (!wide) return MTK_DOT_1X4_INT8(x, w, groups, acc);   /* the instruction set's own (mtk_dot_s8_scalar.h) */
#endif
  return mtk_dot_1xn_scalar(x, w, groups, acc, wide, 4);
}

typedef mtk_sums4_t mtk_dw_sums_t;
#define MTK_DW_SUMS_ZERO MTK_SUMS4_ZERO

/* sums[j] += v[j] * w_j for 4 consecutive channels of one depthwise tap (mtk_depthwise_s8.h); the tap's
 * weights int16 in SXTB16 order (w0, w2, w1, w3), prepared offline (depthwise.py). */
static inline void mtk_dw_tap(mtk_dw_sums_t* sums, const int8_t* v, const void* w) {
  const int16_t* wp = (const int16_t*)w;
  sums->c[0] += v[0] * wp[0];
  sums->c[1] += v[1] * wp[2];
  sums->c[2] += v[2] * wp[1];
  sums->c[3] += v[3] * wp[3];
}

/* sums[j] += v[off_j] * w[j] for one tap whose 4 channels are not next to each other (mtk_depthwise_s8.h). */
static inline void mtk_dw_lanes_tap(mtk_dw_sums_t* sums, const int8_t* v, const int16_t* w, int32_t off1,
                                    int32_t off2, int32_t off3) {
  sums->c[0] += v[0] * w[0];
  sums->c[1] += v[off1] * w[1];
  sums->c[2] += v[off2] * w[2];
  sums->c[3] += v[off3] * w[3];
}

static inline int32_t mtk_dw_store(int32_t* acc, mtk_dw_sums_t sums) {
  return mtk_store4(acc, sums.c[0], sums.c[1], sums.c[2], sums.c[3]);
}

/* The direct kernels' loop (mtk_dot_rows_w16.h) in plain C. */
static inline void mtk_dot_1xn_rows_w16(const int8_t* x, const uint32_t* w, int32_t k, int32_t* acc, int32_t n) {
  int32_t s[4] = {0, 0, 0, 0};
  for (int32_t g = k >> 2; g > 0; --g, x += 4, w += 2 * n) {   /* a group's values loaded once for the n channels */
    int32_t x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
    for (int32_t j = 0; j < n; ++j) {   /* a channel's words: (w0, w2) and (w1, w3), int16 halves */
      uint32_t a = w[2 * j], b = w[2 * j + 1];
      s[j] += x0 * (int16_t)a + x2 * ((int32_t)a >> 16) + x1 * (int16_t)b + x3 * ((int32_t)b >> 16);
    }
  }
  const int16_t* h = (const int16_t*)w;
  for (int32_t t = 0; t < (k & 3); ++t)   /* value t of a group: halfword (t & 1) * 2 + (t >> 1 & 1) of its channel's */
    for (int32_t j = 0; j < n; ++j) s[j] += x[t] * h[4 * j + ((t & 1) << 1) + ((t >> 1) & 1)];
  for (int32_t j = 0; j < n; ++j) acc[j] = s[j];
}

#endif /* MTK_DOT_S8_PLAIN_H_ */
