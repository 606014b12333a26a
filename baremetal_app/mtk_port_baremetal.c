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

#define UART_INTCLEAR REG(MTK_UART_BASE + 0x0Cu) /* bit1 RX interrupt */
#define UART_CTRL_ON 3u
#define UART_CTRL_RX_IRQ 8u

static void uart_init(void)
{
    UART_BAUDDIV = MTK_CLOCK_HZ / 115200u;
    UART_CTRL = UART_CTRL_ON;
}
static inline void uart_rx_irq(int on)
{
    UART_CTRL = on ? UART_CTRL_ON | UART_CTRL_RX_IRQ : UART_CTRL_ON;
    UART_INTCLEAR = 2u;
}
static int uart_rx_ready(void) { return UART_STATE & 2u; }
static int uart_tx_full(void) { return UART_STATE & 1u; }
#elif defined(MTK_UART_PL011)
#define UART_RX_DATA REG(MTK_UART_BASE + 0x00u)
#define UART_TX_DATA UART_RX_DATA
#define UART_FR REG(MTK_UART_BASE + 0x18u)     /* bit4 RX empty, bit5 TX full */
#define UART_CTL REG(MTK_UART_BASE + 0x30u)
#define UART_IMSC REG(MTK_UART_BASE + 0x38u)   /* bit4 RX interrupt */
#define UART_ICR REG(MTK_UART_BASE + 0x44u)

static void uart_init(void) { UART_CTL = 0x301u; }
static inline void uart_rx_irq(int on)
{
    UART_IMSC = on ? 0x10u : 0u;
    UART_ICR = 0x10u;
}
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
#define UART_INTENSET REG(MTK_UART_BASE + 0x304u) /* bit2 RXDRDY */
#define UART_INTENCLR REG(MTK_UART_BASE + 0x308u)

static int tx_pending;

static inline void uart_rx_irq(int on)
{
    if (on) {
        UART_INTENSET = 4u;
    } else {
        UART_INTENCLR = 4u;
    }
}

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

#define NVIC_ISER(n) REG(0xE000E100u + 4u * (n))
#define NVIC_WORDS 4u  /* the 128 external vectors of MTK_IDLE_WFI builds */

/* Under paced QEMU (`mtk serve`: -icount align=on,sleep=on) the wait for input idles the CPU in
 * WFI: virtual time then follows the host's clock, where a polling loop, slower than the pace,
 * would bank lateness that QEMU later makes up by running unpaced. The UART's RX interrupt wakes
 * it; its handler (every external vector, startup.c) only turns that interrupt off again. */
#if MTK_IDLE_WFI
void Idle_IRQHandler(void)
{
    uart_rx_irq(0);
}

static void wait_for_input(void)
{
    for (uint32_t n = 0; n < NVIC_WORDS; n++) {
        NVIC_ISER(n) = ~0u; /* only the UART has its interrupt enabled at the source */
    }
    __asm volatile("cpsid i" ::: "memory");
    while (!uart_rx_ready()) {
        uart_rx_irq(1);
        __asm volatile("wfi\n\tcpsie i\n\tisb\n\tcpsid i" ::: "memory"); /* handlers run at cpsie */
    }
    __asm volatile("cpsie i" ::: "memory");
    uart_rx_irq(0);
}
#else
static void wait_for_input(void)
{
    while (!uart_rx_ready()) {
    }
}
#endif

int mtk_port_getc(void)
{
    if (!uart_rx_ready()) {
        wait_for_input();
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

uint32_t mtk_port_units_per_us(void)
{
    return MTK_CLOCK_HZ / 1000000u; /* cycles, or under QEMU instructions counted one a cycle */
}

/* ---- stack high-water mark ---- */

extern uint32_t __stack_bottom[], __stack_top[]; /* linker.ld */

#define STACK_PAINT 0x6b617453u /* "Stak" */

/* Called once from Reset_Handler: fills the stack below the caller's frame with STACK_PAINT. Naked, in assembly:
   compiled C may read sp before its prologue pushes the return address (shrink-wrapping at -O2), and then paint
   over it. */
__attribute__((naked, noinline)) void stack_paint(void)
{
    __asm volatile("ldr r0, =__stack_bottom\n"
                   "ldr r1, =0x6b617453\n" /* STACK_PAINT */
                   "mov r2, sp\n"
                   "1: cmp r0, r2\n"
                   "bhs 2f\n"
                   "stmia r0!, {r1}\n"
                   "b 1b\n"
                   "2: bx lr\n"
                   ".ltorg\n");
}

uint32_t mtk_port_stack_used(void)
{
    const uint32_t *word = __stack_bottom;
    while (word < __stack_top && *word == STACK_PAINT) {
        word++;
    }
    return (uint32_t)(__stack_top - word) * 4u;
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
