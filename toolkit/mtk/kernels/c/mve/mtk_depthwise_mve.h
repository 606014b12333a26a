/* DEPTHWISE_CONV_2D on Helium (MVE) cores, the whole layer in one call (depthwise_mve.py), requantization fused.
 *
 * Per output pixel, a table of a pointer per tap to its input pixel (the input zero point's row `pad` for taps
 * outside the image: the folded bias cancels it, as in conv.py). Then per group of 16 channels and tap: 16
 * input bytes and the tap's 16 int8 weights (VLDRB.8), two widening multiplies (VMULLB/VMULLT.S8: int16
 * products of the even and of the odd channels) and each product vector widened (VMOVLB/VMOVLT.S16) into int32
 * sums that start at the bias: channels {0, 4, 8, 12}, {2, 6, 10, 14}, {1, 5, 9, 13}, {3, 7, 11, 15}. Taps go
 * by pairs when the layer allows (`pairs` > 0): the two taps' int16 products are added before widening, exact
 * because no channel has -128 as both weights (|x0 w0 + x1 w1| <= 128 * 255 < 2^15). The sums requantize as
 * vectors (mtk_requant_core_mve), narrow with saturation to int16 (the even channels, then the odd),
 * + out_zp, narrow to int8 in channel order, clamp and store 16 bytes (predicated in a last group of 9-15).
 * Groups run in assembly (3x3 windows with the tap pointers in registers, others in a loop over the table),
 * unoptimized builds in C. A last group of 1-8 channels goes 8 lanes wide, in C: inputs and weights widened to
 * int16 by the loads (VLDRB.S16), VMUL.I16 (a pair's products added as above), sums of the channels
 * {0, 2, 4, 6} and {1, 3, 5, 7}. With a depth multiplier M above 1, output channel c reads input channel c / M:
 * the group's input bytes are one gather load (VLDRB with byte offsets from the stream) from the tap's pixel.
 * The stream (depthwise_mve.py pack_stream), per group of 16 channels: int32 [bias, multiplier, shift][sum
 * vector][4], out_zp int16 [8], with a multiplier the lanes' input channels uint8 [16], the weights int8
 * [taps][16]; a last group of 1-8: int32 [bias, multiplier, shift][even, odd][4], uint16 [8], int8 [taps][8]. */
#ifndef MTK_DEPTHWISE_MVE_H_
#define MTK_DEPTHWISE_MVE_H_

#include <stdint.h>

#include "mtk_gemm_mve.h"   /* mtk_requant_core_mve, MTK_MVE_INLINE */

#define MTK_DW_MVE_PARAMS 208   /* bytes of a group's params: bias, multiplier, shift (int32 [16] each), out_zp */
#define MTK_DW_MVE_TABLE 64   /* tap pointers a fixed table holds on the stack */
#define MTK_DW_MVE_HALF_PARAMS 96   /* of a last group of 8 lanes: bias, multiplier, shift (int32 [8] each) */

/* One tap of a group: 16 inputs x times the 16 weights at w into the 4 sums. */
#define MTK_DW_MVE_TAP(x, w)                                                         \
  do {                                                                               \
    const int8x16_t w_ = vldrbq_s8(w);                                               \
    const int16x8_t even_ = vmullbq_int_s8((x), w_), odd_ = vmulltq_int_s8((x), w_); \
    s0 = vaddq_s32(s0, vmovlbq_s16(even_));                                          \
    s1 = vaddq_s32(s1, vmovltq_s16(even_));                                          \
    s2 = vaddq_s32(s2, vmovlbq_s16(odd_));                                           \
    s3 = vaddq_s32(s3, vmovltq_s16(odd_));                                           \
  } while (0)

/* y clamped to the activation's range [act_min, act_max] (a constant after inlining: only the bounds inside int8) */
MTK_MVE_INLINE int8x16_t mtk_dw_mve_clamp(int8x16_t y, int32_t act_min, int32_t act_max) {
  if (act_min > -128) y = vmaxq_s8(y, vdupq_n_s8((int8_t)act_min));
  if (act_max < 127) y = vminq_s8(y, vdupq_n_s8((int8_t)act_max));
  return y;
}

