/* The GEMM of a band of the input's own rows (a pointwise conv, a fully connected layer of several rows) with the
 * requantization fused, one call for all of them ("2x4/band": ops/gemm_band.py), over "2x4/fused"'s stream
 * (mtk_gemm_2x4_fused.h: per channel quad its biased weights, then its head words and each channel's m, C, e) of twice
 * the biases, by rows packed as twice their values: the sums come doubled, as the requantization takes them. For few
 * input channels a quad's dot products are short and each pair of rows would pay a call, its rows' sums and a pass
 * over the whole stream (from flash, which the STM32L4's 256-byte ART data cache does not hold): here the pairs of a
 * band are packed once into the scratch with their sums, then each quad runs over every pair of the band, its
 * 16·groups + 64 bytes read again while they are cached. */
#ifndef MTK_GEMM_BAND_FUSED_H_
#define MTK_GEMM_BAND_FUSED_H_

#include <stdint.h>

#include "mtk_gemm_2x4_fused.h"

/* The band's `pairs` pairs of rows from x (k values a row, k a multiple of 4; stride 0: one row, the odd last one,
 * twice) packed at rows, per pair its rows' −128·Σx then the rows as mtk_pack_pair_s16 packs them, each value doubled
 * (x of 2x: the sums too): 4·k + 8 bytes a pair (the assembly packs them so itself). */
static inline void mtk_band_pack(const int8_t* x, int32_t k, int32_t pairs, int32_t stride, uint8_t* rows) {
  int32_t sum_x[2];
  for (int32_t p = 0; p < pairs; ++p, x += 2 * k, rows += 4 * k + 8) {
    uint32_t* packed = (uint32_t*)(rows + 8);
    mtk_pack_pair_at(x, stride ? x + k : x, k, rows + 8, 0);
    for (int32_t i = 0; i < k; ++i) packed[i] = mtk_sadd16(packed[i], packed[i]);
    mtk_pack_sums_s16(rows + 8, k >> 2, 2, sum_x);
    ((int32_t*)rows)[0] = (int32_t)(0u - ((uint32_t)sum_x[0] << 7));
    ((int32_t*)rows)[1] = (int32_t)(0u - ((uint32_t)sum_x[1] << 7));
  }
}

#ifdef MTK_FUSED_ASM
/* One group of a pair of rows, packed doubled (r7 moved on) and its −128·Σ2x added (r10, r11; r5: −128 in both
 * halfwords), by SUM (SMLAD; the pair's first group SMUAD: no sums to clear): the words of row 1 (r6 bytes on) and of
 * row 0 (r0 moved on), no load's result read next (the Cortex-M33's stall); r1 (the first quad) untouched. */
#define MTK_BAND_PACK(SUM, ACC10, ACC11) \
  "ldr r9, [r0, r6]\n\t"             \
  "ldr r8, [r0], #4\n\t"             \
  "sxtb16 r12, r9\n\t"               \
  "sxtb16 lr, r9, ror #8\n\t"        \
  "sxtb16 r2, r8\n\t"                \
  "sxtb16 r3, r8, ror #8\n\t"        \
  "sadd16 r12, r12, r12\n\t"         \
  "sadd16 lr, lr, lr\n\t"            \
  "sadd16 r2, r2, r2\n\t"            \
  "sadd16 r3, r3, r3\n\t"            \
  "stm r7!, {r2, r3, r12, lr}\n\t"   \
  "sadd16 r8, r2, r3\n\t"            \
  "sadd16 r9, r12, lr\n\t"           \
  SUM " r10, r8, r5" ACC10 "\n\t"    \
  SUM " r11, r9, r5" ACC11 "\n\t"
#define MTK_BAND_PACK_FIRST MTK_BAND_PACK("smuad", "", "")
#define MTK_BAND_PACK_GROUP MTK_BAND_PACK("smlad", ", r10", ", r11")
/* A pair's start (label 3): −128·Σx of its rows into r2 and r6 and r0 on to its rows, the head's b1 and b3 of the quad
 * at r1 (TAIL bytes on) into r3 and r5, single loads (the Cortex-M33's LDRD takes a cycle more). */
