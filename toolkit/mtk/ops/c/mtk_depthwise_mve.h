/* DEPTHWISE_CONV_2D on Helium (MVE) cores, the whole layer in one call (depthwise_mve.py), requantization fused.
 *
 * Per output pixel, a pointer per tap to its input pixel (the input zero point's row `pad` for taps outside
 * the image: the folded bias cancels it, as in conv.py). Then per group of 16 channels and tap: 16 input
 * bytes and the tap's 16 int8 weights (VLDRB.8), two widening multiplies (VMULLB/VMULLT.S8: int16 products
 * of the even and of the odd channels) and each product vector widened (VMOVLB/VMOVLT.S16) into int32 sums
 * that start at the bias: channels {0, 4, 8, 12}, {2, 6, 10, 14}, {1, 5, 9, 13}, {3, 7, 11, 15}. Each tap
 * pointer steps 16 bytes a group. The sums requantize as vectors (mtk_requant_core_mve), narrow with
 * saturation to int16 (the even channels, then the odd), + out_zp, narrow to int8 in channel order, clamp
 * and store 16 bytes (predicated in the last partial group). With a depth multiplier M above 1, output channel
 * c reads input channel c / M: the group's 16 input bytes are one gather load (VLDRB.U8 with byte offsets from
 * the stream) from the tap's pixel.
 * The weights and the channels' bias, multiplier and shift come as one stream per group
 * (depthwise_mve.py pack_stream): int8 [taps][16], int32 [bias, multiplier, shift][4 sum vectors][4], out_zp
 * int16 [8], and with a multiplier the lanes' input channels uint8 [16]. */
#ifndef MTK_DEPTHWISE_MVE_H_
#define MTK_DEPTHWISE_MVE_H_

#include <stdint.h>

#include "mtk_gemm_mve.h"   /* mtk_requant_core_mve, MTK_MVE_INLINE */

#define MTK_DW_MVE_MAX_TAPS 16   /* tap pointers kept per pixel; larger windows step through a table */

/* One tap of a group: 16 inputs at x times 16 weights at w into the 4 sums. */
#define MTK_DW_MVE_TAP(x, w)                                              \
  do {                                                                    \
    const int8x16_t w_ = vldrbq_s8(w);                                    \
    const int16x8_t even_ = vmullbq_int_s8((x), w_), odd_ = vmulltq_int_s8((x), w_); \
    s0 = vaddq_s32(s0, vmovlbq_s16(even_));                               \
    s1 = vaddq_s32(s1, vmovltq_s16(even_));                               \
    s2 = vaddq_s32(s2, vmovlbq_s16(odd_));                                \
    s3 = vaddq_s32(s3, vmovltq_s16(odd_));                                \
  } while (0)

/* The group's 16 outputs from its sums: requantized with the params at q, + out_zp, clamped to [lo, hi]
 * (when `clamp`: an activation range narrower than int8's) and stored, the first n only when not `full`. */
MTK_MVE_INLINE void mtk_dw_mve_store(int32x4_t s0, int32x4_t s1, int32x4_t s2, int32x4_t s3, const int32_t* q,
                                     int32_t out_zp, int8x16_t lo, int8x16_t hi, int clamp, int full, int32_t n,
                                     int8_t* out) {
  s0 = mtk_requant_core_mve(s0, vldrwq_s32(q + 16), vldrwq_s32(q + 32));
  s1 = mtk_requant_core_mve(s1, vldrwq_s32(q + 20), vldrwq_s32(q + 36));
  s2 = mtk_requant_core_mve(s2, vldrwq_s32(q + 24), vldrwq_s32(q + 40));
  s3 = mtk_requant_core_mve(s3, vldrwq_s32(q + 28), vldrwq_s32(q + 44));
  /* saturating to int16 first keeps every value beyond int16 beyond [lo, hi] after the zero point */
  int16x8_t even = vqmovntq_s32(vqmovnbq_s32(vuninitializedq_s16(), s0), s1);
  int16x8_t odd = vqmovntq_s32(vqmovnbq_s32(vuninitializedq_s16(), s2), s3);
  even = vqaddq_n_s16(even, (int16_t)out_zp);
  odd = vqaddq_n_s16(odd, (int16_t)out_zp);
  int8x16_t y = vqmovntq_s16(vqmovnbq_s16(vuninitializedq_s8(), even), odd);
  if (clamp) y = vminq_s8(vmaxq_s8(y, lo), hi);
  if (full)
    vstrbq_s8(out, y);
  else
    vstrbq_p_s8(out, y, vctp8q((uint32_t)n));
}

/* The `groups` groups of 16 channels of a pixel, then `tail` channels (0-15), from its taps (tp[t]: the tap's
 * input pixel, stepping 16 bytes a group; `gathered`: a depth multiplier above 1, the group's input channel
 * per lane from the stream, tp[t] fixed) and the stream at s. */
