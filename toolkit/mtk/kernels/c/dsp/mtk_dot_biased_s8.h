/* GEMM micro-kernels over "biased" int8 weights (gemm.py's "2x2/biased", "1x4/biased"; microkernels.py
 * pack_weights_biased): one SXTB16 per two weights of a channel pair instead of one per weight, at int8's flash.
 *
 * Two channels c0, c1 of a tile share each int16 halfword of the weights: its low byte c0[k] + 128
 * (unsigned), its high byte c1[k], so that the halfword is (c0[k] + 128) + 256 * c1[k]. Per group of 4 k
 * values a pair holds two words in SXTB16 order: A = halfwords (k0, k2), B = (k1, k3), matching the packed
 * rows' words (x0, x2), (x1, x3) (mtk_pack_row_s16). SMLAD of the raw words sums
 * S = Σ c0·x + 128·Σx + 256·Σ c1·x; SMLAD of their SXTB16 ROR 8 (c1's bytes) sums T = Σ c1·x. Then
 * c1's dot product is T and c0's is S − 256·T − 128·Σx, exact in wrapping int32 arithmetic.
 * The generated GEMM has mtk_pack_sums_s16 store each packed row's Σx after the block's sums in acc
 * (acc[4 + r]), where the kernels read it. */
#ifndef MTK_DOT_BIASED_S8_H_
#define MTK_DOT_BIASED_S8_H_

#include <stdint.h>

#include "mtk_dot_s8_dsp.h"

/* Inlined whatever their size, so that only the assembly a call site's constant arguments pick is linked in. */
#if defined(__GNUC__)
#define MTK_FUSED_INLINE static inline __attribute__((always_inline))
#else
#define MTK_FUSED_INLINE static inline
#endif

/* Σx of each of the `rows` (1 or 2) packed rows at x: sums[r]. */
static inline int32_t mtk_pack_sums_s16(const void* x, int32_t groups, int32_t rows, int32_t* sums) {
  const uint32_t* xp = (const uint32_t*)x;
  int32_t s0 = 0, s1 = 0;
  for (int32_t g = groups; g > 0; --g, xp += 2 * rows) {
    s0 = mtk_smlad(xp[0], 0x00010001u, mtk_smlad(xp[1], 0x00010001u, s0));
    if (rows == 2) s1 = mtk_smlad(xp[2], 0x00010001u, mtk_smlad(xp[3], 0x00010001u, s1));
  }
  sums[0] = s0;
  if (rows == 2) sums[1] = s1;
  return 0;
}

/* acc[r * 2 * pairs + 2p + i] = channel 2p + i of row r, from the pair sums S (s) and T (t) and Σx. */
static inline void mtk_biased_result(int32_t* acc, int32_t s, int32_t t, int32_t sum_x) {
  acc[0] = (int32_t)((uint32_t)s - ((uint32_t)t << 8) - ((uint32_t)sum_x << 7));
  acc[1] = t;
}

/* acc = the `rows` × 2·`pairs` dot products of packed rows x (mtk_pack_row_s16 / mtk_pack_pair_s16; their
 * Σx in acc[4 + r], mtk_pack_sums_s16) with a biased weight tile, over `groups` groups of 4, in C. */
static inline int32_t mtk_dot_biased(const void* x, const void* w, int32_t groups, int32_t* acc, int32_t rows,
                                     int32_t pairs) {
  int32_t s[2][2] = {{0, 0}, {0, 0}}, t[2][2] = {{0, 0}, {0, 0}};
  const uint32_t* xp = (const uint32_t*)x;
  const uint32_t* wp = (const uint32_t*)w;
  for (int32_t g = groups; g > 0; --g, xp += 2 * rows, wp += 2 * pairs)
    for (int32_t r = 0; r < rows; ++r)
      for (int32_t p = 0; p < pairs; ++p) {
        s[r][p] = mtk_smlad(wp[2 * p + 1], xp[2 * r + 1], mtk_smlad(wp[2 * p], xp[2 * r], s[r][p]));
        t[r][p] = mtk_smlad(mtk_sxtb16_ror8(wp[2 * p + 1]), xp[2 * r + 1],
                            mtk_smlad(mtk_sxtb16_ror8(wp[2 * p]), xp[2 * r], t[r][p]));
      }
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t p = 0; p < pairs; ++p) mtk_biased_result(acc + 2 * (r * pairs + p), s[r][p], t[r][p], acc[4 + r]);
  return 0;
}

#ifdef MTK_DSP_ASM
/* The DSP loops in assembly:
 * gcc 12 neither keeps 9 values in registers across the loop nor loads 4 words with one LDM. Each runs
 * groups in fours (a count of 4n + r, r > 0, enters the loop r groups before its end), the 4 words an LDM
 * loads in r8, r10-r12 (r7 may be the frame pointer, r9 the platform register: not used); u is free
 * before the loop. */
#define MTK_BIASED_LOOP(GROUP)                                          \
  "ands %[u], %[n], #3\n\t"                                             \
  "adds %[n], %[n], #3\n\t"                                             \
  "lsrs %[n], %[n], #2\n\t"                                             \
  "cmp %[u], #2\n\t"                                                    \
  "beq 3f\n\t"                                                          \
  "bhi 2f\n\t"                                                          \
  "cmp %[u], #1\n\t"                                                    \
  "beq 4f\n"                                                            \
  "1:\n\t" GROUP "2:\n\t" GROUP "3:\n\t" GROUP "4:\n\t" GROUP          \
  "subs %[n], %[n], #1\n\t"                                             \
  "bne 1b\n\t"

/* One group of two rows (r8, r10: row 0's (x0, x2), (x1, x3); r11, r12: row 1's) by a channel pair (u, v). As in
 * the fused kernels, each SXTB16 is followed by an SMLAD that does not read it (r8, read for the last time before
 * the second, takes it). */
#define MTK_BIASED_2X2_GROUP                   \
  "ldm %[xp]!, {r8, r10, r11, r12}\n\t"        \
  "ldrd %[u], %[v], [%[wp]], #8\n\t"           \
  "smlad %[s0], %[u], r8, %[s0]\n\t"           \
  "smlad %[s1], %[u], r11, %[s1]\n\t"          \
  "sxtb16 %[u], %[u], ror #8\n\t"              \
  "smlad %[s0], %[v], r10, %[s0]\n\t"          \
  "smlad %[t0], %[u], r8, %[t0]\n\t"           \
  "sxtb16 r8, %[v], ror #8\n\t"                \
  "smlad %[s1], %[v], r12, %[s1]\n\t"          \
  "smlad %[t1], %[u], r11, %[t1]\n\t"          \
  "smlad %[t0], r8, r10, %[t0]\n\t"            \
  "smlad %[t1], r8, r12, %[t1]\n\t"

/* One group of a row (u, v) by two channel pairs (r8, r10: pair 0's words; r11, r12: pair 1's), each SXTB16
 * followed by an SMLAD that does not read it. */
#define MTK_BIASED_1X4_GROUP                   \
  "ldrd %[u], %[v], [%[xp]], #8\n\t"           \
  "ldm %[wp]!, {r8, r10, r11, r12}\n\t"        \
  "smlad %[s0], r8, %[u], %[s0]\n\t"           \
  "sxtb16 r8, r8, ror #8\n\t"                  \
  "smlad %[s0], r10, %[v], %[s0]\n\t"          \
  "sxtb16 r10, r10, ror #8\n\t"                \
  "smlad %[t0], r8, %[u], %[t0]\n\t"           \
  "smlad %[s1], r11, %[u], %[s1]\n\t"          \
  "sxtb16 r11, r11, ror #8\n\t"                \
  "smlad %[t0], r10, %[v], %[t0]\n\t"          \
  "smlad %[s1], r12, %[v], %[s1]\n\t"          \
  "sxtb16 r12, r12, ror #8\n\t"                \
  "smlad %[t1], r11, %[u], %[t1]\n\t"          \
  "smlad %[t1], r12, %[v], %[t1]\n\t"

/* 2x2: {p0.c0, p0.c1, p1.c0, p1.c1}, two packed rows (mtk_pack_pair_s16) by a biased tile of 2 channels;
 * 1x4: {c0, c1, c2, c3}, a packed row (mtk_pack_row_s16) by a biased tile of 4 channels. */
static inline int32_t mtk_dot_biased_dsp(const void* x, const void* w, int32_t groups, int32_t* acc, int32_t rows) {
  const uint32_t* xp = (const uint32_t*)x;
  const uint32_t* wp = (const uint32_t*)w;
  int32_t s0 = 0, t0 = 0, s1 = 0, t1 = 0;
  uint32_t n = (uint32_t)groups, u, v;
#define MTK_BIASED_OPERANDS                                                                                   \
  : [xp] "+r"(xp), [wp] "+r"(wp), [n] "+r"(n), [s0] "+r"(s0), [t0] "+r"(t0), [s1] "+r"(s1), [t1] "+r"(t1), \
    [u] "=&r"(u), [v] "=&r"(v)                                                                                \
  :                                                                                                           \
  : "r8", "r10", "r11", "r12", "cc", "memory"
  if (rows == 2)
    __asm__ volatile(MTK_BIASED_LOOP(MTK_BIASED_2X2_GROUP) MTK_BIASED_OPERANDS);
  else
    __asm__ volatile(MTK_BIASED_LOOP(MTK_BIASED_1X4_GROUP) MTK_BIASED_OPERANDS);
#undef MTK_BIASED_OPERANDS
  mtk_biased_result(acc, s0, t0, acc[4]);
  mtk_biased_result(acc + 2, s1, t1, acc[4 + rows - 1]);
  return 0;
}

