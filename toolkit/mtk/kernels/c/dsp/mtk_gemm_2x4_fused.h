/* The GEMM of packed row pairs with the requantization fused, four channels a block ("2x4/fused": gemm.py,
 * microkernels.py pack_quad_stream): each weight word is read once for both rows of a pair and each row word once
 * for both channel pairs, 8 loads a group of 32 products where "2x2/fused" takes 6 for 16. A call takes up to
 * MTK_QUAD2_PAIRS pairs of rows (packed one after the other, 16 bytes a group each) where a quad has at most
 * MTK_QUAD2_STRAIGHT groups: per quad the pairs' passes read its weights forward and backward in turn, so that a pass
 * starts on the lines the one before read last (a small flash data cache, the STM32L4's ART, still holds them).
 *
 * The stream: per channel quad (the last one zero-padded) 16·groups bytes of biased weights (per group pair 0's words
 * (k0, k2), (k1, k3), then pair 1's: pack_weights_biased) and 64 bytes of head words (b0 + 256·b1, b1, b2 + 256·b3,
 * b3: the sums start from them, c0's and c2's from −128·Σx of their row too) and of each channel's multiplier m,
 * rounding term C and shift e (mtk_gemm_2x2_fused_s8's); where they lie in a quad: mtk_quad2_head_at and
 * mtk_quad2_params_at. A quad of up to MTK_QUAD2_STRAIGHT groups starts with its weights, then channel pair 0's head
 * words and m, C, e, then pair 1's, 32 bytes each (one cache line each when the stream is aligned to 32 bytes, as
 * gemm.py places it): a pass reads both lines at its start, in its middle and at its end, so that its last lines read
 * are those lines and the weights the next pass reads first. A longer quad starts with the four head words, then its
 * weights, then the channels' m, C, e. */
#ifndef MTK_GEMM_2X4_FUSED_H_
#define MTK_GEMM_2X4_FUSED_H_

#include <stdint.h>

#include "mtk_dot_biased_s8.h"

#define MTK_QUAD2_STRAIGHT 16   /* the most groups of a kernel of straight code, MTK_QUAD2_PAIRS pairs a call */
/* Row pairs a call of the straight kernels takes at most (gemm.py QUAD_PAIRS gives it no more): 4, whose code is
 * twice 2's, on the Cortex-M4 (each quad's weights read once for more rows, for a small flash data cache; where a
 * code miss is dear, as on the STM32L4's ART, compiler.code_fitting_tuning takes the compact loop instead); 2 on the
 * Cortex-M33 (the STM32U5's ICACHE, no prefetch, holds a loop of two passes). */
#if defined(__ARM_ARCH_8M_MAIN__)
#define MTK_QUAD2_PAIRS 2
#else
#define MTK_QUAD2_PAIRS 4
#endif
#define MTK_QUAD2_TAIL 64       /* head words and m, C, e bytes a quad */

/* Whether a quad of `groups` groups ends with its head and m, C, e (the straight kernels' layout), not starts with its
 * head (the loop kernels': deeper layers, and any layer's compact loop, pairs 0). */
static inline int32_t mtk_quad2_straight(int32_t groups, int32_t pairs) {
  return pairs > 0 && groups <= MTK_QUAD2_STRAIGHT;
}
/* Bytes from a quad's start to its weights, to head word i (0-3), to channel c's m, C, e. */
static inline int32_t mtk_quad2_weights_at(int32_t straight) { return straight ? 0 : 16; }
static inline int32_t mtk_quad2_head_at(int32_t straight, int32_t groups, int32_t i) {
  return straight ? 16 * groups + 32 * (i >> 1) + 4 * (i & 1) : 4 * i;
}
static inline int32_t mtk_quad2_params_at(int32_t straight, int32_t groups, int32_t c) {
  return straight ? 16 * groups + 32 * (c >> 1) + 8 + 12 * (c & 1) : 16 + 16 * groups + 12 * c;
}

/* The `channels` (≤ 4) outputs of each of the two packed rows at x with the quad at t (straight: its layout,
 * mtk_quad2_straight), clamped to [lo, hi], in C; sum_x: the rows' Σx (mtk_pack_sums_s16); doubled: the rows and the
 * quad's head words are twice the values (their sums the doubled ones the requantization takes). Row 1 first: with
 * stride 0 (an odd last row) both rows are the same. */
