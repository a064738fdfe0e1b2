/* measread.c — see measread.h. */
#include "measread.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "input.h"
#include "nccltests.h"

enum cs_status cs_meas_read_any(const char *path, struct cs_meas_set *set, struct cs_error *err) {
  FILE *f = cs_input_open(path, err);
  if (f == NULL) return err ? err->status : CS_ERR_IO;
  char first[64] = {0};
  if (fgets(first, sizeof first, f) == NULL) first[0] = '\0';
  fclose(f);
  if (strncmp(first, CS_MEAS_MAGIC, strlen(CS_MEAS_MAGIC)) == 0 ||
      strncmp(first, "collective,", 11) == 0)
    return cs_meas_read_file(path, set, err);
  return cs_nccltests_import(path, set, err);
}
