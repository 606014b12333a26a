/* int8 dot-product micro-kernels called by the TVM-generated GEMM (conv, fully connected) and
 * depthwise kernels (mtk/ops/gemm.py, depthwise.py), the names they call; like TFLM's cmsis_nn
 * folder, one file per instruction set, this header picking the one the core builds:
 * - mtk_dot_s8_mve.h     Helium (Cortex-M55): rows and weights int8, 16 values per VMLADAVA;
 * - mtk_dot_s8_dsp.h     DSP extension (Cortex-M4/M7/M33): SXTB16 + SMLAD on int16 pairs; with
 *                        MTK_EMULATE_DSP defined, the same formulation in portable C (host tests);
 * - mtk_dot_s8_m3.h      v7-M without DSP (Cortex-M3, and the host): two rows in one int32,
 *                        a 32x32->64 multiply-accumulate per weight (MUL64 pair sums);
 * - mtk_dot_s8_scalar.h  no long multiply (v6-M: Cortex-M0+; MTK_MUL64_BY_HALVES): one MLA a product.
 * What they share is in mtk_dot_s8_common.h (packing loops, im2col taps, weight order) and, for the
 * last two, mtk_dot_s8_plain.h. Each defines mtk_pack_row_group, mtk_pack_pair_group, mtk_dot_2x2,
 * mtk_dot_1x4 (int8 weights; wide: int16-expanded offline, unless MTK_DOT_NO_WIDE), mtk_dw_sums_t
 * and mtk_dw_tap; the micro-kernel table (mtk/ops/microkernels.py) says which entry points each has. */
#ifndef MTK_DOT_S8_H_
#define MTK_DOT_S8_H_

#include "mtk_dot_s8_common.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include "mtk_dot_s8_mve.h"
#elif (defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP) || defined(MTK_EMULATE_DSP)
#include "mtk_dot_s8_dsp.h"
#elif defined(MTK_NO_MUL64)
#include "mtk_dot_s8_scalar.h"
#else
#include "mtk_dot_s8_m3.h"
#endif

#ifndef MTK_PACK_PAIR_WHOLE
static inline void mtk_pack_pair_whole(const int8_t* src0, const int8_t* src1, int32_t groups, uint8_t* pair,
                                       int32_t g0) {
  for (int32_t g = 0; g < groups; ++g) mtk_pack_pair_group(src0 + 4 * g, src1 + 4 * g, pair, g0 + g);
}
#endif

/* The micro-kernels the generated GEMMs call: int8 weights, and (not on Helium cores) wide ones. */
static inline int32_t mtk_dot_2x2_s8(const void* x, const void* w, int32_t groups, int32_t* acc) {
  return mtk_dot_2x2(x, w, groups, acc, 0);
}

static inline int32_t mtk_dot_1x4_s8(const void* x, const void* w, int32_t groups, int32_t* acc) {
  return mtk_dot_1x4(x, w, groups, acc, 0);
}

#ifndef MTK_DOT_NO_WIDE
static inline int32_t mtk_dot_2x2_w16_s8(const void* x, const void* w, int32_t groups, int32_t* acc) {
  return mtk_dot_2x2(x, w, groups, acc, 1);
}

static inline int32_t mtk_dot_1x4_w16_s8(const void* x, const void* w, int32_t groups, int32_t* acc) {
  return mtk_dot_1x4(x, w, groups, acc, 1);
}
#endif

/* The DSP cores' direct kernels ("1x4/s16": mtk_dot_s8_dsp.h has the loop and, in assembly, 1 and 2 channels), also
 * in plain C elsewhere, for host builds of their code: acc[j] = x.w_j, j < n, over a row of k int8 values read as it
 * is, the weights n channels of int16 in SXTB16 order per group of 4 (gemm.py pack_weights_int16(w, n); a layer's
 * last tile as narrow as the channels left, pack_weights_narrow), a partial last group zero-padded in w. */
#ifndef MTK_DOT_SIMD
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
#endif
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

#endif /* MTK_DOT_S8_H_ */
