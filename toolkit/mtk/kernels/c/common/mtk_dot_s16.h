/* 16x8 micro-kernels (mtk/ops/int16x8.py): int16 activation rows times int8 weights, kept int8 in flash as
 * TFLM keeps them, summed in int32 (the kernels are only used when no channel's sum can leave int32); 2 rows
 * (mtk_dot_2x2_*) or 1 row (mtk_dot_1x2_*) times 2 output channels c0, c1 a call.
 *
 * Cores without Helium (int16x8.pack_channel_pairs): weights in blocks of 2 channels over depth k, for each pair
 * of values j the word (w[c0][2j], w[c1][2j], w[c0][2j+1], w[c1][2j+1]), then for an odd k (w[c0][k-1],
 * w[c1][k-1], 0, 0): whole words, a block word-aligned. On cores with the DSP extension SXTB16 and SXTB16 ROR #8
 * of a word give c0's and c1's int16 pair lined up with the activations' (CMSIS-NN's read_and_pad_reordered):
 * a word of a row is a pair as SMLAD takes it, one SMLAD adds two products. Elsewhere, and on the host unless
 * MTK_EMULATE_DSP (the same pairs in portable C), a plain multiply-accumulate loop reading the bytes as they are
 * (LDRSB). */
#ifndef MTK_DOT_S16_H_
#define MTK_DOT_S16_H_

#include <stdint.h>

#include "mtk_support.h"   /* MTK_COPY, mtk_store4 */

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>
#define MTK_S16_PAIRS 1
#define mtk_s16_smlad(a, b, acc) __smlad((a), (b), (acc))
#define mtk_s16_sxtb16(x) __sxtb16(x)
static inline uint32_t mtk_s16_sxtb16_ror8(uint32_t x) {   /* gcc 12 does not fold __ror into SXTB16 */
  uint32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
  return r;
}
#elif defined(MTK_EMULATE_DSP)
#define MTK_S16_PAIRS 1
#define MTK_S16_LANE(v, at) ((int32_t)(int16_t)((uint32_t)(v) >> (at)))
static inline int32_t mtk_s16_smlad(uint32_t a, uint32_t b, int32_t acc) {
  return (int32_t)((uint32_t)acc + (uint32_t)(MTK_S16_LANE(a, 0) * MTK_S16_LANE(b, 0)) +
                   (uint32_t)(MTK_S16_LANE(a, 16) * MTK_S16_LANE(b, 16)));
}
static inline uint32_t mtk_s16_sxtb16(uint32_t x) {
  return (uint32_t)(uint16_t)(int8_t)x | (uint32_t)(uint16_t)(int8_t)(x >> 16) << 16;
}
static inline uint32_t mtk_s16_sxtb16_ror8(uint32_t x) { return mtk_s16_sxtb16(x >> 8); }
#endif

#ifdef MTK_S16_PAIRS
static inline uint32_t mtk_s16_word(const void* p) {   /* rows may start at any int16 */
  uint32_t v;
  MTK_COPY(&v, p, 4);
  return v;
}

/* One pair of values: the row's int16 pair x times c0's and c1's pairs of the weight word ww. */
#define MTK_S16_PAIR(x, ww, a0, a1)                           \
  do {                                                        \
    a0 = mtk_s16_smlad((x), mtk_s16_sxtb16(ww), a0);          \
    a1 = mtk_s16_smlad((x), mtk_s16_sxtb16_ror8(ww), a1);     \
  } while (0)
#endif

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && defined(__GNUC__) && defined(__OPTIMIZE__)
/* The loops below in assembly (gcc 12 neither post-increments the loads nor keeps the loop bound in a register):
 * the weights 2 words a LDRD (a block is word-aligned), the rows a LDR a pair (any int16 alignment). Not at -O0,
 * where gcc has too few registers left for them. A depth known to be short stays in C, which gcc unrolls: the
 * loop's registers would cost the caller more spills than the loop saves. */
#define MTK_S16_ASM 1
#define MTK_S16_SHORT(k) (__builtin_constant_p(k) && (k) <= 16)
/* x0, x1: the rows' pairs; w: a weight word, its c0 pair unpacked into c, c1's in place. */
#define MTK_S16_ASM_2X2(w)                        \
  "ldr %[x0], [%[p0]], #4\n\t"                     \
  "ldr %[x1], [%[p1]], #4\n\t"                     \
  "sxtb16 %[c], %[" #w "]\n\t"                     \
  "sxtb16 %[" #w "], %[" #w "], ror #8\n\t"        \
  "smlad %[a00], %[x0], %[c], %[a00]\n\t"          \
  "smlad %[a10], %[x1], %[c], %[a10]\n\t"          \
  "smlad %[a01], %[x0], %[" #w "], %[a01]\n\t"     \
  "smlad %[a11], %[x1], %[" #w "], %[a11]\n\t"

