/* test_collgrid.c — physical properties of collective predictions over a grid: message sizes
 * (8 B to 8 GiB) x node counts (1 to 400) x every bundled topology (and the 4 x H200 node's) x
 * three calibrations (the NCCL-anchored defaults; the demo's fit of the 2 x H200 nccl-tests logs in
 * tests/data/h200x2; a fit of the 4 x H200 commscale measurements in tests/data/h200x4) x
 * all_reduce, all_gather, reduce_scatter. Each shape is placed on the topology and its links
 * written into the calibration by cs_topo_cal_apply, as `commscale coll --topology` does.
 *
 * Properties, none of them a number the code computes and the test copies:
 *  - every time and band bound is finite and positive;
 *  - time never decreases with the message size (same shape);
 *  - time never decreases with the node count (same size, two or more nodes): every algorithm's
 *    latency and bus bytes grow with it and the topology's per-node rate can only fall;
 *  - between neighbouring node counts N1 < N2 with the same algorithm, protocol and switch level,
 *    time grows at most as the ring's step count (N2 g - 1) / (N1 g - 1), its network steps
 *    (N2 - 1) / (N1 - 1) or a tree's depth
 *    ceil(log2 N2) / ceil(log2 N1), whichever is more: no cliff without a switch of algorithm or
 *    of fabric level;
 *  - bus bandwidth never exceeds the physical rate of the slowest tier crossed (the topology's
 *    nominal per-GPU link rate on one node; across nodes the lesser of that and the node's NICs),
 *    twice that for an in-switch reduction (NVLS, CollNet all_reduce);
 *  - CollNet never runs all_gather or reduce_scatter. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fit.h"
#include "map.h"
#include "nccltests.h"
#include "testutil.h"

#define NCAL 3
static struct cs_cal cals[NCAL];
static struct cs_meas_set h200x2; /* the three bundled 2 x H200 nccl-tests logs */
static const char *const cal_names[NCAL] = {"default", "h200x2 demo fit", "h200x4 fit"};

static void fit_into(struct cs_meas_set *set, struct cs_cal *cal) {
  struct cs_fit_opts o;
  cs_fit_opts_default(&o);
  o.cross_validate = 0;
  struct cs_error err = {0};
  cs_cal_init(cal);
  enum cs_status st = cs_fit_run(set, &o, cal, NULL, &err);
  if (st != CS_OK) fprintf(stderr, "fit: %s\n", err.msg);
  assert_int_equal(st, CS_OK);
}

static int setup(void **state) {
  (void)state;
  cs_cal_init(&cals[0]);
  struct cs_meas_set set, *logs_set = &h200x2;
  struct cs_error err = {0};
  static const char *const logs[] = {"nccl-tests-single-process.log", "nccl-tests-mpirun.log",
                                     "nccl-tests-tuning-debug.log"};
  cs_meas_set_init(logs_set);
  for (int i = 0; i < 3; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s/h200x2/%s", CS_TEST_DATA, logs[i]);
    assert_int_equal(cs_nccltests_import(path, logs_set, &err), CS_OK);
  }
  fit_into(logs_set, &cals[1]);
  cs_meas_set_init(&set);
  assert_int_equal(cs_meas_read_file(CS_TEST_DATA "/h200x4/calib_n4.csv", &set, &err), CS_OK);
  fit_into(&set, &cals[2]);
  cs_meas_set_fini(&set);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  for (int i = 0; i < NCAL; i++)
    cs_cal_fini(&cals[i]);
  cs_meas_set_fini(&h200x2);
  return 0;
}

static const int node_counts[] = {1,  2,  3,  4,  6,  8,   12,  16,  24,
                                  32, 48, 60, 64, 70, 100, 128, 256, 400};
#define NN (int)(sizeof node_counts / sizeof node_counts[0])
#define NS 31 /* 8 B .. 8 GiB by factors of 2 */

static long failures;

static void flag(const char *what, const char *topo, int c, int k, int N, int g, double S, double a,
                 double b) {
  if (failures++ < 400)
    fprintf(stderr, "%s: %s, %s, %s, %d x %d GPUs, %.0f B: %g vs %g\n", what, cal_names[k], topo,
            cs_coll_name((enum cs_coll)c), N, g, S, a, b);
}

