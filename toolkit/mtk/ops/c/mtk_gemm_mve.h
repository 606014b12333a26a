/* The Helium (MVE) GEMM behind CONV_2D and FULLY_CONNECTED on the Cortex-M55 (gemm.py, "2x4/mve" and
 * "1x4/mve"): one or two rows of int8 values against every output channel, 4 channels at a time, with the
 * requantization fused.
 *
 * - Rows are read as they are (the input's rows, or im2col rows gathered into the scratch), 16 values a
 *   VLDRB; the last partial chunk is a predicated load (zeros past the row).
 * - Weights are int8, 4 channels interleaved every 16 values (gemm.py pack_weights(w, 4, 16)), zero-padded
 *   to whole chunks and tiles: one pointer walks them.
 * - Per chunk of 16 values and 4 channels: 1 or 2 row loads, 4 weight loads and 4 or 8 VMLADAVA (16 MACs
 *   each); CMSIS-NN's arm_nn_mat_mult_nt_t_s8 loads a weight vector per 4 MACs of the row block instead.
 * - The 4 sums of a row are one vector: + bias (with -in_zp * sum(w) folded in), then TFLM's
 *   MultiplyByQuantizedMultiplier per channel (every channel shifts right: requant.rshift_table), + out_zp,
 *   clamped, 4 bytes stored (predicated on the last partial tile). */
#ifndef MTK_GEMM_MVE_H_
#define MTK_GEMM_MVE_H_

#include <stdint.h>

#include <arm_mve.h>

#define MTK_MVE_INLINE static inline __attribute__((always_inline))

/* MultiplyByQuantizedMultiplier(v, mult, shift) for shift < 0 (or mult 0), + out_zp, clamped to [lo, hi]:
 * SaturatingRoundingDoublingHighMul is VQRDMULH; RoundingDivideByPOT (half away from zero) is a rounding
 * VRSHL (half up) of the value less 1 when negative (saturating: INT32_MIN stays exact). */
MTK_MVE_INLINE int32x4_t mtk_requant_mve(int32x4_t v, int32x4_t mult, int32x4_t shift, int32_t out_zp,
                                         int32x4_t lo, int32x4_t hi) {
  v = vqrdmulhq_s32(v, mult);
  v = vqaddq_s32(v, vshrq_n_s32(v, 31));
  v = vrshlq_s32(v, shift);
  v = vaddq_n_s32(v, out_zp);
  return vminq_s32(vmaxq_s32(v, lo), hi);
}

/* One chunk of 16 values of the rows (in q0, q1) against 4 channels' weights at %[wp]: sums s<row><channel>
 * (VMLADAV when ACC is "", VMLADAVA when "a"). */
#define MTK_MVE_CHUNK_1(ACC)                                                  \
  "vldrb.8 q2, [%[wp]], #16\n\t"                                               \
  "vmladav" ACC ".s8 %[s00], q0, q2\n\t"                                      \
  "vldrb.8 q3, [%[wp]], #16\n\t"                                               \
  "vmladav" ACC ".s8 %[s01], q0, q3\n\t"                                      \
  "vldrb.8 q2, [%[wp]], #16\n\t"                                               \
  "vmladav" ACC ".s8 %[s02], q0, q2\n\t"                                      \
  "vldrb.8 q3, [%[wp]], #16\n\t"                                               \
  "vmladav" ACC ".s8 %[s03], q0, q3\n\t"
#define MTK_MVE_CHUNK_2(ACC)                                                  \
  "vldrb.8 q2, [%[wp]], #16\n\t"                                               \
  "vmladav" ACC ".s8 %[s00], q0, q2\n\t"                                      \
  "vmladav" ACC ".s8 %[s10], q1, q2\n\t"                                      \
  "vldrb.8 q3, [%[wp]], #16\n\t"                                               \
  "vmladav" ACC ".s8 %[s01], q0, q3\n\t"                                      \
  "vmladav" ACC ".s8 %[s11], q1, q3\n\t"                                      \
  "vldrb.8 q2, [%[wp]], #16\n\t"                                               \
  "vmladav" ACC ".s8 %[s02], q0, q2\n\t"                                      \
  "vmladav" ACC ".s8 %[s12], q1, q2\n\t"                                      \
  "vldrb.8 q3, [%[wp]], #16\n\t"                                               \
  "vmladav" ACC ".s8 %[s03], q0, q3\n\t"                                      \
  "vmladav" ACC ".s8 %[s13], q1, q3\n\t"
