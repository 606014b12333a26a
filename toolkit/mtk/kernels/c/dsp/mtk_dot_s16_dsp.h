/* The 16x8 micro-kernels' steps on cores with the DSP extension (mtk_dot_s16.h; Helium cores run them too): SXTB16
 * and SXTB16 ROR #8 of a weight word give c0's and c1's int16 pair lined up with the activations' (CMSIS-NN's
 * read_and_pad_reordered): a word of a row is a pair as SMLAD takes it, one SMLAD adds two products. */
#ifndef MTK_DOT_S16_DSP_H_
#define MTK_DOT_S16_DSP_H_

#include <stdint.h>

#include "mtk_dsp_intrinsics.h"
#include "mtk_support.h"   /* MTK_COPY */

static inline uint32_t mtk_s16_word(const void* p) {   /* rows may start at any int16 */
  uint32_t v;
  MTK_COPY(&v, p, 4);
  return v;
}

/* One pair of values: the row's int16 pair x times c0's and c1's pairs of the weight word ww. */
#define MTK_S16_PAIR(x, ww, a0, a1)                   \
  do {                                                \
    a0 = mtk_smlad((x), mtk_sxtb16(ww), a0);          \
    a1 = mtk_smlad((x), mtk_sxtb16_ror8(ww), a1);     \
  } while (0)
#define MTK_S16_PAIR_2X2(r0, r1, w, a00, a01, a10, a11) \
  do {                                                  \
    uint32_t ww = mtk_s16_word(w);                      \
    MTK_S16_PAIR(mtk_s16_word(r0), ww, a00, a01);       \
    MTK_S16_PAIR(mtk_s16_word(r1), ww, a10, a11);       \
  } while (0)
#define MTK_S16_PAIR_1X2(r, w, a0, a1) MTK_S16_PAIR(mtk_s16_word(r), mtk_s16_word(w), a0, a1)

/* 4 int8 values less the zero point (zz: it in both halves) as 4 int16 in their order (mtk_im2col_s8_s16): SXTB16
 * gives values 0 and 2, SXTB16 ROR #8 values 1 and 3, SSUB16 subtracts from both, PKHBT / PKHTB pair them again. */
#define MTK_S8_S16_QUADS 1
static inline void mtk_s8_s16_quad(int16_t* dst, const int8_t* src, uint32_t zz) {
  uint32_t v;
  MTK_COPY(&v, src, 4);
  uint32_t even = mtk_ssub16(mtk_sxtb16(v), zz), odd = mtk_ssub16(mtk_sxtb16_ror8(v), zz);
  uint32_t pairs[2] = {(even & 0xFFFFu) | (odd << 16), (even >> 16) | (odd & 0xFFFF0000u)};
  MTK_COPY(dst, pairs, 8);
}

#if defined(MTK_DSP_ASM) && defined(__OPTIMIZE__)
/* The loops below in assembly (gcc 12 neither post-increments the loads nor keeps the loop bound in a register):
 * the weights 2 words a LDRD (a block is word-aligned), the rows a LDR a pair (any int16 alignment). Not at -O0,
 * where gcc has too few registers left for them. A depth known to be short stays in C, which gcc unrolls: the
 * loop's registers would cost the caller more spills than the loop saves. */
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
/* The whole quads (2 rows) or octets (1 row) of values before the loop in C takes the rest. */
#define MTK_S16_WHOLE_2X2(r0, r1, w, k, pairs, a00, a01, a10, a11)            \
  if (!MTK_S16_SHORT(k)) {                                                   \
    mtk_s16_quads_2x2(&(r0), &(r1), &(w), (pairs) >> 1, &a00, &a01, &a10, &a11); \
    (pairs) &= 1;                                                            \
  }
#define MTK_S16_WHOLE_1X2(r, w, k, pairs, a0, a1)          \
  if (!MTK_S16_SHORT(k)) {                                \
    mtk_s16_octets_1x2(&(r), &(w), (pairs) >> 2, &a0, &a1); \
    (pairs) &= 3;                                         \
  }
#else
#define MTK_S16_WHOLE_2X2(r0, r1, w, k, pairs, a00, a01, a10, a11)
#define MTK_S16_WHOLE_1X2(r, w, k, pairs, a0, a1)
#endif

#endif /* MTK_DOT_S16_DSP_H_ */
