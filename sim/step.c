/* step.c — see step.h.
 *
 * cs_sim_alloc turns the plan into per-(stage, chunk) durations of one micro-batch's forward and
 * backward, at three levels (the predicted collective times, their low and their high bounds),
 * and per-layer gradient bytes and backward durations for the bucket queue. cs_sim_run replays
 * the pipeline schedule and, per stage, the data-parallel queue during each chunk's last
 * backward, then adds the flush-time collectives and the optimizer.
 *
 * The bucket queue is solved in closed form per layer: gradients appear at a uniform rate during
 * a layer's backward, so the k buckets completed inside one layer arrive evenly spaced, and a
 * FIFO stream that serves each in c seconds finishes the last at
 *     max(free + k c, a_1 + k c, a_k + c)
 * (the finish time of evenly spaced arrivals is linear in the arrival index, so its maximum sits
 * at an end). This keeps a run at O(layers), however many buckets there are.
 *
 * Pricing the plan (cs_sim_prepare) lives in step_prepare.c; the structures both files share are
 * in step_impl.h.
 */
#include "step.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework.h"
#include "map.h"
#include "pipeline.h"
#include "step_impl.h"

/* ---- the shared collective-cost cache ----------------------------------------------------- */

/* Everything a cached prediction depends on besides the calibration: the parameters
 * cs_topo_model_apply may change, the sources it marks, the shape, the collective and the size.
 * Zeroed before filling, so that padding compares equal. */
struct ckey {
  double bw[CS_TIER_COUNT], link_max[CS_TIER_COUNT];
  double hop[CS_PROTO_COUNT], tree_hop[CS_PROTO_COUNT];
  double bytes;
  unsigned algo_enabled, what;
  int intra, no_ll128, coll, ranks, nodes, gpn;
};

struct cslot {
  struct ckey k;
  double t[NLEV];
  int algo, proto, used;
};

struct cs_sim_cache {
  const struct cs_cal *cal;
  struct cs_framework fw; /* the last profile loaded by name (fw.name[0] = none) */
  struct cslot *slot;
  size_t cap, n; /* cap a power of two */
  long hits, misses;
};

enum cs_status cs_sim_cache_alloc(struct cs_sim_cache **out, struct cs_error *err) {
  struct cs_sim_cache *c = calloc(1, sizeof *c);
  if (c) c->slot = calloc(c->cap = 4096, sizeof *c->slot);
  if (!c || !c->slot) {
    free(c);
    *out = NULL;
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  }
  *out = c;
  return CS_OK;
}

void cs_sim_cache_free(struct cs_sim_cache *c) {
  if (!c) return;
  free(c->slot);
  free(c);
}

long cs_sim_cache_hits(const struct cs_sim_cache *c) {
  return c ? c->hits : 0;
}
long cs_sim_cache_misses(const struct cs_sim_cache *c) {
  return c ? c->misses : 0;
}

static size_t khash(const struct ckey *k) {
  const unsigned char *b = (const unsigned char *)k;
  unsigned long long h = 1469598103934665603ull;
  for (size_t i = 0; i < sizeof *k; i++)
    h = (h ^ b[i]) * 1099511628211ull;
  return (size_t)(h ^ (h >> 29));
}

static struct cslot *cache_find(struct cs_sim_cache *c, const struct ckey *k) {
  size_t i = khash(k) & (c->cap - 1);
  while (c->slot[i].used && memcmp(&c->slot[i].k, k, sizeof *k) != 0)
    i = (i + 1) & (c->cap - 1);
  return &c->slot[i];
}

/* Makes room for one more entry; on failure the cache simply stops growing (still correct). */
static int cache_room(struct cs_sim_cache *c) {
  if (2 * (c->n + 1) <= c->cap) return 1;
  struct cslot *old = c->slot;
  size_t oc = c->cap;
  struct cslot *ns = calloc(2 * oc, sizeof *ns);
  if (!ns) return 0;
  c->slot = ns;
  c->cap = 2 * oc;
  for (size_t i = 0; i < oc; i++)
    if (old[i].used) *cache_find(c, &old[i].k) = old[i];
  free(old);
  return 1;
}

/* ---- groups ------------------------------------------------------------------------------- */

/* The indices of the model parameters map_group reads, looked up by name once (the names are
 * fixed; a lookup by name is a string search over the table). */
static int pidx_bw_net, pidx_hop_net_simple, pidx_bw_pcie, pidx_bw_nvlink;
static pthread_once_t pidx_once = PTHREAD_ONCE_INIT;
static void pidx_build(void) {
  pidx_bw_net = cs_model_param_index("bw.net");
  pidx_hop_net_simple = cs_model_param_index("hop.net.simple");
  pidx_bw_pcie = cs_model_param_index("bw.pcie");
  pidx_bw_nvlink = cs_model_param_index("bw.nvlink");
}