static inline int32_t mtk_dot_2x2_biased_s8(const void* x, const void* w, int32_t groups, int32_t* acc) {
  return mtk_dot_biased_dsp(x, w, groups, acc, 2);
}

static inline int32_t mtk_dot_1x4_biased_s8(const void* x, const void* w, int32_t groups, int32_t* acc) {
  return mtk_dot_biased_dsp(x, w, groups, acc, 1);
}
#else
static inline int32_t mtk_dot_2x2_biased_s8(const void* x, const void* w, int32_t groups, int32_t* acc) {
  return mtk_dot_biased(x, w, groups, acc, 2, 1);
}

static inline int32_t mtk_dot_1x4_biased_s8(const void* x, const void* w, int32_t groups, int32_t* acc) {
  return mtk_dot_biased(x, w, groups, acc, 1, 2);
}
#endif

/* The whole GEMM of two packed rows with the requantization fused ("2x2/fused": gemm.py, microkernels.py
 * pack_fused_stream): every channel pair of the layer in one call, the 2x2 biased sums above, then TFLM's
 * MultiplyByQuantizedMultiplier (every channel shifts right), + out_zp, saturated to int8, clamped and stored.
 *
 * The weights come as one stream, per channel pair (c0, c1): the words b1, b1, b0 + 256·b1 (the biases with
 * −in_zp·Σw folded in: the sums start from them, and b0's sum from −128·Σx of its row too, so that c0's
 * sum is S − 256·T), the pair's biased weights, then per channel its multiplier m, rounding term C and
 * shift e. With x2 = 2·(Σ + bias) (no overflow: gemm.py checks the layer's bounds offline),
 * SaturatingRoundingDoublingHighMul(x, m) = ⌊(x·m + 2^30) / 2^31⌋ (its nudge rounds half up for either
 * sign) = SMMULR(x2, m), and RoundingDivideByPOT by e then + out_zp is ⌊(h + 2^(e−1) − [x < 0]) / 2^e⌋ +
 * out_zp: SMMLAR adds C = 2^(e−1) + out_zp·2^e (gemm.py checks it does not overflow either), x2's sign
 * bit the −[x < 0]. Row 1 goes `stride` bytes after row 0 (0: the same row twice, an odd last row). */
static inline int32_t mtk_requant_x2(int32_t x2, int32_t m, int32_t c, int32_t e) {
  int64_t p = mtk_mul_s32_s64(x2, m) + (int64_t)((uint64_t)(int64_t)c << 32) + 2147483648LL;
  int32_t v = (int32_t)(p >> 32) + (x2 >> 31);
  v >>= e;
  return v < -128 ? -128 : (v > 127 ? 127 : v);
}

#define MTK_FUSED_HEAD 12   /* bytes of b1, b1, b0 + 256·b1 before a pair's weights */
#define MTK_FUSED_TAIL 24   /* bytes of (m, C, e) x 2 after them */

/* Channel pair `t` of the stream: `channels` (1 or 2) of its outputs for both rows, clamped to [lo, hi], in C. */
static inline void mtk_fused_tile_c(const void* x, const uint8_t* t, int32_t groups, int8_t* out, int32_t stride,
                                    int32_t channels, const int32_t* sums, int32_t lo, int32_t hi) {
  int32_t acc[6], bias[2];
  const int32_t* head = (const int32_t*)t;
  const int32_t* q = (const int32_t*)(t + MTK_FUSED_HEAD + 8 * groups);
  acc[4] = sums[0], acc[5] = sums[1];
  bias[1] = head[0];
  bias[0] = (int32_t)((uint32_t)head[2] - ((uint32_t)head[0] << 8));
  mtk_dot_biased(x, t + MTK_FUSED_HEAD, groups, acc, 2, 1);
  for (int32_t r = 1; r >= 0; --r)   /* row 1 first: with stride 0, row 0's are the ones left */
    for (int32_t c = 0; c < channels; ++c) {
      int32_t x2 = (int32_t)(((uint32_t)acc[2 * r + c] + (uint32_t)bias[c]) << 1);
      int32_t v = mtk_requant_x2(x2, q[3 * c], q[3 * c + 1], q[3 * c + 2]);
      out[r * stride + c] = (int8_t)(v < lo ? lo : (v > hi ? hi : v));
    }
}

#ifdef MTK_DSP_ASM
/* One group of the pair's sums: rows (r7, r8), (r9, r10), weights (r11, r12); s0 r3, t0 r4, s1 r5, t1 r6. Its six
 * words loaded one by one, back to back (each load after another takes a cycle on the Cortex-M4: one fewer than an
 * LDM of the rows and an LDRD of the weights). Each SXTB16 is followed by an SMLAD that does not read its result
 * (r7, read for the last time before it, takes the second). */
#define MTK_FUSED_GROUP                   \
  "ldr.w r8, [r0, #4]\n\t"                \
  "ldr.w r9, [r0, #8]\n\t"                \
  "ldr.w r10, [r0, #12]\n\t"              \
  "ldr r7, [r0], #16\n\t"                 \
  "ldr.w r12, [r1, #4]\n\t"               \
  "ldr r11, [r1], #8\n\t"                 \
  "smlad r3, r11, r7, r3\n\t"             \
  "smlad r5, r11, r9, r5\n\t"             \
  "sxtb16 r11, r11, ror #8\n\t"           \
  "smlad r3, r12, r8, r3\n\t"             \
  "smlad r4, r11, r7, r4\n\t"             \
  "sxtb16 r7, r12, ror #8\n\t"            \
  "smlad r5, r12, r10, r5\n\t"            \
  "smlad r6, r11, r9, r6\n\t"             \
  "smlad r4, r7, r8, r4\n\t"              \
  "smlad r6, r7, r10, r6\n\t"
/* RoundingDivideByPOT's "− 1 when negative" on the product V of the sum X (SIGN below): with it, or without it
 * (NO_SIGN), where a negative sum can only give the activation's minimum (requant.negative_rounding_matters). */
#define MTK_FUSED_SIGN(V, X) "add " V ", " V ", " X ", asr #31\n\t"
#define MTK_FUSED_NO_SIGN(V, X) ""
/* The int8 output of x2 (register X) with multiplier M, rounding term C and shift E, in r0. */
#define MTK_FUSED_REQUANT(X, M, C, E, SIGN) \
  "smmlar r0, " X ", " M ", " C "\n\t"      \
  SIGN("r0", X)                             \
  "asr r0, r0, " E "\n\t"                   \
  "ssat r0, #8, r0\n\t"
/* Two outputs, of X (M1, C1, E1: in r0, stored by STORE_X) and of Y (M2, C2, E2: in T, which may be X, stored by
 * STORE_Y): MTK_FUSED_REQUANT's instructions of each, interleaved (the Cortex-M7 issues them two at a time). */
#define MTK_FUSED_REQUANT_PAIR(X, M1, C1, E1, STORE_X, Y, M2, C2, E2, T, STORE_Y, SIGN) \
  "smmlar r0, " X ", " M1 ", " C1 "\n\t"                                            \
  SIGN("r0", X)                                                                     \
  "smmlar " T ", " Y ", " M2 ", " C2 "\n\t"                                         \
  "asr r0, r0, " E1 "\n\t"                                                          \
  SIGN(T, Y)                                                                        \
  "ssat r0, #8, r0\n\t"                                                             \
  "asr " T ", " T ", " E2 "\n\t"                                              \
  STORE_X "\n\t"                                                              \
  "ssat " T ", #8, " T "\n\t"                                                 \
  STORE_Y "\n\t"

/* One group of the rows' sums Σx (r6, r7): its 4 words (r9, r10: row 0's; r11, r12: row 1's), r0 moved on. An LDM,
 * but on the Cortex-M33 single loads (one cycle each, an LDM one more than its registers), the last one's result not
 * read next (its load-use stall). */
#if defined(__ARM_ARCH_8M_MAIN__)
#define MTK_FUSED_ROW_SUMS_LOADS \
  "ldr r9, [r0], #16\n\tldr r10, [r0, #-12]\n\tldr r11, [r0, #-8]\n\tldr r12, [r0, #-4]\n\t"
#else
#define MTK_FUSED_ROW_SUMS_LOADS "ldm r0!, {r9, r10, r11, r12}\n\t"
#endif
#define MTK_FUSED_ROW_SUMS_GROUP        \
  MTK_FUSED_ROW_SUMS_LOADS             \
  "sadd16 r9, r9, r10\n\t"             \
  "sadd16 r11, r11, r12\n\t"           \
  "smlad r6, r9, r8, r6\n\t"           \
  "smlad r7, r11, r8, r7\n\t"
/* The rows' sums as −128·Σx of each of the two packed rows at r0 (r2 groups) into [sp, #AT] and [sp, #AT + 4]; r0
 * moved past the rows, r3-r12 used. */
#define MTK_FUSED_ROW_SUMS_AT(AT)  \
  "movs r6, #0\n\t"              \
  "movs r7, #0\n\t"              \
  "mov.w r8, #0x10001\n\t"       \
  MTK_FUSED_ROW_SUMS              \
  "movs r3, #0\n\t"              \
  "sub r6, r3, r6, lsl #7\n\t"   \
  "sub r7, r3, r7, lsl #7\n\t"   \
  "strd r6, r7, [sp, #" AT "]\n\t"
