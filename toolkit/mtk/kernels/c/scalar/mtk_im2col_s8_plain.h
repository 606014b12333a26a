/* The im2col rows' fills and copies on cores without Helium (mtk_im2col_s8.h). */
#ifndef MTK_IM2COL_S8_PLAIN_H_
#define MTK_IM2COL_S8_PLAIN_H_

#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
#define MTK_IM2COL_COPY4(dst, src) __builtin_memcpy((dst), (src), 4)
#else
#define MTK_IM2COL_COPY4(dst, src) memcpy((dst), (src), 4)
#endif

#define MTK_IM2COL_INLINE static inline
static inline int8_t* mtk_im2col_fill(int8_t* d, int8_t value, int32_t n) {
  for (; n > 0; --n) *d++ = value;
  return d;
}

/* n bytes, 4 at a time (an unaligned word copy on cores that have one, bytes on ARMv6-M). */
static inline int8_t* mtk_im2col_copy(int8_t* d, const int8_t* s, int32_t n) {
  for (; n >= 4; n -= 4, d += 4, s += 4) MTK_IM2COL_COPY4(d, s);
  for (; n > 0; --n) *d++ = *s++;
  return d;
}

#endif /* MTK_IM2COL_S8_PLAIN_H_ */