static enum cs_status map_group(struct cs_sim *s, int kind, int ndims, const int *sizes, int dim,
                                int pair, struct cs_error *err) {
  const struct cs_topology *t = s->in.topology;
  struct cs_topo_group g;
  enum cs_status st = cs_topo_map(t, ndims, sizes, dim, 0, 1, &g, err);
  if (st != CS_OK) return st;
  struct sgroup *sg = &s->grp[kind];
  sg->exists = 1;
  sg->cal = *s->in.cal; /* shares the covariance: never finalised */
  /* per parameter: fitted > user-given > topology nominal > default (cs_topo_cal_apply) */
  cs_topo_cal_apply(t, &g, t->net.hypothetical ? CS_TOPO_NET_WHAT_IF : 0, &sg->cal);
  pthread_once(&pidx_once, pidx_build);
  const int marks[] = {pidx_bw_nvlink, pidx_bw_pcie, pidx_bw_net, pidx_hop_net_simple};
  sg->what = 0;
  for (unsigned i = 0; i < sizeof marks / sizeof marks[0]; i++)
    if (sg->cal.source[marks[i]] == CS_SRC_TOPO) sg->what |= 1u << i;
  sg->q.coll = CS_COLL_ALL_REDUCE;
  sg->q.algo = CS_ALGO_AUTO;
  sg->q.proto = CS_PROTO_AUTO;
  cs_topo_group_query(&g, &sg->q);
  if (pair) { /* a point-to-point pair of this dimension: neighbouring stages */
    sg->q.ranks = 2;
    sg->q.nodes = g.domains > 1 ? 2 : 1;
    sg->q.gpus_per_node = 2 / sg->q.nodes;
  }
  return CS_OK;
}

static enum cs_status map_groups(struct cs_sim *s, struct cs_error *err) {
  const struct cs_plan *p = &s->plan;
  /* Megatron-LM's order, fastest first: tp, cp, ep, dp, pp. Expert parallelism is carved out of
   * the data-parallel ranks; when ep does not divide dp (it borrows from cp) the expert groups
   * are approximated by the dense data-parallel layout. */
  int five = p->dp % p->ep == 0;
  int s5[5] = {p->tp, p->cp, p->ep, five ? p->dp / p->ep : 1, p->pp};
  int s3[3] = {p->tp, p->dp * p->cp, p->pp};
  enum cs_status st = CS_OK;
  if (p->tp > 1) st = map_group(s, CS_GROUP_TP, 3, s3, 0, 0, err);
  if (st == CS_OK && p->cp > 1) st = map_group(s, CS_GROUP_CP, 5, s5, 1, 0, err);
  if (st == CS_OK && p->ep > 1)
    st = five ? map_group(s, CS_GROUP_EP, 5, s5, 2, 0, err)
              : map_group(s, CS_GROUP_EP, 3, s3, 1, 0, err);
  if (cs_plan_hybrid_shard(p)) {
    /* hybrid sharding (cp = ep = 1): the shard groups fastest, then the replicas */
    int s4[4] = {p->tp, p->shard, p->dp / p->shard, p->pp};
    if (st == CS_OK) st = map_group(s, CS_GROUP_DP, 4, s4, 1, 0, err);
    if (st == CS_OK) st = map_group(s, CS_GROUP_EDP, 4, s4, 1, 0, err);
    if (st == CS_OK) st = map_group(s, CS_GROUP_REPLICA, 4, s4, 2, 0, err);
  } else {
    if (st == CS_OK && p->dp * p->cp > 1) st = map_group(s, CS_GROUP_DP, 3, s3, 1, 0, err);
    if (st == CS_OK && p->dp * p->cp / p->ep > 1)
      st = five && p->cp == 1 ? map_group(s, CS_GROUP_EDP, 5, s5, 3, 0, err)
                              : map_group(s, CS_GROUP_EDP, 3, s3, 1, 0, err);
  }
  if (st == CS_OK && p->pp > 1) st = map_group(s, CS_GROUP_PP, 3, s3, 2, 1, err);
  if (st == CS_OK && p->pp > 1) st = map_group(s, CS_GROUP_EMBED, 3, s3, 2, 1, err);
  /* a group whose size differs from the layout's (EP/EDP approximations) keeps its true size
   * on the fullest domain */
  if (st == CS_OK && p->ep > 1 && !five) {
    struct cs_coll_query *q = &s->grp[CS_GROUP_EP].q;
    q->ranks = p->ep;
    if (q->nodes > q->ranks) q->nodes = q->ranks;
    q->gpus_per_node = (q->ranks + q->nodes - 1) / q->nodes;
    q->ranks = q->nodes * q->gpus_per_node;
  }
  return st;
}

