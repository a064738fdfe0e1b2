/* test_nccl_choice.c — NCCL's algorithm/protocol choice per size, as NCCL logged it
 * (NCCL_DEBUG_SUBSYS=TUNING "AllReduce: N Bytes -> Algo X proto Y" lines), against
 *   1. NCCL's rule replayed on the table the same log printed (cs_nccl_tuning_pick: NCCL 2.28.3
 *      tuning.cc ncclTopoGetAlgoTime + enqueue.cc topoGetAlgoInfo), and
 *   2. commscale's own pick under --select nccl-table (cs_model_predict with CS_SELECT_NCCL_TABLE):
 *      the NCCL-anchored default constants, the intra-node tier NCCL used (NVLink, or its network
 *      transport when the log's command disabled P2P and SHM, at the bandwidth NCCL's table gives
 *      its ring Simple all_reduce: the link rate NCCL assumed, as a topology file would state it).
 * for every size and collective of every bundled TUNING log. Prints the match counts per log;
 * every choice must match. The shape (1 node x -g N GPUs) and forced NCCL_ALGO/NCCL_PROTO come
 * from the log's "### ENV command" line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel.h"
#include "nccl_tuning.h"
#include "testutil.h"

/* Every choice of every log must be reproduced by both checks. On the socket path (P2P and SHM
 * off) NCCL disables LL128 (its table prints bandwidth 0: on Hopper LL128 needs the path between
 * "nodes" within PATH_PXN, tuning.cc:480-491; a socket through the CPU is beyond it): the model
 * takes that from the table (net_no_ll128), as a tcp topology sets it; and NCCL counts every GPU
 * of the host a node (its INIT line: 4 x H100 socket nRanks 4 nNodes 4). Across nodes
 * (tests/data/h100x4-hostid, 2026-11-27: one 4 x H100 host split by NCCL_HOSTID into 2 nodes of 2
 * GPUs and 4 of 1, NCCL's socket transport between them) the model's network rate is the one
 * NCCL's table assumed. What it took (nccl_table_pick in model/costmodel.c; before, these logs
 * missed 1-6 choices each): the ring's plateau factor across nodes, which NCCL's rule on its own
 * table needs too (32 and 64 KiB all_reduce); a ring broadcast at one hop; NCCL's tree all_reduce
 * at half its bus rate on a graph twice the ring's at two nodes or with two GPUs per node, x .85
 * with one; PAT on that graph (32 KiB all_gather and reduce_scatter at 2 x 1). */
