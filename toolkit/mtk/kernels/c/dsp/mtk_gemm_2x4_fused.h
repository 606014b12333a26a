/* The GEMM of two packed rows with the requantization fused, four channels a block ("2x4/fused": gemm.py,
 * microkernels.py pack_fused_stream with tiles of 4 and every channel's own requantization): each weight word is
 * read once for both rows and each row word once for both channel pairs, 8 loads a group of 32 products where
 * "2x2/fused" takes 6 for 16.
 *
 * The stream: 12 bytes of layer words (zeros: not read), then per channel quad (the last one zero-padded) the words
 * b0 + 256·b1, b1, b2 + 256·b3, b3 (the sums start from them, c0's and c2's from −128·Σx of their row too), the
 * quad's biased weights (per group pair 0's words (k0, k2), (k1, k3), then pair 1's: pack_weights_biased), then per
 * channel its multiplier m, rounding term C and shift e, as mtk_gemm_2x2_fused_s8 reads them. */
#ifndef MTK_GEMM_2X4_FUSED_H_
#define MTK_GEMM_2X4_FUSED_H_

#include <stdint.h>

#include "mtk_dot_biased_s8.h"

#define MTK_QUAD2_LAYER 12   /* the layer words before the first quad */
#define MTK_QUAD2_PARAMS 48  /* (m, C, e) x 4 after a quad's weights */

/* The `channels` (≤ 4) outputs of each of the two packed rows at x with the quad at t, clamped to [lo, hi], in C;
 * sum_x: the rows' Σx (mtk_pack_sums_s16); doubled: the rows and the quad's head words are twice the values (their
 * sums the doubled ones the requantization takes). Row 1 first: with stride 0 (an odd last row) both rows are the
 * same. */
static inline void mtk_fused_quad2_c(const void* x, const uint8_t* t, int32_t groups, int8_t* out, int32_t stride,
                                     int32_t channels, const int32_t* sum_x, int32_t lo, int32_t hi, int32_t doubled) {
  const uint32_t* head = (const uint32_t*)t;
  const uint32_t* wp = (const uint32_t*)(t + MTK_FUSED_QUAD_HEAD);
  const uint32_t* xp = (const uint32_t*)x;
  const int32_t* q = (const int32_t*)(t + MTK_FUSED_QUAD_HEAD + 16 * groups);
  for (int32_t r = 1; r >= 0; --r)
    for (int32_t p = 0; p < 2; ++p) {
      int32_t s = (int32_t)(head[2 * p] - ((uint32_t)sum_x[r] << 7)), u = (int32_t)head[2 * p + 1];
      for (int32_t g = 0; g < groups; ++g) {
        uint32_t a = wp[4 * g + 2 * p], b = wp[4 * g + 2 * p + 1], xa = xp[4 * g + 2 * r], xb = xp[4 * g + 2 * r + 1];
        s = mtk_smlad(b, xb, mtk_smlad(a, xa, s));
        u = mtk_smlad(mtk_sxtb16_ror8(b), xb, mtk_smlad(mtk_sxtb16_ror8(a), xa, u));
      }
      const uint32_t sums[2] = {(uint32_t)s - ((uint32_t)u << 8), (uint32_t)u};
      for (int32_t c = 2 * p; c < 2 * p + 2 && c < channels; ++c) {
        int32_t v = mtk_requant_x2((int32_t)(sums[c - 2 * p] << (1 - doubled)), q[3 * c], q[3 * c + 1], q[3 * c + 2]);
        out[r * stride + c] = (int8_t)(v < lo ? lo : (v > hi ? hi : v));
      }
    }
}