/* The chunks' row loads: whole chunks with the pointers advanced, the last partial one (`tail` < 16 values)
 * predicated: lanes past the row read as 0. */
#define MTK_MVE_ROWS_1 "vldrb.8 q0, [%[p0]], #16\n\t"
#define MTK_MVE_ROWS_2 "vldrb.8 q0, [%[p0]], #16\n\tvldrb.8 q1, [%[p1]], #16\n\t"
#define MTK_MVE_TAIL_1 "vctp.8 %[tail]\n\tvpst\n\tvldrbt.8 q0, [%[p0]]\n\t"
#define MTK_MVE_TAIL_2 "vctp.8 %[tail]\n\tvpstt\n\tvldrbt.8 q0, [%[p0]]\n\tvldrbt.8 q1, [%[p1]]\n\t"

/* The sums of a tile of 4 channels over `depth` values of one row (ROWS 1) or two (ROWS 2), into v0 (and
 * v1) as vectors {s0, s1, s2, s3}; w advances past the tile's weights. The first chunk sets the sums
 * (VMLADAV), the others add (VMLADAVA): per whole chunk ROWS + 4 loads, 4 * ROWS VMLADAVA, SUBS and BNE. */
#define MTK_MVE_TILE(ROWS, v0, v1, x0, x1, w, depth)                                                             \
  do {                                                                                                          \
    const int8_t* p0_ = (x0);                                                                                   \
    const int8_t* p1_ = (x1);                                                                                   \
    int32_t n_ = (depth) >> 4, tail_ = (depth) & 15;                                                            \
    register int32_t s00 __asm__("r0"), s01 __asm__("r2"), s02 __asm__("r4"), s03 __asm__("r6");              \
    register int32_t s10 __asm__("r8"), s11 __asm__("r10"), s12 __asm__("r12"), s13 __asm__("lr");            \
    (void)p1_;                                                                                                  \
    if (n_ > 0) {                                                                                               \
      __asm__ volatile(MTK_MVE_ROWS_##ROWS MTK_MVE_CHUNK_##ROWS("")                                             \
                       "subs %[n], %[n], #1\n\t"                                                                \
                       "beq 1f\n"                                                                               \
                       "2:\n\t" MTK_MVE_ROWS_##ROWS MTK_MVE_CHUNK_##ROWS("a")                                   \
                       "subs %[n], %[n], #1\n\t"                                                                \
                       "bne 2b\n"                                                                               \
                       "1:\n\t"                                                                                 \
                       : [s00] "=&Te"(s00), [s01] "=&Te"(s01), [s02] "=&Te"(s02), [s03] "=&Te"(s03),                \
                         [s10] "=&Te"(s10), [s11] "=&Te"(s11), [s12] "=&Te"(s12), [s13] "=&Te"(s13),                \
                         [p0] "+&r"(p0_), [p1] "+&r"(p1_), [wp] "+&r"(w), [n] "+&r"(n_)                          \
                       :                                                                                        \
                       : "q0", "q1", "q2", "q3", "memory", "cc");                                               \
      if (tail_)                                                                                                \
        __asm__ volatile(MTK_MVE_TAIL_##ROWS MTK_MVE_CHUNK_##ROWS("a")                                          \
                         : [s00] "+&Te"(s00), [s01] "+&Te"(s01), [s02] "+&Te"(s02), [s03] "+&Te"(s03),              \
                           [s10] "+&Te"(s10), [s11] "+&Te"(s11), [s12] "+&Te"(s12), [s13] "+&Te"(s13),              \
                           [wp] "+&r"(w)                                                                         \
                         : [p0] "r"(p0_), [p1] "r"(p1_), [tail] "r"(tail_)                                      \
                         : "q0", "q1", "q2", "q3", "memory");                                                   \
    } else {                                                                                                    \
      __asm__ volatile(MTK_MVE_TAIL_##ROWS MTK_MVE_CHUNK_##ROWS("")                                             \
                       : [s00] "=&Te"(s00), [s01] "=&Te"(s01), [s02] "=&Te"(s02), [s03] "=&Te"(s03),                \
                         [s10] "=&Te"(s10), [s11] "=&Te"(s11), [s12] "=&Te"(s12), [s13] "=&Te"(s13),                \
                         [wp] "+&r"(w)                                                                           \
                       : [p0] "r"(p0_), [p1] "r"(p1_), [tail] "r"(tail_)                                        \
                       : "q0", "q1", "q2", "q3", "memory");                                                     \
    }                                                                                                           \
    __asm__("vmov %e[v], %[c0], %[c1]\n\tvmov %f[v], %[c2], %[c3]"                     \
            : [v] "=w"(v0) : [c0] "r"(s00), [c1] "r"(s01), [c2] "r"(s02), [c3] "r"(s03));                      \
    if (ROWS > 1)                                                                                               \
      __asm__("vmov %e[v], %[c0], %[c1]\n\tvmov %f[v], %[c2], %[c3]"                   \
              : [v] "=w"(v1) : [c0] "r"(s10), [c1] "r"(s11), [c2] "r"(s12), [c3] "r"(s13));                    \
  } while (0)

