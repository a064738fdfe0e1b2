/* test_costmodel.c — the cost model against hand-derived formulas and against NCCL's own tuning
 * table for 2 x H200 (tests/data/h200x2/nccl-tests-tuning-debug.log), an independent reference:
 * NCCL's constants (cs_model_nccl_tuning) must reproduce NCCL's latencies for the shapes that
 * table was printed for, and choose the protocol where NCCL chose it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cal.h"
#include "costmodel.h"
#include "testutil.h"

static struct cs_model plain(void) {
  struct cs_model m;
  cs_model_nccl_tuning(&m);
  memset(m.pipe, 0, sizeof m.pipe); /* pure latency + bytes / bandwidth */
  memset(m.win, 0, sizeof m.win);
  m.local = HUGE_VAL; /* no own-share term */
  return m;
}

static double t_us(const struct cs_model *m, enum cs_coll c, enum cs_algo a, enum cs_proto p, int N,
                   int g, double bytes) {
  struct cs_coll_query q = {c, a, p, N * g, N, g, bytes};
  struct cs_coll_pred pr;
  assert_int_equal(cs_model_time(m, &q, a, p, &pr, NULL), CS_OK);
  return pr.time * 1e6;
}

/* NCCL 2.28 on 2 x H200 printed AllReduce Ring LL 7.8 us, LL128 17.8, Simple 15.2; Tree LL 8.0;
 * Broadcast Ring LL 7.2, Simple 11.8; AllGather Ring LL 7.2. */
static void nccl_latencies(void **state) {
  (void)state;
  struct cs_model m = plain();
  assert_close(t_us(&m, CS_COLL_ALL_REDUCE, CS_ALGO_RING, CS_PROTO_LL, 1, 2, 0), 7.8, 1e-9);
  assert_close(t_us(&m, CS_COLL_ALL_REDUCE, CS_ALGO_RING, CS_PROTO_LL128, 1, 2, 0), 17.8, 1e-9);
  assert_close(t_us(&m, CS_COLL_ALL_REDUCE, CS_ALGO_RING, CS_PROTO_SIMPLE, 1, 2, 0), 15.2, 1e-9);
  assert_close(t_us(&m, CS_COLL_ALL_REDUCE, CS_ALGO_TREE, CS_PROTO_LL, 1, 2, 0), 8.0, 1e-9);
  assert_close(t_us(&m, CS_COLL_BROADCAST, CS_ALGO_RING, CS_PROTO_LL, 1, 2, 0), 7.2, 1e-9);
  assert_close(t_us(&m, CS_COLL_BROADCAST, CS_ALGO_RING, CS_PROTO_SIMPLE, 1, 2, 0), 11.8, 1e-9);
  assert_close(t_us(&m, CS_COLL_ALL_GATHER, CS_ALGO_RING, CS_PROTO_LL, 1, 2, 0), 7.2, 1e-9);
}

/* Hand-derived multi-node latencies: 4 nodes x 8 GPUs, all-reduce, Simple.
 * ring: 8.4 + (62 - 6) * 3.4 + 6 * 14 = 282.8 us; tree, on its own per-level latencies (NCCL's
 * tree hwLat, NVLink 4.0 and NET 14 us for Simple): 8.4 + 2 * (7 * 4.0 + 2 * 14) = 120.4 us. */
static void multinode_latency(void **state) {
  (void)state;
  struct cs_model m = plain();
  assert_close(t_us(&m, CS_COLL_ALL_REDUCE, CS_ALGO_RING, CS_PROTO_SIMPLE, 4, 8, 0), 282.8, 1e-9);
  assert_close(t_us(&m, CS_COLL_ALL_REDUCE, CS_ALGO_TREE, CS_PROTO_SIMPLE, 4, 8, 0), 120.4, 1e-9);
  /* tree-log form for the ring: inter steps 2*log2(4) = 4 instead of 6 */
  m.net_form = CS_NET_TREE_LOG;
  assert_close(t_us(&m, CS_COLL_ALL_REDUCE, CS_ALGO_RING, CS_PROTO_SIMPLE, 4, 8, 0),
               8.4 + 56 * 3.4 + 4 * 14, 1e-9);
}

