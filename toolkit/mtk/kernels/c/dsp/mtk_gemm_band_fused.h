/* The GEMM of a band of the input's own rows (a pointwise conv, a fully connected layer of several rows) with the
 * requantization fused, one call for all of them ("2x4/band": ops/gemm_band.py), over "2x4/fused"'s stream
 * (mtk_gemm_2x4_fused.h: per channel quad its head words, biased weights, each channel's m, C, e) of twice the biases,
 * by rows packed as twice their values: the sums come doubled, as the requantization takes them. For few input
 * channels a quad's dot products are short and each pair of rows would pay a call, its rows' sums and a pass over the
 * whole stream (from flash, which the STM32L4's 256-byte ART data cache does not hold): here the pairs of a band are packed
 * once into the scratch with their sums, then each quad runs over every pair of the band, its 16·groups + 64 bytes
 * read again while they are cached. */
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
#define MTK_BAND_STR(N) #N
/* One group of a pair of rows, packed doubled (r7 moved on) and its −128·Σ2x added (r10, r11; r5: −128 in both
 * halfwords): the words of row 1 (r6 bytes on) and of row 0 (r0 moved on), no load's result read next (the Cortex-M33's
 * stall). */
#define MTK_BAND_PACK_GROUP          \
  "ldr r9, [r0, r6]\n\t"             \
  "ldr r8, [r0], #4\n\t"             \
  "sxtb16 r3, r9\n\t"                \
  "sxtb16 r12, r9, ror #8\n\t"       \
  "sxtb16 r1, r8\n\t"                \
  "sxtb16 r2, r8, ror #8\n\t"        \
  "sadd16 r3, r3, r3\n\t"            \
  "sadd16 r12, r12, r12\n\t"         \
  "sadd16 r1, r1, r1\n\t"            \
  "sadd16 r2, r2, r2\n\t"            \
  "stm r7!, {r1, r2, r3, r12}\n\t"   \
  "sadd16 r8, r1, r2\n\t"            \
  "sadd16 r9, r3, r12\n\t"           \
  "smlad r10, r8, r5, r10\n\t"       \
  "smlad r11, r9, r5, r11\n\t"
/* A quad's head words into r2-r5, r1 past them: single loads on the Cortex-M33, an LDM elsewhere (as in 2x4/fused). */
#if defined(__ARM_ARCH_8M_MAIN__)
#define MTK_BAND_HEAD "ldr r2, [r1], #16\n\tldr r3, [r1, #-12]\n\tldr r4, [r1, #-8]\n\tldr r5, [r1, #-4]\n\t"
#else
#define MTK_BAND_HEAD "ldm r1!, {r2, r3, r4, r5}\n\t"
#endif
/* A pair's first sums (label 3): the quad's head words (r1 from the quad's start), c0's and c2's plus −128·Σx of their
 * row (r10, r11); r0 past them, at the pair's rows. */
#define MTK_BAND_PAIR_START          \
  "3:\n\t"                           \
  "ldr r1, [sp, #20]\n\t"            \
  "ldr r0, [sp, #0]\n\t"             \
  "ldrd r10, r11, [r0], #8\n\t"      \
  MTK_BAND_HEAD                      \
  MTK_QUAD2_FIRST_SUMS
/* The pair's 8 outputs (2x4/fused's of sums already doubled: row 0 at [sp, #16], row 1 `stride` ([sp, #12]) on), then the next pair (its rows
 * at r0, its output a stride past row 1's), until the quad's outputs end ([sp, #8]). */
#define MTK_BAND_OUTPUTS(SIGN)      \
  "str r0, [sp, #0]\n\t"            \
  MTK_QUAD2_OUTPUTS(SIGN, MTK_QUAD2_NO_DOUBLE) \
  "ldr r0, [sp, #12]\n\t"           \
  "add lr, r2, r0\n\t"              \
  "ldr r0, [sp, #8]\n\t"            \
  "str lr, [sp, #16]\n\t"           \
  "cmp lr, r0\n\t"                  \
  "bne 3b\n\t"
/* f: the rows, the first quad, quads (> 0), the output, pairs (> 0), stride (of the output's rows), row 1's offset
 * from row 0 (k, or 0: the same row), the scratch. Naked, so that every register but sp is the kernel's: the band's
 * pairs packed (label 4), then per quad (label 1) every pair (label 3), N groups straight; the frame: [0] the pair's
 * packed rows, [8] the quad's outputs' end, [12] stride, [16] the pair's output, [20] the quad, [24] quads left, [28] the
 * scratch, [36] the quad's output, [40] the band's output bytes. */
