/* The one-row fused GEMM's loop ("1x4/fused": mtk_gemm_1x4_fused_s8 and its per-channel and chunked forms) for the
 * cores that issue a load beside a multiply (Cortex-M7) or take single loads cheaper than multiples (Cortex-M33):
 * included before mtk_dot_biased_s8.h, whose loop it replaces (kernels/table.py: CORE_FILES); the same sums in the
 * same registers, the same frame.
 *
 * Single loads instead of LDMs, each beside a multiply or an SXTB16: a group loads its own last weight word (lr),
 * the next group's row words and first three weight words, software-pipelined: the loop's pairs of groups start
 * with those of their first group loaded (MTK_FUSED_QUAD_ENTER loads them for the first pair, label 9 after an odd
 * first group), and the last pair (label 8's tail) loads nothing past its own, so that no load reads past the
 * packed row or the quad's weights. The loop runs the pairs but the last, 16 a pass (a 128-deep row's in one),
 * entered (−(pairs − 1) mod 16) pairs in (MTK_FUSED_QUAD_SETUP). */
#ifndef MTK_FUSED_ROW_DUAL_H_
#define MTK_FUSED_ROW_DUAL_H_

/* One group: row words A, B; weights r2, r11, r12, lr (W3: the load of lr, 2 cycles before its first use); s0 r3,
 * t0 r4, s1 r5, t1 r6. ROW1, ROW2, W0-W2: the loads of the next group's row words and weights, each after the last
 * read of its register (empty in the last group). Each SXTB16 and each load beside an SMLAD that does not read it. */
#define MTK_DUAL_GROUP(A, B, W3, ROW1, ROW2, W0, W1, W2) \
  "smlad r3, r2, " A ", r3\n\t" W3                        \
  "sxtb16 r2, r2, ror #8\n\t"                             \
  "smlad r3, r11, " B ", r3\n\t"                          \
  "sxtb16 r11, r11, ror #8\n\t"                           \
  "smlad r5, r12, " A ", r5\n\t"                          \
  "sxtb16 r12, r12, ror #8\n\t"                           \
  "smlad r5, lr, " B ", r5\n\t"                           \
  "sxtb16 lr, lr, ror #8\n\t" ROW1                        \
  "smlad r4, r2, " A ", r4\n\t" ROW2                      \
  "smlad r4, r11, " B ", r4\n\t" W0                       \
  "smlad r6, r12, " A ", r6\n\t" W1                       \
  "smlad r6, lr, " B ", r6\n\t" W2

/* The first group of a pair (rows r7, r8), loading the second's (r9, r10). */
#define MTK_DUAL_FIRST                                                                                          \
  MTK_DUAL_GROUP("r7", "r8", "ldr.w lr, [r1, #12]\n\t", "ldr.w r9, [r0, #8]\n\t", "ldr.w r10, [r0, #12]\n\t", \
                 "ldr.w r2, [r1, #16]\n\t", "ldr.w r11, [r1, #20]\n\t", "ldr.w r12, [r1, #24]\n\t")
/* A pair of groups loading the next pair's first group: every instruction 32 bits wide, MTK_FUSED_QUAD_PAIR_BYTES
 * bytes, which the entry into the loop's middle counts on. */
#define MTK_DUAL_PAIR                                                                                      \
  MTK_DUAL_FIRST                                                                                           \
  MTK_DUAL_GROUP("r9", "r10", "ldr.w lr, [r1, #28]\n\t", "ldr r7, [r0, #16]!\n\t", "ldr.w r8, [r0, #4]\n\t", \
                 "ldr r2, [r1, #32]!\n\t", "ldr.w r11, [r1, #4]\n\t", "ldr.w r12, [r1, #8]\n\t")
#define MTK_DUAL_STR(N) #N
#define MTK_DUAL_XSTR(N) MTK_DUAL_STR(N)
#define MTK_FUSED_QUAD_PAIR_SIZE 144
#define MTK_FUSED_QUAD_PAIR_BYTES MTK_DUAL_XSTR(MTK_FUSED_QUAD_PAIR_SIZE)

