/* The one-row fused GEMM's quads two at a time on the Cortex-M33 ("1x4/fused": mtk_gemm_1x4_fused_s8, its chunked and
 * per-channel forms): included before mtk_dot_biased_s8.h (kernels/table.py: CORE_FILES), which instantiates
 * MTK_FUSED_OCTETS_DSP and MTK_FUSED_CHUNK_OCTETS_DSP and calls them where mtk_fused_quads_paired says. Each row word is
 * loaded once for 8 channels instead of 4: a group of 32 products takes 10 single loads (the row's 2, each quad's 4),
 * 16 SMLAD and 8 SXTB16, 34 cycles against two quads' 36. The stream is the quads' own: the second quad's weights are
 * the first's plus a quad's bytes.
 *
 * Registers in the loop: r0 the row, r1 and r2 the quads' weights, the row word r11, weights r12 and lr; quad 0's
 * sums s0 r3, t0 r4, s1 r5, t1 r6, quad 1's r7-r10. The row's (x0, x2) word is used by every quad's A words, then
 * (x1, x3) by the B words, so that one register holds both in turn; each load two instructions before the first use
 * of its register or of its written-back base. */
#ifndef MTK_FUSED_OCTETS_M33_H_
#define MTK_FUSED_OCTETS_M33_H_

#include <stdint.h>

/* A quad's two channel pairs by the row word r11: its words in r12 (pair 0, sums S, T) and lr (pair 1); LOAD12 and
 * LOADLR, the next words' loads, each after the last read of its register. */
#define MTK_OCTET_PAIRS(S0, T0, S1, T1, LOAD12, LOADLR) \
  "smlad " S0 ", r12, r11, " S0 "\n\t"                  \
  "sxtb16 r12, r12, ror #8\n\t"                         \
  "smlad " T0 ", r12, r11, " T0 "\n\t" LOAD12           \
  "smlad " S1 ", lr, r11, " S1 "\n\t"                   \
  "sxtb16 lr, lr, ror #8\n\t"                           \
  "smlad " T1 ", lr, r11, " T1 "\n\t" LOADLR
/* One group of both quads, every instruction 32 bits wide (MTK_OCTET_GROUP_BYTES bytes, which the entry into the
 * pass counts on), THEN a load into r12 after its last read (the pass's last group: the row's end). */
#define MTK_OCTET_GROUP_THEN(THEN)                                                                            \
  "ldr.w r12, [r1], #16\n\t"                                                                                  \
  "ldr.w r11, [r0], #8\n\t"                                                                                   \
  "ldr.w lr, [r1, #-8]\n\t"                                                                                   \
  MTK_OCTET_PAIRS("r3", "r4", "r5", "r6", "ldr.w r12, [r2], #16\n\t", "ldr.w lr, [r2, #-8]\n\t")              \
  MTK_OCTET_PAIRS("r7", "r8", "r9", "r10", "ldr.w r12, [r1, #-12]\n\t", "ldr.w r11, [r0, #-4]\n\t"            \
                  "ldr.w lr, [r1, #-4]\n\t")                                                                  \
  MTK_OCTET_PAIRS("r3", "r4", "r5", "r6", "ldr.w r12, [r2, #-12]\n\t", "ldr.w lr, [r2, #-4]\n\t")             \
  MTK_OCTET_PAIRS("r7", "r8", "r9", "r10", THEN, "")
#define MTK_OCTET_GROUP MTK_OCTET_GROUP_THEN("")
#define MTK_OCTET_GROUP_SIZE 136
#define MTK_OCTET_GROUP_BYTES MTK_DUAL_XSTR(MTK_OCTET_GROUP_SIZE)
#define MTK_OCTET_PASS_GROUPS 16   /* groups a pass (a power of two) */
#define MTK_OCTET_PASS MTK_DUAL_XSTR(MTK_OCTET_PASS_GROUPS)

static inline int32_t mtk_fused_min(int32_t a, int32_t b) { return a < b ? a : b; }

/* Whether `quads` quads of a row of `groups` groups take the pairs' kernel: an even number of them (an odd one would
 * fetch both passes), where the 2 cycles a group each pair saves outweigh the more code its pass fetches than the
 * quads' (a row shorter than the passes runs part of each; cold, 4 waits a 16-byte line from the U575's flash). */
