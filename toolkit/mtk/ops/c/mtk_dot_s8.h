/* int8 dot-product micro-kernels called by the TVM-generated GEMM, conv and fully connected
 * kernels (mtk/ops/gemm.py). Each computes int32 sums of int8 products over k elements:
 *   mtk_dot_2x2_s8: acc[2*i + j] = sum a_i[t] * b_j[t]   (2 input rows x 2 weight rows)
 *   mtk_dot_1x4_s8: acc[j]       = sum a[t]   * b_j[t]   (1 input row  x 4 weight rows)
 * On cores with the DSP extension, 4 elements go through two SXTB16 and two SMLAD: SXTB16
 * splits bytes (0,2) and, after ROR 8, bytes (1,3) into int16 pairs, so each SMLAD adds two
 * products. Elsewhere (M0+, M3, host) a scalar loop computes the same sums. Defining
 * MTK_EMULATE_DSP runs the DSP formulation in portable C (host tests of that path). */
#ifndef MTK_DOT_S8_H_
#define MTK_DOT_S8_H_

#include <stdint.h>
#include <string.h>

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>
#define MTK_DOT_SIMD 1
#define mtk_sxtb16(x) __sxtb16(x)
#define mtk_smlad(a, b, acc) __smlad((a), (b), (acc))
/* gcc 12 does not fold the rotate into SXTB16's ROR operand: say it directly. */
static inline uint32_t mtk_sxtb16_ror8(uint32_t x) {
  uint32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
  return r;
}
#elif defined(MTK_EMULATE_DSP)
#define MTK_DOT_SIMD 1
static inline uint32_t mtk_sxtb16(uint32_t x) {
  return ((uint32_t)(uint16_t)(int16_t)(int8_t)(x & 0xff)) | ((uint32_t)(uint16_t)(int16_t)(int8_t)((x >> 16) & 0xff) << 16);
}
static inline uint32_t mtk_sxtb16_ror8(uint32_t x) { return mtk_sxtb16((x >> 8) | (x << 24)); }
static inline int32_t mtk_smlad(uint32_t a, uint32_t b, int32_t acc) {
  return (int32_t)((uint32_t)acc + (uint32_t)((int32_t)(int16_t)(a & 0xffff) * (int32_t)(int16_t)(b & 0xffff))
                   + (uint32_t)((int32_t)(int16_t)(a >> 16) * (int32_t)(int16_t)(b >> 16)));
}
#endif

#ifdef MTK_DOT_SIMD
static inline uint32_t mtk_load4_s8(const int8_t* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
#endif

/* One step of 4 elements of the 2x2 kernel. (Unrolling it further makes gcc 12 spill.) */
#define MTK_DOT_2X2_STEP(t)                                          \
  do {                                                               \
    uint32_t x0 = mtk_load4_s8(a0 + (t)), x1 = mtk_load4_s8(a1 + (t)); \
    uint32_t x0e = mtk_sxtb16(x0), x0o = mtk_sxtb16_ror8(x0);        \
    uint32_t x1e = mtk_sxtb16(x1), x1o = mtk_sxtb16_ror8(x1);        \
    uint32_t w = mtk_load4_s8(b0 + (t));                             \
    uint32_t we = mtk_sxtb16(w), wo = mtk_sxtb16_ror8(w);            \
    s00 = mtk_smlad(x0o, wo, mtk_smlad(x0e, we, s00));               \
    s10 = mtk_smlad(x1o, wo, mtk_smlad(x1e, we, s10));               \
    w = mtk_load4_s8(b1 + (t));                                      \
    we = mtk_sxtb16(w);                                              \
    wo = mtk_sxtb16_ror8(w);                                         \
    s01 = mtk_smlad(x0o, wo, mtk_smlad(x0e, we, s01));               \
    s11 = mtk_smlad(x1o, wo, mtk_smlad(x1e, we, s11));               \
  } while (0)

static inline int32_t mtk_dot_2x2_s8(const int8_t* a0, const int8_t* a1, const int8_t* b0, const int8_t* b1,
                                     int32_t k, int32_t* acc) {
  int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
  int32_t t = 0;
#ifdef MTK_DOT_SIMD
  for (; t + 4 <= k; t += 4) MTK_DOT_2X2_STEP(t);
#endif
  for (; t < k; ++t) {
    int32_t x0 = a0[t], x1 = a1[t], w0 = b0[t], w1 = b1[t];
    s00 += x0 * w0;
    s01 += x0 * w1;
    s10 += x1 * w0;
    s11 += x1 * w1;
  }
  acc[0] = s00;
  acc[1] = s01;
  acc[2] = s10;
  acc[3] = s11;
  return 0;
}

static inline int32_t mtk_dot_1x4_s8(const int8_t* a, const int8_t* b0, const int8_t* b1, const int8_t* b2,
                                     const int8_t* b3, int32_t k, int32_t* acc) {
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int32_t t = 0;
#ifdef MTK_DOT_SIMD
  for (; t + 4 <= k; t += 4) {
    uint32_t x = mtk_load4_s8(a + t);
    uint32_t xe = mtk_sxtb16(x), xo = mtk_sxtb16_ror8(x);
    uint32_t w = mtk_load4_s8(b0 + t);
    s0 = mtk_smlad(xe, mtk_sxtb16(w), s0);
    s0 = mtk_smlad(xo, mtk_sxtb16_ror8(w), s0);
    w = mtk_load4_s8(b1 + t);
    s1 = mtk_smlad(xe, mtk_sxtb16(w), s1);
    s1 = mtk_smlad(xo, mtk_sxtb16_ror8(w), s1);
    w = mtk_load4_s8(b2 + t);
    s2 = mtk_smlad(xe, mtk_sxtb16(w), s2);
    s2 = mtk_smlad(xo, mtk_sxtb16_ror8(w), s2);
    w = mtk_load4_s8(b3 + t);
    s3 = mtk_smlad(xe, mtk_sxtb16(w), s3);
    s3 = mtk_smlad(xo, mtk_sxtb16_ror8(w), s3);
  }
#endif
  for (; t < k; ++t) {
    int32_t x = a[t];
    s0 += x * b0[t];
    s1 += x * b1[t];
    s2 += x * b2[t];
    s3 += x * b3[t];
  }
  acc[0] = s0;
  acc[1] = s1;
  acc[2] = s2;
  acc[3] = s3;
  return 0;
}

#endif /* MTK_DOT_S8_H_ */