static inline void mtk_fused_quad2_c(const void* x, const uint8_t* t, int32_t groups, int32_t straight, int8_t* out,
                                     int32_t stride, int32_t channels, const int32_t* sum_x, int32_t lo, int32_t hi,
                                     int32_t doubled) {
  const uint32_t* wp = (const uint32_t*)(t + mtk_quad2_weights_at(straight));
  const uint32_t* xp = (const uint32_t*)x;
  for (int32_t r = 1; r >= 0; --r)
    for (int32_t p = 0; p < 2; ++p) {
      uint32_t head_s = *(const uint32_t*)(t + mtk_quad2_head_at(straight, groups, 2 * p));
      int32_t s = (int32_t)(head_s - ((uint32_t)sum_x[r] << 7));
      int32_t u = *(const int32_t*)(t + mtk_quad2_head_at(straight, groups, 2 * p + 1));
      for (int32_t g = 0; g < groups; ++g) {
        uint32_t a = wp[4 * g + 2 * p], b = wp[4 * g + 2 * p + 1], xa = xp[4 * g + 2 * r], xb = xp[4 * g + 2 * r + 1];
        s = mtk_smlad(b, xb, mtk_smlad(a, xa, s));
        u = mtk_smlad(mtk_sxtb16_ror8(b), xb, mtk_smlad(mtk_sxtb16_ror8(a), xa, u));
      }
      const uint32_t sums[2] = {(uint32_t)s - ((uint32_t)u << 8), (uint32_t)u};
      for (int32_t c = 2 * p; c < 2 * p + 2 && c < channels; ++c) {
        const int32_t* q = (const int32_t*)(t + mtk_quad2_params_at(straight, groups, c));
        int32_t v = mtk_requant_x2((int32_t)(sums[c - 2 * p] << (1 - doubled)), q[0], q[1], q[2]);
        out[r * stride + c] = (int8_t)(v < lo ? lo : (v > hi ? hi : v));
      }
    }
}

#ifdef MTK_FUSED_ASM
#define MTK_QUAD2_STR(N) #N
#define MTK_QUAD2_XSTR(N) MTK_QUAD2_STR(N)
#define MTK_QUAD2_TAIL_BYTES MTK_QUAD2_XSTR(MTK_QUAD2_TAIL)
/* One group's half of the quad's sums for both rows of a pair: the rows' words r12 (row 0), lr (row 1), the weights
 * r10 (channel pair 0), r11 (pair 1); sums s00 r2, t00 r3, s01 r4, t01 r5 (row 0 by pairs 0, 1), s10 r6, t10 r7, s11
 * r8, t11 r9. Each SXTB16 after the two multiplies of its raw word. */
#define MTK_QUAD2_SUMS               \
  "smlad r6, r10, lr, r6\n\t"        \
  "smlad r2, r10, r12, r2\n\t"       \
  "sxtb16 r10, r10, ror #8\n\t"      \
  "smlad r4, r11, r12, r4\n\t"       \
  "smlad r8, r11, lr, r8\n\t"        \
  "sxtb16 r11, r11, ror #8\n\t"      \
  "smlad r3, r10, r12, r3\n\t"       \
  "smlad r7, r10, lr, r7\n\t"        \
  "smlad r5, r11, r12, r5\n\t"       \
  "smlad r9, r11, lr, r9\n\t"
/* The same as a pass's first: the sums start from −128·Σx of row 0 (r2) and row 1 (r6), the head's b1 (r3) and b3
 * (r5), each read before it is written. */
#define MTK_QUAD2_SUMS_FIRST         \
  "smlad r8, r11, lr, r6\n\t"        \
  "smlad r6, r10, lr, r6\n\t"        \
  "smlad r4, r11, r12, r2\n\t"       \
  "smlad r2, r10, r12, r2\n\t"       \
  "sxtb16 r10, r10, ror #8\n\t"      \
  "sxtb16 r11, r11, ror #8\n\t"      \
  "smlad r7, r10, lr, r3\n\t"        \
  "smlad r3, r10, r12, r3\n\t"       \
  "smlad r9, r11, lr, r5\n\t"        \
  "smlad r5, r11, r12, r5\n\t"
/* Group G's (x1, x3) half's and (x0, x2) half's words from the pair's rows at r0 and the quad at r1 (G: an assembler
 * expression), each half's 4 loads back to back (a load after another takes a cycle on the Cortex-M4), the first
 * multiply not reading the last of them (the Cortex-M33's load-use stall). */
#define MTK_QUAD2_ODD_WORDS(G)               \
  "ldr.w r10, [r1, #16*(" #G ")+4]\n\t"      \
  "ldr.w r11, [r1, #16*(" #G ")+12]\n\t"     \
  "ldr.w lr, [r0, #16*(" #G ")+12]\n\t"      \
  "ldr.w r12, [r0, #16*(" #G ")+4]\n\t"
#define MTK_QUAD2_EVEN_WORDS(G)              \
  "ldr.w r11, [r1, #16*(" #G ")+8]\n\t"      \
  "ldr.w r10, [r1, #16*(" #G ")]\n\t"        \
  "ldr.w lr, [r0, #16*(" #G ")+8]\n\t"       \
  "ldr.w r12, [r0, #16*(" #G ")]\n\t"
