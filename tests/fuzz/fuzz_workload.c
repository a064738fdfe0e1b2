/* fuzz_workload.c — workload YAML, then its per-layer costs and step FLOPs under the default
 * plan (a workload that loads must be priceable). */
#include <stdint.h>
#include <stdlib.h>

#include "fuzzinput.h"
#include "plan.h"
#include "workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = cs_fuzz_string(data, size);
  struct cs_error err = {0};
  struct cs_workload *w = NULL;
  enum cs_status st = cs_workload_load_string(text, "fuzz.yaml", &w, &err);
  if (st != CS_OK && !err.msg[0]) abort();
  if (st == CS_OK) {
    struct cs_plan p;
    cs_plan_init(&p);
    (void)cs_workload_params(w);
    (void)cs_workload_active_params(w);
    if (cs_workload_check_plan(w, &p, &err) == CS_OK) {
      struct cs_layer_cost c;
      for (size_t i = 0; i < w->nlayer && i < 256; i++)
        (void)cs_workload_layer_cost(w, &p, i, &c, &err);
      double mf, hf;
      (void)cs_workload_step_flops(w, &p, &mf, &hf, &err);
    }
    cs_workload_free(w);
  }
  free(text);
  return 0;
}