/* Bandwidth term: 1 GiB all-reduce on 8 ranks of one node moves 2*7/8 GiB of bus bytes at
 * 360 GB/s; across 2 nodes with 100 GB/s per node the network is the bottleneck. */
static void bandwidth(void **state) {
  (void)state;
  struct cs_model m = plain();
  double S = 1073741824.0;
  double lat = t_us(&m, CS_COLL_ALL_REDUCE, CS_ALGO_RING, CS_PROTO_SIMPLE, 1, 8, 0);
  assert_close(t_us(&m, CS_COLL_ALL_REDUCE, CS_ALGO_RING, CS_PROTO_SIMPLE, 1, 8, S),
               lat + S * 14.0 / 8.0 / 360e9 * 1e6, 1e-9);
  m.bw[CS_TIER_NET] = 100e9;
  double lat2 = t_us(&m, CS_COLL_ALL_REDUCE, CS_ALGO_RING, CS_PROTO_SIMPLE, 2, 8, 0);
  assert_close(t_us(&m, CS_COLL_ALL_REDUCE, CS_ALGO_RING, CS_PROTO_SIMPLE, 2, 8, S),
               lat2 + S * 30.0 / 16.0 / pow(pow(360e9, -8) + pow(100e9, -8), -1.0 / 8) * 1e6, 1e-9);
  /* a tree across nodes: inside the node at the tree's own efficiency (0.645 for Simple), on the
   * network at NCCL's multi-node ratio to the ring (.92 for Simple, 120/128 of the ring's LL128),
   * whatever the tree's own efficiency says; one GPU per node has only the network side */
  double lat4 = t_us(&m, CS_COLL_ALL_REDUCE, CS_ALGO_TREE, CS_PROTO_SIMPLE, 4, 8, 0);
  assert_close(t_us(&m, CS_COLL_ALL_REDUCE, CS_ALGO_TREE, CS_PROTO_SIMPLE, 4, 8, S),
               lat4 + S * 62.0 / 32.0 /
                          pow(pow(360e9 * 0.645, -8) + pow(100e9 * 0.92, -8), -1.0 / 8) * 1e6,
               1e-9);
  m.eff[CS_ALGO_TREE][CS_PROTO_LL128] = 0.3;
  double lat5 = t_us(&m, CS_COLL_ALL_REDUCE, CS_ALGO_TREE, CS_PROTO_LL128, 4, 1, 0);
  assert_close(t_us(&m, CS_COLL_ALL_REDUCE, CS_ALGO_TREE, CS_PROTO_LL128, 4, 1, S),
               lat5 + S * 6.0 / 4.0 / (100e9 * 0.92 * 120.0 / 128.0) * 1e6, 1e-9);
  /* all-gather busbw factor (n-1)/n; LL at 0.39 efficiency */
  double lat3 = t_us(&m, CS_COLL_ALL_GATHER, CS_ALGO_RING, CS_PROTO_LL, 1, 4, 0);
  assert_close(t_us(&m, CS_COLL_ALL_GATHER, CS_ALGO_RING, CS_PROTO_LL, 1, 4, S),
               lat3 + S * 3.0 / 4.0 / (360e9 * 0.39) * 1e6, 1e-9);
}

/* The own-share term: S / (n * local) on top of the bus bytes, for every collective but
 * send_recv; it shrinks as 1/n, so bus bandwidth rises with the rank count. NVLS speeds up
 * all_reduce only: an all_gather over NVLS is no faster than the link rate. */
