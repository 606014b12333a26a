/* mtk_core.c - the firmware core; the protocol is described in mtk_core.h. */
#include "mtk_core.h"

#include "mtk_model.h"
#include "mtk_port.h"

/* ---- output: no printf, a few formatters ---- */

void mtk_put_str(const char *s)
{
    while (*s) {
        mtk_port_putc(*s++);
    }
}

void mtk_put_line(const char *s)
{
    mtk_put_str(s);
    mtk_put_str("\r\n");
}

void mtk_put_dec(uint32_t v)
{
    char digits[10];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    while (n) {
        mtk_port_putc(digits[--n]);
    }
}

void mtk_put_int(int32_t v)
{
    if (v < 0) {
        mtk_port_putc('-');
    }
    mtk_put_dec(v < 0 ? 0u - (uint32_t)v : (uint32_t)v);
}

/* Three digits, leading zeros kept: 7 -> "007". */
void mtk_put_dec3(uint32_t v)
{
    mtk_port_putc((char)('0' + v / 100u));
    mtk_port_putc((char)('0' + v / 10u % 10u));
    mtk_port_putc((char)('0' + v % 10u));
}

static int streq(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

static void put_hex8(uint8_t b)
{
    static const char hex[] = "0123456789abcdef";
    mtk_port_putc(hex[b >> 4]);
    mtk_port_putc(hex[b & 15u]);
}

/* A thousandths value as a decimal with three places, e.g. -1234 -> "-1.234". */
static void put_milli(int32_t milli)
{
    uint32_t m = (uint32_t)milli;
    if (milli < 0) {
        mtk_port_putc('-');
        m = 0u - m;
    }
    mtk_put_dec(m / 1000u);
    mtk_port_putc('.');
    mtk_put_dec3(m % 1000u);
}

static void put_error(const char *what, const char *arg)
{
    mtk_put_str("e-[");
    mtk_put_str(what);
    mtk_put_str(arg);
    mtk_put_line("]");
}

/* ---- time: microseconds of the board's clock, kept from the port's counter ---- */

static uint32_t clock_last; /* counter value at the last update */
static uint32_t clock_us;
static uint32_t clock_rem;  /* units not yet a whole microsecond */

static uint32_t clock_now_us(void)
{
    uint32_t now = mtk_port_cycles();
    uint32_t delta = now - clock_last;
    uint32_t per_us = mtk_port_units_per_us();
    clock_last = now;
    clock_us += delta / per_us;
    clock_rem += delta % per_us;
    if (clock_rem >= per_us) {
        clock_rem -= per_us;
        clock_us++;
    }
    return clock_us;
}

/* Restart the port counter at 0 (fixes its phase) without losing time. */
static void clock_restart(void)
{
    (void)clock_now_us();
    mtk_port_cycles_start();
    clock_last = 0;
}

/* th_timestamp() of the reference API: a `m-lap-us-` line, or in energy mode an edge on the
 * timestamp pin for the energy monitor. */
static void timestamp(void)
{
#ifdef MTK_ENERGY_MODE
    mtk_port_timestamp_pulse();
#else
    mtk_put_str("m-lap-us-");
    mtk_put_dec(clock_now_us());
    mtk_put_str("\r\n");
#endif
}

/* ---- model ---- */

static uint32_t layer_last;

void mtk_layer_hook(uint32_t index)
{
    uint32_t now = mtk_port_cycles();
    if (index < mtk_model.layer_count) {
        mtk_model.layer_cycles[index] = now - layer_last;
    }
    layer_last = mtk_port_cycles();
}

/* One inference, timed from a freshly restarted counter; returns its units. */
static int run_model(uint32_t *units)
{
    int32_t status;
    clock_restart();
    layer_last = 0;
    status = mtk_model.run();
    *units = mtk_port_cycles();
    (void)clock_now_us();
    if (status != 0) {
        mtk_put_str("e-[Model run failed: ");
        mtk_put_dec((uint32_t)status);
        mtk_put_line("]");
    }
    return status == 0;
}

static int32_t result_at(uint32_t i)
{
    const uint8_t *out = mtk_model.output();
    switch (mtk_model.result_type) {
    case MTK_RESULT_INT8: return (int8_t)out[i];
    case MTK_RESULT_UINT8: return out[i];
    case MTK_RESULT_INT16: return (int16_t)(out[2 * i] | out[2 * i + 1] << 8);
    default: return (int32_t)(out[4 * i] | out[4 * i + 1] << 8 | out[4 * i + 2] << 16 | (uint32_t)out[4 * i + 3] << 24);
    }
}

/* ---- the `db` buffer: the model input itself, or a benchmark's own buffer ---- */

static uint32_t db_size; /* bytes announced by `db load` */
static uint32_t db_pos;  /* bytes received */

static uint8_t *db_buffer(void)
{
    return mtk_model.benchmark ? mtk_model.benchmark->db : mtk_model.input();
}

static uint32_t db_capacity(void)
{
    return mtk_model.benchmark ? mtk_model.benchmark->db_capacity : mtk_model.input_bytes;
}

/* th_load_tensor(): a benchmark converts the `db` bytes into the model input (mtk's own firmware
 * loads the input directly). */
static void load_tensor(void)
{
    if (mtk_model.benchmark) {
        mtk_model.benchmark->load_tensor(mtk_model.benchmark, db_pos);
    }
}

/* th_results(): a benchmark's reference format, or mtk's dequantized thousandths. */
static void cmd_results(void)
{
    if (mtk_model.benchmark) {
        mtk_model.benchmark->put_results(mtk_model.benchmark);
        return;
    }
    mtk_put_str("m-results-[");
    {
        for (uint32_t i = 0; mtk_model.result_type != MTK_RESULT_NONE && i < mtk_model.result_count; i++) {
            int64_t q = (int64_t)result_at(i) - mtk_model.result_zero_point;
            if (i) {
                mtk_port_putc(',');
            }
            put_milli((int32_t)((q * mtk_model.result_scale_milli_q16 + 32768) >> 16));
        }
    }
    mtk_put_line("]");
}

/* ee_infer() of the reference API. */
static void cmd_infer(uint32_t count, uint32_t warmup)
{
    uint32_t units;
    load_tensor();
    mtk_put_str("m-warmup-start-");
    mtk_put_dec(warmup);
    mtk_put_str("\r\n");
    while (warmup--) {
        if (!run_model(&units)) {
            return;
        }
    }
    mtk_put_line("m-warmup-done");
    mtk_put_str("m-infer-start-");
    mtk_put_dec(count);
    mtk_put_str("\r\n");
    timestamp();
    while (count--) {
        if (!run_model(&units)) {
            return;
        }
    }
    timestamp();
    mtk_put_line("m-infer-done");
    cmd_results();
}

/* In .bss, not in the frame of the call chain that runs the model (the deepest one, which sizes the stack). */
static uint32_t samples[MTK_STATS_MAX];

static void cmd_stats(uint32_t count)
{
    if (count == 0 || count > MTK_STATS_MAX) {
        put_error("mtk-stats N must be 1..32", "");
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        uint32_t v, j = i;
        load_tensor(); /* each run from the benchmark's input: a run may overwrite it in the arena */
        if (!run_model(&v)) {
            return;
        }
        for (; j > 0 && samples[j - 1] > v; j--) {
            samples[j] = samples[j - 1];
        }
        samples[j] = v;
    }
    {
        uint32_t lo = samples[(count - 1) / 2], hi = samples[count / 2];
        mtk_put_str("m-mtk-stats-[n:");
        mtk_put_dec(count);
        mtk_put_str(",min:");
        mtk_put_dec(samples[0]);
        mtk_put_str(",median:");
        mtk_put_dec(lo + (hi - lo) / 2);
        mtk_put_str(",max:");
        mtk_put_dec(samples[count - 1]);
        mtk_put_line("]");
    }
}

static void cmd_layers(void)
{
    if (mtk_model.layer_count == 0) {
        put_error("Built without profiling", "");
        return;
    }
    mtk_put_str("m-mtk-layers-[");
    for (uint32_t i = 0; i < mtk_model.layer_count; i++) {
        if (i) {
            mtk_port_putc(',');
        }
        mtk_put_dec(mtk_model.layer_cycles[i]);
    }
    mtk_put_line("]");
}

static void cmd_info(void)
{
    mtk_put_str("m-mtk-info-[model:");
    mtk_put_str(mtk_model.name);
    mtk_put_str(",arena:");
    mtk_put_dec(mtk_model.arena_bytes);
    mtk_put_str(",input:");
    mtk_put_dec(mtk_model.input_bytes);
    mtk_put_str(",output:");
    mtk_put_dec(mtk_model.output_bytes);
    mtk_put_str(",unit:");
    mtk_put_str(mtk_port_cycle_unit());
    mtk_put_str(",layers:");
    mtk_put_dec(mtk_model.layer_count);
    mtk_put_str(",stack:");
    mtk_put_dec(mtk_port_stack_used());
    mtk_put_line("]");
}

static void put_bytes_hex(const uint8_t *bytes, uint32_t n)
{
    while (n--) {
        put_hex8(*bytes++);
    }
}

/* ---- `db`: ee_buffer_parse() of the reference API ---- */

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* atoi(): optional sign, then digits up to the first other character. */
static int32_t parse_int(const char *s)
{
    uint32_t v = 0;
    int negative = *s == '-';
    if (*s == '-' || *s == '+') {
        s++;
    }
    while (*s >= '0' && *s <= '9') {
        v = v * 10u + (uint32_t)(*s++ - '0');
    }
    return (int32_t)(negative ? 0u - v : v);
}

static void db_load(const char *tok)
{
    int32_t n;
    if (!tok) {
        mtk_put_line("e-[Command 'db load' requires the # of bytes]");
        return;
    }
    n = parse_int(tok);
    if (n == 0) {
        db_size = 0;
        mtk_put_line("e-[Command 'db load' must be >0 bytes]");
        return;
    }
    db_pos = 0;
    if ((uint32_t)n > db_capacity()) {
        mtk_put_str("Supplied buffer size ");
        mtk_put_int(n);
        mtk_put_str(" exceeds maximum of ");
        mtk_put_dec(db_capacity());
        mtk_put_str("\n");
        db_size = 0; /* the reference keeps the size and overruns its buffer */
    } else {
        db_size = (uint32_t)n;
        mtk_put_str("m-[Expecting ");
        mtk_put_dec(db_size);
        mtk_put_line(" bytes]");
    }
}

static void db_hex(const char *hex)
{
    const char *p = hex;
    if (db_pos >= db_size) {
        put_error("No load in progress: ", "db load N first");
        return;
    }
    while (*p) {
        p++;
    }
    if ((p - hex) & 1) {
        mtk_put_line("e-[Insufficent number of hex digits]");
        return;
    }
    for (p = hex; *p; p += 2) {
        int hi = hex_digit(p[0]), lo = hex_digit(p[1]);
        if (hi < 0 || lo < 0) {
            mtk_put_str("e-[Invalid hex digit '");
            mtk_port_putc(p[0]);
            mtk_port_putc(p[1]);
            mtk_put_line("']");
            return;
        }
        db_buffer()[db_pos++] = (uint8_t)(hi << 4 | lo);
        if (db_pos == db_size) {
            mtk_put_line("m-load-done");
            return;
        }
    }
}

/* Every byte announced by the last `db load`, 8 a line (the reference ignores N and offset). */
static void db_print(void)
{
    const uint8_t *db = db_buffer();
    uint32_t i = 0;
    for (; i < db_size; i++) {
        if (i % 8u == 0) {
            mtk_put_str("m-buffer-");
        }
        put_hex8(db[i]);
        mtk_put_str((i + 1) % 8u == 0 || i + 1 == db_size ? "\r\n" : "-");
    }
    if (i % 8u != 0) {
        mtk_put_str("\r\n");
    }
}

static void cmd_db(char **tok)
{
    if (!tok[1]) {
        mtk_put_line("e-[Command 'db' requires a subcommand]");
    } else if (streq(tok[1], "load")) {
        db_load(tok[2]);
    } else if (streq(tok[1], "print")) {
        db_print();
    } else {
        db_hex(tok[1]);
    }
}

/* ---- commands ---- */

#define MAX_TOKENS 4
#define FIRMWARE_VERSION "ULPMark for tinyML Firmware V0.0.1" /* EE_FW_VERSION */

static void cmd_help(void)
{
    mtk_put_line(FIRMWARE_VERSION);
    mtk_put_line("");
    mtk_put_line("help         : Print this information");
    mtk_put_line("name         : Print the name of the device");
    mtk_put_line("timestsamp   : Generate a timetsamp");
    mtk_put_line("db SUBCMD    : Manipulate a generic byte buffer");
    mtk_put_line("  load N     : Allocate N bytes and set load counter");
    mtk_put_line("  db HH[HH]* : Load 8-bit hex byte(s) until N bytes");
    mtk_put_line("  print [N=16] [offset=0]");
    mtk_put_line("             : Print N bytes at offset as hex");
    mtk_put_line("infer N [W=0]: Load input, execute N inferences after W warmup loops");
    mtk_put_line("results      : Return the result fp32 vector");
}

/* `infer [N=1] [W=10]`, checked as the reference checks them. */
static void cmd_infer_args(char **tok)
{
    int32_t n = tok[1] ? parse_int(tok[1]) : 1, w = tok[1] && tok[2] ? parse_int(tok[2]) : 10;
    if (n <= 0) {
        mtk_put_line("e-[Inference iterations must be >0]");
    } else if (w < 0) {
        mtk_put_line("e-[Inference warmup must be >=0]");
    } else {
        cmd_infer((uint32_t)n, (uint32_t)w);
    }
}

/* Decimal argument `tok` of an mtk extension, or `fallback` when absent; 0 with an error line when
 * not a number. */
static int parse_u32(const char *tok, uint32_t fallback, uint32_t *out)
{
    uint32_t v = 0;
    if (!tok) {
        *out = fallback;
        return 1;
    }
    for (const char *p = tok; *p; p++) {
        if (*p < '0' || *p > '9' || v > 429496728u) {
            put_error("Invalid number: ", tok);
            return 0;
        }
        v = v * 10u + (uint32_t)(*p - '0');
    }
    *out = v;
    return 1;
}

static void execute(char *line)
{
    char *tok[MAX_TOKENS] = {0};
    int n = 0;
    uint32_t a;
    for (char *p = line; *p && n < MAX_TOKENS;) {
        while (*p == ' ') {
            *p++ = '\0';
        }
        if (*p) {
            tok[n++] = p;
        }
        while (*p && *p != ' ') {
            p++;
        }
    }
    if (n == 0) {
        return;
    }
    if (streq(tok[0], "name")) {
        mtk_put_line("m-name-dut-[mtk]");
    } else if (streq(tok[0], "timestamp")) {
        timestamp();
    } else if (streq(tok[0], "profile")) {
        mtk_put_line("m-profile-[" FIRMWARE_VERSION "]");
        mtk_put_str("m-model-[");
        mtk_put_str(mtk_model.benchmark ? mtk_model.benchmark->id : mtk_model.name);
        mtk_put_line("]");
    } else if (streq(tok[0], "help")) {
        cmd_help();
    } else if (streq(tok[0], "db")) {
        cmd_db(tok);
    } else if (streq(tok[0], "infer")) {
        cmd_infer_args(tok);
    } else if (streq(tok[0], "results")) {
        cmd_results();
    } else if (streq(tok[0], "mtk-info")) {
        cmd_info();
    } else if (streq(tok[0], "mtk-out")) {
        mtk_put_str("m-mtk-out-[");
        put_bytes_hex(mtk_model.output(), mtk_model.output_bytes);
        mtk_put_line("]");
    } else if (streq(tok[0], "mtk-stats")) {
        if (parse_u32(tok[1], 1, &a)) {
            cmd_stats(a);
        }
    } else if (streq(tok[0], "mtk-layers")) {
        cmd_layers();
    } else if (streq(tok[0], "mtk-exit")) {
        if (parse_u32(tok[1], 0, &a)) {
            mtk_put_str("m-mtk-exit-");
            mtk_put_dec(a);
            mtk_put_str("\r\n");
            mtk_port_exit((int)a);
        }
    } else {
        put_error("Unknown command: ", tok[0]);
    }
}

/* ---- framing ---- */

static char line_buf[MTK_CMD_MAX + 1];
static uint32_t line_len;
static int line_overflow;

void mtk_core_feed(char c)
{
    if (c == '%') {
        if (line_overflow) {
            put_error("Command too long", "");
        } else {
            line_buf[line_len] = '\0';
            execute(line_buf);
        }
        line_len = 0;
        line_overflow = 0;
        mtk_put_line("m-ready");
    } else if (c >= ' ' && c <= '~') {
        if (line_len < MTK_CMD_MAX) {
            line_buf[line_len++] = c;
        } else {
            line_overflow = 1;
        }
    }
}

/* ee_benchmark_initialize() of the reference API. */
void mtk_core_boot(void)
{
#ifdef MTK_ENERGY_MODE
    mtk_put_line("m-timestamp-mode-energy");
#else
    mtk_put_line("m-timestamp-mode-performance");
#endif
    timestamp();
    mtk_put_line("m-init-done");
    mtk_put_line("m-ready");
}

void mtk_core_main(void)
{
    mtk_port_init();
    clock_restart();
    mtk_core_boot();
    for (;;) {
        int c = mtk_port_getc();
        if (c < 0) {
            mtk_port_exit(0);
        }
        mtk_core_feed((char)c);
    }
}
