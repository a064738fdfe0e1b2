/* test_units.c — quantities with units, nccl-tests sizes and lists, against hand-derived values. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input.h"
#include "testutil.h"
#include "units.h"

static void quantities(void **state) {
  (void)state;
  double v;
  assert_int_equal(cs_units_parse_quantity("400Gbps", CS_UNIT_BANDWIDTH, &v, NULL), CS_OK);
  assert_close(v, 50e9, 1e-12); /* 400 Gb/s = 50 GB/s */
  assert_int_equal(cs_units_parse_quantity("50GBps", CS_UNIT_BANDWIDTH, &v, NULL), CS_OK);
  assert_close(v, 50e9, 1e-12);
  assert_int_equal(cs_units_parse_quantity("2.5us", CS_UNIT_TIME, &v, NULL), CS_OK);
  assert_close(v, 2.5e-6, 1e-12);
  assert_int_equal(cs_units_parse_quantity("80GiB", CS_UNIT_BYTES, &v, NULL), CS_OK);
  assert_close(v, 80.0 * 1073741824.0, 1e-12);
  assert_int_equal(cs_units_parse_quantity("80GB", CS_UNIT_BYTES, &v, NULL), CS_OK);
  assert_close(v, 80e9, 1e-12);
  assert_int_equal(cs_units_parse_quantity("989TFLOPS", CS_UNIT_FLOPS, &v, NULL), CS_OK);
  assert_close(v, 989e12, 1e-12);
}

static void quantity_errors(void **state) {
  (void)state;
  double v;
  struct cs_error err = {0};
  assert_int_equal(cs_units_parse_quantity("400", CS_UNIT_BANDWIDTH, &v, &err), CS_ERR_PARSE);
  assert_non_null(strstr(err.msg, "no unit"));
  assert_int_equal(cs_units_parse_quantity("400furlongs", CS_UNIT_BANDWIDTH, &v, &err),
                   CS_ERR_PARSE);
  assert_int_equal(cs_units_parse_quantity("-1us", CS_UNIT_TIME, &v, &err), CS_ERR_PARSE);
  assert_int_equal(cs_units_parse_quantity("nanus", CS_UNIT_TIME, &v, &err), CS_ERR_PARSE);
  assert_int_equal(cs_units_parse_quantity("1e999us", CS_UNIT_TIME, &v, &err), CS_ERR_PARSE);
  assert_int_equal(cs_units_parse_quantity("", CS_UNIT_TIME, &v, &err), CS_ERR_PARSE);
  assert_int_equal(cs_units_parse_quantity(NULL, CS_UNIT_TIME, &v, &err), CS_ERR_PARSE);
  /* bits vs bytes are case-sensitive: GBps is bytes, Gbps bits */
  assert_int_equal(cs_units_parse_quantity("8Gbps", CS_UNIT_BANDWIDTH, &v, NULL), CS_OK);
  assert_close(v, 1e9, 1e-12);
}

static void sizes(void **state) {
  (void)state;
  double b;
  assert_int_equal(cs_units_parse_size("8", &b, NULL), CS_OK);
  assert_close(b, 8, 0);
  assert_int_equal(cs_units_parse_size("64K", &b, NULL), CS_OK);
  assert_close(b, 65536, 0);
  assert_int_equal(cs_units_parse_size("8g", &b, NULL), CS_OK);
  assert_close(b, 8589934592.0, 0);
  assert_int_equal(cs_units_parse_size("1MB", &b, NULL), CS_OK);
  assert_close(b, 1e6, 0);
  assert_int_equal(cs_units_parse_size("1MiB", &b, NULL), CS_OK);
  assert_close(b, 1048576, 0);
  struct cs_error err = {0};
  assert_int_equal(cs_units_parse_size("1.5", &b, &err), CS_ERR_PARSE);
  assert_int_equal(cs_units_parse_size("12X", &b, &err), CS_ERR_PARSE);
  assert_int_equal(cs_units_parse_size("4096T", &b, &err), CS_ERR_RANGE);
}

static void size_lists(void **state) {
  (void)state;
  double *s = NULL;
  size_t n = 0;
  assert_int_equal(cs_units_parse_sizes("8:8G", &s, &n, NULL), CS_OK);
  assert_int_equal(n, 31); /* 2^3 .. 2^33 */
  assert_close(s[0], 8, 0);
  assert_close(s[30], 8589934592.0, 0);
  free(s);
  assert_int_equal(cs_units_parse_sizes("1K,1M:4M:4,7", &s, &n, NULL), CS_OK);
  assert_int_equal(n, 4);
  assert_close(s[1], 1048576, 0);
  assert_close(s[2], 4194304, 0);
  assert_close(s[3], 7, 0);
  free(s);
  struct cs_error err = {0};
  assert_int_equal(cs_units_parse_sizes("8G:8", &s, &n, &err), CS_ERR_PARSE);
  assert_int_equal(cs_units_parse_sizes("", &s, &n, &err), CS_ERR_PARSE);
  assert_int_equal(cs_units_parse_sizes("1:1T:1", &s, &n, &err), CS_ERR_PARSE);
}