static inline int32_t mtk_fused_quads_paired(int32_t quads, int32_t groups) {
  int32_t more_bytes = MTK_OCTET_GROUP_SIZE * mtk_fused_min(groups, MTK_OCTET_PASS_GROUPS) -
                       MTK_FUSED_QUAD_PAIR_SIZE * mtk_fused_min(groups >> 1, MTK_FUSED_QUAD_PASS_PAIRS);
  return (quads & 1) == 0 && 2 * groups * (quads >> 1) >= more_bytes / 16 * 4;
}

/* The entry into the pass for r2 groups ((−groups mod MTK_OCTET_PASS) groups in) at [sp, #AT]; r3-r5 used. */
#define MTK_OCTET_ENTRY(AT)                                    \
  "rsb r3, r2, #0\n\t"                                         \
  "and r3, r3, #" MTK_OCTET_PASS " - 1\n\t"                    \
  "movs r5, #" MTK_OCTET_GROUP_BYTES "\n\t"                    \
  "adr.w r4, 41f\n\t"                                          \
  "mla r4, r3, r5, r4\n\t"                                     \
  "orr r4, r4, #1\n\t"                                         \
  "str r4, [sp, #" AT "]\n\t"
/* The pair's sums from its heads: quad 0's at r1, moved past it, quad 1's a quad's bytes ([sp, #QUAD]) further (r2
 * past it); the row ([sp, #0]) in r0. An LDM a quad (a cycle more than its single loads, but 3 instructions fewer);
 * the LDMDB waits a cycle for its base from the ADD (the ADD right after the first LDM would wait as long for r1). */
#define MTK_OCTET_HEAD_LOADS(QUAD)        \
  "ldr r2, [sp, #" QUAD "]\n\t"           \
  "ldm r1!, {r3, r4, r5, r6}\n\t"         \
  "ldr r0, [sp, #0]\n\t"                  \
  "add r2, r2, r1\n\t"                    \
  "ldmdb r2, {r7, r8, r9, r10}\n\t"
/* The pass over the row, entered at label 41 with both quads' sums (its last group, where no entry is, loads the row's
 * end early enough for the CMP not to wait for it). */
#define MTK_OCTET_SUMS                                                      \
  ".p2align 2\n"                                                            \
  "41:\n\t"                                                                 \
  MTK_OCTET_GROUP MTK_OCTET_GROUP MTK_OCTET_GROUP MTK_OCTET_GROUP           \
  MTK_OCTET_GROUP MTK_OCTET_GROUP MTK_OCTET_GROUP MTK_OCTET_GROUP           \
  MTK_OCTET_GROUP MTK_OCTET_GROUP MTK_OCTET_GROUP MTK_OCTET_GROUP           \
  MTK_OCTET_GROUP MTK_OCTET_GROUP MTK_OCTET_GROUP                           \
  MTK_OCTET_GROUP_THEN("ldr.w r12, [sp, #4]\n\t")                           \
  "cmp r0, r12\n\t"                                                         \
  "bne 41b\n\t"
/* Each quad's sums in r3-r6 for DEST0 and DEST1 in turn, quad 1's weights' end and sums kept at [sp, #AT] meanwhile
 * (r1: quad 0's weights' end for DEST0, quad 1's for DEST1). */
#define MTK_OCTET_EACH(AT, DEST0, DEST1)    \
  "add r0, sp, #" AT "\n\t"                 \
  "stm r0, {r2, r7, r8, r9, r10}\n\t"       \
  DEST0                                     \
  "add r0, sp, #" AT "\n\t"                 \
  "ldm r0, {r1, r3, r4, r5, r6}\n\t"        \
  DEST1
/* The pair's 8 outputs after the pass (MTK_FUSED_QUAD_KINDS's OUTPUTS), stored at [sp, #40] moved on, r1 at the next
 * quad: ANY, each quad by OUT in turn; SAT, saturated with the layer's m, C, e (r11, r12, r1), the sums where they are,
 * each c0 and c2 sum doubled with −256·Σx added as MTK_FUSED_QUAD_OUTS does. */
