/*
 * mtk_model.h - the compiled model as the firmware core sees it.
 *
 * A glue file rendered from the compiled model's metadata.json (model_glue.c.j2) defines
 * `mtk_model`. Inputs are one byte buffer: every input tensor in metadata order, each
 * starting at a multiple of MTK_TENSOR_ALIGN; outputs likewise. Both buffers are places in
 * the model's arena (tvmgen_<module>_map_inputs/outputs): a run may overwrite its inputs
 * there once the model has read them.
 */
#ifndef MTK_MODEL_H
#define MTK_MODEL_H

#include <stdint.h>

#define MTK_TENSOR_ALIGN 16

/* Element type of the first output, for `results%`. */
enum mtk_result_type { MTK_RESULT_NONE, MTK_RESULT_INT8, MTK_RESULT_UINT8, MTK_RESULT_INT16, MTK_RESULT_INT32 };

/* How an MLPerf Tiny reference submission turns the `db` bytes into the model input. */
enum mtk_wire {
    MTK_WIRE_INT8,          /* kws01: the int8 input as is */
    MTK_WIRE_UINT8_SHIFTED, /* ic01, vww01: uint8 pixels, minus 128 */
    MTK_WIRE_FLOAT32,       /* ad01: float32 features, quantized with the input's scale and zero point */
};

/* How it prints `m-results-[...]`. */
enum mtk_results_format {
    MTK_RESULTS_TRUNCATED, /* kws01: "0.%d%d%d" of the dequantized outputs, digits truncated */
    MTK_RESULTS_FIXED3,    /* ic01, vww01: "%0.3f" of the dequantized outputs */
    MTK_RESULTS_MSE,       /* ad01: "%0.3f" of the mean squared error of the output against the input */
};

/* An MLPerf Tiny benchmark as its reference submission runs it (benchmark/reference_submissions/
 * <benchmark>/submitter_implemented.cpp in mlcommons/tiny): the firmware is then a conforming DUT. */
typedef struct mtk_benchmark {
    const char *id;              /* EEMBC model id for `m-model-[...]`: kws01, ic01, vww01, ad01 */
    uint8_t *db;                 /* the `db` buffer, MAX_DB_INPUT_SIZE bytes */
    uint32_t db_capacity;
    uint32_t wire_bytes;         /* one input as the runner sends it */
    uint8_t wire;                /* enum mtk_wire */
    uint8_t results_format;      /* enum mtk_results_format */
    uint8_t results_commas;      /* leading values followed by ',' (vww01's reference prints a trailing one) */
    float input_scale;           /* the model input's and first output's quantization, as TFLM holds them */
    int32_t input_zero_point;
    float output_scale;
    int32_t output_zero_point;
    /* mtk_mlperf.c: `received` db bytes into the model input; the `m-results-[...]` line */
    void (*load_tensor)(const struct mtk_benchmark *b, uint32_t received);
    void (*put_results)(const struct mtk_benchmark *b);
} mtk_benchmark_t;

void mtk_mlperf_load_tensor(const mtk_benchmark_t *b, uint32_t received);
void mtk_mlperf_results(const mtk_benchmark_t *b);

typedef struct {
    const char *name;             /* model file name */
    uint8_t *(*input)(void);      /* the inputs' buffer */
    uint32_t input_bytes;
    const uint8_t *(*output)(void); /* the outputs' buffer */
    uint32_t output_bytes;
    uint32_t arena_bytes;         /* static workspace the compiler planned, the I/O buffers in it */
    uint8_t result_type;          /* enum mtk_result_type */
    uint32_t result_count;        /* elements of the first output */
    int32_t result_zero_point;
    int32_t result_scale_milli_q16; /* round(scale * 1000 * 65536): value in thousandths, fixed point */
    uint32_t *layer_cycles;       /* one slot per op when built with MTK_PROFILE, else NULL */
    uint32_t layer_count;
    int32_t (*run)(void);         /* 0 on success */
    const mtk_benchmark_t *benchmark; /* NULL: `db` loads the model input itself, results in thousandths */
} mtk_model_t;

extern const mtk_model_t mtk_model;

#endif
