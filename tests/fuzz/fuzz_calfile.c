/* fuzz_calfile.c — calibration.yaml. A file that reads must write back and read again (the
 * writer never produces what the reader rejects, e.g. a NaN). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "calfile.h"
#include "fuzzinput.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = cs_fuzz_path(data, size);
  struct cs_error err = {0};
  struct cs_cal cal;
  cs_cal_init(&cal);
  enum cs_status st = cs_calfile_read(path, &cal, &err);
  if (st != CS_OK && !err.msg[0]) abort();
  if (st == CS_OK) {
    const char *out = cs_fuzz_out("cal.yaml");
    if (cs_calfile_write(out, &cal, &err) != CS_OK) abort();
    struct cs_cal back;
    cs_cal_init(&back);
    if (cs_calfile_read(out, &back, &err) != CS_OK) {
      fprintf(stderr, "round trip failed: %s\n", err.msg);
      abort();
    }
    cs_cal_fini(&back);
  }
  cs_cal_fini(&cal);
  return 0;
}
