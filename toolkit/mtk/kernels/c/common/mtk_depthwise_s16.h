/* 16x8 DEPTHWISE_CONV_2D (mtk/ops/int16x8.py depthwise_s16_kernel): a whole layer in one call, inlined where the
 * generated C calls it so that its shape arrives as constants (taps unrolled, offsets immediate).
 *
 * Output channels go in blocks of 4 lanes of one output pixel, summed tap by tap in int32 (the kernel is only
 * used when no channel's sum can leave int32). A tap's 4 weights are 2 words of int16 pairs (lanes 0,1 and
 * 2,3: int16x8.py pack_depthwise_s16), and the lanes' inputs come from one or two words of the pixel:
 *   MTK_DW16_PAIRS     multiplier 1: lanes read input channels c..c+3, two words, SMLABB/SMLATT per pair;
 *   MTK_DW16_SPLIT     multiplier 2: lanes 0,1 read channel i, lanes 2,3 channel i+1: one word, SMLABB/SMLABT,
 *                      SMLATB/SMLATT;
 *   MTK_DW16_BROADCAST a multiplier padded to a multiple of 4 (padded lanes have zero weights and are not
 *                      stored): the 4 lanes read one channel, one halfword, SMLABB/SMLABT.
 * A last block of fewer than 4 output channels (PAIRS, SPLIT) reads its lanes one by one. Taps outside the image
 * are skipped (16x8 tensors have zero point 0).
 *
 * The requantization is TFLite's MultiplyByQuantizedMultiplier(int64_t acc + bias, ...) (reduced 16-bit
 * multiplier r, total right shift s in [8, 46]): (acc + bias)·r + 2^(s−1) = acc·r + B with B = bias·r + 2^(s−1)
 * prepared offline, one SMLAL, then the shift of the 64-bit product truncated to int32 and the clamp
 * (mtk_requant_table_s16, which the 16x8 GEMM's outputs call too).
 * Without the DSP extension the same code runs with portable multiply-accumulates. */
#ifndef MTK_DEPTHWISE_S16_H_
#define MTK_DEPTHWISE_S16_H_

#include <stdint.h>

#include "mtk_dsp_intrinsics.h"   /* mtk_smlabb, ...: SMLA<x><y> or their C */
#include "mtk_fixedpoint.h"       /* mtk_sat_s16 */
#include "mtk_support.h"          /* MTK_COPY */

#define MTK_DW16_PAIRS 0
#define MTK_DW16_SPLIT 1
#define MTK_DW16_BROADCAST 2

#define MTK_DW16_LO(v) ((int32_t)(int16_t)((uint32_t)(v) & 0xffffu))
#define MTK_DW16_HI(v) ((int32_t)(int16_t)((uint32_t)(v) >> 16))

#if defined(__GNUC__)
#define MTK_DW16_INLINE static inline __attribute__((always_inline))
#else
#define MTK_DW16_INLINE static inline
#endif

typedef struct {
  int32_t a[4];
} mtk_dw16_sums;

/* One tap of a full block: s += the lanes' inputs at x (the block's first input channel) times the 2 weight words. */
MTK_DW16_INLINE void mtk_dw16_tap(mtk_dw16_sums* s, const int16_t* x, const int32_t* w, int32_t mode) {
  uint32_t w01 = (uint32_t)w[0], w23 = (uint32_t)w[1], x01, x23;
  if (mode == MTK_DW16_PAIRS) {
    MTK_COPY(&x01, x, 4);
    MTK_COPY(&x23, x + 2, 4);
    s->a[0] = mtk_smlabb(x01, w01, s->a[0]);
    s->a[1] = mtk_smlatt(x01, w01, s->a[1]);
    s->a[2] = mtk_smlabb(x23, w23, s->a[2]);
    s->a[3] = mtk_smlatt(x23, w23, s->a[3]);
  } else if (mode == MTK_DW16_SPLIT) {
    MTK_COPY(&x01, x, 4);
    s->a[0] = mtk_smlabb(x01, w01, s->a[0]);
    s->a[1] = mtk_smlabt(x01, w01, s->a[1]);
    s->a[2] = mtk_smlatb(x01, w23, s->a[2]);
    s->a[3] = mtk_smlatt(x01, w23, s->a[3]);
  } else {
    x01 = (uint16_t)x[0];
    s->a[0] = mtk_smlabb(x01, w01, s->a[0]);
    s->a[1] = mtk_smlabt(x01, w01, s->a[1]);
    s->a[2] = mtk_smlabb(x01, w23, s->a[2]);
    s->a[3] = mtk_smlabt(x01, w23, s->a[3]);
  }
}