#ifdef MTK_FUSED_ASM
/* One group of the quad's sums for both rows: the rows' words at r0 (row 0's (x0, x2), (x1, x3), then row 1's), the
 * weights at r1 (pair 0's two words, pair 1's); sums s00 r2, t00 r3, s01 r4, t01 r5 (row 0 by pairs 0, 1), s10 r6,
 * t10 r7, s11 r8, t11 r9. The (x1, x3) half, then the (x0, x2) half, whose loads move r0 and r1 on. Each half's 4 words
 * loaded back to back (a load after another takes a cycle on the Cortex-M4), the first multiply not reading the last
 * of them (the Cortex-M33's load-use stall); each SXTB16 after the two multiplies of its raw word. Every instruction 32
 * bits wide: MTK_QUAD2_GROUP_BYTES a group, which the entry into the loop's middle counts on. */
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
#define MTK_QUAD2_GROUP                \
  "ldr.w r10, [r1, #4]\n\t"            \
  "ldr.w r11, [r1, #12]\n\t"           \
  "ldr.w lr, [r0, #12]\n\t"            \
  "ldr.w r12, [r0, #4]\n\t"            \
  MTK_QUAD2_SUMS                       \
  "ldr.w r11, [r1, #8]\n\t"            \
  "ldr r10, [r1], #16\n\t"             \
  "ldr.w lr, [r0, #8]\n\t"             \
  "ldr r12, [r0], #16\n\t"             \
  MTK_QUAD2_SUMS
#define MTK_QUAD2_GROUP_BYTES "112"
/* The rows' −128·Σx into r10, r11 and the quad's head words into r2-r5, r1 past them; channel C's m, C, e into r10-r12
 * (C = 0 to 3), r1 past the quad's 48 bytes of them after channel 0's: single loads on the Cortex-M33 (one cycle each,
 * an LDM or LDRD one more than its registers), multiples elsewhere (as many cycles on the Cortex-M4, whose single
 * loads pipeline). */
#if defined(__ARM_ARCH_8M_MAIN__)
#define MTK_QUAD2_HEAD                                                                                     \
  "ldr r10, [sp, #4]\n\tldr r11, [sp, #8]\n\t"                                                            \
  "ldr r2, [r1], #16\n\tldr r3, [r1, #-12]\n\tldr r4, [r1, #-8]\n\tldr r5, [r1, #-4]\n\t"
#define MTK_QUAD2_PARAMS_AT(M, C, E) "ldr r10, [r1, #" M "]\n\tldr r11, [r1, #" C "]\n\tldr r12, [r1, #" E "]\n\t"
#define MTK_QUAD2_PARAMS_OF(C) MTK_QUAD2_PARAMS_##C
#define MTK_QUAD2_PARAMS_0 "ldr r10, [r1], #48\n\tldr r11, [r1, #-44]\n\tldr r12, [r1, #-40]\n\t"
#define MTK_QUAD2_PARAMS_1 MTK_QUAD2_PARAMS_AT("-36", "-32", "-28")
#define MTK_QUAD2_PARAMS_2 MTK_QUAD2_PARAMS_AT("-24", "-20", "-16")
#define MTK_QUAD2_PARAMS_3 MTK_QUAD2_PARAMS_AT("-12", "-8", "-4")
#else
#define MTK_QUAD2_HEAD "ldrd r10, r11, [sp, #4]\n\tldm r1!, {r2, r3, r4, r5}\n\t"
#define MTK_QUAD2_PARAMS_OF(C) "ldm r1!, {r10, r11, r12}\n\t"
#endif
/* A quad's first sums: its head's words, c0's and c2's plus −128·Σx of their row; r0 at the rows. No load's result
 * read by the next instruction (the Cortex-M33's load-use stall), its 16-bit MOVs and ADDs in pairs (its dual issue). */
#define MTK_QUAD2_START              \
  "1:\n\t"                           \
  MTK_QUAD2_HEAD                     \
  "ldr r0, [sp, #0]\n\t"             \
  MTK_QUAD2_FIRST_SUMS
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
/* Two sums doubled, the two 16-bit ADDs side by side (the Cortex-M33 issues them together); or left as they are
 * (NO_DOUBLE: sums of doubled rows). */
#define MTK_QUAD2_DOUBLE(A, B) "add " A ", " A ", " A "\n\t" "add " B ", " B ", " B "\n\t"
#define MTK_QUAD2_NO_DOUBLE(A, B) ""
/* 2·(S − 256·T): the doubled sums of a pair's c0 in both rows from their sums S (X0, X1) and T (Y0, Y1, not doubled
 * yet), doubled by DOUBLE. */
