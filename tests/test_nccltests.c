/* test_nccltests.c — the nccl-tests importer on the real 2xH200 logs and on hand-written edge
 * cases, NCCL's tuning table, and every rejection the importer makes.
 *
 * Expected figures are read off the logs by eye (line numbers and times quoted in comments), not
 * copied from the importer's output.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccltests.h"
#include "testutil.h"

#define H200 CS_TEST_DATA "/h200x2/"
#define EDGE CS_TEST_DATA "/nccltests/"

/* ---- helpers ------------------------------------------------------------------------------ */

static const struct cs_meas_row *find_row(const struct cs_meas_set *set, enum cs_coll coll,
                                          enum cs_algo algo, enum cs_proto proto,
                                          const char *config, double bytes, int in_place) {
  for (size_t i = 0; i < set->n; i++) {
    const struct cs_meas_row *r = &set->rows[i];
    if (r->coll == coll && r->algo == algo && r->proto == proto && strcmp(r->config, config) == 0 &&
        r->bytes == bytes && r->in_place == in_place)
      return r;
  }
  return NULL;
}

static size_t count_coll(const struct cs_meas_set *set, enum cs_coll coll) {
  size_t n = 0;
  for (size_t i = 0; i < set->n; i++)
    n += set->rows[i].coll == coll;
  return n;
}

/* Imports path, expecting status want; returns the set (caller finalises). */
static void import_expect(const char *path, enum cs_status want, struct cs_meas_set *set,
                          struct cs_error *err) {
  cs_meas_set_init(set);
  memset(err, 0, sizeof *err);
  enum cs_status st = cs_nccltests_import(path, set, err);
  if (st != want) print_error("%s: status %d, message \"%s\"\n", path, (int)st, err->msg);
  assert_int_equal(st, want);
  if (want != CS_OK) assert_int_equal(err->status, want);
}

/* Asserts that err->msg starts with "path:line:" (line 0: "path:") and contains what. */
static void assert_msg(const struct cs_error *err, const char *path, long line, const char *what) {
  char prefix[600];
  if (line > 0)
    snprintf(prefix, sizeof prefix, "%s:%ld: ", path, line);
  else
    snprintf(prefix, sizeof prefix, "%s: ", path);
  if (strncmp(err->msg, prefix, strlen(prefix)) != 0 || strstr(err->msg, what) == NULL) {
    print_error("message \"%s\"\nexpected prefix \"%s\" and \"%s\"\n", err->msg, prefix, what);
    fail();
  }
  assert_null(strchr(err->msg, '\n'));
}

/* Writes text to a temporary file named name and imports it expecting want. */
static void import_text(const char *name, const char *text, enum cs_status want,
                        struct cs_meas_set *set, struct cs_error *err, char *path, size_t len) {
  cs_test_tmp(name, path, len);
  cs_test_write_file(path, text);
  import_expect(path, want, set, err);
}

#define BANNER(coll)                                                                               \
  "# nccl-tests version 2.19.6 nccl-headers=22803 nccl-library=22803\n"                            \
  "# Collective test starting: " coll "\n"                                                         \
  "# nThread 1 nGpus 2 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 1 iters: 20\n"          \
  "#\n# Using devices\n"
#define TWO_RANKS                                                                                  \
  "#  Rank  0 Group  0 Pid   1319 on         vm device  0 [0000:00:06] NVIDIA H200\n"              \
  "#  Rank  1 Group  0 Pid   1319 on         vm device  1 [0000:00:07] NVIDIA H200\n"
#define HEADER                                                                                     \
  "#       size         count      type   redop    root     time   algbw   busbw  #wrong     "     \
  "time   algbw   busbw  #wrong\n"                                                                 \
  "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             "     \
  "(us)  (GB/s)  (GB/s)\n"
/* all_reduce on 2 ranks: busbw = algbw */
#define ROW_1M                                                                                     \
  "     1048576        262144     float     sum      -1    15.87   66.09   66.09       0    "      \
  "15.48   67.74   67.74       0\n"
#define FOOTER "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.0\n#\n"

/* ---- the real logs ------------------------------------------------------------------------ */