#define MTK_QUAD2_AT(G) MTK_QUAD2_ODD_WORDS(G) MTK_QUAD2_SUMS MTK_QUAD2_EVEN_WORDS(G) MTK_QUAD2_SUMS
#define MTK_QUAD2_FIRST_AT(G) MTK_QUAD2_ODD_WORDS(G) MTK_QUAD2_SUMS_FIRST MTK_QUAD2_EVEN_WORDS(G) MTK_QUAD2_SUMS
/* N groups from group S up (UP) or down (DOWN). */
#define MTK_QUAD2_UP_0(S)
#define MTK_QUAD2_UP_1(S) MTK_QUAD2_AT(S)
#define MTK_QUAD2_UP_2(S) MTK_QUAD2_UP_1(S) MTK_QUAD2_AT(S + 1)
#define MTK_QUAD2_UP_3(S) MTK_QUAD2_UP_2(S) MTK_QUAD2_AT(S + 2)
#define MTK_QUAD2_UP_4(S) MTK_QUAD2_UP_3(S) MTK_QUAD2_AT(S + 3)
#define MTK_QUAD2_UP_5(S) MTK_QUAD2_UP_4(S) MTK_QUAD2_AT(S + 4)
#define MTK_QUAD2_UP_6(S) MTK_QUAD2_UP_5(S) MTK_QUAD2_AT(S + 5)
#define MTK_QUAD2_UP_7(S) MTK_QUAD2_UP_6(S) MTK_QUAD2_AT(S + 6)
#define MTK_QUAD2_UP_8(S) MTK_QUAD2_UP_7(S) MTK_QUAD2_AT(S + 7)
#define MTK_QUAD2_DOWN_0(S)
#define MTK_QUAD2_DOWN_1(S) MTK_QUAD2_AT(S)
#define MTK_QUAD2_DOWN_2(S) MTK_QUAD2_DOWN_1(S) MTK_QUAD2_AT(S - 1)
#define MTK_QUAD2_DOWN_3(S) MTK_QUAD2_DOWN_2(S) MTK_QUAD2_AT(S - 2)
#define MTK_QUAD2_DOWN_4(S) MTK_QUAD2_DOWN_3(S) MTK_QUAD2_AT(S - 3)
#define MTK_QUAD2_DOWN_5(S) MTK_QUAD2_DOWN_4(S) MTK_QUAD2_AT(S - 4)
#define MTK_QUAD2_DOWN_6(S) MTK_QUAD2_DOWN_5(S) MTK_QUAD2_AT(S - 5)
#define MTK_QUAD2_DOWN_7(S) MTK_QUAD2_DOWN_6(S) MTK_QUAD2_AT(S - 6)
#define MTK_QUAD2_DOWN_8(S) MTK_QUAD2_DOWN_7(S) MTK_QUAD2_AT(S - 7)
/* The head's b0 + 256·b1 and b2 + 256·b3 added to the s sums mid-pass (TAIL: the quad's head words and m, C, e). */
#define MTK_QUAD2_HEAD_S(TAIL)           \
  "ldr.w r10, [r1, #" TAIL "]\n\t"       \
  "ldr.w r11, [r1, #" TAIL "+32]\n\t"    \
  "add r2, r2, r10\n\t"                  \
  "add r6, r6, r10\n\t"                  \
  "add r4, r4, r11\n\t"                  \
  "add r8, r8, r11\n\t"
/* A pass over G = 1 + K + REST groups (a number known when it is built), the first and K more before the head's s
 * words and REST after: forward from group 0, or backward from group G − 1. */
#define MTK_QUAD2_FORWARD(K, REST, TAIL) \
  MTK_QUAD2_FIRST_AT(0) MTK_QUAD2_UP_##K(1) MTK_QUAD2_HEAD_S(TAIL) MTK_QUAD2_UP_##REST(K + 1)
#define MTK_QUAD2_BACKWARD(G, K, REST, TAIL) \
  MTK_QUAD2_FIRST_AT(G - 1) MTK_QUAD2_DOWN_##K(G - 2) MTK_QUAD2_HEAD_S(TAIL) MTK_QUAD2_DOWN_##REST(G - 2 - K)
/* A pass's start: its pair's rows into r0, their −128·Σx into r2 and r6 (the frame's X and T), the head's b1 and b3
 * into r3 and r5. */
#define MTK_QUAD2_PASS_START(X, T, TAIL)   \
  "ldrd r2, r6, [sp, #" T "]\n\t"          \
  "ldr r0, [sp, #" X "]\n\t"               \
  "ldr r3, [r1, #" TAIL "+4]\n\t"          \
  "ldr r5, [r1, #" TAIL "+36]\n\t"
/* Channel AT's m, C, e into r10-r12 from the quad at r1. */
#define MTK_QUAD2_PARAMS_AT(AT) \
  "ldr r10, [r1, #" AT "]\n\tldr r11, [r1, #" AT "+4]\n\tldr r12, [r1, #" AT "+8]\n\t"
/* The head words r2-r5 plus −128·Σx of row 0 (r10) and row 1 (r11) into the quad's first sums r2-r9. */
#define MTK_QUAD2_FIRST_SUMS         \
  "add r6, r2, r11\n\t"              \
  "add r8, r4, r11\n\t"              \
  "mov r7, r3\n\t"                   \
  "mov r9, r5\n\t"                   \
  "add r2, r2, r10\n\t"              \
  "add r4, r4, r10\n\t"
