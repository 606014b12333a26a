/* DEPTHWISE_CONV_2D on cores with the DSP extension (Cortex-M4, M7, M33), the whole layer in one call
 * (depthwise_dsp.py), requantization fused; any depth multiplier, channel count, stride, dilation, padding.
 *
 * Per output pixel, a table of its kh * kw taps' input pixels (the input zero point's row `pad` for taps
 * outside the image: the folded bias cancels it, as in conv.py), filled from constant offsets and patched at
 * the border. Then per multiplier index m and group of 4
 * consecutive input channels (output channels (4p + j) * M + m), the taps two at a time: one 4-byte load from
 * each tap's pixel, PKHBT/PKHTB pair the taps' bytes channel by channel, SXTB16 widens them, and one SMLAD
 * per channel adds both taps' products (weights int16 pairs (tap 2i, tap 2i + 1) per channel, prepared
 * offline in the order the loop reads them); an odd last tap with SMLABB/SMLATT (weights in SXTB16 order).
 * The sums start at twice the folded bias and the weights are doubled offline, so that they are 2 * acc.
 * The output channels of the input channels past the last whole group (C_in % 4 of them) follow, 4 consecutive
 * ones a group, each lane loading its own input byte per tap (SMLABB/SMLABT).
 *
 * Requantization, TFLM's MultiplyByQuantizedMultiplier for a right shift e >= 1 (double rounding):
 * SaturatingRoundingDoublingHighMul(acc, mult) = floor((acc * mult + 2^30) / 2^31) (TFLM's nudge makes it
 * round half up; it cannot saturate with mult >= 0) is SMMLAR of 2 * acc, which also adds
 * k = 2^(e-1) + out_zp * 2^e; RoundingDivideByPOT's "- 1 when negative" comes from acc's sign (the same
 * result: when acc < 0 and the product rounds to 0 both give 0), then an arithmetic shift by e and SSAT
 * to int8 (depthwise_dsp.py checks at compile time that none of it overflows int32). A group's 4 outputs
 * with multiplier 1 are stored as one word.
 *
 * The groups' data is one stream read in order (depthwise_dsp.py pack): per group 2 * bias of its 4 lanes
 * (int32), its weights (int16), then per lane mult, k, e (int32). */
#ifndef MTK_DEPTHWISE_DSP_H_
#define MTK_DEPTHWISE_DSP_H_

#include <stdint.h>
#include <string.h>

#include "mtk_dsp_intrinsics.h"   /* MTK_DSP_ASM: the assembly below, else its C twin */
#include "mtk_fixedpoint.h"

#if defined(__GNUC__)
#define MTK_DW_DSP_INLINE static inline __attribute__((always_inline))
#else
#define MTK_DW_DSP_INLINE static inline
#endif

/* The requantized output of one lane from its sum (2 * acc) and its params q[0..2] = mult, k, e,
 * saturated to int8: the arithmetic the assembly does, in C. */
static inline int32_t mtk_dw_dsp_requant(int32_t acc2, const int32_t* q) {
  int32_t x = q[1] + (int32_t)((mtk_mul_s32_s64(acc2, q[0]) + ((int64_t)1 << 31)) >> 32);   /* SMMLAR */
  x = (x - (int32_t)((uint32_t)acc2 >> 31)) >> q[2];
  return x < -128 ? -128 : (x > 127 ? 127 : x);
}