#define MTK_BAND_DSP(NAME, N, SIGN)                                                                    \
__attribute__((naked, noinline, unused)) static void NAME(__attribute__((unused)) const int32_t* f) { \
  __asm__ volatile(                                                                                   \
      "push {r4-r11, lr}\n\t"                                                                         \
      "sub sp, sp, #44\n\t"                                                                           \
      "ldm r0, {r0-r7}\n\t"                                                                           \
      "str r5, [sp, #12]\n\t"                                                                         \
      "strd r1, r2, [sp, #20]\n\t"                                                                    \
      "str r7, [sp, #28]\n\t"                                                                         \
      "str r3, [sp, #36]\n\t"                                                                         \
      "mul r8, r5, r4\n\t"                                                                            \
      "lsl r8, r8, #1\n\t"                                                                            \
      "str r8, [sp, #40]\n\t"                                                                         \
      "mvn r5, #0x007f007f\n\t"                                                                       \
      "4:\n\t"                                                                                        \
      "movs r10, #0\n\t"                                                                              \
      "movs r11, #0\n\t"                                                                              \
      "add r7, r7, #8\n\t"                                                                            \
      MTK_BAND_REPEAT_##N(MTK_BAND_PACK_GROUP)                                                        \
      "strd r10, r11, [r7, #-(16 * " MTK_BAND_STR(N) " + 8)]\n\t"                                     \
      "add r0, r0, r6\n\t"                                                                            \
      "subs r4, r4, #1\n\t"                                                                           \
      "bne 4b\n\t"                                                                                    \
      "1:\n\t"                                                                                        \
      "ldr r0, [sp, #28]\n\t"                                                                         \
      "ldrd r3, r4, [sp, #36]\n\t"                                                                    \
      "str r0, [sp, #0]\n\t"                                                                          \
      "str r3, [sp, #16]\n\t"                                                                         \
      "add r4, r4, r3\n\t"                                                                            \
      "str r4, [sp, #8]\n\t"                                                                          \
      MTK_BAND_PAIR_START                                                                             \
      MTK_BAND_REPEAT_##N(MTK_QUAD2_GROUP)                                                            \
      MTK_BAND_OUTPUTS(SIGN)                                                                          \
      "ldr r4, [sp, #36]\n\t"                                                                         \
      "ldr r2, [sp, #24]\n\t"                                                                         \
      "str r1, [sp, #20]\n\t"                                                                         \
      "adds r4, r4, #4\n\t"                                                                           \
      "str r4, [sp, #36]\n\t"                                                                         \
      "subs r2, r2, #1\n\t"                                                                           \
      "str r2, [sp, #24]\n\t"                                                                         \
      "bne 1b\n\t"                                                                                    \
      "add sp, sp, #44\n\t"                                                                           \
      "pop {r4-r11, pc}\n\t");                                                                        \
}
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
#define MTK_BAND_REPEAT_16(G) MTK_FUSED_REPEAT_8(G) MTK_FUSED_REPEAT_8(G)
/* Per number of groups (1 to 16: only the layer's is linked in), with and without the sign term. */
#define MTK_BAND_KERNELS(N)                                                \
  MTK_BAND_DSP(mtk_gemm_band_g##N##_dsp, N, MTK_FUSED_SIGN)                \
  MTK_BAND_DSP(mtk_gemm_band_g##N##_nosign_dsp, N, MTK_FUSED_NO_SIGN)
MTK_BAND_KERNELS(1) MTK_BAND_KERNELS(2) MTK_BAND_KERNELS(3) MTK_BAND_KERNELS(4)
MTK_BAND_KERNELS(5) MTK_BAND_KERNELS(6) MTK_BAND_KERNELS(7) MTK_BAND_KERNELS(8)
MTK_BAND_KERNELS(9) MTK_BAND_KERNELS(10) MTK_BAND_KERNELS(11) MTK_BAND_KERNELS(12)
MTK_BAND_KERNELS(13) MTK_BAND_KERNELS(14) MTK_BAND_KERNELS(15) MTK_BAND_KERNELS(16)

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
  const uint8_t* quad0 = (const uint8_t*)w + MTK_QUAD2_LAYER;
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
        for (int32_t q = 0; q < quads; ++q, t += MTK_FUSED_QUAD_HEAD + 16 * groups + MTK_QUAD2_PARAMS)
          mtk_fused_quad2_c(rows + 8, t, groups, o + 2 * channels * p + 4 * q, stride, 4, sum_x, lo, hi, 1);
      }
    }
    xp += 2 * k * pairs, o += 2 * channels * pairs, left -= stride ? 2 * pairs : 1;
  }
  return 0;
}

#endif /* MTK_GEMM_BAND_FUSED_H_ */
