/* SaturatingRoundingDoublingHighMul, the core of TFLite's integer requantization, called by
 * the TVM-generated kernels (mtk/ops/fixedpoint.py): (a * b * 2 + 2^31 rounding) >> 32, rounding
 * half away from zero; INT32_MIN * INT32_MIN saturates. Cores without a 32x32->64 multiplier
 * (ARMv6-M, ARMv8-M Baseline) build the product from 16-bit halves instead of a libgcc call.
 * Defining MTK_MUL64_BY_HALVES takes that path anywhere (host tests of it). */
#ifndef MTK_FIXEDPOINT_H_
#define MTK_FIXEDPOINT_H_

#include <stdint.h>
#if defined(__ARM_FEATURE_SAT) && __ARM_FEATURE_SAT
#include <arm_acle.h>
#endif

#if defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__) || defined(MTK_MUL64_BY_HALVES)
#define MTK_NO_MUL64 1
#endif

#ifdef MTK_NO_MUL64
static inline int64_t mtk_mul_s32_s64(int32_t a, int32_t b) {
  uint32_t ua = (uint32_t)a, ub = (uint32_t)b;
  uint32_t al = ua & 0xffffu, ah = ua >> 16, bl = ub & 0xffffu, bh = ub >> 16;
  uint32_t ll = al * bl, lh = al * bh, hl = ah * bl;
  uint32_t mid = (ll >> 16) + (lh & 0xffffu) + (hl & 0xffffu);
  uint32_t lo = (ll & 0xffffu) | (mid << 16);
  uint32_t hi = ah * bh + (lh >> 16) + (hl >> 16) + (mid >> 16);
  if (a < 0) hi -= ub;   /* the unsigned product, corrected to the signed one */
  if (b < 0) hi -= ua;
  return (int64_t)(((uint64_t)hi << 32) | lo);
}
#else
static inline int64_t mtk_mul_s32_s64(int32_t a, int32_t b) { return (int64_t)a * (int64_t)b; }
#endif

static inline int32_t mtk_srdhm(int32_t a, int32_t b) {
  int64_t ab = mtk_mul_s32_s64(a, b);
  if (ab == ((int64_t)1 << 62)) return INT32_MAX;
  int64_t nudge = ab >= 0 ? ((int64_t)1 << 30) : (1 - ((int64_t)1 << 30));
  return (int32_t)((ab + nudge) / ((int64_t)1 << 31));
}

/* MultiplyByQuantizedMultiplier(acc, mult, -e) for e >= 1 and mult >= 0 in one 64-bit multiply-add:
 * SaturatingRoundingDoublingHighMul (which cannot saturate with mult >= 0) then RoundingDivideByPOT(e)
 * round twice, and the two floors compose into (acc*mult + 2^30 + 2^(30+e) - [acc < 0]*2^31) >> (31+e).
 * The rounding term 2^30 + 2^(30+e) comes as its low and high words, with hi_shift = e - 1 (gemm.py). */