#define MTK_OCTET_OUT_ANY(OUT, SIGN)                                                                                 \
  MTK_OCTET_EACH("48", MTK_FUSED_QUAD_OUTS(OUT) "str r2, [sp, #40]\n\t", MTK_FUSED_QUAD_OUTS(OUT) "str r2, [sp, #40]\n\t") \
  "ldr r0, [sp, #44]\n\t"                                                                                            \
  "cmp r2, r0\n\t"
#define MTK_OCTET_DOUBLE(S0, T0, S1, T1)            \
  "add " S0 ", r0, " S0 ", lsl #1\n\t"              \
  "sub " S0 ", " S0 ", " T0 ", lsl #9\n\t"          \
  "add " S1 ", r0, " S1 ", lsl #1\n\t"              \
  "sub " S1 ", " S1 ", " T1 ", lsl #9\n\t"          \
  "add " T0 ", " T0 ", " T0 "\n\t"                  \
  "add " T1 ", " T1 ", " T1 "\n\t"
/* The outputs of X and of Y (in the low register F, which may be X) with the layer's m, C in r11, r12 and e in r1,
 * stored at lr: MTK_FUSED_REQUANT's instructions of each in turn, so that the two 16-bit ASRS dual-issue. */
#define MTK_OCTET_REQUANT_TWO(X, Y, F, SIGN) \
  "smmlar r0, " X ", r11, r12\n\t"          \
  SIGN("r0", X)                             \
  "smmlar " F ", " Y ", r11, r12\n\t"       \
  SIGN(F, Y)                                \
  "asrs r0, r0, r1\n\t"                     \
  "asrs " F ", " F ", r1\n\t"               \
  "ssat r0, #8, r0\n\t"                     \
  "ssat " F ", #8, " F "\n\t"               \
  "strb r0, [lr], #1\n\t"                   \
  "strb " F ", [lr], #1\n\t"
/* The pair's 8 outputs from its sums r3-r10, the row's term (c0 and c2 sums) in r0 by SUM_X, out at [sp, #40] moved on
 * and compared with its end at [sp, #END]; r1 at the next pair. */
#define MTK_OCTET_OUT_SAT_AT(SUM_X, SIGN, END)                                                 \
  "ldr r1, [sp, #28]\n\t"                                                                       \
  SUM_X                                                                                         \
  "ldr r11, [sp, #20]\n\t"                                                                      \
  "ldr r12, [sp, #24]\n\t"                                                                      \
  "ldr lr, [sp, #40]\n\t"                                                                       \
  MTK_OCTET_DOUBLE("r3", "r4", "r5", "r6") MTK_OCTET_DOUBLE("r7", "r8", "r9", "r10")            \
  MTK_OCTET_REQUANT_TWO("r3", "r4", "r3", SIGN) "ldr r4, [sp, #" END "]\n\t"                    \
  MTK_OCTET_REQUANT_TWO("r5", "r6", "r5", SIGN) MTK_OCTET_REQUANT_TWO("r7", "r8", "r7", SIGN)   \
  MTK_OCTET_REQUANT_TWO("r9", "r10", "r3", SIGN)                                                \
  "str lr, [sp, #40]\n\t"                                                                       \
  "mov r1, r2\n\t"                                                                              \
  "cmp lr, r4\n\t"
#define MTK_OCTET_OUT_SAT(OUT, SIGN) MTK_OCTET_OUT_SAT_AT("ldr r0, [sp, #8]\n\t", SIGN, "44")

/* mtk_gemm_1x4_fused_dsp for an even number of quads, in pairs (the name's kind, OUT, PARAMS, OUTPUTS and SIGN:
 * MTK_FUSED_QUAD_KINDS); its frame: mtk_gemm_1x4_fused_dsp's, and [48] quad 1's weights' end and sums while quad 0's
 * outputs are made (ANY), [72] a quad's bytes, [76] the entry into the pass. */
