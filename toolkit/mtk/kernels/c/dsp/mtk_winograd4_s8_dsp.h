/* 3x3 stride-1 CONV_2D as exact integer Winograd F(4x4, 3x3) on DSP cores (ops/winograd_dsp.py): 36 products per
 * 4x4 output tile and input channel instead of 144; the products, the requantization and the channel layout are
 * F(2x2, 3x3)'s (mtk_winograd_s8_dsp.h).
 *
 * G's rows scaled to integers (G' = diag(4, 6, 6, 24, 24, 1) G = [[1,0,0],[-1,-1,-1],[-1,1,-1],[1,2,4],[1,-2,4],
 * [0,0,1]]) give U = G' g G'^T with |U| <= 7 · 7 · 128 (int16); V = B^T d B over a 6x6 patch, |V| <= 10 · 10 · 128
 * (int16); A'^T = A^T diag(6, 4, 4, 1, 1, 24) undoes the scaling, so that Y = A'^T (Σ_cin U ⊙ V) A' is exactly 576
 * times the patch's Σ w·x in wrapping int32 arithmetic (the offline check keeps 576 · 128 · Σ|w| of every channel
 * below 2^31). 576 = 32 · 18: (Y >> 5) = 18 Σ, times 9's inverse modulo 2^32 the doubled sum 2 Σ, plus twice the
 * bias: the fused GEMM's doubled accumulator (mtk_wino_requantize). */
#ifndef MTK_WINOGRAD4_S8_DSP_H_
#define MTK_WINOGRAD4_S8_DSP_H_

#include "mtk_winograd_s8_dsp.h"

#define MTK_WINO4_INV9 0x38E38E39u   /* 9 · MTK_WINO4_INV9 = 1 modulo 2^32 */

/* B^T = [[4,0,-5,0,1,0],[0,-4,-4,1,1,0],[0,4,-4,-1,1,0],[0,-2,-1,2,1,0],[0,2,-1,-2,1,0],[0,4,0,-5,0,1]] on 6 pair
 * words into o[k * os], each lane wrapping (the results fit int16). */
MTK_WINO_INLINE void mtk_wino4_bt(uint32_t d0, uint32_t d1, uint32_t d2, uint32_t d3, uint32_t d4, uint32_t d5,
                                  uint32_t* o, int32_t os) {
  uint32_t e42 = mtk_ssub16(d4, d2), a = mtk_ssub16(d0, d2), s = mtk_sadd16(d1, d2), e = mtk_ssub16(d1, d2);
  uint32_t g = mtk_ssub16(d3, d1);
  a = mtk_sadd16(a, a), s = mtk_sadd16(s, s), e = mtk_sadd16(e, e);
  uint32_t g2 = mtk_sadd16(g, g);
  o[0] = mtk_sadd16(mtk_sadd16(a, a), e42);
  o[os] = mtk_ssub16(mtk_sadd16(d3, d4), mtk_sadd16(s, s));
  o[2 * os] = mtk_sadd16(mtk_sadd16(e, e), mtk_ssub16(d4, d3));
  o[3 * os] = mtk_sadd16(g2, e42);
  o[4 * os] = mtk_ssub16(e42, g2);
  o[5 * os] = mtk_ssub16(mtk_ssub16(d5, d3), mtk_sadd16(g2, g2));
}

/* V = B^T d B of the 6x6 patch's 4 channels at px[i] + c (n of them: mtk_wino_word) into v[ξ * stride] (the even
 * lanes' pair) and v[ξ * stride + MTK_WINO_TILES] (the odd ones'): t = B^T d a column at a time, then t B a row at
 * a time. */
MTK_WINO_INLINE void mtk_wino4_group_v(const int8_t* const* px, int32_t c, int32_t n, uint32_t* v, int32_t stride) {
  uint32_t te[36], to[36];
  for (int32_t j = 0; j < 6; ++j) {
    uint32_t w0 = mtk_wino_word(px[j] + c, n), w1 = mtk_wino_word(px[6 + j] + c, n);
    uint32_t w2 = mtk_wino_word(px[12 + j] + c, n), w3 = mtk_wino_word(px[18 + j] + c, n);
    uint32_t w4 = mtk_wino_word(px[24 + j] + c, n), w5 = mtk_wino_word(px[30 + j] + c, n);
    mtk_wino4_bt(mtk_sxtb16(w0), mtk_sxtb16(w1), mtk_sxtb16(w2), mtk_sxtb16(w3), mtk_sxtb16(w4), mtk_sxtb16(w5),
                 te + j, 6);
    mtk_wino4_bt(mtk_sxtb16_ror8(w0), mtk_sxtb16_ror8(w1), mtk_sxtb16_ror8(w2), mtk_sxtb16_ror8(w3),
                 mtk_sxtb16_ror8(w4), mtk_sxtb16_ror8(w5), to + j, 6);
  }
  for (int32_t i = 0; i < 6; ++i) {
    const uint32_t* t = te + 6 * i;
    mtk_wino4_bt(t[0], t[1], t[2], t[3], t[4], t[5], v + 6 * i * stride, stride);
    t = to + 6 * i;
    mtk_wino4_bt(t[0], t[1], t[2], t[3], t[4], t[5], v + 6 * i * stride + MTK_WINO_TILES, stride);
  }
}

