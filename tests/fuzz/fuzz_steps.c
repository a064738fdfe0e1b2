/* fuzz_steps.c — the steps file of `commscale fit --steps` (YAML entries naming workloads,
 * GPUs, topologies, calibrations and framework logs), loaded from a path; every entry of a file
 * that loads has a name and a positive finite measured step. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzzinput.h"
#include "stepfit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = cs_fuzz_path(data, size);
  struct cs_error err = {0};
  struct cs_steps *s = NULL;
  enum cs_status st = cs_steps_load(path, "/proc/self/exe", &s, &err);
  if (st != CS_OK && !err.msg[0]) abort();
  if (st == CS_OK) {
    for (size_t i = 0; i < cs_steps_count(s); i++) {
      double m = cs_steps_measured(s, i);
      if (cs_steps_name(s, i) == NULL || !(m > 0) || !isfinite(m)) abort();
    }
    cs_steps_free(s);
  }
  return 0;
}