/* The first group's row words and weights but its last word (lr): an LDM and an LDRD where they take fewer cycles
 * than single loads (Cortex-M7: two registers a cycle), single loads on the Cortex-M33 (one cycle each, an LDM one
 * more than its registers). */
#if defined(__ARM_ARCH_8M_MAIN__)
#define MTK_DUAL_FIRST_LOADS \
  "ldr r2, [r1]\n\tldr r11, [r1, #4]\n\tldr r12, [r1, #8]\n\tldr r7, [r0]\n\tldr r8, [r0, #4]\n\t"
#else
#define MTK_DUAL_FIRST_LOADS "ldm r1, {r2, r11, r12}\n\tldrd r7, r8, [r0]\n\t"
#endif
/* Into the quad's loop: the first group's loads, then [sp, #12], the entry into the pass (an even row) or label 7. */
#define MTK_FUSED_QUAD_ENTER MTK_DUAL_FIRST_LOADS "ldr pc, [sp, #12]\n\t"

/* The quad's sums over the row: label 7 an odd first group (its loads MTK_FUSED_QUAD_ENTER's but lr; then, unless it
 * was the row, label 9), label 9 the next pair's first loads then the entry [sp, #16] into the pass at label 2;
 * label 8 a pass's end (r10 free), until one pair is left, the last pair after it. */
#define MTK_FUSED_QUAD_LOOP                                                                          \
  "7:\n\t"                                                                                           \
  "ldr.w lr, [r1, #12]\n\t"                                                                          \
  "add r0, r0, #8\n\t"                                                                               \
  "add r1, r1, #16\n\t"                                                                              \
  MTK_FUSED_QUAD_SUMS("r7", "r8")                                                                    \
  "ldr r2, [sp, #4]\n\t"                                                                             \
  "cmp r0, r2\n\t"                                                                                   \
  "beq 10f\n"                                                                                        \
  "9:\n\t"                                                                                           \
  MTK_DUAL_FIRST_LOADS                                                                               \
  "ldr pc, [sp, #16]\n"                                                                              \
  "2:\n\t"                                                                                           \
  MTK_DUAL_PAIR MTK_DUAL_PAIR MTK_DUAL_PAIR MTK_DUAL_PAIR MTK_DUAL_PAIR MTK_DUAL_PAIR MTK_DUAL_PAIR \
  MTK_DUAL_PAIR MTK_DUAL_PAIR MTK_DUAL_PAIR MTK_DUAL_PAIR MTK_DUAL_PAIR MTK_DUAL_PAIR MTK_DUAL_PAIR \
  MTK_DUAL_PAIR MTK_DUAL_PAIR                                                                        \
  "8:\n\t"                                                                                           \
  "ldr r9, [sp, #4]\n\t"                                                                             \
  "add r10, r0, #16\n\t"                                                                             \
  "cmp r10, r9\n\t"                                                                                  \
  "bne 2b\n\t"                                                                                       \
  MTK_DUAL_FIRST                                                                                     \
  MTK_DUAL_GROUP("r9", "r10", "ldr.w lr, [r1, #28]\n\t", "", "", "add r0, r0, #16\n\t", "add r1, r1, #32\n\t", "") \
  "10:\n\t"

/* The entry (MTK_FUSED_QUAD_SETUP): into the pass for the pairs but the last (label 8 for none). */
#define MTK_FUSED_QUAD_PIPELINED "subs r3, r3, #1\n\tbls 25f\n\t"
#define MTK_FUSED_QUAD_PASS_PAIRS 16   /* pairs a pass (a power of two) */
#define MTK_FUSED_QUAD_PASS MTK_DUAL_XSTR(MTK_FUSED_QUAD_PASS_PAIRS)

#endif /* MTK_FUSED_ROW_DUAL_H_ */