#ifdef MTK_DSP_ASM
/* Two taps of 4 channels: sums a0..a3 += both taps' products, tp and wp advanced. */
#define MTK_DW_DSP_PAIR(STREAM)                                                                                      \
  __asm__("ldrd %[p0], %[p1], [%[tp]], #8\n\t"                                                                       \
          "ldr %[p0], [%[p0], %[c]]\n\t"                                                                             \
          "ldr %[p1], [%[p1], %[c]]\n\t"                                                                             \
          "pkhtb %[t], %[p1], %[p0], asr #16\n\t"                                                                    \
          "pkhbt %[p0], %[p0], %[p1], lsl #16\n\t"                                                                   \
          "ldrd %[w0], %[w1], [%[wp]], #8\n\t"                                                                       \
          "sxtb16 %[p1], %[p0]\n\t"                                                                                  \
          "smlad %[a0], %[p1], %[w0], %[a0]\n\t"                                                                     \
          "sxtb16 %[p0], %[p0], ror #8\n\t"                                                                          \
          "smlad %[a1], %[p0], %[w1], %[a1]\n\t"                                                                     \
          "ldrd %[w0], %[w1], [%[wp]], #8\n\t"                                                                       \
          "sxtb16 %[p1], %[t]\n\t"                                                                                   \
          "smlad %[a2], %[p1], %[w0], %[a2]\n\t"                                                                     \
          "sxtb16 %[t], %[t], ror #8\n\t"                                                                            \
          "smlad %[a3], %[t], %[w1], %[a3]"                                                                          \
          : [a0] "+&r"(a0), [a1] "+&r"(a1), [a2] "+&r"(a2), [a3] "+&r"(a3), [tp] "+&r"(tp), [wp] "+&r"(STREAM),      \
            [p0] "=&r"(p0), [p1] "=&r"(p1), [t] "=&r"(t), [w0] "=&r"(w0), [w1] "=&r"(w1)                             \
          : [c] "r"(c)                                                                                               \
          : "memory")
/* One tap of 4 channels, weights (w0, w2), (w1, w3). */
#define MTK_DW_DSP_SINGLE(STREAM)                                                                                    \
  __asm__("ldr %[p0], [%[tp]], #4\n\t"                                                                               \
          "ldr %[p0], [%[p0], %[c]]\n\t"                                                                             \
          "ldrd %[w0], %[w1], [%[wp]], #8\n\t"                                                                       \
          "sxtb16 %[p1], %[p0]\n\t"                                                                                  \
          "smlabb %[a0], %[p1], %[w0], %[a0]\n\t"                                                                    \
          "smlatt %[a2], %[p1], %[w0], %[a2]\n\t"                                                                    \
          "sxtb16 %[p0], %[p0], ror #8\n\t"                                                                          \
          "smlabb %[a1], %[p0], %[w1], %[a1]\n\t"                                                                    \
          "smlatt %[a3], %[p0], %[w1], %[a3]"                                                                        \
          : [a0] "+&r"(a0), [a1] "+&r"(a1), [a2] "+&r"(a2), [a3] "+&r"(a3), [tp] "+&r"(tp), [wp] "+&r"(STREAM),      \
            [p0] "=&r"(p0), [p1] "=&r"(p1), [w0] "=&r"(w0), [w1] "=&r"(w1)                                           \
          : [c] "r"(c)                                                                                               \
          : "memory")
/* Lane a requantized in place (params mult, k, e at q, q advanced), saturated to int8. */
#define MTK_DW_DSP_LANE(a)                 \
  "ldmia %[q]!, {r4, r5, r6}\n\t"          \
  "smmlar r4, %[" a "], r4, r5\n\t"        \
  "sub r4, r4, %[" a "], lsr #31\n\t"      \
  "asr r4, r4, r6\n\t"                    \
  "ssat %[" a "], #8, r4\n\t"
#define MTK_DW_DSP_LANES(STREAM)                                                                                     \
  __asm__(MTK_DW_DSP_LANE("a0") MTK_DW_DSP_LANE("a1") MTK_DW_DSP_LANE("a2") MTK_DW_DSP_LANE("a3")                    \
          : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [q] "+r"(STREAM)                             \
          :                                                                                                          \
          : "r4", "r5", "r6", "memory")
#endif

/* The 4 lanes' outputs (int8 values) from their sums a0..a3 (2 * acc) and params (mult, k, e each) at *gp,
 * *gp advanced past them. */