/* One group of 16 channels of a pixel (the first n only when n < 16) from its taps and the group's stream at
 * s: tp[t] + c are the tap's 16 input bytes; with `gathered`, the lanes' input channels are byte offsets from
 * tp[t]. Returns the next group's stream. (The assembly below runs the groups without a multiplier.) */
MTK_MVE_INLINE const int8_t* mtk_dw_mve_group(const int8_t* const* tp, int32_t n_taps, int32_t c, int gathered,
                                              const int8_t* s, int32_t n, int32_t out_zp, int32_t act_min,
                                              int32_t act_max, int8_t* out) {
  const int32_t* q = (const int32_t*)s;
  int32x4_t s0 = vldrwq_s32(q), s1 = vldrwq_s32(q + 4), s2 = vldrwq_s32(q + 8), s3 = vldrwq_s32(q + 12);
  const uint8x16_t lanes = gathered ? vldrbq_u8((const uint8_t*)(s + MTK_DW_MVE_PARAMS)) : vdupq_n_u8(0);
  const int8_t* w = s + MTK_DW_MVE_PARAMS + (gathered ? 16 : 0);
  const mve_pred16_t in_group = vctp8q((uint32_t)n);
  for (int32_t t = 0; t < n_taps; ++t, w += 16) {
    int8x16_t x;
    if (gathered)
      x = n >= 16 ? vldrbq_gather_offset_s8(tp[t], lanes) : vldrbq_gather_offset_z_s8(tp[t], lanes, in_group);
    else
      x = n >= 16 ? vldrbq_s8(tp[t] + c) : vldrbq_z_s8(tp[t] + c, in_group);
    MTK_DW_MVE_TAP(x, w);
  }
  s0 = mtk_requant_core_mve(s0, vldrwq_s32(q + 16), vldrwq_s32(q + 32));
  s1 = mtk_requant_core_mve(s1, vldrwq_s32(q + 20), vldrwq_s32(q + 36));
  s2 = mtk_requant_core_mve(s2, vldrwq_s32(q + 24), vldrwq_s32(q + 40));
  s3 = mtk_requant_core_mve(s3, vldrwq_s32(q + 28), vldrwq_s32(q + 44));
  /* saturating to int16 first keeps every value beyond int16 beyond the activation's range after the zero point */
  const int16x8_t even = vqaddq_n_s16(vqmovntq_s32(vqmovnbq_s32(vuninitializedq_s16(), s0), s1), (int16_t)out_zp);
  const int16x8_t odd = vqaddq_n_s16(vqmovntq_s32(vqmovnbq_s32(vuninitializedq_s16(), s2), s3), (int16_t)out_zp);
  int8x16_t y = vqmovntq_s16(vqmovnbq_s16(vuninitializedq_s8(), even), odd);
  y = mtk_dw_mve_clamp(y, act_min, act_max);
  if (n >= 16)
    vstrbq_s8(out, y);
  else
    vstrbq_p_s8(out, y, in_group);
  return w;
}