/* See step_impl.h: cached here by (coll, group, phase, bytes), then in s->shared. */
enum cs_status cs_sim_cost(struct cs_sim *s, int coll, int group, int phase, double bytes,
                           long calls, double *t, struct cs_error *err) {
  for (int i = 0; i < s->ncache; i++) {
    struct centry *e = &s->cache[i];
    if (e->coll == coll && e->group == group && e->bytes == bytes && e->phase == phase) {
      memcpy(t, e->t, sizeof e->t);
      e->calls += calls;
      return CS_OK;
    }
  }
  const struct sgroup *g = &s->grp[group];
  struct centry e = {coll, group, phase, bytes, {0, 0, 0}, CS_ALGO_RING, CS_PROTO_SIMPLE, calls};
  if (sgroup_spans(g) && bytes > 0) {
    struct cs_coll_query q = g->q;
    q.coll = (enum cs_coll)coll;
    q.bytes = bytes;
    struct cs_sim_cache *sc = s->shared;
    struct cslot *slot = NULL;
    struct ckey k;
    if (sc) {
      memset(&k, 0, sizeof k);
      memcpy(k.bw, g->cal.model.bw, sizeof k.bw);
      memcpy(k.link_max, g->cal.model.link_max, sizeof k.link_max);
      memcpy(k.hop, g->cal.model.hop[CS_TIER_NET], sizeof k.hop);
      memcpy(k.tree_hop, g->cal.model.tree_hop[CS_TIER_NET], sizeof k.tree_hop);
      k.bytes = bytes;
      k.algo_enabled = g->cal.model.algo_enabled;
      k.what = g->what;
      k.intra = (int)g->cal.model.intra;
      k.no_ll128 = g->cal.model.net_no_ll128;
      k.coll = coll, k.ranks = q.ranks, k.nodes = q.nodes, k.gpn = q.gpus_per_node;
      slot = cache_find(sc, &k);
      if (slot->used) {
        sc->hits++;
        memcpy(e.t, slot->t, sizeof e.t);
        e.algo = slot->algo, e.proto = slot->proto;
        goto done;
      }
    }
    struct cs_coll_pred pr;
    enum cs_status st = cs_cal_predict(&g->cal, &q, &pr, &e.t[1], &e.t[2], err);
    if (st != CS_OK) return cs_error_prefix(err, cs_group_name(group));
    e.t[0] = pr.time;
    e.algo = pr.algo, e.proto = pr.proto;
    if (sc) {
      sc->misses++;
      if (cache_room(sc)) {
        slot = cache_find(sc, &k);
        slot->k = k;
        memcpy(slot->t, e.t, sizeof e.t);
        slot->algo = e.algo, slot->proto = e.proto, slot->used = 1;
        sc->n++;
      }
    }
  }
done:
  if (s->ncache < MAX_CACHE) s->cache[s->ncache++] = e;
  memcpy(t, e.t, sizeof e.t);
  return CS_OK;
}

/* ---- preparation -------------------------------------------------------------------------- */

void cs_sim_free(struct cs_sim *s) {
  if (!s) return;
  free(s->L);
  free(s->C);
  free(s->opt);
  for (int l = 0; l < NLEV; l++) {
    free(s->param[l]);
    free(s->embed[l]);
  }
  free(s->first_fwd);
  free(s->comm_bytes);
  cs_sim_pipe_free(s->pipe);
  free(s->st);
  free(s->run_mem);
  free(s);
}

static enum cs_status prepare_run(struct cs_sim *s, struct cs_error *err);

enum cs_status cs_sim_alloc(const struct cs_sim_inputs *in, struct cs_sim **out,
                            struct cs_error *err) {
  return cs_sim_alloc_cached(in, NULL, out, err);
}

