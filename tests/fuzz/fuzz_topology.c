/* fuzz_topology.c — topology YAML. A topology that loads must dump to a file that loads again. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzzinput.h"
#include "topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = cs_fuzz_string(data, size);
  struct cs_error err = {0};
  static struct cs_topology t, back;
  enum cs_status st = cs_topo_load_string(text, "fuzz.yaml", &t, &err);
  if (st != CS_OK && !err.msg[0]) abort();
  if (st == CS_OK) {
    char *dump = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&dump, &len);
    if (!f) abort();
    cs_topo_dump(f, &t);
    fclose(f);
    if (cs_topo_load_string(dump, "dump.yaml", &back, &err) != CS_OK) {
      fprintf(stderr, "dump does not load again: %s\n%s", err.msg, dump);
      abort();
    }
    free(dump);
  }
  free(text);
  return 0;
}