static void own_share(void **state) {
  (void)state;
  struct cs_model m = plain();
  m.local = 1.5e12;
  double S = 1073741824.0;
  double lat = t_us(&m, CS_COLL_ALL_GATHER, CS_ALGO_RING, CS_PROTO_SIMPLE, 1, 4, 0);
  assert_close(t_us(&m, CS_COLL_ALL_GATHER, CS_ALGO_RING, CS_PROTO_SIMPLE, 1, 4, S),
               lat + (S * 3.0 / 4.0 / 360e9 + S / 4.0 / 1.5e12) * 1e6, 1e-9);
  double lat2 = t_us(&m, CS_COLL_ALL_REDUCE, CS_ALGO_RING, CS_PROTO_SIMPLE, 1, 2, 0);
  assert_close(t_us(&m, CS_COLL_ALL_REDUCE, CS_ALGO_RING, CS_PROTO_SIMPLE, 1, 2, S),
               lat2 + (S / 360e9 + S / 2.0 / 1.5e12) * 1e6, 1e-9);
  double lat3 = t_us(&m, CS_COLL_SEND_RECV, CS_ALGO_P2P, CS_PROTO_SIMPLE, 1, 2, 0);
  assert_close(t_us(&m, CS_COLL_SEND_RECV, CS_ALGO_P2P, CS_PROTO_SIMPLE, 1, 2, S),
               lat3 + S / 360e9 * 1e6, 1e-9);
  /* busbw of a 1 GiB all_gather rises from 2 to 8 ranks */
  double bus2 =
      S * 0.5 / (t_us(&m, CS_COLL_ALL_GATHER, CS_ALGO_RING, CS_PROTO_SIMPLE, 1, 2, S) * 1e-6);
  double bus8 =
      S * 0.875 / (t_us(&m, CS_COLL_ALL_GATHER, CS_ALGO_RING, CS_PROTO_SIMPLE, 1, 8, S) * 1e-6);
  assert_true(bus8 > bus2 * 1.1);
  /* NVLS: all_reduce at eff 1.30, all_gather capped at the link rate */
  double latn = t_us(&m, CS_COLL_ALL_GATHER, CS_ALGO_NVLS, CS_PROTO_SIMPLE, 1, 8, 0);
  assert_close(t_us(&m, CS_COLL_ALL_GATHER, CS_ALGO_NVLS, CS_PROTO_SIMPLE, 1, 8, S),
               latn + (S * 7.0 / 8.0 / 360e9 + S / 8.0 / 1.5e12) * 1e6, 1e-9);
  double latr = t_us(&m, CS_COLL_ALL_REDUCE, CS_ALGO_NVLS, CS_PROTO_SIMPLE, 1, 8, 0);
  assert_close(t_us(&m, CS_COLL_ALL_REDUCE, CS_ALGO_NVLS, CS_PROTO_SIMPLE, 1, 8, S),
               latr + (S * 14.0 / 8.0 / (360e9 * 1.30) + S / 8.0 / 1.5e12) * 1e6, 1e-9);
}

/* The window: the first W bus bytes move at the link rate, the rest at the protocol's rate. */
static void window(void **state) {
  (void)state;
  struct cs_model m = plain();
  m.win[CS_ALGO_RING][CS_PROTO_LL] = 2097152;
  double lat = t_us(&m, CS_COLL_ALL_REDUCE, CS_ALGO_RING, CS_PROTO_LL, 1, 2, 0);
  assert_close(t_us(&m, CS_COLL_ALL_REDUCE, CS_ALGO_RING, CS_PROTO_LL, 1, 2, 1048576),
               lat + 1048576 / 360e9 * 1e6, 1e-9);
  assert_close(t_us(&m, CS_COLL_ALL_REDUCE, CS_ALGO_RING, CS_PROTO_LL, 1, 2, 8388608),
               lat + (2097152 / 360e9 + 6291456 / (360e9 * 0.39)) * 1e6, 1e-9);
}

/* NCCL chose Ring/LL up to 1 MiB and Ring/Simple from 2 MiB for 2 GPUs (tuning log): the
 * NCCL-table selection must do the same; forcing a pair adds force_lat. The default selection
 * takes the least time among NCCL's candidates: never more than any candidate NCCL offers, and
 * never a pair NCCL does not offer. */
