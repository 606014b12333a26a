/* The micro-kernels on cores without a 32x32->64 multiply (v6-M: Cortex-M0/M0+; MTK_MUL64_BY_HALVES
 * anywhere). A pair of rows is packed value by value, x_k and y_k in one word: one load gives both rows'
 * value, and in the v6-M assembly one MULS both rows' products with a weight. */
#ifndef MTK_DOT_S8_SCALAR_H_
#define MTK_DOT_S8_SCALAR_H_

#include <stdint.h>

#include "mtk_dot_s8_common.h"

#if (defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__)) && defined(__GNUC__)
#define MTK_DOT_V6M_ASM 1   /* Thumb-1 assembly (ARMv6-M, ARMv8-M Baseline) */
#endif

/* Group g of the two rows: 4 words, 16 bytes a group. Word t holds both rows' value t: as int16 halves
 * (src0[t], src1[t]); for the assembly, the int32 -(src0[t] + 65536·src1[t]) (see mtk_dot_2x2_v6m). */
static inline void mtk_pack_pair_group(const int8_t* src0, const int8_t* src1, uint8_t* pair, int32_t g) {
#ifdef MTK_DOT_V6M_ASM
  int32_t* dst = (int32_t*)(pair + 16 * g);
  for (int32_t t = 0; t < 4; ++t) dst[t] = -(src0[t] + (int32_t)((uint32_t)src1[t] << 16));
#else
  int16_t* dst = (int16_t*)(pair + 16 * g);
  for (int32_t t = 0; t < 4; ++t) {
    dst[2 * t] = src0[t];
    dst[2 * t + 1] = src1[t];
  }
#endif
}

/* Value t of both rows from word t of a packed group. */
static inline void mtk_pair_values(const void* x, int32_t t, int32_t* x0, int32_t* x1) {
#ifdef MTK_DOT_V6M_ASM
  int32_t word = ((const int32_t*)x)[t], low = (int16_t)word;
  *x0 = -low;
  *x1 = -((word - low) >> 16);
#else
  *x0 = ((const int16_t*)x)[2 * t];
  *x1 = ((const int16_t*)x)[2 * t + 1];
#endif
}

#ifdef MTK_DOT_V6M_ASM
/* Products of both rows at once: MULS of weight w by word P = -(x + 65536·y) gives -(w·x + 65536·w·y). Two
 * values' products added, A = -(S0 + 65536·S1), S0 and S1 in [-32512, 32768] (int8 by int8; the negation
 * keeps -S0 in int16 even for -128 by -128 twice): SXTH gives -S0, (A + S0) >> 16 -S1, each added to its
 * row's sum; the sums are negated at the end. 2.75 instructions a product against 3.75 one MULS each. */
#define MTK_DOT_2X2_PAIR(lo, hi, sum0, sum1) \
  lo "\n\t"                                  \
  "muls r5, r2\n\t"                          \
  hi "\n\t"                                  \
  "muls r6, r3\n\t"                          \
  "adds r5, r6\n\t"                          \
  "sxth r6, r5\n\t"                          \
  "add " sum0 ", r6\n\t"                     \
  "subs r5, r6\n\t"                          \
  "asrs r5, r5, #16\n\t"                     \
  "add " sum1 ", r5\n\t"

/* One copy every layer calls (inlined, the fixed registers would make its caller spill). The weights of a
 * group, 4 bytes of channel 0 and 4 of channel 1, come by one LDM: bytes 0-1 (r5, r6 for values 0 and 1)
 * by SXTB and LSLS+ASRS, bytes 2-3 by LSLS+ASRS and ASRS. r7 is saved: it may be gcc's frame pointer. */
MTK_OUT_OF_LINE int32_t mtk_dot_2x2_v6m(const void* x, const void* w, int32_t groups, int32_t* acc) {
  register const void* wp __asm__("r0") = w;
  register const void* xp __asm__("r1") = x;
  register int32_t s00 __asm__("r8") = 0;
  register int32_t s01 __asm__("r9") = 0;
  register int32_t s10 __asm__("r10") = 0;
  register int32_t s11 __asm__("r11") = 0;
  register int32_t n __asm__("r6") = groups;
  if (groups > 0)
    __asm__(".syntax unified\n\t"   /* gcc assembles Thumb-1 inline assembly in divided syntax */
            "push {r7}\n\t"
            "lsls r6, r6, #3\n\t"
            "add r6, r0\n\t"
            "mov r12, r6\n\t"             /* the weights' end */
            "1:\n\t"
            "ldm r0!, {r4, r7}\n\t"      /* channel 0's 4 weights, channel 1's */
            "ldm r1!, {r2, r3}\n\t"      /* values 0 and 1 of both rows */
            MTK_DOT_2X2_PAIR("sxtb r5, r4", "lsls r6, r4, #16\n\tasrs r6, r6, #24", "r8", "r10")
            MTK_DOT_2X2_PAIR("sxtb r5, r7", "lsls r6, r7, #16\n\tasrs r6, r6, #24", "r9", "r11")
            "ldm r1!, {r2, r3}\n\t"      /* values 2 and 3 */
            MTK_DOT_2X2_PAIR("lsls r5, r4, #8\n\tasrs r5, r5, #24", "asrs r6, r4, #24", "r8", "r10")
            MTK_DOT_2X2_PAIR("lsls r5, r7, #8\n\tasrs r5, r5, #24", "asrs r6, r7, #24", "r9", "r11")
            "cmp r0, r12\n\t"
            "bne 1b\n\t"
            "pop {r7}\n\t"
            ".syntax divided"
            : "+r"(wp), "+r"(xp), "+r"(n), "+r"(s00), "+r"(s01), "+r"(s10), "+r"(s11)
            :
            : "r2", "r3", "r4", "r5", "r12", "cc", "memory");
  return mtk_store4(acc, -s00, -s01, -s10, -s11);
}
#undef MTK_DOT_2X2_PAIR

