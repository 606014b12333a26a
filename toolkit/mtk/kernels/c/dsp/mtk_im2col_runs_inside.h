/* A pair of im2col rows in runs order for windows inside the image, on the DSP cores (kernels/files.py: included
 * before common/mtk_im2col_runs_s8.h, whose mtk_pack_runs_pair_s16 tries it first): each kernel row's whole
 * words packed from the input where they are, its leftover values (a 3-channel 3x3 window's one a kernel row) gathered
 * into the tail group's word in registers, neither staged nor zero-filled in memory. The same packed rows as
 * mtk_pack_runs_s16. */
#ifndef MTK_IM2COL_RUNS_INSIDE_H_
#define MTK_IM2COL_RUNS_INSIDE_H_

#include <stdint.h>

#define MTK_PACK_RUNS_PAIR_INSIDE 1

/* Whether the kh kernel rows of kw pixels from (iy, ix), dil_h rows apart, are all inside the image. */
static inline int32_t mtk_runs_inside(int32_t iy, int32_t ix, int32_t in_h, int32_t in_w, int32_t kh, int32_t kw,
                                      int32_t dil_h) {
  return iy >= 0 && iy + (kh - 1) * dil_h < in_h && ix >= 0 && ix + kw <= in_w;
}

/* The two rows of the windows at (iy0, ix0) and (iy1, ix1) packed at dst, when both are inside the image and their
 * leftovers fill at most one group (kh · (kw · in_c mod 4) <= 4); else 0, nothing written. */
static inline int32_t mtk_pack_runs_pair_inside(const int8_t* x, int32_t iy0, int32_t ix0, int32_t iy1, int32_t ix1,
                                                int32_t in_h, int32_t in_w, int32_t in_c, int32_t kh, int32_t kw,
                                                int32_t dil_h, uint8_t* dst) {
  const int32_t run = kw * in_c, words = run >> 2, left = run & 3;
  uint32_t tail0 = 0, tail1 = 0;
  int32_t g = 0;
  if (kh * left > 4 || !mtk_runs_inside(iy0, ix0, in_h, in_w, kh, kw, dil_h) ||
      !mtk_runs_inside(iy1, ix1, in_h, in_w, kh, kw, dil_h))
    return 0;
  for (int32_t ky = 0; ky < kh; ++ky) {
    const int8_t* r0 = x + ((iy0 + ky * dil_h) * in_w + ix0) * in_c;
    const int8_t* r1 = x + ((iy1 + ky * dil_h) * in_w + ix1) * in_c;
    for (int32_t j = 0; j < words; ++j) mtk_pack_pair_group(r0 + 4 * j, r1 + 4 * j, dst, g++);
    for (int32_t t = 0; t < left; ++t) {
      const int32_t at = 8 * (ky * left + t);
      tail0 |= (uint32_t)(uint8_t)r0[4 * words + t] << at;
      tail1 |= (uint32_t)(uint8_t)r1[4 * words + t] << at;
    }
  }
  if (left) {
    uint32_t* tail = (uint32_t*)(dst + 16 * g);
    tail[0] = mtk_sxtb16(tail0), tail[1] = mtk_sxtb16_ror8(tail0);
    tail[2] = mtk_sxtb16(tail1), tail[3] = mtk_sxtb16_ror8(tail1);
  }
  return 1;
}

#endif /* MTK_IM2COL_RUNS_INSIDE_H_ */