static void single_process_log(void **state) {
  (void)state;
  struct cs_meas_set set;
  struct cs_error err;
  const char *path = H200 "nccl-tests-single-process.log";
  import_expect(path, CS_OK, &set, &err);
  /* 362 data rows, 6 of them size 0 (all_gather, reduce_scatter, alltoall print two each) */
  assert_int_equal(set.n, 2 * (362 - 6));
  assert_int_equal(count_coll(&set, CS_COLL_ALL_GATHER), 2 * 28);
  assert_int_equal(count_coll(&set, CS_COLL_REDUCE_SCATTER), 2 * 28);
  assert_int_equal(count_coll(&set, CS_COLL_ALL_TO_ALL), 2 * 28);
  assert_int_equal(count_coll(&set, CS_COLL_BROADCAST), 2 * 30);
  assert_int_equal(count_coll(&set, CS_COLL_REDUCE), 2 * 30);
  assert_int_equal(count_coll(&set, CS_COLL_SEND_RECV), 2 * 30);
  assert_string_equal(cs_meas_get_meta(&set, "nccl"), "2.28.3");
  assert_string_equal(cs_meas_get_meta(&set, "gpu"), "NVIDIA H200");
  assert_string_equal(cs_meas_get_meta(&set, "hosts"), "vm");

  /* line 13: 8 B, 15.84 us out-of-place, 12.60 us in-place */
  const struct cs_meas_row *r = &set.rows[0];
  assert_int_equal(r->coll, CS_COLL_ALL_REDUCE);
  assert_int_equal(r->algo, CS_ALGO_AUTO);
  assert_int_equal(r->proto, CS_PROTO_AUTO);
  assert_string_equal(r->dtype, "float");
  assert_int_equal(r->ranks, 2);
  assert_int_equal(r->nodes, 1);
  assert_int_equal(r->gpus_per_node, 2);
  assert_int_equal(r->launch, CS_LAUNCH_THREAD);
  assert_true(r->bytes == 8);
  assert_close(r->time_us, 15.84, 1e-12);
  assert_int_equal(r->in_place, 0);
  assert_string_equal(r->config, "");
  assert_string_equal(r->source, H200 "nccl-tests-single-process.log:13");
  assert_true(isnan(r->time_min_us) && isnan(r->time_max_us));
  assert_int_equal(r->trials, 0);
  assert_close(set.rows[1].time_us, 12.60, 1e-12);
  assert_int_equal(set.rows[1].in_place, 1);

  /* line 43: 8 GiB in 24831.5 us, printed busbw 345.93 */
  r = find_row(&set, CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_PROTO_AUTO, "", 8589934592.0, 0);
  assert_non_null(r);
  assert_close(r->time_us, 24831.5, 1e-12);
  assert_close(r->busbw_GBps, 8589934592.0 / 24831.5e3, 1e-12);
  assert_close(r->busbw_GBps, 345.93, 1e-4);
  /* all_gather busbw = algbw / 2 on 2 ranks; zero-size rows skipped: first row is 32 B */
  r = find_row(&set, CS_COLL_ALL_GATHER, CS_ALGO_AUTO, CS_PROTO_AUTO, "", 32, 0);
  assert_non_null(r);
  assert_string_equal(r->source, H200 "nccl-tests-single-process.log:64");
  assert_null(find_row(&set, CS_COLL_ALL_GATHER, CS_ALGO_AUTO, CS_PROTO_AUTO, "", 0, 0));
  r = find_row(&set, CS_COLL_ALL_TO_ALL, CS_ALGO_AUTO, CS_PROTO_AUTO, "", 4294967296.0, 1);
  assert_non_null(r);
  assert_close(r->time_us, 5915.32, 1e-12);
  assert_close(r->busbw_GBps, r->algbw_GBps / 2, 1e-12);

  /* forced algorithm and protocol (line 338: NCCL_ALGO=Ring NCCL_PROTO=LL, 8 B..1 GiB x4) */
  r = find_row(&set, CS_COLL_ALL_REDUCE, CS_ALGO_RING, CS_PROTO_LL, "", 8, 0);
  assert_non_null(r);
  assert_string_equal(r->source, H200 "nccl-tests-single-process.log:350");
  for (int a = 0; a < 2; a++)
    for (int p = 0; p < 3; p++) {
      enum cs_algo algo = a ? CS_ALGO_TREE : CS_ALGO_RING;
      size_t n = 0;
      for (size_t i = 0; i < set.n; i++)
        n += set.rows[i].algo == algo && set.rows[i].proto == (enum cs_proto)p;
      assert_int_equal(n, 2 * 14);
    }
  /* configuration tags, sorted by name */
  r = find_row(&set, CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_PROTO_AUTO,
               "NCCL_MAX_NCHANNELS=4;NCCL_MIN_NCHANNELS=4", 65536, 0);
  assert_non_null(r);
  assert_non_null(find_row(&set, CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_PROTO_AUTO,
                           "NCCL_MAX_NCHANNELS=16;NCCL_MIN_NCHANNELS=16", 1073741824.0, 1));
  r = find_row(&set, CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_PROTO_AUTO,
               "NCCL_P2P_DISABLE=1;NCCL_SHM_DISABLE=1", 134217728, 0);
  assert_non_null(r);
  assert_close(r->time_us, 44499.1, 1e-12);
  assert_non_null(find_row(&set, CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_PROTO_AUTO,
                           "NCCL_P2P_DISABLE=1", 536870912, 0));
  for (size_t i = 0; i < set.n; i++) {
    assert_int_equal(set.rows[i].launch, CS_LAUNCH_THREAD);
    assert_true(set.rows[i].time_us > 0 && set.rows[i].busbw_GBps >= 0);
  }
  cs_meas_set_fini(&set);
}

static void mpirun_log(void **state) {
  (void)state;
  struct cs_meas_set set;
  struct cs_error err;
  import_expect(H200 "nccl-tests-mpirun.log", CS_OK, &set, &err);
  assert_int_equal(set.n, 60);
  for (size_t i = 0; i < set.n; i++) {
    assert_int_equal(set.rows[i].launch, CS_LAUNCH_PROCESS); /* Pids 3197 and 3198 */
    assert_int_equal(set.rows[i].ranks, 2);
    assert_int_equal(set.rows[i].coll, CS_COLL_ALL_REDUCE);
  }
  const struct cs_meas_row *r =
      find_row(&set, CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_PROTO_AUTO, "", 4294967296.0, 0);
  assert_non_null(r);
  assert_close(r->time_us, 12450.4, 1e-12);
  assert_string_equal(r->source, H200 "nccl-tests-mpirun.log:42");
  cs_meas_set_fini(&set);
}

/* NCCL INFO lines cut the rows of this log into fragments: line 67 holds the first five fields
 * of the 8 B row, line 89 its out-of-place part (20.98 us), line 111 its in-place part. */
static void tuning_log_rows(void **state) {
  (void)state;
  static const double oop[14] = {20.98, 20.79, 20.68, 21.33, 21.24,  20.49,  21.10,
                                 21.48, 25.20, 29.81, 49.98, 144.76, 472.94, 1695.59};
  static const double inp[14] = {20.06, 20.49, 22.52, 20.26, 20.94,  21.11,  22.03,
                                 23.01, 24.19, 29.75, 49.16, 143.50, 470.10, 1713.30};
  struct cs_meas_set set;
  struct cs_error err;
  const char *path = H200 "nccl-tests-tuning-debug.log";
  import_expect(path, CS_OK, &set, &err);
  assert_int_equal(set.n, 28);
  double bytes = 8;
  for (int k = 0; k < 14; k++, bytes *= 4) { /* -b 8 -e 1G -f 4: 8 B .. 512 MiB */
    const struct cs_meas_row *o = &set.rows[2 * k], *i = &set.rows[2 * k + 1];
    assert_true(o->bytes == bytes && i->bytes == bytes);
    assert_int_equal(o->in_place, 0);
    assert_int_equal(i->in_place, 1);
    assert_close(o->time_us, oop[k], 1e-12);
    assert_close(i->time_us, inp[k], 1e-12);
    /* NCCL_DEBUG=INFO logs every call: a different configuration from the quiet runs */
    assert_string_equal(o->config, "NCCL_DEBUG=INFO;NCCL_DEBUG_SUBSYS=TUNING");
    assert_int_equal(o->algo, CS_ALGO_AUTO);
  }
  assert_true(set.rows[27].bytes == 536870912.0);
  assert_string_equal(set.rows[0].source, H200 "nccl-tests-tuning-debug.log:67");
  assert_string_equal(set.rows[2].source, H200 "nccl-tests-tuning-debug.log:112");
  assert_string_equal(cs_meas_get_meta(&set, "nccl"), "2.28.3");
  cs_meas_set_fini(&set);
}