static void selection(void **state) {
  (void)state;
  struct cs_model m;
  cs_model_defaults(&m);
  const unsigned enabled = m.algo_enabled;
  m.algo_enabled |= (1u << CS_ALGO_NVLS) | (1u << CS_ALGO_COLLNET);
  for (int c = 0; c < CS_COLL_COUNT; c++)
    for (int N = 1; N <= 64; N *= 4)
      for (int g = 1; g <= 8; g *= 8)
        for (double S = 8; S < 1e10; S *= 16) {
          struct cs_coll_query x = {(enum cs_coll)c, CS_ALGO_AUTO, CS_PROTO_AUTO, N * g, N, g, S};
          struct cs_coll_pred best, cand;
          if (N * g == 1) continue;
          assert_int_equal(cs_model_predict(&m, &x, &best, NULL), CS_OK);
          assert_true(cs_model_offers(&m, &x, best.algo, best.proto));
          for (int a = 0; a < CS_ALGO_COUNT; a++)
            for (int p = 0; p < CS_PROTO_COUNT; p++)
              if (cs_model_offers(&m, &x, (enum cs_algo)a, (enum cs_proto)p) &&
                  cs_model_time(&m, &x, (enum cs_algo)a, (enum cs_proto)p, &cand, NULL) == CS_OK)
                assert_true(best.time <= cand.time);
          /* SHARP never serves all_gather or reduce_scatter; NVLS, CollNet, PAT run Simple */
          if (c == CS_COLL_ALL_GATHER || c == CS_COLL_REDUCE_SCATTER)
            assert_int_not_equal(best.algo, CS_ALGO_COLLNET);
          if (best.algo == CS_ALGO_NVLS || best.algo == CS_ALGO_COLLNET || best.algo == CS_ALGO_PAT)
            assert_int_equal(best.proto, CS_PROTO_SIMPLE);
        }
  m.algo_enabled = enabled;
  m.select = CS_SELECT_NCCL_TABLE;
  struct cs_coll_query q = {CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_PROTO_AUTO, 2, 1, 2, 1048576};
  struct cs_coll_pred pr;
  assert_int_equal(cs_model_predict(&m, &q, &pr, NULL), CS_OK);
  assert_int_equal(pr.algo, CS_ALGO_RING);
  assert_int_equal(pr.proto, CS_PROTO_LL);
  q.bytes = 2097152;
  assert_int_equal(cs_model_predict(&m, &q, &pr, NULL), CS_OK);
  assert_int_equal(pr.proto, CS_PROTO_SIMPLE);
  double auto_t = pr.time;
  q.algo = CS_ALGO_RING;
  q.proto = CS_PROTO_SIMPLE;
  assert_int_equal(cs_model_predict(&m, &q, &pr, NULL), CS_OK);
  assert_close(pr.time, auto_t + m.force_lat[CS_PROTO_SIMPLE], 1e-12);
  /* a collective an algorithm cannot run */
  struct cs_error err = {0};
  q.coll = CS_COLL_BROADCAST;
  q.algo = CS_ALGO_TREE;
  assert_int_equal(cs_model_predict(&m, &q, &pr, &err), CS_ERR_UNSUPPORTED);
}

/* LL128 needs NVLink inside the node (NCCL 2.28.3 tuning.cc:531; the TUNING table NCCL printed
 * for 2 x H200 with P2P and SHM off, tests/data/h200x2-tuning/socket_all_reduce.log, has LL128
 * at 0.0 for every collective): over NVLink some size picks it, over PCIe none does, and one GPU
 * per node keeps it (NCCL's intra path is then the GPU itself). */
