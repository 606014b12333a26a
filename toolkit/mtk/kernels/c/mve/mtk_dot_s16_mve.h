/* The 16x8 micro-kernels over weight rows on Helium cores (mtk_dot_s16.h, int16x8.pack_channel_rows), and the
 * im2col runs' copies and fills. */
#ifndef MTK_DOT_S16_MVE_H_
#define MTK_DOT_S16_MVE_H_

#include <stdint.h>

#include "mtk_support.h"   /* mtk_store4 */

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
 * loop (3 instructions per 16 bytes; CMSIS-NN's arm_memcpy_s8 and arm_memset_s8 likewise); at -O0 and on the host
 * the compiler's (mtk_dot_s16.h). */
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
#endif

#endif /* MTK_DOT_S16_MVE_H_ */
