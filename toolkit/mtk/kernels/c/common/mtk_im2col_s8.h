/* im2col rows of convolution windows whose taps do not come in whole groups of 4 channels (gemm.py's
 * "gather" source: image and spectrogram first layers with 1-3 input channels, depthwise layers with
 * one input channel per group), copied a kernel row at a time: with no horizontal dilation the taps
 * of a kernel row are one contiguous run of the NHWC input (kw * in_c bytes, cut where the window
 * leaves the image), copied 4 bytes at a time; taps outside the image read the input zero point.
 * Each row ends in zeros up to whole groups of 4 values, so that the GEMM packs it group by group
 * with no partial group to copy (mtk_pack_pair_groups_s16, mtk_pack_row_groups_s16). */
#ifndef MTK_IM2COL_S8_H_
#define MTK_IM2COL_S8_H_

#include <stdint.h>

/* The instruction set's mtk_dot_s8_<isa>.h and mtk_im2col_s8_<isa>.h come first (kernels/files.py):
 * mtk_pack_row_group, mtk_pack_pair_group, MTK_IM2COL_INLINE, mtk_im2col_fill, mtk_im2col_copy. */

static inline int32_t mtk_im2col_clamp(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The kh * kw * cn values of the window whose top left input pixel is (iy, ix), tap by tap (ky, then kx),
 * channels c0 .. c0 + cn - 1 of each tap (all in_c of them, or one group's), then `tail` zeros, into dst. */
MTK_IM2COL_INLINE int32_t mtk_im2col_s8(const void* x, int32_t iy, int32_t ix, int32_t in_h, int32_t in_w, int32_t in_c,
                                    int32_t c0, int32_t cn, int32_t kh, int32_t kw, int32_t dil_h, int32_t dil_w,
                                    int32_t pad, int32_t tail, void* dst) {
  const int8_t* xb = (const int8_t*)x + c0;
  int8_t* d = (int8_t*)dst;
  const int8_t zp = (int8_t)pad;
#pragma GCC unroll 4
  for (int32_t ky = 0; ky < kh; ++ky) {
    int32_t y = iy + ky * dil_h;
    if (y < 0 || y >= in_h) {
      d = mtk_im2col_fill(d, zp, kw * cn);
      continue;
    }
    const int8_t* row = xb + y * in_w * in_c;
    if (dil_w == 1 && cn == in_c) {
      int32_t lo = mtk_im2col_clamp(-ix, 0, kw), hi = mtk_im2col_clamp(in_w - ix, lo, kw);   /* taps inside */
      if (lo == 0 && hi == kw) {   /* the whole kernel row: a copy of constant length */
        d = mtk_im2col_copy(d, row + ix * in_c, kw * cn);
        continue;
      }
      d = mtk_im2col_fill(d, zp, lo * cn);
      d = mtk_im2col_copy(d, row + (ix + lo) * in_c, (hi - lo) * cn);
      d = mtk_im2col_fill(d, zp, (kw - hi) * cn);
      continue;
    }
    for (int32_t kx = 0; kx < kw; ++kx) {
      int32_t px = ix + kx * dil_w;
      if (px < 0 || px >= in_w) {
        d = mtk_im2col_fill(d, zp, cn);
      } else {
        const int8_t* s = row + px * in_c;
        for (int32_t c = 0; c < cn; ++c) *d++ = s[c];
      }
    }
  }
  mtk_im2col_fill(d, 0, tail);
  return 0;
}

/* Rows of whole groups of 4 values (mtk_im2col_s8's), packed as mtk_pack_row_s16 / mtk_pack_pair_s16 pack. */
static inline int32_t mtk_pack_row_groups_s16(const void* src, int32_t groups, void* dst) {
  for (int32_t g = 0; g < groups; ++g) mtk_pack_row_group((const int8_t*)src + 4 * g, (uint8_t*)dst, g);
  return 0;
}

static inline int32_t mtk_pack_pair_groups_s16(const void* src0, const void* src1, int32_t groups, void* dst) {
  for (int32_t g = 0; g < groups; ++g)
    mtk_pack_pair_group((const int8_t*)src0 + 4 * g, (const int8_t*)src1 + 4 * g, (uint8_t*)dst, g);
  return 0;
}

#endif /* MTK_IM2COL_S8_H_ */