/* A last group of n <= 8 channels, 8 lanes wide (as mtk_dw_mve_group; `pairs` pairs of taps first). */
MTK_MVE_INLINE void mtk_dw_mve_half(const int8_t* const* tp, int32_t n_taps, int32_t pairs, int32_t c, int gathered,
                                    const int8_t* s, int32_t n, int32_t out_zp, int32_t act_min, int32_t act_max,
                                    int8_t* out) {
  const int32_t* q = (const int32_t*)s;
  int32x4_t even = vldrwq_s32(q), odd = vldrwq_s32(q + 4);
  const uint16x8_t lanes = gathered ? vldrhq_u16((const uint16_t*)(s + MTK_DW_MVE_HALF_PARAMS)) : vdupq_n_u16(0);
  const int8_t* w = s + MTK_DW_MVE_HALF_PARAMS + (gathered ? 16 : 0);
  const mve_pred16_t in_group = vctp16q((uint32_t)n);
#define MTK_DW_MVE_HALF_INPUT(t)                                                                              \
  (gathered ? (n >= 8 ? vldrbq_gather_offset_s16(tp[t], lanes) : vldrbq_gather_offset_z_s16(tp[t], lanes, in_group)) \
            : (n >= 8 ? vldrbq_s16(tp[t] + c) : vldrbq_z_s16(tp[t] + c, in_group)))
  int32_t t = 0;
  for (; t < 2 * pairs; t += 2, w += 16) {
    const int16x8_t sum = vaddq_s16(vmulq_s16(MTK_DW_MVE_HALF_INPUT(t), vldrbq_s16(w)),
                                    vmulq_s16(MTK_DW_MVE_HALF_INPUT(t + 1), vldrbq_s16(w + 8)));
    even = vaddq_s32(even, vmovlbq_s16(sum));
    odd = vaddq_s32(odd, vmovltq_s16(sum));
  }
  for (; t < n_taps; ++t, w += 8) {
    const int16x8_t x = MTK_DW_MVE_HALF_INPUT(t), wv = vldrbq_s16(w);
    even = vaddq_s32(even, vmullbq_int_s16(x, wv));
    odd = vaddq_s32(odd, vmulltq_int_s16(x, wv));
  }
#undef MTK_DW_MVE_HALF_INPUT
  even = mtk_requant_core_mve(even, vldrwq_s32(q + 8), vldrwq_s32(q + 16));
  odd = mtk_requant_core_mve(odd, vldrwq_s32(q + 12), vldrwq_s32(q + 20));
  int16x8_t y = vqaddq_n_s16(vqmovntq_s32(vqmovnbq_s32(vuninitializedq_s16(), even), odd), (int16_t)out_zp);
  y = vminq_s16(vmaxq_s16(y, vdupq_n_s16((int16_t)act_min)), vdupq_n_s16((int16_t)act_max));
  if (n >= 8)
    vstrbq_s16(out, y);
  else
    vstrbq_p_s16(out, y, in_group);
}

#if defined(__OPTIMIZE__)
/* Groups of 16 channels without a multiplier in assembly. q0-q3 the sums, q4-q6 and the result's register
 * %q[y] temporaries; %[s] the group's stream. LOAD puts a tap's 16 inputs in q4. */
#define MTK_DW_MVE_WIDEN_ASM(QS, QB, QT) \
  "vmovlb.s16 q4, " QS "\n\t"            \
  "vadd.i32 " QB ", " QB ", q4\n\t"      \
  "vmovlt.s16 q4, " QS "\n\t"            \
  "vadd.i32 " QT ", " QT ", q4\n\t"
#define MTK_DW_MVE_TAP_ASM(LOAD)        \
  LOAD                                  \
  "vldrb.8 q5, [%[w]], #16\n\t"         \
  "vmullb.s8 q6, q4, q5\n\t"            \
  "vmullt.s8 %q[y], q4, q5\n\t"         \
  MTK_DW_MVE_WIDEN_ASM("q6", "q0", "q1") MTK_DW_MVE_WIDEN_ASM("%q[y]", "q2", "q3")
/* two taps: the second's odd products overwrite its weights (VMULL of bytes reads each pair before writing
 * it), which are loaded again for the even ones */
#define MTK_DW_MVE_PAIR_ASM(LOAD0, LOAD1) \
  LOAD0                                   \
  "vldrb.8 q5, [%[w]], #16\n\t"           \
  "vmullb.s8 q6, q4, q5\n\t"              \
  "vmullt.s8 %q[y], q4, q5\n\t"           \
  LOAD1                                   \
  "vldrb.8 q5, [%[w]], #16\n\t"           \
  "vmullt.s8 q5, q4, q5\n\t"              \
  "vadd.i16 %q[y], %q[y], q5\n\t"         \
  "vldrb.8 q5, [%[w], #-16]\n\t"          \
  "vmullb.s8 q4, q4, q5\n\t"              \
  "vadd.i16 q6, q6, q4\n\t"               \
  MTK_DW_MVE_WIDEN_ASM("q6", "q0", "q1") MTK_DW_MVE_WIDEN_ASM("%q[y]", "q2", "q3")