/* ---- NCCL's tuning table ------------------------------------------------------------------ */

static void tuning_table(void **state) {
  (void)state;
  struct cs_nccl_tuning *t = malloc(sizeof *t);
  assert_non_null(t);
  struct cs_error err = {0};
  assert_int_equal(cs_nccltests_read_tuning(H200 "nccl-tests-tuning-debug.log", t, &err), CS_OK);
  const int AR = CS_COLL_ALL_REDUCE;
  assert_true(t->present[AR] && t->present[CS_COLL_ALL_GATHER] && t->present[CS_COLL_BROADCAST]);
  assert_false(t->present[CS_COLL_SEND_RECV]);
  assert_close(t->lat_us[AR][CS_ALGO_RING][CS_PROTO_SIMPLE], 15.2, 1e-12);
  assert_close(t->bw_GBps[AR][CS_ALGO_RING][CS_PROTO_SIMPLE], 360.0, 1e-12);
  assert_close(t->lat_us[AR][CS_ALGO_TREE][CS_PROTO_LL], 8.0, 1e-12);
  assert_close(t->bw_GBps[AR][CS_ALGO_TREE][CS_PROTO_LL], 61.1, 1e-12);
  assert_close(t->lat_us[AR][CS_ALGO_RING][CS_PROTO_LL128], 17.8, 1e-12);
  assert_close(t->lat_us[AR][CS_ALGO_COLLNET][CS_PROTO_SIMPLE], 39.2, 1e-12);
  assert_true(t->bw_GBps[AR][CS_ALGO_COLLNET][CS_PROTO_SIMPLE] == 0);
  assert_close(t->bw_GBps[CS_COLL_ALL_GATHER][CS_ALGO_RING][CS_PROTO_LL128], 662.4, 1e-12);
  assert_close(t->lat_us[CS_COLL_REDUCE][CS_ALGO_RING][CS_PROTO_LL], 7.2, 1e-12);
  /* choice lines 8 B .. 1 GiB in steps of 2, printed many times each */
  assert_int_equal(t->n_choices, 28);

  enum cs_algo a;
  enum cs_proto p;
  double t1g = cs_nccltests_tuning_time_us(t, CS_COLL_ALL_REDUCE, 1073741824.0, &a, &p);
  assert_close(t1g, 15.2 + 1073741824.0 / (1000 * 360.0), 1e-12);
  assert_int_equal(a, CS_ALGO_RING);
  assert_int_equal(p, CS_PROTO_SIMPLE);
  /* 8 B: "Algo RING proto LL" (7.8/141.0) */
  assert_close(cs_nccltests_tuning_time_us(t, CS_COLL_ALL_REDUCE, 8, &a, &p),
               7.8 + 8 / (1000 * 141.0), 1e-12);
  assert_int_equal(p, CS_PROTO_LL);
  /* 8 GiB has no choice line: the fastest pair, ring/simple */
  assert_close(cs_nccltests_tuning_time_us(t, CS_COLL_ALL_REDUCE, 8589934592.0, &a, &p),
               15.2 + 8589934592.0 / (1000 * 360.0), 1e-12);
  assert_int_equal(a, CS_ALGO_RING);
  assert_true(cs_nccltests_tuning_time_us(t, CS_COLL_SEND_RECV, 8, NULL, NULL) < 0);
  free(t);
}

/* NCCL's own model against the measured all_reduce sweep (8 B - 8 GiB, out-of-place) of the
 * single-process log. DESIGN.md quotes a median absolute relative error of 32%, max 51%. */
static void tuning_table_error(void **state) {
  (void)state;
  struct cs_nccl_tuning *t = malloc(sizeof *t);
  assert_non_null(t);
  struct cs_error err = {0};
  assert_int_equal(cs_nccltests_read_tuning(H200 "nccl-tests-tuning-debug.log", t, &err), CS_OK);
  struct cs_meas_set set;
  import_expect(H200 "nccl-tests-single-process.log", CS_OK, &set, &err);
  double e[64];
  int n = 0;
  for (size_t i = 0; i < set.n && n < 64; i++) {
    const struct cs_meas_row *r = &set.rows[i];
    if (r->coll != CS_COLL_ALL_REDUCE || r->algo != CS_ALGO_AUTO || r->proto != CS_PROTO_AUTO ||
        r->config[0] != '\0' || r->in_place)
      continue;
    double pred = cs_nccltests_tuning_time_us(t, r->coll, r->bytes, NULL, NULL);
    assert_true(pred > 0);
    e[n++] = fabs(pred - r->time_us) / r->time_us;
  }
  assert_int_equal(n, 31);    /* 8 B .. 8 GiB, factor 2 */
  for (int i = 1; i < n; i++) /* insertion sort */
    for (int j = i; j > 0 && e[j - 1] > e[j]; j--) {
      double tmp = e[j];
      e[j] = e[j - 1];
      e[j - 1] = tmp;
    }
  double median = e[n / 2], max = e[n - 1];
  printf("NCCL tuning table vs measured all_reduce (2xH200, %d sizes 8 B-8 GiB, out-of-place): "
         "median |error| %.1f%%, max %.1f%%\n",
         n, 100 * median, 100 * max);
  assert_true(median >= 0.28 && median <= 0.36);
  cs_meas_set_fini(&set);
  free(t);
}

/* ---- hand-written edge cases -------------------------------------------------------------- */

static void edge_truncated(void **state) {
  (void)state;
  struct cs_meas_set set;
  struct cs_error err;
  const char *path = EDGE "truncated.log";
  import_expect(path, CS_ERR_PARSE, &set, &err);
  assert_msg(&err, path, 15, "expected a data row of 13 fields");
  assert_int_equal(set.n, 4); /* the two rows before it stay */
  cs_meas_set_fini(&set);

  /* cut short at the end of the file */
  char p[512];
  import_text("trunc_eof.log",
              "### ./build/all_reduce_perf\n" BANNER("all_reduce_perf") TWO_RANKS HEADER
              "     1048576        262144     float     sum      -1    15.87   66.09\n",
              CS_ERR_PARSE, &set, &err, p, sizeof p);
  assert_msg(&err, p, 11, "got 7: the row is truncated");
  cs_meas_set_fini(&set);
}

