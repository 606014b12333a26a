/*
 * mtk_core.h - the firmware core: runs the model, speaks the serial protocol.
 *
 * Protocol: the EEMBC EnergyRunner / MLPerf Tiny performance mode. Commands end with '%',
 * tokens are split on spaces, every command is answered then acknowledged by `m-ready`.
 * Bytes outside printable ASCII are dropped; a command longer than MTK_CMD_MAX is answered
 * `e-[Command too long]`; an empty command (a lone '%') only gets `m-ready`, which lets a
 * host resynchronise after garbage.
 *
 *   name%                 m-name-dut-[mtk]
 *   profile%              m-profile-[mtk firmware 1]  m-model-[<model>]
 *   timestamp%            m-lap-us-<us>
 *   db load N%            m-[Expecting N bytes]          (into the model input, in the arena: a run
 *                                                        may overwrite it, as TFLM's does)
 *   db <hex>%             m-load-done once N bytes arrived
 *   db print [N] [off]%   m-buffer-0xhh-0xhh-...          (16 bytes a line)
 *   infer N W%            m-warmup-start-W m-warmup-done m-infer-start-N m-lap-us-T0
 *                         m-lap-us-T1 m-infer-done m-results-[...]
 *   results%              m-results-[0.000,...]          (first output, dequantised)
 * mtk extensions:
 *   mtk-info%             m-mtk-info-[model:M,arena:A,input:I,output:O,unit:U,layers:L]
 *   mtk-out%              m-mtk-out-[<hex of all output bytes>]
 *   mtk-stats N%          m-mtk-stats-[n:N,min:A,median:B,max:C]  (units per inference; a benchmark's
 *                                                        `db` converted into the input before each)
 *   mtk-layers%           m-mtk-layers-[c0,c1,...]       (last inference, MTK_PROFILE builds)
 *   mtk-exit [status]%    m-mtk-exit-<status>, then ends the run through mtk_port_exit
 */
#ifndef MTK_CORE_H
#define MTK_CORE_H

#include <stdint.h>

#define MTK_CMD_MAX 80
#define MTK_STATS_MAX 32

/* Print the boot lines. */
void mtk_core_boot(void);

/* Feed one received byte; runs a command when it completes one. */
void mtk_core_feed(char c);

/* Init the port, boot, then feed bytes forever (exits 0 when the port's input closes). */
void mtk_core_main(void) __attribute__((noreturn));

/* Output helpers shared with mtk_mlperf.c: a string, a string and "\r\n", decimals (put_dec3: three
 * digits, leading zeros kept). */
void mtk_put_str(const char *s);
void mtk_put_line(const char *s);
void mtk_put_dec(uint32_t v);
void mtk_put_int(int32_t v);
void mtk_put_dec3(uint32_t v);

/* Called after each op by the compiled model in MTK_PROFILE builds (see mtk_layer_hook.h). */
void mtk_layer_hook(uint32_t index);

#endif