/* Whole quads of values (2 weight words) of both rows: 19 instructions for 16 products; pointers left past them. */
static inline void mtk_s16_quads_2x2(const int16_t** r0, const int16_t** r1, const int8_t** w, int32_t quads,
                                     int32_t* a00, int32_t* a01, int32_t* a10, int32_t* a11) {
  uint32_t x0, x1, wa, wb, c;
  if (quads <= 0) return;
  __asm__ volatile(
      "1:\n\t"
      "ldrd %[wa], %[wb], [%[pw]], #8\n\t" MTK_S16_ASM_2X2(wa) MTK_S16_ASM_2X2(wb)
      "subs %[n], %[n], #1\n\t"
      "bne 1b\n\t"
      : [p0] "+r"(*r0), [p1] "+r"(*r1), [pw] "+r"(*w), [n] "+r"(quads), [a00] "+r"(*a00), [a01] "+r"(*a01),
        [a10] "+r"(*a10), [a11] "+r"(*a11), [x0] "=&r"(x0), [x1] "=&r"(x1), [wa] "=&r"(wa), [wb] "=&r"(wb),
        [c] "=&r"(c)
      :
      : "cc", "memory");
}

#define MTK_S16_ASM_1X2(x, w)                     \
  "sxtb16 %[c], %[" #w "]\n\t"                     \
  "sxtb16 %[" #w "], %[" #w "], ror #8\n\t"        \
  "smlad %[a0], %[" #x "], %[c], %[a0]\n\t"        \
  "smlad %[a1], %[" #x "], %[" #w "], %[a1]\n\t"
#define MTK_S16_ASM_1X2_QUAD                      \
  "ldrd %[wa], %[wb], [%[pw]], #8\n\t"             \
  "ldr %[xa], [%[p]], #4\n\t"                      \
  "ldr %[xb], [%[p]], #4\n\t" MTK_S16_ASM_1X2(xa, wa) MTK_S16_ASM_1X2(xb, wb)

/* Whole octets of values (4 weight words) of one row: 24 instructions for 16 products. */
static inline void mtk_s16_octets_1x2(const int16_t** r, const int8_t** w, int32_t octets, int32_t* a0,
                                      int32_t* a1) {
  uint32_t xa, xb, wa, wb, c;
  if (octets <= 0) return;
  __asm__ volatile(
      "1:\n\t" MTK_S16_ASM_1X2_QUAD MTK_S16_ASM_1X2_QUAD
      "subs %[n], %[n], #1\n\t"
      "bne 1b\n\t"
      : [p] "+r"(*r), [pw] "+r"(*w), [n] "+r"(octets), [a0] "+r"(*a0), [a1] "+r"(*a1), [xa] "=&r"(xa),
        [xb] "=&r"(xb), [wa] "=&r"(wa), [wb] "=&r"(wb), [c] "=&r"(c)
      :
      : "cc", "memory");
}
#endif

/* Row r's products with a weight word's c0 and c1 values in plain C (the pair's layout), or with the last word's
 * first 2 bytes (an odd k's last value of c0 and c1). */
#define MTK_S16_PLAIN_PAIR(r, w, a0, a1) \
  (a0 += (r)[0] * (w)[0], a0 += (r)[1] * (w)[2], a1 += (r)[0] * (w)[1], a1 += (r)[1] * (w)[3])   /* MLAs */
#define MTK_S16_ODD(r, w, a0, a1) (a0 += (r)[0] * (w)[0], a1 += (r)[0] * (w)[1])

/* acc[0..3] = r0·w(c0), r0·w(c1), r1·w(c0), r1·w(c1) over k values. */
static inline int32_t mtk_dot_2x2_s16(const int16_t* r0, const int16_t* r1, const int8_t* w, int32_t k,
                                      int32_t* acc) {
  int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;
  int32_t pairs = k >> 1;
#ifdef MTK_S16_ASM
  if (!MTK_S16_SHORT(k)) {
    mtk_s16_quads_2x2(&r0, &r1, &w, pairs >> 1, &a00, &a01, &a10, &a11);
    pairs &= 1;
  }
#endif
#pragma GCC unroll 2   /* without DSP (the M3): one loop test and one pointer step a 16 products */
  for (; pairs > 0; --pairs, r0 += 2, r1 += 2, w += 4) {
#ifdef MTK_S16_PAIRS
    uint32_t ww = mtk_s16_word(w);
    MTK_S16_PAIR(mtk_s16_word(r0), ww, a00, a01);
    MTK_S16_PAIR(mtk_s16_word(r1), ww, a10, a11);
#else
    MTK_S16_PLAIN_PAIR(r0, w, a00, a01);
    MTK_S16_PLAIN_PAIR(r1, w, a10, a11);
#endif
  }
  if (k & 1) {
    MTK_S16_ODD(r0, w, a00, a01);
    MTK_S16_ODD(r1, w, a10, a11);
  }
  return mtk_store4(acc, a00, a01, a10, a11);
}