static void int_lists(void **state) {
  (void)state;
  long *v = NULL;
  size_t n = 0;
  assert_int_equal(cs_units_parse_ints("1,4,16,64,400", 1, 100000, &v, &n, NULL), CS_OK);
  assert_int_equal(n, 5);
  assert_int_equal(v[4], 400);
  free(v);
  assert_int_equal(cs_units_parse_ints("1:400", 1, 100000, &v, &n, NULL), CS_OK);
  assert_int_equal(n, 10); /* 1 2 4 ... 256 400 */
  assert_int_equal(v[8], 256);
  assert_int_equal(v[9], 400);
  free(v);
  struct cs_error err = {0};
  assert_int_equal(cs_units_parse_ints("0", 1, 10, &v, &n, &err), CS_ERR_RANGE);
  assert_int_equal(cs_units_parse_ints("3x", 1, 10, &v, &n, &err), CS_ERR_PARSE);
  /* a step and a factor; the end point always included */
  assert_int_equal(cs_units_parse_ints("50:400:+50", 1, 1000, &v, &n, NULL), CS_OK);
  assert_int_equal(n, 8);
  assert_int_equal(v[1], 100);
  assert_int_equal(v[7], 400);
  free(v);
  assert_int_equal(cs_units_parse_ints("1:400:x4", 1, 1000, &v, &n, NULL), CS_OK);
  assert_int_equal(n, 6); /* 1 4 16 64 256 400 */
  assert_int_equal(v[4], 256);
  assert_int_equal(v[5], 400);
  free(v);
  assert_int_equal(cs_units_parse_ints("10:25:+10", 1, 1000, &v, &n, NULL), CS_OK);
  assert_int_equal(n, 3); /* 10 20 25 */
  assert_int_equal(v[2], 25);
  free(v);
  assert_int_equal(cs_units_parse_ints("1:400:+0", 1, 1000, &v, &n, &err), CS_ERR_PARSE);
  assert_int_equal(cs_units_parse_ints("1:400:x1", 1, 1000, &v, &n, &err), CS_ERR_PARSE);
  /* an empty item is a typing error, not a shorter list */
  assert_int_equal(cs_units_parse_ints("1,,4", 1, 10, &v, &n, &err), CS_ERR_PARSE);
  assert_non_null(strstr(err.msg, "empty item 2"));
  assert_int_equal(cs_units_parse_ints("4,", 1, 10, &v, &n, &err), CS_ERR_PARSE);
  assert_int_equal(cs_units_parse_ints(",4", 1, 10, &v, &n, &err), CS_ERR_PARSE);
}

/* The readers' caps (input.h): a line over 1 MiB, too many lines, a document over its cap. */
static void input_caps(void **state) {
  (void)state;
  size_t big = CS_INPUT_LINE_MAX + 10;
  char *text = malloc(big + 1);
  assert_non_null(text);
  memset(text, 'x', big);
  text[big] = '\0';
  FILE *f = fmemopen(text, big, "r");
  assert_non_null(f);
  struct cs_error err = {0};
  struct cs_lines l = {.f = f, .path = "long.txt"};
  assert_int_equal(cs_lines_next(&l, &err), -2);
  assert_int_equal(l.st, CS_ERR_RANGE);
  assert_string_equal(err.msg, "long.txt:1: line longer than 1048576 bytes");
  free(l.buf);
  fclose(f);
  /* lines are counted; NUL bytes inside a line are kept */
  memcpy(text, "ab\0c\r\nd\n", 8);
  f = fmemopen(text, 8, "r");
  struct cs_lines m = {.f = f, .path = "t"};
  assert_int_equal(cs_lines_next(&m, &err), 4);
  assert_int_equal(m.buf[3], 'c');
  assert_int_equal(cs_lines_next(&m, &err), 1);
  assert_int_equal(m.line, 2);
  assert_int_equal(cs_lines_next(&m, &err), -1);
  assert_int_equal(m.st, CS_OK);
  free(m.buf);
  fclose(f);
  /* a document over its cap */
  memset(text, 'y', 100);
  f = fmemopen(text, 100, "r");
  char *doc = NULL;
  size_t len = 0;
  assert_int_equal(cs_input_read_all(f, "doc", 64, &doc, &len, &err), CS_ERR_RANGE);
  assert_string_equal(err.msg, "doc: input larger than 64 bytes");
  rewind(f);
  assert_int_equal(cs_input_read_all(f, "doc", 100, &doc, &len, &err), CS_OK);
  assert_int_equal(len, 100);
  free(doc);
  fclose(f);
  free(text);
  /* an endless run of empty lines stops at the line cap */
  size_t nl = (size_t)CS_INPUT_LINES_MAX + 1;
  char *lines = malloc(nl);
  assert_non_null(lines);
  memset(lines, '\n', nl);
  f = fmemopen(lines, nl, "r");
  struct cs_lines e = {.f = f, .path = "empty"};
  long r;
  while ((r = cs_lines_next(&e, &err)) >= 0) {
  }
  assert_int_equal(r, -2);
  assert_string_equal(err.msg, "empty: more than 4194304 lines");
  free(e.buf);
  fclose(f);
  free(lines);
}

static void formatting(void **state) {
  (void)state;
  char buf[32];
  cs_units_format_size(65536, buf, sizeof buf);
  assert_string_equal(buf, "64K");
  cs_units_format_size(8589934592.0, buf, sizeof buf);
  assert_string_equal(buf, "8G");
  cs_units_format_size(1000, buf, sizeof buf);
  assert_string_equal(buf, "1000");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(quantities), cmocka_unit_test(quantity_errors), cmocka_unit_test(sizes),
      cmocka_unit_test(size_lists), cmocka_unit_test(int_lists),       cmocka_unit_test(formatting),
      cmocka_unit_test(input_caps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
