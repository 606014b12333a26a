/* CONV_2D with 1 to 4 input channels (image and spectrogram first layers) on DSP cores, the layer in one call
 * (ops/conv_few_dsp.py): the input rows a block of output rows reads, zero-padded with the input zero point and
 * widened to int16 once (the "band"), then every output pixel's window read straight from the band as int16 pairs,
 * two output pixels (side by side or one above the other) at a time against four output channels. No im2col, no
 * padding case in the inner loop, no row sums (the weights are int16). The pass over a block's pixel pairs is the
 * layer's own function, assembly generated with its offsets as immediates; mtk_few_pass_c computes the same in C.
 *
 * The band: `band_rows` rows of `row_values` int16 values; row r holds the input row its kernel row reads, from
 * input column -pad_left on, its channels interleaved as in NHWC (zp outside the image). A pixel's kernel row is
 * `pairs` int16 pairs from its first value (the last pair's second value multiplies a zero weight when the row's
 * kw * in_c values are odd). The stream, per block of 4 output channels: their 4 doubled biases, per k pair
 * (kernel row by kernel row) the 4 channels' doubled weight pairs, then per channel m, C, e (mtk_few_requant). */
#ifndef MTK_CONV_FEW_DSP_H_
#define MTK_CONV_FEW_DSP_H_

#include <stdint.h>
#include <string.h>

#include "mtk_dot_biased_s8.h"   /* mtk_requant_x2 */

/* The int8 output of a doubled sum x2 (q: m, C, e; mtk_requant_x2), clamped to [lo, hi]. */
static inline int8_t mtk_few_requant(int32_t x2, const int32_t* q, int32_t lo, int32_t hi) {
  const int32_t v = mtk_requant_x2(x2, q[0], q[1], q[2]);
  return (int8_t)(v < lo ? lo : (v > hi ? hi : v));
}

/* n int8 values widened to int16 (dst and src need not be word-aligned): on DSP cores 8 at a time, by SXTB16 and
 * PKHBT/PKHTB. */
static inline void mtk_few_widen(int16_t* dst, const int8_t* src, int32_t n) {
#ifdef MTK_DSP_ASM
  for (; n >= 8; n -= 8) {
    uint32_t a, b, e, o;
    __asm__ volatile(
        "ldr %[a], [%[src]], #4\n\t"
        "ldr %[b], [%[src]], #4\n\t"
        "sxtb16 %[e], %[a]\n\t"
        "sxtb16 %[o], %[a], ror #8\n\t"
        "pkhbt %[a], %[e], %[o], lsl #16\n\t"
        "pkhtb %[o], %[o], %[e], asr #16\n\t"
        "sxtb16 %[e], %[b]\n\t"
        "str %[a], [%[dst]], #4\n\t"
        "str %[o], [%[dst]], #4\n\t"
        "sxtb16 %[o], %[b], ror #8\n\t"
        "pkhbt %[a], %[e], %[o], lsl #16\n\t"
        "pkhtb %[o], %[o], %[e], asr #16\n\t"
        "str %[a], [%[dst]], #4\n\t"
        "str %[o], [%[dst]], #4\n\t"
        : [a] "=&r"(a), [b] "=&r"(b), [e] "=&r"(e), [o] "=&r"(o), [src] "+r"(src), [dst] "+r"(dst)
        :
        : "memory");
  }
#endif
  for (; n >= 4; n -= 4, src += 4, dst += 4) {
    uint32_t w, lo, hi;
    memcpy(&w, src, 4);
    const uint32_t even = mtk_sxtb16(w), odd = mtk_sxtb16_ror8(w);   /* (v0, v2), (v1, v3) */
    lo = (even & 0xffffu) | (odd << 16);
    hi = (even >> 16) | (odd & 0xffff0000u);
    memcpy(dst, &lo, 4);
    memcpy(dst + 2, &hi, 4);
  }
  for (; n > 0; --n) *dst++ = *src++;
}

/* n values of zp. */
static inline void mtk_few_fill(int16_t* dst, int32_t zp, int32_t n) {
  const uint32_t pair = ((uint32_t)zp & 0xffffu) * 0x10001u;
  for (; n >= 2; n -= 2, dst += 2) memcpy(dst, &pair, 4);
  if (n) *dst = (int16_t)zp;
}

/* One band row: input row iy (row_bytes int8 values) from value -left on (left: the padding's values before the
 * image; negative, the row from its value -left on), row_values values, zp outside the image. */
static inline void mtk_few_band_row(int16_t* dst, const int8_t* x, int32_t iy, int32_t in_h, int32_t row_bytes,
                                    int32_t left, int32_t row_values, int32_t zp) {
  int32_t v = 0;
  if (iy >= 0 && iy < in_h) {
    const int8_t* src = x + iy * row_bytes;
    int32_t inside = row_bytes;
    if (left < 0) src -= left, inside += left, left = 0;
    if (left > row_values) left = row_values;
    if (inside > row_values - left) inside = row_values - left;
    mtk_few_fill(dst, zp, left);
    mtk_few_widen(dst + left, src, inside);
    v = left + inside;
  }
  mtk_few_fill(dst + v, zp, row_values - v);
}

/* n pixel pairs of a band, in C: pixel 0 of a pair from `band`, pixel 1 `p1` values on, its outputs at o0 and o1;
 * then the band `band_step` values on, the outputs `out_step` bytes on. */
