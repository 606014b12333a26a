/* mtk_core.c - the firmware core; the protocol is described in mtk_core.h. */
#include "mtk_core.h"

#include "mtk_model.h"
#include "mtk_port.h"

/* ---- output: no printf, a few formatters ---- */

static void put_str(const char *s)
{
    while (*s) {
        mtk_port_putc(*s++);
    }
}

static void put_line(const char *s)
{
    put_str(s);
    put_str("\r\n");
}

static void put_dec(uint32_t v)
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
    put_dec(m / 1000u);
    mtk_port_putc('.');
    m %= 1000u;
    mtk_port_putc((char)('0' + m / 100u));
    mtk_port_putc((char)('0' + m / 10u % 10u));
    mtk_port_putc((char)('0' + m % 10u));
}

static void put_error(const char *what, const char *arg)
{
    put_str("e-[");
    put_str(what);
    put_str(arg);
    put_line("]");
}

/* ---- time: a microsecond clock kept from the port's counter ---- */

static uint32_t clock_last; /* counter value at the last update */
static uint32_t clock_us;
static uint32_t clock_rem; /* units not yet a whole microsecond */

static uint32_t clock_now_us(void)
{
    uint32_t now = mtk_port_cycles();
    uint32_t delta = now - clock_last;
    uint32_t per_us = mtk_port_cycles_per_us();
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

static void put_timestamp(uint32_t us)
{
    put_str("m-lap-us-");
    put_dec(us);
    put_str("\r\n");
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
        put_str("e-[Model run failed: ");
        put_dec((uint32_t)status);
        put_line("]");
    }
    return status == 0;
}

static int32_t result_at(uint32_t i)
{
    const uint8_t *out = mtk_model.output;
    switch (mtk_model.result_type) {
    case MTK_RESULT_INT8: return (int8_t)out[i];
    case MTK_RESULT_UINT8: return out[i];
    case MTK_RESULT_INT16: return (int16_t)(out[2 * i] | out[2 * i + 1] << 8);
    default: return (int32_t)(out[4 * i] | out[4 * i + 1] << 8 | out[4 * i + 2] << 16 | (uint32_t)out[4 * i + 3] << 24);
    }
}

static void cmd_results(void)
{
    put_str("m-results-[");
    for (uint32_t i = 0; mtk_model.result_type != MTK_RESULT_NONE && i < mtk_model.result_count; i++) {
        int64_t q = (int64_t)result_at(i) - mtk_model.result_zero_point;
        if (i) {
            mtk_port_putc(',');
        }
        put_milli((int32_t)((q * mtk_model.result_scale_milli_q16 + 32768) >> 16));
    }
    put_line("]");
}

static void cmd_infer(uint32_t count, uint32_t warmup)
{
    uint32_t units, t0;
    put_str("m-warmup-start-");
    put_dec(warmup);
    put_str("\r\n");
    while (warmup--) {
        if (!run_model(&units)) {
            return;
        }
    }
    put_line("m-warmup-done");
    put_str("m-infer-start-");
    put_dec(count);
    put_str("\r\n");
    clock_restart();
    t0 = clock_us;
    for (uint32_t i = 0; i < count; i++) {
        if (!run_model(&units)) {
            return;
        }
    }
    put_timestamp(t0);
    put_timestamp(clock_us);
    put_line("m-infer-done");
    cmd_results();
}

static void cmd_stats(uint32_t count)
{
    uint32_t samples[MTK_STATS_MAX];
    if (count == 0 || count > MTK_STATS_MAX) {
        put_error("mtk-stats N must be 1..32", "");
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        uint32_t v, j = i;
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
        put_str("m-mtk-stats-[n:");
        put_dec(count);
        put_str(",min:");
        put_dec(samples[0]);
        put_str(",median:");
        put_dec(lo + (hi - lo) / 2);
        put_str(",max:");
        put_dec(samples[count - 1]);
        put_line("]");
    }
}

static void cmd_layers(void)
{
    if (mtk_model.layer_count == 0) {
        put_error("Built without profiling", "");
        return;
    }
    put_str("m-mtk-layers-[");
    for (uint32_t i = 0; i < mtk_model.layer_count; i++) {
        if (i) {
            mtk_port_putc(',');
        }
        put_dec(mtk_model.layer_cycles[i]);
    }
    put_line("]");
}

static void cmd_info(void)
{
    put_str("m-mtk-info-[model:");
    put_str(mtk_model.name);
    put_str(",arena:");
    put_dec(mtk_model.arena_bytes);
    put_str(",input:");
    put_dec(mtk_model.input_bytes);
    put_str(",output:");
    put_dec(mtk_model.output_bytes);
    put_str(",unit:");
    put_str(mtk_port_cycle_unit());
    put_str(",layers:");
    put_dec(mtk_model.layer_count);
    put_line("]");
}