/* One tap of a last, partial block (PAIRS, SPLIT): its n < 4 lanes one by one, lane j reading channel j / per. */
MTK_DW16_INLINE void mtk_dw16_tap_lanes(mtk_dw16_sums* s, const int16_t* x, const int32_t* w, int32_t n,
                                        int32_t per) {
  for (int32_t j = 0; j < n; ++j)
    s->a[j] += (int32_t)x[j / per] * (j & 1 ? MTK_DW16_HI(w[j >> 1]) : MTK_DW16_LO(w[j >> 1]));
}

MTK_DW16_INLINE void mtk_dw16_any_tap(mtk_dw16_sums* s, const int16_t* x, const int32_t* w, int32_t mode,
                                      int32_t lanes) {
  if (lanes == 4)
    mtk_dw16_tap(s, x, w, mode);
  else
    mtk_dw16_tap_lanes(s, x, w, lanes, mode == MTK_DW16_SPLIT ? 2 : 1);
}

/* The block's sums over the taps ky in [ky_lo, ky_hi), kx in [kx_lo, kx_hi): x at the block's first input channel
 * of tap (0, 0), w at the block's weights. */
MTK_DW16_INLINE mtk_dw16_sums mtk_dw16_block(const int16_t* x, const int32_t* w, int32_t row_step, int32_t col_step,
                                             int32_t k_w, int32_t ky_lo, int32_t ky_hi, int32_t kx_lo,
                                             int32_t kx_hi, int32_t mode, int32_t lanes) {
  mtk_dw16_sums s = {{0, 0, 0, 0}};
  if (kx_lo == 0 && kx_hi == k_w) {   /* whole rows: the row unrolled, its offsets constants */
    x += ky_lo * row_step;
    w += ky_lo * k_w * 2;
#pragma GCC unroll 4
    for (int32_t ky = ky_lo; ky < ky_hi; ++ky, x += row_step, w += k_w * 2) {
#pragma GCC unroll 16
      for (int32_t kx = 0; kx < k_w; ++kx) mtk_dw16_any_tap(&s, x + kx * col_step, w + kx * 2, mode, lanes);
    }
    return s;
  }
  for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
    for (int32_t kx = kx_lo; kx < kx_hi; ++kx)
      mtk_dw16_any_tap(&s, x + ky * row_step + kx * col_step, w + (ky * k_w + kx) * 2, mode, lanes);
  }
  return s;
}

/* TFLite's MultiplyByQuantizedMultiplier(int64_t) of acc + bias, clamped, from int16x8.py requant_s64_table's
 * r, B and s. `high` 1 (every channel's total shift in [16, 46]): r and B were shifted left by 32 − total shift
 * where that is positive, so the result is the product's high word shifted right by s, the rest of the shift;
 * `high` 2: s is 0 for every channel (not read); `high` 0: s is the total shift, 8 to 46. */
MTK_DW16_INLINE int16_t mtk_requant_table_s16(int32_t acc, int64_t b, int32_t r, int32_t s, int32_t high,
                                              int32_t act_min, int32_t act_max) {
  int64_t p = b + (int64_t)acc * r;
  int32_t hi = (int32_t)((uint64_t)p >> 32), v;
  if (high == 2)
    v = hi;
  else if (high)
    v = hi >> s;
  else
    v = s >= 32 ? hi >> (s - 32) : (int32_t)(((uint32_t)p >> s) | ((uint32_t)hi << (32 - s)));
  v = mtk_sat_s16(v);
  if (act_min > -32768 && v < act_min) v = act_min;
  if (act_max < 32767 && v > act_max) v = act_max;
  return (int16_t)v;
}

/* One block's lanes stored: lane j is padded channel 4·block + j; `multiplier` real channels per input channel,
 * `padded` in the weights (BROADCAST: padded lanes are not stored). */