static void ll128_needs_nvlink(void **state) {
  (void)state;
  struct cs_model m;
  cs_model_defaults(&m);
  for (int intra = 0; intra < 2; intra++) {
    m.intra = intra ? CS_TIER_PCIE : CS_TIER_NVLINK;
    int ll128 = 0;
    for (int N = 1; N <= 16; N *= 4)
      for (double S = 8; S < 1e10; S *= 2) {
        struct cs_coll_query q = {CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_PROTO_AUTO, N * 8, N, 8, S};
        struct cs_coll_pred pr;
        assert_int_equal(cs_model_predict(&m, &q, &pr, NULL), CS_OK);
        ll128 += pr.proto == CS_PROTO_LL128;
      }
    if (intra)
      assert_int_equal(ll128, 0);
    else
      assert_true(ll128 > 0);
    struct cs_coll_query one = {CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_PROTO_AUTO, 4, 4, 1, 1 << 20};
    assert_true(cs_model_offers(&m, &one, CS_ALGO_RING, CS_PROTO_LL128));
  }
  /* a path between nodes that rules LL128 out (NCCL's socket transport) turns it off across
   * nodes, in both selections, and leaves it inside one node */
  m.intra = CS_TIER_NVLINK;
  m.net_no_ll128 = 1;
  for (int sel = 0; sel < 2; sel++) {
    m.select = sel ? CS_SELECT_NCCL_TABLE : CS_SELECT_NCCL;
    int across = 0;
    for (double S = 8; S < 1e10; S *= 2) {
      struct cs_coll_query q = {CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_PROTO_AUTO, 16, 2, 8, S};
      struct cs_coll_pred pr;
      assert_int_equal(cs_model_predict(&m, &q, &pr, NULL), CS_OK);
      across += pr.proto == CS_PROTO_LL128;
    }
    assert_int_equal(across, 0);
  }
  struct cs_coll_query node = {CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_PROTO_AUTO, 8, 1, 8, 1 << 20};
  assert_true(cs_model_offers(&m, &node, CS_ALGO_RING, CS_PROTO_LL128));
}

static void bad_queries(void **state) {
  (void)state;
  struct cs_model m;
  cs_model_defaults(&m);
  struct cs_coll_pred pr;
  struct cs_error err = {0};
  struct cs_coll_query q = {CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_PROTO_AUTO, 3, 1, 2, 8};
  assert_int_equal(cs_model_predict(&m, &q, &pr, &err), CS_ERR_RANGE);
  q.ranks = 2;
  q.bytes = -1;
  assert_int_equal(cs_model_predict(&m, &q, &pr, &err), CS_ERR_RANGE);
  q.bytes = NAN;
  assert_int_equal(cs_model_predict(&m, &q, &pr, &err), CS_ERR_RANGE);
  q.bytes = 8;
  q.nodes = 0;
  assert_int_equal(cs_model_predict(&m, &q, &pr, &err), CS_ERR_RANGE);
}

/* The defaults are NCCL's constants but for the tree's network side (per-level latency across
 * nodes and the tree's per-stage overhead), which published multi-node runs put slower. */
static void defaults_vs_nccl(void **state) {
  (void)state;
  struct cs_model d, n;
  cs_model_defaults(&d);
  cs_model_nccl_tuning(&n);
  char name[64];
  int differ = 0;
  for (int i = 0; i < CS_MODEL_NPARAMS; i++) {
    cs_model_param_name(i, name, sizeof name);
    int tree_net = strncmp(name, "tree_hop.net.", 13) == 0 || strncmp(name, "pipe.tree.", 10) == 0;
    double a = cs_model_param_get(&d, i), b = cs_model_param_get(&n, i);
    if (tree_net) {
      assert_true(a > b);
      differ++;
    } else {
      assert_true(a == b);
    }
  }
  assert_int_equal(differ, 2 * CS_PROTO_COUNT);
  assert_int_equal(d.algo_enabled, n.algo_enabled);
  assert_int_equal(d.select, n.select);
}

static void param_table(void **state) {
  (void)state;
  struct cs_model m;
  cs_model_defaults(&m);
  char name[64];
  for (int i = 0; i < CS_MODEL_NPARAMS; i++) {
    assert_non_null(cs_model_param(&m, i));
    assert_true(cs_model_param_get(&m, i) > 0);
    assert_int_equal(cs_model_param_index(cs_model_param_name(i, name, sizeof name)), i);
  }
  assert_null(cs_model_param(&m, CS_MODEL_NPARAMS));
  assert_int_equal(cs_model_param_index("bw.nvlink"), 0);
  assert_close(cs_model_param_get(&m, cs_model_param_index("hop.net.simple")), 14e-6, 1e-12);
  assert_close(cs_model_param_prior_sd(cs_model_param_index("eff.ring.simple")), 0, 0);
}

