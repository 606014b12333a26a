/* mtk_mlperf.c - MLPerf Tiny: what a benchmark's reference submission does with the `db` bytes and
 * how it prints its results (mlcommons/tiny benchmark/reference_submissions/<benchmark>/
 * submitter_implemented.cpp: th_load_tensor, th_results; util/quantization_helpers.h). The glue of
 * a benchmark build points its mtk_benchmark_t here; other builds link none of it (nor the float
 * arithmetic it needs). */
#include "mtk_core.h"
#include "mtk_model.h"
#include "mtk_port.h"

static float float_at(const uint8_t *p)
{
    uint32_t bits = p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
    float f;
    __builtin_memcpy(&f, &bits, sizeof f);
    return f;
}

/* std::round on a float: halves away from zero. */
static float round_half_away(float x)
{
    float whole;
    if (!(x > -8388608.0f && x < 8388608.0f)) {
        return x; /* |x| >= 2^23 is whole already (or NaN) */
    }
    whole = (float)(int32_t)x;
    if (x - whole >= 0.5f) {
        whole += 1.0f;
    } else if (x - whole <= -0.5f) {
        whole -= 1.0f;
    }
    return whole;
}

/* QuantizeFloatToInt8 of the reference submissions (util/quantization_helpers.h); NaN gives 0
 * as the float-to-int conversion does on Cortex-M. */
static int8_t quantize(float value, float scale, int32_t zero_point)
{
    float q = round_half_away(value / scale) + (float)zero_point;
    if (q != q) {
        return 0;
    }
    return (int8_t)(q < -128.0f ? -128 : q > 127.0f ? 127 : (int32_t)q);
}

/* th_load_tensor() of the benchmark's reference submission: the `db` bytes into the model input. */
void mtk_mlperf_load_tensor(const mtk_benchmark_t *b, uint32_t received)
{
    uint32_t element, count, n;
    uint8_t *input = mtk_model.input();
    element = b->wire == MTK_WIRE_FLOAT32 ? 4u : 1u;
    count = b->wire_bytes / element;
    n = received < b->wire_bytes ? received : b->wire_bytes;
    if (n != b->wire_bytes) {
        mtk_put_str("Input db has ");
        mtk_put_dec(n / element);
        mtk_put_str(" elemented, expected ");
        mtk_put_dec(count);
        mtk_put_str("\n");
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        int8_t q;
        switch (b->wire) {
        case MTK_WIRE_UINT8_SHIFTED: q = (int8_t)(b->db[i] - 128); break;
        case MTK_WIRE_FLOAT32: q = quantize(float_at(b->db + 4 * i), b->input_scale, b->input_zero_point); break;
        default: q = (int8_t)b->db[i]; break;
        }
        input[i] = (uint8_t)q;
    }
}

/* DequantizeInt8ToFloat of the reference submissions. */
static float dequantized(const mtk_benchmark_t *b, uint32_t i)
{
    return (float)((int8_t)mtk_model.output()[i] - b->output_zero_point) * b->output_scale;
}

/* ad01's score: the mean squared error of the dequantized reconstruction against the float input,
 * summed in order in single precision as the reference does (no fused multiply-add). */
__attribute__((optimize("fp-contract=off")))
static float mean_squared_error(const mtk_benchmark_t *b)
{
    float sum = 0.0f;
    for (uint32_t i = 0; i < mtk_model.result_count; i++) {
        float diff = dequantized(b, i) - float_at(b->db + 4 * i);
        sum += diff * diff;
    }
    return sum / (float)mtk_model.result_count;
}

/* printf("%0.3f", v): the exact binary value rounded half to even, as C libraries print it. */
static void put_fixed3(float v)
{
    uint32_t bits;
    uint64_t scaled, thousandths;
    int32_t exponent;
    __builtin_memcpy(&bits, &v, sizeof bits);
    exponent = (int32_t)(bits >> 23 & 0xFFu);
    if (bits >> 31) {
        mtk_port_putc('-');
    }
    if (exponent == 0xFF || exponent > 150 + 29) { /* inf, NaN, or 2^53 and beyond: no score is */
        mtk_put_str(exponent == 0xFF && bits << 9 ? "nan" : "inf");
        return;
    }
    /* |v| = mantissa * 2^(exponent - 150) */
    scaled = (uint64_t)((bits & 0x7FFFFFu) | (exponent ? 0x800000u : 0u)) * 1000u;
    exponent = (exponent ? exponent : 1) - 150;
    if (exponent >= 0) {
        thousandths = scaled << exponent;
    } else if (exponent < -40) {
        thousandths = 0; /* below 2^-6 thousandths */
    } else {
        uint64_t half = (uint64_t)1 << (-exponent - 1), rest = scaled & ((half << 1) - 1);
        thousandths = scaled >> -exponent;
        thousandths += rest > half || (rest == half && (thousandths & 1u));
    }
    mtk_put_dec((uint32_t)(thousandths / 1000u));
    mtk_port_putc('.');
    mtk_put_dec3((uint32_t)(thousandths % 1000u));
}

static void put_benchmark_value(const mtk_benchmark_t *b, float v)
{
    if (b->results_format == MTK_RESULTS_TRUNCATED) { /* kws01: "0.%d" then two "%d" digits */
        mtk_put_str("0.");
        mtk_put_int((int32_t)(v * 10.0f));
        mtk_put_int((int32_t)(v * 100.0f) % 10);
        mtk_put_int((int32_t)(v * 1000.0f) % 10);
    } else {
        put_fixed3(v);
    }
}

/* th_results() of the benchmark's reference submission. */
void mtk_mlperf_results(const mtk_benchmark_t *b)
{
    mtk_put_str("m-results-[");
    if (b->results_format == MTK_RESULTS_MSE) {
        put_fixed3(mean_squared_error(b));
    } else {
        for (uint32_t i = 0; i < mtk_model.result_count; i++) {
            put_benchmark_value(b, dequantized(b, i));
            if (i < b->results_commas) {
                mtk_port_putc(',');
            }
        }
    }
    mtk_put_line("]");
}
