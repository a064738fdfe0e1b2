/* fuzz_units.c — quantities with units, message sizes, size lists and integer lists. A size that
 * parses must format to text that parses back to the same value. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzzinput.h"
#include "units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = cs_fuzz_string(data, size);
  struct cs_error err = {0};
  char buf[64];
  double v, back;
  for (int k = CS_UNIT_TIME; k <= CS_UNIT_FLOPS; k++)
    if (cs_units_parse_quantity(text, k, &v, &err) == CS_OK) {
      if (!isfinite(v) || v < 0) abort();
      cs_units_format_quantity(v, k, buf, sizeof buf);
    }
  if (cs_units_parse_size(text, &v, &err) == CS_OK) {
    if (!isfinite(v) || v < 0 || v != floor(v)) abort();
    cs_units_format_size(v, buf, sizeof buf);
    if (cs_units_parse_size(buf, &back, &err) != CS_OK || back != v) {
      fprintf(stderr, "size %.17g formats as \"%s\", which does not parse back\n", v, buf);
      abort();
    }
  }
  double *sizes = NULL;
  size_t n = 0;
  if (cs_units_parse_sizes(text, &sizes, &n, &err) == CS_OK) {
    if (n == 0 || n > 4096) abort();
    free(sizes);
  }
  long *vals = NULL;
  if (cs_units_parse_ints(text, 1, 1000000, &vals, &n, &err) == CS_OK) {
    if (n == 0 || n > 4096) abort();
    for (size_t i = 0; i < n; i++)
      if (vals[i] < 1 || vals[i] > 1000000) abort();
    free(vals);
  }
  free(text);
  return 0;
}
