/* The micro-kernels over int16-expanded weights (microkernels.py "2x2/int16", "1x4/int16": no SXTB16 on DSP cores,
 * twice the flash), included by the files of the instruction sets whose mtk_dot_2x2 and mtk_dot_1x4 take them
 * (all but Helium's, which reads int8 weights 16 at a time). */
#ifndef MTK_DOT_S8_WIDE_H_
#define MTK_DOT_S8_WIDE_H_

#include <stdint.h>

static inline int32_t mtk_dot_2x2_w16_s8(const void* x, const void* w, int32_t groups, int32_t* acc) {
  return mtk_dot_2x2(x, w, groups, acc, 1);
}

static inline int32_t mtk_dot_1x4_w16_s8(const void* x, const void* w, int32_t groups, int32_t* acc) {
  return mtk_dot_1x4(x, w, groups, acc, 1);
}
#endif /* MTK_DOT_S8_WIDE_H_ */
