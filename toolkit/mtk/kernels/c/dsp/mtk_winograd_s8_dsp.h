/* 3x3 stride-1 CONV_2D as exact integer Winograd F(2x2, 3x3) on DSP cores (ops/winograd_dsp.py): 16 products per
 * 2x2 output tile and input channel instead of 36.
 *
 * With G' = 2G ([[2,0,0],[1,1,1],[1,-1,1],[0,0,2]]) the weights' transform U = G' g G'^T is an integer 4x4 per
 * (output, input) channel (|U| <= 9 * 128: int16), computed offline. The input's V = B^T d B over a 4x4 patch d of
 * the input (taps outside it read the zero point, as the GEMM's padded taps do) is int16 too (|V| <= 4 * 128), and
 * Y = A^T (Σ_cin U ⊙ V) A is exactly 4 times the patch's Σ w·x, in wrapping int32 arithmetic (the offline check keeps
 * 4 · 128 · Σ|w| of every channel below 2^31, so the int32 value is the true one). Y >> 1 plus twice the bias
 * (−in_zp·Σw folded in) is the fused GEMM's doubled accumulator, requantized as it does (mtk_wino_output).
 *
 * Channels go in pairs of int16 lanes, as SXTB16 splits a word of 4 input channels: pair 2g holds channels
 * (4g, 4g + 2), pair 2g + 1 (4g + 1, 4g + 3), the pairs in fours (input channels past the layer's: zero weights, and
 * V zero). Two tiles at a time (consecutive in row-major tile order; an odd last one computed twice), their V in the
 * scratch as [ξ][pair][tile] words; then per block of MTK_WINO_COLS output channels (the last padded with zero
 * weights, its extra outputs not stored) and per ξ of the 16 (F(4x4)'s 36: mtk_winograd4_s8_dsp.h), the 3 x 2
 * sums over the pairs by SMLAD, the weights [block][ξ][pair][channel] words (one stream), then per channel and tile
 * the output transform, the requantization (per channel MTK_WINO_PARAMS words) and the stores; outputs past the
 * output's edge (odd sizes) are not stored. */
#ifndef MTK_WINOGRAD_S8_DSP_H_
#define MTK_WINOGRAD_S8_DSP_H_

#include <stdint.h>
#include <string.h>

#include "mtk_dsp_intrinsics.h"
#include "mtk_fixedpoint.h"   /* mtk_mul_s32_s64: no __aeabi_lmul where the C is built for ARMv6-M */

#define MTK_WINO_COLS 3     /* output channels per block */
#define MTK_WINO_TILES 2    /* tiles sharing the V scratch */
#define MTK_WINO_PARAMS 4   /* int32 per output channel: 2 · bias, multiplier, rounding term, shift */

#if defined(__GNUC__)
#define MTK_WINO_INLINE static inline __attribute__((always_inline))
#else
#define MTK_WINO_INLINE static inline
#endif

/* B^T's rows on 4 values (pair words): B^T = [[1,0,-1,0],[0,1,1,0],[0,-1,1,0],[0,1,0,-1]]. */
#define MTK_WINO_BT(d0, d1, d2, d3, o0, o1, o2, o3) \
  ((o0) = mtk_ssub16((d0), (d2)), (o1) = mtk_sadd16((d1), (d2)), (o2) = mtk_ssub16((d2), (d1)), \
   (o3) = mtk_ssub16((d1), (d3)))

/* The word of 4 channels at p: whole (`n` >= 4), or the last `n` channels and zeros. */
static inline uint32_t mtk_wino_word(const int8_t* p, int32_t n) {
  uint32_t w = 0;
  if (n >= 4)
    memcpy(&w, p, 4);
  else
    for (int32_t i = 0; i < n; ++i) w |= (uint32_t)(uint8_t)p[i] << (8 * i);
  return w;
}

/* t = B^T d of column J of the patch (words at px[J + 4r] + c, mtk_wino_word), both pairs: te, to[4i + J]. */
#define MTK_WINO_COLUMN_T(J)                                                                                    \
  do {                                                                                                          \
    uint32_t w0 = mtk_wino_word(px[J] + c, n), w1 = mtk_wino_word(px[4 + J] + c, n);                            \
    uint32_t w2 = mtk_wino_word(px[8 + J] + c, n), w3 = mtk_wino_word(px[12 + J] + c, n);                       \
    MTK_WINO_BT(mtk_sxtb16(w0), mtk_sxtb16(w1), mtk_sxtb16(w2), mtk_sxtb16(w3), te[J], te[4 + J], te[8 + J],     \
                te[12 + J]);                                                                                    \
    MTK_WINO_BT(mtk_sxtb16_ror8(w0), mtk_sxtb16_ror8(w1), mtk_sxtb16_ror8(w2), mtk_sxtb16_ror8(w3), to[J],        \
                to[4 + J], to[8 + J], to[12 + J]);                                                              \
  } while (0)
