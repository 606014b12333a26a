/* The int8 GEMM micro-kernels the generated GEMMs call (microkernels.py "2x2/int8", "1x4/int8"), and the packing
 * loop over whole groups of two rows, on every instruction set: each instruction set's file (mtk_dot_s8_<isa>.h)
 * includes this after its mtk_dot_2x2, mtk_dot_1x4 and mtk_pack_pair_group. */
#ifndef MTK_DOT_S8_CALLS_H_
#define MTK_DOT_S8_CALLS_H_

#include <stdint.h>

#ifndef MTK_PACK_PAIR_WHOLE   /* the DSP file's loop in assembly (MTK_DSP_ASM) */
static inline void mtk_pack_pair_whole(const int8_t* src0, const int8_t* src1, int32_t groups, uint8_t* pair,
                                       int32_t g0) {
  for (int32_t g = 0; g < groups; ++g) mtk_pack_pair_group(src0 + 4 * g, src1 + 4 * g, pair, g0 + g);
}
#endif

static inline int32_t mtk_dot_2x2_s8(const void* x, const void* w, int32_t groups, int32_t* acc) {
  return mtk_dot_2x2(x, w, groups, acc, 0);
}

static inline int32_t mtk_dot_1x4_s8(const void* x, const void* w, int32_t groups, int32_t* acc) {
  return mtk_dot_1x4(x, w, groups, acc, 0);
}

#endif /* MTK_DOT_S8_CALLS_H_ */
