/* CONV_2D with 1 to 4 input channels (image and spectrogram first layers) on DSP cores, the layer in one call
 * (ops/conv_few_dsp.py): the input rows a block of output rows reads, zero-padded with the input zero point and
 * widened to int16 once (the "band"), then every output pixel's window read straight from the band as int16 pairs,
 * two output pixels (side by side or one above the other) at a time against four output channels. No im2col, no
 * padding case in the inner loop, no row sums (the weights are int16). The pass over a block's pixel pairs is the
 * layer's own function, assembly generated with its offsets as immediates; mtk_few_pass_c computes the same in C.
 *
 * The band: a ring of `ring_rows` rows of `row_values` int16 values, each an input row from input column -pad_left on,
 * its channels interleaved as in NHWC (zp outside the image); a block's window is the consecutive input rows its
 * pixels read (kernel row ky of pixel 0 at window row ky * dil_h, a vertical pair's pixel 1 stride_h rows on), and
 * the rows it shares with the next block's stay (mtk_few_window). A pixel's kernel row is
 * `pairs` int16 pairs from its first value (the last pair's second value multiplies a zero weight when the row's
 * kw * in_c values are odd; of two rows or more those last values then pair up, mtk_few_x). The stream, per block
 * of 4 output channels: their 4 doubled biases, per k pair (mtk_few_x's order) the 4 channels' doubled weight pairs,
 * then per channel m, C, e (mtk_few_requant). */
#ifndef MTK_CONV_FEW_DSP_H_
#define MTK_CONV_FEW_DSP_H_

#include <stdint.h>
#include <string.h>

#include "mtk_dot_biased_s8.h"   /* mtk_requant_x2 */
#include "mtk_dw3x3_dsp.h"       /* mtk_dw3x3_uniform_requant */

/* The int8 output of a doubled sum x2 (q: m, C, e; mtk_requant_x2), clamped to [lo, hi]; with a uniform shift (> 0)
 * the sums scaled to it, mtk_dw3x3_uniform_requant's. */
