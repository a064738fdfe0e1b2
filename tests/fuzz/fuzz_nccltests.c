/* fuzz_nccltests.c — nccl-tests logs (text and -J JSON) and NCCL's tuning table, from a file.
 * Every input must end in CS_OK or a located error, and every imported row must be finite. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzzinput.h"
#include "nccltests.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = cs_fuzz_path(data, size);
  struct cs_error err = {0};
  struct cs_meas_set set;
  cs_meas_set_init(&set);
  enum cs_status st = cs_nccltests_import(path, &set, &err);
  if (st != CS_OK && !err.msg[0]) abort();
  for (size_t i = 0; i < set.n; i++) {
    const struct cs_meas_row *r = &set.rows[i];
    if (!isfinite(r->bytes) || !isfinite(r->time_us) || !isfinite(r->algbw_GBps) ||
        !isfinite(r->busbw_GBps) || r->time_us < 0 || r->bytes < 0 || r->ranks < 1)
      abort();
  }
  cs_meas_set_fini(&set);

  static struct cs_nccl_tuning t; /* large: not on the stack */
  struct cs_error err2 = {0};
  if (cs_nccltests_read_tuning(path, &t, &err2) == CS_OK) {
    for (int c = 0; c < CS_COLL_COUNT; c++)
      (void)cs_nccltests_tuning_time_us(&t, c, 1 << 20, NULL, NULL);
  } else if (!err2.msg[0]) {
    abort();
  }
  return 0;
}
