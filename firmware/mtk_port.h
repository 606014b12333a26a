/*
 * mtk_port.h - what a platform provides to the firmware core.
 *
 * The core (mtk_core.c) is shared by every platform: bare metal under QEMU, bare metal
 * on silicon, Zephyr, and the host build used by the unit tests. A port implements the
 * functions below and nothing else; the core never touches hardware directly.
 */
#ifndef MTK_PORT_H
#define MTK_PORT_H

#include <stdint.h>

/* Bring up the console UART and the cycle counter. Called once, first. */
void mtk_port_init(void);

/* Blocking read of one byte from the console: 0..255, or -1 when the input is closed
 * (only the host port closes; then the core exits with status 0). */
int mtk_port_getc(void);

/* Blocking write of one byte to the console. */
void mtk_port_putc(char c);

/* Restart the cycle counter at 0, right before a measured region. */
void mtk_port_cycles_start(void);

/* Units elapsed since the last mtk_port_cycles_start(), modulo 2^32. */
uint32_t mtk_port_cycles(void);

/* What a unit is: "instructions" under QEMU -icount, "cycles" on silicon. */
const char *mtk_port_cycle_unit(void);

/* Units per microsecond of the board's clock, for timestamps in its microseconds: the core clock
 * in MHz (under QEMU -icount one instruction counts as one cycle of the board's clock). */
uint32_t mtk_port_units_per_us(void);

/* Energy-mode builds (MTK_ENERGY_MODE) only: the reference's timestamp for the energy monitor,
 * the timestamp pin pulled low for about a millisecond, then released. */
void mtk_port_timestamp_pulse(void);

/* Bytes of the main stack used since boot (its high-water mark, interrupts included), or 0 when the
 * port cannot tell. The whole stack means it may have overflowed. */
uint32_t mtk_port_stack_used(void);

/* Stop: end the QEMU run with `status`, or halt/reset a real board. */
void mtk_port_exit(int status) __attribute__((noreturn));

#endif