MTK_MVE_INLINE void mtk_dw_mve_pixel(const int8_t** tp, int32_t n_taps, int32_t groups, int32_t tail,
                                     int gathered, const int8_t* s, int32_t out_zp, int8x16_t lo, int8x16_t hi, int clamp,
                                     int8_t* out) {
  for (int32_t g = 0; g <= groups; ++g, out += 16) {
    const int full = g < groups;
    if (!full && !tail) break;
    const mve_pred16_t in_group = vctp8q((uint32_t)tail);
    const int32_t* q = (const int32_t*)(s + 16 * n_taps);
    int32x4_t s0 = vldrwq_s32(q), s1 = vldrwq_s32(q + 4), s2 = vldrwq_s32(q + 8), s3 = vldrwq_s32(q + 12);
    const uint8x16_t lanes = gathered ? vldrbq_u8((const uint8_t*)(q + 52)) : vdupq_n_u8(0);
    for (int32_t t = 0; t < n_taps; ++t, s += 16) {
      int8x16_t x;
      if (gathered)
        x = full ? vldrbq_gather_offset_s8(tp[t], lanes) : vldrbq_gather_offset_z_s8(tp[t], lanes, in_group);
      else
        x = full ? vldrbq_s8(tp[t]) : vldrbq_z_s8(tp[t], in_group);
      tp[t] += gathered ? 0 : 16;
      MTK_DW_MVE_TAP(x, s);
    }
    mtk_dw_mve_store(s0, s1, s2, s3, q, out_zp, lo, hi, clamp, full, tail, out);
    s += gathered ? 224 : 208;
  }
}

#if defined(__OPTIMIZE__)
/* 3x3 windows, whole groups: one group in assembly, the 9 tap pointers in registers (gcc spills them
 * otherwise). Per tap 16 inputs (the pointer steps to the next group), 16 weights, 2 multiplies, 4 widenings
 * and 4 additions into the sums q0-q3 (the result's register a temporary too); then mtk_dw_mve_store's steps
 * up to the int8 vector, clamped and stored in C (with the output pointer an operand too, gcc runs out of
 * registers for some layers). */
#define MTK_DW_MVE_TAP_ASM(K)                                                                                  \
  "vldrb.8 q4, [%[t" #K "]], #16\n\t"                                                                          \
  "vldrb.8 q5, [%[w]], #16\n\t"                                                                                 \
  "vmullb.s8 q6, q4, q5\n\t"                                                                                    \
  "vmullt.s8 %q[y], q4, q5\n\t"                                                                                  \
  "vmovlb.s16 q4, q6\n\t"                                                                                       \
  "vadd.i32 q0, q0, q4\n\t"                                                                                     \
  "vmovlt.s16 q4, q6\n\t"                                                                                       \
  "vadd.i32 q1, q1, q4\n\t"                                                                                     \
  "vmovlb.s16 q4, %q[y]\n\t"                                                                                     \
  "vadd.i32 q2, q2, q4\n\t"                                                                                     \
  "vmovlt.s16 q4, %q[y]\n\t"                                                                                     \
  "vadd.i32 q3, q3, q4\n\t"
/* sum vector QN requantized with the multiplier and shift at [w, #M], [w, #S] (the params past the weights) */
#define MTK_DW_MVE_REQUANT_ASM(QN, M, S)                                                                       \
  "vldrw.32 q4, [%[w], #" #M "]\n\t"                                                                           \
  "vqrdmulh.s32 " QN ", " QN ", q4\n\t"                                                                         \
  "vshr.s32 q5, " QN ", #31\n\t"                                                                                \
  "vqadd.s32 " QN ", " QN ", q5\n\t"                                                                            \
  "vldrw.32 q4, [%[w], #" #S "]\n\t"                                                                           \
  "vrshl.s32 " QN ", " QN ", q4\n\t"
#define MTK_DW_MVE_GROUP_ASM                                                                                   \
  "vldrw.32 q0, [%[w], #144]\n\t"                                                                              \
  "vldrw.32 q1, [%[w], #160]\n\t"                                                                              \
  "vldrw.32 q2, [%[w], #176]\n\t"                                                                              \
  "vldrw.32 q3, [%[w], #192]\n\t"                                                                              \
  MTK_DW_MVE_TAP_ASM(0) MTK_DW_MVE_TAP_ASM(1) MTK_DW_MVE_TAP_ASM(2) MTK_DW_MVE_TAP_ASM(3) MTK_DW_MVE_TAP_ASM(4) \
  MTK_DW_MVE_TAP_ASM(5) MTK_DW_MVE_TAP_ASM(6) MTK_DW_MVE_TAP_ASM(7) MTK_DW_MVE_TAP_ASM(8)                     \
  MTK_DW_MVE_REQUANT_ASM("q0", 64, 128) MTK_DW_MVE_REQUANT_ASM("q1", 80, 144)                                  \
  MTK_DW_MVE_REQUANT_ASM("q2", 96, 160) MTK_DW_MVE_REQUANT_ASM("q3", 112, 176)                                 \
  "vqmovnb.s32 q4, q0\n\t"                                                                                      \
  "vqmovnt.s32 q4, q1\n\t"                                                                                      \
  "vqmovnb.s32 q5, q2\n\t"                                                                                      \
  "vqmovnt.s32 q5, q3\n\t"                                                                                      \
  "vldrw.32 q6, [%[w], #192]\n\t"                                                                              \
  "vqadd.s16 q4, q4, q6\n\t"                                                                                    \
  "vqadd.s16 q5, q5, q6\n\t"                                                                                    \
  "vqmovnb.s16 %q[y], q4\n\t"                                                                                  \
  "vqmovnt.s16 %q[y], q5\n\t"                                                                                  \
  "add %[w], %[w], #208\n\t"

