/* fuzz_steps.c — the steps file of `fit --steps` and the framework logs it names. The first byte
 * picks what the rest is: even, the steps YAML itself (its relative paths resolve beside the
 * memfd, so bundled names reach the loaders); odd, a log in one of the three formats (torch,
 * megatron, deepspeed; byte / 2 % 3), named by a fixed steps file over the bundled GPT 1.3B
 * workload. Every input must end in CS_OK with positive finite steps or a located error. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzzinput.h"
#include "stepfit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The steps file naming log in format (rewritten when the format changes). */
static const char *steps_for(int format, const char *log) {
  static const char *names[3] = {"torch", "megatron", "deepspeed"};
  static int written = -1;
  const char *path = cs_fuzz_out("steps.yaml");
  if (written != format) {
    FILE *f = fopen(path, "w");
    if (f == NULL) abort();
    fprintf(f,
            "version: 1\ndefaults: {workload: %s/tests/data/h200x2-steps/gpt-1b.yaml, gpu: h200}\n"
            "steps:\n  - {topology: h200x2, gpus: 2, log: %s, format: %s, "
            "plan: \"dp=2,mbs=8,gbs=16\"}\n",
            CS_FUZZ_SOURCE_DIR, log, names[format]);
    if (fclose(f) != 0) abort();
    written = format;
  }
  return path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  const char *path = cs_fuzz_path(data + 1, size - 1);
  if (data[0] & 1) path = steps_for(data[0] / 2 % 3, path);
  struct cs_error err = {0};
  struct cs_steps *s = NULL;
  enum cs_status st = cs_steps_load(path, "/proc/self/exe", &s, &err);
  if (st != CS_OK && !err.msg[0]) abort();
  if (st == CS_OK) {
    for (size_t i = 0; i < cs_steps_count(s); i++) {
      double m = cs_steps_measured(s, i);
      if (!(m > 0) || !isfinite(m)) abort();
      (void)cs_steps_name(s, i);
    }
    cs_steps_free(s);
  }
  return 0;
}
