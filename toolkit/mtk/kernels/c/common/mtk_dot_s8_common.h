/* What every instruction set's micro-kernels share (mtk_dot_s8_<isa>.h): packing rows group by group,
 * im2col taps, the offline weight order.
 *
 * Data layouts, prepared so that the DSP path needs one SXTB16 per 2 weights and none per input:
 * - activation rows are packed into int16 groups of 4 in SXTB16 order (x0, x2, x1, x3)
 *   (mtk_pack_row_s16, mtk_pack_pair_s16; the pair version interleaves two rows per group);
 * - weight rows are interleaved offline in groups of 4 bytes, 2 or 4 rows per tile
 *   (gemm.py pack_weights). SXTB16 of a weight word gives (w0, w2), after ROR 8 (w1, w3), so
 *   SMLAD with the packed activation words adds x0*w0 + x2*w2 and x1*w1 + x3*w3. A tuned schedule
 *   may take them int16-expanded offline instead (mtk_dot_*_w16_s8: no SXTB16, twice the flash).
 * Elsewhere (M0+, M3) scalar loops compute the same sums from the same layouts.
 * Helium cores (M55) keep rows and weights as int8, in chunks of 16 values (gemm.py packs their
 * weights in groups of 16): one VMLADAVA adds 16 products. */
#ifndef MTK_DOT_S8_COMMON_H_
#define MTK_DOT_S8_COMMON_H_

#include <stdint.h>

#include "mtk_fixedpoint.h"   /* MTK_NO_MUL64 */
#include "mtk_support.h"      /* MTK_COPY4, MTK_IN_REGISTER, MTK_OUT_OF_LINE, mtk_store4 */

/* Each instruction set's file defines these. */
/* Packed group g (values 4g..4g+3) of a row; of a pair of rows. */
static inline void mtk_pack_row_group(const int8_t* src, uint8_t* row, int32_t g);
static inline void mtk_pack_pair_group(const int8_t* src0, const int8_t* src1, uint8_t* pair, int32_t g);
/* Pair groups g0 .. g0 + groups - 1 from 4·groups values of each row (mtk_dot_s8_calls.h: a loop of
 * mtk_pack_pair_group unless the instruction set's file has its own, MTK_PACK_PAIR_WHOLE). */
static inline void mtk_pack_pair_whole(const int8_t* src0, const int8_t* src1, int32_t groups, uint8_t* pair,
                                       int32_t g0);
/* acc = {p0.w0, p0.w1, p1.w0, p1.w1} over `groups` groups of 4: x from mtk_pack_pair_s16, w two
 * weight rows interleaved per group, int8 or wide. */
static inline int32_t mtk_dot_2x2(const void* x, const void* w, int32_t groups, int32_t* acc, int wide);
/* acc[j] = p.w_j, j < 4, over `groups` groups of 4: x from mtk_pack_row_s16, w four weight rows
 * interleaved per group, int8 or wide. */
static inline int32_t mtk_dot_1x4(const void* x, const void* w, int32_t groups, int32_t* acc, int wide);

/* Packing works on 4 input values at a time: full groups straight from the row, the last one
 * (k % 4 values) zero-padded through a copy. */
static inline const int8_t* mtk_group_src(const int8_t* src, int32_t k, int32_t t, int8_t* tail) {
  if (t + 4 <= k) return src + t;
  for (int32_t i = 0; i < 4; ++i) tail[i] = t + i < k ? src[t + i] : 0;
  return tail;
}

/* k int8 values -> packed groups g0 .. g0 + ceil(k/4) - 1 (zero-padded) of the row at dst: the whole groups
 * first (no tail test in their loop), then the last partial one. */
static inline void mtk_pack_row_at(const int8_t* src, int32_t k, uint8_t* dst, int32_t g0) {
  int8_t tail[4];
  int32_t whole = k >> 2;
  for (int32_t g = 0; g < whole; ++g) mtk_pack_row_group(src + 4 * g, dst, g0 + g);
  if (k & 3) mtk_pack_row_group(mtk_group_src(src, k, 4 * whole, tail), dst, g0 + whole);
}

/* Two rows of k int8 values -> packed pair groups g0 .. g0 + ceil(k/4) - 1 (zero-padded) at dst. */
static inline void mtk_pack_pair_at(const int8_t* src0, const int8_t* src1, int32_t k, uint8_t* dst, int32_t g0) {
  int8_t tail0[4], tail1[4];
  int32_t whole = k >> 2;
  mtk_pack_pair_whole(src0, src1, whole, dst, g0);
  if (k & 3)
    mtk_pack_pair_group(mtk_group_src(src0, k, 4 * whole, tail0), mtk_group_src(src1, k, 4 * whole, tail1), dst,
                        g0 + whole);
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

/* Depthwise sums of 4 channels where they are not a Helium vector (mtk_dw_sums_t). */
typedef struct {
  int32_t c[4];
} mtk_sums4_t;
#define MTK_SUMS4_ZERO {{0, 0, 0, 0}}

#endif /* MTK_DOT_S8_COMMON_H_ */