enum cs_status cs_sim_alloc_cached(const struct cs_sim_inputs *in, struct cs_sim_cache *cache,
                                   struct cs_sim **out, struct cs_error *err) {
  *out = NULL;
  if (!in->workload || !in->plan || !in->compute || !in->topology || !in->cal)
    return cs_error_set(err, CS_ERR_USAGE,
                        "the step simulator needs a workload, a plan, a GPU, "
                        "a topology and a calibration");
  if (!(in->interference >= 1) || in->interference > 10)
    return cs_error_set(err, CS_ERR_USAGE, "interference must be between 1 and 10, got %g",
                        in->interference);
  enum cs_status st = cs_workload_check_plan(in->workload, in->plan, err);
  if (st != CS_OK) return st;
  if (in->plan->bucket <= 0) return cs_error_set(err, CS_ERR_USAGE, "bucket must be > 0");
  /* the framework profile: given, the one the shared cache loaded last, or found by name */
  struct cs_framework fw;
  if (in->framework)
    fw = *in->framework;
  else if (cache && cache->fw.name[0] && strcmp(cache->fw.name, in->plan->framework) == 0)
    fw = cache->fw;
  else {
    st = cs_framework_find(in->plan->framework, NULL, &fw, err);
    if (st != CS_OK) return st;
    if (cache) {
      cache->fw = fw;
      snprintf(cache->fw.name, sizeof cache->fw.name, "%s", in->plan->framework);
    }
  }
  struct cs_plan eff = *in->plan;
  cs_framework_apply(&fw, &eff);
  const struct cs_plan *ip = &eff;
  if (ip->dp_mode == CS_DP_DATAPARALLEL &&
      (ip->zero > 0 || ip->tp > 1 || ip->pp > 1 || ip->cp > 1 || ip->ep > 1))
    return cs_error_set(err, CS_ERR_USAGE,
                        "plan: dp_mode=dataparallel replicates the whole model from one process: "
                        "it needs zero=0 and tp=pp=cp=ep=1 (got zero=%d, tp=%d, pp=%d, cp=%d, "
                        "ep=%d)",
                        ip->zero, ip->tp, ip->pp, ip->cp, ip->ep);
  struct cs_sim *s = calloc(1, sizeof *s);
  if (!s) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  s->in = *in;
  s->shared = cache;
  if (cache && cache->cal != in->cal) { /* another calibration: start afresh */
    memset(cache->slot, 0, cache->cap * sizeof *cache->slot);
    cache->n = 0;
    cache->cal = in->cal;
  }
  s->plan = eff;
  s->fw = fw;
  s->pp = s->plan.pp;
  s->v = s->plan.vpp;
  s->m = cs_plan_microbatches(&s->plan);
  s->interference = in->interference;
  s->nl = in->workload->nlayer;
  size_t nc = (size_t)s->pp * (size_t)s->v, pp = (size_t)s->pp;
  s->L = calloc(s->nl + 1, sizeof *s->L);
  s->C = calloc(nc, sizeof *s->C);
  s->opt = calloc(pp, sizeof *s->opt);
  s->first_fwd = calloc(pp, sizeof *s->first_fwd);
  s->comm_bytes = calloc(pp, sizeof *s->comm_bytes);
  s->st = calloc(pp * LANES, sizeof *s->st);
  size_t nrun = nc * (2 + 2 * LANES + 4 * NLEV + NLEV + 5 * LANES + 1) + pp * 2 * NLEV;
  s->run_mem = calloc(nrun, sizeof *s->run_mem);
  int ok = s->L && s->C && s->opt && s->first_fwd && s->comm_bytes && s->st && s->run_mem;
  if (ok) {
    double *x = s->run_mem;
    s->fwd0 = x, x += nc;
    s->bwd0 = x, x += nc;
    s->fwdl = x, x += nc * LANES;
    s->bwdl = x, x += nc * LANES;
    s->qS = x, x += nc * 2 * NLEV;
    s->qR = x, x += nc * 2 * NLEV;
    s->qwin = x, x += nc * NLEV;
    s->lb = x, x += nc * LANES;
    s->osend = x, x += nc * LANES;
    s->oblk = x, x += nc * LANES;
    s->oep = x, x += nc * LANES;
    s->add = x, x += nc * LANES;
    s->fch = x, x += nc;
    s->dpbusy = x, x += pp * NLEV;
    s->window = x, x += pp * NLEV;
  }
  for (int l = 0; l < NLEV; l++) {
    s->param[l] = calloc(pp, sizeof *s->param[l]);
    s->embed[l] = calloc(pp, sizeof *s->embed[l]);
    ok = ok && s->param[l] && s->embed[l];
  }
  if (!ok) st = cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  if (st == CS_OK) st = cs_sim_pipe_alloc(s->pp, s->v, s->m, &s->pipe, err);
  if (st == CS_OK) st = map_groups(s, err);
  if (st == CS_OK && s->plan.dp_mode == CS_DP_DATAPARALLEL && s->grp[CS_GROUP_DP].exists &&
      s->grp[CS_GROUP_DP].q.nodes > 1)
    st = cs_error_set(err, CS_ERR_USAGE,
                      "plan: dp_mode=dataparallel runs in one process on one node, but dp=%d "
                      "spans %d nodes of the topology",
                      s->plan.dp, s->grp[CS_GROUP_DP].q.nodes);
  if (st == CS_OK) {
    s->share = 1;
    s->net_dp = s->grp[CS_GROUP_DP].exists && s->grp[CS_GROUP_DP].q.nodes > 1;
    s->net_edp = s->grp[CS_GROUP_EDP].exists && s->grp[CS_GROUP_EDP].q.nodes > 1;
    s->net_pp = s->grp[CS_GROUP_PP].exists && s->grp[CS_GROUP_PP].q.nodes > 1;
    s->net_ep = s->grp[CS_GROUP_EP].exists && s->grp[CS_GROUP_EP].q.nodes > 1;
    s->net_cp = s->grp[CS_GROUP_CP].exists && s->grp[CS_GROUP_CP].q.nodes > 1;
  }
  if (st == CS_OK) st = cs_sim_prepare(s, err);
  if (st == CS_OK) st = prepare_run(s, err);
  if (st != CS_OK) {
    cs_sim_free(s);
    return st;
  }
  *out = s;
  return CS_OK;
}