#define MTK_FUSED_OCTETS_DSP(NAME, OUT, PARAMS, OUTPUTS, SIGN)                                       \
__attribute__((naked, noinline, unused)) static void NAME(__attribute__((unused)) const int32_t* f) { \
  __asm__ volatile(                                                                                   \
      MTK_FUSED_QUAD_START("80", MTK_FUSED_ROW_PACK)                                                  \
      "lsls r3, r2, #4\n\t"                                                                           \
      "adds r3, r3, #16 + " PARAMS "\n\t"                                                             \
      "str r3, [sp, #72]\n\t"                                                                         \
      MTK_OCTET_ENTRY("76")                                                                           \
      "40:\n\t"                                                                                       \
      MTK_OCTET_HEAD_LOADS("72")                                                                      \
      "ldr pc, [sp, #76]\n\t"                                                                         \
      MTK_OCTET_SUMS                                                                                  \
      MTK_OCTET_OUT_##OUTPUTS(OUT, SIGN)                                                              \
      "bne 40b\n\t"                                                                                   \
      "add sp, sp, #80\n\t"                                                                           \
      "pop {r4-r11, pc}\n\t");                                                                        \
}

/* A quad's sums r3-r6 of the last chunk, requantized by OUT; the frame's sums moved on. */
#define MTK_OCTET_CHUNK_OUT(OUT)   \
  MTK_FUSED_QUAD_DOUBLE            \
  "ldr r2, [sp, #40]\n\t"          \
  OUT("r2", MTK_FUSED_SIGN)        \
  "str r2, [sp, #40]\n\t"          \
  "ldr r2, [sp, #44]\n\t"          \
  "adds r2, r2, #16\n\t"           \
  "str r2, [sp, #44]\n\t"
/* The last chunk's pair of quads, each by SATURATED or (mode 4) CLAMPED, then whether the sums' end is reached; L: a
 * label. */
#define MTK_OCTET_CHUNK_EACH(SATURATED, CLAMPED, L)                                                   \
  "tst r0, #4\n\t"                                                                                    \
  "bne " L "f\n\t"                                                                                    \
  MTK_OCTET_EACH("64", MTK_OCTET_CHUNK_OUT(SATURATED), MTK_OCTET_CHUNK_OUT(SATURATED))                \
  "b " L "1f\n"                                                                                       \
  L ":\n\t"                                                                                           \
  MTK_OCTET_EACH("64", MTK_OCTET_CHUNK_OUT(CLAMPED), MTK_OCTET_CHUNK_OUT(CLAMPED))                    \
  L "1:\n\t"                                                                                          \
  "ldr r0, [sp, #48]\n\t"                                                                             \
  "cmp r2, r0\n\t"
/* The last chunk's outputs: ANY, MTK_OCTET_CHUNK_EACH; SAT (the layer's m, C, e), the pair's 8 at once as
 * MTK_OCTET_OUT_SAT (the sums' −128·Σx added at the start; the frame's sums moved on), but clamped each quad in turn. */
#define MTK_OCTET_CHUNK_LAST_ANY(SATURATED, CLAMPED) MTK_OCTET_CHUNK_EACH(SATURATED, CLAMPED, "45")
#define MTK_OCTET_CHUNK_LAST_SAT(SATURATED, CLAMPED)                                                  \
  "tst r0, #4\n\t"                                                                                    \
  "bne 46f\n\t"                                                                                       \
  "ldr r0, [sp, #44]\n\t"                                                                              \
  "adds r0, r0, #32\n\t"                                                                               \
  "str r0, [sp, #44]\n\t"                                                                              \
  MTK_OCTET_OUT_SAT_AT("movs r0, #0\n\t", MTK_FUSED_SIGN, "84")                                          \
  "bne 40b\n\t"                                                                                       \
  "b 48f\n"                                                                                           \
  "46:\n\t"                                                                                           \
  MTK_OCTET_CHUNK_EACH(SATURATED, CLAMPED, "45")
/* mtk_gemm_1x4_fused_chunk_dsp for an even number of quads, in pairs: their sums from the heads (the first chunk, mode
 * 1) or the frame's sums, −128·Σx of the chunk added to c0's and c2's; a quad's bytes in the chunk: its weights, its
 * head in the first chunk, its own m, C, e (PARAMS bytes) in the last. Before the last chunk, the pair's 8 sums stored
 * by one STM; in it, the outputs by MTK_OCTET_CHUNK_LAST_##OUTPUTS. The frame: mtk_gemm_1x4_fused_chunk_dsp's but the
 * jumps, and [60] the mode, [64] quad 1's weights' end and sums, [84] the outputs' end, [88] a quad's bytes, [92] the
 * entry. */
