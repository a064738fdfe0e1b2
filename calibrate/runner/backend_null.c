/* backend_null.c — the null backend: no library, no device, no network; a timing model.
 *
 * Like fio's null engine, it exists so that the harness (runner.c) can be run and tested anywhere:
 * the shapes cut from one launch, the trials until the spread is small, the CSV appended and
 * flushed row by row, --resume, and what a hung or killed run leaves behind. One process drives
 * every rank ("thread" launch) and the ranks are spread over simulated nodes, so 1..N nodes x
 * 1..G ranks per node come out of one launch just as they do from an MPI or NCCL launch.
 *
 * An operation of `bytes` takes t = lat + bytes / bw, with bw the intra-node bandwidth for a group
 * inside one node and the inter-node bandwidth for a group that spans nodes; each timed batch is
 * scaled by (1 + noise * u), u uniform in [-1, 1) from a generator seeded per run, so the same
 * settings give the same rows. No time passes: the clock is the model's.
 *
 * Settings come from $CS_NULL_BACKEND, "key=value,..." (all optional):
 *   nodes=N  gpus=G      the simulated launch: N nodes of G ranks [1 node of 8]
 *   lat_us=A             latency of one operation [10]
 *   bw_GBps=B            intra-node bandwidth, 1e9 bytes/s [100]
 *   net_bw_GBps=B        inter-node bandwidth [bw_GBps / 4]
 *   noise=F  seed=S      relative noise per timed batch and its seed [0, 1]
 *   hang_after=K         after K points (K rows written), the next one never returns: a hung
 *                        peer, which only the executable's watchdog ends
 *   die_after=K          after K points, the process is killed (SIGKILL), as by a scheduler
 * --check runs an all_reduce of ones over the simulated ranks and checks the sum.
 */
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runner.h"

struct null_state {
  int nodes, gpus;
  double lat_s, bw, net_bw; /* seconds, bytes/s */
  double noise;
  uint64_t rng;
  long hang_after, die_after;
  long points, groups; /* points begun, groups opened */
  long last_group;     /* the point last prepared: group serial, collective, bytes */
  enum cs_coll last_coll;
  double last_bytes;
};

struct null_group {
  struct null_state *s;
  long serial;
  int ranks, spans_nodes;
  double op_s;  /* the prepared operation's modelled time */
  double clock; /* seconds accumulated since clock_start */
  int timing;
};

static const struct cs_run_variant null_variants[] = {
    {CS_ALGO_AUTO, CS_PROTO_AUTO, 0, CS_COLL_ALL_REDUCE}};
static const struct cs_run_variant null_variants_all[] = {
    {CS_ALGO_AUTO, CS_PROTO_AUTO, 0, CS_COLL_ALL_REDUCE},
    {CS_ALGO_RING, CS_PROTO_SIMPLE, 0, CS_COLL_ALL_REDUCE},
    {CS_ALGO_TREE, CS_PROTO_LL, 0, CS_COLL_ALL_REDUCE}};

/* xorshift64*: small, seedable, the same sequence everywhere */
static double uniform(uint64_t *x) {
  *x ^= *x >> 12;
  *x ^= *x << 25;
  *x ^= *x >> 27;
  return (double)((*x * 2685821657736338717ULL) >> 11) * 0x1p-53;
}

/* Reads $CS_NULL_BACKEND into s; CS_ERR_USAGE naming the item that is wrong. */
static enum cs_status null_settings(struct null_state *s, struct cs_error *err) {
  static const struct {
    const char *key;
    double min, max;
  } keys[] = {
      {"nodes", 1, 64},           {"gpus", 1, 64},   {"lat_us", 0, 1e9}, {"bw_GBps", 1e-6, 1e9},
      {"net_bw_GBps", 1e-6, 1e9}, {"noise", 0, 0.9}, {"seed", 0, 1e15},  {"hang_after", 0, 1e15},
      {"die_after", 0, 1e15}};
  double val[sizeof keys / sizeof keys[0]] = {1, 8, 10, 100, -1, 0, 1, 0, 0};
  const char *env = getenv("CS_NULL_BACKEND");
  char buf[512];
  snprintf(buf, sizeof buf, "%s", env ? env : "");
  char *save = NULL;
  for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(item, '=');
    size_t k = 0;
    if (eq) {
      *eq = '\0';
      while (k < sizeof keys / sizeof keys[0] && strcmp(keys[k].key, item) != 0)
        k++;
    }
    char *end = NULL;
    double v = eq && k < sizeof keys / sizeof keys[0] ? strtod(eq + 1, &end) : NAN;
    if (end == NULL || end == eq + 1 || *end != '\0' || !(v >= keys[k].min && v <= keys[k].max))
      return cs_error_set(
          err, CS_ERR_USAGE,
          "CS_NULL_BACKEND: \"%s%s%s\": expected KEY=NUMBER with KEY one of nodes, "
          "gpus, lat_us, bw_GBps, net_bw_GBps, noise, seed, hang_after, die_after, in "
          "range",
          item, eq ? "=" : "", eq ? eq + 1 : "");
    val[k] = v;
  }
  s->nodes = (int)val[0];
  s->gpus = (int)val[1];
  s->lat_s = val[2] * 1e-6;
  s->bw = val[3] * 1e9;
  s->net_bw = val[4] > 0 ? val[4] * 1e9 : s->bw / 4;
  s->noise = val[5];
  s->rng = (uint64_t)val[6] * 0x9E3779B97F4A7C15ULL + 1;
  s->hang_after = (long)val[7];
  s->die_after = (long)val[8];
  s->last_group = -1;
  return CS_OK;
}