static void edge_nan_negative(void **state) {
  (void)state;
  struct cs_meas_set set;
  struct cs_error err;
  import_expect(EDGE "nan-time.log", CS_ERR_PARSE, &set, &err);
  assert_msg(&err, EDGE "nan-time.log", 14,
             "expected a positive time in us (column \"time\", in-place), got \"nan\"");
  cs_meas_set_fini(&set);
  import_expect(EDGE "negative-time.log", CS_ERR_PARSE, &set, &err);
  assert_msg(&err, EDGE "negative-time.log", 16, "got \"-14.10\"");
  assert_int_equal(set.n, 6);
  assert_int_equal(set.rows[0].coll, CS_COLL_BROADCAST);
  cs_meas_set_fini(&set);
}

static void edge_unknown_collective(void **state) {
  (void)state;
  struct cs_meas_set set;
  struct cs_error err;
  import_expect(EDGE "unknown-coll.log", CS_ERR_PARSE, &set, &err);
  assert_msg(&err, EDGE "unknown-coll.log", 3, "expected a known collective");
  assert_non_null(strstr(err.msg, "got \"hypercube_perf\""));
  cs_meas_set_fini(&set);
}

static void edge_no_results(void **state) {
  (void)state;
  struct cs_meas_set set;
  struct cs_error err;
  import_expect(EDGE "no-results.log", CS_ERR_PARSE, &set, &err);
  assert_msg(&err, EDGE "no-results.log", 0, "expected nccl-tests results");
  assert_int_equal(set.n, 0);
  cs_meas_set_fini(&set);
  import_expect(EDGE "does-not-exist.log", CS_ERR_IO, &set, &err);
  assert_msg(&err, EDGE "does-not-exist.log", 0, "cannot open");
  cs_meas_set_fini(&set);
}

/* 2 nodes x 2 GPUs under mpirun --tag-output; other ranks' lines and NCCL INFO text inside the
 * 4 MiB row (line 20, continued on line 23) are dropped. */
static void edge_two_hosts(void **state) {
  (void)state;
  struct cs_meas_set set;
  struct cs_error err;
  const char *path = EDGE "two-hosts-tagged.log";
  import_expect(path, CS_OK, &set, &err);
  assert_int_equal(set.n, 6);
  for (size_t i = 0; i < set.n; i++) {
    const struct cs_meas_row *r = &set.rows[i];
    assert_int_equal(r->ranks, 4);
    assert_int_equal(r->nodes, 2);
    assert_int_equal(r->gpus_per_node, 2);
    assert_int_equal(r->launch, CS_LAUNCH_PROCESS); /* Pid 7001 on both hosts is two processes */
    assert_int_equal(r->algo, CS_ALGO_TREE);        /* -x NCCL_ALGO=Tree */
    assert_int_equal(r->proto, CS_PROTO_AUTO);
    /* "NCCL_SOCKET_IFNAME set by environment to eth0"; NCCL_DEBUG=INFO logs every call, so it
     * stays in the tag with its subsystems */
    assert_string_equal(r->config,
                        "NCCL_DEBUG=INFO;NCCL_DEBUG_SUBSYS=INIT,ENV;NCCL_SOCKET_IFNAME=eth0");
  }
  assert_true(set.rows[2].bytes == 4194304);
  assert_close(set.rows[2].time_us, 88.35, 1e-12);
  assert_close(set.rows[3].time_us, 87.90, 1e-12);
  assert_close(set.rows[2].busbw_GBps, 4194304 / 88.35e3 * 1.5, 1e-12);
  assert_string_equal(set.rows[2].source, EDGE "two-hosts-tagged.log:20");
  assert_string_equal(cs_meas_get_meta(&set, "hosts"), "node-a,node-b");
  assert_string_equal(cs_meas_get_meta(&set, "nccl"), "2.21.5");
  assert_string_equal(cs_meas_get_meta(&set, "gpu"), "NVIDIA H100 80GB HBM3");
  cs_meas_set_fini(&set);
}

/* Two processes on one host, each with its own NCCL_HOSTID (NCCL counts them as two nodes): the
 * bundled 2 x H200 mpirun log with the two INFO lines NCCL 2.x prints for it (src/misc/utils.cc,
 * "NCCL_HOSTID set by environment to ID") added after the rank list. The nodes come from the ids,
 * and NCCL_HOSTID is no configuration. */
static void edge_hostid(void **state) {
  (void)state;
  struct cs_meas_set set;
  struct cs_error err;
  import_expect(EDGE "hostid.log", CS_OK, &set, &err);
  assert_int_equal(set.n, 60);
  for (size_t i = 0; i < set.n; i++) {
    assert_int_equal(set.rows[i].ranks, 2);
    assert_int_equal(set.rows[i].nodes, 2);
    assert_int_equal(set.rows[i].gpus_per_node, 1);
    assert_null(strstr(set.rows[i].config, "HOSTID"));
  }
  cs_meas_set_fini(&set);
}

/* NCCL 2.28 does not report NCCL_HOSTID at INFO level under INIT,TUNING,NET: the bundled hostid
 * runs (one 4 x H100 host split 1 x 4, 2 x 2, 4 x 1; one 2 x H200 host 1 x 2, 2 x 1) name it in
 * their "###" command line, and NCCL's INIT lines ("comm 0x.. rank 0 nRanks 4 nNodes 2 ...") say
 * how many nodes it counted: that count wins over the one host name. Without NCCL_HOSTID (the
 * socket path, where NCCL counts each GPU a node on one host: nRanks 2 nNodes 2) the host name
 * still counts: a P2P/SHM-off run is one node. */
static void hostid_init_count(void **state) {
  (void)state;
  static const struct {
    const char *log;
    int ranks, nodes;
  } runs[] = {
      {"h100x4-hostid/default_all_reduce_1x4.log", 4, 1},
      {"h100x4-hostid/default_all_reduce_2x2.log", 4, 2},
      {"h100x4-hostid/default_all_gather_4x1.log", 4, 4},
      {"h200x2-hostid/default_broadcast_1x2.log", 2, 1},
      {"h200x2-hostid/default_reduce_scatter_2x1.log", 2, 2},
      {"h200x2-tuning/socket_all_reduce.log", 2, 1},
  };
  for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", CS_TEST_DATA, runs[k].log);
    struct cs_meas_set set;
    struct cs_error err;
    import_expect(path, CS_OK, &set, &err);
    assert_true(set.n > 0);
    for (size_t i = 0; i < set.n; i++) {
      if (set.rows[i].nodes != runs[k].nodes)
        fail_msg("%s: %d nodes", runs[k].log, set.rows[i].nodes);
      assert_int_equal(set.rows[i].ranks, runs[k].ranks);
      assert_int_equal(set.rows[i].gpus_per_node, runs[k].ranks / runs[k].nodes);
    }
    cs_meas_set_fini(&set);
  }
}

