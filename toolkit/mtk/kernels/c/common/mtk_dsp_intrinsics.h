/* The DSP extension's instructions the kernels use (those under dsp/, Helium cores' DSP code, the 16x8 depthwise's
 * halfword products), chosen by the toolchain: the ACLE intrinsics where the compiler targets a core with the DSP
 * extension, else the same arithmetic in portable C (the host builds a DSP core's model with these: tests check
 * its formulation; a core without DSP, the plain C it needs).
 * MTK_DSP_ASM: the compiler takes the kernels' inline assembly (gcc targeting a DSP core); where it is not
 * defined each assembly loop has its C twin. */
#ifndef MTK_DSP_INTRINSICS_H_
#define MTK_DSP_INTRINSICS_H_

#include <stdint.h>

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>
#define mtk_sxtb16(x) __sxtb16(x)
#define mtk_smlad(a, b, acc) __smlad((a), (b), (acc))
#define mtk_smlabb(a, b, acc) __smlabb((a), (b), (acc))
#define mtk_smlabt(a, b, acc) __smlabt((a), (b), (acc))
#define mtk_smlatb(a, b, acc) __smlatb((a), (b), (acc))
#define mtk_smlatt(a, b, acc) __smlatt((a), (b), (acc))
/* gcc 12 does not fold the rotate into SXTB16's ROR operand: say it directly. */
static inline uint32_t mtk_sxtb16_ror8(uint32_t x) {
  uint32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
  return r;
}
/* The high word of a * b, rounded (SMMULR: not in the ACLE). */
static inline int32_t mtk_smmulr(int32_t a, int32_t b) {
  int32_t r;
  __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
/* Two words at p, p then advanced by `step` bytes, in one LDRD: gcc 12 splits such loads into
 * single ones with separate pointer increments. p must be word-aligned. */
#define MTK_LOAD2_POST(a, b, p, step) __asm__("ldrd %0, %1, [%2], #" #step : "=r"(a), "=r"(b), "+r"(p) : : "memory")
#else
static inline uint32_t mtk_sxtb16(uint32_t x) {
  return ((uint32_t)(uint16_t)(int16_t)(int8_t)(x & 0xff)) | ((uint32_t)(uint16_t)(int16_t)(int8_t)((x >> 16) & 0xff) << 16);
}
static inline uint32_t mtk_sxtb16_ror8(uint32_t x) { return mtk_sxtb16((x >> 8) | (x << 24)); }
static inline int32_t mtk_smlad(uint32_t a, uint32_t b, int32_t acc) {
  return (int32_t)((uint32_t)acc + (uint32_t)((int32_t)(int16_t)(a & 0xffff) * (int32_t)(int16_t)(b & 0xffff))
                   + (uint32_t)((int32_t)(int16_t)(a >> 16) * (int32_t)(int16_t)(b >> 16)));
}
static inline int32_t mtk_smlabb(uint32_t a, uint32_t b, int32_t acc) {
  return (int32_t)((uint32_t)acc + (uint32_t)((int32_t)(int16_t)(a & 0xffff) * (int32_t)(int16_t)(b & 0xffff)));
}
static inline int32_t mtk_smlabt(uint32_t a, uint32_t b, int32_t acc) {
  return (int32_t)((uint32_t)acc + (uint32_t)((int32_t)(int16_t)(a & 0xffff) * (int32_t)(int16_t)(b >> 16)));
}
static inline int32_t mtk_smlatb(uint32_t a, uint32_t b, int32_t acc) {
  return (int32_t)((uint32_t)acc + (uint32_t)((int32_t)(int16_t)(a >> 16) * (int32_t)(int16_t)(b & 0xffff)));
}
static inline int32_t mtk_smlatt(uint32_t a, uint32_t b, int32_t acc) {
  return (int32_t)((uint32_t)acc + (uint32_t)((int32_t)(int16_t)(a >> 16) * (int32_t)(int16_t)(b >> 16)));
}
static inline int32_t mtk_smmulr(int32_t a, int32_t b) {
  return (int32_t)(((int64_t)a * b + ((int64_t)1 << 31)) >> 32);
}
#define MTK_LOAD2_POST(a, b, p, step) ((a) = (p)[0], (b) = (p)[1], (p) += (step) / 4)
#endif

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && defined(__GNUC__)
#define MTK_DSP_ASM 1
#endif

#endif /* MTK_DSP_INTRINSICS_H_ */
