/* fuzz_scenario.c — a report scenario file (sim/scenarios, docs/scenario.md): read and checked,
 * its workload, GPU and topology named from the bundled data; nothing is run or written. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzzinput.h"
#include "report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static struct cs_report_scenario s; /* large: not on the stack */
  const char *path = cs_fuzz_path(data, size);
  struct cs_error err = {0};
  if (cs_report_load(path, NULL, &s, &err) != CS_OK && !err.msg[0]) abort();
  return 0;
}