/* No root column, "error" for "#wrong" (printed 0e+00), no Group, no banners: the collective
 * comes from the "###" command line, NCCL_PROTO from mpirun -x. */
static void edge_old_columns(void **state) {
  (void)state;
  struct cs_meas_set set;
  struct cs_error err;
  import_expect(EDGE "old-columns.log", CS_OK, &set, &err);
  assert_int_equal(set.n, 8);
  const struct cs_meas_row *r = &set.rows[0];
  assert_int_equal(r->coll, CS_COLL_ALL_GATHER);
  assert_int_equal(r->algo, CS_ALGO_AUTO);
  assert_int_equal(r->proto, CS_PROTO_LL128);
  assert_string_equal(r->config, "NCCL_IB_HCA=mlx5");
  assert_string_equal(r->dtype, "half");
  assert_int_equal(r->ranks, 4);
  assert_int_equal(r->nodes, 1);
  assert_int_equal(r->gpus_per_node, 4);
  assert_int_equal(r->launch, CS_LAUNCH_PROCESS);
  assert_close(r->time_us, 40.12, 1e-12);
  assert_close(set.rows[7].time_us, 170.40, 1e-12);
  assert_string_equal(cs_meas_get_meta(&set, "gpu"), "Tesla V100-SXM2-32GB");
  assert_null(cs_meas_get_meta(&set, "nccl"));
  cs_meas_set_fini(&set);
}

/* nccl-tests -J (format 3): one "devices" entry per process, each with ngpus ranks. */
static void edge_json(void **state) {
  (void)state;
  struct cs_meas_set set;
  struct cs_error err;
  import_expect(EDGE "all_reduce.json", CS_OK, &set, &err);
  assert_int_equal(set.n, 8); /* the size-0 result is skipped */
  for (size_t i = 0; i < set.n; i++) {
    const struct cs_meas_row *r = &set.rows[i];
    assert_int_equal(r->coll, CS_COLL_ALL_REDUCE);
    assert_int_equal(r->algo, CS_ALGO_RING);
    assert_int_equal(r->proto, CS_PROTO_SIMPLE);
    assert_string_equal(r->config, "NCCL_MAX_NCHANNELS=2");
    assert_int_equal(r->ranks, 2);
    assert_int_equal(r->nodes, 1);
    assert_int_equal(r->launch, CS_LAUNCH_THREAD);
    assert_int_equal(r->in_place, (int)(i % 2));
  }
  assert_close(set.rows[0].time_us, 15.84, 1e-12);
  assert_close(set.rows[1].time_us, 12.60, 1e-12);
  const struct cs_meas_row *r = find_row(&set, CS_COLL_ALL_REDUCE, CS_ALGO_RING, CS_PROTO_SIMPLE,
                                         "NCCL_MAX_NCHANNELS=2", 8192, 0);
  assert_non_null(r);
  assert_close(r->time_min_us, 12.9, 1e-12);
  assert_close(r->time_max_us, 15.2, 1e-12);
  assert_true(isnan(set.rows[0].time_min_us));
  assert_non_null(strstr(set.rows[0].source, "all_reduce.json:1:"));
  assert_string_equal(cs_meas_get_meta(&set, "nccl"), "2.28.3");
  assert_string_equal(cs_meas_get_meta(&set, "gpu"), "NVIDIA H200");
  cs_meas_set_fini(&set);
}

/* A result whose own check counted wrong elements is left out and reported (text: "#wrong";
 * JSON: "nwrong"); the other group of the same size stays. Old logs' "error" column holds the
 * largest deviation, not a count, and leaves nothing out (edge_old_columns keeps its 8 rows). */
static void edge_wrong_results(void **state) {
  (void)state;
  struct cs_meas_set set;
  struct cs_error err;
  char p[512];
  /* line 11: 2 MiB whose out-of-place run returned 3 wrong elements */
  cs_test_tmp("wrong.log", p, sizeof p);
  cs_test_write_file(p, BANNER("AllReduce") TWO_RANKS HEADER ROW_1M
                     "     2097152        524288     float     sum      -1    31.00   67.65   "
                     "67.65       3    30.50   68.76   68.76       0\n" FOOTER);
  cs_meas_set_init(&set);
  struct cs_nccltests_left left;
  assert_int_equal(cs_nccltests_import_left(p, &set, &left, &err), CS_OK);
  assert_int_equal(set.n, 3);
  assert_int_equal(left.wrong, 1);
  char want[600];
  snprintf(want, sizeof want, "%s:11 (out-of-place, #wrong 3)", p);
  assert_string_equal(left.first, want);
  const struct cs_meas_row *r =
      find_row(&set, CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_PROTO_AUTO, "", 2097152, 1);
  assert_non_null(r);
  assert_close(r->time_us, 30.50, 1e-12);
  assert_null(find_row(&set, CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_PROTO_AUTO, "", 2097152, 0));
  cs_meas_set_fini(&set);
  /* the JSON of edge_json with its 8 B in-place result marked wrong */
  char *json = cs_test_read_file(EDGE "all_reduce.json");
  assert_non_null(json);
  const char *mark = "\"time\":12.6,\"alg_bw\":0.0006349206349206349,"
                     "\"bus_bw\":0.0006349206349206349,\"nwrong\":0.0";
  char *at = strstr(json, mark);
  assert_non_null(at);
  at[strlen(mark) - 3] = '7'; /* "nwrong":7.0 */
  cs_test_tmp("wrong.json", p, sizeof p);
  cs_test_write_file(p, json);
  free(json);
  cs_meas_set_init(&set);
  assert_int_equal(cs_nccltests_import_left(p, &set, &left, &err), CS_OK);
  assert_int_equal(set.n, 7);
  assert_int_equal(left.wrong, 1);
  assert_non_null(strstr(left.first, "(in-place, #wrong 7)"));
  assert_close(set.rows[0].time_us, 15.84, 1e-12); /* 8 B out-of-place stays */
  assert_int_equal(set.rows[1].in_place, 0);
  cs_meas_set_fini(&set);
}

/* A log that names no collective (old nccl-tests output, no ### line) imports when the caller
 * names it (import --coll); without the hint it is an error naming the first data row; a log that
 * names its own collective keeps it whatever the hint says. */
