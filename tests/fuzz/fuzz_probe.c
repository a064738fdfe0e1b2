/* fuzz_probe.c — the compute-probe CSV reader (commscale-run's and torch_probes.py's), then every
 * row it accepted through the writer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzzinput.h"
#include "probe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FILE *sink = cs_fuzz_sink();
  const char *path = cs_fuzz_path(data, size);
  struct cs_error err = {0};
  struct cs_probe_set set;
  cs_probe_set_init(&set);
  if (cs_probe_read_file(path, &set, &err) != CS_OK && !err.msg[0]) abort();
  if (set.n && cs_probe_write_header(sink, &set, &err) == CS_OK)
    for (size_t i = 0; i < set.n; i++)
      (void)cs_probe_write_row(sink, &set.rows[i], &err);
  cs_probe_set_fini(&set);
  return 0;
}