#define MTK_BAND_PAIR_START(TAIL)         \
  "3:\n\t"                                \
  "ldr r6, [r0, #4]\n\t"                  \
  "ldr r2, [r0], #8\n\t"                  \
  "ldr r3, [r1, #" TAIL "+4]\n\t"         \
  "ldr r5, [r1, #" TAIL "+36]\n\t"
/* The requantization's SMMLAR of sum X into D with m, C in r10, r11: with the sign term added to C first (in T), or
 * without it. */
#define MTK_BAND_SMMLAR_SIGN(D, X, T) "add " T ", r11, " X ", asr #31\n\tsmmlar " D ", " X ", r10, " T "\n\t"
#define MTK_BAND_SMMLAR_NOSIGN(D, X, T) "smmlar " D ", " X ", r10, r11\n\t"
/* The row 0 output's address into lr from the frame: before channel 0 (no sign term: its loads back to back), or after
 * its SMMLARs (the sign term's, which take lr for a temporary). */
#define MTK_BAND_OUT_FIRST_SIGN ""
#define MTK_BAND_OUT_FIRST_NOSIGN "ldr lr, [sp, #0]\n\t"
#define MTK_BAND_OUT_LATE_SIGN "ldr lr, [sp, #0]\n\t"
#define MTK_BAND_OUT_LATE_NOSIGN ""
/* Channel AT's m, C, e into r10, r11, E from the quad at r1. */
#define MTK_BAND_PARAMS(AT, E) \
  "ldr r10, [r1, #" AT "]\n\tldr r11, [r1, #" AT "+4]\n\tldr " E ", [r1, #" AT "+8]\n\t"
/* A channel's outputs of rows 0 and 1 from sums X0 (into itself) and X1 (into D1) with m, C in r10, r11 and the
 * shift in E (a low register: the Cortex-M33 issues the two 16-bit ASRS together), stored at byte C of row 0's (lr)
 * and row 1's (r12) outputs; S: SIGN or NOSIGN, T a free register. */
#define MTK_BAND_CHANNEL(X0, X1, D1, E, C, S, T) \
  MTK_BAND_SMMLAR_##S(X0, X0, T)                  \
  MTK_BAND_SMMLAR_##S(D1, X1, T)                  \
  "asrs " X0 ", " X0 ", " E "\n\t"                \
  "asrs " D1 ", " D1 ", " E "\n\t"                \
  "ssat " X0 ", #8, " X0 "\n\t"                   \
  "ssat " D1 ", #8, " D1 "\n\t"                   \
  "strb " X0 ", [lr, #" C "]\n\t"                 \
  "strb " D1 ", [r12, #" C "]\n\t"
/* The pair's 8 outputs from its sums (2x4/fused's order, already doubled) with m, C, e from the quad's tail (TAIL bytes
 * on from r1): channel 0 first (its shift in r12, then the stride, then row 1's output address: lr + the stride), then
 * the next pair's output (twice row 1's less row 0's) to the frame, and on to the next pair's rows (16·G bytes on)
 * unless the quad's outputs end (the 16-bit ADDS and CMP: one cycle on the M33). Channel 0's shift in a high register
 * (no low one is free yet); its row 1 output stored by register offset right behind a load (one cycle on the M4). */