MTK_DW16_INLINE void mtk_dw16_store(const mtk_dw16_sums* s, int16_t* y, int32_t block, int32_t lanes,
                                    int32_t multiplier, int32_t padded, const int64_t* bias, const int32_t* mult,
                                    const int32_t* shift, int32_t high, int32_t act_min, int32_t act_max) {
#pragma GCC unroll 4
  for (int32_t j = 0; j < lanes; ++j) {
    int32_t p = block * 4 + j, c = p;
    if (padded != multiplier) {
      if (p % padded >= multiplier) continue;
      c = p / padded * multiplier + p % padded;
    }
    y[c] = mtk_requant_table_s16(s->a[j], bias[c], mult[c], high == 2 ? 0 : shift[c], high, act_min, act_max);
  }
}

/* The layer: batches × out_h × out_w pixels of out_c channels. multiplier: output channels per input channel;
 * padded: per input channel in the weights (multiplier, or the next multiple of 4 for BROADCAST). */
MTK_DW16_INLINE int32_t mtk_depthwise_s16(const int16_t* x, const int32_t* w, const int64_t* bias,
                                          const int32_t* mult, const int32_t* shift, int16_t* y, int32_t batches,
                                          int32_t in_h, int32_t in_w, int32_t in_c, int32_t out_h, int32_t out_w,
                                          int32_t k_h, int32_t k_w, int32_t stride_h, int32_t stride_w,
                                          int32_t pad_top, int32_t pad_left, int32_t dil_h, int32_t dil_w,
                                          int32_t multiplier, int32_t padded, int32_t mode, int32_t high,
                                          int32_t act_min, int32_t act_max) {
  const int32_t out_c = in_c * multiplier;
  const int32_t blocks = (in_c * padded + 3) / 4;
  const int32_t full = mode == MTK_DW16_BROADCAST ? blocks : out_c / 4;
  const int32_t row_step = dil_h * in_w * in_c, col_step = dil_w * in_c;
  const int32_t block_w = k_h * k_w * 2;   /* words of weights per block */
  for (int32_t n = 0; n < batches; ++n, x += in_h * in_w * in_c) {
    for (int32_t oy = 0; oy < out_h; ++oy) {
      const int32_t iy = oy * stride_h - pad_top;
      const int32_t ky_lo = iy < 0 ? (-iy + dil_h - 1) / dil_h : 0;
      int32_t ky_hi = (in_h - iy + dil_h - 1) / dil_h;
      if (ky_hi > k_h) ky_hi = k_h;
      for (int32_t ox = 0; ox < out_w; ++ox, y += out_c) {
        const int32_t ix = ox * stride_w - pad_left;
        const int32_t kx_lo = ix < 0 ? (-ix + dil_w - 1) / dil_w : 0;
        int32_t kx_hi = (in_w - ix + dil_w - 1) / dil_w;
        if (kx_hi > k_w) kx_hi = k_w;
        const int16_t* px = x + (iy * in_w + ix) * in_c;
        for (int32_t b = 0; b < full; ++b) {
          const int16_t* pc = px + (mode == MTK_DW16_PAIRS ? b * 4 : mode == MTK_DW16_SPLIT ? b * 2 : b * 4 / padded);
          const int32_t* wb = w + b * block_w;
          mtk_dw16_sums s = mtk_dw16_block(pc, wb, row_step, col_step, k_w, ky_lo, ky_hi, kx_lo, kx_hi,
                                           mode, 4);
          mtk_dw16_store(&s, y, b, 4, multiplier, padded, bias, mult, shift, high, act_min, act_max);
        }
        if (full < blocks) {   /* PAIRS, SPLIT: the last out_c % 4 channels */
          const int16_t* pc = px + (mode == MTK_DW16_PAIRS ? full * 4 : full * 2);
          mtk_dw16_sums s = mtk_dw16_block(pc, w + full * block_w, row_step, col_step, k_w, ky_lo, ky_hi,
                                           kx_lo, kx_hi, mode, out_c - full * 4);
          mtk_dw16_store(&s, y, full, out_c - full * 4, multiplier, padded, bias, mult, shift, high, act_min, act_max);
        }
      }
    }
  }
  return 0;
}

#endif /* MTK_DEPTHWISE_S16_H_ */
