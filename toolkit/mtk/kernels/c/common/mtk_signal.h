/* TFLM's signal library (its audio front end: signal/src and signal/micro/kernels of tensorflow/tflite-micro),
 * bit for bit, as portable C for ops/signal.py: window, FFT auto scale, the int16 real FFT (kissfft v130's
 * fixed-point kiss_fft and kiss_fftr, which TFLM builds with FIXED_POINT 16), energy, filter bank, its square root,
 * spectral subtraction, PCAN gain control and log.
 *
 * Ported from tensorflow/tflite-micro (Apache License 2.0, Copyright 2023 The TensorFlow Authors) and from
 * kissfft v130 (BSD-3-Clause, Copyright (c) 2003-2010 Mark Borgerding). The twiddle factors and the FFT's
 * factorisation are computed in Python (ops/signal.py) as kiss_fft_alloc/kiss_fftr_alloc compute them, and
 * passed in as constants.
 *
 * Integer conversions follow the reference where C leaves them to the compiler (a wider value stored in an
 * int16_t keeps its low bits; >> of a negative value is arithmetic), as gcc and clang do on every target. */
#ifndef MTK_SIGNAL_H_
#define MTK_SIGNAL_H_

#include <stdint.h>

/* Bits up to the highest set one; 32 (64) for 0, as signal/src/msb_32.cc (msb_64.cc) returns under gcc and clang
 * (32 - __builtin_clz), where the reference interpreter is built. */
static inline uint32_t mtk_signal_msb64(uint64_t x) {
  uint32_t bits = 0;
  if (x == 0) return 64;
  while (x) {
    x >>= 1;
    ++bits;
  }
  return bits;
}

static inline uint32_t mtk_signal_msb32(uint32_t x) {
  return x ? mtk_signal_msb64(x) : 32;
}

/* signal/src/window.cc, over each row of `weight_size` elements */
static inline void mtk_signal_window(const int16_t* input, const int16_t* window, int16_t* output, int32_t size,
                                     int32_t weight_size, int32_t shift) {
  for (int32_t row = 0; row < size; row += weight_size) {
    for (int32_t i = 0; i < weight_size; ++i) {
      const int32_t raw = ((int32_t)input[row + i] * window[i]) >> shift;
      output[row + i] = raw < INT16_MIN ? INT16_MIN : raw > INT16_MAX ? INT16_MAX : (int16_t)raw;
    }
  }
}

/* signal/src/fft_auto_scale.cc and max_abs.cc */
static inline void mtk_signal_fft_auto_scale(const int16_t* input, int16_t* output, int32_t* scale_bits,
                                             int32_t size) {
  int16_t max = 0;
  for (int32_t i = 0; i < size; ++i) {
    const int16_t value = input[i];
    if (value > max) {
      max = value;
    } else if (-value > max) {
      max = (int16_t)-value;
    }
  }
  int bits = (int)(sizeof(int16_t) * 8) - (int)mtk_signal_msb32((uint32_t)(int32_t)max) - 1;
  if (bits <= 0) bits = 0;
  for (int32_t i = 0; i < size; ++i) output[i] = (int16_t)(input[i] * (1 << bits));
  *scale_bits = bits;
}

/* ---- kissfft v130, FIXED_POINT 16 (kiss_fft.c, tools/kiss_fftr.c, _kiss_fft_guts.h) ---- */

typedef struct {
  int16_t r;
  int16_t i;
} mtk_cpx16;

#define MTK_KF_SROUND(x) ((int16_t)(((x) + (1 << 14)) >> 15))
#define MTK_KF_SMUL(a, b) ((int32_t)(a) * (b))
#define MTK_KF_S_MUL(a, b) MTK_KF_SROUND(MTK_KF_SMUL(a, b))
#define MTK_KF_FIXDIV(c, div)                                      \
  do {                                                             \
    (c).r = MTK_KF_SROUND(MTK_KF_SMUL((c).r, 32767 / (div)));      \
    (c).i = MTK_KF_SROUND(MTK_KF_SMUL((c).i, 32767 / (div)));      \
  } while (0)
#define MTK_KF_CMUL(m, a, b)                                                      \
  do {                                                                            \
    (m).r = MTK_KF_SROUND(MTK_KF_SMUL((a).r, (b).r) - MTK_KF_SMUL((a).i, (b).i)); \
    (m).i = MTK_KF_SROUND(MTK_KF_SMUL((a).r, (b).i) + MTK_KF_SMUL((a).i, (b).r)); \
  } while (0)