#define MTK_BAND_OUTPUTS(G, TAIL, S)                                   \
  MTK_BAND_OUT_FIRST_##S                                               \
  MTK_BAND_PARAMS(TAIL "+8", "r12")                                    \
  "sub r2, r2, r3, lsl #8\n\t"                                         \
  "sub r6, r6, r7, lsl #8\n\t"                                         \
  MTK_BAND_SMMLAR_##S("r2", "r2", "lr")                                \
  MTK_BAND_SMMLAR_##S("r6", "r6", "lr")                                \
  MTK_BAND_OUT_LATE_##S                                                \
  "asr r2, r2, r12\n\t"                                                \
  "asr r6, r6, r12\n\t"                                                \
  "ssat r2, #8, r2\n\t"                                                \
  "ssat r6, #8, r6\n\t"                                                \
  "strb r2, [lr]\n\t"                                                  \
  "ldr r12, [sp, #24]\n\t"                                             \
  "ldr r10, [r1, #" TAIL "+20]\n\t"                                    \
  "ldr r11, [r1, #" TAIL "+24]\n\t"                                    \
  "ldr r2, [r1, #" TAIL "+28]\n\t"                                     \
  "strb r6, [lr, r12]\n\t"                                             \
  "add r12, r12, lr\n\t"                                               \
  MTK_BAND_CHANNEL("r3", "r7", "r7", "r2", "1", S, "r6")               \
  MTK_BAND_PARAMS(TAIL "+40", "r2")                                    \
  "sub r4, r4, r5, lsl #8\n\t"                                         \
  "sub r8, r8, r9, lsl #8\n\t"                                         \
  MTK_BAND_CHANNEL("r4", "r8", "r7", "r2", "2", S, "r6")               \
  MTK_BAND_PARAMS(TAIL "+52", "r2")                                    \
  "ldr r3, [sp, #4]\n\t"                                               \
  MTK_BAND_CHANNEL("r5", "r9", "r7", "r2", "3", S, "r6")               \
  "rsb lr, lr, r12, lsl #1\n\t"                                        \
  "str lr, [sp, #0]\n\t"                                               \
  "adds r0, r0, #16*" #G "\n\t"                                        \
  "cmp lr, r3\n\t"                                                     \
  "bne 3b\n\t"
/* f: the rows, the first quad, quads (> 0), the output, pairs (> 0), stride (of the output's rows), row 1's offset
 * from row 0 (k, or 0: the same row), the scratch. Naked, so that every register but sp is the kernel's: the band's
 * pairs packed (label 4), then per quad (r1, label 1) every pair (label 3: its rows at r0), G groups straight (K + 1
 * before the head's s words, REST after); the frame: [0] the pair's output, [4] the quad's outputs' end, [8] the
 * quad's output, [12] the band's output bytes, [16] the scratch, [20] the stream's end, [24] stride. */
