// TFLM (with its CMSIS-NN kernels) running one model once on mtk's bare-metal startup and port, for
// bench/tflm_harness/tflm_cycles.py: the cycle model measures the call of tflm_invoke (TFLM's Invoke()
// and nothing else), the console gets one line: "tflm STATUS FNV ARENA_USED" (FNV-1a of the int8 outputs).
#include <stddef.h>
#include <stdint.h>

#include "model_data.h"   // generated: the model's flatbuffer, its size, the arena's size
#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tensorflow/lite/schema/schema_generated.h"

extern "C" {
#include "mtk_port.h"
void mtk_core_main(void);
}

namespace {

alignas(16) uint8_t arena[TFLM_ARENA_BYTES];

using Resolver = tflite::MicroMutableOpResolver<10>;

// The int8 operators of the MLPerf Tiny models (tflm_cycles.py compiles their kernels: KERNELS).
void register_ops(Resolver& resolver) {
  resolver.AddAdd();
  resolver.AddAveragePool2D();
  resolver.AddConv2D();
  resolver.AddDepthwiseConv2D();
  resolver.AddDequantize();
  resolver.AddFullyConnected();
  resolver.AddMaxPool2D();
  resolver.AddQuantize();
  resolver.AddReshape();
  resolver.AddSoftmax();
}

void put(const char* s) {
  while (*s) mtk_port_putc(*s++);
}

void put_unsigned(uint32_t value, uint32_t base) {
  char digits[10];
  int count = 0;
  do {
    digits[count++] = "0123456789abcdef"[value % base];
    value /= base;
  } while (value);
  while (count) mtk_port_putc(digits[--count]);
}

uint32_t fnv1a(const int8_t* data, size_t size, uint32_t hash) {
  for (size_t i = 0; i < size; i++) hash = (hash ^ static_cast<uint8_t>(data[i])) * 0x01000193u;
  return hash;
}

}  // namespace

// The function the cycle model measures: one inference, from its call to its return.
extern "C" __attribute__((noinline)) TfLiteStatus tflm_invoke(tflite::MicroInterpreter* interpreter) {
  return interpreter->Invoke();
}

void mtk_core_main(void) {
  mtk_port_init();
  Resolver resolver;
  register_ops(resolver);
  tflite::MicroInterpreter interpreter(tflite::GetModel(tflm_model), resolver, arena, sizeof arena);
  TfLiteStatus status = interpreter.AllocateTensors();
  if (status == kTfLiteOk) {
    // the benchmark's fixed input, as bench/tflm_harness/tflm_cycles.py makes it for tflite-micro's reference
    for (size_t t = 0, k = 0; t < interpreter.inputs_size(); t++) {
      TfLiteTensor* input = interpreter.input(t);
      for (size_t i = 0; i < input->bytes; i++, k++) input->data.int8[i] = static_cast<int8_t>((k * 31 + 7) % 256);
    }
    status = tflm_invoke(&interpreter);
  }
  uint32_t hash = 0x811c9dc5u;
  for (size_t t = 0; status == kTfLiteOk && t < interpreter.outputs_size(); t++) {
    hash = fnv1a(interpreter.output(t)->data.int8, interpreter.output(t)->bytes, hash);
  }
  put("tflm ");
  put_unsigned(static_cast<uint32_t>(status), 10);
  put(" 0x");
  put_unsigned(hash, 16);
  put(" ");
  put_unsigned(static_cast<uint32_t>(interpreter.arena_used_bytes()), 10);
  put("\r\n");
  mtk_port_exit(status == kTfLiteOk ? 0 : 1);
}