#define MTK_KF_CADD(res, a, b)            \
  do {                                    \
    (res).r = (int16_t)((a).r + (b).r);   \
    (res).i = (int16_t)((a).i + (b).i);   \
  } while (0)
#define MTK_KF_CSUB(res, a, b)            \
  do {                                    \
    (res).r = (int16_t)((a).r - (b).r);   \
    (res).i = (int16_t)((a).i - (b).i);   \
  } while (0)
#define MTK_KF_CADDTO(res, a)               \
  do {                                      \
    (res).r = (int16_t)((res).r + (a).r);   \
    (res).i = (int16_t)((res).i + (a).i);   \
  } while (0)

static inline void mtk_kf_bfly2(mtk_cpx16* fout, uint32_t fstride, const mtk_cpx16* twiddles, int32_t m) {
  mtk_cpx16* fout2 = fout + m;
  const mtk_cpx16* tw1 = twiddles;
  mtk_cpx16 t;
  do {
    MTK_KF_FIXDIV(*fout, 2);
    MTK_KF_FIXDIV(*fout2, 2);
    MTK_KF_CMUL(t, *fout2, *tw1);
    tw1 += fstride;
    MTK_KF_CSUB(*fout2, *fout, t);
    MTK_KF_CADDTO(*fout, t);
    ++fout2;
    ++fout;
  } while (--m);
}

static inline void mtk_kf_bfly4(mtk_cpx16* fout, uint32_t fstride, const mtk_cpx16* twiddles, uint32_t m) {
  const mtk_cpx16 *tw1 = twiddles, *tw2 = twiddles, *tw3 = twiddles;
  mtk_cpx16 s[6];
  uint32_t k = m;
  const uint32_t m2 = 2 * m, m3 = 3 * m;
  do {
    MTK_KF_FIXDIV(fout[0], 4);
    MTK_KF_FIXDIV(fout[m], 4);
    MTK_KF_FIXDIV(fout[m2], 4);
    MTK_KF_FIXDIV(fout[m3], 4);
    MTK_KF_CMUL(s[0], fout[m], *tw1);
    MTK_KF_CMUL(s[1], fout[m2], *tw2);
    MTK_KF_CMUL(s[2], fout[m3], *tw3);
    MTK_KF_CSUB(s[5], fout[0], s[1]);
    MTK_KF_CADDTO(fout[0], s[1]);
    MTK_KF_CADD(s[3], s[0], s[2]);
    MTK_KF_CSUB(s[4], s[0], s[2]);
    MTK_KF_CSUB(fout[m2], fout[0], s[3]);
    tw1 += fstride;
    tw2 += fstride * 2;
    tw3 += fstride * 3;
    MTK_KF_CADDTO(fout[0], s[3]);
    fout[m].r = (int16_t)(s[5].r + s[4].i);
    fout[m].i = (int16_t)(s[5].i - s[4].r);
    fout[m3].r = (int16_t)(s[5].r - s[4].i);
    fout[m3].i = (int16_t)(s[5].i + s[4].r);
    ++fout;
  } while (--k);
}

static inline void mtk_kf_bfly3(mtk_cpx16* fout, uint32_t fstride, const mtk_cpx16* twiddles, uint32_t m) {
  uint32_t k = m;
  const uint32_t m2 = 2 * m;
  const mtk_cpx16 *tw1 = twiddles, *tw2 = twiddles;
  mtk_cpx16 s[5];
  const mtk_cpx16 epi3 = twiddles[fstride * m];
  do {
    MTK_KF_FIXDIV(fout[0], 3);
    MTK_KF_FIXDIV(fout[m], 3);
    MTK_KF_FIXDIV(fout[m2], 3);
    MTK_KF_CMUL(s[1], fout[m], *tw1);
    MTK_KF_CMUL(s[2], fout[m2], *tw2);
    MTK_KF_CADD(s[3], s[1], s[2]);
    MTK_KF_CSUB(s[0], s[1], s[2]);
    tw1 += fstride;
    tw2 += fstride * 2;
    fout[m].r = (int16_t)(fout[0].r - (s[3].r >> 1));
    fout[m].i = (int16_t)(fout[0].i - (s[3].i >> 1));
    s[0].r = MTK_KF_S_MUL(s[0].r, epi3.i);
    s[0].i = MTK_KF_S_MUL(s[0].i, epi3.i);
    MTK_KF_CADDTO(fout[0], s[3]);
    fout[m2].r = (int16_t)(fout[m].r + s[0].i);
    fout[m2].i = (int16_t)(fout[m].i - s[0].r);
    fout[m].r = (int16_t)(fout[m].r - s[0].i);
    fout[m].i = (int16_t)(fout[m].i + s[0].r);
    ++fout;
  } while (--k);
}