static void edge_coll_hint(void **state) {
  (void)state;
  struct cs_meas_set set;
  struct cs_error err;
  struct cs_nccltests_left left;
  char p[512];
  cs_test_tmp("unnamed.nccl", p, sizeof p);
  /* line 8: the 1 MiB row */
  cs_test_write_file(p, "# nThread 1 nGpus 2 minBytes 8 maxBytes 8 step: 2(factor)\n#\n"
                        "# Using devices\n" TWO_RANKS HEADER ROW_1M FOOTER);
  const struct cs_nccltests_hint ar = {"all_reduce"}, ag = {"all_gather"};
  cs_meas_set_init(&set);
  assert_int_equal(cs_nccltests_import_hinted(p, &set, &ar, &left, &err), CS_OK);
  assert_int_equal(set.n, 2);
  assert_int_equal(set.rows[0].coll, CS_COLL_ALL_REDUCE);
  assert_close(set.rows[0].time_us, 15.87, 1e-12);
  cs_meas_set_fini(&set);
  cs_meas_set_init(&set);
  assert_int_equal(cs_nccltests_import_hinted(p, &set, NULL, &left, &err), CS_ERR_PARSE);
  assert_msg(&err, p, 8, "expected the collective's name");
  cs_meas_set_fini(&set);
  cs_test_tmp("named.log", p, sizeof p);
  cs_test_write_file(p, BANNER("all_reduce_perf") TWO_RANKS HEADER ROW_1M FOOTER);
  cs_meas_set_init(&set);
  assert_int_equal(cs_nccltests_import_hinted(p, &set, &ag, &left, &err), CS_OK);
  assert_int_equal(set.rows[0].coll, CS_COLL_ALL_REDUCE);
  cs_meas_set_fini(&set);
}

/* ---- settings, launcher labels and extra columns ------------------------------------------ */

static void settings_and_columns(void **state) {
  (void)state;
  struct cs_meas_set set;
  struct cs_error err;
  char p[512];
  /* a list and an exclusion: NCCL chooses, the settings stay in the tag */
  import_text(
      "algo_list.log",
      "### NCCL_PROTO=^LL128 NCCL_ALGO=Ring,Tree NCCL_DEBUG=WARN ./build/all_reduce_perf\n" BANNER(
          "all_reduce_perf") TWO_RANKS HEADER ROW_1M FOOTER,
      CS_OK, &set, &err, p, sizeof p);
  assert_int_equal(set.n, 2);
  assert_int_equal(set.rows[0].algo, CS_ALGO_AUTO);
  assert_int_equal(set.rows[0].proto, CS_PROTO_AUTO);
  assert_string_equal(set.rows[0].config, "NCCL_ALGO=Ring,Tree;NCCL_PROTO=^LL128");
  cs_meas_set_fini(&set);

  /* "# NCCL_..." environment lines; NVLSTree is not one of our algorithms */
  import_text("env_lines.log",
              "### ./build/all_reduce_perf\n" BANNER("all_reduce_perf") TWO_RANKS
              "# NCCL_ALGO=NVLSTree NCCL_PROTO=simple NCCL_NET_GDR_LEVEL=2\n" HEADER ROW_1M FOOTER,
              CS_OK, &set, &err, p, sizeof p);
  assert_int_equal(set.rows[0].algo, CS_ALGO_AUTO);
  assert_int_equal(set.rows[0].proto, CS_PROTO_SIMPLE);
  assert_string_equal(set.rows[0].config, "NCCL_ALGO=NVLSTree;NCCL_NET_GDR_LEVEL=2");
  cs_meas_set_fini(&set);

  /* a quoted value with a space stays whole, on the command line and on an environment line */
  import_text(
      "quoted.log",
      "### NCCL_NET=\"AWS Libfabric\" NCCL_CROSS_NIC=1 aprun -n 2 ./build/all_reduce_perf\n" BANNER(
          "all_reduce_perf") TWO_RANKS HEADER ROW_1M FOOTER,
      CS_OK, &set, &err, p, sizeof p);
  assert_string_equal(set.rows[0].config, "NCCL_CROSS_NIC=1;NCCL_NET=AWS Libfabric");
  cs_meas_set_fini(&set);
  import_text("quoted_env.log",
              "### ./build/all_reduce_perf\n" BANNER("all_reduce_perf") TWO_RANKS
              "# NCCL_NET='AWS Libfabric' NCCL_IB_HCA=mlx5_0\n" HEADER ROW_1M FOOTER,
              CS_OK, &set, &err, p, sizeof p);
  assert_string_equal(set.rows[0].config, "NCCL_IB_HCA=mlx5_0;NCCL_NET=AWS Libfabric");
  cs_meas_set_fini(&set);

  /* srun --label: only task 0's lines count */
  import_text("srun.log",
              "0: " BANNER("all_reduce_perf") "0: #  Rank  0 Group  0 Pid   1319 on         vm "
                                              "device  0 [0000:00:06] NVIDIA H200\n"
                                              "0: #  Rank  1 Group  0 Pid   1320 on         vm "
                                              "device  1 [0000:00:07] NVIDIA H200\n"
                                              "1: #  Rank  7 Group  0 Pid   1320 on         vm "
                                              "device  1 [0000:00:07] NVIDIA H200\n"
                                              "0: " HEADER "0: " ROW_1M "1: " ROW_1M "0: " FOOTER,
              CS_OK, &set, &err, p, sizeof p);
  assert_int_equal(set.n, 2);
  assert_int_equal(set.rows[0].launch, CS_LAUNCH_PROCESS);
  cs_meas_set_fini(&set);

  /* per-iteration and timestamp columns of newer nccl-tests (-I 1 -S 1) */
  import_text("per_iter.log",
              "### ./build/all_reduce_perf -I 1 -S 1\n" BANNER("all_reduce_perf") TWO_RANKS
              "#       size   count   type  redop   root     time   algbw   busbw  #wrong    i_min"
              "    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    "
              "i_p99    i_cv%           timestamp\n"
              "     1048576  262144  float    sum     -1    15.87   66.09   66.09       0    15.10"
              "    17.20    17.20     3.10    15.48   67.74   67.74       0    15.01    16.90    "
              "16.90     2.90 2026-11-22 02:50:11\n" FOOTER,
              CS_OK, &set, &err, p, sizeof p);
  assert_int_equal(set.n, 2);
  assert_close(set.rows[0].time_us, 15.87, 1e-12);
  assert_close(set.rows[0].time_min_us, 15.10, 1e-12);
  assert_close(set.rows[0].time_max_us, 17.20, 1e-12);
  assert_close(set.rows[1].time_us, 15.48, 1e-12);
  assert_close(set.rows[1].time_max_us, 16.90, 1e-12);
  cs_meas_set_fini(&set);

  /* two tests in one file keep their own settings and shapes */
  import_text("two_tests.log",
              "### NCCL_ALGO=Tree ./build/all_reduce_perf\n" BANNER("all_reduce_perf")
                  TWO_RANKS HEADER ROW_1M FOOTER
              "### ./build/all_reduce_perf\n" BANNER("all_reduce_perf")
                  TWO_RANKS HEADER ROW_1M FOOTER,
              CS_OK, &set, &err, p, sizeof p);
  assert_int_equal(set.n, 4);
  assert_int_equal(set.rows[0].algo, CS_ALGO_TREE);
  assert_int_equal(set.rows[2].algo, CS_ALGO_AUTO);
  cs_meas_set_fini(&set);
}