MTK_DW_DSP_INLINE void mtk_dw_dsp_outputs(int32_t a0, int32_t a1, int32_t a2, int32_t a3, const int32_t** gp,
                                          int32_t* out4) {
  const int32_t* g = *gp;
#ifdef MTK_DSP_ASM
  MTK_DW_DSP_LANES(g);
  out4[0] = a0, out4[1] = a1, out4[2] = a2, out4[3] = a3;
#else
  out4[0] = mtk_dw_dsp_requant(a0, g), out4[1] = mtk_dw_dsp_requant(a1, g + 3);
  out4[2] = mtk_dw_dsp_requant(a2, g + 6), out4[3] = mtk_dw_dsp_requant(a3, g + 9);
  g += 12;
#endif
  *gp = g;
}

/* The 4 lanes' outputs of the whole group at *gp (mtk_depthwise_dsp_s8), over the n taps at tp, input byte c
 * of each; *gp advanced past the group. */
MTK_DW_DSP_INLINE void mtk_dw_dsp_group(const int8_t* const* tp, int32_t n, int32_t c, const int32_t** gp,
                                        int32_t* out4) {
  const int32_t* g = *gp;
#ifdef MTK_DSP_ASM
  int32_t a0, a1, a2, a3;
  uint32_t p0, p1, t, w0, w1;
  __asm__("ldrd %[a0], %[a1], [%[g]], #8\n\t"
          "ldrd %[a2], %[a3], [%[g]], #8"
          : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [g] "+r"(g)
          :
          : "memory");
#pragma GCC unroll 8
  for (int32_t i = n >> 1; i > 0; --i) MTK_DW_DSP_PAIR(g);
  if (n & 1) MTK_DW_DSP_SINGLE(g);
#else
  int32_t a0 = g[0], a1 = g[1], a2 = g[2], a3 = g[3];
  const int16_t* wp = (const int16_t*)(g + 4);
  for (int32_t i = n >> 1; i > 0; --i, tp += 2, wp += 8) {
    const int8_t* x0 = tp[0] + c;
    const int8_t* x1 = tp[1] + c;
    a0 += x0[0] * wp[0] + x1[0] * wp[1];
    a1 += x0[1] * wp[2] + x1[1] * wp[3];
    a2 += x0[2] * wp[4] + x1[2] * wp[5];
    a3 += x0[3] * wp[6] + x1[3] * wp[7];
  }
  if (n & 1) {
    const int8_t* x0 = tp[0] + c;
    a0 += x0[0] * wp[0], a2 += x0[2] * wp[1], a1 += x0[1] * wp[2], a3 += x0[3] * wp[3];
    wp += 4;
  }
  g = (const int32_t*)wp;
#endif
  mtk_dw_dsp_outputs(a0, a1, a2, a3, &g, out4);
  *gp = g;
}

#ifdef MTK_DSP_ASM
/* One tap of a rest group whose lanes all read one input byte (a multiplier divisible by 4), weights int16 in
 * lane order. */
#define MTK_DW_DSP_REST_TAP_SHARED4                                                                                  \
  __asm__("ldr %[x], [%[tp]], #4\n\t"                                                                               \
          "ldrsb %[x], [%[x], %[c0]]\n\t"                                                                           \
          "ldrd %[w0], %[w1], [%[wp]], #8\n\t"                                                                      \
          "smlabb %[a0], %[x], %[w0], %[a0]\n\t"                                                                    \
          "smlabt %[a1], %[x], %[w0], %[a1]\n\t"                                                                    \
          "smlabb %[a2], %[x], %[w1], %[a2]\n\t"                                                                    \
          "smlabt %[a3], %[x], %[w1], %[a3]"                                                                         \
          : [a0] "+&r"(a0), [a1] "+&r"(a1), [a2] "+&r"(a2), [a3] "+&r"(a3), [tp] "+&r"(tp), [wp] "+&r"(wp), [x] "=&r"(x), \
            [w0] "=&r"(w0), [w1] "=&r"(w1)                                                                           \
          : [c0] "r"(c0)                                                                                             \
          : "memory")