static inline void mtk_kf_bfly5(mtk_cpx16* fout, uint32_t fstride, const mtk_cpx16* twiddles, int32_t m) {
  mtk_cpx16 *f0 = fout, *f1 = fout + m, *f2 = fout + 2 * m, *f3 = fout + 3 * m, *f4 = fout + 4 * m;
  mtk_cpx16 s[13];
  const mtk_cpx16 ya = twiddles[fstride * m], yb = twiddles[fstride * 2 * m];
  for (int32_t u = 0; u < m; ++u) {
    MTK_KF_FIXDIV(*f0, 5);
    MTK_KF_FIXDIV(*f1, 5);
    MTK_KF_FIXDIV(*f2, 5);
    MTK_KF_FIXDIV(*f3, 5);
    MTK_KF_FIXDIV(*f4, 5);
    s[0] = *f0;
    MTK_KF_CMUL(s[1], *f1, twiddles[u * fstride]);
    MTK_KF_CMUL(s[2], *f2, twiddles[2 * u * fstride]);
    MTK_KF_CMUL(s[3], *f3, twiddles[3 * u * fstride]);
    MTK_KF_CMUL(s[4], *f4, twiddles[4 * u * fstride]);
    MTK_KF_CADD(s[7], s[1], s[4]);
    MTK_KF_CSUB(s[10], s[1], s[4]);
    MTK_KF_CADD(s[8], s[2], s[3]);
    MTK_KF_CSUB(s[9], s[2], s[3]);
    f0->r = (int16_t)(f0->r + (s[7].r + s[8].r));
    f0->i = (int16_t)(f0->i + (s[7].i + s[8].i));
    s[5].r = (int16_t)(s[0].r + MTK_KF_S_MUL(s[7].r, ya.r) + MTK_KF_S_MUL(s[8].r, yb.r));
    s[5].i = (int16_t)(s[0].i + MTK_KF_S_MUL(s[7].i, ya.r) + MTK_KF_S_MUL(s[8].i, yb.r));
    s[6].r = (int16_t)(MTK_KF_S_MUL(s[10].i, ya.i) + MTK_KF_S_MUL(s[9].i, yb.i));
    s[6].i = (int16_t)(-MTK_KF_S_MUL(s[10].r, ya.i) - MTK_KF_S_MUL(s[9].r, yb.i));
    MTK_KF_CSUB(*f1, s[5], s[6]);
    MTK_KF_CADD(*f4, s[5], s[6]);
    s[11].r = (int16_t)(s[0].r + MTK_KF_S_MUL(s[7].r, yb.r) + MTK_KF_S_MUL(s[8].r, ya.r));
    s[11].i = (int16_t)(s[0].i + MTK_KF_S_MUL(s[7].i, yb.r) + MTK_KF_S_MUL(s[8].i, ya.r));
    s[12].r = (int16_t)(-MTK_KF_S_MUL(s[10].i, yb.i) + MTK_KF_S_MUL(s[9].i, ya.i));
    s[12].i = (int16_t)(MTK_KF_S_MUL(s[10].r, yb.i) - MTK_KF_S_MUL(s[9].r, ya.i));
    MTK_KF_CADD(*f2, s[11], s[12]);
    MTK_KF_CSUB(*f3, s[11], s[12]);
    ++f0;
    ++f1;
    ++f2;
    ++f3;
    ++f4;
  }
}

/* kf_work: `factors` holds (radix, stage length) pairs, every radix 2, 3, 4 or 5 (ops/signal.py checks). */
static void mtk_kf_work(mtk_cpx16* fout, const mtk_cpx16* f, uint32_t fstride, const int32_t* factors,
                        const mtk_cpx16* twiddles) {
  mtk_cpx16* const fout_beg = fout;
  const int32_t p = *factors++;
  const int32_t m = *factors++;
  const mtk_cpx16* const fout_end = fout + p * m;
  if (m == 1) {
    do {
      *fout = *f;
      f += fstride;
    } while (++fout != fout_end);
  } else {
    do {
      mtk_kf_work(fout, f, fstride * (uint32_t)p, factors, twiddles);
      f += fstride;
    } while ((fout += m) != fout_end);
  }
  fout = fout_beg;
  switch (p) {
    case 2: mtk_kf_bfly2(fout, fstride, twiddles, m); break;
    case 3: mtk_kf_bfly3(fout, fstride, twiddles, (uint32_t)m); break;
    case 4: mtk_kf_bfly4(fout, fstride, twiddles, (uint32_t)m); break;
    default: mtk_kf_bfly5(fout, fstride, twiddles, m); break;
  }
}

