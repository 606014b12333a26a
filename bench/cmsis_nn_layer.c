/*
 * cmsis_nn_layer.c - one int8 or 16x8 layer through CMSIS-NN's own function, timed as mtk's firmware
 * times a model (bench/layer_compare.py builds it with mtk's bare-metal startup and port for a QEMU board).
 *
 * The layer comes from -D flags: LAYER_CONV / LAYER_DEPTHWISE / LAYER_FC / LAYER_TCONV / LAYER_AVGPOOL /
 * LAYER_MAXPOOL / LAYER_ADD / LAYER_MUL / LAYER_SOFTMAX, S16 (int16 activations: the 16x8 kernels, int64 bias),
 * IN_H IN_W IN_C, OUT_H OUT_W OUT_C, K_H K_W, STRIDE_H STRIDE_W, DIL_H DIL_W, PAD_H PAD_W (TFLM's
 * ComputePaddingHeightWidth), PAD_AFTER_H PAD_AFTER_W (the padding after: a transpose conv's padding_offsets);
 * SOFTMAX_MULT SOFTMAX_SHIFT SOFTMAX_DIFF_MIN (TFLM's CalculateSoftmaxParams of the model's input scale: rows of
 * IN_C values, IN_H * IN_W of them).
 * Calls as TFLM's cmsis_nn kernels make them (tensorflow/lite/micro/kernels/cmsis_nn/conv.cc,
 * depthwise_conv.cc, fully_connected.cc, transpose_conv.cc, pooling.cc, add.cc, mul.cc, softmax.cc; ADD and MUL without
 * broadcasting: TFLM's broadcast ADD and MUL are its reference kernels, not CMSIS-NN): the get_buffer_size in
 * "Prepare", kernel sums
 * (arm_vector_sum_s8) once in "Prepare" when the int8 FC asks for a buffer, then only the kernel call is
 * counted. Data, zero points and requantization are random; CMSIS-NN's instruction count does not
 * depend on them (but SOFTMAX's: it skips the values below diff_min). Prints `cmsis-nn <instructions> <status>`.
 */
#include <stdint.h>

#include "arm_nnfunctions.h"
#include "mtk_core.h"
#include "mtk_port.h"

#define IN_SIZE (IN_H * IN_W * IN_C)
#define OUT_SIZE (OUT_H * OUT_W * OUT_C)
#if defined(LAYER_DEPTHWISE)
#define W_SIZE (K_H * K_W * OUT_C)
#elif defined(LAYER_CONV) || defined(LAYER_FC) || defined(LAYER_TCONV)
#define W_SIZE (OUT_C * K_H * K_W * IN_C)
#else
#define W_SIZE 1 /* pools, ADD, MUL and SOFTMAX have no weights */
#endif
#ifndef SCRATCH_BYTES /* layer_compare.py passes less on boards with little RAM (microbit: 16 KB) */
#define SCRATCH_BYTES (64 * 1024)
#endif

#if defined(S16)
typedef int16_t act_t;
typedef int64_t bias_t;
#define ADD_LEFT_SHIFT 15 /* TFLM's add.cc: 15 for int16, 20 for int8 */
#else
typedef int8_t act_t;
typedef int32_t bias_t;
#define ADD_LEFT_SHIFT 20
#endif

static act_t input[IN_SIZE];
static act_t input2[IN_SIZE];
static int8_t weights[W_SIZE];
static bias_t bias[OUT_C];
static int32_t multiplier[OUT_C];
static int32_t shift[OUT_C];
static act_t output[OUT_SIZE];
static int32_t scratch[SCRATCH_BYTES / 4];
#if defined(LAYER_TCONV)
static int8_t reversed_weights[W_SIZE]; /* the transpose conv's second buffer: its filter mirrored */
#endif

static uint32_t seed = 12345u;

static uint32_t next_random(void)
{
    seed = seed * 1664525u + 1013904223u;
    return seed >> 8;
}

static void fill_random(void)
{
    for (int i = 0; i < IN_SIZE; i++) {
        input[i] = (act_t)next_random();
        input2[i] = (act_t)next_random();
    }
    for (int i = 0; i < W_SIZE; i++) {
        weights[i] = (int8_t)(next_random() % 255u) - 127; /* symmetric, as TFLite's */
    }
    for (int i = 0; i < OUT_C; i++) {
        bias[i] = (int32_t)(next_random() % 20001u) - 10000;
        multiplier[i] = (int32_t)(0x40000000u + next_random() % 0x3FFFFFFFu);
        shift[i] = -(int32_t)(6u + next_random() % 6u);
    }
}

static void put_dec(uint32_t n)
{
    char digits[10];
    int count = 0;
    do {
        digits[count++] = (char)('0' + n % 10u);
        n /= 10u;
    } while (n);
    while (count) {
        mtk_port_putc(digits[--count]);
    }
}

