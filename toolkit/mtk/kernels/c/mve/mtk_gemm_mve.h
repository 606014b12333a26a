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
 *   A last tile of 1-3 channels loads and multiplies only theirs (1-3 outputs: no work on padded channels).
 * - The 4 sums of a row are one vector: + bias (with -in_zp * sum(w) folded in), then TFLM's
 *   MultiplyByQuantizedMultiplier per channel (every channel shifts right: requant.rshift_table), + out_zp,
 *   clamped, 4 bytes stored (predicated on the last partial tile). */
#ifndef MTK_GEMM_MVE_H_
#define MTK_GEMM_MVE_H_

#include <stdint.h>

#include <arm_mve.h>

#define MTK_MVE_INLINE static inline __attribute__((always_inline))

/* MultiplyByQuantizedMultiplier(v, mult, shift) for shift < 0 (or mult 0): SaturatingRoundingDoublingHighMul
 * is VQRDMULH; RoundingDivideByPOT (half away from zero) is a rounding VRSHL (half up) of the value less 1
 * when negative (saturating: INT32_MIN stays exact). */
MTK_MVE_INLINE int32x4_t mtk_requant_core_mve(int32x4_t v, int32x4_t mult, int32x4_t shift) {
  v = vqrdmulhq_s32(v, mult);
  v = vqaddq_s32(v, vshrq_n_s32(v, 31));
  return vrshlq_s32(v, shift);
}

/* MultiplyByQuantizedMultiplier(v, mult, shift) for any shift: v shifted left by lshift (>= 0, wrapping as
 * TFLM's int32 product does), VQRDMULH, then RoundingDivideByPOT by -rshift (<= 0); the value less 1 when
 * negative only where rshift < 0 (its sign bit masks v's), as CMSIS-NN's arm_divide_by_power_of_two_mve. */
MTK_MVE_INLINE int32x4_t mtk_requant_lshift_mve(int32x4_t v, int32x4_t mult, int32x4_t rshift, int32x4_t lshift) {
  v = vqrdmulhq_s32(vshlq_s32(v, lshift), mult);
  v = vqaddq_s32(v, vshrq_n_s32(vandq_s32(v, rshift), 31));
  return vrshlq_s32(v, rshift);
}

/* The same, + out_zp, clamped to [lo, hi]. */
MTK_MVE_INLINE int32x4_t mtk_requant_mve(int32x4_t v, int32x4_t mult, int32x4_t shift, int32_t out_zp,
                                         int32x4_t lo, int32x4_t hi) {
  v = vaddq_n_s32(mtk_requant_core_mve(v, mult, shift), out_zp);
  return vminq_s32(vmaxq_s32(v, lo), hi);
}

/* One chunk of 16 values of the rows (in q0, q1) against the weights at %[wp] of CH channels (1-4) of a tile:
 * sums s<row><channel> (VMLADAV when ACC is "", VMLADAVA when "a"). A narrow last tile (CH < 4) skips its
 * zero-padded channels' weights instead of multiplying them: the last load steps over them. */
#define MTK_MVE_CHUNK(ROWS, CH, ACC) MTK_MVE_CHUNK_##CH(ROWS, ACC)
#define MTK_MVE_CHUNK_4(ROWS, ACC) \
  MTK_MVE_W("q2", 16) MTK_MVE_MAC_##ROWS(ACC, 0, "q2") MTK_MVE_W("q3", 16) MTK_MVE_MAC_##ROWS(ACC, 1, "q3") \
  MTK_MVE_W("q2", 16) MTK_MVE_MAC_##ROWS(ACC, 2, "q2") MTK_MVE_W("q3", 16) MTK_MVE_MAC_##ROWS(ACC, 3, "q3")
#define MTK_MVE_CHUNK_3(ROWS, ACC) \
  MTK_MVE_W("q2", 16) MTK_MVE_MAC_##ROWS(ACC, 0, "q2") MTK_MVE_W("q3", 16) MTK_MVE_MAC_##ROWS(ACC, 1, "q3") \
  MTK_MVE_W("q2", 32) MTK_MVE_MAC_##ROWS(ACC, 2, "q2")