static const char *const logs[] = {
    "h200x2/nccl-tests-tuning-debug.log",
    "h200x2-tuning/default_all_reduce.log",
    "h200x2-tuning/default_all_gather.log",
    "h200x2-tuning/default_reduce_scatter.log",
    "h200x2-tuning/default_broadcast.log",
    "h200x2-tuning/socket_all_reduce.log",
    "h200x2-tuning/socket_all_gather.log",
    "h200x2-tuning/socket_reduce_scatter.log",
    "h200x2-tuning/socket_broadcast.log",
    "h200x2-tuning/forced_ALGO_Ring_all_reduce.log",
    "h200x2-tuning/forced_ALGO_Tree_all_reduce.log",
    "h200x2-tuning/forced_PROTO_Simple_all_reduce.log",
    "h200x2-tuning/forced_PROTO_LL128_all_reduce.log",
    "h100x4-tuning/default_all_reduce.log",
    "h100x4-tuning/default_all_gather.log",
    "h100x4-tuning/default_reduce_scatter.log",
    "h100x4-tuning/default_broadcast.log",
    "h100x4-tuning/socket_all_reduce.log",
    "h100x4-tuning/socket_all_gather.log",
    "h100x4-tuning/socket_reduce_scatter.log",
    "h100x4-tuning/socket_broadcast.log",
    "h100x4-tuning/forced_ALGO_Ring_all_reduce.log",
    "h100x4-tuning/forced_ALGO_Tree_all_reduce.log",
    "h100x4-tuning/forced_PROTO_Simple_all_reduce.log",
    "h100x4-tuning/forced_PROTO_LL128_all_reduce.log",
    "h200x4-tuning/default_all_reduce.log",
    "h200x4-tuning/default_all_gather.log",
    "h200x4-tuning/default_reduce_scatter.log",
    "h200x4-tuning/default_broadcast.log",
    "h200x4-tuning/socket_all_reduce.log",
    "h200x4-tuning/socket_all_gather.log",
    "h200x4-tuning/socket_reduce_scatter.log",
    "h200x4-tuning/socket_broadcast.log",
    "h200x4-tuning/forced_ALGO_Ring_all_reduce.log",
    "h200x4-tuning/forced_ALGO_Tree_all_reduce.log",
    "h200x4-tuning/forced_PROTO_Simple_all_reduce.log",
    "h200x4-tuning/forced_PROTO_LL128_all_reduce.log",
    "h100x4-hostid/default_all_reduce_1x4.log",
    "h100x4-hostid/default_all_gather_1x4.log",
    "h100x4-hostid/default_reduce_scatter_1x4.log",
    "h100x4-hostid/default_broadcast_1x4.log",
    "h100x4-hostid/default_all_reduce_2x2.log",
    "h100x4-hostid/default_all_gather_2x2.log",
    "h100x4-hostid/default_reduce_scatter_2x2.log",
    "h100x4-hostid/default_broadcast_2x2.log",
    "h100x4-hostid/default_all_reduce_4x1.log",
    "h100x4-hostid/default_all_gather_4x1.log",
    "h100x4-hostid/default_reduce_scatter_4x1.log",
    "h100x4-hostid/default_broadcast_4x1.log",
    "h200x2-hostid/default_all_reduce_1x2.log",
    "h200x2-hostid/default_all_gather_1x2.log",
    "h200x2-hostid/default_reduce_scatter_1x2.log",
    "h200x2-hostid/default_broadcast_1x2.log",
    "h200x2-hostid/default_all_reduce_2x1.log",
    "h200x2-hostid/default_all_gather_2x1.log",
    "h200x2-hostid/default_reduce_scatter_2x1.log",
    "h200x2-hostid/default_broadcast_2x1.log",
};

struct shape {
  int gpus, nodes, socket;
  enum cs_algo algo;
  enum cs_proto proto;
};

/* The "### ..." command line: -g N, NCCL_P2P_DISABLE=1 with NCCL_SHM_DISABLE=1, NCCL_ALGO,
 * NCCL_PROTO. The nodes are NCCL's own count (t->nodes, from its INIT line; with P2P and SHM
 * disabled NCCL counts each GPU of one host as its own node: PAT, defined for one GPU per node
 * only, is then chosen), one where the log has none. */
static struct shape read_shape(const char *path) {
  struct shape s = {1, 1, 0, CS_ALGO_AUTO, CS_PROTO_AUTO};
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char line[1024], cmd[1024] = "";
  while (cmd[0] == 0 && fgets(line, sizeof line, f))
    if (strncmp(line, "###", 3) == 0) snprintf(cmd, sizeof cmd, "%s", line);
  fclose(f);
  snprintf(line, sizeof line, "%s", cmd);
  assert_int_equal(strncmp(line, "###", 3), 0);
  const char *g = strstr(line, " -g ");
  assert_non_null(g);
  s.gpus = atoi(g + 4);
  /* one process per GPU under mpirun: -np processes of -g GPUs each */
  const char *np = strstr(line, " -np ");
  if (np) s.gpus *= atoi(np + 5);
  s.socket = strstr(line, "NCCL_P2P_DISABLE=1") && strstr(line, "NCCL_SHM_DISABLE=1");
  char v[32];
  const char *e = strstr(line, "NCCL_ALGO=");
  if (e && sscanf(e + 10, "%31[A-Za-z]", v) == 1) assert_int_equal(cs_algo_parse(v, &s.algo), 0);
  e = strstr(line, "NCCL_PROTO=");
  if (e && sscanf(e + 11, "%31[A-Za-z0-9]", v) == 1)
    assert_int_equal(cs_proto_parse(v, &s.proto), 0);
  return s;
}