void mtk_core_main(void)
{
    const cmsis_nn_dims input_dims = {1, IN_H, IN_W, IN_C};
    const cmsis_nn_dims output_dims = {1, OUT_H, OUT_W, OUT_C};
    const cmsis_nn_dims bias_dims = {1, 1, 1, OUT_C};
#if defined(S16)
    const cmsis_nn_activation activation = {-32768, 32767};
    const int32_t input_offset = 0, output_offset = 0; /* TFLM: int16 zero points are 0 */
#else
    const cmsis_nn_activation activation = {-128, 127};
    const int32_t input_offset = 7, output_offset = -3;
#endif
    cmsis_nn_context ctx = {scratch, 0};
    arm_cmsis_nn_status status;
    int32_t buffer_bytes = 0;
    uint32_t count;

    (void)input_offset;
    (void)output_offset;
    (void)bias_dims;
    mtk_port_init();
    fill_random();
#if defined(LAYER_CONV)
    const cmsis_nn_dims filter_dims = {OUT_C, K_H, K_W, IN_C};
    const cmsis_nn_conv_params params = {input_offset, output_offset, {STRIDE_W, STRIDE_H}, {PAD_W, PAD_H},
                                         {DIL_W, DIL_H}, activation};
    const cmsis_nn_per_channel_quant_params quant = {multiplier, shift};
#if defined(S16)
    const cmsis_nn_bias_data bias_data = {bias, false};
    buffer_bytes = arm_convolve_wrapper_s16_get_buffer_size(&params, &input_dims, &filter_dims, &output_dims);
#else
    buffer_bytes = arm_convolve_wrapper_s8_get_buffer_size(&params, &input_dims, &filter_dims, &output_dims);
#endif
#elif defined(LAYER_DEPTHWISE)
    const cmsis_nn_dims filter_dims = {1, K_H, K_W, OUT_C};
    const cmsis_nn_dw_conv_params params = {input_offset, output_offset, OUT_C / IN_C, {STRIDE_W, STRIDE_H},
                                            {PAD_W, PAD_H}, {DIL_W, DIL_H}, activation};
    const cmsis_nn_per_channel_quant_params quant = {multiplier, shift};
#if defined(S16)
    buffer_bytes = arm_depthwise_conv_wrapper_s16_get_buffer_size(&params, &input_dims, &filter_dims, &output_dims);
#else
    buffer_bytes = arm_depthwise_conv_wrapper_s8_get_buffer_size(&params, &input_dims, &filter_dims, &output_dims);
#endif
#elif defined(LAYER_FC)
    const cmsis_nn_dims filter_dims = {IN_SIZE, 1, 1, OUT_C};
    const cmsis_nn_fc_params params = {input_offset, 0, output_offset, activation};
#if defined(S16)
    const cmsis_nn_per_tensor_quant_params quant = {multiplier[0], shift[0]};
    buffer_bytes = arm_fully_connected_s16_get_buffer_size(&filter_dims);
#else
    const cmsis_nn_quant_params quant = {multiplier, shift, 0};
    buffer_bytes = arm_fully_connected_s8_get_buffer_size(&filter_dims);
#endif
#elif defined(LAYER_TCONV) && !defined(S16)
    const cmsis_nn_dims filter_dims = {OUT_C, K_H, K_W, IN_C};
    const cmsis_nn_transpose_conv_params params = {input_offset, output_offset, {STRIDE_W, STRIDE_H}, {PAD_W, PAD_H},
                                                   {PAD_AFTER_W, PAD_AFTER_H}, {1, 1}, activation};
    const cmsis_nn_per_channel_quant_params quant = {multiplier, shift};
    const cmsis_nn_context reverse_ctx = {reversed_weights, W_SIZE};
    buffer_bytes = arm_transpose_conv_s8_get_buffer_size(&params, &input_dims, &filter_dims, &output_dims);
    if (arm_transpose_conv_s8_get_reverse_conv_buffer_size(&params, &input_dims, &filter_dims) > W_SIZE) {
        mtk_port_exit(2);
    }
#elif defined(LAYER_AVGPOOL) || defined(LAYER_MAXPOOL)
    const cmsis_nn_dims filter_dims = {1, K_H, K_W, 1};
    const cmsis_nn_pool_params params = {{STRIDE_W, STRIDE_H}, {PAD_W, PAD_H}, activation};
#if defined(LAYER_AVGPOOL) && defined(S16)
    buffer_bytes = arm_avgpool_s16_get_buffer_size(OUT_W, IN_C);
#elif defined(LAYER_AVGPOOL)
    buffer_bytes = arm_avgpool_s8_get_buffer_size(OUT_W, IN_C);
#endif
#elif !defined(LAYER_ADD) && !defined(LAYER_MUL) && !(defined(LAYER_SOFTMAX) && !defined(S16))
#error "no LAYER_CONV, _DEPTHWISE, _FC, _AVGPOOL, _MAXPOOL, _ADD, _MUL, int8 _TCONV or int8 _SOFTMAX"
#endif
    if (buffer_bytes > SCRATCH_BYTES) {
        mtk_port_exit(2);
    }
    ctx.size = buffer_bytes;
#if defined(LAYER_FC) && !defined(S16)
    if (buffer_bytes > 0) { /* TFLM's Prepare (KERNELS_OPTIMIZED_FOR_SPEED): kernel sums once */
        arm_vector_sum_s8(scratch, IN_SIZE, OUT_C, weights, input_offset, 0, bias);
    }
#endif
    mtk_port_cycles_start();
#if defined(LAYER_FC) && defined(S16)
    status = arm_fully_connected_s16(&ctx, &params, &quant, &input_dims, input, &filter_dims, weights, &bias_dims,
                                     bias, &output_dims, output);
#elif defined(LAYER_FC)
    status = arm_fully_connected_wrapper_s8(&ctx, &params, &quant, &input_dims, input, &filter_dims, weights,
                                            &bias_dims, bias, &output_dims, output);
#elif defined(LAYER_CONV) && defined(S16)
    status = arm_convolve_wrapper_s16(&ctx, &params, &quant, &input_dims, input, &filter_dims, weights, &bias_dims,
                                      &bias_data, &output_dims, output);
#elif defined(LAYER_CONV)
    status = arm_convolve_wrapper_s8(&ctx, &params, &quant, &input_dims, input, &filter_dims, weights, &bias_dims,
                                     bias, &output_dims, output);
#elif defined(LAYER_TCONV)
    status = arm_transpose_conv_wrapper_s8(&ctx, &reverse_ctx, &params, &quant, &input_dims, input, &filter_dims,
                                           weights, &bias_dims, bias, &output_dims, output);
#elif defined(LAYER_DEPTHWISE) && defined(S16)
    status = arm_depthwise_conv_wrapper_s16(&ctx, &params, &quant, &input_dims, input, &filter_dims, weights,
                                            &bias_dims, bias, &output_dims, output);
#elif defined(LAYER_DEPTHWISE)
    status = arm_depthwise_conv_wrapper_s8(&ctx, &params, &quant, &input_dims, input, &filter_dims, weights,
                                           &bias_dims, bias, &output_dims, output);
#elif defined(LAYER_AVGPOOL) && defined(S16)
    status = arm_avgpool_s16(&ctx, &params, &input_dims, input, &filter_dims, &output_dims, output);
#elif defined(LAYER_AVGPOOL)
    status = arm_avgpool_s8(&ctx, &params, &input_dims, input, &filter_dims, &output_dims, output);
#elif defined(LAYER_MAXPOOL) && defined(S16)
    status = arm_max_pool_s16(&ctx, &params, &input_dims, input, &filter_dims, &output_dims, output);
#elif defined(LAYER_MAXPOOL)
    status = arm_max_pool_s8(&ctx, &params, &input_dims, input, &filter_dims, &output_dims, output);
#elif defined(LAYER_SOFTMAX)
    arm_softmax_s8(input, IN_H * IN_W, IN_C, SOFTMAX_MULT, SOFTMAX_SHIFT, SOFTMAX_DIFF_MIN, output);
    status = ARM_CMSIS_NN_SUCCESS;
#elif defined(LAYER_MUL) && defined(S16)
    status = arm_elementwise_mul_s16(input, input2, -input_offset, -input_offset, output, output_offset,
                                     multiplier[0], shift[0], activation.min, activation.max, IN_SIZE);
#elif defined(LAYER_MUL)
    status = arm_elementwise_mul_s8(input, input2, -input_offset, -input_offset, output, output_offset,
                                    multiplier[0], shift[0], activation.min, activation.max, IN_SIZE);
#elif defined(S16)
    status = arm_elementwise_add_s16(input, input2, input_offset, multiplier[0], shift[0], -input_offset,
                                     multiplier[1 % OUT_C], shift[1 % OUT_C], ADD_LEFT_SHIFT, output, output_offset,
                                     multiplier[0], shift[0], activation.min, activation.max, IN_SIZE);
#else
    status = arm_elementwise_add_s8(input, input2, input_offset, multiplier[0], shift[0], -input_offset,
                                    multiplier[1 % OUT_C], shift[1 % OUT_C], ADD_LEFT_SHIFT, output, output_offset,
                                    multiplier[0], shift[0], activation.min, activation.max, IN_SIZE);
#endif
    count = mtk_port_cycles();
    for (const char *s = "cmsis-nn "; *s; s++) {
        mtk_port_putc(*s);
    }
    put_dec(count);
    mtk_port_putc(' ');
    put_dec((uint32_t)-status);
    mtk_port_putc('\r');
    mtk_port_putc('\n');
    mtk_port_exit(status == ARM_CMSIS_NN_SUCCESS ? 0 : 1);
}
