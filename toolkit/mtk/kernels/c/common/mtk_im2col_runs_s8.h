/* im2col rows packed straight from the input, kernel row by kernel row, for windows whose taps do not come
 * in whole groups of 4 channels but whose kernel rows are contiguous (no horizontal dilation: kw * in_c
 * bytes of the NHWC input, an image first layer's 3 x 3 x 3 = three runs of 9 bytes). A row's values are in
 * "runs order" (gemm.py runs_order, the weights permuted to match): each kernel row's whole words first,
 * packed from the input where it is (LDR reads them unaligned), then every kernel row's last kw * in_c % 4
 * values, together, zero-padded to whole groups. A kernel row that leaves the image is staged first, taps
 * outside it read the input zero point. The packed layout is the instruction set's (mtk_pack_row_group,
 * mtk_pack_pair_group: the instruction set's mtk_dot_s8_<isa>.h, which comes first: kernels/files.py). */
#ifndef MTK_IM2COL_RUNS_S8_H_
#define MTK_IM2COL_RUNS_S8_H_

#include <stdint.h>


/* The run (kw * in_c bytes) of the kernel row at input row y from column ix: in the input when all of it is
 * inside, else staged at `stage` with zp where it is outside. */
static inline const int8_t* mtk_run_s8(const int8_t* x, int32_t y, int32_t ix, int32_t in_h, int32_t in_w,
                                       int32_t in_c, int32_t kw, int8_t zp, int8_t* stage) {
  if (y >= 0 && y < in_h && ix >= 0 && ix + kw <= in_w) return x + (y * in_w + ix) * in_c;
  for (int32_t kx = 0; kx < kw; ++kx) {
    const int32_t px = ix + kx;
    const int8_t* s = x + (y * in_w + px) * in_c;
    const int32_t inside = y >= 0 && y < in_h && px >= 0 && px < in_w;
    for (int32_t c = 0; c < in_c; ++c) stage[kx * in_c + c] = inside ? s[c] : zp;
  }
  return stage;
}

/* Bytes of one row's staging: a kernel row's run, then its leftover values, whole groups of them. */
static inline int32_t mtk_runs_stage_bytes(int32_t kh, int32_t run) {
  return ((run + 3) & ~3) + ((kh * (run & 3) + 3) & ~3);
}

/* Rows (one or two: `rows`) of the windows whose top left input pixels are (iy0, ix0) and (iy1, ix1), packed
 * in runs order at dst; `stage` holds mtk_runs_stage_bytes per row. */
static inline void mtk_pack_runs_s16(const int8_t* x, int32_t rows, int32_t iy0, int32_t ix0, int32_t iy1,
                                     int32_t ix1, int32_t in_h, int32_t in_w, int32_t in_c, int32_t kh, int32_t kw,
                                     int32_t dil_h, int32_t pad, int8_t* stage, uint8_t* dst) {
  const int32_t run = kw * in_c, words = run >> 2, left = run & 3, stride = mtk_runs_stage_bytes(kh, run);
  const int32_t tail_at = (run + 3) & ~3, tail_groups = (kh * left + 3) >> 2;
  const int8_t zp = (int8_t)pad;
  int8_t* const stage1 = stage + stride;
  int32_t g = 0;
  for (int32_t ky = 0; ky < kh; ++ky) {
    const int8_t* r0 = mtk_run_s8(x, iy0 + ky * dil_h, ix0, in_h, in_w, in_c, kw, zp, stage);
    if (rows == 2) {
      const int8_t* r1 = mtk_run_s8(x, iy1 + ky * dil_h, ix1, in_h, in_w, in_c, kw, zp, stage1);
      for (int32_t j = 0; j < words; ++j) mtk_pack_pair_group(r0 + 4 * j, r1 + 4 * j, dst, g++);
      for (int32_t t = 0; t < left; ++t) stage1[tail_at + ky * left + t] = r1[4 * words + t];
    } else {
      for (int32_t j = 0; j < words; ++j) mtk_pack_row_group(r0 + 4 * j, dst, g++);
    }
    for (int32_t t = 0; t < left; ++t) stage[tail_at + ky * left + t] = r0[4 * words + t];
  }
  for (int32_t t = kh * left; t < 4 * tail_groups; ++t) {
    stage[tail_at + t] = 0;
    if (rows == 2) stage1[tail_at + t] = 0;
  }
  for (int32_t j = 0; j < tail_groups; ++j, ++g) {
    if (rows == 2)
      mtk_pack_pair_group(stage + tail_at + 4 * j, stage1 + tail_at + 4 * j, dst, g);
    else
      mtk_pack_row_group(stage + tail_at + 4 * j, dst, g);
  }
}

static inline int32_t mtk_pack_runs_pair_s16(const void* x, int32_t iy0, int32_t ix0, int32_t iy1, int32_t ix1,
                                             int32_t in_h, int32_t in_w, int32_t in_c, int32_t kh, int32_t kw,
                                             int32_t dil_h, int32_t pad, void* stage, void* dst) {
#ifdef MTK_PACK_RUNS_PAIR_INSIDE   /* the DSP cores' packer of windows inside the image (kernels/files.py) */
  if (mtk_pack_runs_pair_inside((const int8_t*)x, iy0, ix0, iy1, ix1, in_h, in_w, in_c, kh, kw, dil_h, (uint8_t*)dst))
    return 0;
#endif
  mtk_pack_runs_s16((const int8_t*)x, 2, iy0, ix0, iy1, ix1, in_h, in_w, in_c, kh, kw, dil_h, pad, (int8_t*)stage,
                    (uint8_t*)dst);
  return 0;
}

static inline int32_t mtk_pack_runs_row_s16(const void* x, int32_t iy, int32_t ix, int32_t in_h, int32_t in_w,
                                            int32_t in_c, int32_t kh, int32_t kw, int32_t dil_h, int32_t pad,
                                            void* stage, void* dst) {
  mtk_pack_runs_s16((const int8_t*)x, 1, iy, ix, iy, ix, in_h, in_w, in_c, kh, kw, dil_h, pad, (int8_t*)stage,
                    (uint8_t*)dst);
  return 0;
}

#endif /* MTK_IM2COL_RUNS_S8_H_ */
