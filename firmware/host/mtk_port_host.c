/* mtk_port_host.c - the port for host builds (unit tests): console on stdin/stdout,
 * a counter that advances a fixed 7 units per read so that timings are deterministic. */
#include <stdio.h>
#include <stdlib.h>

#include "mtk_core.h"
#include "mtk_port.h"

static uint32_t counter;

void mtk_port_init(void) {}

int mtk_port_getc(void)
{
    int c = getchar();
    return c == EOF ? -1 : c;
}

void mtk_port_putc(char c) { putchar(c); }

void mtk_port_cycles_start(void) { counter = 0; }

uint32_t mtk_port_cycles(void) { return counter += 7u; }

const char *mtk_port_cycle_unit(void) { return "ticks"; }

uint32_t mtk_port_units_per_us(void) { return 1000u; }

uint32_t mtk_port_stack_used(void) { return 0; }

/* Energy-mode builds: a pulse is a line on stderr. */
void mtk_port_timestamp_pulse(void) { fputs("timestamp pulse\n", stderr); }

void mtk_port_exit(int status)
{
    printf("exit %d\n", status);
    fflush(stdout);
    exit(status);
}

int main(void) { mtk_core_main(); }