/* The int8 output of sum X (doubled) into T with the channel's m, C, e (r10-r12), stored by STORE. */
#define MTK_QUAD2_OUT(X, T, STORE, SIGN) \
  "smmlar " T ", " X ", r10, r11\n\t"    \
  SIGN(T, X)                             \
  "asr " T ", " T ", r12\n\t"            \
  "ssat " T ", #8, " T "\n\t"            \
  STORE "\n\t"
/* Two sums doubled, the two 16-bit ADDs side by side (the Cortex-M33 issues them together). */
#define MTK_QUAD2_DOUBLE(A, B) "add " A ", " A ", " A "\n\t" "add " B ", " B ", " B "\n\t"
/* 2·(S − 256·T): the doubled sums of a pair's c0 in both rows from their sums S (X0, X1) and T (Y0, Y1, not doubled
 * yet). */
#define MTK_QUAD2_C0(X0, Y0, X1, Y1)                                                                  \
  "sub " X0 ", " X0 ", " Y0 ", lsl #8\n\t" "sub " X1 ", " X1 ", " Y1 ", lsl #8\n\t"                   \
  MTK_QUAD2_DOUBLE(X0, X1)
/* The quad's 8 outputs of a pair, a channel at a time: channel c's m, C, e at Pc, its sums doubled (c0 = S − 256·T,
 * c1 = T of each pair), its row 0 output at lr (the frame's OUT), its row 1 output at r2 (lr + the frame's STRIDE,
 * once row 0's c0 is out), each into a register its sum no longer needs (r0 first). No load's result read by the
 * next instruction. */
#define MTK_QUAD2_OUTPUTS(P0, P1, P2, P3, OUT, STRIDE, SIGN)              \
  "ldr lr, [sp, #" OUT "]\n\t"                                             \
  MTK_QUAD2_PARAMS_AT(P0)                                                  \
  MTK_QUAD2_C0("r2", "r3", "r6", "r7")                                     \
  MTK_QUAD2_OUT("r2", "r0", "strb r0, [lr]", SIGN)                         \
  "ldr r2, [sp, #" STRIDE "]\n\t"                                          \
  "smmlar r0, r6, r10, r11\n\t"                                            \
  "add r2, r2, lr\n\t"                                                     \
  SIGN("r0", "r6")                                                         \
  "asr r0, r0, r12\n\t"                                                    \
  "ssat r0, #8, r0\n\t"                                                    \
  "strb r0, [r2]\n\t"                                                      \
  MTK_QUAD2_PARAMS_AT(P1)                                                  \
  MTK_QUAD2_DOUBLE("r3", "r7")                                             \
  MTK_QUAD2_OUT("r3", "r6", "strb r6, [lr, #1]", SIGN)                     \
  MTK_QUAD2_OUT("r7", "r3", "strb r3, [r2, #1]", SIGN)                     \
  MTK_QUAD2_PARAMS_AT(P2)                                                  \
  MTK_QUAD2_C0("r4", "r5", "r8", "r9")                                     \
  MTK_QUAD2_OUT("r4", "r7", "strb r7, [lr, #2]", SIGN)                     \
  MTK_QUAD2_OUT("r8", "r4", "strb r4, [r2, #2]", SIGN)                     \
  MTK_QUAD2_PARAMS_AT(P3)                                                  \
  MTK_QUAD2_DOUBLE("r5", "r9")                                             \
  MTK_QUAD2_OUT("r5", "r8", "strb r8, [lr, #3]", SIGN)                     \
  MTK_QUAD2_OUT("r9", "r5", "strb r5, [r2, #3]", SIGN)
/* Then the output moved on 4 bytes, to the next quad's. */
#define MTK_QUAD2_EPILOGUE(P0, P1, P2, P3, OUT, STRIDE, SIGN)              \
  MTK_QUAD2_OUTPUTS(P0, P1, P2, P3, OUT, STRIDE, SIGN)                     \
  "add lr, lr, #4\n\t"                                                     \
  "str lr, [sp, #" OUT "]\n\t"
/* A pass of the straight kernels: the pair's rows and −128·Σx at the frame's X and T, its sums over the groups
 * (GROUPS), its outputs at the frame's OUT and STRIDE; TAIL: the quad's head words and m, C, e. */
#define MTK_QUAD2_PASS(X, T, GROUPS, TAIL, OUT, STRIDE, SIGN)                                        \
  MTK_QUAD2_PASS_START(X, T, TAIL)                                                                  \
  GROUPS                                                                                            \
  MTK_QUAD2_EPILOGUE(TAIL "+8", TAIL "+20", TAIL "+40", TAIL "+52", OUT, STRIDE, SIGN)
/* Pair J's frame (the kernel's prologue: r0 the rows, r4 the output, r5 the stride, r6 the rows' count): its rows
 * (16·G bytes a pair) at X, its output and its stride (0 for an odd last row) at OUT. */
#define MTK_QUAD2_PAIR_FRAME(J, G, X, OUT)                 \
  "addw r7, r0, #16*" #G "*" #J "\n\t"                     \
  "str r7, [sp, #" X "]\n\t"                               \
  "movs r9, #2*" #J "\n\t"                                 \
  "mla r8, r9, r5, r4\n\t"                                 \
  "cmp r6, #2*" #J "+2\n\t"                                \
  "ite ge\n\t"                                             \
  "movge r9, r5\n\t"                                       \
  "movlt r9, #0\n\t"                                       \
  "strd r8, r9, [sp, #" OUT "]\n\t"