/* ---- every other rejection ----------------------------------------------------------------- */

static void rank_list_errors(void **state) {
  (void)state;
  struct cs_meas_set set;
  struct cs_error err;
  char p[512];
  /* a rank listed twice */
  import_text(
      "dup_rank.log",
      "### ./build/all_reduce_perf\n" BANNER("all_reduce_perf") TWO_RANKS
      "#  Rank  1 Group  0 Pid   1319 on         vm device  1 [0000:00:07] NVIDIA H200\n" HEADER
          ROW_1M FOOTER,
      CS_ERR_PARSE, &set, &err, p, sizeof p);
  assert_msg(&err, p, 9, "rank 1 a second time");
  cs_meas_set_fini(&set);

  /* three ranks on two hosts */
  import_text(
      "uneven.log",
      "### ./build/all_reduce_perf\n" BANNER("all_reduce_perf") TWO_RANKS
      "#  Rank  2 Group  0 Pid   2000 on         vw device  0 [0000:00:06] NVIDIA H200\n" HEADER
          ROW_1M FOOTER,
      CS_ERR_PARSE, &set, &err, p, sizeof p);
  assert_msg(&err, p, 9, "expected the same number of ranks on every host");
  cs_meas_set_fini(&set);

  /* ranks 0 and 2 of 2 */
  import_text("gap.log",
              "### ./build/all_reduce_perf\n" BANNER(
                  "all_reduce_perf") "#  Rank  0 Group  0 Pid   1319 on         vm device  0 "
                                     "[0000:00:06] NVIDIA H200\n"
                                     "#  Rank  2 Group  0 Pid   1319 on         vm device  1 "
                                     "[0000:00:07] NVIDIA H200\n" HEADER ROW_1M FOOTER,
              CS_ERR_PARSE, &set, &err, p, sizeof p);
  assert_msg(&err, p, 8, "expected ranks 0..1 in the rank list, got rank 2");
  cs_meas_set_fini(&set);

  /* a 4-rank run whose log lists 2 ranks: the printed busbw (x1.5) gives it away */
  import_text("busbw.log",
              "### ./build/all_reduce_perf\n" BANNER("all_reduce_perf") TWO_RANKS HEADER
              "     1048576        262144     float     sum      -1    15.87   66.07   99.11       "
              "0    15.48   67.74  101.61       0\n" FOOTER,
              CS_ERR_PARSE, &set, &err, p, sizeof p);
  assert_msg(&err, p, 11, "expected busbw 66.07 GB/s");
  cs_meas_set_fini(&set);

  /* no rank lines at all */
  import_text("no_ranks.log",
              "### ./build/all_reduce_perf\n" BANNER("all_reduce_perf") HEADER ROW_1M, CS_ERR_PARSE,
              &set, &err, p, sizeof p);
  assert_msg(&err, p, 9, "expected the \"#  Rank N");
  cs_meas_set_fini(&set);

  /* a malformed rank line */
  import_text("bad_rank.log", BANNER("all_reduce_perf") "#  Rank  zero on vm\n", CS_ERR_PARSE, &set,
              &err, p, sizeof p);
  assert_msg(&err, p, 6, "expected a rank line");
  cs_meas_set_fini(&set);
}

static void row_errors(void **state) {
  (void)state;
  struct cs_meas_set set;
  struct cs_error err;
  char p[512];
  /* no collective anywhere */
  import_text("no_coll.log", "# Using devices\n" TWO_RANKS HEADER ROW_1M, CS_ERR_PARSE, &set, &err,
              p, sizeof p);
  assert_msg(&err, p, 6, "expected the collective's name");
  cs_meas_set_fini(&set);

  /* a failure message where a row belongs */
  import_text("garbled.log",
              "### ./build/all_reduce_perf\n" BANNER("all_reduce_perf") TWO_RANKS HEADER
              "vm: Test NCCL failure common.cu:1279 'unhandled cuda error' . . . . .\n",
              CS_ERR_PARSE, &set, &err, p, sizeof p);
  assert_msg(&err, p, 11, "expected a message size in bytes (column \"size\"), got \"vm:\"");
  cs_meas_set_fini(&set);

  /* letters where a bandwidth belongs, a bad #wrong, a bad root, a bad count, a numeric type */
  static const struct {
    const char *row, *what;
  } bad[] = {
      {"  1048576  262144  float  sum  -1  15.87  fast  66.09  0  15.48  67.74  67.74  0\n",
       "column \"algbw\", out-of-place), got \"fast\""},
      {"  1048576  262144  float  sum  -1  15.87  66.09  66.09  0  15.48  67.74  67.74  x\n",
       "expected a count of wrong elements or N/A"},
      {"  1048576  262144  float  sum  r0  15.87  66.09  66.09  0  15.48  67.74  67.74  0\n",
       "expected a root rank"},
      {"  1048576  -3  float  sum  -1  15.87  66.09  66.09  0  15.48  67.74  67.74  0\n",
       "expected an element count"},
      {"  1048576  262144  7  sum  -1  15.87  66.09  66.09  0  15.48  67.74  67.74  0\n",
       "expected a name in column \"type\""},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char text[2048];
    snprintf(text, sizeof text,
             "### ./build/all_reduce_perf\n" BANNER("all_reduce_perf") TWO_RANKS HEADER "%s",
             bad[i].row);
    import_text("bad_row.log", text, CS_ERR_PARSE, &set, &err, p, sizeof p);
    assert_msg(&err, p, 11, bad[i].what);
    cs_meas_set_fini(&set);
  }
}