/* V's row I = t's row I times B, of both pairs: v[(4I + j) * stride] (even lanes), + MTK_WINO_TILES (odd). */
#define MTK_WINO_ROW_V(I)                                                                                       \
  do {                                                                                                          \
    uint32_t* vi = v + 4 * (I) * stride;                                                                        \
    MTK_WINO_BT(te[4 * (I)], te[4 * (I) + 1], te[4 * (I) + 2], te[4 * (I) + 3], vi[0], vi[stride],               \
                vi[2 * stride], vi[3 * stride]);                                                                \
    vi += MTK_WINO_TILES;                                                                                       \
    MTK_WINO_BT(to[4 * (I)], to[4 * (I) + 1], to[4 * (I) + 2], to[4 * (I) + 3], vi[0], vi[stride],               \
                vi[2 * stride], vi[3 * stride]);                                                                \
  } while (0)

/* V = B^T d B of the patch's 4 channels at px[i] + c (n of them: mtk_wino_word) into v[ξ * stride] (the even
 * lanes' pair) and v[ξ * stride + MTK_WINO_TILES] (the odd ones'): t = B^T d a column of the patch at a time, both
 * pairs from each word, then t B a row at a time. */
MTK_WINO_INLINE void mtk_wino_group_v(const int8_t* const* px, int32_t c, int32_t n, uint32_t* v, int32_t stride) {
  uint32_t te[16], to[16];
  MTK_WINO_COLUMN_T(0);
  MTK_WINO_COLUMN_T(1);
  MTK_WINO_COLUMN_T(2);
  MTK_WINO_COLUMN_T(3);
  MTK_WINO_ROW_V(0);
  MTK_WINO_ROW_V(1);
  MTK_WINO_ROW_V(2);
  MTK_WINO_ROW_V(3);
}

/* The V of one group of 4 input channels of a patch (mtk_wino_group_v, mtk_wino4_group_v). */
typedef void (*mtk_wino_group_fn)(const int8_t* const* px, int32_t c, int32_t n, uint32_t* v, int32_t stride);

/* The V of the tile whose side x side patch starts at input row iy, column ix into v (its first pair, tile slot):
 * for every group of 4 input channels, both pairs, by `group` (a constant where inlined). `pad` holds the zero
 * point for every channel (whole words), the pixels outside the input read. */
MTK_WINO_INLINE void mtk_wino_patch_v(const int8_t* x, const int8_t* pad, int32_t in_h, int32_t in_w, int32_t in_c,
                                      int32_t iy, int32_t ix, uint32_t* v, int32_t pairs, int32_t side,
                                      mtk_wino_group_fn group) {
  const int8_t* px[36];
  for (int32_t r = 0; r < side; ++r)
    for (int32_t c = 0; c < side; ++c) {
      int32_t y = iy + r, xx = ix + c;
      int inside = y >= 0 && y < in_h && xx >= 0 && xx < in_w;
      px[side * r + c] = inside ? x + (y * in_w + xx) * in_c : pad;
    }
  const int32_t stride = pairs * MTK_WINO_TILES, whole = in_c & ~3;
  int32_t c = 0;
  for (; c < whole; c += 4, v += 2 * MTK_WINO_TILES) group(px, c, 4, v, stride);
  if (c < in_c) group(px, c, in_c - c, v, stride);
}

/* The V of an F(2x2) tile (a 4x4 patch). */
static inline void mtk_wino_tile_v(const int8_t* x, const int8_t* pad, int32_t in_h, int32_t in_w, int32_t in_c,
                                   int32_t iy, int32_t ix, uint32_t* v, int32_t pairs) {
  mtk_wino_patch_v(x, pad, in_h, in_w, in_c, iy, ix, v, pairs, 4, mtk_wino_group_v);
}

#ifdef MTK_DSP_ASM
/* Pair K of the four a loop step takes: both tiles' words (v0, v1) by the block's 3 channels' (u0, u1, u2), the five
 * loads at fixed offsets back to back (no write-back: the Cortex-M4 pipelines each behind the previous one); OP:
 * smuad for the first pair (the sums start there), smlad. */
