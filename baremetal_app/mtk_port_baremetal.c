/* mtk_port_baremetal.c - the mtk port for bare metal under QEMU: console UART (CMSDK APB
 * UART or PL011), cycle counter (DWT CYCCNT when it counts, else SysTick; QEMU has no
 * DWT), exit through semihosting or a system reset. */
#include <stdint.h>

#include "mtk_board.h"
#include "mtk_port.h"
#include "mtk_semihosting.h"

#define REG(addr) (*(volatile uint32_t *)(addr))

/* ---- console UART ---- */

#if defined(MTK_UART_CMSDK)
#define UART_DATA REG(MTK_UART_BASE + 0x00u)
#define UART_STATE REG(MTK_UART_BASE + 0x04u)  /* bit0 TX full, bit1 RX full */
#define UART_CTRL REG(MTK_UART_BASE + 0x08u)   /* bit0 TX enable, bit1 RX enable */
#define UART_BAUDDIV REG(MTK_UART_BASE + 0x10u)

static void uart_init(void)
{
    UART_BAUDDIV = MTK_CLOCK_HZ / 115200u;
    UART_CTRL = 3u;
}
static int uart_rx_ready(void) { return UART_STATE & 2u; }
static int uart_tx_full(void) { return UART_STATE & 1u; }
#elif defined(MTK_UART_PL011)
#define UART_DATA REG(MTK_UART_BASE + 0x00u)
#define UART_FR REG(MTK_UART_BASE + 0x18u)     /* bit4 RX empty, bit5 TX full */
#define UART_CTL REG(MTK_UART_BASE + 0x30u)

static void uart_init(void) { UART_CTL = 0x301u; }
static int uart_rx_ready(void) { return !(UART_FR & 0x10u); }
static int uart_tx_full(void) { return UART_FR & 0x20u; }
#else
#error "mtk_board.h names no UART kind"
#endif

int mtk_port_getc(void)
{
    while (!uart_rx_ready()) {
    }
    return (int)(UART_DATA & 0xFFu);
}

void mtk_port_putc(char c)
{
    while (uart_tx_full()) {
    }
    UART_DATA = (uint8_t)c;
}

static void put_str(const char *s)
{
    while (*s) {
        mtk_port_putc(*s++);
    }
}

/* ---- cycle counter ---- */

#define DEMCR REG(0xE000EDFCu)
#define DWT_CTRL REG(0xE0001000u)
#define DWT_CYCCNT REG(0xE0001004u)
#define DWT_LAR REG(0xE0001FB0u)
#define SYST_CSR REG(0xE000E010u)
#define SYST_RVR REG(0xE000E014u)
#define SYST_CVR REG(0xE000E018u)
#define SCB_ICSR REG(0xE000ED04u)
#define ICSR_PENDSTSET (1u << 26)
#define ICSR_PENDSTCLR (1u << 25)
#define SYSTICK_MAX 0xFFFFFFu

static int use_dwt;
static volatile uint32_t systick_wraps;

void SysTick_Handler(void)
{
    systick_wraps++;
}

static int dwt_counts(void)
{
    uint32_t before;
    DEMCR |= 1u << 24;     /* TRCENA */
    DWT_LAR = 0xC5ACCE55u; /* unlock (Cortex-M7) */
    DWT_CYCCNT = 0;
    DWT_CTRL |= 1u;        /* CYCCNTENA */
    before = DWT_CYCCNT;
    for (volatile int i = 0; i < 8; i++) {
    }
    return DWT_CYCCNT != before;
}

void mtk_port_init(void)
{
    uart_init();
    use_dwt = dwt_counts();
    SYST_RVR = SYSTICK_MAX;
    SYST_CVR = 0;
    SYST_CSR = 7u; /* processor clock, interrupt, enable */
}

void mtk_port_cycles_start(void)
{
    if (use_dwt) {
        DWT_CYCCNT = 0;
        return;
    }
    __asm volatile("cpsid i" ::: "memory");
    SYST_CVR = 0; /* reloads on the next tick: restarts the tick phase here */
    SCB_ICSR = ICSR_PENDSTCLR;
    systick_wraps = 0;
    __asm volatile("cpsie i" ::: "memory");
    while (SYST_CVR == 0) {
    }
}

/* SysTick ticks since mtk_port_cycles_start(), the counter extended by its wrap count. */
static uint64_t systick_ticks(void)
{
    uint32_t wraps, value;
    __asm volatile("cpsid i" ::: "memory");
    wraps = systick_wraps;
    value = SYST_CVR;
    if (SCB_ICSR & ICSR_PENDSTSET) { /* wrapped, handler not run yet */
        value = SYST_CVR;
        wraps++;
    }
    __asm volatile("cpsie i" ::: "memory");
    return ((uint64_t)wraps << 24) + (SYSTICK_MAX - value);
}

uint32_t mtk_port_cycles(void)
{
    if (use_dwt) {
        return DWT_CYCCNT;
    }
    return (uint32_t)((systick_ticks() * MTK_TICK_NUM) >> MTK_TICK_SHIFT);
}

const char *mtk_port_cycle_unit(void)
{
    return use_dwt ? "cycles" : "instructions";
}

uint32_t mtk_port_cycles_per_us(void)
{
    return use_dwt ? MTK_CLOCK_HZ / 1000000u : 1000u; /* -icount shift=0: 1 ns per instruction */
}

/* ---- exit ---- */

#define SCB_AIRCR REG(0xE000ED0Cu)

void mtk_port_exit(int status)
{
#if MTK_SEMIHOSTING
    mtk_semihosting_exit(status);
#endif
    SCB_AIRCR = 0x05FA0004u; /* SYSRESETREQ: QEMU -no-reboot exits (status 0) */
    for (;;) {
    }
}

#define MTK_EXIT_FAULT 3

void HardFault_Handler(void)
{
    put_str("\r\ne-[Fault]\r\n");
    mtk_port_exit(MTK_EXIT_FAULT);
}