/* With nothing fitted, the band reflects the defaults' prior spread and contains the value. */
static void band(void **state) {
  (void)state;
  struct cs_cal cal;
  cs_cal_init(&cal);
  struct cs_coll_query q = {CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_PROTO_AUTO, 64, 8, 8, 1 << 20};
  struct cs_coll_pred pr;
  double lo, hi;
  assert_int_equal(cs_cal_predict(&cal, &q, &pr, &lo, &hi, NULL), CS_OK);
  assert_true(lo < pr.time && pr.time < hi);
  /* user-given network parameters are exact: the band narrows */
  double w0 = hi / lo;
  cal.source[cs_model_param_index("bw.net")] = CS_SRC_USER;
  cal.source[cs_model_param_index("hop.net.simple")] = CS_SRC_USER;
  cal.source[cs_model_param_index("hop.net.ll")] = CS_SRC_USER;
  cal.source[cs_model_param_index("hop.net.ll128")] = CS_SRC_USER;
  assert_int_equal(cs_cal_predict(&cal, &q, &pr, &lo, &hi, NULL), CS_OK);
  assert_true(hi / lo < w0);
  cs_cal_fini(&cal);
}

/* Beyond the calibration's largest node count each doubling adds CS_CAL_EXTRAP_SD in log time, in
 * quadrature (model/cal.h): at 64 nodes a calibration that measured 16 (two doublings) has a
 * log-sigma of at least sqrt(s0^2 + 2 x CS_CAL_EXTRAP_SD^2), s0 that of one that measured 64; the
 * other network form may widen it further, never narrow it. */
static void extrapolation_band(void **state) {
  (void)state;
  struct cs_cal cal;
  cs_cal_init(&cal);
  cal.quality.net_determined = 1;
  cal.quality.max_nodes = 64;
  /* every parameter exact and a 2% noise: the band is the noise and the extrapolation term */
  for (int i = 0; i < CS_MODEL_NPARAMS; i++)
    cal.source[i] = CS_SRC_USER;
  cal.quality.noise_rel = 0.02;
  struct cs_coll_query q = {CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_PROTO_AUTO, 512, 64, 8, 1 << 20};
  struct cs_coll_pred pr;
  double lo, hi;
  assert_int_equal(cs_cal_predict(&cal, &q, &pr, &lo, &hi, NULL), CS_OK);
  const double t = pr.time, s0 = log(hi / t) / 1.96;
  assert_close(s0, log1p(0.02), 1e-9);
  cal.quality.max_nodes = 16;
  assert_int_equal(cs_cal_predict(&cal, &q, &pr, &lo, &hi, NULL), CS_OK);
  assert_close(pr.time, t, 1e-12);
  const double s = sqrt(s0 * s0 + 2 * CS_CAL_EXTRAP_SD * CS_CAL_EXTRAP_SD);
  assert_true(s > s0 * 1.01); /* the term is not lost in the rest */
  assert_true(hi >= t * exp(1.96 * s) * (1 - 1e-9));
  assert_true(lo <= t * exp(-1.96 * s) * (1 + 1e-9));
  /* within the measured range nothing is added */
  q.nodes = 16, q.ranks = 128;
  double lo16, hi16;
  assert_int_equal(cs_cal_predict(&cal, &q, &pr, &lo16, &hi16, NULL), CS_OK);
  cal.quality.max_nodes = 64;
  assert_int_equal(cs_cal_predict(&cal, &q, &pr, &lo, &hi, NULL), CS_OK);
  assert_close(hi16, hi, 1e-12);
  assert_close(lo16, lo, 1e-12);
  /* inside the range, a count the calibration did not measure is as far from what it did as the
   * nearest measured count: 4 nodes between 1 and 16 measured is two doublings from either */
  cal.quality.max_nodes = 16;
  cal.quality.node_counts[0] = 1, cal.quality.node_counts[1] = 16;
  cal.quality.n_node_counts = 2;
  assert_int_equal(cs_cal_predict(&cal, &q, &pr, &lo16, &hi16, NULL), CS_OK);
  assert_close(log(hi16 / pr.time) / 1.96, s0, 1e-9); /* 16 was measured */
  q.nodes = 4, q.ranks = 32;
  assert_close(cs_cal_unmeasured_doublings(&cal.quality, 4), 2.0, 1e-12);
  assert_int_equal(cs_cal_predict(&cal, &q, &pr, &lo, &hi, NULL), CS_OK);
  assert_close(log(hi / pr.time) / 1.96, s, 1e-9);
  assert_close(log(pr.time / lo) / 1.96, s, 1e-9);
  cs_cal_fini(&cal);
}