/* One topology: every calibration, collective, node count and size. Returns the points checked. */
static long grid_topology(const char *path) {
  struct cs_topology t;
  struct cs_error err = {0};
  assert_int_equal(cs_topo_load(path, &t, &err), CS_OK);
  long points = 0;
  static const enum cs_coll colls[] = {CS_COLL_ALL_REDUCE, CS_COLL_ALL_GATHER,
                                       CS_COLL_REDUCE_SCATTER};
  for (int k = 0; k < NCAL; k++)
    for (unsigned ci = 0; ci < sizeof colls / sizeof colls[0]; ci++) {
      int c = colls[ci];
      double prev_t[NS] = {0};
      int prev_level = -2, prev_nodes = 0;
      enum cs_algo prev_a[NS];
      enum cs_proto prev_p[NS];
      const int g = t.node.gpus;
      for (int ni = 0; ni < NN; ni++) {
        int N = node_counts[ni];
        if (N > 1 && (t.net.nics == 0 || (t.net.nodes > 0 && N > t.net.nodes))) break;
        struct cs_topo_group grp;
        assert_int_equal(cs_topo_map_shape(&t, N, g, 0, &grp, &err), CS_OK);
        struct cs_cal shape = cals[k];
        cs_topo_cal_apply(&t, &grp, 0, &shape);
        struct cs_coll_query q = {(enum cs_coll)c, CS_ALGO_AUTO, CS_PROTO_AUTO, 1, 1, 1, 0};
        cs_topo_group_query(&grp, &q);
        if (q.ranks < 2) continue;
        double limit = grp.domains > 1 ? fmin(grp.bw_intra, grp.bw_net) : grp.bw_intra;
        double last = 0;
        for (int si = 0; si < NS; si++) {
          q.bytes = 8.0 * pow(2.0, si);
          struct cs_coll_pred pr;
          double lo = 0, hi = 0;
          enum cs_status st;
          if (si % 5 == 0) /* the band is slower: every fifth size */
            st = cs_cal_predict(&shape, &q, &pr, &lo, &hi, &err);
          else {
            st = cs_model_predict(&shape.model, &q, &pr, &err);
            lo = hi = pr.time;
          }
          points++;
          if (st != CS_OK || !isfinite(pr.time) || !(pr.time > 0) || !isfinite(lo) ||
              !isfinite(hi) || !(lo > 0) || !(lo <= pr.time) || !(hi >= pr.time)) {
            flag("not finite", t.name, c, k, q.nodes, g, q.bytes, pr.time, lo);
            continue;
          }
          if (pr.time < last * (1 - 1e-9))
            flag("time falls with size", t.name, c, k, q.nodes, g, q.bytes, pr.time, last);
          last = pr.time;
          double busbw = q.bytes / pr.time * cs_coll_busbw_factor(q.coll, q.ranks);
          int reduces =
              c == CS_COLL_ALL_REDUCE && (pr.algo == CS_ALGO_NVLS || pr.algo == CS_ALGO_COLLNET);
          if (busbw > limit * (reduces ? 2.0 : 1.0) * (1 + 1e-9))
            flag("busbw above the links", t.name, c, k, q.nodes, g, q.bytes, busbw, limit);
          if (pr.algo == CS_ALGO_COLLNET && c != CS_COLL_ALL_REDUCE)
            flag("collnet for a gather", t.name, c, k, q.nodes, g, q.bytes, 0, 0);
          if (prev_nodes >= 2 && q.nodes >= 2) {
            if (pr.time < prev_t[si] * (1 - 1e-6))
              flag("time falls with nodes", t.name, c, k, q.nodes, g, q.bytes, pr.time, prev_t[si]);
            double steps = (double)(q.nodes * q.gpus_per_node - 1) /
                           (double)(prev_nodes * q.gpus_per_node - 1);
            double depth = ceil(log2((double)q.nodes)) / ceil(log2((double)prev_nodes));
            double net_steps = (double)(q.nodes - 1) / (double)(prev_nodes - 1);
            steps = fmax(steps, fmax(depth, net_steps));
            if (pr.algo == prev_a[si] && pr.proto == prev_p[si] && grp.level == prev_level &&
                pr.time > prev_t[si] * steps * (1 + 1e-6))
              flag("cliff between node counts", t.name, c, k, q.nodes, g, q.bytes, pr.time,
                   prev_t[si]);
          }
          prev_t[si] = pr.time;
          prev_a[si] = pr.algo;
          prev_p[si] = pr.proto;
        }
        prev_nodes = q.nodes;
        prev_level = grp.level;
      }
    }
  return points;
}

