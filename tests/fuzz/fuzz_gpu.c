/* fuzz_gpu.c — GPU specification YAML, then a layer's time on it (a GPU that loads must price a
 * layer: finite, non-negative times under any accepted efficiencies, host time and host split). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compute.h"
#include "fuzzinput.h"
#include "gpu.h"
#include "plan.h"
#include "workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = cs_fuzz_string(data, size);
  struct cs_error err = {0};
  struct cs_gpu g;
  enum cs_status st = cs_gpu_load_string(text, "fuzz.yaml", &g, &err);
  if (st != CS_OK && !err.msg[0]) abort();
  if (st == CS_OK) {
    for (int prec = CS_PREC_FP32; prec <= CS_PREC_FP8; prec++)
      (void)cs_gpu_peak(&g, prec);
    struct cs_compute c;
    if (cs_compute_init(&c, &g, CS_PREC_BF16, &err) == CS_OK) {
      /* one product and one memory kernel of each pass, as a block holds them */
      struct cs_layer_cost lc;
      memset(&lc, 0, sizeof lc);
      lc.nops = 3;
      lc.op[0] = (struct cs_op){
          "fc1", CS_OP_GEMM, 0, 0, 4096, 4096, 1024, 1, 2.0 * 4096 * 4096 * 1024, 0, 0, CS_OP_BOTH};
      lc.op[1] = (struct cs_op){"norm1", CS_OP_MEMORY, 0, 0, 0, 0, 0, 1, 0, 1e7, 0, CS_OP_BOTH};
      lc.op[2] = (struct cs_op){"act_grad_cast", CS_OP_MEMORY, 0, 0, 0, 0, 0, 1, 0, 1e7, 0,
                                CS_OP_BWD_ONLY};
      lc.fwd_flops = lc.op[0].flops;
      lc.bwd_flops = 2 * lc.fwd_flops;
      struct cs_layer_time t;
      cs_compute_layer_time(&c, &lc, &t);
      if (!(isfinite(t.fwd) && isfinite(t.bwd) && t.fwd >= 0 && t.bwd >= 0)) abort();
    }
  }
  free(text);
  return 0;
}