#define MTK_MVE_CHUNK_2(ROWS, ACC) \
  MTK_MVE_W("q2", 16) MTK_MVE_MAC_##ROWS(ACC, 0, "q2") MTK_MVE_W("q3", 48) MTK_MVE_MAC_##ROWS(ACC, 1, "q3")
#define MTK_MVE_CHUNK_1(ROWS, ACC) MTK_MVE_W("q2", 64) MTK_MVE_MAC_##ROWS(ACC, 0, "q2")
#define MTK_MVE_W(q, step) "vldrb.8 " q ", [%[wp]], #" #step "\n\t"
#define MTK_MVE_MAC_1(ACC, c, q) "vmladav" ACC ".s8 %[s0" #c "], q0, " q "\n\t"
#define MTK_MVE_MAC_2(ACC, c, q) MTK_MVE_MAC_1(ACC, c, q) "vmladav" ACC ".s8 %[s1" #c "], q1, " q "\n\t"
/* The chunks' row loads: whole chunks with the pointers advanced, the last partial one (`tail` < 16 values)
 * predicated: lanes past the row read as 0. */
#define MTK_MVE_ROWS_1 "vldrb.8 q0, [%[p0]], #16\n\t"
#define MTK_MVE_ROWS_2 "vldrb.8 q0, [%[p0]], #16\n\tvldrb.8 q1, [%[p1]], #16\n\t"
#define MTK_MVE_TAIL_1 "vctp.8 %[tail]\n\tvpst\n\tvldrbt.8 q0, [%[p0]]\n\t"
#define MTK_MVE_TAIL_2 "vctp.8 %[tail]\n\tvpstt\n\tvldrbt.8 q0, [%[p0]]\n\tvldrbt.8 q1, [%[p1]]\n\t"
#define MTK_MVE_SET(s) "=&Te"(s)
#define MTK_MVE_ADD(s) "+&Te"(s)

/* Chunks: LOAD (the rows' next 16 values, or the predicated last ones) and the products with CH channels'
 * weights, setting the sums (ACC "", SUMS MTK_MVE_SET: the first chunk) or adding to them ("a",
 * MTK_MVE_ADD), once or (LOOP) 4 at a time for `k_` passes (SUBS, BNE). The sums live in even registers
 * (VMLADAV's operand), r0 .. r12 and lr, fixed: gcc may not take lr for a loop of its own around them, so
 * the repetition is written out in the assembly (no .rept either: gcc would misjudge the code's length). */
#define MTK_MVE_ASM_CHUNKS(ROWS, CH, LOAD, ACC, SUMS, REPEAT) MTK_MVE_ASM_CHUNKS_(ROWS, CH, LOAD, ACC, SUMS, REPEAT)
#define MTK_MVE_ASM_CHUNKS_(ROWS, CH, LOAD, ACC, SUMS, BODY, MORE_OUT, MORE_IN)                                  \
  __asm__ volatile(BODY(LOAD MTK_MVE_CHUNK(ROWS, CH, ACC))                                                       \
                   : [s00] SUMS(s00), [s01] SUMS(s01), [s02] SUMS(s02), [s03] SUMS(s03), [s10] SUMS(s10),       \
                     [s11] SUMS(s11), [s12] SUMS(s12), [s13] SUMS(s13), [p0] "+r"(p0_), [p1] "+r"(p1_),         \
                     [wp] "+r"(wt_) MORE_OUT()                                                                  \
                   : [none] "i"(0) MORE_IN()                                                                    \
                   : "q0", "q1", "q2", "q3", "p0", "memory", "cc")
#define MTK_MVE_ONCE MTK_MVE_BODY_ONCE, MTK_MVE_NONE, MTK_MVE_NONE
#define MTK_MVE_LOOP4 MTK_MVE_BODY_LOOP4, MTK_MVE_PASSES, MTK_MVE_NONE
#define MTK_MVE_TAIL_ONCE MTK_MVE_BODY_ONCE, MTK_MVE_NONE, MTK_MVE_TAIL_VALUES
#define MTK_MVE_BODY_ONCE(CHUNK) CHUNK
#define MTK_MVE_BODY_LOOP4(CHUNK) "2:\n\t" CHUNK CHUNK CHUNK CHUNK "subs %[n], %[n], #1\n\tbne 2b\n\t"
#define MTK_MVE_NONE()
#define MTK_MVE_PASSES() , [n] "+r"(k_)
#define MTK_MVE_TAIL_VALUES() , [tail] "r"(tail_)