/* The same where lanes 0, 1 read one byte and lanes 2, 3 another (an even multiplier). */
#define MTK_DW_DSP_REST_TAP_SHARED2                                                                                  \
  __asm__("ldr %[x], [%[tp]], #4\n\t"                                                                               \
          "ldrsb %[x2], [%[x], %[c2]]\n\t"                                                                          \
          "ldrsb %[x], [%[x], %[c0]]\n\t"                                                                           \
          "ldrd %[w0], %[w1], [%[wp]], #8\n\t"                                                                      \
          "smlabb %[a0], %[x], %[w0], %[a0]\n\t"                                                                    \
          "smlabt %[a1], %[x], %[w0], %[a1]\n\t"                                                                    \
          "smlabb %[a2], %[x2], %[w1], %[a2]\n\t"                                                                   \
          "smlabt %[a3], %[x2], %[w1], %[a3]"                                                                        \
          : [a0] "+&r"(a0), [a1] "+&r"(a1), [a2] "+&r"(a2), [a3] "+&r"(a3), [tp] "+&r"(tp), [wp] "+&r"(wp), [x] "=&r"(x), \
            [x2] "=&r"(x2), [w0] "=&r"(w0), [w1] "=&r"(w1)                                                           \
          : [c0] "r"(c0), [c2] "r"(c2)                                                                               \
          : "memory")
#endif

/* The 4 lanes' outputs of a group of the rest (input channels past the whole groups) at *gp: each lane reads
 * its own input channel (the group's second 4 int32; `shift` bytes on), one byte load per lane and tap, or one
 * per lanes that read the same channel (`shared` of them: 4 with a multiplier divisible by 4, 2 with an even
 * one); weights int16 [n][4]; *gp advanced past the group. */
MTK_DW_DSP_INLINE void mtk_dw_dsp_rest(const int8_t* const* tp, int32_t n, int32_t shift, int32_t shared,
                                       const int32_t** gp, int32_t* out4) {
  const int32_t* g = *gp;
  int32_t a0 = g[0], a1 = g[1], a2 = g[2], a3 = g[3];
  const int32_t c0 = g[4] + shift, c1 = g[5] + shift, c2 = g[6] + shift, c3 = g[7] + shift;
  const int16_t* wp = (const int16_t*)(g + 8);
#ifdef MTK_DSP_ASM
  if (shared > 1) {
    uint32_t x, x2, w0, w1;
#pragma GCC unroll 4
    for (int32_t t = n; t > 0; --t)
      if (shared == 4)
        MTK_DW_DSP_REST_TAP_SHARED4;
      else
        MTK_DW_DSP_REST_TAP_SHARED2;
    (void)x2;
  } else {
    for (int32_t t = 0; t < n; ++t, wp += 4) {
      const int8_t* x = tp[t];
      uint32_t w01, w23;
      memcpy(&w01, wp, 4);
      memcpy(&w23, wp + 2, 4);
      a0 = mtk_smlabb((uint32_t)(int32_t)x[c0], w01, a0);
      a1 = mtk_smlabt((uint32_t)(int32_t)x[c1], w01, a1);
      a2 = mtk_smlabb((uint32_t)(int32_t)x[c2], w23, a2);
      a3 = mtk_smlabt((uint32_t)(int32_t)x[c3], w23, a3);
    }
  }
#else
  (void)shared;
  for (int32_t t = 0; t < n; ++t, wp += 4) {
    const int8_t* x = tp[t];
    a0 += x[c0] * wp[0], a1 += x[c1] * wp[1], a2 += x[c2] * wp[2], a3 += x[c3] * wp[3];
  }
#endif
  g = (const int32_t*)wp;
  mtk_dw_dsp_outputs(a0, a1, a2, a3, &g, out4);
  *gp = g;
}

