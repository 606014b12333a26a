/* What the micro-kernel headers share whatever their instruction set: the compiler's copy, code-placement
 * hints, returning 4 sums. Includes nothing of mtk's, so any header can include it on its own. */
#ifndef MTK_SUPPORT_H_
#define MTK_SUPPORT_H_

#include <stdint.h>
#include <string.h>

/* The compiler's own copy: Zephyr builds with -ffreestanding, where a plain memcpy of 4 bytes
 * stays a library call (2.4x the instructions for a whole model). */
#if defined(__GNUC__)
#define MTK_COPY(dst, src, n) __builtin_memcpy((dst), (src), (n))
#define MTK_IN_REGISTER(v) __asm__("" : "+r"(v))   /* v materialized in a register here */
#define MTK_OUT_OF_LINE static __attribute__((noinline, unused))
#else
#define MTK_COPY(dst, src, n) memcpy((dst), (src), (n))
#define MTK_IN_REGISTER(v) ((void)0)
#define MTK_OUT_OF_LINE static inline
#endif
#define MTK_COPY4(dst, src) MTK_COPY((dst), (src), 4)

/* The 4 sums a micro-kernel returns through acc (the caller's status is 0). */
static inline int32_t mtk_store4(int32_t* acc, int32_t a0, int32_t a1, int32_t a2, int32_t a3) {
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
  return 0;
}

#endif /* MTK_SUPPORT_H_ */