static void grid(void **state) {
  (void)state;
  DIR *d = opendir(CS_TOPO_DIR);
  assert_non_null(d);
  long points = 0;
  int topologies = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    if (n < 6 || strcmp(e->d_name + n - 5, ".yaml") != 0) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", CS_TOPO_DIR, e->d_name);
    points += grid_topology(path);
    topologies++;
  }
  closedir(d);
  points += grid_topology(CS_TEST_DATA "/h200x4/h200x4.yaml");
  fprintf(stderr, "%d topologies + h200x4, %d calibrations: %ld points, %ld failures\n", topologies,
          NCAL, points, failures);
  assert_true(topologies >= 10);
  assert_int_equal(failures, 0);
}

/* Precedence per parameter: fitted > user-given > topology nominal > default. */
static void precedence(void **state) {
  (void)state;
  struct cs_topology t;
  struct cs_error err = {0};
  char path[1024];
  assert_int_equal(cs_topo_find("dgx-h100", path, sizeof path, &err), CS_OK);
  assert_int_equal(cs_topo_load(path, &t, &err), CS_OK);
  struct cs_topo_group grp;
  assert_int_equal(cs_topo_map_shape(&t, 4, 8, 0, &grp, &err), CS_OK);
  const int in = cs_model_param_index("bw.net"), iv = cs_model_param_index("bw.nvlink");
  const int ih = cs_model_param_index("hop.net.simple");
  /* default: the topology's nominal value replaces it */
  struct cs_cal c = cals[0];
  cs_topo_cal_apply(&t, &grp, 0, &c);
  assert_int_equal(c.source[in], CS_SRC_TOPO);
  assert_close(c.model.bw[CS_TIER_NET], grp.bw_net * t.net.efficiency, 1e-12);
  assert_int_equal(c.source[iv], CS_SRC_TOPO);
  assert_int_equal(c.source[ih], CS_SRC_TOPO);
  /* user-given: kept over the topology */
  c = cals[0];
  assert_int_equal(cs_cal_set_user(&c, in, 123e9), 1);
  cs_topo_cal_apply(&t, &grp, 0, &c);
  assert_int_equal(c.source[in], CS_SRC_USER);
  assert_close(c.model.bw[CS_TIER_NET], 123e9, 1e-12);
  /* fitted: kept over the topology and over what the user gives */
  c = cals[0];
  c.source[in] = CS_SRC_FIT;
  c.model.bw[CS_TIER_NET] = 77e9;
  assert_int_equal(cs_cal_set_user(&c, in, 123e9), 0);
  cs_topo_cal_apply(&t, &grp, 0, &c);
  assert_int_equal(c.source[in], CS_SRC_FIT);
  assert_close(c.model.bw[CS_TIER_NET], 77e9, 1e-12);
  /* ... unless the network is a hypothetical one */
  c = cals[0];
  c.source[in] = CS_SRC_FIT;
  c.model.bw[CS_TIER_NET] = 77e9;
  cs_topo_cal_apply(&t, &grp, CS_TOPO_NET_WHAT_IF, &c);
  assert_int_equal(c.source[in], CS_SRC_TOPO);
  assert_close(c.model.bw[CS_TIER_NET], grp.bw_net * t.net.efficiency, 1e-12);
  /* a fitted intra-node rate (the h200x2 fit) is kept on the topology */
  c = cals[1];
  assert_int_equal(c.source[iv], CS_SRC_FIT);
  double fitted = c.model.bw[CS_TIER_NVLINK];
  cs_topo_cal_apply(&t, &grp, 0, &c);
  assert_int_equal(c.source[iv], CS_SRC_FIT);
  assert_close(c.model.bw[CS_TIER_NVLINK], fitted, 1e-12);
  /* the sources are named per tier */
  char buf[512];
  cs_topo_cal_sources(&c, 4, buf, sizeof buf);
  assert_non_null(strstr(buf, "nvlink bw"));
  assert_non_null(strstr(buf, "(fit +-"));
  assert_non_null(strstr(buf, "net    bw"));
  assert_non_null(strstr(buf, "(topology)"));
  /* across nodes the tree's own latencies too, with their source (no data on them: default) */
  char tree[96];
  snprintf(tree, sizeof tree, "tree ll/ll128/simple %.2f/%.2f/%.2f us (default)",
           c.model.tree_hop[CS_TIER_NET][0] * 1e6, c.model.tree_hop[CS_TIER_NET][1] * 1e6,
           c.model.tree_hop[CS_TIER_NET][2] * 1e6);
  assert_non_null(strstr(buf, tree));
  cs_topo_cal_sources(&c, 1, buf, sizeof buf);
  assert_null(strstr(buf, "tree ll"));
}