static inline void mtk_few_pass_c(const int16_t* band, const int32_t* stream, int8_t* o0, int8_t* o1, int32_t n,
                                  int32_t pairs, int32_t rows, int32_t row_values, int32_t p1, int32_t band_step,
                                  int32_t out_step, int32_t out_c, int32_t lo, int32_t hi) {
  const int32_t kp = rows * pairs, quad_words = 16 + 4 * kp;
  for (; n > 0; --n, band += band_step, o0 += out_step, o1 += out_step) {
    const int32_t* q = stream;
    for (int32_t c0 = 0; c0 < out_c; c0 += 4, q += quad_words)
      for (int32_t c = 0; c < 4 && c0 + c < out_c; ++c) {
        int32_t s = q[c], t = q[c];
        for (int32_t j = 0; j < kp; ++j) {
          const int16_t* x = band + (j / pairs) * row_values + 2 * (j % pairs);
          uint32_t x0, x1;
          memcpy(&x0, x, 4);
          memcpy(&x1, x + p1, 4);
          s = mtk_smlad((uint32_t)q[4 + 4 * j + c], x0, s);
          t = mtk_smlad((uint32_t)q[4 + 4 * j + c], x1, t);
        }
        o0[c0 + c] = mtk_few_requant(s, q + 4 + 4 * kp + 3 * c, lo, hi);
        o1[c0 + c] = mtk_few_requant(t, q + 4 + 4 * kp + 3 * c, lo, hi);
      }
  }
}

/* words * 4 bytes (a multiple of 16) from src to dst: on DSP cores 16 bytes a step by LDM/STM (newlib's memcpy goes
 * byte by byte). */
static inline void mtk_few_copy(int32_t* dst, const int32_t* src, int32_t words) {
#ifdef MTK_DSP_ASM
  for (; words > 0; words -= 4)
    __asm__ volatile("ldm %[s]!, {r4, r5, r6, r12}\n\tstm %[d]!, {r4, r5, r6, r12}"
                     : [s] "+r"(src), [d] "+r"(dst) : : "r4", "r5", "r6", "r12", "memory");
#else
  memcpy(dst, src, (size_t)words * 4);
#endif
}

/* The pass of a layer: n pixel pairs of the band at `band`, their outputs from o0 and o1. */
typedef void (*mtk_few_pass_fn)(const int16_t* band, const int32_t* stream, int8_t* o0, int8_t* o1, int32_t n);

/* The layer's geometry as mtk_few_layer reads it. */
typedef struct {
  int32_t in_h, in_w, in_c, out_h, out_w, out_c, k_h, stride_h, stride_w, dil_h, pad_top, pad_left, zp;
  int32_t row_values;     /* values of a band row */
  int32_t vertical;       /* pixel pairs one above the other (else side by side) */
  int32_t shifted;        /* side by side, pixel 1 from a second band one value on (a pixel every odd value) */
  int32_t stream_bytes;   /* the stream's, copied to `ram` first (0: read where it is) */
} mtk_few_layer_t;

/* The k_h band rows of output row oy (shifted: then the same rows one value on). */
static inline void mtk_few_band(const mtk_few_layer_t* g, int16_t* band, const int8_t* x, int32_t oy) {
  for (int32_t b = 0; b <= g->shifted; ++b)
    for (int32_t ky = 0; ky < g->k_h; ++ky)
      mtk_few_band_row(band + (b * g->k_h + ky) * g->row_values, x, oy * g->stride_h - g->pad_top + ky * g->dil_h,
                       g->in_h, g->in_w * g->in_c, g->pad_left * g->in_c - b, g->row_values, g->zp);
}

/* The layer: per block of output rows (one, or two for vertical pairs) its band, then its pixel pairs; a pixel
 * without a partner (an odd row or an odd last row) pairs with the band's next one, whose outputs go to `junk`
 * (out_c bytes); a last row alone in a layer of vertical pairs takes `row_pass`, its pairs side by side (NULL
 * where the rows come in pairs). The band: k_h rows, twice that for vertical pairs and for shifted ones. A stream read from RAM is copied to `ram`
 * first (flash with a small data cache would miss on each of its lines at every pair). */
static inline void mtk_few_layer(const mtk_few_layer_t* g, const int8_t* x, const int32_t* stream, int8_t* out,
                                 int16_t* band, int8_t* junk, int32_t* ram, mtk_few_pass_fn pass,
                                 mtk_few_pass_fn row_pass) {
  if (g->stream_bytes) {
    mtk_few_copy(ram, stream, g->stream_bytes / 4);
    stream = ram;
  }
  const int32_t row_out = g->out_w * g->out_c, col = g->stride_w * g->in_c;
  if (g->vertical) {
    for (int32_t oy = 0; oy < g->out_h; oy += 2) {
      int8_t* o = out + oy * row_out;
      mtk_few_band(g, band, x, oy);
      mtk_few_band(g, band + g->k_h * g->row_values, x, oy + 1);
      if (oy + 1 < g->out_h) {
        pass(band, stream, o, o + row_out, g->out_w);
      } else {   /* the last row alone: its pixels side by side */
        if (g->out_w >= 2) row_pass(band, stream, o, o + g->out_c, g->out_w >> 1);
        if (g->out_w & 1) row_pass(band + (g->out_w - 1) * col, stream, o + (g->out_w - 1) * g->out_c, junk, 1);
      }
    }
    return;
  }
  for (int32_t oy = 0; oy < g->out_h; ++oy) {
    int8_t* o = out + oy * row_out;
    mtk_few_band(g, band, x, oy);
    if (g->out_w >= 2) pass(band, stream, o, o + g->out_c, g->out_w >> 1);
    if (g->out_w & 1) pass(band + (g->out_w - 1) * col, stream, o + (g->out_w - 1) * g->out_c, junk, 1);
  }
}

#endif /* MTK_CONV_FEW_DSP_H_ */