/* f: packed rows, stream, groups, channel pairs (> 0), out, stride, the activation range. Naked, so that every
 * register but sp is the loop's (the frame pointer, r7, too): first the rows' sums Σx (SADD16 of a row's two
 * words, SMLAD with 1s), then per channel pair its sums over the groups (GROUPS, from label 1: the pair's first
 * sums in r3-r6, r0 at the rows), then EPILOGUE requantizes and stores the pair's 4 outputs; the frame on the stack:
 * [0] rows, [4] passes, [8] −128·Σx of row 0 and of row 1, [16] stride, [20] the output's end, [24] the entry,
 * [28] the range, [36] the passes left (SPLIT). */
#define MTK_FUSED_NAKED(NAME, PAIRS)                                                                   \
__attribute__((naked, noinline, unused)) static void NAME(__attribute__((unused)) const int32_t* f) {  \
  __asm__ volatile(                                                                                    \
      "push {r4-r11, lr}\n\t"                                                                          \
      "sub sp, sp, #40\n\t"                                                                            \
      "ldm r0, {r0-r7}\n\t"                                                                            \
      "strd r6, r7, [sp, #28]\n\t"                                                                     \
      "str r0, [sp, #0]\n\t"                                                                           \
      "str r5, [sp, #16]\n\t"                                                                          \
      "add r3, r4, r3, lsl #1\n\t"                                                                     \
      "str r3, [sp, #20]\n\t"                                                                          \
      "mov lr, r4\n\t"                                                                                 \
      MTK_FUSED_ROW_SUMS_AT("8")                                                                       \
      PAIRS                                                                                            \
      "add sp, sp, #40\n\t"                                                                            \
      "pop {r4-r11, pc}\n\t");                                                                         \
}
/* The loop over the channel pairs: GROUPS, the sums doubled, EPILOGUE, until the output's end. */
#define MTK_FUSED_PAIRS(GROUPS, EPILOGUE) \
  GROUPS                                  \
  "sub r3, r3, r4, lsl #8\n\t"            \
  "sub r5, r5, r6, lsl #8\n\t"            \
  "add r3, r3, r3\n\t"                    \
  "add r4, r4, r4\n\t"                    \
  "add r5, r5, r5\n\t"                    \
  "add r6, r6, r6\n\t"                    \
  EPILOGUE                                \
  "ldr r0, [sp, #20]\n\t"                 \
  "cmp lr, r0\n\t"                        \
  "bne 1b\n\t"
#define MTK_FUSED_DSP_WITH(NAME, EPILOGUE, GROUPS) MTK_FUSED_NAKED(NAME, MTK_FUSED_PAIRS(GROUPS, EPILOGUE))
/* The rows' sums Σx into r6, r7 (zero) over the r2 groups of the two rows at r0 (r8: 0x10001; r3-r5, r9-r12 free), a
 * group of the two rows' 4 words a pass; a core's own file may give its own loop. */
#ifndef MTK_FUSED_ROW_SUMS
#define MTK_FUSED_ROW_SUMS                 \
  "mov r3, r2\n"                           \
  "3:\n\t"                                 \
  MTK_FUSED_ROW_SUMS_GROUP                 \
  "subs r3, r3, #1\n\t"                    \
  "bne 3b\n\t"
#endif
/* A pair's first sums: −128·Σx of each row plus the head's b0 + 256·b1 for c0, b1 for c1; r0 back at the rows. */
#define MTK_FUSED_PAIR_START            \
  "ldr r0, [sp, #0]\n\t"                \
  "ldrd r3, r5, [sp, #8]\n\t"           \
  "ldm r1!, {r4, r6, r7}\n\t"           \
  "add r3, r3, r7\n\t"                  \
  "add r5, r5, r7\n\t"
/* The groups' schedules S. BURST: MTK_FUSED_GROUP (a group's words loaded back to back: the fewest cycles where a load
 * issues alone, the Cortex-M4). SPLIT: each load beside a multiply (the Cortex-M7 issues the two together; the M33's
 * loads take a cycle: two_loads_beat_ldrd). A schedule's PRELOAD before a pair's first group, GROUP (every instruction
 * 32 bits wide: SIZE bytes, which the entry into the loop's middle counts on), LAST for the pair's last group, and the
 * pass count of the loop over any number of groups: COUNT at a pair's start, STEP at a pass's end (flags set: zero
 * after the last pass). */
#define MTK_FUSED_BURST_PRELOAD ""
#define MTK_FUSED_BURST_GROUP MTK_FUSED_GROUP
#define MTK_FUSED_BURST_LAST MTK_FUSED_GROUP
#define MTK_FUSED_BURST_SIZE "64"
#define MTK_FUSED_BURST_COUNT "ldr r2, [sp, #4]\n\t"
#define MTK_FUSED_BURST_STEP "subs r2, r2, #1\n\t"
/* SPLIT: a group's weights u, v (r11, r12) and row words A0, A1 (r7, r9: (x0, x2) of each row) loaded before it (by
 * the group before, or PRELOAD), its B0, B1 (r8, r10) in it, then the next group's as their registers free (NEXT): 8
 * cycles a group on the Cortex-M7, each SMLAD beside a load or an SXTB16 it does not read (v's high bytes in r2: the
 * pass count on the stack, [36]). The last group loads none ahead (nothing past the rows is read), r0 and r1 moved on
 * all the same. */
#define MTK_FUSED_SPLIT_PRELOAD "ldrd r11, r12, [r1]\n\tldr r7, [r0]\n\tldr r9, [r0, #8]\n\t"
#define MTK_FUSED_SPLIT_SUMS(NEXT_A0, NEXT_U, NEXT_A1, NEXT_V) \
  "smlad r3, r11, r7, r3\n\t"                                  \
  "ldr.w r8, [r0, #4]\n\t"                                     \
  "smlad r5, r11, r9, r5\n\t"                                  \
  "ldr.w r10, [r0, #12]\n\t"                                   \
  "sxtb16 r11, r11, ror #8\n\t"                                \
  "smlad r3, r12, r8, r3\n\t"                                  \
  "sxtb16 r2, r12, ror #8\n\t"                                 \
  "smlad r4, r11, r7, r4\n\t"                                  \
  "smlad r6, r11, r9, r6\n\t"                                  \
  NEXT_A0                                                      \
  "smlad r5, r12, r10, r5\n\t"                                 \
  NEXT_U                                                       \
  "smlad r4, r2, r8, r4\n\t"                                   \
  NEXT_A1                                                      \
  "smlad r6, r2, r10, r6\n\t"                                  \
  NEXT_V
#define MTK_FUSED_SPLIT_GROUP                                                                          \
  MTK_FUSED_SPLIT_SUMS("ldr r7, [r0, #16]!\n\t", "ldr r11, [r1, #8]!\n\t", "ldr.w r9, [r0, #8]\n\t", \
                       "ldr.w r12, [r1, #4]\n\t")