#define MTK_DW_MVE_BIAS_ASM(P)       \
  "vldrw.32 q0, [" P "]\n\t"         \
  "vldrw.32 q1, [" P ", #16]\n\t"    \
  "vldrw.32 q2, [" P ", #32]\n\t"    \
  "vldrw.32 q3, [" P ", #48]\n\t"
/* sum vector QN requantized with the multiplier and shift at [P, #M], [P, #S] */
#define MTK_DW_MVE_REQUANT_ASM(P, QN, M, S)     \
  "vldrw.32 q4, [" P ", #" #M "]\n\t"           \
  "vqrdmulh.s32 " QN ", " QN ", q4\n\t"         \
  "vshr.s32 q5, " QN ", #31\n\t"                \
  "vqadd.s32 " QN ", " QN ", q5\n\t"            \
  "vldrw.32 q4, [" P ", #" #S "]\n\t"           \
  "vrshl.s32 " QN ", " QN ", q4\n\t"
/* the group's int8 outputs in %q[y] (not clamped), its multipliers at P + M0.., shifts at P + S0.., out_zp at
 * P + ZP */
#define MTK_DW_MVE_OUTPUT_ASM(P, M0, M1, M2, M3, S0, S1, S2, S3, ZP) \
  MTK_DW_MVE_REQUANT_ASM(P, "q0", M0, S0) MTK_DW_MVE_REQUANT_ASM(P, "q1", M1, S1)  \
  MTK_DW_MVE_REQUANT_ASM(P, "q2", M2, S2) MTK_DW_MVE_REQUANT_ASM(P, "q3", M3, S3)  \
  "vqmovnb.s32 q4, q0\n\t"                                              \
  "vqmovnt.s32 q4, q1\n\t"                                              \
  "vqmovnb.s32 q5, q2\n\t"                                              \
  "vqmovnt.s32 q5, q3\n\t"                                              \
  "vldrw.32 q6, [" P ", #" #ZP "]\n\t"                                  \
  "vqadd.s16 q4, q4, q6\n\t"                                            \
  "vqadd.s16 q5, q5, q6\n\t"                                            \
  "vqmovnb.s16 %q[y], q4\n\t"                                           \
  "vqmovnt.s16 %q[y], q5\n\t"

/* 3x3 windows, paired, a whole group with the 9 tap pointers in registers r0-r6, r8, r9 (as operands, gcc runs
 * out of registers for some layers), loaded from the table at %[tab] and stored back advanced by 16; %[w] steps
 * from the group's stream through its weights to the next group's (the params 352 bytes back) */
#define MTK_DW_MVE_3X3_TAPS "{r0, r1, r2, r3, r4, r5, r6, r8, r9}"
#define MTK_DW_MVE_LOAD_ASM(R) "vldrb.8 q4, [" R "], #16\n\t"
#define MTK_DW_MVE_GROUP_3X3_ASM                                                                              \
  "ldm %[tab], " MTK_DW_MVE_3X3_TAPS "\n\t"                                                                   \
  MTK_DW_MVE_BIAS_ASM("%[w]")                                                                                 \
  "add %[w], %[w], #208\n\t"                                                                                  \
  MTK_DW_MVE_PAIR_ASM(MTK_DW_MVE_LOAD_ASM("r0"), MTK_DW_MVE_LOAD_ASM("r1"))                                   \
  MTK_DW_MVE_PAIR_ASM(MTK_DW_MVE_LOAD_ASM("r2"), MTK_DW_MVE_LOAD_ASM("r3"))                                   \
  MTK_DW_MVE_PAIR_ASM(MTK_DW_MVE_LOAD_ASM("r4"), MTK_DW_MVE_LOAD_ASM("r5"))                                   \
  MTK_DW_MVE_PAIR_ASM(MTK_DW_MVE_LOAD_ASM("r6"), MTK_DW_MVE_LOAD_ASM("r8"))                                   \
  MTK_DW_MVE_TAP_ASM(MTK_DW_MVE_LOAD_ASM("r9"))                                                               \
  "stm %[tab], " MTK_DW_MVE_3X3_TAPS "\n\t"                                                                   \
  MTK_DW_MVE_OUTPUT_ASM("%[w]", -288, -272, -256, -240, -224, -208, -192, -176, -160)