MTK_MVE_INLINE void mtk_dw_mve_pixel_3x3(const int8_t** tp, int32_t groups, int32_t tail, const int8_t* s,
                                         int32_t out_zp, int8x16_t lo, int8x16_t hi, int clamp, int8_t* out) {
  const int8_t *t0 = tp[0], *t1 = tp[1], *t2 = tp[2], *t3 = tp[3], *t4 = tp[4], *t5 = tp[5], *t6 = tp[6],
               *t7 = tp[7], *t8 = tp[8];
  for (int32_t g = 0; g < groups; ++g, out += 16) {
    int8x16_t y;
    __asm__ volatile(MTK_DW_MVE_GROUP_ASM
                     : [y] "=&w"(y), [t0] "+r"(t0), [t1] "+r"(t1), [t2] "+r"(t2), [t3] "+r"(t3), [t4] "+r"(t4),
                       [t5] "+r"(t5), [t6] "+r"(t6), [t7] "+r"(t7), [t8] "+r"(t8), [w] "+r"(s)
                     :
                     : "q0", "q1", "q2", "q3", "q4", "q5", "q6", "memory");
    if (clamp) y = vminq_s8(vmaxq_s8(y, lo), hi);
    vstrbq_s8(out, y);
  }
  if (tail) {
    const int8_t* rest[9] = {t0, t1, t2, t3, t4, t5, t6, t7, t8};
    mtk_dw_mve_pixel(rest, 9, 0, tail, 0, s, out_zp, lo, hi, clamp, out);
  }
}
#endif

/* x [in_h][in_w][in_c] -> out [out_h][out_w][C]: the stream s as above, pad: the input zero point, one byte per
 * channel of whole groups. */
MTK_MVE_INLINE int32_t mtk_depthwise_mve_s8(const void* x, const void* s, const void* pad, void* out, int32_t in_h,
                                            int32_t in_w, int32_t in_c, int32_t C, int32_t out_h, int32_t out_w, int32_t kh,
                                            int32_t kw, int32_t stride_h, int32_t stride_w, int32_t dil_h,
                                            int32_t dil_w, int32_t pad_top, int32_t pad_left, int32_t out_zp,
                                            int32_t act_min, int32_t act_max) {
  const int8_t* xb = (const int8_t*)x;
  int8_t* o = (int8_t*)out;
  const int8x16_t lo = vdupq_n_s8((int8_t)act_min), hi = vdupq_n_s8((int8_t)act_max);
  const int clamp = act_min > -128 || act_max < 127;
  const int32_t n_taps = kh * kw, groups = C / 16, tail = C % 16;
  const int gathered = in_c != C;
  const int8_t* taps[MTK_DW_MVE_MAX_TAPS];
  for (int32_t oy = 0; oy < out_h; ++oy) {
    const int32_t iy = oy * stride_h - pad_top;
    const int rows_inside = iy >= 0 && iy + (kh - 1) * dil_h < in_h;
    for (int32_t ox = 0; ox < out_w; ++ox, o += C) {
      const int32_t ix = ox * stride_w - pad_left;
      const int8_t* corner = xb + (iy * in_w + ix) * in_c;
      /* unrolled (a constant window after inlining): the taps' offsets fold into immediates */
      if (rows_inside && ix >= 0 && ix + (kw - 1) * dil_w < in_w) {
#pragma GCC unroll 16
        for (int32_t t = 0; t < n_taps; ++t) taps[t] = corner + (t / kw * dil_h * in_w + t % kw * dil_w) * in_c;
      } else {
#pragma GCC unroll 16
        for (int32_t t = 0; t < n_taps; ++t) {
          const int32_t y = iy + t / kw * dil_h, px = ix + t % kw * dil_w;
          taps[t] = (uint32_t)y < (uint32_t)in_h && (uint32_t)px < (uint32_t)in_w
                        ? corner + (t / kw * dil_h * in_w + t % kw * dil_w) * in_c : (const int8_t*)pad;
        }
      }
#if defined(__OPTIMIZE__)
      if (n_taps == 9 && !gathered) {
        mtk_dw_mve_pixel_3x3(taps, groups, tail, (const int8_t*)s, out_zp, lo, hi, clamp, o);
        continue;
      }
#endif
      mtk_dw_mve_pixel(taps, n_taps, groups, tail, gathered, (const int8_t*)s, out_zp, lo, hi, clamp, o);
    }
  }
  return 0;
}

#endif /* MTK_DEPTHWISE_MVE_H_ */
