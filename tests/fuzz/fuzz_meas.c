/* fuzz_meas.c — the measurements CSV reader, then every row it accepted through the writer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzzinput.h"
#include "meas.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FILE *sink = cs_fuzz_sink();
  const char *path = cs_fuzz_path(data, size);
  struct cs_error err = {0};
  struct cs_meas_set set;
  cs_meas_set_init(&set);
  if (cs_meas_read_file(path, &set, &err) != CS_OK && !err.msg[0]) abort();
  if (set.n && cs_meas_write_header(sink, &set, &err) == CS_OK)
    for (size_t i = 0; i < set.n; i++)
      (void)cs_meas_write_row(sink, &set.rows[i], &err);
  cs_meas_set_fini(&set);
  return 0;
}