/* Unless the call's rows end before pair J (the frame's rows − 2 at [84], into R), to label L. */
#define MTK_QUAD2_IF_PAIR(J, R, L) "ldr " R ", [sp, #84]\n\tcmp " R ", #2*" #J "-2\n\tble " L "\n\t"
/* Pairs 2 and 3 of a call (MTK_QUAD2_PAIRS 4): their frames, their rows' sums, their passes. */
#if MTK_QUAD2_PAIRS == 4
#define MTK_QUAD2_LATER_FRAMES(G) MTK_QUAD2_PAIR_FRAME(2, G, "8", "64") MTK_QUAD2_PAIR_FRAME(3, G, "12", "72")
#define MTK_QUAD2_LATER_SUMS \
  MTK_QUAD2_IF_PAIR(2, "r6", "5f") MTK_FUSED_ROW_SUMS_AT("32") MTK_QUAD2_IF_PAIR(3, "r6", "5f") MTK_FUSED_ROW_SUMS_AT("40")
#define MTK_QUAD2_LATER_PASSES(G, K, REST, SIGN)                                                     \
  MTK_QUAD2_IF_PAIR(2, "r0", "4f")                                                                  \
  MTK_QUAD2_PASS("8", "32", MTK_QUAD2_FORWARD(K, REST, "16*" #G), "16*" #G, "64", "68", SIGN)       \
  MTK_QUAD2_IF_PAIR(3, "r0", "4f")                                                                  \
  MTK_QUAD2_PASS("12", "40", MTK_QUAD2_BACKWARD(G, K, REST, "16*" #G), "16*" #G, "72", "76", SIGN)
#else
#define MTK_QUAD2_LATER_FRAMES(G)
#define MTK_QUAD2_LATER_SUMS
#define MTK_QUAD2_LATER_PASSES(G, K, REST, SIGN)
#endif
/* A call's pairs after its first (SEVERAL: up to MTK_QUAD2_PAIRS), or none (ONE: a kernel of a pair a call, whose
 * layer takes no more: gemm.py's `pairs`): their frames, their rows' sums, their passes. */
#define MTK_QUAD2_SEVERAL_FRAMES(G) MTK_QUAD2_PAIR_FRAME(1, G, "4", "56") MTK_QUAD2_LATER_FRAMES(G)
#define MTK_QUAD2_SEVERAL_SUMS MTK_QUAD2_IF_PAIR(1, "r6", "5f") MTK_FUSED_ROW_SUMS_AT("24") MTK_QUAD2_LATER_SUMS
#define MTK_QUAD2_SEVERAL_PASSES(G, K, REST, SIGN)                                                   \
  MTK_QUAD2_IF_PAIR(1, "r0", "4f")                                                                  \
  MTK_QUAD2_PASS("4", "24", MTK_QUAD2_BACKWARD(G, K, REST, "16*" #G), "16*" #G, "56", "60", SIGN)   \
  MTK_QUAD2_LATER_PASSES(G, K, REST, SIGN)
#define MTK_QUAD2_ONE_FRAMES(G)
#define MTK_QUAD2_ONE_SUMS
#define MTK_QUAD2_ONE_PASSES(G, K, REST, SIGN)
/* G groups (up to MTK_QUAD2_STRAIGHT), K + 1 before the head's s words. f: packed rows, the first quad, groups,
 * quads (> 0), out, stride, rows (1-8: each pair's rows 16·G bytes after the one before; an odd last row packed
 * twice, its copy's outputs stored over its own). Naked, so that every register but sp is the kernel's: first the
 * pairs' sums Σx (MTK_FUSED_ROW_SUMS_AT), then per quad (r1, label 1) each pair's pass, forward and backward in turn,
 * and its outputs. The frame: [4J] pair J's rows, [16 + 8J] −128·Σx of its rows, [48 + 8J] its output and its
 * stride (0: an odd last row), [80] the stream's end, [84] rows − 2. */
#define MTK_QUAD2_STRAIGHT_DSP(NAME, G, K, REST, SIGN, PAIRS)                                            \
__attribute__((naked, noinline, unused)) static void NAME(__attribute__((unused)) const int32_t* f) { \
  __asm__ volatile(                                                                                   \
      "push {r4-r11, lr}\n\t"                                                                         \
      "sub sp, sp, #88\n\t"                                                                           \
      "ldm r0, {r0-r6}\n\t"                                                                           \
      MTK_QUAD2_PAIR_FRAME(0, G, "0", "48")                                                           \
      MTK_QUAD2_##PAIRS##_FRAMES(G)                                                                   \
      "subs r6, r6, #2\n\t"                                                                           \
      "str r6, [sp, #84]\n\t"                                                                         \
      "movw r7, #16*" #G "+" MTK_QUAD2_TAIL_BYTES "\n\t"                                              \
      "mla r7, r7, r3, r1\n\t"                                                                        \
      "str r7, [sp, #80]\n\t"                                                                         \
      "movs r2, #" #G "\n\t"                                                                          \
      MTK_FUSED_ROW_SUMS_AT("16")                                                                      \
      MTK_QUAD2_##PAIRS##_SUMS                                                                        \
      "5:\n\t"                                                                                        \
      ".p2align 2\n"                                                                                   \
      "1:\n\t"                                                                                        \
      MTK_QUAD2_PASS("0", "16", MTK_QUAD2_FORWARD(K, REST, "16*" #G), "16*" #G, "48", "52", SIGN)     \
      MTK_QUAD2_##PAIRS##_PASSES(G, K, REST, SIGN)                                                    \
      "4:\n\t"                                                                                        \
      "addw r1, r1, #16*" #G "+" MTK_QUAD2_TAIL_BYTES "\n\t"                                          \
      "ldr r0, [sp, #80]\n\t"                                                                         \
      "cmp r1, r0\n\t"                                                                                \
      "bne 1b\n\t"                                                                                    \
      "add sp, sp, #88\n\t"                                                                           \
      "pop {r4-r11, pc}\n\t");                                                                        \
}

/* Quads of more groups: one pair a call, the quad's words in the stream's order (head, weights, m, C, e), its groups
 * 16 a pass of a loop entered midway. A group as MTK_QUAD2_AT's, its (x0, x2) half's loads moving r0 and r1 on, every
 * instruction 32 bits wide: MTK_QUAD2_GROUP_BYTES a group, which the entry into the loop's middle counts on. */
#define MTK_QUAD2_GROUP                \
  MTK_QUAD2_ODD_WORDS(0)               \
  MTK_QUAD2_SUMS                       \
  "ldr.w r11, [r1, #8]\n\t"            \
  "ldr r10, [r1], #16\n\t"             \
  "ldr.w lr, [r0, #8]\n\t"             \
  "ldr r12, [r0], #16\n\t"             \
  MTK_QUAD2_SUMS
#define MTK_QUAD2_GROUP_BYTES "112"
/* The rows' −128·Σx into r10, r11 and the quad's head words into r2-r5, r1 past them: single loads on the Cortex-M33
 * (one cycle each, an LDM or LDRD one more than its registers), multiples elsewhere (as many cycles on the Cortex-M4,
 * whose single loads pipeline). */
#if defined(__ARM_ARCH_8M_MAIN__)
#define MTK_QUAD2_HEAD                                                                                     \
  "ldr r10, [sp, #4]\n\tldr r11, [sp, #8]\n\t"                                                            \
  "ldr r2, [r1], #16\n\tldr r3, [r1, #-12]\n\tldr r4, [r1, #-8]\n\tldr r5, [r1, #-4]\n\t"
#else
#define MTK_QUAD2_HEAD "ldrd r10, r11, [sp, #4]\n\tldm r1!, {r2, r3, r4, r5}\n\t"
#endif
/* f: packed rows, the first quad, groups, quads (> 0), out, stride. Naked: first the rows' sums Σx, then per quad
 * (label 1) its first sums (its head's words, c0's and c2's plus −128·Σx of their row), its sums over the groups (any
 * number (r2): 2^LOG2 a pass (PASS: as many MTK_QUAD2_GROUPs), label 2, entered (−groups mod 2^LOG2) groups in) and its
 * outputs; the frame: [0] rows, [4] −128·Σx of row 0 and of row 1, [12] stride, [16] the output, [20] the stream's end,
 * [24] the loop's entry, [28] passes, [32] passes left. No load's result read by the next instruction, the 16-bit MOVs
 * and ADDs in pairs (the M33's dual issue). */
#define MTK_QUAD2_ANY_DSP(NAME, SIGN, LOG2, PASS)                                                     \
__attribute__((naked, noinline, unused)) static void NAME(__attribute__((unused)) const int32_t* f) { \
  __asm__ volatile(                                                                                   \
      "push {r4-r11, lr}\n\t"                                                                         \
      "sub sp, sp, #40\n\t"                                                                           \
      "ldm r0, {r0-r5}\n\t"                                                                           \
      "str r0, [sp, #0]\n\t"                                                                          \
      "strd r5, r4, [sp, #12]\n\t"                                                                    \
      "add r6, r2, #4\n\t"                                                                            \
      "lsl r6, r6, #4\n\t"                                                                            \
      "mla r6, r6, r3, r1\n\t"                                                                        \
      "str r6, [sp, #20]\n\t"                                                                         \
      MTK_FUSED_ROW_SUMS_AT("4")                                                                       \
      "adds r3, r2, #(1<<" #LOG2 ")-1\n\t"                                                            \
      "lsrs r3, r3, #" #LOG2 "\n\t"                                                                   \
      "str r3, [sp, #28]\n\t"                                                                         \
      "rsb r2, r2, #0\n\t"                                                                            \
      "and r2, r2, #(1<<" #LOG2 ")-1\n\t"                                                             \
      "movs r3, #" MTK_QUAD2_GROUP_BYTES "\n\t"                                                       \
      "adr.w r4, 2f\n\t"                                                                              \
      "mla r2, r2, r3, r4\n\t"                                                                        \
      "orr r2, r2, #1\n\t"                                                                            \
      "str r2, [sp, #24]\n\t"                                                                         \
      "1:\n\t"                                                                                        \
      MTK_QUAD2_HEAD                                                                                  \
      "ldr r0, [sp, #0]\n\t"                                                                          \
      MTK_QUAD2_FIRST_SUMS                                                                            \
      "ldr r10, [sp, #28]\n\t"                                                                        \
      "str r10, [sp, #32]\n\t"                                                                        \
      "ldr pc, [sp, #24]\n"                                                                           \
      "2:\n\t"                                                                                        \
      PASS                                                                                            \
      "ldr r10, [sp, #32]\n\t"                                                                        \
      "subs r10, r10, #1\n\t"                                                                         \
      "str r10, [sp, #32]\n\t"                                                                        \
      "bne 2b\n\t"                                                                                    \
      MTK_QUAD2_EPILOGUE("0", "12", "24", "36", "16", "12", SIGN)                                     \
      "adds r1, r1, #48\n\t"                                                                          \
      "ldr r0, [sp, #20]\n\t"                                                                         \
      "cmp r1, r0\n\t"                                                                                \
      "bne 1b\n\t"                                                                                    \
      "add sp, sp, #40\n\t"                                                                           \
      "pop {r4-r11, pc}\n\t");                                                                        \
}
/* Per number of groups (1 to 16 each its own: only the layer's is linked in; else any), with and without the sign
 * term, of several pairs a call or of one. */
#define MTK_QUAD2_KERNELS(G, K, REST)                                                                        \
  MTK_QUAD2_STRAIGHT_DSP(mtk_gemm_2x4_fused_g##G##_dsp, G, K, REST, MTK_FUSED_SIGN, SEVERAL)                \
  MTK_QUAD2_STRAIGHT_DSP(mtk_gemm_2x4_fused_g##G##_nosign_dsp, G, K, REST, MTK_FUSED_NO_SIGN, SEVERAL)      \
  MTK_QUAD2_STRAIGHT_DSP(mtk_gemm_2x4_fused_g##G##_one_dsp, G, K, REST, MTK_FUSED_SIGN, ONE)                \
  MTK_QUAD2_STRAIGHT_DSP(mtk_gemm_2x4_fused_g##G##_one_nosign_dsp, G, K, REST, MTK_FUSED_NO_SIGN, ONE)
/* 16 groups a pass; the compact loop's 4 (pairs 0: "2x4/compact"), its code within a 1 KB instruction cache with its
 * call's (the STM32L4's ART: 842 k estimated cycles against 2x4/fused's 1,757 k straight code on KWS's pointwise). */
#define MTK_QUAD2_PASS_16 MTK_FUSED_REPEAT_8(MTK_QUAD2_GROUP) MTK_FUSED_REPEAT_8(MTK_QUAD2_GROUP)
#define MTK_QUAD2_PASS_COMPACT MTK_FUSED_REPEAT_4(MTK_QUAD2_GROUP)
MTK_QUAD2_ANY_DSP(mtk_gemm_2x4_fused_any_dsp, MTK_FUSED_SIGN, 4, MTK_QUAD2_PASS_16)
MTK_QUAD2_ANY_DSP(mtk_gemm_2x4_fused_any_nosign_dsp, MTK_FUSED_NO_SIGN, 4, MTK_QUAD2_PASS_16)
MTK_QUAD2_ANY_DSP(mtk_gemm_2x4_fused_compact_dsp, MTK_FUSED_SIGN, 2, MTK_QUAD2_PASS_COMPACT)
MTK_QUAD2_ANY_DSP(mtk_gemm_2x4_fused_compact_nosign_dsp, MTK_FUSED_NO_SIGN, 2, MTK_QUAD2_PASS_COMPACT)
/* K: the groups before the head's s words but the first (half the groups, at least one, less one). */
MTK_QUAD2_KERNELS(1, 0, 0)
MTK_QUAD2_KERNELS(2, 0, 1)
MTK_QUAD2_KERNELS(3, 0, 2)
MTK_QUAD2_KERNELS(4, 1, 2)
MTK_QUAD2_KERNELS(5, 1, 3)
MTK_QUAD2_KERNELS(6, 2, 3)
MTK_QUAD2_KERNELS(7, 2, 4)
MTK_QUAD2_KERNELS(8, 3, 4)
MTK_QUAD2_KERNELS(9, 3, 5)
MTK_QUAD2_KERNELS(10, 4, 5)
MTK_QUAD2_KERNELS(11, 4, 6)
MTK_QUAD2_KERNELS(12, 5, 6)
MTK_QUAD2_KERNELS(13, 5, 7)
MTK_QUAD2_KERNELS(14, 6, 7)
MTK_QUAD2_KERNELS(15, 6, 8)
MTK_QUAD2_KERNELS(16, 7, 8)

/* The saturated kernel of `groups` groups over the rows f names, with the sign term or without: straight code for up
 * to MTK_QUAD2_STRAIGHT groups (of one pair a call where the layer's calls take no more), else the loop's, a pair a
 * call; pairs 0: the compact loop's, a pair a call. */
MTK_FUSED_INLINE void mtk_gemm_2x4_fused_saturated_dsp(const int32_t* f, int32_t groups, int32_t sign, int32_t pairs) {
#define MTK_QUAD2_CALL(G, F) (sign ? mtk_gemm_2x4_fused_##G##_dsp(F) : mtk_gemm_2x4_fused_##G##_nosign_dsp(F))
#define MTK_QUAD2_CASE(G)                        \
  case G:                                        \
    if (pairs > 1) MTK_QUAD2_CALL(g##G, f);      \
    else MTK_QUAD2_CALL(g##G##_one, f);          \
    return;
  switch (pairs ? groups : 0) {
    MTK_QUAD2_CASE(1) MTK_QUAD2_CASE(2) MTK_QUAD2_CASE(3) MTK_QUAD2_CASE(4)
    MTK_QUAD2_CASE(5) MTK_QUAD2_CASE(6) MTK_QUAD2_CASE(7) MTK_QUAD2_CASE(8) MTK_QUAD2_CASE(9) MTK_QUAD2_CASE(10)
    MTK_QUAD2_CASE(11) MTK_QUAD2_CASE(12) MTK_QUAD2_CASE(13) MTK_QUAD2_CASE(14) MTK_QUAD2_CASE(15) MTK_QUAD2_CASE(16)
    default:
      for (int32_t r = 0; r < f[6]; r += 2) {
        const int32_t pair[6] = {f[0] + 8 * groups * r, f[1], groups, f[3], f[4] + r * f[5], f[6] - r > 1 ? f[5] : 0};
        if (pairs) MTK_QUAD2_CALL(any, pair);
        else MTK_QUAD2_CALL(compact, pair);
      }
  }
#undef MTK_QUAD2_CASE
#undef MTK_QUAD2_CALL
}
#endif

/* The GEMM of `rows` (1-8) rows packed in pairs at x (mtk_pack_pair_s16 and the like, a pair's 16·groups bytes after
 * the other's; an odd last row packed twice) with all `channels` of the quad stream w, the outputs of row r at out +
 * r·stride, clamped to [lo, hi]; sign as mtk_gemm_2x2_fused_s8's; `pairs`: the most row pairs the layer's calls take (a
 * constant: 1 links the kernels of one pair a call in, 0 the compact loop's). Whole quads of a layer whose range is all
 * of int8 in assembly, the rest in C. Inlined, so that only the assembly the call's constants pick is linked in. */
MTK_FUSED_INLINE int32_t mtk_gemm_2x4_fused_s8(const void* x, const void* w, int32_t groups, int32_t channels,
                                               void* out, int32_t stride, int32_t rows, int32_t pairs, int32_t lo,
                                               int32_t hi, int32_t sign) {
  int32_t tile = 16 * groups + MTK_QUAD2_TAIL, done = 0;
#ifndef MTK_FUSED_ASM
  (void)sign;
  (void)pairs;
#else
  int32_t quads = channels >> 2;
  if (quads > 0 && lo == -128 && hi == 127) {
    const int32_t f[7] = {(int32_t)x, (int32_t)w, groups, quads, (int32_t)out, stride, rows};
    mtk_gemm_2x4_fused_saturated_dsp(f, groups, sign, pairs);
    done = 4 * quads;
  }
#endif
  for (int32_t r = 0; r < rows && done < channels; r += 2) {
    const uint8_t* pair = (const uint8_t*)x + 8 * groups * r;
    int32_t sum_x[2];
    mtk_pack_sums_s16(pair, groups, 2, sum_x);
    for (int32_t c = done; c < channels; c += 4)
      mtk_fused_quad2_c(pair, (const uint8_t*)w + (c >> 2) * tile, groups, mtk_quad2_straight(groups, pairs),
                        (int8_t*)out + r * stride + c, rows - r > 1 ? stride : 0, channels - c < 4 ? channels - c : 4,
                        sum_x, lo, hi, 0);
  }
  return 0;
}

/* mtk_gemm_2x4_fused_s8 over the channels a layer computes ("2x4/fused" with constant channels left out: gemm.py
 * live_channels, whole quads of them), then the tables mtk_fused_spread_live reads, row by row. */
MTK_FUSED_INLINE int32_t mtk_gemm_2x4_fused_live_s8(const void* x, const void* w, int32_t groups, int32_t live,
                                                    void* out, int32_t stride, int32_t rows, int32_t pairs,
                                                    int32_t lo, int32_t hi, int32_t sign, int32_t channels,
                                                    int32_t stream_bytes) {
  mtk_gemm_2x4_fused_s8(x, w, groups, live, out, stride, rows, pairs, lo, hi, sign);
  for (int32_t r = 0; r < rows; ++r) mtk_fused_spread_live((int8_t*)out + r * stride, 0, w, channels, stream_bytes);
  return 0;
}

#endif /* MTK_GEMM_2X4_FUSED_H_ */
