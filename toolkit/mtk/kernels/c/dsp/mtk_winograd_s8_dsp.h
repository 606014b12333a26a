/* 3x3 stride-1 CONV_2D as exact integer Winograd F(2x2, 3x3) on DSP cores (ops/winograd_dsp.py): 16 products per
 * 2x2 output tile and input channel instead of 36.
 *
 * With G' = 2G ([[2,0,0],[1,1,1],[1,-1,1],[0,0,2]]) the weights' transform U = G' g G'^T is an integer 4x4 per
 * (output, input) channel (|U| <= 9 * 128: int16), computed offline. The input's V = B^T d B over a 4x4 patch d of
 * the input (taps outside it read the zero point, as the GEMM's padded taps do) is int16 too (|V| <= 4 * 128), and
 * A^T (Σ_cin U ⊙ V) A is exactly 4 times the patch's Σ w·x, in wrapping int32 arithmetic (the offline check keeps
 * 4 · 128 · Σ|w| of every channel below 2^31, so the int32 value is the true one); shifted right by 2 and added to
 * the bias with −in_zp·Σw folded in it is TFLM's accumulator, requantized as the GEMM's epilogue does.
 *
 * Channels go in pairs of int16 lanes, as SXTB16 splits a word of 4 input channels: pair 2g holds channels
 * (4g, 4g + 2), pair 2g + 1 (4g + 1, 4g + 3); input channels past the layer's are zero weights. Two tiles at a time
 * (consecutive in row-major tile order; an odd last one computed twice), their V in the scratch as [ξ][pair][tile]
 * words; then per block of MTK_WINO_COLS output channels (the last padded with zero weights, its extra outputs not
 * stored) and per ξ of the 16, the 3 x 2 sums over the pairs by SMLAD, the weights [block][ξ][pair][channel] words
 * (one stream), then the output transform and the requantization (per channel: bias, multiplier, the rounding
 * term's words and shift of mtk_requant_rshift). Output rows and columns past the output (odd sizes) are not
 * stored. */
#ifndef MTK_WINOGRAD_S8_DSP_H_
#define MTK_WINOGRAD_S8_DSP_H_

#include <stdint.h>
#include <string.h>

#include "mtk_dsp_intrinsics.h"
#include "mtk_fixedpoint.h"

#define MTK_WINO_COLS 3     /* output channels per block */
#define MTK_WINO_TILES 2    /* tiles sharing the V scratch */
#define MTK_WINO_PARAMS 5   /* int32 per output channel: bias, multiplier, rounding low, high, shift */

/* The `n` (< 4) int8 channels at p as a word, the others zero. */
static inline uint32_t mtk_wino_tail_word(const int8_t* p, int32_t n) {
  uint32_t w = 0;
  for (int32_t i = 0; i < n; ++i) w |= (uint32_t)(uint8_t)p[i] << (8 * i);
  return w;
}

/* V of one pair of lanes (4x4 int16 pair words d, row-major) into v[ξ * stride]: B^T d B, B^T =
 * [[1,0,-1,0],[0,1,1,0],[0,-1,1,0],[0,1,0,-1]] on rows, then on columns. */
static inline void mtk_wino_input_transform(const uint32_t* d, uint32_t* v, int32_t stride) {
  uint32_t t[16];
  for (int32_t c = 0; c < 4; ++c) {
    uint32_t d0 = d[c], d1 = d[4 + c], d2 = d[8 + c], d3 = d[12 + c];
    t[c] = mtk_ssub16(d0, d2);
    t[4 + c] = mtk_sadd16(d1, d2);
    t[8 + c] = mtk_ssub16(d2, d1);
    t[12 + c] = mtk_ssub16(d1, d3);
  }
  for (int32_t r = 0; r < 4; ++r) {
    uint32_t t0 = t[4 * r], t1 = t[4 * r + 1], t2 = t[4 * r + 2], t3 = t[4 * r + 3];
    v[(4 * r) * stride] = mtk_ssub16(t0, t2);
    v[(4 * r + 1) * stride] = mtk_sadd16(t1, t2);
    v[(4 * r + 2) * stride] = mtk_ssub16(t2, t1);
    v[(4 * r + 3) * stride] = mtk_ssub16(t1, t3);
  }
}

/* The V of the tile whose patch starts at input row iy, column ix into v (its first pair, tile slot): for every
 * group of 4 input channels, both pairs. `pad` holds the zero point for every channel (whole words). */