/* signal/micro/kernels/rfft.cc (int16): each row of `input_length` samples zero-padded to `fft_length` in `work`,
 * then kiss_fftr: `ncfft` = fft_length / 2 complex points in `tmp`, ncfft + 1 written per output row of
 * `output_length` complex values. */
static inline void mtk_signal_rfft_s16(const int16_t* input, int16_t* output, int16_t* work, mtk_cpx16* tmp,
                                       const mtk_cpx16* twiddles, const mtk_cpx16* super_twiddles,
                                       const int32_t* factors, int32_t fft_length, int32_t input_length,
                                       int32_t input_size, int32_t output_length) {
  const int32_t ncfft = fft_length / 2;
  mtk_cpx16* out = (mtk_cpx16*)output;
  for (int32_t row = 0; row < input_size; row += input_length, out += output_length) {
    for (int32_t i = 0; i < fft_length; ++i) work[i] = i < input_length ? input[row + i] : 0;
    mtk_kf_work(tmp, (const mtk_cpx16*)work, 1, factors, twiddles);
    mtk_cpx16 tdc = tmp[0];
    MTK_KF_FIXDIV(tdc, 2);
    out[0].r = (int16_t)(tdc.r + tdc.i);
    out[ncfft].r = (int16_t)(tdc.r - tdc.i);
    out[ncfft].i = out[0].i = 0;
    for (int32_t k = 1; k <= ncfft / 2; ++k) {
      mtk_cpx16 fpk = tmp[k], fpnk, f1k, f2k, tw;
      fpnk.r = tmp[ncfft - k].r;
      fpnk.i = (int16_t)-tmp[ncfft - k].i;
      MTK_KF_FIXDIV(fpk, 2);
      MTK_KF_FIXDIV(fpnk, 2);
      MTK_KF_CADD(f1k, fpk, fpnk);
      MTK_KF_CSUB(f2k, fpk, fpnk);
      MTK_KF_CMUL(tw, f2k, super_twiddles[k - 1]);
      out[k].r = (int16_t)((f1k.r + tw.r) >> 1);
      out[k].i = (int16_t)((f1k.i + tw.i) >> 1);
      out[ncfft - k].r = (int16_t)((f1k.r - tw.r) >> 1);
      out[ncfft - k].i = (int16_t)((tw.i - f1k.i) >> 1);
    }
  }
}

/* signal/src/energy.cc: elements [start, end) (the others are left as they are, as TFLM leaves them). The sum of
 * squares in uint32: the bits the reference's int32 sum wraps to. */
static inline void mtk_signal_energy(const int16_t* input, uint32_t* output, int32_t start, int32_t end) {
  for (int32_t i = start; i < end; ++i) {
    const int32_t re = input[2 * i], im = input[2 * i + 1];
    output[i] = (uint32_t)(re * re) + (uint32_t)(im * im);
  }
}

/* signal/src/filter_bank.cc and micro/kernels/filter_bank.cc: num_channels + 1 sums into `work`, channel 0
 * (the first channel's unweighted part) discarded, the first `outputs` of the others copied out. */
static inline void mtk_signal_filter_bank(const uint32_t* input, const int16_t* weights, const int16_t* unweights,
                                          const int16_t* frequency_starts, const int16_t* weight_starts,
                                          const int16_t* widths, uint64_t* work, uint64_t* output,
                                          int32_t num_channels, int32_t outputs) {
  uint64_t weighted = 0, unweighted = 0;
  for (int32_t i = 0; i < num_channels + 1; ++i) {
    const int16_t frequency_start = frequency_starts[i], weight_start = weight_starts[i];
    for (int32_t j = 0; j < widths[i]; ++j) {
      weighted += weights[weight_start + j] * (uint64_t)input[frequency_start + j];
      unweighted += unweights[weight_start + j] * (uint64_t)input[frequency_start + j];
    }
    work[i] = weighted;
    weighted = unweighted;
    unweighted = 0;
  }
  for (int32_t i = 0; i < outputs; ++i) output[i] = work[i + 1];
}

