/*
 * mtk_model.h - the compiled model as the firmware core sees it.
 *
 * A glue file rendered from the compiled model's metadata.json (model_glue.c.j2) defines
 * `mtk_model`. Inputs are one byte buffer: every input tensor in metadata order, each
 * starting at a multiple of MTK_TENSOR_ALIGN; outputs likewise.
 */
#ifndef MTK_MODEL_H
#define MTK_MODEL_H

#include <stdint.h>

#define MTK_TENSOR_ALIGN 16

/* Element type of the first output, for `results%`. */
enum mtk_result_type { MTK_RESULT_NONE, MTK_RESULT_INT8, MTK_RESULT_UINT8, MTK_RESULT_INT16, MTK_RESULT_INT32 };

typedef struct {
    const char *name;             /* model file name */
    uint8_t *input;
    uint32_t input_bytes;
    const uint8_t *output;
    uint32_t output_bytes;
    uint32_t arena_bytes;         /* static workspace the compiler planned */
    uint8_t result_type;          /* enum mtk_result_type */
    uint32_t result_count;        /* elements of the first output */
    int32_t result_zero_point;
    int32_t result_scale_milli_q16; /* round(scale * 1000 * 65536): value in thousandths, fixed point */
    uint32_t *layer_cycles;       /* one slot per op when built with MTK_PROFILE, else NULL */
    uint32_t layer_count;
    int32_t (*run)(void);         /* 0 on success */
} mtk_model_t;

extern const mtk_model_t mtk_model;

#endif
