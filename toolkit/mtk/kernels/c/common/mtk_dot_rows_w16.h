/* The direct kernels over the input's rows and int16 weights (microkernels.py "1x4/s16"): acc[j] = x.w_j, j < n, over
 * a row of k int8 values read as it is, the weights n channels of int16 in SXTB16 order per group of 4 (gemm.py
 * pack_weights_int16(w, n); a layer's last tile as narrow as the channels left, pack_weights_narrow), a partial
 * last group zero-padded in w. The instruction set's file defines mtk_dot_1xn_rows_w16 (and, in assembly,
 * MTK_ROWS_W16_ASM's 1 and 2 channels) before including this. */
#ifndef MTK_DOT_ROWS_W16_H_
#define MTK_DOT_ROWS_W16_H_

#include <stdint.h>

#include "mtk_support.h"   /* MTK_OUT_OF_LINE */

#define MTK_ROWS_W16(N)                                                     \
  {                                                                         \
    mtk_dot_1xn_rows_w16((const int8_t*)x, (const uint32_t*)w, k, acc, N);  \
    return 0;                                                               \
  }
#ifndef MTK_ROWS_W16_ASM
MTK_OUT_OF_LINE int32_t mtk_dot_1x1_rows_w16_s8(const void* x, const void* w, int32_t k, int32_t* acc) MTK_ROWS_W16(1)
MTK_OUT_OF_LINE int32_t mtk_dot_1x2_rows_w16_s8(const void* x, const void* w, int32_t k, int32_t* acc) MTK_ROWS_W16(2)
#endif
MTK_OUT_OF_LINE int32_t mtk_dot_1x3_rows_w16_s8(const void* x, const void* w, int32_t k, int32_t* acc) MTK_ROWS_W16(3)
MTK_OUT_OF_LINE int32_t mtk_dot_1x4_rows_w16_s8(const void* x, const void* w, int32_t k, int32_t* acc) MTK_ROWS_W16(4)
#undef MTK_ROWS_W16

#endif /* MTK_DOT_ROWS_W16_H_ */
