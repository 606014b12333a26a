/* main.c - the mtk firmware core as a Zephyr application's main thread. */
#include "mtk_core.h"

int main(void)
{
    mtk_core_main();
    return 0;
}
