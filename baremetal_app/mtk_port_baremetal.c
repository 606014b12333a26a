/* mtk_port_baremetal.c - the mtk port for bare metal under QEMU: console UART (CMSDK APB
 * UART, PL011 or nRF51 UART), cycle counter (DWT CYCCNT when it counts, else SysTick; QEMU has no
 * DWT), exit through semihosting or a system reset. */
#include <stdint.h>

#include "mtk_board.h"
#include "mtk_port.h"
#include "mtk_semihosting.h"

#define REG(addr) (*(volatile uint32_t *)(addr))

/* ---- console UART ---- */

#if defined(MTK_UART_CMSDK)
#define UART_RX_DATA REG(MTK_UART_BASE + 0x00u)
#define UART_TX_DATA UART_RX_DATA
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
#define UART_RX_DATA REG(MTK_UART_BASE + 0x00u)
#define UART_TX_DATA UART_RX_DATA
#define UART_FR REG(MTK_UART_BASE + 0x18u)     /* bit4 RX empty, bit5 TX full */
#define UART_CTL REG(MTK_UART_BASE + 0x30u)

static void uart_init(void) { UART_CTL = 0x301u; }
static int uart_rx_ready(void) { return !(UART_FR & 0x10u); }
static int uart_tx_full(void) { return UART_FR & 0x20u; }
#elif defined(MTK_UART_NRF51)
/* nRF51 UART: tasks start reception and transmission; an event register says a byte arrived or went
 * (cleared by writing 0, before reading RXD, and before writing TXD: QEMU drops a byte written while
 * the last one is pending). */
#define UART_STARTRX REG(MTK_UART_BASE + 0x000u)
#define UART_STARTTX REG(MTK_UART_BASE + 0x008u)
#define UART_RXDRDY REG(MTK_UART_BASE + 0x108u)
#define UART_TXDRDY REG(MTK_UART_BASE + 0x11Cu)
#define UART_ENABLE REG(MTK_UART_BASE + 0x500u)
#define UART_RX_DATA REG(MTK_UART_BASE + 0x518u)
#define UART_TX_DATA REG(MTK_UART_BASE + 0x51Cu)
#define UART_BAUDRATE REG(MTK_UART_BASE + 0x524u)

static int tx_pending;

static void uart_init(void)
{
    UART_BAUDRATE = 0x01D7E000u; /* 115200 */
    UART_ENABLE = 4u;
    UART_STARTTX = 1u;
    UART_STARTRX = 1u;
}
static int uart_rx_ready(void)
{
    if (!UART_RXDRDY) {
        return 0;
    }
    UART_RXDRDY = 0u;
    return 1;
}
static int uart_tx_full(void)
{
    if (tx_pending && !UART_TXDRDY) {
        return 1;
    }
    UART_TXDRDY = 0u;
    tx_pending = 1;
    return 0;
}
#else
#error "mtk_board.h names no UART kind"
#endif

int mtk_port_getc(void)
{
    while (!uart_rx_ready()) {
    }
    return (int)(UART_RX_DATA & 0xFFu);
}

void mtk_port_putc(char c)
{
    while (uart_tx_full()) {
    }
    UART_TX_DATA = (uint8_t)c;
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
#if defined(__ARM_ARCH_6M__)
    return 0; /* ARMv6-M: no cycle counter */
#else
    uint32_t before;
    DEMCR |= 1u << 24;     /* TRCENA */
    DWT_LAR = 0xC5ACCE55u; /* unlock (Cortex-M7) */
    DWT_CYCCNT = 0;
    DWT_CTRL |= 1u;        /* CYCCNTENA */
    before = DWT_CYCCNT;
    for (volatile int i = 0; i < 8; i++) {
    }
    return DWT_CYCCNT != before;
#endif
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