#define MTK_QUAD2_C0(X0, Y0, X1, Y1, DOUBLE)                                                          \
  "sub " X0 ", " X0 ", " Y0 ", lsl #8\n\t" "sub " X1 ", " X1 ", " Y1 ", lsl #8\n\t"                   \
  DOUBLE(X0, X1)
/* The quad's 8 outputs, a channel at a time: its m, C, e, its sums doubled (c0 = S − 256·T, c1 = T of each pair), its
 * row 0 output at lr (the output, [sp, #16]), its row 1 output at r2 (lr + stride ([sp, #12]), once row 0's c0 is out),
 * each into a register its sum no longer needs (r0 first), each sum doubled by DOUBLE. No load's result read by the
 * next instruction. */
#define MTK_QUAD2_OUTPUTS(SIGN, DOUBLE)                                    \
  "ldr lr, [sp, #16]\n\t"                                                  \
  MTK_QUAD2_PARAMS_OF(0)                                                   \
  MTK_QUAD2_C0("r2", "r3", "r6", "r7", DOUBLE)                             \
  MTK_QUAD2_OUT("r2", "r0", "strb r0, [lr]", SIGN)                         \
  "ldr r2, [sp, #12]\n\t"                                                  \
  "smmlar r0, r6, r10, r11\n\t"                                            \
  "add r2, r2, lr\n\t"                                                     \
  SIGN("r0", "r6")                                                         \
  "asr r0, r0, r12\n\t"                                                    \
  "ssat r0, #8, r0\n\t"                                                    \
  "strb r0, [r2]\n\t"                                                      \
  MTK_QUAD2_PARAMS_OF(1)                                                   \
  DOUBLE("r3", "r7")                                                       \
  MTK_QUAD2_OUT("r3", "r6", "strb r6, [lr, #1]", SIGN)                     \
  MTK_QUAD2_OUT("r7", "r3", "strb r3, [r2, #1]", SIGN)                     \
  MTK_QUAD2_PARAMS_OF(2)                                                   \
  MTK_QUAD2_C0("r4", "r5", "r8", "r9", DOUBLE)                             \
  MTK_QUAD2_OUT("r4", "r7", "strb r7, [lr, #2]", SIGN)                     \
  MTK_QUAD2_OUT("r8", "r4", "strb r4, [r2, #2]", SIGN)                     \
  MTK_QUAD2_PARAMS_OF(3)                                                   \
  DOUBLE("r5", "r9")                                                       \
  MTK_QUAD2_OUT("r5", "r8", "strb r8, [lr, #3]", SIGN)                     \
  MTK_QUAD2_OUT("r9", "r5", "strb r5, [r2, #3]", SIGN)
/* Then the next quad's, until the stream's end ([sp, #20]). */
#define MTK_QUAD2_EPILOGUE(SIGN)                                           \
  MTK_QUAD2_OUTPUTS(SIGN, MTK_QUAD2_DOUBLE)                                \
  "ldr r0, [sp, #20]\n\t"                                                  \
  "add lr, lr, #4\n\t"                                                     \
  "str lr, [sp, #16]\n\t"                                                  \
  "cmp r1, r0\n\t"                                                         \
  "bne 1b\n\t"
/* f: packed rows, the first quad, groups, quads (> 0), out, stride. Naked, so that every register but sp is the
 * kernel's: first the rows' sums Σx (MTK_FUSED_ROW_SUMS_AT), then per quad QUADS (from label 1:
 * its sums over the groups) and its outputs; the frame: [0] rows, [4] −128·Σx of row 0 and of row 1, [12] stride,
 * [16] the output, [20] the stream's end, [24] the loop's entry, [28] passes, [32] passes left (ANY). */
