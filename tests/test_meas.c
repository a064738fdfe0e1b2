/* test_meas.c — the measurements CSV: round trip, derived bandwidths, and every rejection. */
#include <math.h>
#include <string.h>

#include "meas.h"
#include "testutil.h"

static struct cs_meas_row sample(void) {
  struct cs_meas_row r;
  memset(&r, 0, sizeof r);
  r.coll = CS_COLL_ALL_REDUCE;
  r.algo = CS_ALGO_RING;
  r.proto = CS_PROTO_SIMPLE;
  strcpy(r.dtype, "float");
  r.ranks = 8, r.nodes = 2, r.gpus_per_node = 4;
  r.bytes = 1073741824.0;
  r.time_us = 3289.17;
  r.time_min_us = 3200;
  r.time_max_us = NAN;
  r.trials = 5;
  r.launch = CS_LAUNCH_THREAD;
  strcpy(r.config, "NCCL_MAX_NCHANNELS=4;NCCL_MIN_NCHANNELS=4");
  strcpy(r.source, "a,b \"quoted\".log:12");
  cs_meas_row_derive(&r);
  return r;
}

static void derive(void **state) {
  (void)state;
  struct cs_meas_row r = sample();
  /* algbw = 1 GiB / 3289.17 us; busbw for 8-rank all_reduce = algbw * 2*7/8 */
  assert_close(r.algbw_GBps, 1073741824.0 / 3289.17e3, 1e-12);
  assert_close(r.busbw_GBps, r.algbw_GBps * 14.0 / 8.0, 1e-12);
}

static void round_trip(void **state) {
  (void)state;
  struct cs_meas_set set;
  cs_meas_set_init(&set);
  struct cs_meas_row r = sample();
  assert_int_equal(cs_meas_set_push(&set, &r, NULL), CS_OK);
  r.coll = CS_COLL_ALL_GATHER;
  r.algo = CS_ALGO_AUTO;
  r.proto = CS_PROTO_AUTO;
  r.config[0] = '\0';
  assert_int_equal(cs_meas_set_push(&set, &r, NULL), CS_OK);
  assert_int_equal(cs_meas_set_meta(&set, "gpu", "NVIDIA H200", NULL), CS_OK);
  char path[512];
  cs_test_tmp("meas_rt.csv", path, sizeof path);
  struct cs_error err = {0};
  assert_int_equal(cs_meas_write_file(path, &set, &err), CS_OK);

  struct cs_meas_set back;
  cs_meas_set_init(&back);
  assert_int_equal(cs_meas_read_file(path, &back, &err), CS_OK);
  assert_int_equal(back.n, 2);
  assert_string_equal(cs_meas_get_meta(&back, "gpu"), "NVIDIA H200");
  assert_int_equal(back.rows[0].coll, CS_COLL_ALL_REDUCE);
  assert_int_equal(back.rows[0].algo, CS_ALGO_RING);
  assert_int_equal(back.rows[0].proto, CS_PROTO_SIMPLE);
  assert_int_equal(back.rows[0].ranks, 8);
  assert_int_equal(back.rows[0].launch, CS_LAUNCH_THREAD);
  assert_int_equal(back.rows[0].trials, 5);
  assert_close(back.rows[0].time_us, 3289.17, 1e-6);
  assert_close(back.rows[0].time_min_us, 3200, 1e-6);
  assert_true(isnan(back.rows[0].time_max_us));
  assert_string_equal(back.rows[0].config, "NCCL_MAX_NCHANNELS=4;NCCL_MIN_NCHANNELS=4");
  assert_string_equal(back.rows[0].source, "a,b \"quoted\".log:12");
  assert_int_equal(back.rows[1].algo, CS_ALGO_AUTO);
  assert_string_equal(back.rows[1].config, "");
  cs_meas_set_fini(&back);
  cs_meas_set_fini(&set);
}

/* Each bad file must fail with a message naming path:line:col and the expected thing. */
static void rejects(void **state) {
  (void)state;
  static const struct {
    const char *body;
    const char *expect;
  } cases[] = {
      {"not a csv\n", "not a commscale measurements file"},
      {CS_MEAS_MAGIC "\n# gpu: x\n", "expected the CSV header"},
      {CS_MEAS_MAGIC "\ncollective,algorithm\n", "column \"protocol\""},
      {CS_MEAS_MAGIC "\n" CS_MEAS_HEADER
                     "\nall_smoosh,auto,auto,float,2,1,2,8,15,,,,0,0,0,thread,,x\n",
       ":3:1: column collective"},
      {CS_MEAS_MAGIC "\n" CS_MEAS_HEADER
                     "\nall_reduce,auto,auto,float,2,1,2,8,nan,,,,0,0,0,thread,,x\n",
       "column time_us"},
      {CS_MEAS_MAGIC "\n" CS_MEAS_HEADER
                     "\nall_reduce,auto,auto,float,2,1,2,8,-3,,,,0,0,0,thread,,x\n",
       "column time_us"},
      {CS_MEAS_MAGIC "\n" CS_MEAS_HEADER
                     "\nall_reduce,auto,auto,float,3,1,2,8,3,,,,0,0,0,thread,,x\n",
       "ranks = nodes x gpus_per_node"},
      {CS_MEAS_MAGIC "\n" CS_MEAS_HEADER "\nall_reduce,auto,auto,float,2,1,2,8\n",
       "expected 18 fields, found 8"},
      {CS_MEAS_MAGIC "\n" CS_MEAS_HEADER
                     "\nall_reduce,auto,auto,float,2,1,2,1e30,3,,,,0,0,0,thread,,x\n",
       "column bytes"},
      {CS_MEAS_MAGIC "\n" CS_MEAS_HEADER
                     "\nall_reduce,auto,auto,float,2,1,2,8,3,,,,0,0,0,thread,,\"x\n",
       "closing double quote"},
  };
  char path[512];
  cs_test_tmp("meas_bad.csv", path, sizeof path);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cs_test_write_file(path, cases[i].body);
    struct cs_meas_set set;
    cs_meas_set_init(&set);
    struct cs_error err = {0};
    enum cs_status st = cs_meas_read_file(path, &set, &err);
    assert_int_not_equal(st, CS_OK);
    if (strstr(err.msg, cases[i].expect) == NULL)
      fail_msg("case %zu: message \"%s\" lacks \"%s\"", i, err.msg, cases[i].expect);
    assert_non_null(strstr(err.msg, path));
    cs_meas_set_fini(&set);
  }
  struct cs_meas_set set;
  cs_meas_set_init(&set);
  struct cs_error err = {0};
  assert_int_equal(cs_meas_read_file("/nonexistent/x.csv", &set, &err), CS_ERR_IO);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(derive), cmocka_unit_test(round_trip),
                                     cmocka_unit_test(rejects)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
