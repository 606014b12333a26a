/* The two-row fused GEMM's pair loops ("2x2/fused": mtk_gemm_2x2_fused_s8, saturated, its SPLIT schedule) for the
 * Cortex-M7, which issues a load or an ALU instruction beside a multiply: included before mtk_dot_biased_s8.h, whose
 * MTK_FUSED_FIXED_PAIRS_SPLIT (a number of groups known when built), MTK_FUSED_ANY_PAIRS_SPLIT and MTK_FUSED_ROW_SUMS
 * it gives (kernels/table.py: CORE_FILES); the same stream, frame, groups and sums as its loops.
 *
 * A pair starts with LDRDs and single loads (each LDRD a cycle of its own, as an LDM's two registers: no fewer, but no
 * pair broken), its first group's operands loaded before the biases are added; its last group loads four of the
 * pair's six requantization words (m0, C0, e0, m1) beside its multiplies instead of the next group's operands; the
 * two channels' outputs are requantized one channel at a time, each ALU instruction beside a multiply or a load. */
#ifndef MTK_FUSED_PAIR_M7_H_
#define MTK_FUSED_PAIR_M7_H_

/* A pair's first sums (as MTK_FUSED_PAIR_START: −128·Σx of each row plus b0 + 256·b1 for c0, b1 for c1; r0 at the
 * rows) and its first group's weights u, v (r11, r12: r1 at them) and row words A0, A1 (r7, r9). */
#define MTK_PAIR_M7_START         \
  "ldrd r3, r5, [sp, #8]\n\t"     \
  "ldr r0, [sp, #0]\n\t"          \
  "ldrd r4, r6, [r1]\n\t"         \
  "ldr r2, [r1, #8]\n\t"          \
  "ldrd r11, r12, [r1, #12]!\n\t" \
  "ldr r7, [r0]\n\t"              \
  "add r3, r3, r2\n\t"            \
  "ldr r9, [r0, #8]\n\t"          \
  "add r5, r5, r2\n\t"

/* The last group, loading m0, C0, e0, m1 (r7, r9, r11, r12) after its last reads of those registers. */
#define MTK_PAIR_M7_LAST                                                                         \
  MTK_FUSED_SPLIT_SUMS("ldr r7, [r1, #8]\n\t", "ldr r9, [r1, #12]\n\t", "ldr r11, [r1, #16]\n\t", \
                       "ldr r12, [r1, #20]\n\t")

/* The pair's 4 outputs: its sums doubled (as MTK_FUSED_PAIRS), c0's two rows with m0, C0, e0, c1's with m1, C1, e1
 * (C1, e1 at r1 + C1_AT, into r8, r10), row 1's output before row 0's (with stride 0, row 0's is the one left); SIGN
 * as in MTK_FUSED_REQUANT, each right after its SMMLAR (before its sum's register is overwritten); then r1 at the
 * next pair (+ NEXT_AT), until the output's end. */
#define MTK_PAIR_M7_REQUANT(SIGN, C1_AT, NEXT_AT) \
  "sub r3, r3, r4, lsl #8\n\t"                    \
  "ldrd r8, r10, [r1, #" C1_AT "]\n\t"            \
  "sub r5, r5, r6, lsl #8\n\t"                    \
  "add r1, r1, #" NEXT_AT "\n\t"                  \
  "add r3, r3, r3\n\t"                            \
  "add r5, r5, r5\n\t"                            \
  "smmlar r0, r5, r7, r9\n\t"                     \
  SIGN("r0", "r5")                                \
  "ldr r2, [sp, #16]\n\t"                         \
  "smmlar r5, r3, r7, r9\n\t"                     \
  SIGN("r5", "r3")                                \
  "add r4, r4, r4\n\t"                            \
  "asr r0, r0, r11\n\t"                           \
  "add r6, r6, r6\n\t"                            \
  "asr r5, r5, r11\n\t"                           \
  "ssat r0, #8, r0\n\t"                           \
  "smmlar r3, r6, r12, r8\n\t"                    \
  SIGN("r3", "r6")                                \
  "ssat r5, #8, r5\n\t"                           \
  "smmlar r6, r4, r12, r8\n\t"                    \
  SIGN("r6", "r4")                                \
  "strb r0, [lr, r2]\n\t"                         \
  "asr r3, r3, r10\n\t"                           \
  "strb r5, [lr], #1\n\t"                         \
  "asr r6, r6, r10\n\t"                           \
  "ldr r0, [sp, #20]\n\t"                         \
  "ssat r3, #8, r3\n\t"                           \
  "strb r3, [lr, r2]\n\t"                         \
  "ssat r6, #8, r6\n\t"                           \
  "strb r6, [lr], #1\n\t"                         \
  "cmp lr, r0\n\t"                                \
  "bne 1b\n\t"