#define MTK_QUAD2_DSP(NAME, SETUP, QUADS, SIGN)                                                         \
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
      SETUP                                                                                           \
      QUADS                                                                                           \
      MTK_QUAD2_EPILOGUE(SIGN)                                                                        \
      "add sp, sp, #40\n\t"                                                                           \
      "pop {r4-r11, pc}\n\t");                                                                        \
}
/* N groups, a number known when it is built: straight, no pass count. */
#define MTK_QUAD2_FIXED(N) MTK_QUAD2_START MTK_FUSED_REPEAT_##N(MTK_QUAD2_GROUP)
/* Any number of groups (r2): 16 a pass (label 2), entered (−groups mod 16) groups in. */
#define MTK_QUAD2_ANY_SETUP                                  \
  "adds r3, r2, #15\n\t"                                     \
  "lsrs r3, r3, #4\n\t"                                      \
  "str r3, [sp, #28]\n\t"                                    \
  "rsb r2, r2, #0\n\t"                                       \
  "and r2, r2, #15\n\t"                                      \
  "movs r3, #" MTK_QUAD2_GROUP_BYTES "\n\t"                  \
  "adr.w r4, 2f\n\t"                                         \
  "mla r2, r2, r3, r4\n\t"                                   \
  "orr r2, r2, #1\n\t"                                       \
  "str r2, [sp, #24]\n\t"
#define MTK_QUAD2_ANY                                                                         \
  MTK_QUAD2_START                                                                             \
  "ldr r10, [sp, #28]\n\t"                                                                    \
  "str r10, [sp, #32]\n\t"                                                                    \
  "ldr pc, [sp, #24]\n"                                                                       \
  "2:\n\t"                                                                                    \
  MTK_FUSED_REPEAT_8(MTK_QUAD2_GROUP) MTK_FUSED_REPEAT_8(MTK_QUAD2_GROUP)                     \
  "ldr r10, [sp, #32]\n\t"                                                                    \
  "subs r10, r10, #1\n\t"                                                                     \
  "str r10, [sp, #32]\n\t"                                                                    \
  "bne 2b\n\t"
/* Per number of groups (1 to 16 each its own: only the layer's is linked in; else any), with and without the sign
 * term. */
