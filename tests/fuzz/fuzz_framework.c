/* fuzz_framework.c — framework profile YAML (model/frameworks/*.yaml), then applied to the
 * default plan (a profile that loads must be usable). */
#include <stdint.h>
#include <stdlib.h>

#include "framework.h"
#include "fuzzinput.h"
#include "plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = cs_fuzz_string(data, size);
  struct cs_error err = {0};
  struct cs_framework f;
  enum cs_status st = cs_framework_load_string(text, "fuzz.yaml", &f, &err);
  if (st != CS_OK && !err.msg[0]) abort();
  if (st == CS_OK) {
    struct cs_plan p;
    cs_plan_init(&p);
    cs_framework_apply(&f, &p);
  }
  free(text);
  return 0;
}