/* v clamped to [lo, hi] within int8 (the activation range), when it is narrower than int8's. */
static inline int32_t mtk_dw_dsp_clamp(int32_t v, int32_t lo, int32_t hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

/* The 4 outputs v (int8 values) as one word at out, each byte clamped to the activation range when `clamp`
 * (lo4, hi4: its bounds in every byte). */
MTK_DW_DSP_INLINE void mtk_dw_dsp_store_word(const int32_t* v, int clamp, uint32_t lo4, uint32_t hi4, int8_t* out) {
#ifdef MTK_DSP_ASM
  uint32_t word = (uint32_t)v[0], ge;
  __asm__("bfi %[w], %[v1], #8, #8\n\t"
          "bfi %[w], %[v2], #16, #8\n\t"
          "bfi %[w], %[v3], #24, #8"
          : [w] "+&r"(word)
          : [v1] "r"(v[1]), [v2] "r"(v[2]), [v3] "r"(v[3]));
  if (clamp)   /* per byte: max with lo4 (SSUB8 sets GE where word >= lo4), then min with hi4 */
    __asm__("ssub8 %[ge], %[w], %[lo]\n\t"
            "sel %[w], %[w], %[lo]\n\t"
            "ssub8 %[ge], %[w], %[hi]\n\t"
            "sel %[w], %[hi], %[w]"
            : [w] "+&r"(word), [ge] "=&r"(ge)
            : [lo] "r"(lo4), [hi] "r"(hi4)
            : "cc");
#else
  uint32_t word = 0;
  for (int32_t j = 0; j < 4; ++j)
    word |= (uint32_t)((clamp ? mtk_dw_dsp_clamp(v[j], (int8_t)lo4, (int8_t)hi4) : v[j]) & 0xff) << (8 * j);
#endif
  memcpy(out, &word, 4);
}

/* The layer (mtk_depthwise_dsp_s8) with room for the kh * kw tap pointers at taps. */
MTK_DW_DSP_INLINE void mtk_dw_dsp_layer(const void* x, const void* groups_data, const void* pad, void* out,
                                        int32_t in_h, int32_t in_w, int32_t C_in, int32_t M, int32_t out_h,
                                        int32_t out_w, int32_t kh, int32_t kw, int32_t stride_h, int32_t stride_w,
                                        int32_t dil_h, int32_t dil_w, int32_t pad_top, int32_t pad_left,
                                        int32_t act_min, int32_t act_max, const int8_t** taps) {
  const int8_t* xb = (const int8_t*)x;
  int8_t* o = (int8_t*)out;
  const int32_t n = kh * kw, groups = C_in >> 2, C = C_in * M;
  const int clamp = act_min > -128 || act_max < 127;
  const uint32_t lo4 = 0x01010101u * (uint8_t)act_min, hi4 = 0x01010101u * (uint8_t)act_max;
  /* inside pixels of a row reuse its table (the kernels reading `shift` bytes on) when building one costs more
   * than the groups' offset arithmetic: many taps, few channels */
  const int reuse = n > 4 * (groups * M + 1);
  for (int32_t oy = 0; oy < out_h; ++oy) {
    const int32_t iy = oy * stride_h - pad_top;
    const int rows_inside = iy >= 0 && iy + (kh - 1) * dil_h < in_h;
    int row_table = 0;   /* the table is the row's first inside pixel's, for pixels `shift` bytes on */
    int32_t shift = 0;
    for (int32_t ox = 0; ox < out_w; ++ox, o += C) {
      const int32_t ix = ox * stride_w - pad_left;
      const int inside = rows_inside && ix >= 0 && ix + (kw - 1) * dil_w < in_w;
      if (reuse && inside && row_table) {
        shift += stride_w * C_in;
      } else {
        const int8_t* corner = xb + (iy * in_w + ix) * C_in;
#pragma GCC unroll 5
        for (int32_t ky = 0; ky < kh; ++ky)
#pragma GCC unroll 5
          for (int32_t kx = 0; kx < kw; ++kx) taps[ky * kw + kx] = corner + (ky * dil_h * in_w + kx * dil_w) * C_in;
        if (!inside) {   /* taps outside the image read pad */
          int32_t kx_lo = 0, kx_hi = kw;
          while (kx_lo < kw && ix + kx_lo * dil_w < 0) ++kx_lo;
          while (kx_hi > kx_lo && ix + (kx_hi - 1) * dil_w >= in_w) --kx_hi;
          for (int32_t ky = 0; ky < kh; ++ky) {
            const int32_t y = iy + ky * dil_h;
            const int row_outside = y < 0 || y >= in_h;
            for (int32_t kx = 0; kx < kw; ++kx)
              if (row_outside || kx < kx_lo || kx >= kx_hi) taps[ky * kw + kx] = (const int8_t*)pad;
          }
        }
        row_table = inside;
        shift = 0;
      }
      const int32_t* g = (const int32_t*)groups_data;
      int32_t v[4];
      for (int32_t m = 0; m < M; ++m)
        for (int32_t p = 0; p < groups; ++p) {
          mtk_dw_dsp_group(taps, n, shift + 4 * p, &g, v);
          if (M == 1)
            mtk_dw_dsp_store_word(v, clamp, lo4, hi4, o + 4 * p);
          else
            for (int32_t j = 0; j < 4; ++j)
              o[(4 * p + j) * M + m] = (int8_t)(clamp ? mtk_dw_dsp_clamp(v[j], act_min, act_max) : v[j]);
        }
      for (int32_t r = 4 * groups * M; r < C; r += 4) {   /* the rest: 4 consecutive output channels a group */
        mtk_dw_dsp_rest(taps, n, shift, M % 4 == 0 ? 4 : 2 - M % 2, &g, v);
        if (r + 4 <= C)
          mtk_dw_dsp_store_word(v, clamp, lo4, hi4, o + r);
        else
          for (int32_t j = 0; j < C - r; ++j)
            o[r + j] = (int8_t)(clamp ? mtk_dw_dsp_clamp(v[j], act_min, act_max) : v[j]);
      }
    }
  }
}

/* x [in_h][in_w][C_in] -> out [out_h][out_w][C_in * M]; groups_data: the groups' stream (depthwise_dsp.py pack);
 * pad: C_in bytes of the input zero point. Kernels of up to MTK_DW_DSP_FIXED_TAPS taps keep their table in a
 * fixed array (a variable-length one costs a frame pointer register). */
#define MTK_DW_DSP_FIXED_TAPS 25
MTK_DW_DSP_INLINE int32_t mtk_depthwise_dsp_s8(const void* x, const void* groups_data, const void* pad,
                                               void* out, int32_t in_h, int32_t in_w, int32_t C_in, int32_t M,
                                               int32_t out_h, int32_t out_w, int32_t kh, int32_t kw,
                                               int32_t stride_h, int32_t stride_w, int32_t dil_h, int32_t dil_w,
                                               int32_t pad_top, int32_t pad_left, int32_t act_min, int32_t act_max) {
  if (kh * kw <= MTK_DW_DSP_FIXED_TAPS) {
    const int8_t* taps[MTK_DW_DSP_FIXED_TAPS];
    mtk_dw_dsp_layer(x, groups_data, pad, out, in_h, in_w, C_in, M, out_h, out_w, kh, kw, stride_h, stride_w, dil_h,
                     dil_w, pad_top, pad_left, act_min, act_max, taps);
  } else {
    const int8_t* taps[kh * kw];
    mtk_dw_dsp_layer(x, groups_data, pad, out, in_h, in_w, C_in, M, out_h, out_w, kh, kw, stride_h, stride_w, dil_h,
                     dil_w, pad_top, pad_left, act_min, act_max, taps);
  }
  return 0;
}

#endif /* MTK_DEPTHWISE_DSP_H_ */