#define MTK_FUSED_CHUNK_OCTETS_DSP(NAME, SATURATED, CLAMPED, PARAMS, OUTPUTS)                         \
__attribute__((naked, noinline, unused)) static void NAME(__attribute__((unused)) const int32_t* f) { \
  __asm__ volatile(                                                                                   \
      MTK_FUSED_CHUNK_START("96", "str r5, [sp, #60]\n\t", MTK_FUSED_ROW_PACK)                        \
      "ldr r4, [sp, #60]\n\t"                                                                         \
      "lsls r3, r2, #4\n\t"                                                                           \
      "tst r4, #1\n\t"                                                                                \
      "it ne\n\t"                                                                                     \
      "addne r3, r3, #16\n\t"                                                                         \
      "tst r4, #2\n\t"                                                                                \
      "it ne\n\t"                                                                                     \
      "addne r3, r3, #" PARAMS "\n\t"                                                                 \
      "str r3, [sp, #88]\n\t"                                                                         \
      "ldr r3, [sp, #48]\n\t"                                                                         \
      "ldr r4, [sp, #44]\n\t"                                                                         \
      "ldr r5, [sp, #40]\n\t"                                                                         \
      "subs r3, r3, r4\n\t"                                                                           \
      "add r3, r5, r3, lsr #2\n\t"                                                                    \
      "str r3, [sp, #84]\n\t"                                                                         \
      MTK_OCTET_ENTRY("92")                                                                           \
      "40:\n\t"                                                                                       \
      "ldr r4, [sp, #60]\n\t"                                                                         \
      "ldr r11, [sp, #8]\n\t"                                                                         \
      "lsls r4, r4, #31\n\t"                                                                          \
      "beq 42f\n\t"                                                                                   \
      MTK_OCTET_HEAD_LOADS("88")                                                                      \
      "b 43f\n"                                                                                       \
      "42:\n\t"                                                                                       \
      "ldr r2, [sp, #88]\n\t"                                                                         \
      "ldr r12, [sp, #44]\n\t"                                                                        \
      "add r2, r2, r1\n\t"                                                                            \
      "ldr r0, [sp, #0]\n\t"                                                                          \
      "ldm r12, {r3, r4, r5, r6, r7, r8, r9, r10}\n"                                                  \
      "43:\n\t"                                                                                       \
      "add r3, r3, r11\n\t"                                                                           \
      "add r5, r5, r11\n\t"                                                                           \
      "add r7, r7, r11\n\t"                                                                           \
      "add r9, r9, r11\n\t"                                                                           \
      "ldr pc, [sp, #92]\n\t"                                                                         \
      MTK_OCTET_SUMS                                                                                  \
      "ldr r0, [sp, #60]\n\t"                                                                         \
      "tst r0, #2\n\t"                                                                                \
      "bne 47f\n\t"                                                                                   \
      "ldr r0, [sp, #44]\n\t"                                                                         \
      "stm r0!, {r3, r4, r5, r6, r7, r8, r9, r10}\n\t"                                                \
      "ldr r3, [sp, #48]\n\t"                                                                         \
      "str r0, [sp, #44]\n\t"                                                                         \
      "mov r1, r2\n\t"                                                                                \
      "cmp r0, r3\n\t"                                                                                \
      "bne 40b\n\t"                                                                                   \
      "b 48f\n"                                                                                       \
      "47:\n\t"                                                                                       \
      MTK_OCTET_CHUNK_LAST_##OUTPUTS(SATURATED, CLAMPED)                                              \
      "bne 40b\n"                                                                                     \
      "48:\n\t"                                                                                       \
      "add sp, sp, #96\n\t"                                                                           \
      "pop {r4-r11, pc}\n\t");                                                                        \
}

#endif /* MTK_FUSED_OCTETS_M33_H_ */