static void put_bytes_hex(const uint8_t *bytes, uint32_t n)
{
    while (n--) {
        put_hex8(*bytes++);
    }
}

/* ---- input buffer: `db` ---- */

static uint32_t load_expected;
static uint32_t load_pos;

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static void db_hex(const char *hex)
{
    const char *p = hex;
    if (load_pos >= load_expected) {
        put_error("No load in progress: ", "db load N first");
        return;
    }
    while (*p) {
        p++;
    }
    if ((p - hex) & 1) {
        put_error("Insufficent number of hex digits", "");
        return;
    }
    for (p = hex; *p; p += 2) {
        int hi = hex_digit(p[0]), lo = hex_digit(p[1]);
        if (hi < 0 || lo < 0) {
            put_error("Invalid hex digits: ", hex);
            return;
        }
        mtk_model.input[load_pos++] = (uint8_t)(hi << 4 | lo);
        if (load_pos == load_expected) {
            put_line("m-load-done");
            return;
        }
    }
}

static void db_print(uint32_t n, uint32_t off)
{
    uint32_t end = off + n > mtk_model.input_bytes ? mtk_model.input_bytes : off + n;
    for (uint32_t i = off; i < end; i++) {
        put_str((i - off) % 16u ? "-0x" : "m-buffer-0x");
        put_hex8(mtk_model.input[i]);
        if ((i - off) % 16u == 15u || i + 1 == end) {
            put_str("\r\n");
        }
    }
}

/* ---- commands ---- */

#define MAX_TOKENS 4

/* Decimal argument `tok`, or `fallback` when absent; 0 with an error line when not a number. */
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

static int streq(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

static void cmd_db(char **tok)
{
    uint32_t a, b;
    if (!tok[1]) {
        put_error("Unknown command: ", tok[0]);
    } else if (streq(tok[1], "load")) {
        if (!parse_u32(tok[2], 0, &a)) {
            return;
        }
        if (a == 0 || a > mtk_model.input_bytes) {
            put_str("e-[Request of ");
            put_dec(a);
            put_str(" bytes must be 1..");
            put_dec(mtk_model.input_bytes);
            put_line("]");
            return;
        }
        load_expected = a;
        load_pos = 0;
        put_str("m-[Expecting ");
        put_dec(a);
        put_line(" bytes]");
    } else if (streq(tok[1], "print")) {
        if (parse_u32(tok[2], load_pos, &a) && parse_u32(tok[3], 0, &b)) {
            db_print(a, b);
        }
    } else {
        db_hex(tok[1]);
    }
}

static void execute(char *line)
{
    char *tok[MAX_TOKENS] = {0};
    int n = 0;
    uint32_t a, b;
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
        put_line("m-name-dut-[mtk]");
    } else if (streq(tok[0], "profile")) {
        put_line("m-profile-[mtk firmware 1]");
        put_str("m-model-[");
        put_str(mtk_model.name);
        put_line("]");
    } else if (streq(tok[0], "timestamp")) {
        put_timestamp(clock_now_us());
    } else if (streq(tok[0], "db")) {
        cmd_db(tok);
    } else if (streq(tok[0], "infer")) {
        if (parse_u32(tok[1], 1, &a) && parse_u32(tok[2], 0, &b)) {
            cmd_infer(a, b);
        }
    } else if (streq(tok[0], "results")) {
        cmd_results();
    } else if (streq(tok[0], "mtk-info")) {
        cmd_info();
    } else if (streq(tok[0], "mtk-out")) {
        put_str("m-mtk-out-[");
        put_bytes_hex(mtk_model.output, mtk_model.output_bytes);
        put_line("]");
    } else if (streq(tok[0], "mtk-stats")) {
        if (parse_u32(tok[1], 1, &a)) {
            cmd_stats(a);
        }
    } else if (streq(tok[0], "mtk-layers")) {
        cmd_layers();
    } else if (streq(tok[0], "mtk-exit")) {
        if (parse_u32(tok[1], 0, &a)) {
            put_str("m-mtk-exit-");
            put_dec(a);
            put_str("\r\n");
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
        put_line("m-ready");
    } else if (c >= ' ' && c <= '~') {
        if (line_len < MTK_CMD_MAX) {
            line_buf[line_len++] = c;
        } else {
            line_overflow = 1;
        }
    }
}

void mtk_core_boot(void)
{
    put_line("m-timestamp-mode-performance");
    put_line("m-init-done");
    put_line("m-ready");
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
