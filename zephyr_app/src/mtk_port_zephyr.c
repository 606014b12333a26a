/* mtk_port_zephyr.c - the mtk port for Zephyr: the console UART by polling (the protocol is
 * strictly request/response), counts from Zephyr's timing API on silicon (DWT cycles where
 * the core has a DWT) or, under QEMU -icount, system timer cycles converted to instructions
 * (QEMU has no DWT), and the end of a run through semihosting (QEMU) or a reboot. In energy mode
 * (CONFIG_MTK_ENERGY_MODE) a timestamp is a pulse on the `timestamp-gpios` pin of the zephyr,user
 * node (the board overlay sets it) for EEMBC's energy monitor. */
#include <stdint.h>

#include <zephyr/device.h>
#include <zephyr/drivers/gpio.h>
#include <zephyr/drivers/uart.h>
#include <zephyr/fatal.h>
#include <zephyr/kernel.h>
#include <zephyr/sys/reboot.h>
#include <zephyr/timing/timing.h>

#include "mtk_port.h"
#include "mtk_semihosting.h"

#define QEMU_ICOUNT (CONFIG_MTK_QEMU_TICK_NUM > 0)
#define MTK_EXIT_FAULT 3

static const struct device *const console = DEVICE_DT_GET(DT_CHOSEN(zephyr_console));

int mtk_port_getc(void)
{
    unsigned char c;
    while (uart_poll_in(console, &c) != 0) {
    }
    return c;
}

void mtk_port_putc(char c)
{
    uart_poll_out(console, (unsigned char)c);
}

#if defined(CONFIG_MTK_ENERGY_MODE)
#define PULSE_US 1000 /* the reference holds the pin low for 100,000 nops */

static const struct gpio_dt_spec timestamp_pin = GPIO_DT_SPEC_GET(DT_PATH(zephyr_user), timestamp_gpios);

static void timestamp_pin_init(void)
{
    /* released (high) from boot, so that the monitor sees the first falling edge */
    gpio_pin_configure_dt(&timestamp_pin, GPIO_OUTPUT_HIGH);
}

void mtk_port_timestamp_pulse(void)
{
    gpio_pin_set_dt(&timestamp_pin, 0);
    k_busy_wait(PULSE_US);
    gpio_pin_set_dt(&timestamp_pin, 1);
}
#else
static void timestamp_pin_init(void)
{
}
#endif

#if QEMU_ICOUNT
static uint32_t start_cycles;

void mtk_port_init(void)
{
    timestamp_pin_init();
}

void mtk_port_cycles_start(void)
{
    start_cycles = k_cycle_get_32();
}

uint32_t mtk_port_cycles(void)
{
    uint64_t timer_cycles = (uint32_t)(k_cycle_get_32() - start_cycles);
    return (uint32_t)((timer_cycles * CONFIG_MTK_QEMU_TICK_NUM) >> CONFIG_MTK_QEMU_TICK_SHIFT);
}

const char *mtk_port_cycle_unit(void)
{
    return "instructions";
}

uint32_t mtk_port_units_per_us(void)
{
    return CONFIG_MTK_QEMU_CLOCK_MHZ; /* one instruction counts as one cycle of the board's clock */
}
#else
static timing_t start_count;

void mtk_port_init(void)
{
    timestamp_pin_init();
    timing_init();
    timing_start();
}

void mtk_port_cycles_start(void)
{
    start_count = timing_counter_get();
}

uint32_t mtk_port_cycles(void)
{
    timing_t now = timing_counter_get();
    return (uint32_t)timing_cycles_get(&start_count, &now);
}

const char *mtk_port_cycle_unit(void)
{
    return "cycles";
}

uint32_t mtk_port_units_per_us(void)
{
    return timing_freq_get_mhz();
}
#endif

/* Zephyr paints thread stacks itself (CONFIG_INIT_STACKS) and measures the unused depth. */
uint32_t mtk_port_stack_used(void)
{
#if defined(CONFIG_INIT_STACKS) && defined(CONFIG_THREAD_STACK_INFO)
    size_t unused;
    k_tid_t self = k_current_get();
    return k_thread_stack_space_get(self, &unused) == 0 ? (uint32_t)(self->stack_info.size - unused) : 0u;
#else
    return 0u;
#endif
}

void mtk_port_exit(int status)
{
#if defined(CONFIG_MTK_SEMIHOSTING)
    mtk_semihosting_exit(status);
#else
    ARG_UNUSED(status);
#endif
    sys_reboot(SYS_REBOOT_COLD);
}

/* A fault ends the run like on bare metal: an error line, then exit status 3. */
void k_sys_fatal_error_handler(unsigned int reason, const struct arch_esf *esf)
{
    static const char message[] = "\r\ne-[Fault]\r\n";
    ARG_UNUSED(reason);
    ARG_UNUSED(esf);
    for (const char *s = message; *s; s++) {
        mtk_port_putc(*s);
    }
    mtk_port_exit(MTK_EXIT_FAULT);
}