static void json_errors(void **state) {
  (void)state;
  struct cs_meas_set set;
  struct cs_error err;
  char p[512];
#define DEV "\"config\":{\"nthreads\":1,\"ngpus\":2,\"devices\":[{\"rank\":0,\"hostname\":\"vm\"}]}"
  static const struct {
    const char *text;
    const char *what;
    long line;
  } bad[] = {
      {"{\"version\":3,\"args\":[\"./all_reduce_perf\"],\n \"results\":[{\"size\":8,]}",
       "did not find expected node content", 2},
      {"{\"version\":3,\n\"results\":[{\"size\" 8}]}", "expected ',' or '}'", 2},
      {"{\"a\":[1,\n{[1]:2}]}", "expected an object key in double quotes", 2},
      {"{\"a\":&x [1],\"b\":*x}", "aliases are not accepted", 1},
      {"{\"version\":3}", "expected a \"results\" list", 1},
      {"{\"args\":[\"./all_reduce_perf\"]," DEV ",\"results\":[{\"size\":8,\"type\":\"float\","
       "\"out_of_place\":{\"time\":\"nan\",\"alg_bw\":0,\"bus_bw\":0,\"nwrong\":0}}]}",
       "expected a positive finite \"time\" in us", 1},
      {"{\"args\":[\"./gather_perf\"]," DEV ",\"results\":[]}", "got \"gather_perf\"", 1},
      {"{\"args\":[\"./all_reduce_perf\"],\"results\":[]}", "\"devices\"", 1},
      {"{\"args\":[\"./all_reduce_perf\"]," DEV ",\"results\":[]}",
       "at least one entry in \"results\"", 1},
      {"{\"args\":[\"./all_reduce_perf\"]," DEV ",\"results\":[{\"size\":8,\"type\":\"float\","
       "\"out_of_place\":{\"time\":10.0,\"alg_bw\":0,\"bus_bw\":5.0,\"nwrong\":0}}]}",
       "\"bus_bw\" to agree", 1},
      {"{\"a\":\"\\q\"}", "unknown escape character", 1},
      {"{\"a\":1} x", "did not find expected <document start>", 1},
      {"{\"a\":1}\n---\n{\"b\":2}", "expected the end of the JSON document", 2},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    import_text("bad.json", bad[i].text, CS_ERR_PARSE, &set, &err, p, sizeof p);
    char prefix[600];
    snprintf(prefix, sizeof prefix, "%s:%ld:", p, bad[i].line);
    if (strncmp(err.msg, prefix, strlen(prefix)) != 0 || strstr(err.msg, bad[i].what) == NULL) {
      print_error("case %zu: \"%s\"\n", i, err.msg);
      fail();
    }
    cs_meas_set_fini(&set);
  }
}

/* Hostile JSON is refused as soon as the limit is met, with its place: 100,000 nested brackets at
 * the 65th, a 17 MiB file at 16 MiB, the 1,000,001st value (the object, the array and 999,999
 * numbers) at that value. */
/* err is "path<where>...what...", one line. */
static void located(const struct cs_error *err, const char *path, const char *where,
                    const char *what) {
  char prefix[600];
  snprintf(prefix, sizeof prefix, "%s%s", path, where);
  if (strncmp(err->msg, prefix, strlen(prefix)) != 0 || strstr(err->msg, what) == NULL) {
    print_error("message \"%s\"\nexpected prefix \"%s\" and \"%s\"\n", err->msg, prefix, what);
    fail();
  }
  assert_null(strchr(err->msg, '\n'));
}

static void json_hostile(void **state) {
  (void)state;
  struct cs_meas_set set;
  struct cs_error err;
  char p[512];
  size_t n = 100000;
  char *text = malloc(17u << 20);
  assert_non_null(text);
  strcpy(text, "{\"a\":");
  memset(text + 5, '[', n);
  text[5 + n] = '\0';
  import_text("deep.json", text, CS_ERR_PARSE, &set, &err, p, sizeof p);
  located(&err, p, ":1:69: ", "nested at most 64 levels deep");
  cs_meas_set_fini(&set);

  size_t big = (17u << 20) - 1;
  strcpy(text, "{\"a\":\"");
  memset(text + 6, 'x', big - 6);
  text[big] = '\0';
  import_text("big.json", text, CS_ERR_PARSE, &set, &err, p, sizeof p);
  located(&err, p, ":1:", "at most 16 MiB");
  cs_meas_set_fini(&set);

  strcpy(text, "{\"a\":[");
  size_t k = 6;
  for (long i = 0; i <= 1000000; i++)
    text[k++] = '1', text[k++] = ',';
  strcpy(text + k, "1]}");
  import_text("many.json", text, CS_ERR_PARSE, &set, &err, p, sizeof p);
  located(&err, p, ":1:2000003: ", "at most 1000000 values");
  cs_meas_set_fini(&set);
  free(text);
}

static void tuning_errors(void **state) {
  (void)state;
  struct cs_nccl_tuning *t = malloc(sizeof *t);
  assert_non_null(t);
  struct cs_error err = {0};
  const char *path = H200 "nccl-tests-mpirun.log";
  assert_int_equal(cs_nccltests_read_tuning(path, t, &err), CS_ERR_PARSE);
  assert_msg(&err, path, 0, "expected NCCL's tuning table");
  assert_int_equal(cs_nccltests_read_tuning(EDGE "none.log", t, &err), CS_ERR_IO);
  free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(single_process_log),   cmocka_unit_test(mpirun_log),
      cmocka_unit_test(tuning_log_rows),      cmocka_unit_test(tuning_table),
      cmocka_unit_test(tuning_table_error),   cmocka_unit_test(edge_truncated),
      cmocka_unit_test(edge_nan_negative),    cmocka_unit_test(edge_unknown_collective),
      cmocka_unit_test(edge_no_results),      cmocka_unit_test(edge_two_hosts),
      cmocka_unit_test(edge_hostid),          cmocka_unit_test(hostid_init_count),
      cmocka_unit_test(edge_old_columns),     cmocka_unit_test(edge_json),
      cmocka_unit_test(edge_wrong_results),   cmocka_unit_test(edge_coll_hint),
      cmocka_unit_test(settings_and_columns), cmocka_unit_test(rank_list_errors),
      cmocka_unit_test(row_errors),           cmocka_unit_test(json_errors),
      cmocka_unit_test(json_hostile),         cmocka_unit_test(tuning_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