#define MTK_FUSED_SPLIT_LAST MTK_FUSED_SPLIT_SUMS("add r0, r0, #16\n\t", "add r1, r1, #8\n\t", "", "")
#define MTK_FUSED_SPLIT_SIZE "64"
#define MTK_FUSED_SPLIT_COUNT "ldr r2, [sp, #4]\n\tstr r2, [sp, #36]\n\t"
#define MTK_FUSED_SPLIT_STEP "ldr r2, [sp, #36]\n\tsubs r2, r2, #1\n\tstr r2, [sp, #36]\n\t"
/* Any number of groups: 16 a pass (label 5), entered (−groups mod 16) groups in (label 2 and on). */
#define MTK_FUSED_ANY_GROUPS(S)                                                                        \
      "adds r3, r2, #15\n\t"                                                                           \
      "lsrs r3, r3, #4\n\t"                                                                            \
      "str r3, [sp, #4]\n\t"                                                                           \
      "rsb r2, r2, #0\n\t"                                                                             \
      "and r2, r2, #15\n\t"                                                                            \
      "movs r3, #" MTK_FUSED_##S##_SIZE "\n\t"                                                         \
      "adr.w r4, 2f\n\t"                                                                               \
      "mla r2, r2, r3, r4\n\t"                                                                         \
      "orr r2, r2, #1\n\t"                                                                             \
      "str r2, [sp, #24]\n\t"                                                                          \
      "1:\n\t"                                                                                         \
      MTK_FUSED_##S##_COUNT                                                                            \
      MTK_FUSED_PAIR_START                                                                             \
      MTK_FUSED_##S##_PRELOAD                                                                          \
      "ldr pc, [sp, #24]\n"                                                                            \
      "5:\n\t"                                                                                         \
      MTK_FUSED_##S##_PRELOAD                                                                          \
      "2:\n\t"                                                                                         \
      MTK_FUSED_REPEAT_8(MTK_FUSED_##S##_GROUP) MTK_FUSED_REPEAT_7(MTK_FUSED_##S##_GROUP)              \
      MTK_FUSED_##S##_LAST                                                                             \
      MTK_FUSED_##S##_STEP                                                                             \
      "bne 5b\n\t"
/* N + 1 groups, a number known when it is built: straight, no jump into a loop, no pass count. */
#define MTK_FUSED_GROUPS(S, N) "1:\n\t" MTK_FUSED_PAIR_START MTK_FUSED_##S##_PRELOAD \
  MTK_FUSED_REPEAT_##N(MTK_FUSED_##S##_GROUP) MTK_FUSED_##S##_LAST
#define MTK_FUSED_REPEAT_0(G)
#define MTK_FUSED_REPEAT_1(G) G
#define MTK_FUSED_REPEAT_2(G) G G
#define MTK_FUSED_REPEAT_3(G) G G G
#define MTK_FUSED_REPEAT_4(G) G G G G
#define MTK_FUSED_REPEAT_5(G) MTK_FUSED_REPEAT_4(G) G
#define MTK_FUSED_REPEAT_6(G) MTK_FUSED_REPEAT_4(G) G G
#define MTK_FUSED_REPEAT_7(G) MTK_FUSED_REPEAT_4(G) G G G
#define MTK_FUSED_REPEAT_8(G) MTK_FUSED_REPEAT_4(G) MTK_FUSED_REPEAT_4(G)
#define MTK_FUSED_DSP(NAME, EPILOGUE) MTK_FUSED_DSP_WITH(NAME, EPILOGUE, MTK_FUSED_ANY_GROUPS(BURST))
/* The outputs as they are (the activation range is all of int8), or clamped to the range (r10, r11). Unclamped, a
 * channel's two outputs are requantized together, the second in the first's value register. */
#define MTK_FUSED_SATURATED(SIGN)                                                                             \
  "ldm r1!, {r7-r12}\n\t"                                                                                     \
  "ldr r2, [sp, #16]\n\t"                                                                                     \
  MTK_FUSED_REQUANT_PAIR("r5", "r7", "r8", "r9", "strb r0, [lr, r2]", "r3", "r7", "r8", "r9", "r5",                \
                         "strb r5, [lr], #1", SIGN)                                                                \
  MTK_FUSED_REQUANT_PAIR("r6", "r10", "r11", "r12", "strb r0, [lr, r2]", "r4", "r10", "r11", "r12", "r6",          \
                         "strb r6, [lr], #1", SIGN)
#define MTK_FUSED_CLAMP "cmp r0, r10\n\tit lt\n\tmovlt r0, r10\n\tcmp r0, r11\n\tit gt\n\tmovgt r0, r11\n\t"
#define MTK_FUSED_CLAMPED(SIGN)                                                          \
  "ldm r1!, {r7, r8, r9}\n\t"                                                          \
  "ldr r2, [sp, #16]\n\t"                                                              \
  "ldrd r10, r11, [sp, #28]\n\t"                                                       \
  MTK_FUSED_REQUANT("r5", "r7", "r8", "r9", SIGN) MTK_FUSED_CLAMP "strb r0, [lr, r2]\n\t" \
  MTK_FUSED_REQUANT("r3", "r7", "r8", "r9", SIGN) MTK_FUSED_CLAMP "strb r0, [lr], #1\n\t" \
  "ldm r1!, {r7, r8, r9}\n\t"                                                          \
  MTK_FUSED_REQUANT("r6", "r7", "r8", "r9", SIGN) MTK_FUSED_CLAMP "strb r0, [lr, r2]\n\t" \
  MTK_FUSED_REQUANT("r4", "r7", "r8", "r9", SIGN) MTK_FUSED_CLAMP "strb r0, [lr], #1\n\t"
MTK_FUSED_DSP(mtk_gemm_2x2_fused_clamped_dsp, MTK_FUSED_CLAMPED(MTK_FUSED_SIGN))
MTK_FUSED_DSP(mtk_gemm_2x2_fused_clamped_nosign_dsp, MTK_FUSED_CLAMPED(MTK_FUSED_NO_SIGN))
/* The saturated kernels of schedule S (named s) for any number of groups and, each its own, for 1 to 8 (the
 * few-input-channel layers: MobileNet's expansions), with and without the sign term. */
#define MTK_FUSED_SATURATED_DSP(s, G, SIGNED, UNSIGNED)                  \
  MTK_FUSED_NAKED(mtk_gemm_2x2_fused_##s##_##G##_dsp, SIGNED)              \
  MTK_FUSED_NAKED(mtk_gemm_2x2_fused_##s##_##G##_nosign_dsp, UNSIGNED)
/* The pair loops of schedule S for any number of groups and for N + 1; a core's own file may give the SPLIT ones
 * (MTK_FUSED_ANY_PAIRS_SPLIT, MTK_FUSED_FIXED_PAIRS_SPLIT). */
#define MTK_FUSED_ANY_PAIRS_BURST(SIGN) MTK_FUSED_PAIRS(MTK_FUSED_ANY_GROUPS(BURST), MTK_FUSED_SATURATED(SIGN))
#define MTK_FUSED_FIXED_PAIRS_BURST(N, SIGN) MTK_FUSED_PAIRS(MTK_FUSED_GROUPS(BURST, N), MTK_FUSED_SATURATED(SIGN))
#ifndef MTK_FUSED_ANY_PAIRS_SPLIT
#define MTK_FUSED_ANY_PAIRS_SPLIT(SIGN) MTK_FUSED_PAIRS(MTK_FUSED_ANY_GROUPS(SPLIT), MTK_FUSED_SATURATED(SIGN))
#endif
#ifndef MTK_FUSED_FIXED_PAIRS_SPLIT
#define MTK_FUSED_FIXED_PAIRS_SPLIT(N, SIGN) MTK_FUSED_PAIRS(MTK_FUSED_GROUPS(SPLIT, N), MTK_FUSED_SATURATED(SIGN))
#endif
#define MTK_FUSED_FIXED_DSP(S, s, N, G)                                                  \
  MTK_FUSED_SATURATED_DSP(s, G, MTK_FUSED_FIXED_PAIRS_##S(N, MTK_FUSED_SIGN),            \
                          MTK_FUSED_FIXED_PAIRS_##S(N, MTK_FUSED_NO_SIGN))
#define MTK_FUSED_SCHEDULE_DSP(S, s)                                                                         \
  MTK_FUSED_SATURATED_DSP(s, any, MTK_FUSED_ANY_PAIRS_##S(MTK_FUSED_SIGN), MTK_FUSED_ANY_PAIRS_##S(MTK_FUSED_NO_SIGN)) \
  MTK_FUSED_FIXED_DSP(S, s, 0, g1) MTK_FUSED_FIXED_DSP(S, s, 1, g2) MTK_FUSED_FIXED_DSP(S, s, 2, g3)            \
  MTK_FUSED_FIXED_DSP(S, s, 3, g4) MTK_FUSED_FIXED_DSP(S, s, 4, g5) MTK_FUSED_FIXED_DSP(S, s, 5, g6)            \
  MTK_FUSED_FIXED_DSP(S, s, 6, g7) MTK_FUSED_FIXED_DSP(S, s, 7, g8)
MTK_FUSED_SCHEDULE_DSP(BURST, burst)
MTK_FUSED_SCHEDULE_DSP(SPLIT, split)
/* The saturated kernel of `groups` groups: its own for up to 8, else any number's; split: the SPLIT schedule. */
MTK_FUSED_INLINE void mtk_gemm_2x2_fused_saturated_dsp(const int32_t* f, int32_t groups, int32_t sign, int32_t split) {
#define MTK_FUSED_CALL(s, G) (sign ? mtk_gemm_2x2_fused_##s##_##G##_dsp(f) : mtk_gemm_2x2_fused_##s##_##G##_nosign_dsp(f))
#define MTK_FUSED_FIXED_CASE(G) \
  case G: split ? MTK_FUSED_CALL(split, g##G) : MTK_FUSED_CALL(burst, g##G); return;
  switch (groups) {
    MTK_FUSED_FIXED_CASE(1) MTK_FUSED_FIXED_CASE(2) MTK_FUSED_FIXED_CASE(3) MTK_FUSED_FIXED_CASE(4)
    MTK_FUSED_FIXED_CASE(5) MTK_FUSED_FIXED_CASE(6) MTK_FUSED_FIXED_CASE(7) MTK_FUSED_FIXED_CASE(8)
    default: split ? MTK_FUSED_CALL(split, any) : MTK_FUSED_CALL(burst, any);
  }
#undef MTK_FUSED_FIXED_CASE
#undef MTK_FUSED_CALL
}
#define MTK_FUSED_ASM 1
#endif

/* The GEMM of the two packed rows at x (mtk_pack_pair_s16 and the like) with all `channels` of the stream w,
 * outputs of row 0 at out, of row 1 `stride` bytes on, clamped to the activation range [lo, hi]; sign: 0 where a
 * negative sum can only give lo (requant.negative_rounding_matters), so that the assembly leaves RoundingDivideByPOT's
 * "− 1 when negative" out (the C keeps it: the same outputs); split: the assembly's SPLIT schedule (single loads:
 * gemm.py asks asm_schedule.two_loads_beat_ldrd), else BURST's. Inlined, so that only the assembly the call's constants
 * pick is linked in. */
MTK_FUSED_INLINE int32_t mtk_gemm_2x2_fused_s8(const void* x, const void* w, int32_t groups, int32_t channels,
                                               void* out, int32_t stride, int32_t lo, int32_t hi, int32_t sign,
                                               int32_t split) {
  int32_t sums[2] = {0, 0}, pairs = channels >> 1, tile = MTK_FUSED_HEAD + 8 * groups + MTK_FUSED_TAIL;
  int8_t* o = (int8_t*)out;
  const uint8_t* t = (const uint8_t*)w;
#ifndef MTK_FUSED_ASM
  (void)sign, (void)split;
#else
  if (pairs > 0) {
    const int32_t f[8] = {(int32_t)x, (int32_t)w, groups, pairs, (int32_t)out, stride, lo, hi};
    if (lo == -128 && hi == 127)
      mtk_gemm_2x2_fused_saturated_dsp(f, groups, sign, split);
    else
      sign ? mtk_gemm_2x2_fused_clamped_dsp(f) : mtk_gemm_2x2_fused_clamped_nosign_dsp(f);
  }
  t += pairs * tile, o += 2 * pairs;
  pairs = 0;
#endif
  if (pairs > 0 || (channels & 1)) mtk_pack_sums_s16(x, groups, 2, sums);   /* (the assembly sums them itself) */
  for (int32_t p = 0; p < pairs; ++p, t += tile, o += 2) mtk_fused_tile_c(x, t, groups, o, stride, 2, sums, lo, hi);
  if (channels & 1) mtk_fused_tile_c(x, t, groups, o, stride, 1, sums, lo, hi);
  return 0;
}

/* The rows at out (two, `stride` apart; one when stride is 0), each holding its computed channels' outputs at its start,
 * spread in place to all its `channels` from its end down (a computed channel's index is at most its own): after the
 * stream's stream_bytes at w, per channel its constant output (int8), then (at an even byte) the computed channel it
 * is (int16; -1: a constant one). */
static inline void mtk_fused_spread_live(void* out, int32_t stride, const void* w, int32_t channels,
                                         int32_t stream_bytes) {
  const int8_t* fill = (const int8_t*)w + stream_bytes;
  const int16_t* source = (const int16_t*)(fill + channels + (channels & 1));
  for (int32_t r = 0; r < (stride ? 2 : 1); ++r) {
    int8_t* row = (int8_t*)out + r * stride;
    for (int32_t c = channels - 1; c >= 0; --c) row[c] = source[c] < 0 ? fill[c] : row[source[c]];
  }
}

/* mtk_gemm_2x2_fused_s8 over a layer's live channels only ("2x2/fused" with constant channels left out: gemm.py):
 * the stream of its `live` channels, then the tables mtk_fused_spread_live reads. */
MTK_FUSED_INLINE int32_t mtk_gemm_2x2_fused_live_s8(const void* x, const void* w, int32_t groups, int32_t live,
                                                    void* out, int32_t stride, int32_t lo, int32_t hi, int32_t sign,
                                                    int32_t split, int32_t channels, int32_t stream_bytes) {
  mtk_gemm_2x2_fused_s8(x, w, groups, live, out, stride, lo, hi, sign, split);
  mtk_fused_spread_live(out, stride, w, channels, stream_bytes);
  return 0;
}

/* The whole GEMM of one packed row (mtk_pack_row_s16) with the requantization fused ("1x4/fused", pack_fused_stream
 * with tiles of 4): the stream starts with the layer's m, C and e (as mtk_gemm_2x2_fused_s8's; zeros when its
 * channels have their own: the _pc kernels), then per channel quad (the last one zero-padded) its head, the words
 * b0 + 256·b1, b1, b2 + 256·b3, b3 (the sums start from them, c0's and c2's from −128·Σx too), the quad's
 * biased weights (1x4/biased's) and, per channel of their own, its m, C and e (MTK_FUSED_QUAD_PARAMS bytes). A chunked stream (a row too deep for the arena's scratch, packed a chunk at a time:
 * mtk_gemm_1x4_fused_chunk_s8) holds the same bytes chunk by chunk: the first chunk's weights of every quad, each
 * after its head, then the next chunk's of every quad, and so on. Between chunks, a quad's partial sums stay in
 * the head's form (c0 + 256·c1, c1, c2 + 256·c3, c3: the bias and the chunks so far). */
#define MTK_FUSED_QUAD_HEAD 16
#define MTK_FUSED_QUAD_PARAMS 48

/* Adds the dot products of the packed row x with the quad's biased weights w to its head-form sums s. */
static inline void mtk_fused_quad_add(const void* x, const void* w, int32_t groups, uint32_t* s, int32_t sum_x) {
  int32_t acc[5];
  acc[4] = sum_x;
  mtk_dot_1x4_biased_s8(x, w, groups, acc);
  for (int32_t c = 0; c < 4; c += 2) {
    s[c] += (uint32_t)acc[c] + ((uint32_t)acc[c + 1] << 8);
    s[c + 1] += (uint32_t)acc[c + 1];
  }
}

/* The first n (≤ 4) outputs of a quad's head-form sums s with requantization q (m, C, e; with pc each channel's in
 * turn), clamped to [lo, hi], in C. */
static inline void mtk_fused_quad_out(const uint32_t* s, const int32_t* q, int8_t* out, int32_t n, int32_t lo,
                                      int32_t hi, int32_t pc) {
  for (int32_t c = 0; c < n; ++c, q += pc ? 3 : 0) {
    uint32_t sum = c & 1 ? s[c] : s[c] - (s[c + 1] << 8);
    int32_t v = mtk_requant_x2((int32_t)(sum << 1), q[0], q[1], q[2]);
    out[c] = (int8_t)(v < lo ? lo : (v > hi ? hi : v));
  }
}

#ifdef MTK_FUSED_ASM
/* The sums of one group of the quad: the row's words A (x0, x2), B (x1, x3), the weights r2, r11, r12, lr; s0 r3, t0 r4,
 * s1 r5, t1 r6. Each SXTB16 is followed by an SMLAD that does not read its result (the Cortex-M7 issues the two
 * together). */
#define MTK_FUSED_QUAD_SUMS(A, B)       \
  "smlad r3, r2, " A ", r3\n\t"         \
  "sxtb16 r2, r2, ror #8\n\t"           \
  "smlad r3, r11, " B ", r3\n\t"        \
  "sxtb16 r11, r11, ror #8\n\t"         \
  "smlad r4, r2, " A ", r4\n\t"         \
  "smlad r5, r12, " A ", r5\n\t"        \
  "sxtb16 r12, r12, ror #8\n\t"         \
  "smlad r4, r11, " B ", r4\n\t"        \
  "smlad r5, lr, " B ", r5\n\t"         \
  "sxtb16 lr, lr, ror #8\n\t"           \
  "smlad r6, r12, " A ", r6\n\t"        \
  "smlad r6, lr, " B ", r6\n\t"
#define MTK_FUSED_QUAD_WEIGHTS "ldmia.w r1!, {r2, r11, r12, lr}\n\t"
#ifndef MTK_FUSED_QUAD_LOOP   /* a core's own loop (kernels/table.py CORE_FILES) may come first */
/* Two groups: one LDM of the row's 4 words, one of each group's 4 weight words. Every instruction 32 bits wide: a pair is
 * MTK_FUSED_QUAD_PAIR_BYTES bytes, which the entry into the loop's middle counts on. */
#define MTK_FUSED_QUAD_PAIR                                                                              \
  "ldmia.w r0!, {r7, r8, r9, r10}\n\t"                                                                   \
  MTK_FUSED_QUAD_WEIGHTS MTK_FUSED_QUAD_SUMS("r7", "r8") MTK_FUSED_QUAD_WEIGHTS MTK_FUSED_QUAD_SUMS("r9", "r10")
/* The quad's sums over the row: label 7 an odd first group (then to the pairs' entry at [sp, #16]), label 2 the pairs,
 * 8 a pass, entered midway, on a 32-byte line (the pass's 27 lines and the quad's frame in the 32 lines of an
 * STM32L4's ART instruction cache); label 8 the pass's end, until the row's end ([sp, #4]). */
#define MTK_FUSED_QUAD_LOOP                                                                              \
  "7:\n\t"                                                                                               \
  "ldrd r7, r8, [r0], #8\n\t"                                                                            \
  MTK_FUSED_QUAD_WEIGHTS MTK_FUSED_QUAD_SUMS("r7", "r8")                                                 \
  "ldr pc, [sp, #16]\n\t"                                                                                \
  ".p2align 5\n"                                                                                        \
  "2:\n\t"                                                                                               \
  MTK_FUSED_QUAD_PAIR MTK_FUSED_QUAD_PAIR MTK_FUSED_QUAD_PAIR MTK_FUSED_QUAD_PAIR                        \
  MTK_FUSED_QUAD_PAIR MTK_FUSED_QUAD_PAIR MTK_FUSED_QUAD_PAIR MTK_FUSED_QUAD_PAIR                        \
  "8:\n\t"                                                                                               \
  "ldr r2, [sp, #4]\n\t"                                                                                 \
  "cmp r0, r2\n\t"                                                                                       \
  "bne 2b\n\t"
#define MTK_FUSED_QUAD_PAIR_BYTES "108"
#define MTK_FUSED_QUAD_PIPELINED "beq 25f\n\t"   /* the pairs the pass runs: all */
#define MTK_FUSED_QUAD_PASS "8"                  /* pairs a pass (a power of two) */
#define MTK_FUSED_QUAD_ENTER "ldr pc, [sp, #12]\n\t"   /* into the quad's loop (r0 at the row, r1 at its weights) */
#endif
/* One group of the int8 row at r11 packed into the row at r0 (SXTB16 order), its sum added to r6 (r8: 0x10001). */
#define MTK_FUSED_PACK_GROUP          \
  "ldr r9, [r11], #4\n\t"             \
  "sxtb16 r10, r9\n\t"                \
  "sxtb16 r9, r9, ror #8\n\t"         \
  "strd r10, r9, [r0], #8\n\t"        \
  "sadd16 r9, r9, r10\n\t"            \
  "smlad r6, r9, r8, r6\n\t"
/* Two groups so (r4, r5 free too): the second word loaded first, so that the first's load, writing r11 back, pipelines
 * behind it (Cortex-M4) and no SXTB16 waits for its load (M33); both groups stored by one STM. */
#define MTK_FUSED_PACK_PAIR           \
  "ldr r10, [r11, #4]\n\t"            \
  "ldr r5, [r11], #8\n\t"             \
  "sxtb16 r9, r10\n\t"                \
  "sxtb16 r10, r10, ror #8\n\t"       \
  "sxtb16 r4, r5\n\t"                 \
  "sxtb16 r5, r5, ror #8\n\t"         \
  "stm r0!, {r4, r5, r9, r10}\n\t"    \
  "sadd16 r4, r4, r5\n\t"             \
  "sadd16 r9, r9, r10\n\t"            \
  "smlad r6, r4, r8, r6\n\t"          \
  "smlad r6, r9, r8, r6\n\t"
/* The row's Σx into r6 (r0: the row, r2: its groups), its first r12 groups packed from the int8 values at r11 on the way
 * (two a pass; LSRS's flags outlive a group: SADD16 and SMLAD set none of N, Z, C), the others read packed; then the
 * frame's row end [sp, #4]. */
#define MTK_FUSED_ROW_PACK                 \
  "movs r6, #0\n\t"                        \
  "mov.w r8, #0x10001\n\t"                 \
  "subs r3, r2, r12\n\t"                   \
  "lsrs r12, r12, #1\n\t"                  \
  "bcc 24f\n\t"                            \
  MTK_FUSED_PACK_GROUP                     \
  "24:\n\t"                                \
  "beq 21f\n"                              \
  "20:\n\t"                                \
  MTK_FUSED_PACK_PAIR                      \
  "subs r12, r12, #1\n\t"                  \
  "bne 20b\n"                              \
  "21:\n\t"                                \
  "cmp r3, #0\n\t"                         \
  "beq 23f\n"                              \
  "22:\n\t"                                \
  "ldrd r9, r10, [r0], #8\n\t"             \
  "sadd16 r9, r9, r10\n\t"                 \
  "smlad r6, r9, r8, r6\n\t"               \
  "subs r3, r3, #1\n\t"                    \
  "bne 22b\n"                              \
  "23:\n\t"                                \
  "str r0, [sp, #4]\n\t"
/* MTK_FUSED_ROW_PACK, then the quads' entry [sp, #12] (the odd group, or the pairs') and the pairs' [sp, #16]: (−pairs
 * mod MTK_FUSED_QUAD_PASS) pairs into the loop, or its end without pairs. */
#define MTK_FUSED_QUAD_SETUP               \
  MTK_FUSED_ROW_PACK                       \
  "adr.w r4, 8f\n\t"                       \
  "lsrs r3, r2, #1\n\t"                    \
  MTK_FUSED_QUAD_PIPELINED                 \
  "rsb r3, r3, #0\n\t"                     \
  "and r3, r3, #" MTK_FUSED_QUAD_PASS " - 1\n\t" \
  "movs r5, #" MTK_FUSED_QUAD_PAIR_BYTES "\n\t" \
  "adr.w r4, 2f\n\t"                       \
  "mla r4, r3, r5, r4\n"                   \
  "25:\n\t"                                \
  "orr r4, r4, #1\n\t"                     \
  "str r4, [sp, #16]\n\t"                  \
  "adr.w r3, 7f\n\t"                       \
  "orr r3, r3, #1\n\t"                     \
  "tst r2, #1\n\t"                         \
  "it ne\n\t"                              \
  "movne r4, r3\n\t"                       \
  "str r4, [sp, #12]\n\t"
/* The quad's sums S0, T0, S1, T1 (r3-r6) as its 4 doubled channel sums. */
#define MTK_FUSED_QUAD_DOUBLE     \
  "sub r3, r3, r4, lsl #8\n\t"  \
  "sub r5, r5, r6, lsl #8\n\t"  \
  "add r3, r3, r3\n\t"          \
  "add r4, r4, r4\n\t"          \
  "add r5, r5, r5\n\t"          \
  "add r6, r6, r6\n\t"
/* The quad's 4 outputs from the doubled sums r3-r6 with the frame's m, C, e ([sp, #20]), stored at P, P advanced:
 * two at a time (the second in the first's value register), or clamped to the frame's range one at a time. */
#define MTK_FUSED_QUAD_LAYER_PARAMS "ldrd r7, r8, [sp, #20]\n\tldr r9, [sp, #28]\n\t"
#define MTK_FUSED_QUAD_SATURATED(P, SIGN)                                                                        \
  MTK_FUSED_QUAD_LAYER_PARAMS                                                                                    \
  MTK_FUSED_REQUANT_PAIR("r3", "r7", "r8", "r9", "strb r0, [" P "], #1", "r4", "r7", "r8", "r9", "r3",            \
                         "strb r3, [" P "], #1", SIGN)                                                           \
  MTK_FUSED_REQUANT_PAIR("r5", "r7", "r8", "r9", "strb r0, [" P "], #1", "r6", "r7", "r8", "r9", "r5",            \
                         "strb r5, [" P "], #1", SIGN)
#define MTK_FUSED_QUAD_CLAMPED(P, SIGN)                                                                          \
  MTK_FUSED_QUAD_LAYER_PARAMS "ldrd r10, r11, [sp, #32]\n\t"                                                     \
  MTK_FUSED_REQUANT("r3", "r7", "r8", "r9", SIGN) MTK_FUSED_CLAMP "strb r0, [" P "], #1\n\t"                      \
  MTK_FUSED_REQUANT("r4", "r7", "r8", "r9", SIGN) MTK_FUSED_CLAMP "strb r0, [" P "], #1\n\t"                      \
  MTK_FUSED_REQUANT("r5", "r7", "r8", "r9", SIGN) MTK_FUSED_CLAMP "strb r0, [" P "], #1\n\t"                      \
  MTK_FUSED_REQUANT("r6", "r7", "r8", "r9", SIGN) MTK_FUSED_CLAMP "strb r0, [" P "], #1\n\t"
/* The same with each channel's m, C, e read from the stream after the quad's weights (r1): two channels an LDM, or
 * (clamped: r10, r11 hold the range) one. */
#define MTK_FUSED_QUAD_PC_SATURATED(P, SIGN)                                                                      \
  "ldm r1!, {r7, r8, r9, r10, r11, r12}\n\t"                                                                      \
  MTK_FUSED_REQUANT_PAIR("r3", "r7", "r8", "r9", "strb r0, [" P "], #1", "r4", "r10", "r11", "r12", "r3",          \
                         "strb r3, [" P "], #1", SIGN)                                                             \
  "ldm r1!, {r7, r8, r9, r10, r11, r12}\n\t"                                                                      \
  MTK_FUSED_REQUANT_PAIR("r5", "r7", "r8", "r9", "strb r0, [" P "], #1", "r6", "r10", "r11", "r12", "r5",          \
                         "strb r5, [" P "], #1", SIGN)
#define MTK_FUSED_QUAD_PC_CHANNEL(X, P, SIGN)                                                                       \
  "ldm r1!, {r7, r8, r9}\n\t" MTK_FUSED_REQUANT(X, "r7", "r8", "r9", SIGN) MTK_FUSED_CLAMP "strb r0, [" P "], #1\n\t"
#define MTK_FUSED_QUAD_PC_CLAMPED(P, SIGN)                                               \
  "ldrd r10, r11, [sp, #32]\n\t"                                                         \
  MTK_FUSED_QUAD_PC_CHANNEL("r3", P, SIGN) MTK_FUSED_QUAD_PC_CHANNEL("r4", P, SIGN)      \
  MTK_FUSED_QUAD_PC_CHANNEL("r5", P, SIGN) MTK_FUSED_QUAD_PC_CHANNEL("r6", P, SIGN)

/* The frame (FRAME bytes) from f, SETUP (MTK_FUSED_QUAD_SETUP, or MTK_FUSED_ROW_PACK alone), −256·Σx. */
#define MTK_FUSED_QUAD_START(FRAME, SETUP) \
  "push {r4-r11, lr}\n\t"                 \
  "sub sp, sp, #" FRAME "\n\t"            \
  "ldrd r8, r9, [r0, #32]\n\t"            \
  "strd r8, r9, [sp, #32]\n\t"            \
  "ldrd r11, r12, [r0, #40]\n\t"          \
  "ldm r0, {r0-r7}\n\t"                   \
  "strd r5, r6, [sp, #20]\n\t"            \
  "str r7, [sp, #28]\n\t"                 \
  "str r4, [sp, #40]\n\t"                 \
  "add r3, r4, r3, lsl #2\n\t"            \
  "str r3, [sp, #44]\n\t"                 \
  "str r0, [sp, #0]\n\t"                  \
  SETUP                                   \
  "movs r3, #0\n\t"                       \
  "sub r6, r3, r6, lsl #8\n\t"            \
  "str r6, [sp, #8]\n"
/* The quad's sums r3-r6, each c0 and c2 sum doubled with −256·Σx added, as 4 outputs by OUT at the frame's out (r2). */
#define MTK_FUSED_QUAD_OUTS(OUT)   \
  "ldr r7, [sp, #8]\n\t"          \
  "ldr r2, [sp, #40]\n\t"         \
  "add r3, r7, r3, lsl #1\n\t"    \
  "sub r3, r3, r4, lsl #9\n\t"    \
  "add r5, r7, r5, lsl #1\n\t"    \
  "sub r5, r5, r6, lsl #9\n\t"    \
  "add r4, r4, r4\n\t"            \
  "add r6, r6, r6\n\t"            \
  OUT
/* f: the packed row, the stream's first quad, groups, quads (> 0), out, the layer's m, C, e, the activation range, the
 * int8 row and how many of its groups to pack first (MTK_FUSED_QUAD_SETUP). Naked as mtk_gemm_2x2_fused_dsp: the row's
 * Σx, then per quad its sums from its head (MTK_FUSED_QUAD_LOOP: every register but r0, r1, the sums and sp), each c0
 * and c2 sum doubled with −256·Σx added in two instructions (2·S − 512·T − 256·Σx), 4 outputs by OUT; the frame:
 * [0] row, [4] its end, [8] −256·Σx, [12] and [16] the entries, [20] m, C, e, [32] the range, [40] out, [44] its end. */
#define MTK_FUSED_QUAD_DSP(NAME, OUT)                                                                 \
__attribute__((naked, noinline, unused)) static void NAME(__attribute__((unused)) const int32_t* f) { \
  __asm__ volatile(                                                                                   \
      MTK_FUSED_QUAD_START("48", MTK_FUSED_QUAD_SETUP)                                                \
      "1:\n\t"                                                                                        \
      "ldr r0, [sp, #0]\n\t"                                                                          \
      "ldm r1!, {r3, r4, r5, r6}\n\t"                                                                 \
      MTK_FUSED_QUAD_ENTER                                                                            \
      MTK_FUSED_QUAD_LOOP                                                                             \
      MTK_FUSED_QUAD_OUTS(OUT)                                                                        \
      "ldr r0, [sp, #44]\n\t"                                                                         \
      "str r2, [sp, #40]\n\t"                                                                         \
      "cmp r2, r0\n\t"                                                                                \
      "bne 1b\n\t"                                                                                    \
      "add sp, sp, #48\n\t"                                                                           \
      "pop {r4-r11, pc}\n\t");                                                                        \
}
/* Each kind of the one-row kernel: KIND(P's function of it, its OUT, the bytes of a quad's own m, C, e, SAT where its
 * outputs are only saturated with the layer's m, C, e (ANY: per channel, or clamped), its sign term). */
#define MTK_FUSED_QUAD_KINDS(KIND, P)                                                                    \
  KIND(P##_dsp, MTK_FUSED_QUAD_SATURATED("r2", MTK_FUSED_SIGN), "0", SAT, MTK_FUSED_SIGN)                \
  KIND(P##_clamped_dsp, MTK_FUSED_QUAD_CLAMPED("r2", MTK_FUSED_SIGN), "0", ANY, MTK_FUSED_SIGN)          \
  KIND(P##_pc_dsp, MTK_FUSED_QUAD_PC_SATURATED("r2", MTK_FUSED_SIGN), "48", ANY, MTK_FUSED_SIGN)         \
  KIND(P##_pc_clamped_dsp, MTK_FUSED_QUAD_PC_CLAMPED("r2", MTK_FUSED_SIGN), "48", ANY, MTK_FUSED_SIGN)   \
  KIND(P##_nosign_dsp, MTK_FUSED_QUAD_SATURATED("r2", MTK_FUSED_NO_SIGN), "0", SAT, MTK_FUSED_NO_SIGN)   \
  KIND(P##_clamped_nosign_dsp, MTK_FUSED_QUAD_CLAMPED("r2", MTK_FUSED_NO_SIGN), "0", ANY,                \
       MTK_FUSED_NO_SIGN)                                                                                \
  KIND(P##_pc_nosign_dsp, MTK_FUSED_QUAD_PC_SATURATED("r2", MTK_FUSED_NO_SIGN), "48", ANY,               \
       MTK_FUSED_NO_SIGN)                                                                                \
  KIND(P##_pc_clamped_nosign_dsp, MTK_FUSED_QUAD_PC_CLAMPED("r2", MTK_FUSED_NO_SIGN), "48", ANY,         \
       MTK_FUSED_NO_SIGN)
/* P's kind of the call's constant pc, sign and clamped range, called with f. */
#define MTK_FUSED_QUAD_CALL(P, f, pc, sign, clamped)                                                               \
  ((pc) && (sign) ? ((clamped) ? P##_pc_clamped_dsp(f) : P##_pc_dsp(f))                                          \
   : (pc)         ? ((clamped) ? P##_pc_clamped_nosign_dsp(f) : P##_pc_nosign_dsp(f))                            \
   : (sign)       ? ((clamped) ? P##_clamped_dsp(f) : P##_dsp(f))                                                \
                  : ((clamped) ? P##_clamped_nosign_dsp(f) : P##_nosign_dsp(f)))
#define MTK_FUSED_QUAD_DSP_OF(NAME, OUT, PARAMS, OUTPUTS, SIGN) MTK_FUSED_QUAD_DSP(NAME, OUT)
MTK_FUSED_QUAD_KINDS(MTK_FUSED_QUAD_DSP_OF, mtk_gemm_1x4_fused)
/* A core's own kernels of the quads in pairs (kernels/table.py CORE_FILES), where mtk_fused_quads_paired says. */
#ifdef MTK_FUSED_OCTETS_DSP
MTK_FUSED_QUAD_KINDS(MTK_FUSED_OCTETS_DSP, mtk_gemm_1x4_octets)
#endif

/* The jumps of a quad ([sp, #52], [sp, #56]) by the mode r5. */
#define MTK_FUSED_CHUNK_MODES \
  "adr.w r6, 5f\n\t"      \
  "adr.w r7, 6f\n\t"      \
  "tst r5, #1\n\t"        \
  "it ne\n\t"             \
  "movne r6, r7\n\t"      \
  "orr r6, r6, #1\n\t"    \
  "str r6, [sp, #52]\n\t" \
  "adr.w r6, 30f\n\t"     \
  "adr.w r7, 31f\n\t"     \
  "adr.w r8, 32f\n\t"     \
  "tst r5, #4\n\t"        \
  "it ne\n\t"             \
  "movne r7, r8\n\t"      \
  "tst r5, #2\n\t"        \
  "it ne\n\t"             \
  "movne r6, r7\n\t"      \
  "orr r6, r6, #1\n\t"    \
  "str r6, [sp, #56]\n\t"
/* The frame (FRAME bytes) from f, MODES (r5 the mode), SETUP (MTK_FUSED_QUAD_SETUP, or MTK_FUSED_ROW_PACK alone),
 * −128·Σx of the chunk. */
#define MTK_FUSED_CHUNK_START(FRAME, MODES, SETUP) \
  "push {r4-r11, lr}\n\t"        \
  "sub sp, sp, #" FRAME "\n\t"   \
  "ldrd r4, r5, [r0, #24]\n\t"   \
  "strd r4, r5, [sp, #20]\n\t"   \
  "ldrd r4, r5, [r0, #32]\n\t"   \
  "strd r4, r5, [sp, #28]\n\t"   \
  "ldrd r4, r5, [r0, #40]\n\t"   \
  "str r4, [sp, #36]\n\t"        \
  MODES                          \
  "ldrd r11, r12, [r0, #48]\n\t" \
  "ldm r0, {r0-r5}\n\t"          \
  "str r5, [sp, #40]\n\t"        \
  "str r4, [sp, #44]\n\t"        \
  "add r3, r4, r3, lsl #4\n\t"   \
  "str r3, [sp, #48]\n\t"        \
  "str r0, [sp, #0]\n\t"         \
  SETUP                          \
  "movs r3, #0\n\t"              \
  "sub r6, r3, r6, lsl #7\n\t"   \
  "str r6, [sp, #8]\n"
/* One chunk of a chunked stream. f: the packed chunk, its first quad's weights (the first chunk: its head), groups,
 * quads (> 0), the head-form sums (16 bytes a quad), out, the layer's m, C, e, the activation range, the mode
 * (1 the first chunk: sums from the heads; 2 the last: outputs, not sums; 4 a clamped range), the chunk's int8 values
 * and how many of its groups to pack first. The modes are where two jumps a quad go ([sp, #52]: its sums from the head
 * or the scratch; [sp, #56]: the sums stored, or requantized and stored by SATURATED or CLAMPED), −128·Σx of the chunk
 * added to c0's and c2's sums at the start; the frame as mtk_gemm_1x4_fused_dsp's but [8] −128·Σx, [44] the sums,
 * [48] their end. */
#define MTK_FUSED_CHUNK_DSP(NAME, SATURATED, CLAMPED)                                                 \
__attribute__((naked, noinline, unused)) static void NAME(__attribute__((unused)) const int32_t* f) { \
  __asm__ volatile(                                                                                   \
      MTK_FUSED_CHUNK_START("64", MTK_FUSED_CHUNK_MODES, MTK_FUSED_QUAD_SETUP)                        \
      "1:\n\t"                                                                                        \
      "ldr r0, [sp, #0]\n\t"                                                                          \
      "ldr r7, [sp, #8]\n\t"                                                                          \
      "ldr pc, [sp, #52]\n"                                                                           \
      "5:\n\t"                                                                                        \
      "ldr r2, [sp, #44]\n\t"                                                                         \
      "ldm r2, {r3, r4, r5, r6}\n\t"                                                                  \
      "add r3, r3, r7\n\t"                                                                            \
      "add r5, r5, r7\n\t"                                                                            \
      MTK_FUSED_QUAD_ENTER                                                                            \
      "6:\n\t"                                                                                        \
      "ldm r1!, {r3, r4, r5, r6}\n\t"                                                                 \
      "add r3, r3, r7\n\t"                                                                            \
      "add r5, r5, r7\n\t"                                                                            \
      MTK_FUSED_QUAD_ENTER                                                                            \
      MTK_FUSED_QUAD_LOOP                                                                             \
      "ldr pc, [sp, #56]\n"                                                                           \
      "30:\n\t"                                                                                       \
      "ldr r2, [sp, #44]\n\t"                                                                         \
      "stm r2!, {r3, r4, r5, r6}\n\t"                                                                 \
      "b 4f\n"                                                                                        \
      "31:\n\t"                                                                                       \
      MTK_FUSED_QUAD_DOUBLE                                                                           \
      "ldr r2, [sp, #40]\n\t"                                                                         \
      SATURATED("r2", MTK_FUSED_SIGN)                                                                               \
      "b 3f\n"                                                                                        \
      "32:\n\t"                                                                                       \
      MTK_FUSED_QUAD_DOUBLE                                                                           \
      "ldr r2, [sp, #40]\n\t"                                                                         \
      CLAMPED("r2", MTK_FUSED_SIGN)                                                                                 \
      "3:\n\t"                                                                                        \
      "str r2, [sp, #40]\n\t"                                                                         \
      "ldr r2, [sp, #44]\n\t"                                                                         \
      "add r2, r2, #16\n"                                                                             \
      "4:\n\t"                                                                                        \
      "str r2, [sp, #44]\n\t"                                                                         \
      "ldr r0, [sp, #48]\n\t"                                                                         \
      "cmp r2, r0\n\t"                                                                                \
      "bne 1b\n\t"                                                                                    \
      "add sp, sp, #64\n\t"                                                                           \
      "pop {r4-r11, pc}\n\t");                                                                        \
}
MTK_FUSED_CHUNK_DSP(mtk_gemm_1x4_fused_chunk_dsp, MTK_FUSED_QUAD_SATURATED, MTK_FUSED_QUAD_CLAMPED)
MTK_FUSED_CHUNK_DSP(mtk_gemm_1x4_fused_pc_chunk_dsp, MTK_FUSED_QUAD_PC_SATURATED, MTK_FUSED_QUAD_PC_CLAMPED)
#ifdef MTK_FUSED_OCTETS_DSP
MTK_FUSED_CHUNK_OCTETS_DSP(mtk_gemm_1x4_octets_chunk_dsp, MTK_FUSED_QUAD_SATURATED, MTK_FUSED_QUAD_CLAMPED, "0", SAT)
MTK_FUSED_CHUNK_OCTETS_DSP(mtk_gemm_1x4_octets_pc_chunk_dsp, MTK_FUSED_QUAD_PC_SATURATED, MTK_FUSED_QUAD_PC_CLAMPED,
                           "48", ANY)
#endif
#endif

/* With src, the k int8 values there are the row, to be packed at x: its partial last group packed here, in C; the
 * whole groups the assembly is to pack (0 without src: x is packed). */
static inline int32_t mtk_fused_row_tail(void* x, const void* src, int32_t k) {
  int8_t tail[4];
  if (src == 0) return 0;
  if (k & 3) mtk_pack_row_group(mtk_group_src((const int8_t*)src, k, k & ~3, tail), (uint8_t*)x, k >> 2);
  return k >> 2;
}

/* The GEMM of one row with all `channels` of the stream w, outputs at out clamped to [lo, hi]: the row packed at x, or
 * with src the k int8 values there, packed at x on the way; pc: each channel has its own m, C, e; sign as
 * mtk_gemm_2x2_fused_s8's. Whole quads in assembly, a partial last one in C. */
MTK_FUSED_INLINE int32_t mtk_gemm_1x4_fused_any(void* x, const void* w, int32_t groups, int32_t channels, void* out,
                                             const void* src, int32_t k, int32_t lo, int32_t hi, int32_t sign,
                                             int32_t pc) {
  const int32_t* q = (const int32_t*)w;
  const uint8_t* t = (const uint8_t*)w + 12;
  int32_t sum_x = 0, tile = MTK_FUSED_QUAD_HEAD + 16 * groups + (pc ? MTK_FUSED_QUAD_PARAMS : 0), done = 0;
#ifndef MTK_FUSED_ASM
  (void)sign;
#else
  done = channels & ~3;
  if (done > 0) {
    const int32_t f[12] = {(int32_t)x, (int32_t)t, groups, done >> 2, (int32_t)out, q[0], q[1], q[2], lo, hi,
                           (int32_t)src, mtk_fused_row_tail(x, src, k)};
    int32_t clamped = lo != -128 || hi != 127;
#ifdef MTK_FUSED_OCTETS_DSP
    if (mtk_fused_quads_paired(done >> 2, groups))
      MTK_FUSED_QUAD_CALL(mtk_gemm_1x4_octets, f, pc, sign, clamped);
    else
#endif
      MTK_FUSED_QUAD_CALL(mtk_gemm_1x4_fused, f, pc, sign, clamped);
    src = 0;
  }
  t += (done >> 2) * tile;
#endif
  if (src != 0) mtk_pack_row_s16(src, k, x);
  if (done < channels) mtk_pack_sums_s16(x, groups, 1, &sum_x);
  for (; done < channels; done += 4, t += tile) {
    uint32_t s[4];
    for (int32_t i = 0; i < 4; ++i) s[i] = ((const uint32_t*)t)[i];
    mtk_fused_quad_add(x, t + MTK_FUSED_QUAD_HEAD, groups, s, sum_x);
    mtk_fused_quad_out(s, pc ? (const int32_t*)(t + MTK_FUSED_QUAD_HEAD + 16 * groups) : q, (int8_t*)out + done,
                       channels - done < 4 ? channels - done : 4, lo, hi, pc);
  }
  return 0;
}

MTK_FUSED_INLINE int32_t mtk_gemm_1x4_fused_s8(void* x, const void* w, int32_t groups, int32_t channels, void* out,
                                            const void* src, int32_t k, int32_t lo, int32_t hi, int32_t sign) {
  return mtk_gemm_1x4_fused_any(x, w, groups, channels, out, src, k, lo, hi, sign, 0);
}

MTK_FUSED_INLINE int32_t mtk_gemm_1x4_fused_pc_s8(void* x, const void* w, int32_t groups, int32_t channels, void* out,
                                               const void* src, int32_t k, int32_t lo, int32_t hi, int32_t sign) {
  return mtk_gemm_1x4_fused_any(x, w, groups, channels, out, src, k, lo, hi, sign, 1);
}

/* Groups g0 .. g0 + groups − 1 (a chunk: packed at x, or with src its k int8 values, packed at x on the way) of the
 * GEMM of a row of `total` groups with all `channels` of a chunked stream w: the quads' partial sums in `sums` (16
 * bytes a quad) between chunks, after the last one the outputs at out, clamped to [lo, hi]; pc as above (each
 * channel's m, C, e after its quad's weights in the last chunk). Whole quads in assembly, a partial last one's outputs
 * in C. */
MTK_FUSED_INLINE int32_t mtk_gemm_1x4_fused_chunk_any(void* x, const void* w, int32_t groups, int32_t channels, void* out,
                                                   void* sums, int32_t g0, int32_t total, const void* src, int32_t k,
                                                   int32_t lo, int32_t hi, int32_t pc) {
  const int32_t* q = (const int32_t*)w;
  int32_t quads = (channels + 3) >> 2, first = g0 == 0, last = g0 + groups == total, done = 0, sum_x = 0;
  int32_t step = 16 * groups + (first ? MTK_FUSED_QUAD_HEAD : 0) + (last && pc ? MTK_FUSED_QUAD_PARAMS : 0);
  const uint8_t* t = (const uint8_t*)w + 12 + 16 * quads * (g0 + !first);
  uint32_t* s = (uint32_t*)sums;
#ifdef MTK_FUSED_ASM
  done = last ? channels & ~3 : 4 * quads;
  if (done > 0) {
    const int32_t f[14] = {(int32_t)x, (int32_t)t, groups, done >> 2, (int32_t)s, (int32_t)out, q[0], q[1], q[2], lo,
                           hi, first | last << 1 | (lo != -128 || hi != 127) << 2, (int32_t)src,
                           mtk_fused_row_tail(x, src, k)};
#ifdef MTK_FUSED_OCTETS_DSP
    if (mtk_fused_quads_paired(done >> 2, groups))
      pc ? mtk_gemm_1x4_octets_pc_chunk_dsp(f) : mtk_gemm_1x4_octets_chunk_dsp(f);
    else
#endif
      pc ? mtk_gemm_1x4_fused_pc_chunk_dsp(f) : mtk_gemm_1x4_fused_chunk_dsp(f);
    src = 0;
  }
  t += (done >> 2) * step, s += done;
#endif
  if (src != 0) mtk_pack_row_s16(src, k, x);
  if (done < channels) mtk_pack_sums_s16(x, groups, 1, &sum_x);
  for (; done < channels; done += 4, t += step, s += 4) {
    const uint8_t* weights = t + (first ? MTK_FUSED_QUAD_HEAD : 0);
    if (first)
      for (int32_t i = 0; i < 4; ++i) s[i] = ((const uint32_t*)t)[i];
    mtk_fused_quad_add(x, weights, groups, s, sum_x);
    if (last)
      mtk_fused_quad_out(s, pc ? (const int32_t*)(weights + 16 * groups) : q, (int8_t*)out + done,
                         channels - done < 4 ? channels - done : 4, lo, hi, pc);
  }
  return 0;
}

MTK_FUSED_INLINE int32_t mtk_gemm_1x4_fused_chunk_s8(void* x, const void* w, int32_t groups, int32_t channels, void* out,
                                                  void* sums, int32_t g0, int32_t total, const void* src, int32_t k,
                                                  int32_t lo, int32_t hi) {
  return mtk_gemm_1x4_fused_chunk_any(x, w, groups, channels, out, sums, g0, total, src, k, lo, hi, 0);
}

MTK_FUSED_INLINE int32_t mtk_gemm_1x4_fused_pc_chunk_s8(void* x, const void* w, int32_t groups, int32_t channels,
                                                     void* out, void* sums, int32_t g0, int32_t total, const void* src,
                                                     int32_t k, int32_t lo, int32_t hi) {
  return mtk_gemm_1x4_fused_chunk_any(x, w, groups, channels, out, sums, g0, total, src, k, lo, hi, 1);
}

#endif /* MTK_DOT_BIASED_S8_H_ */
