/* testutil.c — see testutil.h. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void cs_test_assert_close(double actual, double expected, double rel, const char *expr,
                          const char *file, int line) {
  double tol = expected == 0 ? rel : rel * fabs(expected);
  if (!(fabs(actual - expected) <= tol)) {
    print_error("%s:%d: %s = %.9g, expected %.9g within %.3g%%\n", file, line, expr, actual,
                expected, rel * 100);
    _fail(file, line);
  }
}

const char *cs_test_tmp(const char *name, char *buf, size_t len) {
  snprintf(buf, len, "%s/%s", CS_TEST_TMP, name);
  return buf;
}

void cs_test_write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

char *cs_test_read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  size_t cap = 4096, n = 0, got;
  char *buf = malloc(cap);
  assert_non_null(buf);
  while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    if (n + 1 == cap) {
      cap *= 2;
      buf = realloc(buf, cap);
      assert_non_null(buf);
    }
  }
  fclose(f);
  buf[n] = '\0';
  return buf;
}