/* ---- one run ------------------------------------------------------------------------------ */

/* The gradient queue of chunk k at level l, started at time 0 with an empty stream: S[g] receives
 * its total service time and R[g] when it finishes (-inf when it has nothing) for the DP (g = 0)
 * and EDP (g = 1) groups; *busy accumulates its service, *win the network-crossing bucket time
 * issued during the last backward. A FIFO stream that is free at f and receives this chunk's
 * buckets from time tau on is then free at max(f + S, tau + R): the queue is a max-plus linear
 * map, so a run needs two numbers per chunk instead of the walk over its layers.
 *
 * The buckets complete inside one layer arrive evenly spaced (gradients appear at a uniform rate
 * during its backward), and a FIFO stream serving each in c finishes the last of k at
 * max(free + k c, a_1 + k c, a_k + c). */
static void queue_chunk(const struct cs_sim *s, int k, int l, double S[2], double R[2],
                        double *busy, double *win) {
  const struct cs_plan *p = &s->plan;
  const int net[2] = {s->net_dp, s->net_edp};
  const struct schunk *C = &s->C[k];
  double free_at[2] = {-INFINITY, -INFINITY}, tau = 0, acc[2] = {0, 0};
  S[0] = S[1] = 0;
  for (size_t i = C->last + 1; i-- > C->first;) {
    const struct slayer *L = &s->L[i];
    double d = p->overlap_grad ? L->bdur[l] : 0;
    for (int g = 0; g < 2; g++) {
      double G = L->grad[g];
      if (G <= 0) continue;
      double B = p->bucket, cst = s->bucket_cost[g][l];
      double before = floor(acc[g] / B), after = floor((acc[g] + G) / B);
      double n = after - before;
      if (n > 0) {
        double a1 = tau + ((before + 1) * B - acc[g]) / G * d;
        double an = tau + ((before + n) * B - acc[g]) / G * d;
        double f = free_at[g] + n * cst;
        if (a1 + n * cst > f) f = a1 + n * cst;
        if (an + cst > f) f = an + cst;
        free_at[g] = f;
        *busy += n * cst;
        S[g] += n * cst;
        if (net[g] && p->overlap_grad) *win += n * cst;
      }
      acc[g] += G;
    }
    tau += d;
  }
  for (int g = 0; g < 2; g++)
    if (C->tail[g][l] > 0) {
      double issue = free_at[g] > tau ? free_at[g] : tau;
      free_at[g] = issue + C->tail[g][l];
      *busy += C->tail[g][l];
      S[g] += C->tail[g][l];
    }
  R[0] = free_at[0], R[1] = free_at[1];
}

/* What a run needs that does not change between runs. */
static enum cs_status prepare_run(struct cs_sim *s, struct cs_error *err) {
  const int pp = s->pp, v = s->v, nc = pp * v;
  static const int level[LANES] = {0, 1, 2, 0};
  for (int k = 0; k < nc; k++) {
    s->fwd0[k] = s->C[k].F[0];
    s->bwd0[k] = s->C[k].B[0];
    for (int ln = 0; ln < LANES; ln++) {
      s->fwdl[k * LANES + ln] = s->C[k].F[level[ln]];
      s->bwdl[k * LANES + ln] = s->C[k].B[level[ln]];
    }
  }
  for (int sg = 0; sg < pp; sg++)
    for (int l = 0; l < NLEV; l++) {
      double busy = 0, window = 0;
      for (int c = v - 1; c >= 0; c--) { /* the order the stream serves them */
        const int k = sg * v + c;
        double *S = &s->qS[(k * 2) * NLEV], *R = &s->qR[(k * 2) * NLEV], SS[2], RR[2], win = 0;
        if (s->C[k].has_layers)
          queue_chunk(s, k, l, SS, RR, &busy, &win);
        else
          SS[0] = SS[1] = 0, RR[0] = RR[1] = -INFINITY;
        S[l] = SS[0], S[NLEV + l] = SS[1];
        R[l] = RR[0], R[NLEV + l] = RR[1];
        s->qwin[k * NLEV + l] = win;
      }
      for (int c = 0; c < v; c++)
        window += s->C[sg * v + c].B[l];
      s->dpbusy[sg * NLEV + l] = busy;
      s->window[sg * NLEV + l] = window;
    }
  return cs_workload_step_flops(s->in.workload, &s->plan, &s->model_flops, &s->hw_flops, err);
}