/* signal/src/square_root_32.cc and square_root_64.cc: the same bit loop over `top` + 1 bits, the root rounded
 * up unless it is `max_root` already (each step's sums fit the 32-bit version's uint32 as well). */
static inline uint64_t mtk_signal_sqrt_bits(uint64_t num, int top, uint64_t max_root) {
  uint64_t res = 0;
  int max_bit_number = top + 1 - (int)mtk_signal_msb64(num);
  max_bit_number |= 1;
  uint64_t bit = (uint64_t)1 << (top - max_bit_number);
  int iterations = (top - max_bit_number) / 2 + 1;
  while (iterations--) {
    if (num >= res + bit) {
      num -= res + bit;
      res = (res >> 1u) + bit;
    } else {
      res >>= 1u;
    }
    bit >>= 2u;
  }
  if (num > res && res != max_root) ++res;
  return res;
}

/* Sqrt64: a number below 2^32 takes Sqrt32's path (rounding stops at 0xFFFF), as there */
static inline uint32_t mtk_signal_sqrt64(uint64_t num) {
  if (num == 0) return 0;
  if ((num >> 32) == 0) return (uint32_t)mtk_signal_sqrt_bits(num, 31, 0xFFFFu);
  return (uint32_t)mtk_signal_sqrt_bits(num, 63, 0xFFFFFFFFu);
}

/* signal/src/filter_bank_square_root.cc */
static inline void mtk_signal_filter_bank_sqrt(const uint64_t* input, const int32_t* scale_down_bits,
                                               uint32_t* output, int32_t num_channels) {
  const int32_t shift = *scale_down_bits;
  for (int32_t i = 0; i < num_channels; ++i) output[i] = mtk_signal_sqrt64(input[i]) >> shift;
}

/* signal/src/filter_bank_spectral_subtraction.cc: `noise_estimate` is the op's state (zero after a reset); its
 * values after the update are copied to `noise_output`. `smoothing` and `one_minus_smoothing` hold the even
 * channels' coefficient (index 0) and the odd channels' (index 1). */
static inline void mtk_signal_spectral_subtraction(const uint32_t* input, uint32_t* output, uint32_t* noise_output,
                                                   uint32_t* noise_estimate, int32_t num_channels,
                                                   const uint32_t smoothing[2], const uint32_t one_minus_smoothing[2],
                                                   uint32_t min_signal_remaining, uint32_t smoothing_bits,
                                                   uint32_t spectral_subtraction_bits, int clamping) {
  for (int32_t i = 0; i < num_channels; ++i) {
    const uint32_t signal_scaled_up = input[i] << smoothing_bits;
    noise_estimate[i] = (uint32_t)(((uint64_t)signal_scaled_up * smoothing[i & 1] +
                                    (uint64_t)noise_estimate[i] * one_minus_smoothing[i & 1]) >>
                                   spectral_subtraction_bits);
    uint32_t estimate_scaled_up = noise_estimate[i];
    if (estimate_scaled_up > signal_scaled_up) {
      estimate_scaled_up = signal_scaled_up;
      if (clamping) noise_estimate[i] = estimate_scaled_up;
    }
    const uint32_t floor = (uint32_t)(((uint64_t)input[i] * min_signal_remaining) >> spectral_subtraction_bits);
    const uint32_t subtracted = (signal_scaled_up - estimate_scaled_up) >> smoothing_bits;
    output[i] = subtracted > floor ? subtracted : floor;
    noise_output[i] = noise_estimate[i];
  }
}

/* signal/src/pcan_argc_fixed.cc */
static inline int16_t mtk_signal_wide_dynamic(uint32_t x, const int16_t* lut) {
  if (x <= 2) return lut[x];
  const int16_t interval = (int16_t)mtk_signal_msb32(x);
  lut += 4 * interval - 6;
  const int16_t frac = (int16_t)(((interval < 11) ? (x << (11 - interval)) : (x >> (interval - 11))) & 0x3FF);
  int32_t result = ((int32_t)lut[2] * frac) >> 5;
  result += (int32_t)((uint32_t)lut[1] << 5);
  result *= frac;
  result = (result + (1 << 14)) >> 15;
  result += lut[0];
  return (int16_t)result;
}