static inline int32_t mtk_requant_rshift(int32_t acc, int32_t mult, int32_t rounding_lo, int32_t rounding_hi,
                                         int32_t hi_shift) {
#if defined(__ARM_ARCH_ISA_THUMB) && __ARM_ARCH_ISA_THUMB >= 2
  /* gcc 12 spends 6 instructions on the sign term; Thumb-2 adds it in 3 (ADC takes acc ASR 31). */
  uint32_t lo = (uint32_t)rounding_lo, sign;
  int32_t hi = rounding_hi;
  __asm__("and %[sign], %[acc], #0x80000000\n\t"
          "adds %[lo], %[lo], %[sign]\n\t"
          "adc %[hi], %[hi], %[acc], asr #31\n\t"
          "smlal %[lo], %[hi], %[acc], %[mult]"
          : [lo] "+&r"(lo), [hi] "+&r"(hi), [sign] "=&r"(sign)
          : [acc] "r"(acc), [mult] "r"(mult)
          : "cc");
  return hi >> hi_shift;
#elif defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__)
  /* No 32x32->64 multiply: the product's four 16x16 parts (acc's low half unsigned, its high half
   * signed; mult >= 0) and the sign term added into the rounding's two words with ADDS/ADCS, which
   * gcc does not find for the C below (it masks and shifts each part's carries apart). */
  uint32_t lo = (uint32_t)rounding_lo, al, ml, t;
  int32_t hi = rounding_hi;
  __asm__(".syntax unified\n\t"   /* gcc assembles Thumb-1 inline assembly in divided syntax */
          "uxth %[al], %[acc]\n\t"
          "asrs %[acc], %[acc], #16\n\t"          /* ah */
          "uxth %[ml], %[mult]\n\t"
          "lsrs %[mult], %[mult], #16\n\t"        /* mh */
          "movs %[t], %[al]\n\t"
          "muls %[t], %[ml]\n\t"                  /* al*ml, below 2^32 */
          "muls %[al], %[mult]\n\t"               /* al*mh, below 2^31 */
          "muls %[ml], %[acc]\n\t"                /* ah*ml, magnitude below 2^31 */
          "muls %[mult], %[acc]\n\t"              /* ah*mh */
          "adds %[lo], %[lo], %[t]\n\t"
          "adcs %[hi], %[mult]\n\t"
          "lsls %[t], %[al], #16\n\t"
          "lsrs %[al], %[al], #16\n\t"
          "adds %[lo], %[lo], %[t]\n\t"
          "adcs %[hi], %[al]\n\t"
          "lsls %[t], %[ml], #16\n\t"
          "asrs %[ml], %[ml], #16\n\t"
          "adds %[lo], %[lo], %[t]\n\t"
          "adcs %[hi], %[ml]\n\t"
          "asrs %[acc], %[acc], #15\n\t"          /* acc >> 31: the sign term, -2^31 for acc < 0 */
          "lsls %[t], %[acc], #31\n\t"
          "adds %[lo], %[lo], %[t]\n\t"
          "adcs %[hi], %[acc]\n\t"
          ".syntax divided"
          : [lo] "+&l"(lo), [hi] "+&l"(hi), [acc] "+&l"(acc), [mult] "+&l"(mult), [al] "=&l"(al), [ml] "=&l"(ml),
            [t] "=&l"(t)
          :
          : "cc");
  return hi >> hi_shift;
#else
  int64_t z = (int64_t)(((uint64_t)(uint32_t)rounding_hi << 32) | (uint32_t)rounding_lo);
  z += (int64_t)((uint64_t)(int64_t)(acc >> 31) << 31);
  z += mtk_mul_s32_s64(acc, mult);
  return (int32_t)(z >> 32) >> hi_shift;
#endif
}

/* min(max(x, lo), hi) for -128 <= lo <= hi <= 127 (an int8 activation range): SSAT first where the
 * core has it, so the full range costs one instruction and the bounds only compare when they are tighter. */
static inline int32_t mtk_clamp_s8(int32_t x, int32_t lo, int32_t hi) {
#if defined(__ARM_FEATURE_SAT) && __ARM_FEATURE_SAT
  x = __ssat(x, 8);
#else
  if ((uint32_t)x + 128u > 255u) x = (x >> 31) ^ 127;   /* one unsigned test for both bounds */
#endif
  if (lo > -128) x = x < lo ? lo : x;
  if (hi < 127) x = x > hi ? hi : x;
  return x;
}

/* min(max(x, -32768), 32767): an int16 result saturated (the LSTM's gates and cell state), one SSAT
 * where the core has it. */
static inline int32_t mtk_sat_s16(int32_t x) {
#if defined(__ARM_FEATURE_SAT) && __ARM_FEATURE_SAT
  return __ssat(x, 16);
#else
  return x < -32768 ? -32768 : (x > 32767 ? 32767 : x);
#endif
}

/* MultiplyByQuantizedMultiplier(int64_t x, ...) of TFLite's 16x8 kernels from its reduced 16-bit multiplier and
 * right shift (mtk/ops/fixedpoint.py reduced_multiplier): (x*reduced + 2^(total_shift-1)) >> total_shift, truncated
 * to int32, for total_shift in [8, 46] as TFLite's asserts allow, without 64-bit variable shifts (per-channel
 * shifts: gcc would branch through both words twice). */
static inline int32_t mtk_requant_s64(int64_t x, int32_t reduced, int32_t total_shift) {
  int64_t p = x * reduced;
  uint32_t lo = (uint32_t)p;
  int32_t hi = (int32_t)(p >> 32);
  if (total_shift > 32) return (hi + (1 << (total_shift - 33))) >> (total_shift - 32);
  uint32_t rounded = lo + (1u << (total_shift - 1));
  hi += rounded < lo;   /* the carry */
  if (total_shift == 32) return hi;
  return (int32_t)((rounded >> total_shift) | ((uint32_t)hi << (32 - total_shift)));
}

#endif
