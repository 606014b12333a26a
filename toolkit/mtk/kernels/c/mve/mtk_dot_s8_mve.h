/* The micro-kernels on Helium cores (Cortex-M55): rows and weights stay int8, in chunks
 * of 16 values (gemm.py packs the weights in groups of 16); one VMLADAVA adds 16 products. */
#ifndef MTK_DOT_S8_MVE_H_
#define MTK_DOT_S8_MVE_H_

#include <arm_mve.h>

#include "mtk_dot_s8_common.h"

/* A group's 4 bytes as they are: rows kept whole (the kernels load 16 values of a row at a time). */
static inline void mtk_pack_row_group(const int8_t* src, uint8_t* row, int32_t g) {
  MTK_COPY4(row + 4 * g, src);
}

/* The two rows interleaved every 16 values. */
static inline void mtk_pack_pair_group(const int8_t* src0, const int8_t* src1, uint8_t* pair, int32_t g) {
  uint8_t* chunk = pair + 32 * (g >> 2) - 4 * (g & ~3);   /* row 0's 16 values, then row 1's */
  mtk_pack_row_group(src0, chunk, g);
  mtk_pack_row_group(src1, chunk + 16, g);
}

static inline int32_t mtk_dot_2x2(const void* x, const void* w, int32_t groups, int32_t* acc, int wide) {
  int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
  const int8_t* xp = (const int8_t*)x;
  const int8_t* wp = (const int8_t*)w;
  (void)wide;   /* never wide */
  for (int32_t c = (groups + 3) / 4; c > 0; --c, xp += 32, wp += 32) {
    int8x16_t x0 = vldrbq_s8(xp), x1 = vldrbq_s8(xp + 16), w0 = vldrbq_s8(wp), w1 = vldrbq_s8(wp + 16);
    s00 = vmladavaq_s8(s00, x0, w0);
    s01 = vmladavaq_s8(s01, x0, w1);
    s10 = vmladavaq_s8(s10, x1, w0);
    s11 = vmladavaq_s8(s11, x1, w1);
  }
  return mtk_store4(acc, s00, s01, s10, s11);
}

static inline int32_t mtk_dot_1x4(const void* x, const void* w, int32_t groups, int32_t* acc, int wide) {
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
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
  return mtk_store4(acc, s0, s1, s2, s3);
}

typedef int32x4_t mtk_dw_sums_t;
#define MTK_DW_SUMS_ZERO vdupq_n_s32(0)

/* sums[j] += v[j] * w_j for 4 consecutive channels of one depthwise tap (mtk_depthwise_s8.h); the tap's
 * weights int16 in order, prepared offline (depthwise.py). */
static inline void mtk_dw_tap(mtk_dw_sums_t* sums, const int8_t* v, const void* w) {
  *sums = vaddq_s32(*sums, vmulq_s32(vldrbq_s32(v), vldrhq_s32((const int16_t*)w)));   /* no vector-by-vector MLA in MVE */
}

/* sums[j] += v[off_j] * w[j] for one tap whose 4 channels are not next to each other (mtk_depthwise_s8.h). */
static inline void mtk_dw_lanes_tap(mtk_dw_sums_t* sums, const int8_t* v, const int16_t* w, int32_t off1,
                                    int32_t off2, int32_t off3) {
  const uint32x4_t offsets = {0, (uint32_t)off1, (uint32_t)off2, (uint32_t)off3};
  *sums = vaddq_s32(*sums, vmulq_s32(vldrbq_gather_offset_s32(v, offsets), vldrhq_s32(w)));
}

static inline int32_t mtk_dw_store(int32_t* acc, mtk_dw_sums_t sums) {
  vstrwq_s32(acc, sums);
  return 0;
}

#include "mtk_dot_s8_calls.h"

#endif /* MTK_DOT_S8_MVE_H_ */