/* Channel j of a 1x4 group: its 4 weights from one word (SXTB, LSLS+ASRS, ASRS). */
#define MTK_DOT_1X4_CHANNEL(s)                  \
  "ldm r0!, {r5}\n\t"                          \
  "sxtb r6, r5\n\t"                            \
  "muls r6, r1\n\t"                            \
  "add " s ", r6\n\t"                          \
  "lsls r6, r5, #16\n\t"                       \
  "asrs r6, r6, #24\n\t"                       \
  "muls r6, r2\n\t"                            \
  "add " s ", r6\n\t"                          \
  "lsls r6, r5, #8\n\t"                        \
  "asrs r6, r6, #24\n\t"                       \
  "muls r6, r3\n\t"                            \
  "add " s ", r6\n\t"                          \
  "asrs r5, r5, #24\n\t"                       \
  "muls r5, r4\n\t"                            \
  "add " s ", r5\n\t"

/* acc[j] = x.w_j over int8 weights (int16 row x, in order): the row's 4 values of a group in r1-r4, its
 * pointer in r12 between groups. */
MTK_OUT_OF_LINE int32_t mtk_dot_1x4_v6m(const void* x, const void* w, int32_t groups, int32_t* acc) {
  register const void* wp __asm__("r0") = w;
  register int32_t n __asm__("r6") = groups;
  register const void* xp __asm__("r12") = x;
  register int32_t s0 __asm__("r8") = 0;
  register int32_t s1 __asm__("r9") = 0;
  register int32_t s2 __asm__("r10") = 0;
  register int32_t s3 __asm__("r11") = 0;
  if (groups > 0)
    __asm__(".syntax unified\n\t"
            "lsls r6, r6, #4\n\t"
            "add r6, r0\n\t"
            "mov lr, r6\n\t"             /* the weights' end */
            "1:\n\t"
            "mov r6, r12\n\t"
            "ldm r6!, {r1, r3}\n\t"      /* (x0, x1), (x2, x3) */
            "mov r12, r6\n\t"
            "asrs r2, r1, #16\n\t"
            "sxth r1, r1\n\t"
            "asrs r4, r3, #16\n\t"
            "sxth r3, r3\n\t"
            MTK_DOT_1X4_CHANNEL("r8") MTK_DOT_1X4_CHANNEL("r9") MTK_DOT_1X4_CHANNEL("r10") MTK_DOT_1X4_CHANNEL("r11")
            "cmp r0, lr\n\t"
            "bne 1b\n\t"
            ".syntax divided"
            : "+r"(wp), "+r"(n), "+r"(xp), "+r"(s0), "+r"(s1), "+r"(s2), "+r"(s3)
            :
            : "r1", "r2", "r3", "r4", "r5", "lr", "cc", "memory");
  return mtk_store4(acc, s0, s1, s2, s3);
}
#undef MTK_DOT_1X4_CHANNEL
#define MTK_DOT_1X4_INT8 mtk_dot_1x4_v6m   /* mtk_dot_s8_plain.h's mtk_dot_1x4 over int8 weights */
#endif

#include "mtk_dot_s8_plain.h"

static inline int32_t mtk_dot_2x2(const void* x, const void* w, int32_t groups, int32_t* acc, int wide) {
#ifdef MTK_DOT_V6M_ASM
  if (!wide) return mtk_dot_2x2_v6m(x, w, groups, acc);
#endif
  int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
  const uint8_t* xp = (const uint8_t*)x;
  const uint8_t* wp = (const uint8_t*)w;
  for (int32_t g = groups; g > 0; --g, xp += 16, wp += 8 << wide) {
#pragma GCC unroll 4
    for (int32_t t = 0; t < 4; ++t) {   /* each value loaded once, each product one multiply-add */
      int32_t x0, x1, w0 = mtk_weight(wp, wide, t), w1 = mtk_weight(wp, wide, 4 + t);
      mtk_pair_values(xp, t, &x0, &x1);
      s00 += x0 * w0;
      s01 += x0 * w1;
      s10 += x1 * w0;
      s11 += x1 * w1;
    }
  }
  return mtk_store4(acc, s00, s01, s10, s11);
}

#include "mtk_dot_s8_calls.h"
#include "mtk_dot_s8_wide.h"
#include "mtk_dot_rows_w16.h"

#endif /* MTK_DOT_S8_SCALAR_H_ */