#define MTK_FUSED_FIXED_PAIRS_SPLIT(N, SIGN)                                                 \
  "1:\n\t" MTK_PAIR_M7_START MTK_FUSED_REPEAT_##N(MTK_FUSED_SPLIT_GROUP) MTK_PAIR_M7_LAST \
  MTK_PAIR_M7_REQUANT(SIGN, "24", "32")
/* Any number of groups (more than 8): all but the last in passes of 16 (label 2), each group loading the next one's
 * operands (no pass reloads them), entered (−(groups − 1) mod 16) groups in ([sp, #24]), until r0 is at the last
 * group ([sp, #4]: the rows' end, left by the row sums, less a group); then the last group and the outputs as for a
 * number known when built. */
#define MTK_FUSED_ANY_PAIRS_SPLIT(SIGN)                                                                          \
  "sub r3, r0, #16\n\t"                                                                                          \
  "str r3, [sp, #4]\n\t"                                                                                         \
  "sub r3, r2, #1\n\t"                                                                                           \
  "rsb r3, r3, #0\n\t"                                                                                           \
  "and r3, r3, #15\n\t"                                                                                          \
  "movs r5, #" MTK_FUSED_SPLIT_SIZE "\n\t"                                                                        \
  "adr.w r4, 2f\n\t"                                                                                             \
  "mla r4, r3, r5, r4\n\t"                                                                                       \
  "orr r4, r4, #1\n\t"                                                                                           \
  "str r4, [sp, #24]\n"                                                                                           \
  "1:\n\t" MTK_PAIR_M7_START                                                                                     \
  "ldr pc, [sp, #24]\n"                                                                                          \
  "2:\n\t"                                                                                                       \
  MTK_FUSED_REPEAT_8(MTK_FUSED_SPLIT_GROUP) MTK_FUSED_REPEAT_8(MTK_FUSED_SPLIT_GROUP)                             \
  "ldr r2, [sp, #4]\n\t"                                                                                         \
  "cmp r0, r2\n\t"                                                                                               \
  "bne 2b\n\t" MTK_PAIR_M7_LAST MTK_PAIR_M7_REQUANT(SIGN, "24", "32")

/* The rows' sums Σx (as MTK_FUSED_ROW_SUMS): an odd first group as there, then two groups a pass, their first's words
 * loaded by LDRDs, the second's by single loads beside its first's SADD16s and SMLADs. */
#define MTK_FUSED_ROW_SUMS           \
  "lsrs r3, r2, #1\n\t"              \
  "bcc 4f\n\t"                       \
  MTK_FUSED_ROW_SUMS_GROUP           \
  "4:\n\t"                           \
  "beq 6f\n"                          \
  "3:\n\t"                           \
  "ldrd r9, r10, [r0]\n\t"           \
  "ldrd r11, r12, [r0, #8]\n\t"      \
  "sadd16 r9, r9, r10\n\t"           \
  "ldr r4, [r0, #16]\n\t"            \
  "sadd16 r11, r11, r12\n\t"         \
  "ldr r5, [r0, #20]\n\t"            \
  "smlad r6, r9, r8, r6\n\t"         \
  "ldr r10, [r0, #24]\n\t"           \
  "smlad r7, r11, r8, r7\n\t"        \
  "ldr r12, [r0, #28]\n\t"           \
  "sadd16 r4, r4, r5\n\t"            \
  "add r0, r0, #32\n\t"              \
  "sadd16 r10, r10, r12\n\t"         \
  "subs r3, r3, #1\n\t"              \
  "smlad r6, r4, r8, r6\n\t"         \
  "smlad r7, r10, r8, r7\n\t"        \
  "bne 3b\n"                          \
  "6:\n\t"

#endif /* MTK_FUSED_PAIR_M7_H_ */