/* Identifiability: the socket configuration of the 2 x H200 logs (NCCL_P2P_DISABLE=1;
 * NCCL_SHM_DISABLE=1, 13 all_reduce rows of NCCL's choice at one shape) must not put its slow
 * transfer into the own-share term or into an efficiency beyond what a protocol can carry:
 * every efficiency within its physical bound, bw.local at least the link rate, all_gather at 2
 * ranks about half an all_reduce (half the bus bytes), every prediction finite. */
static void socket_identifiability(void **state) {
  (void)state;
  struct cs_fit_opts o;
  cs_fit_opts_default(&o);
  o.config = "NCCL_P2P_DISABLE=1;NCCL_SHM_DISABLE=1";
  o.cross_validate = 0;
  struct cs_cal cal;
  cs_cal_init(&cal);
  struct cs_fit_result res;
  struct cs_error err = {0};
  assert_int_equal(cs_fit_run(&h200x2, &o, &cal, &res, &err), CS_OK);
  const struct cs_model *m = &cal.model;
  assert_true(m->bw[CS_TIER_NVLINK] < 10e9); /* the slow path is the link's */
  assert_true(m->local >= m->bw[CS_TIER_NVLINK] * 0.99);
  for (int a = 0; a < CS_ALGO_COUNT; a++)
    if (a != CS_ALGO_NVLS && a != CS_ALGO_COLLNET) {
      assert_true(m->eff[a][CS_PROTO_LL] <= 0.65 * 1.02);
      assert_true(m->eff[a][CS_PROTO_LL128] <= 1.2 * 1.02);
      assert_true(m->eff[a][CS_PROTO_SIMPLE] <= 1.25 * 1.02);
    }
  int named = 0;
  for (int i = 0; i < res.n_notes; i++)
    named |= strstr(res.notes[i], "not determined by this data") != NULL;
  assert_true(named);
  for (double S = 8; S <= 8589934592.0; S *= 2) {
    struct cs_coll_query q = {CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_PROTO_AUTO, 2, 1, 2, S};
    struct cs_coll_pred ar, ag;
    double lo, hi;
    assert_int_equal(cs_cal_predict(&cal, &q, &ar, &lo, &hi, &err), CS_OK);
    q.coll = CS_COLL_ALL_GATHER;
    assert_int_equal(cs_cal_predict(&cal, &q, &ag, &lo, &hi, &err), CS_OK);
    if (S >= 64e6) assert_true(ag.time < 0.75 * ar.time);
  }
  cs_fit_result_fini(&res);
  cs_cal_fini(&cal);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(precedence),
                                     cmocka_unit_test(socket_identifiability),
                                     cmocka_unit_test(grid)};
  return cmocka_run_group_tests(tests, setup, teardown);
}
