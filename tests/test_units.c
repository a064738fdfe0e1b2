/* test_units.c — quantities with units, nccl-tests sizes and lists, against hand-derived values. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
