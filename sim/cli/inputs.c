/* inputs.c — see inputs.h. */
#include "inputs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "input.h"
#include "nccltests.h"

int cli_unique_inputs(const char *verb, const char **paths, int n) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    struct stat si, sj;
    int have = strcmp(paths[i], "-") != 0 && stat(paths[i], &si) == 0;
    int dup = -1;
    for (int j = 0; j < k && dup < 0; j++)
      if (strcmp(paths[i], paths[j]) == 0 ||
          (have && strcmp(paths[j], "-") != 0 && stat(paths[j], &sj) == 0 &&
           si.st_dev == sj.st_dev && si.st_ino == sj.st_ino))
        dup = j;
    if (dup < 0)
      paths[k++] = paths[i];
    else if (strcmp(paths[i], paths[dup]) == 0)
      fprintf(stderr, "commscale %s: warning: %s given twice: read once\n", verb, paths[i]);
    else
      fprintf(stderr, "commscale %s: warning: %s is the same file as %s: read once\n", verb,
              paths[i], paths[dup]);
  }
  return k;
}

enum cs_status cli_read_measurements(const char *path, struct cs_meas_set *set,
                                     struct cs_error *err) {
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