#if defined(__OPTIMIZE__)
/* The sums of a tile of CH channels (1-4) over `depth` values of one row (ROWS 1) or two (ROWS 2), into v0
 * (and v1) as vectors {s0, s1, s2, s3} (lanes from CH on undefined); w advances past the tile's 4 channels'
 * weights. Per whole chunk ROWS + CH loads and CH * ROWS VMLADAV(A); a loop of 4 chunks a pass, then the 0-3 left one by one (a constant depth folds). */
#define MTK_MVE_TILE(ROWS, CH, v0, v1, x0, x1, w, depth)                                                             \
  do {                                                                                                          \
    const int8_t* p0_ = (x0);                                                                                   \
    const int8_t* p1_ = (x1);                                                                                   \
    const int8_t* wt_ = (w);                                                                                    \
    const int32_t n_ = ((depth) >> 4) - 1;                                                                      \
    const int32_t tail_ = (depth) & 15;                                                                         \
    register int32_t s00 __asm__("r0"), s01 __asm__("r2"), s02 __asm__("r4"), s03 __asm__("r6");              \
    register int32_t s10 __asm__("r8"), s11 __asm__("r10"), s12 __asm__("r12"), s13 __asm__("lr");            \
    if (n_ >= 0) {                                                                                              \
      MTK_MVE_ASM_CHUNKS(ROWS, CH, MTK_MVE_ROWS_##ROWS, "", MTK_MVE_SET, MTK_MVE_ONCE);                             \
      if (n_ >= 4) {                                                                                            \
        int32_t k_ = n_ >> 2;                                                                                   \
        MTK_MVE_ASM_CHUNKS(ROWS, CH, MTK_MVE_ROWS_##ROWS, "a", MTK_MVE_ADD, MTK_MVE_LOOP4);                         \
      }                                                                                                         \
      if (n_ & 3) MTK_MVE_ASM_CHUNKS(ROWS, CH, MTK_MVE_ROWS_##ROWS, "a", MTK_MVE_ADD, MTK_MVE_ONCE);                \
      if ((n_ & 3) > 1) MTK_MVE_ASM_CHUNKS(ROWS, CH, MTK_MVE_ROWS_##ROWS, "a", MTK_MVE_ADD, MTK_MVE_ONCE);          \
      if ((n_ & 3) > 2) MTK_MVE_ASM_CHUNKS(ROWS, CH, MTK_MVE_ROWS_##ROWS, "a", MTK_MVE_ADD, MTK_MVE_ONCE);          \
      if (tail_) MTK_MVE_ASM_CHUNKS(ROWS, CH, MTK_MVE_TAIL_##ROWS, "a", MTK_MVE_ADD, MTK_MVE_TAIL_ONCE);            \
    } else {                                                                                                    \
      MTK_MVE_ASM_CHUNKS(ROWS, CH, MTK_MVE_TAIL_##ROWS, "", MTK_MVE_SET, MTK_MVE_TAIL_ONCE);                        \
    }                                                                                                           \
    (w) = wt_;                                                                                                  \
    __asm__("vmov %e[v], %[c0], %[c1]\n\tvmov %f[v], %[c2], %[c3]"                     \
            : [v] "=w"(v0) : [c0] "r"(s00), [c1] "r"(s01), [c2] "r"(s02), [c3] "r"(s03));                      \
    if (ROWS > 1)                                                                                               \
      __asm__("vmov %e[v], %[c0], %[c1]\n\tvmov %f[v], %[c2], %[c3]"                   \
              : [v] "=w"(v1) : [c0] "r"(s10), [c1] "r"(s11), [c2] "r"(s12), [c3] "r"(s13));                    \
  } while (0)
#else
/* Unoptimized builds (-O0 keeps too few registers free for the sums above): the same sums in intrinsics (all 4
 * channels). */
#define MTK_MVE_TILE(ROWS, CH, v0, v1, x0, x1, w, depth)                                                             \
  do {                                                                                                          \
    int32_t s_[2][4] = {{0, 0, 0, 0}, {0, 0, 0, 0}};                                                            \
    const int8_t* rows_[2] = {(x0), (x1)};                                                                      \
    for (int32_t k_ = 0; k_ < (depth); k_ += 16, (w) += 64) {                                                   \
      const mve_pred16_t in_row_ = vctp8q((uint32_t)((depth) - k_));                                           \
      for (int32_t r_ = 0; r_ < (ROWS); ++r_) {                                                                 \
        const int8x16_t a_ = vldrbq_z_s8(rows_[r_] + k_, in_row_);                                              \
        for (int32_t j_ = 0; j_ < 4; ++j_) s_[r_][j_] = vmladavaq_s8(s_[r_][j_], a_, vldrbq_s8((w) + 16 * j_)); \
      }                                                                                                         \
    }                                                                                                           \
    v0 = vldrwq_s32(s_[0]);                                                                                     \
    v1 = vldrwq_s32(s_[1]);                                                                                     \
  } while (0)
#endif

/* out_r[c] = requant(x_r . w_c + bias[c]) for rows r < ROWS (1 or 2), c < channels: row r at x + r * depth
 * (`depth` int8 values), its outputs at out + r * out_step; a last partial tile only multiplies its channels
 * (`channels` is a constant once inlined: one tile width is compiled). params holds per tile of 4 channels their bias,
 * multiplier and shift, 4 int32 each (gemm_mve.py requant_params); with LSHIFT 1 the right shift (<= 0) and
 * then the left shift (>= 0) of each channel. */
#define MTK_MVE_GEMM(ROWS, LSHIFT, x, wq, depth, channels, params, out_zp, act_min, act_max, out, out_step)       \
  do {                                                                                                          \
    const int8_t* w_ = (const int8_t*)(wq);                                                                     \
    const int32_t* q_ = (const int32_t*)(params);                                                               \
    int8_t* o_ = (int8_t*)(out);                                                                                \
    const int32x4_t lo_ = vdupq_n_s32(act_min), hi_ = vdupq_n_s32(act_max);                                     \
    int32x4_t v0_, v1_;                                                                                         \
    for (int32_t t_ = (channels) >> 2; t_ > 0; --t_, q_ += 12 + 4 * (LSHIFT), o_ += 4) {                        \
      MTK_MVE_TILE_OUT(ROWS, 4, LSHIFT, v0_, v1_, x, w_, depth, q_, out_zp, lo_, hi_);                             \
      vstrbq_s32(o_, v0_);                                                                                      \
      if (ROWS > 1) vstrbq_s32(o_ + (out_step), v1_);                                                             \
    }                                                                                                           \
    if ((channels) & 3) {                                                                                       \
      const mve_pred16_t in_tile_ = vctp32q((uint32_t)((channels) & 3));                                       \
      if (((channels) & 3) == 1) MTK_MVE_TILE_OUT(ROWS, 1, LSHIFT, v0_, v1_, x, w_, depth, q_, out_zp, lo_, hi_); \
      else if (((channels) & 3) == 2) MTK_MVE_TILE_OUT(ROWS, 2, LSHIFT, v0_, v1_, x, w_, depth, q_, out_zp, lo_, hi_); \
      else MTK_MVE_TILE_OUT(ROWS, 3, LSHIFT, v0_, v1_, x, w_, depth, q_, out_zp, lo_, hi_);                      \
      vstrbq_p_s32(o_, v0_, in_tile_);                                                                          \
      if (ROWS > 1) vstrbq_p_s32(o_ + (out_step), v1_, in_tile_);                                                 \
    }                                                                                                           \
  } while (0)

/* A tile's outputs as vectors v0 (v1) (CH channels: MTK_MVE_TILE): sums, + bias, requantized with the tile's params at q. */
#define MTK_MVE_TILE_OUT(ROWS, CH, LSHIFT, v0, v1, x, w, depth, q, out_zp, lo, hi)                             \
  do {                                                                                                          \
    MTK_MVE_TILE(ROWS, CH, v0, v1, (const int8_t*)(x), (const int8_t*)(x) + (depth), w, depth);                     \
    const int32x4_t bv_ = vldrwq_s32(q), mv_ = vldrwq_s32((q) + 4), shv_ = vldrwq_s32((q) + 8);                \
    if (LSHIFT) {                                                                                               \
      const int32x4_t lv_ = vldrwq_s32((q) + 12), zp_ = vdupq_n_s32(out_zp);                                    \
      v0 = vminq_s32(vmaxq_s32(vaddq_s32(mtk_requant_lshift_mve(vaddq_s32(v0, bv_), mv_, shv_, lv_), zp_), lo), hi); \
      if (ROWS > 1)                                                                                             \
        v1 = vminq_s32(vmaxq_s32(vaddq_s32(mtk_requant_lshift_mve(vaddq_s32(v1, bv_), mv_, shv_, lv_), zp_), lo), hi); \
    } else {                                                                                                    \
      v0 = mtk_requant_mve(vaddq_s32(v0, bv_), mv_, shv_, out_zp, lo, hi);                                      \
      if (ROWS > 1) v1 = mtk_requant_mve(vaddq_s32(v1, bv_), mv_, shv_, out_zp, lo, hi);                       \
    }                                                                                                           \
  } while (0)

/* Two consecutive rows (x, x + depth) into two consecutive output rows (out, out + channels). */
MTK_MVE_INLINE int32_t mtk_gemm_mve_2x4_s8(const void* x, const void* w, int32_t depth, int32_t channels,
                                           const void* params, int32_t out_zp, int32_t act_min, int32_t act_max,
                                           void* out) {
  MTK_MVE_GEMM(2, 0, x, w, depth, channels, params, out_zp, act_min, act_max, out, channels);
  return 0;
}

/* One row: a single-row GEMM (fully connected), or the last of an odd number of rows. */
MTK_MVE_INLINE int32_t mtk_gemm_mve_1x4_s8(const void* x, const void* w, int32_t depth, int32_t channels,
                                           const void* params, int32_t out_zp, int32_t act_min, int32_t act_max,
                                           void* out) {
  MTK_MVE_GEMM(1, 0, x, w, depth, channels, params, out_zp, act_min, act_max, out, channels);
  return 0;
}

/* The same two for layers with a channel that shifts left (params: 16 int32 a tile). */
MTK_MVE_INLINE int32_t mtk_gemm_mve_2x4_lshift_s8(const void* x, const void* w, int32_t depth, int32_t channels,
                                                  const void* params, int32_t out_zp, int32_t act_min,
                                                  int32_t act_max, void* out) {
  MTK_MVE_GEMM(2, 1, x, w, depth, channels, params, out_zp, act_min, act_max, out, channels);
  return 0;
}

MTK_MVE_INLINE int32_t mtk_gemm_mve_1x4_lshift_s8(const void* x, const void* w, int32_t depth, int32_t channels,
                                                  const void* params, int32_t out_zp, int32_t act_min,
                                                  int32_t act_max, void* out) {
  MTK_MVE_GEMM(1, 1, x, w, depth, channels, params, out_zp, act_min, act_max, out, channels);
  return 0;
}

/* Two consecutive rows into output rows `out_step` bytes apart (the pixels of a transpose convolution's stride
 * phase: ops/transpose_conv_phases.py), every channel shifting right, or (_lshift) some left. */
MTK_MVE_INLINE int32_t mtk_gemm_mve_2x4_apart_s8(const void* x, const void* w, int32_t depth, int32_t channels,
                                                 const void* params, int32_t out_zp, int32_t act_min,
                                                 int32_t act_max, void* out, int32_t out_step) {
  MTK_MVE_GEMM(2, 0, x, w, depth, channels, params, out_zp, act_min, act_max, out, out_step);
  return 0;
}

MTK_MVE_INLINE int32_t mtk_gemm_mve_2x4_apart_lshift_s8(const void* x, const void* w, int32_t depth, int32_t channels,
                                                        const void* params, int32_t out_zp, int32_t act_min,
                                                        int32_t act_max, void* out, int32_t out_step) {
  MTK_MVE_GEMM(2, 1, x, w, depth, channels, params, out_zp, act_min, act_max, out, out_step);
  return 0;
}

#endif /* MTK_GEMM_MVE_H_ */
