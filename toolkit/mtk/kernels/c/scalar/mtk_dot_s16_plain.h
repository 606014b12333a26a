/* The 16x8 micro-kernels' steps on cores without the DSP extension (mtk_dot_s16.h): a plain multiply-accumulate
 * loop reading the weight bytes as they are (LDRSB). */
#ifndef MTK_DOT_S16_PLAIN_H_
#define MTK_DOT_S16_PLAIN_H_

#include <stdint.h>

/* Row r's products with a weight word's c0 and c1 values (the pair's layout), MLAs. */
#define MTK_S16_PLAIN_PAIR(r, w, a0, a1) \
  (a0 += (r)[0] * (w)[0], a0 += (r)[1] * (w)[2], a1 += (r)[0] * (w)[1], a1 += (r)[1] * (w)[3])
#define MTK_S16_PAIR_2X2(r0, r1, w, a00, a01, a10, a11) \
  do {                                                  \
    MTK_S16_PLAIN_PAIR(r0, w, a00, a01);                \
    MTK_S16_PLAIN_PAIR(r1, w, a10, a11);                \
  } while (0)
#define MTK_S16_PAIR_1X2(r, w, a0, a1) MTK_S16_PLAIN_PAIR(r, w, a0, a1)
#define MTK_S16_WHOLE_2X2(r0, r1, w, k, pairs, a00, a01, a10, a11)
#define MTK_S16_WHOLE_1X2(r, w, k, pairs, a0, a1)

#endif /* MTK_DOT_S16_PLAIN_H_ */
