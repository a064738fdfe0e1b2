/* fuzz_gpu.c — GPU specification YAML. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzzinput.h"
#include "gpu.h"
#include "plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = cs_fuzz_string(data, size);
  struct cs_error err = {0};
  struct cs_gpu g;
  enum cs_status st = cs_gpu_load_string(text, "fuzz.yaml", &g, &err);
  if (st != CS_OK && !err.msg[0]) abort();
  if (st == CS_OK)
    for (int prec = CS_PREC_FP32; prec <= CS_PREC_FP8; prec++)
      (void)cs_gpu_peak(&g, prec);
  free(text);
  return 0;
}