#define MTK_WINO_PAIR(OP, ACC, K)                      \
  "ldr %[v0], [%[v], #" #K "*8]\n\t"                   \
  "ldr %[v1], [%[v], #" #K "*8+4]\n\t"                 \
  "ldr %[u0], [%[u], #" #K "*12]\n\t"                  \
  "ldr %[u1], [%[u], #" #K "*12+4]\n\t"                \
  "ldr %[u2], [%[u], #" #K "*12+8]\n\t"                \
  OP " %[a00], %[u0], %[v0]" ACC(a00) "\n\t"          \
  OP " %[a10], %[u0], %[v1]" ACC(a10) "\n\t"          \
  OP " %[a01], %[u1], %[v0]" ACC(a01) "\n\t"          \
  OP " %[a11], %[u1], %[v1]" ACC(a11) "\n\t"          \
  OP " %[a02], %[u2], %[v0]" ACC(a02) "\n\t"          \
  OP " %[a12], %[u2], %[v1]" ACC(a12) "\n\t"
#define MTK_WINO_NO_ACC(a) ""
#define MTK_WINO_ACC(a) ", %[" #a "]"
#define MTK_WINO_SUM(K) MTK_WINO_PAIR("smlad", MTK_WINO_ACC, K)
#define MTK_WINO_STEP "add %[v], %[v], #32\n\tadd %[u], %[u], #48\n\t"
#endif

/* m[ξ][tile][channel] = Σ over the pairs (a multiple of 4) of U · V for the `positions` ξ of the transformed tile
 * (16: F(2x2, 3x3), 36: F(4x4, 3x3)), for the block's weights u ([ξ][pair][channel] words), of its 3 channels (past
 * the layer's last one: zero weights). */
MTK_WINO_INLINE void mtk_wino_products(const uint32_t* v, const uint32_t* u, int32_t pairs, int32_t* m,
                                       int32_t positions) {
#ifdef MTK_DSP_ASM
  for (int32_t xi = 0; xi < positions; ++xi, m += MTK_WINO_COLS * MTK_WINO_TILES) {
    int32_t a00, a01, a02, a10, a11, a12;
    uint32_t n = (uint32_t)pairs / 4, v0, v1, u0, u1, u2;
    __asm__ volatile(MTK_WINO_PAIR("smuad", MTK_WINO_NO_ACC, 0) MTK_WINO_SUM(1) MTK_WINO_SUM(2) MTK_WINO_SUM(3)
                     MTK_WINO_STEP
                     "subs %[n], %[n], #1\n\t"
                     "beq 2f\n"
                     "1:\n\t" MTK_WINO_SUM(0) MTK_WINO_SUM(1) MTK_WINO_SUM(2) MTK_WINO_SUM(3)
                     MTK_WINO_STEP
                     "subs %[n], %[n], #1\n\t"
                     "bne 1b\n"
                     "2:\n\t"
                     : [v] "+r"(v), [u] "+r"(u), [n] "+r"(n), [a00] "=&r"(a00), [a01] "=&r"(a01),
                       [a02] "=&r"(a02), [a10] "=&r"(a10), [a11] "=&r"(a11), [a12] "=&r"(a12), [v0] "=&r"(v0),
                       [v1] "=&r"(v1), [u0] "=&r"(u0), [u1] "=&r"(u1), [u2] "=&r"(u2)
                     :
                     : "cc", "memory");
    m[0] = a00, m[1] = a01, m[2] = a02, m[3] = a10, m[4] = a11, m[5] = a12;
  }
#else
  for (int32_t xi = 0; xi < positions; ++xi, m += MTK_WINO_COLS * MTK_WINO_TILES)
    for (int32_t c = 0; c < MTK_WINO_COLS; ++c) {
      const uint32_t* vp = v + xi * pairs * MTK_WINO_TILES;
      const uint32_t* up = u + xi * pairs * MTK_WINO_COLS + c;
      int32_t a0 = 0, a1 = 0;
      for (int32_t p = pairs; p > 0; --p, vp += MTK_WINO_TILES, up += MTK_WINO_COLS)
        a0 = mtk_smlad(*up, vp[0], a0), a1 = mtk_smlad(*up, vp[1], a1);
      m[c] = a0, m[MTK_WINO_COLS + c] = a1;
    }
#endif
}