static enum cs_status null_init(const struct cs_run_opts *o, int by_mpi, void **state, int *nlocal,
                                enum cs_launch *launch, struct cs_error *err) {
  (void)o;
  if (by_mpi)
    return cs_error_set(err, CS_ERR_USAGE,
                        "the null backend simulates every rank in one process: start it without "
                        "an MPI launcher");
  struct null_state *s = calloc(1, sizeof *s);
  if (s == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  enum cs_status st = null_settings(s, err);
  if (st != CS_OK) {
    free(s);
    return st;
  }
  *state = s;
  *nlocal = s->nodes * s->gpus;
  *launch = CS_LAUNCH_THREAD;
  return CS_OK;
}

static void null_rank_node(void *state, int rank, char *key, size_t len) {
  const struct null_state *s = state;
  snprintf(key, len, "null%d", rank / s->gpus);
}

static enum cs_status null_start(void *state, const struct cs_run_world *w, struct cs_error *err) {
  const struct null_state *s = state;
  if (w->nnodes != s->nodes || w->max_gpn != s->gpus)
    return cs_error_set(err, CS_ERR_EXTERNAL,
                        "null backend: the harness sees %d nodes of %d, not %d of %d", w->nnodes,
                        w->max_gpn, s->nodes, s->gpus);
  return CS_OK;
}

static enum cs_status null_group_open(void *state, const int *members, struct cs_run_variant v,
                                      double max_bytes, void **grp, struct cs_error *err) {
  (void)v, (void)max_bytes;
  struct null_state *s = state;
  struct null_group *g = calloc(1, sizeof *g);
  if (g == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  g->s = s;
  g->serial = s->groups++;
  int first_node = -1;
  for (int r = 0; r < s->nodes * s->gpus; r++) {
    if (!members[r]) continue;
    g->ranks++;
    if (first_node < 0) first_node = r / s->gpus;
    if (r / s->gpus != first_node) g->spans_nodes = 1;
  }
  *grp = g;
  return CS_OK;
}

static enum cs_status null_prepare(void *grp, enum cs_coll c, enum cs_dtype d, double bytes,
                                   int in_place, struct cs_error *err) {
  (void)d, (void)in_place, (void)err;
  struct null_group *g = grp;
  struct null_state *s = g->s;
  if (g->serial != s->last_group || c != s->last_coll || bytes != s->last_bytes) {
    s->last_group = g->serial, s->last_coll = c, s->last_bytes = bytes;
    s->points++;
    if (s->die_after > 0 && s->points == s->die_after + 1) raise(SIGKILL);
    while (s->hang_after > 0 && s->points == s->hang_after + 1) {
      struct timespec ts = {1, 0}; /* a peer that never answers */
      nanosleep(&ts, NULL);
    }
  }
  g->op_s = g->s->lat_s + bytes / (g->spans_nodes ? g->s->net_bw : g->s->bw);
  g->clock = 0;
  g->timing = 0;
  return CS_OK;
}

static enum cs_status null_issue(void *grp, int k, struct cs_error *err) {
  (void)err;
  struct null_group *g = grp;
  if (g->timing) g->clock += k * g->op_s;
  return CS_OK;
}

static enum cs_status null_clock_start(void *grp, struct cs_error *err) {
  (void)err;
  struct null_group *g = grp;
  g->clock = 0;
  g->timing = 1;
  return CS_OK;
}

static enum cs_status null_clock_stop(void *grp, double *sec, struct cs_error *err) {
  (void)err;
  struct null_group *g = grp;
  double u = 2 * uniform(&g->s->rng) - 1;
  *sec = g->clock * (1 + g->s->noise * u);
  g->timing = 0;
  return CS_OK;
}

static enum cs_status null_group_max(void *grp, double *t, struct cs_error *err) {
  (void)grp, (void)t, (void)err; /* one process holds every rank: its time is the maximum */
  return CS_OK;
}

static enum cs_status null_check(void *grp, struct cs_error *err) {
  const struct null_group *g = grp;
  double sum = 0;
  for (int r = 0; r < g->ranks; r++)
    sum += 1.0;
  if (sum != g->ranks)
    return cs_error_set(err, CS_ERR_EXTERNAL, "null backend: all_reduce sum %g, want %d", sum,
                        g->ranks);
  return CS_OK;
}

static void null_group_close(void *grp) {
  free(grp);
}

static void null_describe(void *state, struct cs_meas_set *set) {
  const struct null_state *s = state;
  char buf[160];
  snprintf(buf, sizeof buf, "t = %g us + bytes / (%g GB/s in a node, %g GB/s across), noise %g",
           s->lat_s * 1e6, s->bw / 1e9, s->net_bw / 1e9, s->noise);
  cs_meas_set_meta(set, "null_model", buf, NULL);
}

static void null_fini(void *state) {
  free(state);
}

const struct cs_backend cs_backend_null = {
    .name = "null",
    .variants_default = null_variants,
    .nvariants_default = 1,
    .variants_all = null_variants_all,
    .nvariants_all = 3,
    .init = null_init,
    .start = null_start,
    .group_open = null_group_open,
    .prepare = null_prepare,
    .issue = null_issue,
    .clock_start = null_clock_start,
    .clock_stop = null_clock_stop,
    .group_max = null_group_max,
    .check = null_check,
    .group_close = null_group_close,
    .describe = null_describe,
    .fini = null_fini,
    .rank_node = null_rank_node,
};
