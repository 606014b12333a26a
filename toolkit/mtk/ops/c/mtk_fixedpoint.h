/* SaturatingRoundingDoublingHighMul, the core of TFLite's integer requantization, called by
 * the TVM-generated kernels (mtk/ops/fixedpoint.py): (a * b * 2 + 2^31 rounding) >> 32, rounding
 * half away from zero; INT32_MIN * INT32_MIN saturates. Cores without a 32x32->64 multiplier
 * (ARMv6-M, ARMv8-M Baseline) build the product from 16-bit halves instead of a libgcc call.
 * Defining MTK_MUL64_BY_HALVES takes that path anywhere (host tests of it). */
#ifndef MTK_FIXEDPOINT_H_
#define MTK_FIXEDPOINT_H_

#include <stdint.h>

#if defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__) || defined(MTK_MUL64_BY_HALVES)
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

#endif