static void every_log(void **state) {
  (void)state;
  struct cs_nccl_tuning *t = malloc(sizeof *t);
  assert_non_null(t);
  int bad = 0;
  for (size_t i = 0; i < sizeof logs / sizeof logs[0]; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", CS_TEST_DATA, logs[i]);
    struct shape s = read_shape(path);
    struct cs_error err = {0};
    assert_int_equal(cs_nccltests_read_tuning(path, t, &err), CS_OK);
    assert_true(t->n_choices > 0);
    if (t->nodes > 0) s.nodes = t->nodes;
    struct cs_model m;
    cs_model_defaults(&m);
    m.select = CS_SELECT_NCCL_TABLE;
    if (s.socket) {
      /* NCCL's network transport between the GPUs of one host (NCCL counts each GPU a node) */
      m.intra = CS_TIER_NET;
    }
    if (s.nodes > 1 || s.socket) {
      /* nodes of one host told apart by NCCL_HOSTID, or the socket path: the network is NCCL's
       * socket transport over the host's interface, at the rate NCCL's table gives its ring
       * Simple all_reduce (bus rate: algorithm bandwidth x 2 (n - 1) / n), as a topology file
       * would state it */
      m.bw[CS_TIER_NET] = 1e9 * t->bw_GBps[CS_COLL_ALL_REDUCE][CS_ALGO_RING][CS_PROTO_SIMPLE] *
                          2.0 * (s.gpus - 1) / s.gpus;
    }
    /* what the log's table says of the path between nodes: LL128 given no bandwidth is off */
    m.net_no_ll128 = !(t->bw_GBps[CS_COLL_ALL_REDUCE][CS_ALGO_RING][CS_PROTO_LL128] > 0);
    int rule = 0, ours = 0;
    for (int k = 0; k < t->n_choices; k++) {
      enum cs_coll c = t->choice[k].coll;
      /* NCCL prints count x type size (per rank for all_gather); it prices the larger of the send
       * and receive sizes (enqueue.cc getAlgoInfo), nccl-tests' size */
      double bytes = t->choice[k].bytes;
      if (c == CS_COLL_ALL_GATHER || c == CS_COLL_REDUCE_SCATTER) bytes *= s.gpus;
      enum cs_algo a = CS_ALGO_AUTO;
      enum cs_proto p = CS_PROTO_AUTO;
      int r = cs_nccl_tuning_pick(t, c, bytes, s.algo, s.proto, &a, &p) >= 0 &&
              a == t->choice[k].algo && p == t->choice[k].proto;
      struct cs_coll_query q = {c, s.algo, s.proto, s.gpus, s.nodes, s.gpus / s.nodes, bytes};
      struct cs_coll_pred pr;
      int o = cs_model_predict(&m, &q, &pr, NULL) == CS_OK && pr.algo == t->choice[k].algo &&
              pr.proto == t->choice[k].proto;
      if (!r || !o)
        printf("  %s: %s %.0f B: NCCL %s/%s, NCCL's rule %s/%s%s, commscale %s/%s%s\n", logs[i],
               cs_coll_name(c), bytes, cs_algo_name(t->choice[k].algo),
               cs_proto_name(t->choice[k].proto), cs_algo_name(a), cs_proto_name(p), r ? "" : " *",
               cs_algo_name(pr.algo), cs_proto_name(pr.proto), o ? "" : " *");
      rule += r;
      ours += o;
    }
    printf("%-48s NCCL's rule on its table %3d/%3d, commscale nccl-table %3d/%3d\n", logs[i], rule,
           t->n_choices, ours, t->n_choices);
    bad += (rule != t->n_choices) + (ours != t->n_choices);
  }
  free(t);
  assert_int_equal(bad, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(every_log)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