/* The tile's 4 outputs y[2r + s] = (A^T M A)[r][s] from its 16 sums m[ξ * MTK_WINO_COLS * MTK_WINO_TILES],
 * A^T = [[1,1,1,0],[0,1,-1,-1]], in wrapping arithmetic: per column j of M, z0 = m0j + m1j + m2j and
 * z1 = m1j − m2j − m3j, which y0, y2 take with A^T's row 0 coefficient of j and y1, y3 with row 1's. */
#ifdef MTK_DSP_ASM
#define MTK_WINO_COLUMN(J)                                   \
  "ldr %[a], [%[m], #" #J "*24]\n\t"                         \
  "ldr %[b], [%[m], #(" #J "+4)*24]\n\t"                     \
  "ldr %[c], [%[m], #(" #J "+8)*24]\n\t"                     \
  "ldr %[d], [%[m], #(" #J "+12)*24]\n\t"                    \
  "add %[a], %[a], %[b]\n\t"                                 \
  "sub %[b], %[b], %[c]\n\t"                                 \
  "add %[a], %[a], %[c]\n\t"                                 \
  "sub %[b], %[b], %[d]\n\t"
#endif
static inline void mtk_wino_output_transform(const int32_t* m, uint32_t y[4]) {
#ifdef MTK_DSP_ASM
  uint32_t y0, y1, y2, y3, a, b, c, d;
  __asm__(MTK_WINO_COLUMN(0)
          "mov %[y0], %[a]\n\t"
          "mov %[y2], %[b]\n\t"
          MTK_WINO_COLUMN(1)
          "add %[y0], %[y0], %[a]\n\t"
          "mov %[y1], %[a]\n\t"
          "add %[y2], %[y2], %[b]\n\t"
          "mov %[y3], %[b]\n\t"
          MTK_WINO_COLUMN(2)
          "add %[y0], %[y0], %[a]\n\t"
          "sub %[y1], %[y1], %[a]\n\t"
          "add %[y2], %[y2], %[b]\n\t"
          "sub %[y3], %[y3], %[b]\n\t"
          MTK_WINO_COLUMN(3)
          "sub %[y1], %[y1], %[a]\n\t"
          "sub %[y3], %[y3], %[b]\n\t"
          : [y0] "=&r"(y0), [y1] "=&r"(y1), [y2] "=&r"(y2), [y3] "=&r"(y3), [a] "=&r"(a), [b] "=&r"(b),
            [c] "=&r"(c), [d] "=&r"(d)
          : [m] "r"(m)
          : "memory");
  y[0] = y0, y[1] = y1, y[2] = y2, y[3] = y3;
#else
  const int32_t step = MTK_WINO_COLS * MTK_WINO_TILES;
  uint32_t z0[4], z1[4];
  for (int32_t j = 0; j < 4; ++j) {
    uint32_t m0 = (uint32_t)m[j * step], m1 = (uint32_t)m[(4 + j) * step], m2 = (uint32_t)m[(8 + j) * step],
             m3 = (uint32_t)m[(12 + j) * step];
    z0[j] = m0 + m1 + m2;
    z1[j] = m1 - m2 - m3;
  }
  y[0] = z0[0] + z0[1] + z0[2], y[1] = z0[1] - z0[2] - z0[3];
  y[2] = z1[0] + z1[1] + z1[2], y[3] = z1[1] - z1[2] - z1[3];
#endif
}

/* A channel's requantization: q = (2 · bias, m, k, e) of MTK_WINO_PARAMS words, and the range [lo, hi]; `clamp` 0
 * when the range is the whole int8 one (the saturation alone). */
struct mtk_wino_requant {
  int32_t bias2, mult, round, shift, lo, hi, clamp;
};

/* The output of a channel's doubled sum x2 = 2 · (Σ w·x + bias): as the fused GEMM's (mtk_dot_biased_s8.h),
 * SMMLAR(x2, m, k) + [x2 < 0], shifted right by e, saturated (k = 2^(e−1) + out_zp · 2^e; winograd_dsp.py checks
 * that nothing overflows). */
