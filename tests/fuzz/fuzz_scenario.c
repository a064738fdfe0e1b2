/* fuzz_scenario.c — the scenario file of `commscale report` (one schema table; workload, GPU,
 * topology, calibration and prices it names are loaded and checked), loaded from a path. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzzinput.h"
#include "report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = cs_fuzz_path(data, size);
  struct cs_error err = {0};
  static struct cs_report_scenario s; /* 20 KB of fixed buffers */
  enum cs_status st = cs_report_load(path, "/proc/self/exe", &s, &err);
  if (st != CS_OK && !err.msg[0]) abort();
  return 0;
}
