/* startup.c - vector table and reset handler for the bare-metal firmware. */
#include <stdint.h>

#include "mtk_board.h"
#include "mtk_core.h"

/* The linker's table of what is copied from flash into RAM: .data, and the model's constants in a RAM
 * region of their own (--weights-in-ram); the system region's are in .data. */
struct copy_entry {
    const uint32_t *load;
    uint32_t *start;
    uint32_t bytes;
};

extern const struct copy_entry __copy_table_start[], __copy_table_end[];
extern uint32_t __bss_start[], __bss_end[], __stack_top[];

void Reset_Handler(void) __attribute__((noreturn));
void HardFault_Handler(void); /* mtk_port_baremetal.c */
void SysTick_Handler(void);   /* mtk_port_baremetal.c */
void Idle_IRQHandler(void);   /* mtk_port_baremetal.c, MTK_IDLE_WFI builds */
void stack_paint(void);       /* mtk_port_baremetal.c */

static void Default_Handler(void)
{
    HardFault_Handler();
}

#define SCB_CPACR (*(volatile uint32_t *)0xE000ED88u)

void Reset_Handler(void)
{
#if MTK_HAS_FPU
    SCB_CPACR |= 0xFu << 20; /* CP10, CP11 full access: FPU (and MVE on Cortex-M55) */
    __asm volatile("dsb\n\tisb" ::: "memory");
#endif
    for (const struct copy_entry *e = __copy_table_start; e < __copy_table_end; ++e) {
        for (uint32_t i = 0; i < e->bytes / 4; ++i) {
            e->start[i] = e->load[i];
        }
    }
    for (uint32_t *dst = __bss_start; dst < __bss_end;) {
        *dst++ = 0;
    }
    stack_paint();
    mtk_core_main();
}

/* MTK_IDLE_WFI builds add the external interrupts (the UART's wakes the idle CPU). */
#define EXTERNAL_VECTORS (MTK_IDLE_WFI ? 128 : 0)

__attribute__((section(".vectors"), used)) static void (*const vectors[16 + EXTERNAL_VECTORS])(void) = {
    (void (*)(void))__stack_top,
    Reset_Handler,
    Default_Handler,   /* NMI */
    HardFault_Handler,
    Default_Handler,   /* MemManage */
    Default_Handler,   /* BusFault */
    Default_Handler,   /* UsageFault */
    Default_Handler,   /* SecureFault (v8-M) */
    0, 0, 0,
    Default_Handler,   /* SVCall */
    Default_Handler,   /* DebugMonitor */
    0,
    Default_Handler,   /* PendSV */
    SysTick_Handler,
#if MTK_IDLE_WFI
    [16 ... 16 + EXTERNAL_VECTORS - 1] = Idle_IRQHandler,
#endif
};