/* returns the stream after the groups; the table's pointers end at the channel after them */
MTK_MVE_INLINE const int8_t* mtk_dw_mve_groups_3x3(const int8_t** tp, int32_t groups, const int8_t* s,
                                                   int32_t act_min, int32_t act_max, int8_t* out) {
  for (int32_t g = 0; g < groups; ++g, out += 16) {
    int8x16_t y;
    __asm__ volatile(MTK_DW_MVE_GROUP_3X3_ASM
                     : [y] "=&w"(y), [w] "+&r"(s)
                     : [tab] "r"(tp)
                     : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r8", "r9", "q0", "q1", "q2", "q3", "q4", "q5",
                       "q6", "memory");
    y = mtk_dw_mve_clamp(y, act_min, act_max);
    vstrbq_s8(out, y);
  }
  return s;
}

/* Any window: per group, counts & 0xffff pairs of taps then counts >> 16 single taps from the table at %[t];
 * ADD_C moves a tap's pointer to the group (+ c, its first channel); LOAD loads its inputs, under PREDICATE's lanes
 * in a partial group; the weights start WEIGHTS bytes into the group's stream. */
#define MTK_DW_MVE_ADD_C_ASM(R) "add " R ", " R ", %[c]\n\t"
#define MTK_DW_MVE_NO_ASM(R) ""
#define MTK_DW_MVE_LOAD_TABLE_ASM(R) "vldrb.8 q4, [" R "]\n\t"
#define MTK_DW_MVE_LOAD_PREDICATED_ASM(R) "vpst\n\tvldrbt.8 q4, [" R "]\n\t"
/* with a multiplier: the lanes' input channels (after the params) as byte offsets from the tap's pixel */
#define MTK_DW_MVE_LOAD_GATHERED_ASM(R) "vldrw.32 q5, [%[s], #208]\n\tvldrb.u8 q4, [" R ", q5]\n\t"
#define MTK_DW_MVE_LOAD_GATHERED_PREDICATED_ASM(R) "vldrw.32 q5, [%[s], #208]\n\tvpst\n\tvldrbt.u8 q4, [" R ", q5]\n\t"
#define MTK_DW_MVE_GROUP_ASM(PREDICATE, LOAD, ADD_C, WEIGHTS)                                                 \
  PREDICATE                                                                                                   \
  MTK_DW_MVE_BIAS_ASM("%[s]")                                                                                 \
  "add %[w], %[s], #" #WEIGHTS "\n\t"                                                                         \
  "lsls %[n], %[counts], #16\n\t"                                                                             \
  "beq 2f\n"                                                                                                  \
  "1:\n\t"                                                                                                    \
  "ldrd %[a], %[b], [%[t]], #8\n\t"                                                                           \
  ADD_C("%[a]") ADD_C("%[b]")                                                                                 \
  MTK_DW_MVE_PAIR_ASM(LOAD("%[a]"), LOAD("%[b]"))                                                             \
  "subs %[n], %[n], #65536\n\t"                                                                               \
  "bne 1b\n"                                                                                                  \
  "2:\n\t"                                                                                                    \
  "lsrs %[n], %[counts], #16\n\t"                                                                             \
  "beq 4f\n"                                                                                                  \
  "3:\n\t"                                                                                                    \
  "ldr %[a], [%[t]], #4\n\t"                                                                                  \
  ADD_C("%[a]")                                                                                               \
  MTK_DW_MVE_TAP_ASM(LOAD("%[a]"))                                                                            \
  "subs %[n], %[n], #1\n\t"                                                                                   \
  "bne 3b\n"                                                                                                  \
  "4:\n\t"                                                                                                    \
  MTK_DW_MVE_OUTPUT_ASM("%[s]", 64, 80, 96, 112, 128, 144, 160, 176, 192)                                     \
  "mov %[s], %[w]\n\t"