static inline void mtk_wino_tile_v(const int8_t* x, const int8_t* pad, int32_t in_h, int32_t in_w, int32_t in_c,
                                   int32_t iy, int32_t ix, uint32_t* v, int32_t pairs) {
  const int8_t* px[16];
  for (int32_t r = 0; r < 4; ++r)
    for (int32_t c = 0; c < 4; ++c) {
      int32_t y = iy + r, xx = ix + c;
      int inside = y >= 0 && y < in_h && xx >= 0 && xx < in_w;
      px[4 * r + c] = inside ? x + (y * in_w + xx) * in_c : pad;
    }
  int32_t stride = pairs * MTK_WINO_TILES, c0 = 0;
  uint32_t even[16], odd[16];
  for (; c0 <= in_c - 4; c0 += 4, v += 2 * MTK_WINO_TILES) {
    for (int32_t i = 0; i < 16; ++i) {
      uint32_t w;
      memcpy(&w, px[i] + c0, 4);
      even[i] = mtk_sxtb16(w);
      odd[i] = mtk_sxtb16_ror8(w);
    }
    mtk_wino_input_transform(even, v, stride);
    mtk_wino_input_transform(odd, v + MTK_WINO_TILES, stride);
  }
  if (c0 < in_c) {   /* the last 1-3 channels */
    for (int32_t i = 0; i < 16; ++i) {
      uint32_t w = mtk_wino_tail_word(px[i] + c0, in_c - c0);
      even[i] = mtk_sxtb16(w);
      odd[i] = mtk_sxtb16_ror8(w);
    }
    mtk_wino_input_transform(even, v, stride);
    mtk_wino_input_transform(odd, v + MTK_WINO_TILES, stride);
  }
}

#ifdef MTK_DSP_ASM
/* One pair of lanes: both tiles' words (v0, v1) by the block's 3 channels' (u0, u1, u2), the three loads after the
 * LDRD back to back (the Cortex-M4 pipelines them). */
#define MTK_WINO_PAIR                          \
  "ldrd %[v0], %[v1], [%[v]], #8\n\t"          \
  "ldr %[u0], [%[u]], #4\n\t"                 \
  "ldr %[u1], [%[u]], #4\n\t"                 \
  "ldr %[u2], [%[u]], #4\n\t"                 \
  "smlad %[a00], %[u0], %[v0], %[a00]\n\t"     \
  "smlad %[a10], %[u0], %[v1], %[a10]\n\t"     \
  "smlad %[a01], %[u1], %[v0], %[a01]\n\t"     \
  "smlad %[a11], %[u1], %[v1], %[a11]\n\t"     \
  "smlad %[a02], %[u2], %[v0], %[a02]\n\t"     \
  "smlad %[a12], %[u2], %[v1], %[a12]\n\t"
#endif

/* m[ξ][tile][channel] = Σ over the pairs (an even count) of U · V, for the block's weights u ([ξ][pair][channel]
 * words). */
static inline void mtk_wino_products(const uint32_t* v, const uint32_t* u, int32_t pairs, int32_t* m) {
  for (int32_t xi = 0; xi < 16; ++xi, m += MTK_WINO_COLS * MTK_WINO_TILES) {
    int32_t a00 = 0, a01 = 0, a02 = 0, a10 = 0, a11 = 0, a12 = 0;
#ifdef MTK_DSP_ASM
    uint32_t n = (uint32_t)pairs / 2, v0, v1, u0, u1, u2;
    __asm__ volatile("1:\n\t" MTK_WINO_PAIR MTK_WINO_PAIR
                     "subs %[n], %[n], #1\n\t"
                     "bne 1b\n\t"
                     : [v] "+r"(v), [u] "+r"(u), [n] "+r"(n), [a00] "+r"(a00), [a01] "+r"(a01), [a02] "+r"(a02),
                       [a10] "+r"(a10), [a11] "+r"(a11), [a12] "+r"(a12), [v0] "=&r"(v0), [v1] "=&r"(v1),
                       [u0] "=&r"(u0), [u1] "=&r"(u1), [u2] "=&r"(u2)
                     :
                     : "cc", "memory");
#else
    for (int32_t p = pairs; p > 0; --p, v += MTK_WINO_TILES, u += MTK_WINO_COLS) {
      a00 = mtk_smlad(u[0], v[0], a00), a01 = mtk_smlad(u[1], v[0], a01), a02 = mtk_smlad(u[2], v[0], a02);
      a10 = mtk_smlad(u[0], v[1], a10), a11 = mtk_smlad(u[1], v[1], a11), a12 = mtk_smlad(u[2], v[1], a12);
    }
#endif
    m[0] = a00, m[1] = a01, m[2] = a02, m[3] = a10, m[4] = a11, m[5] = a12;
  }
}

/* The tile's 4 outputs y[2r + s] = (A^T M A)[r][s] from its 16 sums m[ξ * step], A^T = [[1,1,1,0],[0,1,-1,-1]],
 * in wrapping arithmetic. */