/* When the gradient streams of stage sg are done at level l, for the schedule of lane ln (of
 * lanes) in s->st and s->lb; add (NULL = none) lengthens the network-crossing streams after
 * each chunk (NIC sharing); fch (NULL = not wanted) receives when they are free after each chunk,
 * before that lengthening. */
static double dp_stream(const struct cs_sim *s, int sg, int l, int ln, int lanes, const double *add,
                        double *fch) {
  const int v = s->v, og = s->plan.overlap_grad;
  const int net[2] = {s->net_dp, s->net_edp};
  double f[2] = {0, 0};
  for (int c = v - 1; c >= 0; c--) {
    const int k = sg * v + c;
    if (!s->C[k].has_layers) continue;
    double tau = og ? s->lb[k * lanes + ln] : s->st[sg * lanes + ln].end;
    for (int g = 0; g < 2; g++) {
      double a = f[g] + s->qS[(k * 2 + g) * NLEV + l], b = tau + s->qR[(k * 2 + g) * NLEV + l];
      f[g] = a > b ? a : b;
    }
    if (fch) {
      double x = -INFINITY;
      for (int g = 0; g < 2; g++)
        if (net[g] && f[g] > x) x = f[g];
      fch[k] = x;
    }
    if (add)
      for (int g = 0; g < 2; g++)
        if (net[g]) f[g] += add[k * lanes + ln];
  }
  return f[0] > f[1] ? f[0] : f[1];
}

/* NIC sharing (step.h) at level l for the schedule of lane ln: how much the last backward of each
 * chunk, and the transfer of its result to the previous stage, are lengthened by the gradient
 * stream that runs beside them on the same NICs, measured on the schedule just run. Fills lane ln
 * of s->osend, s->oblk, s->oep, s->add; returns whether anything was lengthened. */
static int nic_sharing(struct cs_sim *s, int l, int ln, int lanes, double p2p) {
  const int pp = s->pp, v = s->v;
  int any = 0;
  for (int sg = 0; sg < pp; sg++) {
    dp_stream(s, sg, l, ln, lanes, NULL, s->fch);
    for (int c = 0; c < v; c++) {
      const int k = sg * v + c, x = k * lanes + ln;
      const struct schunk *C = &s->C[k];
      s->osend[x] = s->oblk[x] = s->oep[x] = 0;
      if (C->has_layers) {
        /* EP/CP transfers of the last backward against the buckets issued during it */
        double e_ep = s->net_ep ? C->epb[l] : 0, e_cp = s->net_cp ? C->cpb[l] : 0;
        double w = s->qwin[k * NLEV + l];
        double oep = e_ep < w ? e_ep : w;
        double ocp = e_cp < w - oep ? e_cp : w - oep;
        s->oep[x] = oep;
        s->oblk[x] = oep + ocp;
        /* the send after the last backward against the stream still busy then */
        if (s->net_pp && p2p > 0 && (sg > 0 || c > 0)) {
          double t = s->lb[x] + C->B[l];
          double from = s->plan.overlap_grad ? t : s->st[sg * lanes + ln].end;
          double a = t > from ? t : from, b = t + p2p < s->fch[k] ? t + p2p : s->fch[k];
          s->osend[x] = b > a ? b - a : 0;
        }
      }
      s->add[x] = s->oblk[x] + s->osend[x];
      any = any || s->add[x] > 0;
    }
  }
  return any;
}

/* Whether NIC sharing can lengthen anything in s. */
static int sharing(const struct cs_sim *s) {
  return s->share && (s->net_dp || s->net_edp) && (s->net_pp || s->net_ep || s->net_cp);
}

/* The step at level l from the schedule of lane ln in s->st and s->lb (add: the NIC-sharing
 * lengthening of lane ln, NULL = none); the breakdown when parts is not NULL. */