/* out_r[c] = requant(x_r . w_c + bias[c]) for rows r < ROWS (1 or 2), c < channels: row r at x + r * depth
 * (`depth` int8 values), its outputs at out + r * channels. params holds per tile of 4 channels their bias,
 * multiplier and shift, 4 int32 each (gemm_mve.py requant_params). */
#define MTK_MVE_GEMM(ROWS, x, wq, depth, channels, params, out_zp, act_min, act_max, out)                         \
  do {                                                                                                          \
    const int8_t* w_ = (const int8_t*)(wq);                                                                     \
    const int32_t* q_ = (const int32_t*)(params);                                                               \
    int8_t* o_ = (int8_t*)(out);                                                                                \
    const int32x4_t lo_ = vdupq_n_s32(act_min), hi_ = vdupq_n_s32(act_max);                                     \
    int32x4_t v0_, v1_;                                                                                         \
    for (int32_t t_ = (channels) >> 2; t_ > 0; --t_, q_ += 12, o_ += 4) {                                       \
      MTK_MVE_TILE_OUT(ROWS, v0_, v1_, x, w_, depth, q_, out_zp, lo_, hi_);                                     \
      vstrbq_s32(o_, v0_);                                                                                      \
      if (ROWS > 1) vstrbq_s32(o_ + (channels), v1_);                                                           \
    }                                                                                                           \
    if ((channels) & 3) {                                                                                       \
      const mve_pred16_t in_tile_ = vctp32q((uint32_t)((channels) & 3));                                       \
      MTK_MVE_TILE_OUT(ROWS, v0_, v1_, x, w_, depth, q_, out_zp, lo_, hi_);                                     \
      vstrbq_p_s32(o_, v0_, in_tile_);                                                                          \
      if (ROWS > 1) vstrbq_p_s32(o_ + (channels), v1_, in_tile_);                                               \
    }                                                                                                           \
  } while (0)

/* A tile's outputs as vectors v0 (v1): sums, + bias, requantized with the tile's params at q. */
#define MTK_MVE_TILE_OUT(ROWS, v0, v1, x, w, depth, q, out_zp, lo, hi)                                         \
  do {                                                                                                          \
    MTK_MVE_TILE(ROWS, v0, v1, (const int8_t*)(x), (const int8_t*)(x) + (depth), w, depth);                     \
    const int32x4_t bv_ = vldrwq_s32(q), mv_ = vldrwq_s32((q) + 4), shv_ = vldrwq_s32((q) + 8);                \
    v0 = mtk_requant_mve(vaddq_s32(v0, bv_), mv_, shv_, out_zp, lo, hi);                                        \
    if (ROWS > 1) v1 = mtk_requant_mve(vaddq_s32(v1, bv_), mv_, shv_, out_zp, lo, hi);                         \
  } while (0)

/* Two consecutive rows (x, x + depth) into two consecutive output rows (out, out + channels). */
MTK_MVE_INLINE int32_t mtk_gemm_mve_2x4_s8(const void* x, const void* w, int32_t depth, int32_t channels,
                                           const void* params, int32_t out_zp, int32_t act_min, int32_t act_max,
                                           void* out) {
  MTK_MVE_GEMM(2, x, w, depth, channels, params, out_zp, act_min, act_max, out);
  return 0;
}

/* One row: a single-row GEMM (fully connected), or the last of an odd number of rows. */
MTK_MVE_INLINE int32_t mtk_gemm_mve_1x4_s8(const void* x, const void* w, int32_t depth, int32_t channels,
                                           const void* params, int32_t out_zp, int32_t act_min, int32_t act_max,
                                           void* out) {
  MTK_MVE_GEMM(1, x, w, depth, channels, params, out_zp, act_min, act_max, out);
  return 0;
}

#endif /* MTK_GEMM_MVE_H_ */