static inline void mtk_wino_output_transform(const int32_t* m, int32_t step, uint32_t y[4]) {
  uint32_t z0[4], z1[4];
  for (int32_t j = 0; j < 4; ++j) {
    uint32_t m0 = (uint32_t)m[j * step], m1 = (uint32_t)m[(4 + j) * step], m2 = (uint32_t)m[(8 + j) * step],
             m3 = (uint32_t)m[(12 + j) * step];
    z0[j] = m0 + m1 + m2;
    z1[j] = m1 - m2 - m3;
  }
  y[0] = z0[0] + z0[1] + z0[2], y[1] = z0[1] - z0[2] - z0[3];
  y[2] = z1[0] + z1[1] + z1[2], y[3] = z1[1] - z1[2] - z1[3];
}

/* The int8 output of 4 · Σ w·x (y) with the channel's params q (bias, then mtk_requant_rshift's). */
static inline int8_t mtk_wino_output(uint32_t y, const int32_t* q, int32_t out_zp, int32_t act_min,
                                     int32_t act_max) {
  int32_t acc = (int32_t)((uint32_t)((int32_t)y >> 2) + (uint32_t)q[0]);
  return (int8_t)mtk_clamp_s8(mtk_requant_rshift(acc, q[1], q[2], q[3], q[4]) + out_zp, act_min, act_max);
}

static inline int32_t mtk_winograd_s8_dsp(const void* x, const void* u, const void* q, const void* pad, void* out,
                                          void* scratch, int32_t in_h, int32_t in_w, int32_t in_c, int32_t out_h,
                                          int32_t out_w, int32_t out_c, int32_t pad_top, int32_t pad_left,
                                          int32_t out_zp, int32_t act_min, int32_t act_max) {
  const int32_t pairs = 2 * ((in_c + 3) / 4), tiles_w = (out_w + 1) / 2, tiles = tiles_w * ((out_h + 1) / 2);
  const int32_t row = out_w * out_c;
  uint32_t* v = (uint32_t*)scratch;
  int32_t* m = (int32_t*)(v + 16 * pairs * MTK_WINO_TILES);
  for (int32_t first = 0; first < tiles; first += MTK_WINO_TILES) {
    int8_t* dst[MTK_WINO_TILES];
    int32_t rows[MTK_WINO_TILES], cols[MTK_WINO_TILES];   /* the tile's outputs inside the output: 1 or 2 */
    for (int32_t t = 0; t < MTK_WINO_TILES; ++t) {
      int32_t tile = first + t < tiles ? first + t : first;
      int32_t oy = 2 * (tile / tiles_w), ox = 2 * (tile % tiles_w);
      mtk_wino_tile_v((const int8_t*)x, (const int8_t*)pad, in_h, in_w, in_c, oy - pad_top, ox - pad_left, v + t,
                      pairs);
      dst[t] = (int8_t*)out + oy * row + ox * out_c;
      rows[t] = oy + 1 < out_h ? 2 : 1;
      cols[t] = ox + 1 < out_w ? 2 : 1;
    }
    const uint32_t* ub = (const uint32_t*)u;
    const int32_t* qc = (const int32_t*)q;
    for (int32_t c0 = 0; c0 < out_c; c0 += MTK_WINO_COLS, ub += 16 * pairs * MTK_WINO_COLS) {
      mtk_wino_products(v, ub, pairs, m);
      int32_t n = out_c - c0 < MTK_WINO_COLS ? out_c - c0 : MTK_WINO_COLS;
      for (int32_t c = 0; c < n; ++c, qc += MTK_WINO_PARAMS)
        for (int32_t t = 0; t < MTK_WINO_TILES; ++t) {
          uint32_t y[4];
          int8_t* o = dst[t] + c0 + c;
          mtk_wino_output_transform(m + t * MTK_WINO_COLS + c, MTK_WINO_COLS * MTK_WINO_TILES, y);
          o[0] = mtk_wino_output(y[0], qc, out_zp, act_min, act_max);
          if (cols[t] == 2) o[out_c] = mtk_wino_output(y[1], qc, out_zp, act_min, act_max);
          if (rows[t] == 2) {
            o[row] = mtk_wino_output(y[2], qc, out_zp, act_min, act_max);
            if (cols[t] == 2) o[row + out_c] = mtk_wino_output(y[3], qc, out_zp, act_min, act_max);
          }
        }
      qc += (MTK_WINO_COLS - n) * MTK_WINO_PARAMS;
    }
  }
  return 0;
}

#endif /* MTK_WINOGRAD_S8_DSP_H_ */
