/* mtk_semihosting.h - ending a QEMU run with a status, for ports built for QEMU only.
 * Semihosting's BKPT 0xAB faults on silicon without a debugger attached: never call this there. */
#ifndef MTK_SEMIHOSTING_H
#define MTK_SEMIHOSTING_H

#include <stdint.h>

/* SYS_EXIT_EXTENDED: ADP_Stopped_ApplicationExit with `status` (QEMU exits with it). Returns only
 * when semihosting is off (QEMU without -semihosting-config enable=on). */
static inline void mtk_semihosting_exit(int status)
{
    static uint32_t block[2];
    register uint32_t op __asm("r0") = 0x20u;
    register uint32_t *arg __asm("r1") = block;
    block[0] = 0x20026u;
    block[1] = (uint32_t)status;
    __asm volatile("bkpt 0xab" : : "r"(op), "r"(arg) : "memory");
}

#endif