#define MTK_DW_MVE_GROUP_OPERANDS(...)                                                                        \
  : [y] "=&w"(y), [w] "=&r"(w), [n] "=&r"(n), [a] "=&r"(a), [b] "=&r"(b), [s] "+&r"(s), [t] "+&r"(t)           \
  : [c] "r"(c), [counts] "r"(counts) __VA_ARGS__                                                              \
  : "q0", "q1", "q2", "q3", "q4", "q5", "q6", "memory", "cc"
/* one group of `lanes` channels (a partial one under the lanes of vctp.8) */
#define MTK_DW_MVE_GROUP(LOAD, LOAD_PREDICATED, ADD_C, WEIGHTS)                                               \
  do {                                                                                                        \
    t = tp;                                                                                                   \
    if (lanes >= 16)                                                                                          \
      __asm__ volatile(MTK_DW_MVE_GROUP_ASM("", LOAD, ADD_C, WEIGHTS) MTK_DW_MVE_GROUP_OPERANDS());           \
    else                                                                                                      \
      __asm__ volatile(MTK_DW_MVE_GROUP_ASM("vctp.8 %[lanes]\n\t", LOAD_PREDICATED, ADD_C, WEIGHTS)           \
                       MTK_DW_MVE_GROUP_OPERANDS(, [lanes] "r"(lanes)));                                      \
  } while (0)

/* `groups` groups from channel c on, the last one of `last` channels (1-16; with `gathered`, a multiplier: the
 * table's pointers are the taps' pixels); returns the stream after them */
MTK_MVE_INLINE const int8_t* mtk_dw_mve_groups(const int8_t* const* tp, int32_t n_taps, int32_t pairs, int32_t c,
                                               int32_t groups, int32_t last, int gathered, const int8_t* s,
                                               int32_t act_min, int32_t act_max, int8_t* out) {
  int8x16_t y;
  const int8_t *w, *a, *b;
  const int8_t* const* t;
  const int32_t counts = pairs | (n_taps - 2 * pairs) << 16;
  int32_t n;
  for (int32_t g = 0; g < groups; ++g, c += 16, out += 16) {
    const int32_t lanes = g < groups - 1 ? 16 : last;
    if (gathered)
      MTK_DW_MVE_GROUP(MTK_DW_MVE_LOAD_GATHERED_ASM, MTK_DW_MVE_LOAD_GATHERED_PREDICATED_ASM, MTK_DW_MVE_NO_ASM, 224);
    else
      MTK_DW_MVE_GROUP(MTK_DW_MVE_LOAD_TABLE_ASM, MTK_DW_MVE_LOAD_PREDICATED_ASM, MTK_DW_MVE_ADD_C_ASM, 208);
    y = mtk_dw_mve_clamp(y, act_min, act_max);
    if (lanes >= 16)
      vstrbq_s8(out, y);
    else
      vstrbq_p_s8(out, y, vctp8q((uint32_t)lanes));
  }
  return s;
}
#endif

#define MTK_DW_MVE_LAYER_PARAMS                                                                                \
  const void *x, const void *s, const void *pad, void *out, int32_t in_h, int32_t in_w, int32_t in_c, int32_t C, \
      int32_t out_h, int32_t out_w, int32_t kh, int32_t kw, int32_t stride_h, int32_t stride_w, int32_t dil_h,   \
      int32_t dil_w, int32_t pad_top, int32_t pad_left, int32_t pairs, int32_t out_zp, int32_t act_min,         \
      int32_t act_max
#define MTK_DW_MVE_LAYER_ARGS                                                                                  \
  x, s, pad, out, in_h, in_w, in_c, C, out_h, out_w, kh, kw, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left, \
      pairs, out_zp, act_min, act_max