/* A topology's nominal network rate is not exact in the band: with every other parameter exact
 * and no noise, the half-width in ln time of a bandwidth-bound all-reduce across two nodes is
 * |d ln t / d ln bw.net| x CS_CAL_TOPO_NET_SD (1.96 sigma each way), the derivative taken here by
 * central differences on the model itself; a rate the user gave stays exact (no band). */
static void topology_net_band(void **state) {
  (void)state;
  struct cs_cal cal;
  cs_cal_init(&cal);
  for (int i = 0; i < CS_MODEL_NPARAMS; i++)
    cal.source[i] = CS_SRC_USER;
  const int net = cs_model_param_index("bw.net");
  *cs_model_param(&cal.model, net) = 50e9;
  cal.quality.net_determined = 1;
  cal.quality.max_nodes = 2;
  struct cs_coll_query q = {CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_PROTO_AUTO, 16, 2, 8, 1 << 30};
  struct cs_coll_pred pr, up, dn;
  double lo, hi;
  assert_int_equal(cs_cal_predict(&cal, &q, &pr, &lo, &hi, NULL), CS_OK);
  assert_close(hi, pr.time, 1e-12);
  assert_close(lo, pr.time, 1e-12);
  cal.source[net] = CS_SRC_TOPO;
  assert_int_equal(cs_cal_predict(&cal, &q, &pr, &lo, &hi, NULL), CS_OK);
  struct cs_model m = cal.model;
  *cs_model_param(&m, net) = 50e9 * exp(1e-3);
  assert_int_equal(cs_model_predict(&m, &q, &up, NULL), CS_OK);
  *cs_model_param(&m, net) = 50e9 * exp(-1e-3);
  assert_int_equal(cs_model_predict(&m, &q, &dn, NULL), CS_OK);
  double g = log(up.time / dn.time) / 2e-3;
  printf(
      "# 1 GiB all_reduce on 2 x 8: d ln t / d ln bw.net = %.3f, band %.1f..%.1f us around %.1f\n",
      g, lo * 1e6, hi * 1e6, pr.time * 1e6);
  assert_true(g < -0.5); /* bandwidth-bound: the network rate sets most of it */
  assert_close(log(hi / pr.time) / 1.96, fabs(g) * CS_CAL_TOPO_NET_SD, 1e-3);
  assert_close(log(pr.time / lo) / 1.96, fabs(g) * CS_CAL_TOPO_NET_SD, 1e-3);
  cs_cal_fini(&cal);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(topology_net_band),
      cmocka_unit_test(nccl_latencies),
      cmocka_unit_test(multinode_latency),
      cmocka_unit_test(bandwidth),
      cmocka_unit_test(window),
      cmocka_unit_test(own_share),
      cmocka_unit_test(selection),
      cmocka_unit_test(bad_queries),
      cmocka_unit_test(param_table),
      cmocka_unit_test(defaults_vs_nccl),
      cmocka_unit_test(band),
      cmocka_unit_test(ll128_needs_nvlink),
      cmocka_unit_test(extrapolation_band),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