#define MTK_QUAD2_KERNELS(G, SETUP, QUADS)                                                      \
  MTK_QUAD2_DSP(mtk_gemm_2x4_fused_##G##_dsp, SETUP, QUADS, MTK_FUSED_SIGN)                    \
  MTK_QUAD2_DSP(mtk_gemm_2x4_fused_##G##_nosign_dsp, SETUP, QUADS, MTK_FUSED_NO_SIGN)
MTK_QUAD2_KERNELS(any, MTK_QUAD2_ANY_SETUP, MTK_QUAD2_ANY)
MTK_QUAD2_KERNELS(g1, "", MTK_QUAD2_FIXED(1))
MTK_QUAD2_KERNELS(g2, "", MTK_QUAD2_FIXED(2))
MTK_QUAD2_KERNELS(g3, "", MTK_QUAD2_FIXED(3))
MTK_QUAD2_KERNELS(g4, "", MTK_QUAD2_FIXED(4))
MTK_QUAD2_KERNELS(g5, "", MTK_QUAD2_FIXED(5))
MTK_QUAD2_KERNELS(g6, "", MTK_QUAD2_FIXED(6))
MTK_QUAD2_KERNELS(g7, "", MTK_QUAD2_FIXED(7))
MTK_QUAD2_KERNELS(g8, "", MTK_QUAD2_FIXED(8))
#define MTK_QUAD2_FIXED_8_AND(N) MTK_QUAD2_START MTK_FUSED_REPEAT_8(MTK_QUAD2_GROUP) MTK_FUSED_REPEAT_##N(MTK_QUAD2_GROUP)
MTK_QUAD2_KERNELS(g9, "", MTK_QUAD2_FIXED_8_AND(1))
MTK_QUAD2_KERNELS(g10, "", MTK_QUAD2_FIXED_8_AND(2))
MTK_QUAD2_KERNELS(g11, "", MTK_QUAD2_FIXED_8_AND(3))
MTK_QUAD2_KERNELS(g12, "", MTK_QUAD2_FIXED_8_AND(4))
MTK_QUAD2_KERNELS(g13, "", MTK_QUAD2_FIXED_8_AND(5))
MTK_QUAD2_KERNELS(g14, "", MTK_QUAD2_FIXED_8_AND(6))
MTK_QUAD2_KERNELS(g15, "", MTK_QUAD2_FIXED_8_AND(7))
MTK_QUAD2_KERNELS(g16, "", MTK_QUAD2_FIXED_8_AND(8))

/* The saturated kernel of `groups` groups, with the sign term or without. */
MTK_FUSED_INLINE void mtk_gemm_2x4_fused_saturated_dsp(const int32_t* f, int32_t groups, int32_t sign) {
#define MTK_QUAD2_CALL(G) (sign ? mtk_gemm_2x4_fused_##G##_dsp(f) : mtk_gemm_2x4_fused_##G##_nosign_dsp(f))
#define MTK_QUAD2_CASE(G) \
  case G: MTK_QUAD2_CALL(g##G); return;
  switch (groups) {
    MTK_QUAD2_CASE(1) MTK_QUAD2_CASE(2) MTK_QUAD2_CASE(3) MTK_QUAD2_CASE(4)
    MTK_QUAD2_CASE(5) MTK_QUAD2_CASE(6) MTK_QUAD2_CASE(7) MTK_QUAD2_CASE(8) MTK_QUAD2_CASE(9) MTK_QUAD2_CASE(10)
    MTK_QUAD2_CASE(11) MTK_QUAD2_CASE(12) MTK_QUAD2_CASE(13) MTK_QUAD2_CASE(14) MTK_QUAD2_CASE(15) MTK_QUAD2_CASE(16)
    default: MTK_QUAD2_CALL(any);
  }
#undef MTK_QUAD2_CASE
#undef MTK_QUAD2_CALL
}
#endif

/* The GEMM of the two packed rows at x (mtk_pack_pair_s16 and the like) with all `channels` of the quad stream w,
 * outputs of row 0 at out, of row 1 `stride` bytes on, clamped to [lo, hi]; sign as mtk_gemm_2x2_fused_s8's. Whole
 * quads of a layer whose range is all of int8 in assembly, the rest in C. Inlined, so that only the assembly the
 * call's constants pick is linked in. */
MTK_FUSED_INLINE int32_t mtk_gemm_2x4_fused_s8(const void* x, const void* w, int32_t groups, int32_t channels,
                                               void* out, int32_t stride, int32_t lo, int32_t hi, int32_t sign) {
  int32_t sum_x[2] = {0, 0}, tile = MTK_FUSED_QUAD_HEAD + 16 * groups + MTK_QUAD2_PARAMS;
  const uint8_t* t = (const uint8_t*)w + MTK_QUAD2_LAYER;
  int8_t* o = (int8_t*)out;
#ifndef MTK_FUSED_ASM
  (void)sign;
#else
  int32_t quads = channels >> 2;
  if (quads > 0 && lo == -128 && hi == 127) {
    const int32_t f[6] = {(int32_t)x, (int32_t)t, groups, quads, (int32_t)out, stride};
    mtk_gemm_2x4_fused_saturated_dsp(f, groups, sign);
    t += quads * tile, o += 4 * quads, channels -= 4 * quads;
  }
#endif
  if (channels > 0) mtk_pack_sums_s16(x, groups, 2, sum_x);
  for (; channels > 0; channels -= 4, t += tile, o += 4)
    mtk_fused_quad2_c(x, t, groups, o, stride, channels < 4 ? channels : 4, sum_x, lo, hi, 0);
  return 0;
}

/* mtk_gemm_2x4_fused_s8 over the channels a layer computes ("2x4/fused" with constant channels left out: gemm.py
 * live_channels, whole quads of them), then the tables mtk_fused_spread_live reads. */
MTK_FUSED_INLINE int32_t mtk_gemm_2x4_fused_live_s8(const void* x, const void* w, int32_t groups, int32_t live,
                                                    void* out, int32_t stride, int32_t lo, int32_t hi, int32_t sign,
                                                    int32_t channels, int32_t stream_bytes) {
  mtk_gemm_2x4_fused_s8(x, w, groups, live, out, stride, lo, hi, sign);
  mtk_fused_spread_live(out, stride, w, channels, stream_bytes);
  return 0;
}

#endif /* MTK_GEMM_2X4_FUSED_H_ */