MTK_WINO_INLINE int32_t mtk_wino_requantize(int32_t x2, const struct mtk_wino_requant* r) {
  int32_t v;
#ifdef MTK_DSP_ASM
  __asm__("smmlar %0, %1, %2, %3" : "=r"(v) : "r"(x2), "r"(r->mult), "r"(r->round));
  v = __ssat((v + (x2 >> 31)) >> r->shift, 8);
#else
  int64_t p = mtk_mul_s32_s64(x2, r->mult) + (int64_t)((uint64_t)(int64_t)r->round << 32) + 2147483648LL;
  v = ((int32_t)(p >> 32) + (x2 >> 31)) >> r->shift;
  v = v < -128 ? -128 : (v > 127 ? 127 : v);
#endif
  if (r->clamp) {
    v = v < r->lo ? r->lo : v;
    v = v > r->hi ? r->hi : v;
  }
  return v;
}

/* The output of y = 4 · Σ w·x. */
MTK_WINO_INLINE int32_t mtk_wino_output(uint32_t y, const struct mtk_wino_requant* r) {
  return mtk_wino_requantize((int32_t)((uint32_t)((int32_t)y >> 1) + (uint32_t)r->bias2), r);
}

/* A tile's outputs of one channel from its sums m[ξ * MTK_WINO_COLS * MTK_WINO_TILES], at o (`row` bytes between
 * output rows, `step` between columns), `rows` x `cols` of them (2 x 2 inside the output). */
MTK_WINO_INLINE void mtk_wino_store(const int32_t* m, const struct mtk_wino_requant* r, int8_t* o, int32_t step,
                                    int32_t row, int32_t rows, int32_t cols) {
  uint32_t y[4];
  mtk_wino_output_transform(m, y);
  o[0] = (int8_t)mtk_wino_output(y[0], r);
  if (rows == 2 && cols == 2) {
    o[step] = (int8_t)mtk_wino_output(y[1], r);
    o[row] = (int8_t)mtk_wino_output(y[2], r);
    o[row + step] = (int8_t)mtk_wino_output(y[3], r);
  } else {
    if (cols == 2) o[step] = (int8_t)mtk_wino_output(y[1], r);
    if (rows == 2) o[row] = (int8_t)mtk_wino_output(y[2], r);
  }
}

/* A tile's outputs of one channel (mtk_wino_store, mtk_wino4_store). */
typedef void (*mtk_wino_tile_store_fn)(const int32_t* m, const struct mtk_wino_requant* r, int8_t* o, int32_t step,
                                       int32_t row, int32_t rows, int32_t cols);

/* A block's outputs: its first n channels (params q) of both tiles (at dst[t], rows[t] x cols[t]) by `store`, the
 * channel's parameters loaded once; `clamp` and `store` constants where it is inlined (mtk_wino_clamped). */
MTK_WINO_INLINE void mtk_wino_store_channels(const int32_t* m, const int32_t* q, int8_t* const* dst,
                                             const int32_t* rows, const int32_t* cols, int32_t n, int32_t step,
                                             int32_t row, int32_t lo, int32_t hi, int32_t clamp,
                                             mtk_wino_tile_store_fn store) {
  for (int32_t c = 0; c < n; ++c, q += MTK_WINO_PARAMS) {
    struct mtk_wino_requant r = {q[0], q[1], q[2], q[3], lo, hi, clamp};
    store(m + c, &r, dst[0] + c, step, row, rows[0], cols[0]);
    store(m + MTK_WINO_COLS + c, &r, dst[1] + c, step, row, rows[1], cols[1]);
  }
}

/* mtk_wino_store_channels with the clamp to [lo, hi] resolved once a block: none where the range is int8's. */
MTK_WINO_INLINE void mtk_wino_clamped(const int32_t* m, const int32_t* q, int8_t* const* dst, const int32_t* rows,
                                      const int32_t* cols, int32_t n, int32_t step, int32_t row, int32_t lo,
                                      int32_t hi, mtk_wino_tile_store_fn store) {
  if (lo > -128 || hi < 127)
    mtk_wino_store_channels(m, q, dst, rows, cols, n, step, row, lo, hi, 1, store);
  else
    mtk_wino_store_channels(m, q, dst, rows, cols, n, step, row, lo, hi, 0, store);
}

/* A block's stores (mtk_wino_store_block, mtk_wino4_store_block). */
typedef void (*mtk_wino_store_fn)(const int32_t* m, const int32_t* q, int8_t* const* dst, const int32_t* rows,
                                  const int32_t* cols, int32_t n, int32_t step, int32_t row, int32_t lo, int32_t hi);

/* F(2x2)'s block stores. Not inlined: alone, gcc keeps the stores' values in registers, and saves them once a
 * block. */