/* acc[0..1] = r·w(c0), r·w(c1) over k values. */
static inline int32_t mtk_dot_1x2_s16(const int16_t* r, const int8_t* w, int32_t k, int32_t* acc) {
  int32_t a0 = 0, a1 = 0;
  int32_t pairs = k >> 1;
#ifdef MTK_S16_ASM
  if (!MTK_S16_SHORT(k)) {
    mtk_s16_octets_1x2(&r, &w, pairs >> 2, &a0, &a1);
    pairs &= 3;
  }
#endif
#pragma GCC unroll 2
  for (; pairs > 0; --pairs, r += 2, w += 4) {
#ifdef MTK_S16_PAIRS
    MTK_S16_PAIR(mtk_s16_word(r), mtk_s16_word(w), a0, a1);
#else
    MTK_S16_PLAIN_PAIR(r, w, a0, a1);
#endif
  }
  if (k & 1) MTK_S16_ODD(r, w, a0, a1);
  acc[0] = a0;
  acc[1] = a1;
  return 0;
}

/* Helium cores (int16x8.pack_channel_rows): the same sums from int8 weights in rows, a block of 2 channels being
 * w[c0][0..k) then w[c1][0..k); 8 values a vector (the weights widened to int16 by the load, VLDRB.S16), one
 * VMLADAVA a row and channel, in a tail-predicated loop (WLSTP/LETP: the last 1-7 values under the loop's own
 * predicate, no code of their own): 2 rows, 9 instructions per 32 products (CMSIS-NN's arm_nn_mat_mult_nt_t_s16,
 * 4 rows of one channel: 10). The sums live in even registers (VMLADAVA's operand, "Te"), the weight pointers
 * in low ones (a widening load's, "l"). At -O0 and on the host (tests of a Helium build) the same layout in
 * plain C. */
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1) && defined(__GNUC__) && defined(__OPTIMIZE__)
#define MTK_S16_ROWS_MVE 1
/* The loop over r0 (and r1 with ROW1 MTK_S16_ROW1) adding to the sums; the pointers are left past the row. */
#define MTK_S16_ROWS_ASM(ROW1)                                                                          \
  __asm__ volatile("wlstp.16 lr, %[k], 1f\n\t"                                                          \
                   "2:\n\t"                                                                           \
                   "vldrb.s16 q0, [%[w0]], #8\n\t"                                                    \
                   "vldrb.s16 q1, [%[w1]], #8\n\t"                                                    \
                   "vldrh.u16 q2, [%[p0]], #16\n\t"                                                   \
                   "vmladava.s16 %[a00], q2, q0\n\t"                                                  \
                   "vmladava.s16 %[a01], q2, q1\n\t" ROW1(BODY)                                       \
                   "letp lr, 2b\n\t"                                                                  \
                   "1:\n\t"                                                                           \
                   : [a00] "+&Te"(a00), [a01] "+&Te"(a01), [p0] "+&r"(r0), [w0] "+&l"(w),               \
                     [w1] "+&l"(w1) ROW1(OUT)                                                           \
                   : [k] "r"(k)                                                                         \
                   : "q0", "q1", "q2", "q3", "lr", "memory")
#define MTK_S16_ROW0(part)
#define MTK_S16_ROW1(part) MTK_S16_ROW1_##part
#define MTK_S16_ROW1_BODY                                                                               \
  "vldrh.u16 q3, [%[p1]], #16\n\t"                                                                    \
  "vmladava.s16 %[a10], q3, q0\n\t"                                                                   \
  "vmladava.s16 %[a11], q3, q1\n\t"
#define MTK_S16_ROW1_OUT , [a10] "+&Te"(a10), [a11] "+&Te"(a11), [p1] "+&r"(r1)
#endif

/* Both rows (two_rows: acc[0..3] as mtk_dot_2x2_s16's) or r0 alone (acc[0..1] as mtk_dot_1x2_s16's); inlined
 * with a constant two_rows, the other case's code goes. */