#define MTK_PCAN_SNR_BITS 12
#define MTK_PCAN_OUTPUT_BITS 6

static inline uint32_t mtk_signal_pcan_shrink(uint32_t x) {
  if (x < (2u << MTK_PCAN_SNR_BITS)) return (x * x) >> (2 + 2 * MTK_PCAN_SNR_BITS - MTK_PCAN_OUTPUT_BITS);
  return (x >> (MTK_PCAN_SNR_BITS - MTK_PCAN_OUTPUT_BITS)) - (1u << MTK_PCAN_OUTPUT_BITS);
}

static inline void mtk_signal_pcan(const uint32_t* input, const uint32_t* noise_estimate, const int16_t* gain_lut,
                                   uint32_t* output, int32_t num_channels, int32_t snr_shift) {
  for (int32_t i = 0; i < num_channels; ++i) {
    const uint32_t gain = (uint32_t)(int32_t)mtk_signal_wide_dynamic(noise_estimate[i], gain_lut);
    const uint32_t snr = (uint32_t)(((uint64_t)input[i] * gain) >> snr_shift);
    output[i] = mtk_signal_pcan_shrink(snr);
  }
}

/* signal/src/log.cc */
static const uint16_t mtk_signal_log_lut[] = {
    0,    224,  442,  654,  861,  1063, 1259, 1450, 1636, 1817, 1992, 2163, 2329, 2490, 2646, 2797, 2944,
    3087, 3224, 3358, 3487, 3611, 3732, 3848, 3960, 4068, 4172, 4272, 4368, 4460, 4549, 4633, 4714, 4791,
    4864, 4934, 5001, 5063, 5123, 5178, 5231, 5280, 5326, 5368, 5408, 5444, 5477, 5507, 5533, 5557, 5578,
    5595, 5610, 5622, 5631, 5637, 5640, 5641, 5638, 5633, 5626, 5615, 5602, 5586, 5568, 5547, 5524, 5498,
    5470, 5439, 5406, 5370, 5332, 5291, 5249, 5203, 5156, 5106, 5054, 5000, 4944, 4885, 4825, 4762, 4697,
    4630, 4561, 4490, 4416, 4341, 4264, 4184, 4103, 4020, 3935, 3848, 3759, 3668, 3575, 3481, 3384, 3286,
    3186, 3084, 2981, 2875, 2768, 2659, 2549, 2437, 2323, 2207, 2090, 1971, 1851, 1729, 1605, 1480, 1353,
    1224, 1094, 963,  830,  695,  559,  421,  282,  142,  0,    0};

static inline uint32_t mtk_signal_log32(uint32_t x, uint32_t out_scale) {
  const uint32_t integer = mtk_signal_msb32(x) - 1;
  int32_t frac = (int32_t)(x - (uint32_t)(1ull << integer));
  if (integer < 16) {
    frac = (int32_t)((uint32_t)frac << (16 - integer));
  } else {
    frac >>= integer - 16;
  }
  const uint32_t base_seg = (uint32_t)frac >> (16 - 7);
  const uint32_t seg_unit = (UINT32_C(1) << 16) >> 7;
  const int32_t c0 = mtk_signal_log_lut[base_seg];
  const int32_t c1 = mtk_signal_log_lut[base_seg + 1];
  const int32_t seg_base = (int32_t)(seg_unit * base_seg);
  const int32_t rel_pos = ((c1 - c0) * (frac - seg_base)) >> 16;
  const uint32_t fraction = (uint32_t)(frac + c0 + rel_pos);
  const uint32_t log2 = (integer << 16) + fraction;
  const uint32_t round = 65536 / 2;
  const uint32_t loge = (uint32_t)(((uint64_t)45426 * log2 + round) >> 16);
  return (out_scale * loge + round) >> 16;
}

/* signal/src/filter_bank_log.cc */
static inline void mtk_signal_filter_bank_log(const uint32_t* input, int16_t* output, int32_t num_channels,
                                              int32_t output_scale, uint32_t correction_bits) {
  for (int32_t i = 0; i < num_channels; ++i) {
    const uint32_t scaled = input[i] << correction_bits;
    if (scaled > 1) {
      const uint32_t value = mtk_signal_log32(scaled, (uint32_t)output_scale);
      output[i] = (int16_t)(value < (uint32_t)INT16_MAX ? value : (uint32_t)INT16_MAX);
    } else {
      output[i] = 0;
    }
  }
}

#endif /* MTK_SIGNAL_H_ */