__attribute__((noinline)) static void mtk_wino_store_block(const int32_t* m, const int32_t* q, int8_t* const* dst,
                                                           const int32_t* rows, const int32_t* cols, int32_t n,
                                                           int32_t step, int32_t row, int32_t lo, int32_t hi) {
  mtk_wino_clamped(m, q, dst, rows, cols, n, step, row, lo, hi, mtk_wino_store);
}

/* A tile's V (mtk_wino_tile_v, mtk_wino4_tile_v). */
typedef void (*mtk_wino_tile_fn)(const int8_t* x, const int8_t* pad, int32_t in_h, int32_t in_w, int32_t in_c,
                                 int32_t iy, int32_t ix, uint32_t* v, int32_t pairs);

/* The layer in `tile` x `tile` output tiles (2: F(2x2, 3x3), 4: F(4x4, 3x3)), their V by tile_v, a block's outputs
 * by store: x int8 NHWC, u the packed weights ([block][ξ][pair][channel] words), q the channels' params, pad in_c
 * zero points rounded up to a word, out int8 NHWC, scratch the V of two tiles ([ξ][pairs][2] words) then a block's
 * sums ([ξ][2][3] int32). */
MTK_WINO_INLINE int32_t mtk_wino_layer(const void* x, const void* u, const void* q, const void* pad, void* out,
                                       void* scratch, int32_t in_h, int32_t in_w, int32_t in_c, int32_t out_h,
                                       int32_t out_w, int32_t out_c, int32_t pad_top, int32_t pad_left,
                                       int32_t act_min, int32_t act_max, int32_t tile, mtk_wino_tile_fn tile_v,
                                       mtk_wino_store_fn store) {
  const int32_t positions = (tile + 2) * (tile + 2), pairs = 4 * ((in_c + 7) / 8);
  const int32_t tiles_w = (out_w + tile - 1) / tile, tiles = tiles_w * ((out_h + tile - 1) / tile);
  const int32_t row = out_w * out_c;
  uint32_t* v = (uint32_t*)scratch;   /* its pairs past the input channels, never written, meet zero weights */
  int32_t* m = (int32_t*)(v + positions * pairs * MTK_WINO_TILES);
  for (int32_t first = 0; first < tiles; first += MTK_WINO_TILES) {
    int8_t* dst[MTK_WINO_TILES];
    int32_t rows[MTK_WINO_TILES], cols[MTK_WINO_TILES];
    for (int32_t t = 0; t < MTK_WINO_TILES; ++t) {
      int32_t index = first + t < tiles ? first + t : first;
      int32_t oy = tile * (index / tiles_w), ox = tile * (index % tiles_w);
      tile_v((const int8_t*)x, (const int8_t*)pad, in_h, in_w, in_c, oy - pad_top, ox - pad_left, v + t, pairs);
      dst[t] = (int8_t*)out + oy * row + ox * out_c;
      rows[t] = out_h - oy < tile ? out_h - oy : tile;
      cols[t] = out_w - ox < tile ? out_w - ox : tile;
    }
    const uint32_t* ub = (const uint32_t*)u;
    const int32_t* qc = (const int32_t*)q;
    for (int32_t c0 = 0; c0 < out_c; c0 += MTK_WINO_COLS, ub += positions * pairs * MTK_WINO_COLS) {
      int32_t n = out_c - c0 < MTK_WINO_COLS ? out_c - c0 : MTK_WINO_COLS;
      mtk_wino_products(v, ub, pairs, m, positions);
      int8_t* at[MTK_WINO_TILES] = {dst[0] + c0, dst[1] + c0};
      store(m, qc, at, rows, cols, n, out_c, row, act_min, act_max);
      qc += MTK_WINO_COLS * MTK_WINO_PARAMS;
    }
  }
  return 0;
}

/* The layer as F(2x2, 3x3). */
static inline int32_t mtk_winograd_s8_dsp(const void* x, const void* u, const void* q, const void* pad, void* out,
                                          void* scratch, int32_t in_h, int32_t in_w, int32_t in_c, int32_t out_h,
                                          int32_t out_w, int32_t out_c, int32_t pad_top, int32_t pad_left,
                                          int32_t act_min, int32_t act_max) {
  return mtk_wino_layer(x, u, q, pad, out, scratch, in_h, in_w, in_c, out_h, out_w, out_c, pad_top, pad_left,
                        act_min, act_max, 2, mtk_wino_tile_v, mtk_wino_store_block);
}

#endif /* MTK_WINOGRAD_S8_DSP_H_ */