static double evaluate(struct cs_sim *s, int l, int ln, int lanes, const double *add,
                       struct cs_sim_breakdown *parts, int *crit) {
  const int pp = s->pp, v = s->v;
  const struct cs_plan *p = &s->plan;
  double step = 0;
  int best = 0;
  double best_dil = 0, best_dp = 0;
  for (int sg = 0; sg < pp; sg++) {
    double end = s->st[sg * lanes + ln].end;
    double dp_end = dp_stream(s, sg, l, ln, lanes, add, NULL);
    /* compute slowed while the gradient stream runs beside the last backward */
    double busy = s->dpbusy[sg * NLEV + l], window = s->window[sg * NLEV + l];
    double dil = (s->interference - 1) * (busy < window ? busy : window);
    double t = end + dil;
    if (dp_end > t) t = dp_end;
    t += s->embed[l][sg];
    double param = s->param[l][sg];
    if (p->overlap_param) param = param > s->first_fwd[sg] ? param - s->first_fwd[sg] : 0;
    t += param + s->opt[sg];
    if (t > step) {
      step = t;
      best = sg;
      best_dil = dil;
      best_dp = t - (end + dil) - s->opt[sg];
    }
  }
  if (parts) {
    memset(parts, 0, sizeof *parts);
    for (int c = 0; c < v; c++) {
      const int k = best * v + c;
      const struct schunk *C = &s->C[k];
      parts->compute += s->m * (C->comp + C->interf[l]);
      parts->tp += s->m * C->tp[l];
      parts->cp += s->m * C->cp[l];
      parts->ep += s->m * C->ep[l];
      parts->dp += s->m * C->z3[l];
      if (add) { /* the last backward lengthened by NIC sharing */
        parts->ep += s->oep[k * lanes + ln];
        parts->cp += s->oblk[k * lanes + ln] - s->oep[k * lanes + ln];
      }
    }
    parts->compute += best_dil;
    parts->dp += fabs(best_dp) < 1e-12 * step ? 0 : best_dp; /* rounding of t - end - opt */
    parts->optimizer = s->opt[best];
    parts->pp = s->st[best * lanes + ln].idle; /* split into bubble and transfers by the caller */
  }
  if (crit) *crit = best;
  return step;
}

/* The figures that follow from the step time. */
static void finish(struct cs_sim *s, struct cs_sim_result *r, int crit) {
  const struct cs_plan *p = &s->plan;
  const struct cs_workload *w = s->in.workload;
  r->gpus = cs_plan_gpus(p);
  r->microbatches = s->m;
  r->samples = p->gbs ? p->gbs : (double)p->mbs * p->dp;
  r->tokens = cs_workload_is_transformer(w) ? r->samples * w->seq : 0;
  if (p->loader > 0) {
    /* the input pipeline: each node's loader feeds its GPUs at most `loader` samples/s */
    int per = s->in.topology->node.gpus > 0 ? s->in.topology->node.gpus : 1;
    double nodes = ceil((double)r->gpus / per);
    double floor_s = r->samples / (p->loader * nodes);
    if (r->step < floor_s) r->step = floor_s;
    if (r->step_lo < floor_s) r->step_lo = floor_s;
    if (r->step_hi < floor_s) r->step_hi = floor_s;
  }
  r->model_flops = s->model_flops;
  r->hw_flops = s->hw_flops;
  r->samples_per_s = r->samples / r->step;
  r->tokens_per_s = r->tokens / r->step;
  r->tflops_per_gpu = r->model_flops / r->step / (double)r->gpus / 1e12;
  r->hw_tflops_per_gpu = r->hw_flops / r->step / (double)r->gpus / 1e12;
  r->mfu = r->model_flops / r->step / (double)r->gpus / s->in.compute->peak;
  r->comm_bytes = s->comm_bytes[crit];
}

void cs_sim_band(const struct cs_sim_result *r, double u_compute, double u_framework, double *lo,
                 double *hi) {
  double dl = r->step - r->step_lo_coll, dh = r->step_hi_coll - r->step;
  double u2 = u_compute * u_compute + u_framework * u_framework;
  *lo = r->step - sqrt(dl * dl + u2);
  *hi = r->step + sqrt(dh * dh + u2);
  if (*lo < 0) *lo = 0;
}

double cs_sim_compute_band(const struct cs_compute *c, const struct cs_sim_result *r) {
  double u = c->band_rel * (r->part.compute + r->part.optimizer), h = c->band_host * r->host;
  return sqrt(u * u + h * h);
}

/* The time the GPU of r's critical stage waits for an eager host, per step. */
static double host_time(const struct cs_sim *s, const struct cs_sim_result *r) {
  double host = 0;
  for (int c = 0; c < s->v; c++)
    host += s->C[r->stage * s->v + c].host;
  return (double)s->m * host;
}

/* Four schedules in one pass over the pipeline (predicted, low and high levels, and the
 * predicted level with free transfers for the bubble); with NIC sharing, one correction pass:
 * the lengthening measured on the schedules without it, the schedules run again with it. */