static inline int8_t mtk_few_requant(int32_t x2, const int32_t* q, int32_t shift, int32_t lo, int32_t hi) {
  const int32_t v = shift ? mtk_dw3x3_uniform_requant(x2, q[0], q[1], shift) : mtk_requant_x2(x2, q[0], q[1], q[2]);
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

/* K pair j of a pixel's window from its first band value: kernel row j / pairs's pair j % pairs; joined (rows ending
 * on an odd value), each row's pairs - 1 whole pairs first, then the rows' last values two rows a pair (the last
 * row's alone with the value after it, against a zero weight). */
static inline uint32_t mtk_few_x(const int16_t* band, int32_t j, int32_t pairs, int32_t joined, int32_t rows,
                                 int32_t row_values) {
  const int32_t whole = pairs - joined;
  uint32_t x;
  if (j < rows * whole) {
    memcpy(&x, band + (j / whole) * row_values + 2 * (j % whole), 4);
    return x;
  }
  const int32_t r = 2 * (j - rows * whole);
  const int16_t* last = band + r * row_values + 2 * whole;
  memcpy(&x, last, 4);
  return r + 1 < rows ? (x & 0xffffu) | ((uint32_t)(uint16_t)last[row_values] << 16) : x;
}

/* n pixel pairs of a band, in C: pixel 0 of a pair from `band`, pixel 1 `p1` values on, its outputs at o0 and o1;
 * then the band `band_step` values on, the outputs `out_step` bytes on. */
static inline void mtk_few_pass_c(const int16_t* band, const int32_t* stream, int8_t* o0, int8_t* o1, int32_t n,
                                  int32_t pairs, int32_t joined, int32_t rows, int32_t row_values, int32_t p1,
                                  int32_t band_step, int32_t out_step, int32_t out_c, int32_t shift, int32_t lo,
                                  int32_t hi) {
  const int32_t kp = joined ? rows * (pairs - 1) + (rows + 1) / 2 : rows * pairs, quad_words = 16 + 4 * kp;
  for (; n > 0; --n, band += band_step, o0 += out_step, o1 += out_step) {
    const int32_t* q = stream;
    for (int32_t c0 = 0; c0 < out_c; c0 += 4, q += quad_words)
      for (int32_t c = 0; c < 4 && c0 + c < out_c; ++c) {
        int32_t s = q[c], t = q[c];
        for (int32_t j = 0; j < kp; ++j) {
          s = mtk_smlad((uint32_t)q[4 + 4 * j + c], mtk_few_x(band, j, pairs, joined, rows, row_values), s);
          t = mtk_smlad((uint32_t)q[4 + 4 * j + c], mtk_few_x(band + p1, j, pairs, joined, rows, row_values), t);
        }
        o0[c0 + c] = mtk_few_requant(s, q + 4 + 4 * kp + 3 * c, shift, lo, hi);
        o1[c0 + c] = mtk_few_requant(t, q + 4 + 4 * kp + 3 * c, shift, lo, hi);
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
  int32_t ring_rows;      /* rows of the band's ring (of each band where shifted) */
  int32_t stream_bytes;   /* the stream's, copied to `ram` first (0: read where it is) */
} mtk_few_layer_t;

/* n input rows from `top` on into ring rows `at` on (shifted: the second band's, one value on, too). */
static inline void mtk_few_rows(const mtk_few_layer_t* g, int16_t* band, const int8_t* x, int32_t top, int32_t at,
                                int32_t n) {
  for (int32_t b = 0; b <= g->shifted; ++b)
    for (int32_t r = 0; r < n; ++r)
      mtk_few_band_row(band + (b * g->ring_rows + at + r) * g->row_values, x, top + r, g->in_h, g->in_w * g->in_c,
                       g->pad_left * g->in_c - b, g->row_values, g->zp);
}

/* words int32 from src to dst (dst before src: rows moved to the ring's front), 4 at a time as mtk_few_copy. */
static inline void mtk_few_move(int32_t* dst, const int32_t* src, int32_t words) {
#ifdef MTK_DSP_ASM
  const int32_t whole = words & ~3;
  mtk_few_copy(dst, src, whole);   /* forward: each 16 bytes loaded before they are stored */
  for (int32_t i = whole; i < words; ++i) dst[i] = src[i];
#else
  memmove(dst, src, (size_t)words * 4);
#endif
}

/* The ring row of the window of the block whose first input row is `top`, the previous block's at `w` (-1: none):
 * the rows the two share stay (moved to the ring's front where the window would pass its end), the others widened. */
static inline int32_t mtk_few_window(const mtk_few_layer_t* g, int16_t* band, const int8_t* x, int32_t top,
                                     int32_t w) {
  const int32_t span = (g->k_h - 1) * g->dil_h + 1 + (g->vertical ? g->stride_h : 0);
  const int32_t step = g->stride_h * (g->vertical ? 2 : 1), kept = span - step;
  if (w < 0 || kept <= 0) {
    mtk_few_rows(g, band, x, top, 0, span);
    return 0;
  }
  w += step;
  if (w + span > g->ring_rows) {
    for (int32_t b = 0; b <= g->shifted; ++b) {
      int16_t* ring = band + b * g->ring_rows * g->row_values;
      mtk_few_move((int32_t*)ring, (const int32_t*)(ring + w * g->row_values), kept * g->row_values / 2);
    }
    w = 0;
  }
  mtk_few_rows(g, band, x, top + kept, w + kept, step);
  return w;
}

/* The layer: per block of output rows (one, or two for vertical pairs) its window of the band's ring, then its
 * pixel pairs; a pixel without a partner (an odd row or an odd last row) pairs with the band's next one, whose
 * outputs go to `junk` (out_c bytes); a last row alone in a layer of vertical pairs takes `row_pass`, its pairs side
 * by side (NULL where the rows come in pairs). A stream read from RAM is copied to `ram` first (flash with a small
 * data cache would miss on each of its lines at every pair). */
static inline void mtk_few_layer(const mtk_few_layer_t* g, const int8_t* x, const int32_t* stream, int8_t* out,
                                 int16_t* band, int8_t* junk, int32_t* ram, mtk_few_pass_fn pass,
                                 mtk_few_pass_fn row_pass) {
  if (g->stream_bytes) {
    mtk_few_copy(ram, stream, g->stream_bytes / 4);
    stream = ram;
  }
  const int32_t row_out = g->out_w * g->out_c, col = g->stride_w * g->in_c;
  int32_t w = -1;
  if (g->vertical) {
    for (int32_t oy = 0; oy < g->out_h; oy += 2) {
      int8_t* o = out + oy * row_out;
      w = mtk_few_window(g, band, x, oy * g->stride_h - g->pad_top, w);
      const int16_t* window = band + w * g->row_values;
      if (oy + 1 < g->out_h) {
        pass(window, stream, o, o + row_out, g->out_w);
      } else {   /* the last row alone: its pixels side by side */
        if (g->out_w >= 2) row_pass(window, stream, o, o + g->out_c, g->out_w >> 1);
        if (g->out_w & 1) row_pass(window + (g->out_w - 1) * col, stream, o + (g->out_w - 1) * g->out_c, junk, 1);
      }
    }
    return;
  }
  for (int32_t oy = 0; oy < g->out_h; ++oy) {
    int8_t* o = out + oy * row_out;
    w = mtk_few_window(g, band, x, oy * g->stride_h - g->pad_top, w);
    const int16_t* window = band + w * g->row_values;
    if (g->out_w >= 2) pass(window, stream, o, o + g->out_c, g->out_w >> 1);
    if (g->out_w & 1) pass(window + (g->out_w - 1) * col, stream, o + (g->out_w - 1) * g->out_c, junk, 1);
  }
}

#endif /* MTK_CONV_FEW_DSP_H_ */