/* The layer with a table of kh * kw tap pointers at `taps`. */
MTK_MVE_INLINE void mtk_dw_mve_layer(MTK_DW_MVE_LAYER_PARAMS, const int8_t** taps) {
  const int8_t* xb = (const int8_t*)x;
  int8_t* o = (int8_t*)out;
  const int32_t n_taps = kh * kw, tail = C % 16, half = tail > 0 && tail <= 8;
  const int32_t whole = C / 16, groups = whole + (tail > 8);   /* groups of 16 lanes, whole or not */
  const int gathered = in_c != C;
  for (int32_t oy = 0; oy < out_h; ++oy) {
    const int32_t iy = oy * stride_h - pad_top;
    const int rows_inside = iy >= 0 && iy + (kh - 1) * dil_h < in_h;
    for (int32_t ox = 0; ox < out_w; ++ox, o += C) {
      const int32_t ix = ox * stride_w - pad_left;
      const int8_t* corner = xb + (iy * in_w + ix) * in_c;
      /* unrolled (a constant window after inlining): the taps' offsets fold into immediates */
      if (rows_inside && ix >= 0 && ix + (kw - 1) * dil_w < in_w) {
#pragma GCC unroll 16
        for (int32_t ky = 0; ky < kh; ++ky)
#pragma GCC unroll 16
          for (int32_t kx = 0; kx < kw; ++kx) taps[ky * kw + kx] = corner + (ky * dil_h * in_w + kx * dil_w) * in_c;
      } else {
        for (int32_t ky = 0; ky < kh; ++ky) {
          const int32_t y = iy + ky * dil_h;
          for (int32_t kx = 0, px = ix; kx < kw; ++kx, px += dil_w)
            taps[ky * kw + kx] = (uint32_t)y < (uint32_t)in_h && (uint32_t)px < (uint32_t)in_w
                                     ? corner + (ky * dil_h * in_w + kx * dil_w) * in_c : (const int8_t*)pad;
        }
      }
      const int8_t* sp = (const int8_t*)s;
      int32_t c = 16 * groups;   /* the half group's channel offset from the table's pointers */
#if defined(__OPTIMIZE__)
      if (n_taps == 9 && pairs == 4 && !gathered) {
        sp = mtk_dw_mve_groups_3x3(taps, whole, sp, act_min, act_max, o);
        sp = mtk_dw_mve_groups(taps, n_taps, pairs, 0, groups - whole, tail, 0, sp, act_min, act_max, o + 16 * whole);
        c = 16 * groups - 16 * whole;
      } else {
        sp = mtk_dw_mve_groups(taps, n_taps, pairs, 0, groups, groups > whole ? tail : 16, gathered, sp, act_min,
                               act_max, o);
      }
#else
      for (int32_t g = 0; g < groups; ++g)
        sp = mtk_dw_mve_group(taps, n_taps, 16 * g, gathered, sp, g < whole ? 16 : tail, out_zp, act_min, act_max,
                              o + 16 * g);
#endif
      if (half) mtk_dw_mve_half(taps, n_taps, pairs, c, gathered, sp, tail, out_zp, act_min, act_max,
                                o + 16 * groups);
    }
  }
}

/* x [in_h][in_w][in_c] -> out [out_h][out_w][C]: the stream s as above, pad: the input zero point, one byte per
 * channel of whole groups; `pairs`: taps paired per group (kh * kw / 2, or 0). */
MTK_MVE_INLINE int32_t mtk_depthwise_mve_s8(MTK_DW_MVE_LAYER_PARAMS) {
  if (kh * kw <= MTK_DW_MVE_TABLE) {   /* a fixed-size table (a variable-length one costs gcc a frame pointer) */
    const int8_t* taps[MTK_DW_MVE_TABLE];
    mtk_dw_mve_layer(MTK_DW_MVE_LAYER_ARGS, taps);
  } else {
    const int8_t* taps[kh * kw];
    mtk_dw_mve_layer(MTK_DW_MVE_LAYER_ARGS, taps);
  }
  return 0;
}

#endif /* MTK_DEPTHWISE_MVE_H_ */