static inline int32_t mtk_dot_rows_s16(const int16_t* r0, const int16_t* r1, const int8_t* w, int32_t k, int32_t* acc,
                                       int two_rows) {
  const int8_t* w1 = w + k;
  int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;
#ifdef MTK_S16_ROWS_MVE
  if (two_rows) {
    MTK_S16_ROWS_ASM(MTK_S16_ROW1);
  } else {
    MTK_S16_ROWS_ASM(MTK_S16_ROW0);
  }
#else
  for (int32_t i = 0; i < k; ++i) {
    a00 += r0[i] * w[i];
    a01 += r0[i] * w1[i];
    if (two_rows) {
      a10 += r1[i] * w[i];
      a11 += r1[i] * w1[i];
    }
  }
#endif
  if (two_rows) return mtk_store4(acc, a00, a01, a10, a11);
  acc[0] = a00;
  acc[1] = a01;
  return 0;
}

static inline int32_t mtk_dot_2x2_rows_s16(const int16_t* r0, const int16_t* r1, const int8_t* w, int32_t k,
                                           int32_t* acc) {
  return mtk_dot_rows_s16(r0, r1, w, k, acc, 1);
}

static inline int32_t mtk_dot_1x2_rows_s16(const int16_t* r, const int8_t* w, int32_t k, int32_t* acc) {
  return mtk_dot_rows_s16(r, r, w, k, acc, 0);
}

/* dst[0..n) = src[0..n) (mtk_copy_s16) or 0 (mtk_zero_s16). Helium: 8 values a VLDRH/VSTRH in a tail-predicated
 * loop (3 instructions per 16 bytes; CMSIS-NN's arm_memcpy_s8 and arm_memset_s8 likewise); elsewhere the
 * compiler's. */
#ifdef MTK_S16_ROWS_MVE
#define MTK_S16_RUNS 1
#define MTK_S16_FILL_ASM(FIRST, LOAD, ...)                                                                \
  __asm__ volatile(FIRST "wlstp.16 lr, %[n], 1f\n\t"                                                     \
                   "2:\n\t" LOAD "vstrh.16 q0, [%[d]], #16\n\t"                                         \
                   "letp lr, 2b\n\t"                                                                   \
                   "1:\n\t"                                                                            \
                   : [d] "+&r"(dst)__VA_ARGS__                                                          \
                   : [n] "r"(n)                                                                         \
                   : "q0", "lr", "memory")
static inline void mtk_copy_s16(int16_t* dst, const int16_t* src, int32_t n) {
  MTK_S16_FILL_ASM("", "vldrh.u16 q0, [%[s]], #16\n\t", , [s] "+&r"(src));
}
static inline void mtk_zero_s16(int16_t* dst, int32_t n) { MTK_S16_FILL_ASM("vmov.i32 q0, #0\n\t", "", ); }
#else
#define MTK_S16_RUNS 0
static inline void mtk_copy_s16(int16_t* dst, const int16_t* src, int32_t n) { MTK_COPY(dst, src, (size_t)n * 2); }
static inline void mtk_zero_s16(int16_t* dst, int32_t n) {
  for (int32_t c = 0; c < n; ++c) dst[c] = 0;
}
#endif

/* The im2col row of the output pixel whose window starts at (iy, ix) (may be outside): k_h·k_w taps of in_c
 * values, 0 for taps outside the image (16x8 tensors have zero point 0). On Helium a window row outside the
 * image, or wholly inside it with taps next to each other (dilation 1), is one run of k_w·in_c values (elsewhere
 * the compiler's copy of a tap, whose length it knows, beats its call for a run: an386 s16-seanet-conv-16-3x3
 * 506,680 vs 665,320). */
static inline int32_t mtk_im2col_s16(const int16_t* x, int32_t iy, int32_t ix, int32_t in_h, int32_t in_w,
                                     int32_t in_c, int32_t k_h, int32_t k_w, int32_t dil_h, int32_t dil_w,
                                     int16_t* dst) {
  const int whole = dil_w == 1 && ix >= 0 && ix + k_w <= in_w;
  for (int32_t ky = 0; ky < k_h; ++ky) {
    int32_t y = iy + ky * dil_h;
    if (MTK_S16_RUNS && (y < 0 || y >= in_h || whole)) {
      if (y < 0 || y >= in_h) {
        mtk_zero_s16(dst, k_w * in_c);
      } else {
        mtk_copy_s16(dst, x + (y * in_w + ix) * in_c, k_w * in_c);
      }
      dst += k_w * in_c;
      continue;
    }
    for (int32_t kx = 0; kx < k_w; ++kx, dst += in_c) {
      int32_t xx = ix + kx * dil_w;
      if (y >= 0 && y < in_h && xx >= 0 && xx < in_w) {
        mtk_copy_s16(dst, x + (y * in_w + xx) * in_c, in_c);
      } else {
        mtk_zero_s16(dst, in_c);
      }
    }
  }
  return 0;
}

#endif /* MTK_DOT_S16_H_ */
