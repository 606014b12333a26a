/* The micro-kernels on cores without a 32x32->64 multiply (v6-M: Cortex-M0+; MTK_MUL64_BY_HALVES
 * anywhere; mtk_dot_s8.h): pairs of rows as two row groups, one MLA a product. */
#ifndef MTK_DOT_S8_SCALAR_H_
#define MTK_DOT_S8_SCALAR_H_

#include "mtk_dot_s8_plain.h"

/* The two rows' row groups, 16 bytes a group. */
static inline void mtk_pack_pair_group(const int8_t* src0, const int8_t* src1, uint8_t* pair, int32_t g) {
  mtk_pack_row_group(src0, pair + 8 * g, g);
  mtk_pack_row_group(src1, pair + 8 * g + 8, g);
}

static inline int32_t mtk_dot_2x2(const void* x, const void* w, int32_t groups, int32_t* acc, int wide) {
  int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
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
  return mtk_store4(acc, s00, s01, s10, s11);
}

#endif /* MTK_DOT_S8_SCALAR_H_ */