void cs_sim_run(struct cs_sim *s, struct cs_sim_result *r) {
  memset(r, 0, sizeof *r);
  const double p2p[LANES] = {s->p2p[0], s->p2p[1], s->p2p[2], 0};
  cs_sim_pipe_run_lanes(s->pipe, LANES, s->fwdl, s->bwdl, p2p, NULL, NULL, s->st, s->lb);
  const double *add = NULL;
  if (sharing(s)) {
    int any = 0;
    for (int ln = 0; ln < NLEV; ln++)
      any |= nic_sharing(s, ln, ln, LANES, p2p[ln]);
    if (any) {
      const int nc = s->pp * s->v;
      for (int k = 0; k < nc; k++) /* the bubble's lane: free transfers share nothing */
        s->oblk[k * LANES + 3] = s->osend[k * LANES + 3] = s->oep[k * LANES + 3] =
            s->add[k * LANES + 3] = 0;
      cs_sim_pipe_rerun_lanes(s->pipe, LANES, s->fwdl, s->bwdl, p2p, s->oblk, s->osend, s->st,
                              s->lb);
      add = s->add;
    }
  }
  int crit = 0;
  r->step = evaluate(s, 0, 0, LANES, add, &r->part, &crit);
  r->stage = crit;
  if (s->pp > 1) {
    /* the bubble: the critical stage's idle time when transfers are free */
    double idle = r->part.pp;
    double idle0 = s->st[crit * LANES + 3].idle;
    r->part.bubble = idle0 < idle ? idle0 : idle;
    r->part.pp = idle - r->part.bubble;
  }
  r->step_lo = evaluate(s, 1, 1, LANES, add, NULL, NULL);
  r->step_hi = evaluate(s, 2, 2, LANES, add, NULL, NULL);
  if (r->step_lo > r->step) r->step_lo = r->step;
  if (r->step_hi < r->step) r->step_hi = r->step;
  r->step_lo_coll = r->step_lo, r->step_hi_coll = r->step_hi;
  r->host = host_time(s, r);
  cs_sim_band(r, cs_sim_compute_band(s->in.compute, r),
              cs_plan_gpus(&s->plan) > 1 ? s->in.compute->band_fw * r->step : 0, &r->step_lo,
              &r->step_hi);
  finish(s, r, crit);
}

void cs_sim_run_step(struct cs_sim *s, struct cs_sim_result *r) {
  memset(r, 0, sizeof *r);
  cs_sim_pipe_run_lanes(s->pipe, 1, s->fwd0, s->bwd0, &s->p2p[0], NULL, NULL, s->st, s->lb);
  const double *add = NULL;
  if (sharing(s) && nic_sharing(s, 0, 0, 1, s->p2p[0])) {
    cs_sim_pipe_rerun_lanes(s->pipe, 1, s->fwd0, s->bwd0, &s->p2p[0], s->oblk, s->osend, s->st,
                            s->lb);
    add = s->add;
  }
  int crit = 0;
  r->step = evaluate(s, 0, 0, 1, add, &r->part, &crit);
  r->stage = crit;
  r->step_lo = r->step_hi = r->step_lo_coll = r->step_hi_coll = r->step;
  finish(s, r, crit);
}

enum cs_status cs_sim_predict(const struct cs_sim_inputs *in, struct cs_sim_result *r,
                              struct cs_error *err) {
  struct cs_sim *s = NULL;
  enum cs_status st = cs_sim_alloc(in, &s, err);
  if (st != CS_OK) return st;
  cs_sim_run(s, r);
  cs_sim_free(s);
  return CS_OK;
}

enum cs_status cs_sim_single_gpu(const struct cs_workload *w, const struct cs_plan *p,
                                 const struct cs_compute *c, double *samples_per_s,
                                 struct cs_error *err) {
  struct cs_plan one = cs_plan_single_gpu(p);
  long m = cs_plan_microbatches(p);
  one.gbs = (int)(one.mbs * m); /* the same micro-batches per step as p */
  struct cs_layer_time sum;
  enum cs_status st = cs_compute_microbatch(c, w, &one, -1, NULL, &sum, err);
  if (st != CS_OK) return st;
  double params = cs_workload_params(w);
  double t =
      (double)m * (sum.fwd + sum.bwd + sum.recompute) + cs_sim_optimizer_time(c, &one, params, 0);
  *samples_per_s = (double)one.gbs / t;
  return CS_OK;
}

void cs_sim_set_nic_sharing(struct cs_sim *s, int on) {
  s->share = on != 0;
}

int cs_sim_collectives(const struct cs_sim *s, struct cs_sim_coll_info *info, int max) {
  int n = 0;
  for (int i = 0; i < s->ncache && n < max; i++) {
    const struct centry *e = &s->cache[i];
    if (e->calls == 0) continue;
    const struct sgroup *g = &s->grp[e->group];
    info[n++] = (struct cs_sim_coll_info){
        e->group,           e->coll, e->phase, e->bytes, (int)e->calls, g->q.ranks, g->q.nodes,
        g->q.gpus_per_node, e->algo, e->proto, e->t[0],  e->t[1],       e->t[2]};
  }
  return n;
}