/* The V of an F(4x4) tile (a 6x6 patch). */
static inline void mtk_wino4_tile_v(const int8_t* x, const int8_t* pad, int32_t in_h, int32_t in_w, int32_t in_c,
                                    int32_t iy, int32_t ix, uint32_t* v, int32_t pairs) {
  mtk_wino_patch_v(x, pad, in_h, in_w, in_c, iy, ix, v, pairs, 6, mtk_wino4_group_v);
}

/* A'^T = [[6,4,4,1,1,0],[0,4,-4,2,-2,0],[0,4,4,4,4,0],[0,4,-4,8,-8,24]] on 6 values (wrapping) into z[k * zs]. */
MTK_WINO_INLINE void mtk_wino4_at(uint32_t m0, uint32_t m1, uint32_t m2, uint32_t m3, uint32_t m4, uint32_t m5,
                                  uint32_t* z, int32_t zs) {
  uint32_t p = m1 + m2, q = m1 - m2, r = m3 + m4, s = m3 - m4;
  z[0] = 6 * m0 + 4 * p + r;
  z[zs] = 4 * q + 2 * s;
  z[2 * zs] = 4 * (p + r);
  z[3 * zs] = 4 * q + 8 * s + 24 * m5;
}

/* The output of y = 576 · Σ w·x. */
MTK_WINO_INLINE int32_t mtk_wino4_output(uint32_t y, const struct mtk_wino_requant* r) {
  return mtk_wino_requantize((int32_t)(((uint32_t)((int32_t)y >> 5)) * MTK_WINO4_INV9 + (uint32_t)r->bias2), r);
}

/* A tile's outputs of one channel, (A'^T M A')[i][j] from its 36 sums m[ξ * MTK_WINO_COLS * MTK_WINO_TILES], at o
 * (`row` bytes between output rows, `step` between columns), `rows` x `cols` of them (4 x 4 inside the output):
 * A'^T M a column of M at a time, then each row of that times A', requantized and stored as it comes. */
MTK_WINO_INLINE void mtk_wino4_store(const int32_t* m, const struct mtk_wino_requant* r, int8_t* o, int32_t step,
                                     int32_t row, int32_t rows, int32_t cols) {
  const int32_t mstep = MTK_WINO_COLS * MTK_WINO_TILES;
  uint32_t z[24];
  for (int32_t j = 0; j < 6; ++j)
    mtk_wino4_at((uint32_t)m[j * mstep], (uint32_t)m[(6 + j) * mstep], (uint32_t)m[(12 + j) * mstep],
                 (uint32_t)m[(18 + j) * mstep], (uint32_t)m[(24 + j) * mstep], (uint32_t)m[(30 + j) * mstep], z + j, 6);
  for (int32_t i = 0; i < rows; ++i, o += row) {
    const uint32_t* t = z + 6 * i;
    uint32_t y[4];
    mtk_wino4_at(t[0], t[1], t[2], t[3], t[4], t[5], y, 1);
    if (cols == 4) {
      o[0] = (int8_t)mtk_wino4_output(y[0], r);
      o[step] = (int8_t)mtk_wino4_output(y[1], r);
      o[2 * step] = (int8_t)mtk_wino4_output(y[2], r);
      o[3 * step] = (int8_t)mtk_wino4_output(y[3], r);
    } else {
      for (int32_t j = 0; j < cols; ++j) o[j * step] = (int8_t)mtk_wino4_output(y[j], r);
    }
  }
}

/* F(4x4)'s block stores, not inlined as F(2x2)'s. */
__attribute__((noinline)) static void mtk_wino4_store_block(const int32_t* m, const int32_t* q, int8_t* const* dst,
                                                            const int32_t* rows, const int32_t* cols, int32_t n,
                                                            int32_t step, int32_t row, int32_t lo, int32_t hi) {
  mtk_wino_clamped(m, q, dst, rows, cols, n, step, row, lo, hi, mtk_wino4_store);
}

/* The layer as F(4x4, 3x3) (mtk_wino_layer). */
static inline int32_t mtk_winograd4_s8_dsp(const void* x, const void* u, const void* q, const void* pad, void* out,
                                           void* scratch, int32_t in_h, int32_t in_w, int32_t in_c, int32_t out_h,
                                           int32_t out_w, int32_t out_c, int32_t pad_top, int32_t pad_left,
                                           int32_t act_min, int32_t act_max) {
  return mtk_wino_layer(x, u, q, pad, out, scratch, in_h, in_w, in_c, out_h, out_w, out_c, pad_top, pad_left,
                        act_min, act_max, 4, mtk_wino4_tile_v, mtk_wino4_store_block);
}

#endif /* MTK_WINOGRAD4_S8_DSP_H_ */
