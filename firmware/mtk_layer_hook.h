/* Force-included into the compiled model's sources in MTK_PROFILE builds:
 * the generated code calls MTK_LAYER_HOOK(op_index) after each op. */
#ifndef MTK_LAYER_HOOK_H
#define MTK_LAYER_HOOK_H
#include <stdint.h>
void mtk_layer_hook(uint32_t index);
#define MTK_LAYER_HOOK(index) mtk_layer_hook(index)
#endif