#define MTK_BAND_DSP(NAME, G, G1, K, REST, S)                                                            \
__attribute__((naked, noinline, unused)) static void NAME(__attribute__((unused)) const int32_t* f) { \
  __asm__ volatile(                                                                                   \
      "push {r4-r11, lr}\n\t"                                                                         \
      "sub sp, sp, #28\n\t"                                                                           \
      "ldm r0, {r0-r7}\n\t"                                                                           \
      "str r3, [sp, #8]\n\t"                                                                          \
      "str r7, [sp, #16]\n\t"                                                                         \
      "str r5, [sp, #24]\n\t"                                                                         \
      "mul r8, r5, r4\n\t"                                                                            \
      "lsl r8, r8, #1\n\t"                                                                            \
      "str r8, [sp, #12]\n\t"                                                                         \
      "movw r8, #16*" #G "+" MTK_QUAD2_TAIL_BYTES "\n\t"                                              \
      "mla r8, r8, r2, r1\n\t"                                                                        \
      "str r8, [sp, #20]\n\t"                                                                         \
      "mvn r5, #0x007f007f\n\t"                                                                       \
      "4:\n\t"                                                                                        \
      "add r7, r7, #8\n\t"                                                                            \
      MTK_BAND_PACK_FIRST                                                                             \
      MTK_BAND_REPEAT_##G1(MTK_BAND_PACK_GROUP)                                                       \
      "strd r10, r11, [r7, #-(16 * " #G " + 8)]\n\t"                                                  \
      "add r0, r0, r6\n\t"                                                                            \
      "subs r4, r4, #1\n\t"                                                                           \
      "bne 4b\n\t"                                                                                    \
      "1:\n\t"                                                                                        \
      "ldr r0, [sp, #16]\n\t"                                                                         \
      "ldrd r3, r4, [sp, #8]\n\t"                                                                     \
      "str r3, [sp, #0]\n\t"                                                                          \
      "add r4, r4, r3\n\t"                                                                            \
      "str r4, [sp, #4]\n\t"                                                                          \
      "adds r3, r3, #4\n\t"                                                                           \
      "str r3, [sp, #8]\n\t"                                                                          \
      ".p2align 2\n"                                                                                  \
      MTK_BAND_PAIR_START("16*" #G)                                                                   \
      MTK_QUAD2_FORWARD(K, REST, "16*" #G)                                                            \
      MTK_BAND_OUTPUTS(G, "16*" #G, S)                                                                \
      "addw r1, r1, #16*" #G "+" MTK_QUAD2_TAIL_BYTES "\n\t"                                          \
      "ldr r2, [sp, #20]\n\t"                                                                         \
      "cmp r1, r2\n\t"                                                                                \
      "bne 1b\n\t"                                                                                    \
      "add sp, sp, #28\n\t"                                                                           \
      "pop {r4-r11, pc}\n\t");                                                                        \
}
#define MTK_BAND_REPEAT_0(G)
#define MTK_BAND_REPEAT_1(G) MTK_FUSED_REPEAT_1(G)
#define MTK_BAND_REPEAT_2(G) MTK_FUSED_REPEAT_2(G)
#define MTK_BAND_REPEAT_3(G) MTK_FUSED_REPEAT_3(G)
#define MTK_BAND_REPEAT_4(G) MTK_FUSED_REPEAT_4(G)
#define MTK_BAND_REPEAT_5(G) MTK_FUSED_REPEAT_5(G)
#define MTK_BAND_REPEAT_6(G) MTK_FUSED_REPEAT_6(G)
#define MTK_BAND_REPEAT_7(G) MTK_FUSED_REPEAT_7(G)
#define MTK_BAND_REPEAT_8(G) MTK_FUSED_REPEAT_8(G)
#define MTK_BAND_REPEAT_9(G) MTK_FUSED_REPEAT_8(G) G
#define MTK_BAND_REPEAT_10(G) MTK_FUSED_REPEAT_8(G) G G
#define MTK_BAND_REPEAT_11(G) MTK_FUSED_REPEAT_8(G) G G G
#define MTK_BAND_REPEAT_12(G) MTK_FUSED_REPEAT_8(G) MTK_FUSED_REPEAT_4(G)
#define MTK_BAND_REPEAT_13(G) MTK_BAND_REPEAT_12(G) G
#define MTK_BAND_REPEAT_14(G) MTK_BAND_REPEAT_12(G) G G
#define MTK_BAND_REPEAT_15(G) MTK_BAND_REPEAT_12(G) G G G
/* Per number of groups G (1 to 16: only the layer's is linked in; G1: G − 1; K: 2x4/fused's, MTK_QUAD2_KERNELS), with
 * and without the sign term. */
#define MTK_BAND_KERNELS(G, G1, K, REST)                                      \
  MTK_BAND_DSP(mtk_gemm_band_g##G##_dsp, G, G1, K, REST, SIGN)                \
  MTK_BAND_DSP(mtk_gemm_band_g##G##_nosign_dsp, G, G1, K, REST, NOSIGN)
MTK_BAND_KERNELS(1, 0, 0, 0) MTK_BAND_KERNELS(2, 1, 0, 1) MTK_BAND_KERNELS(3, 2, 0, 2) MTK_BAND_KERNELS(4, 3, 1, 2)
MTK_BAND_KERNELS(5, 4, 1, 3) MTK_BAND_KERNELS(6, 5, 2, 3) MTK_BAND_KERNELS(7, 6, 2, 4) MTK_BAND_KERNELS(8, 7, 3, 4)
MTK_BAND_KERNELS(9, 8, 3, 5) MTK_BAND_KERNELS(10, 9, 4, 5) MTK_BAND_KERNELS(11, 10, 4, 6)
MTK_BAND_KERNELS(12, 11, 5, 6) MTK_BAND_KERNELS(13, 12, 5, 7) MTK_BAND_KERNELS(14, 13, 6, 7)
MTK_BAND_KERNELS(15, 14, 6, 8) MTK_BAND_KERNELS(16, 15, 7, 8)

MTK_FUSED_INLINE void mtk_gemm_band_dsp(const int32_t* f, int32_t groups, int32_t sign) {
#define MTK_BAND_CASE(N) \
  case N: sign ? mtk_gemm_band_g##N##_dsp(f) : mtk_gemm_band_g##N##_nosign_dsp(f); return;
  switch (groups) {
    MTK_BAND_CASE(1) MTK_BAND_CASE(2) MTK_BAND_CASE(3) MTK_BAND_CASE(4) MTK_BAND_CASE(5) MTK_BAND_CASE(6)
    MTK_BAND_CASE(7) MTK_BAND_CASE(8) MTK_BAND_CASE(9) MTK_BAND_CASE(10) MTK_BAND_CASE(11) MTK_BAND_CASE(12)
    MTK_BAND_CASE(13) MTK_BAND_CASE(14) MTK_BAND_CASE(15) MTK_BAND_CASE(16)
    default: return;
  }
#undef MTK_BAND_CASE
}
#endif

/* The `pixels` rows of k values at x (k a multiple of 4, at most 64) by the whole quads (`channels` of them: a multiple
 * of 4) of the stream w, outputs clamped to [lo, hi] at out, `channels` a row; `band` pairs of rows a call (the
 * scratch: band·(4·k + 8) bytes); sign as mtk_gemm_2x4_fused_s8's. The assembly takes a range of all of int8, the C
 * any. Inlined, so that only the assembly the call's constants pick is linked in. */
MTK_FUSED_INLINE int32_t mtk_gemm_band_fused_s8(const void* x, const void* w, int32_t k, int32_t channels, void* out,
                                                int32_t pixels, void* scratch, int32_t band, int32_t lo, int32_t hi,
                                                int32_t sign) {
  int32_t groups = k >> 2, quads = channels >> 2;
  const int8_t* xp = (const int8_t*)x;
  int8_t* o = (int8_t*)out;
  const uint8_t* quad0 = (const uint8_t*)w;
#ifndef MTK_FUSED_ASM
  (void)sign;
#endif
  for (int32_t left = pixels; left > 0;) {
    int32_t pairs = left >= 2 * band ? band : left >> 1, stride = channels;
    if (pairs == 0) pairs = 1, stride = 0;   /* the odd last row, twice */
#ifdef MTK_FUSED_ASM
    if (lo == -128 && hi == 127) {
      const int32_t f[8] = {(int32_t)xp, (int32_t)quad0, quads, (int32_t)o, pairs, stride, stride ? k : 0,
                            (int32_t)scratch};
      mtk_gemm_band_dsp(f, groups, sign);
    } else
#endif
    {
      uint8_t* rows = (uint8_t*)scratch;
      mtk_band_pack(xp, k, pairs, stride, rows);
      for (int32_t p = 0; p < pairs; ++p, rows += 4 * k + 8) {
        const int32_t* pair_sums = (const int32_t*)rows;
        const int32_t sum_x[2] = {-(pair_sums[0] >> 7), -(pair_sums[1] >> 7)};
        const uint8_t* t = quad0;
        for (int32_t q = 0; q < quads; ++q, t += 16 * groups + MTK_QUAD2_TAIL)
          mtk_fused_quad2_c(rows + 8, t, groups, 1, o + 2 * channels * p + 4 * q, stride, 4, sum_x, lo, hi, 1);
      }
    }
    xp += 2 * k * pairs, o += 2 * channels * pairs, left -= stride ? 2 * pairs : 1;
  }
  return 0;
}

#endif /* MTK_GEMM_BAND_FUSED_H_ */
