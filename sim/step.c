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
 */
#include "step.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework.h"
#include "map.h"
#include "pipeline.h"

#define NLEV 3 /* 0: predicted, 1: low bound, 2: high bound */
#define LANES                                                                                      \
  CS_SIM_PIPE_LANES /* cs_sim_run's four schedule runs: levels 0, 1, 2 and level 0                 \
                       with free transfers (the bubble) */
#define MAX_CACHE 96

/* One distinct collective (kind, group, size) and its cost. */
struct centry {
  int coll, group, phase;
  double bytes;
  double t[NLEV];
  int algo, proto;
  long calls;
};

/* A group of the plan on the topology, as the cost model sees it. */
struct sgroup {
  int exists;
  struct cs_cal cal; /* shallow copy of the calibration with this group's links */
  struct cs_coll_query q;
  unsigned what; /* what cs_topo_model_apply wrote */
};

/* ---- the shared collective-cost cache ----------------------------------------------------- */

/* Everything a cached prediction depends on besides the calibration: the parameters
 * cs_topo_model_apply may change, the sources it marks, the shape, the collective and the size.
 * Zeroed before filling, so that padding compares equal. */
struct ckey {
  double bw[CS_TIER_COUNT];
  double hop[CS_PROTO_COUNT];
  double bytes;
  unsigned algo_enabled, what;
  int intra, coll, ranks, nodes, gpn;
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

/* One layer as the step uses it. */
struct slayer {
  int stage, chunk;  /* chunk local to the stage, 0 .. vpp-1 */
  double bdur[NLEV]; /* backward of one micro-batch with its blocking collectives */
  double grad[2];    /* bytes produced for the DP and EDP gradient reductions */
};

/* Per (stage, chunk): durations and their parts. */
struct schunk {
  double F[NLEV], B[NLEV];
  double comp, tp[NLEV], cp[NLEV], ep[NLEV], z3[NLEV], interf[NLEV];
  double cpb[NLEV], epb[NLEV]; /* of which in one backward: what may share the NIC */
  double tail[2][NLEV];        /* last partial gradient bucket, DP and EDP */
  size_t first, last;          /* layer index range [first, last] of the chunk, in model order */
  int has_layers;
};

struct cs_sim {
  struct cs_sim_inputs in;
  struct cs_sim_cache *shared; /* borrowed; NULL = none */
  struct cs_framework fw;      /* the plan's profile */
  struct cs_plan plan;         /* the plan with the profile applied (cs_framework_apply) */
  int pp, v;
  long m;
  double interference;
  struct sgroup grp[CS_GROUP_COUNT];
  struct centry cache[MAX_CACHE];
  int ncache;
  size_t nl;
  struct slayer *L;
  struct schunk *C; /* [pp * v] */
  double p2p[NLEV];
  double bucket_cost[2][NLEV]; /* one full bucket, DP and EDP */
  int grad_coll;               /* all_reduce (ZeRO-0) or reduce_scatter */
  double *opt;                 /* [pp] optimizer time */
  double *param[NLEV];         /* [pp] ZeRO-1/2 weight all-gather after the step */
  double *embed[NLEV];         /* [pp] tied-embedding all-reduce */
  double *first_fwd;           /* [pp] compute of the first forward (hides the weight gather) */
  double *comm_bytes;          /* [pp] */
  struct cs_sim_pipe *pipe;
  int share; /* NIC sharing between the DP stream and other network traffic */
  int net_dp, net_edp, net_pp, net_ep, net_cp; /* the group's collectives leave the node */
  /* constants of a run (prepare_run), one block of memory (run_mem) */
  double model_flops, hw_flops;
  double *fwd0, *bwd0;     /* [nc] chunk forward and backward at the predicted level */
  double *fwdl, *bwdl;     /* [nc * LANES] the same per lane (levels 0, 1, 2, 0) */
  double *qS, *qR;         /* [(nc * 2 + g) * NLEV + l] gradient queue of chunk k, group g:
                              its total service and its finish when it starts at 0 */
  double *qwin;            /* [nc * NLEV] network-crossing bucket time during the last
                              backward (NIC sharing) */
  double *dpbusy, *window; /* [pp * NLEV] gradient stream busy time; last backwards' time */
  /* scratch of a run */
  struct cs_sim_pipe_stage *st; /* [pp * LANES] */
  double *lb;                   /* [nc * LANES] start of each chunk's last backward */
  double *osend, *oblk, *oep;   /* [nc * LANES] NIC-sharing lengthening of the last backward's
                                   send, of the last backward itself, and the EP part of that */
  double *add;                  /* [nc * LANES] oblk + osend */
  double *fch;                  /* [nc] when the network-crossing gradient streams are free after
                                   each chunk */
  double *run_mem;
};

/* ---- groups ------------------------------------------------------------------------------- */

static enum cs_status map_group(struct cs_sim *s, int kind, int ndims, const int *sizes, int dim,
                                int pair, struct cs_error *err) {
  const struct cs_topology *t = s->in.topology;
  struct cs_topo_group g;
  enum cs_status st = cs_topo_map(t, ndims, sizes, dim, 0, 1, &g, err);
  if (st != CS_OK) return st;
  struct sgroup *sg = &s->grp[kind];
  sg->exists = 1;
  sg->cal = *s->in.cal; /* shares the covariance: never finalised */
  unsigned what = CS_TOPO_APPLY_ALGOS;
  const struct cs_cal *cal = s->in.cal;
  /* measured links win over the topology's nominal ones; what the user gave wins over both */
  if (cal->source[cs_model_param_index("bw.net")] != CS_SRC_USER) what |= CS_TOPO_APPLY_NET;
  if (cal->source[cs_model_param_index("hop.net.simple")] != CS_SRC_USER) what |= CS_TOPO_APPLY_LAT;
  const char *intra = g.intra == CS_TIER_PCIE ? "bw.pcie" : "bw.nvlink";
  if (cal->source[cs_model_param_index(intra)] == CS_SRC_DEFAULT) what |= CS_TOPO_APPLY_INTRA;
  cs_topo_model_apply(t, &g, what, &sg->cal.model);
  sg->what = what;
  if (what & CS_TOPO_APPLY_NET) sg->cal.source[cs_model_param_index("bw.net")] = CS_SRC_USER;
  if (what & CS_TOPO_APPLY_INTRA) sg->cal.source[cs_model_param_index(intra)] = CS_SRC_USER;
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
  if (st == CS_OK && p->dp * p->cp > 1) st = map_group(s, CS_GROUP_DP, 3, s3, 1, 0, err);
  if (st == CS_OK && p->dp * p->cp / p->ep > 1)
    st = five && p->cp == 1 ? map_group(s, CS_GROUP_EDP, 5, s5, 3, 0, err)
                            : map_group(s, CS_GROUP_EDP, 3, s3, 1, 0, err);
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

/* The cost of one collective at three levels, cached by (coll, group, bytes). */
static enum cs_status cost(struct cs_sim *s, int coll, int group, int phase, double bytes,
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
  if (g->exists && g->q.ranks > 1 && bytes > 0) {
    struct cs_coll_query q = g->q;
    q.coll = (enum cs_coll)coll;
    q.bytes = bytes;
    struct cs_sim_cache *sc = s->shared;
    struct cslot *slot = NULL;
    struct ckey k;
    if (sc) {
      memset(&k, 0, sizeof k);
      memcpy(k.bw, g->cal.model.bw, sizeof k.bw);
      memcpy(k.hop, g->cal.model.hop[CS_TIER_NET], sizeof k.hop);
      k.bytes = bytes;
      k.algo_enabled = g->cal.model.algo_enabled;
      k.what = g->what;
      k.intra = (int)g->cal.model.intra;
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

static double adam_bytes(const struct cs_plan *p) {
  double wb, gb, ob;
  cs_plan_param_bytes(p, &wb, &gb, &ob);
  return wb + gb + 2 * ob; /* read gradient and state, write state and weights */
}

static double optimizer_time(const struct cs_compute *c, const struct cs_plan *p, double dense,
                             double expert) {
  double dpg = (double)p->dp * p->cp, edp = dpg / p->ep;
  if (p->zero >= 1) dense /= dpg, expert /= edp;
  /* a steps calibration's host overhead per step runs beside nothing: the optimizer phase */
  return (dense + expert) * adam_bytes(p) / c->mem_bw[CS_MEM_OPTIM] + c->step_overhead;
}

/* The forward or backward of one micro-batch through a chunk's layers under ZeRO-3: weights are
 * gathered on the data-parallel stream (one layer ahead with prefetch), gradients reduce-scattered
 * after each layer's backward. dur[i], ag[i], rs[i], cmp[i] per layer (or gather unit) in
 * execution order; pf[i] (NULL = all) says whether the next gather may be issued while unit i
 * runs (a live-parameter limit forbids it). Returns the chunk's duration; *extra receives the
 * interference added to compute. */
static double zero3_chunk(int n, const double *dur, const double *cmp, const double *ag,
                          const double *rs, int prefetch_all, const int *pf, double interf,
                          double *extra) {
  double t = 0, free_at = 0, ag_end = n > 0 ? ag[0] : 0;
  *extra = 0;
  free_at = ag_end;
  for (int i = 0; i < n; i++) {
    const int prefetch = prefetch_all && (!pf || pf[i]);
    double start = t > ag_end ? t : ag_end;
    double next_end = 0;
    if (i + 1 < n && prefetch) {
      double issue = free_at > start ? free_at : start;
      next_end = free_at = issue + ag[i + 1];
      double ov = ag[i + 1] < cmp[i] ? ag[i + 1] : cmp[i];
      *extra += (interf - 1) * ov;
    }
    t = start + dur[i] +
        (prefetch && i + 1 < n ? (interf - 1) * (ag[i + 1] < cmp[i] ? ag[i + 1] : cmp[i]) : 0);
    if (rs[i] > 0) {
      double issue = free_at > t ? free_at : t;
      free_at = issue + rs[i];
    }
    if (i + 1 < n && !prefetch) {
      double issue = free_at > t ? free_at : t;
      next_end = free_at = issue + ag[i + 1];
    }
    ag_end = next_end;
  }
  return t > free_at ? t : free_at;
}

/* Ring attention of one layer: cp - 1 point-to-point steps per pass, each moving one block of
 * ring[0] (forward) or ring[1] (backward) bytes to the next rank of the CP group while the
 * attention of the block in hand runs (attention / cp). The block of a rank's own keys and values
 * hides the first transfer; a step whose transfer outlasts its block of attention exposes the
 * difference, so the exposed time of a pass is (cp - 1) max(0, transfer - attention / cp): the
 * finish time of cp blocks computed as their transfers arrive back to back. cpf and cpb receive
 * the exposed forward and backward time at each level. */
static enum cs_status cp_ring(struct cs_sim *s, int stage, const double ring[2], double attn_f,
                              double attn_b, double *cpf, double *cpb, struct cs_error *err) {
  const int cp = s->plan.cp;
  for (int b = 0; b < 2; b++) {
    double x[NLEV], blk = (b ? attn_b : attn_f) / cp, *out = b ? cpb : cpf;
    long calls = (long)(cp - 1) * s->m;
    if (ring[b] <= 0) continue;
    enum cs_status st = cost(s, CS_COLL_SEND_RECV, CS_GROUP_CP, b ? CS_PHASE_BWD : CS_PHASE_FWD,
                             ring[b], calls, x, err);
    if (st != CS_OK) return st;
    s->comm_bytes[stage] += (double)calls * ring[b];
    for (int l = 0; l < NLEV; l++)
      out[l] = (cp - 1) * (x[l] > blk ? x[l] - blk : 0);
  }
  return CS_OK;
}

/* Bytes of one sample's input as the host hands it over: int64 token ids for a transformer, an
 * fp32 image (or feature rows) for a layer list. */
static double input_bytes(const struct cs_workload *w) {
  if (cs_workload_is_transformer(w)) return 8.0 * w->seq;
  if (w->nlayer == 0) return 0;
  const struct cs_layer *L = &w->layer[0];
  if (L->type == CS_LAYER_CONV) return 4.0 * L->cin * L->in_size * L->in_size;
  if (L->type == CS_LAYER_LINEAR) return 4.0 * L->cin * (L->tokens > 0 ? L->tokens : 1);
  return 0;
}

/* Single-process DataParallel (one stage, one chunk, one node): before each micro-batch's
 * forward GPU 0 broadcasts the weights (params x weight bytes) and sends each other GPU its mbs
 * samples (dp - 1 point-to-point copies in turn); after its backward the gradients (grad bytes,
 * as DDP would all-reduce them) are reduced onto GPU 0. Nothing overlaps: all of it is exposed
 * data-parallel time of every micro-batch. */
static enum cs_status dataparallel(struct cs_sim *s, double params, double grad_bytes,
                                   struct cs_error *err) {
  const struct cs_plan *p = &s->plan;
  double wb, gb, ob;
  cs_plan_param_bytes(p, &wb, &gb, &ob);
  double bc[NLEV], rd[NLEV], sc[NLEV] = {0, 0, 0};
  double in = p->mbs * input_bytes(s->in.workload);
  enum cs_status st =
      cost(s, CS_COLL_BROADCAST, CS_GROUP_DP, CS_PHASE_FWD, params * wb, s->m, bc, err);
  if (st == CS_OK)
    st = cost(s, CS_COLL_REDUCE, CS_GROUP_DP, CS_PHASE_BWD, grad_bytes, s->m, rd, err);
  if (st == CS_OK && in > 0)
    st = cost(s, CS_COLL_SEND_RECV, CS_GROUP_DP, CS_PHASE_FWD, in, s->m * (p->dp - 1), sc, err);
  if (st != CS_OK) return st;
  struct schunk *C = &s->C[0];
  for (int l = 0; l < NLEV; l++) {
    double f = bc[l] + (p->dp - 1) * sc[l];
    C->F[l] += f;
    C->B[l] += rd[l];
    C->z3[l] += f + rd[l];
  }
  s->comm_bytes[0] += s->m * (params * wb + grad_bytes + (p->dp - 1) * in);
  return CS_OK;
}

/* ---- ZeRO-3 gather units (framework.h) ------------------------------------------------------ */

#define MAXU 4 /* gather units per layer: qkv, projection, fc1, fc2 */

/* Per layer: its gather units, each with the share of the layer's compute it runs, its gathers
 * and reduce-scatters at three levels and its host work per pass. */
struct zunits {
  int n;
  double frac[MAXU];
  double agf[MAXU][NLEV], agb[MAXU][NLEV], rs[MAXU][NLEV];
  double hostf[MAXU], hostb[MAXU];
  int pf[MAXU]; /* the next unit's gather may be issued while this one runs */
};

/* Whether the profile's ZeRO-3 schedule differs from one cost-free gather per block with one
 * prefetch ahead (the schedule of plain cs_sim before profiles, kept bit for bit). */
static int zero3_by_units(const struct cs_sim *s) {
  const struct cs_framework *f = &s->fw;
  return f->unit == CS_FW_UNIT_MODULE || f->host_call > 0 || f->host_module > 0 ||
         f->host_rank > 0 || f->rank_copies || f->fetch_norm || !f->zero_reduce_scatter ||
         f->sync_per_fetch || f->persistence > 0 || f->reduce_dtype == CS_FW_RD_FP32 ||
         !f->reshard_after_forward ||
         (f->regather_recompute && s->plan.recompute == CS_RECOMPUTE_FULL);
}

/* The weight matrices of a dense transformer block on one GPU (after tp), in execution order:
 * query-key-value, attention projection, first and second FFN matrix (the gated FFN's two input
 * matrices as one, as Megatron fuses them). Returns how many (0: not a dense block). */
static int block_weights(const struct cs_workload *w, const struct cs_plan *p,
                         const struct cs_layer *L, double *wt) {
  if (L->type != CS_LAYER_BLOCK || L->moe) return 0;
  const double h = w->hidden, a = w->heads, g = w->kv_heads, t = p->tp, d = h / a;
  const double gl = g >= t ? g / t : 1;
  const double f = w->ffn, gated = w->ffn_type == CS_FFN_SWIGLU;
  wt[0] = h * (a / t * d + 2 * gl * d);
  wt[1] = a / t * d * h;
  wt[2] = h * (gated ? 2 * f : f) / t;
  wt[3] = f * h / t;
  return 4;
}

/* The gather units of layer i (Li, lc) whose ZeRO-3 traffic per pass is zb[g][k] bytes (group g:
 * DP, EDP; k: forward gather, backward gather, gradient reduce-scatter), priced with the profile:
 * one unit per block, or per weight matrix (module) with matrices at or under the persistence
 * threshold and the small tensors (biases, norms) kept whole when the threshold covers them. */
static enum cs_status zero3_units(struct cs_sim *s, int stage, const struct cs_layer *Li,
                                  const struct cs_layer_cost *lc, double zb[2][3],
                                  struct zunits *zu, struct cs_error *err) {
  const struct cs_framework *f = &s->fw;
  const struct cs_plan *p = &s->plan;
  const struct cs_workload *w = s->in.workload;
  memset(zu, 0, sizeof *zu);
  double wt[MAXU], dense = lc->params - lc->params_expert;
  int n = f->unit == CS_FW_UNIT_MODULE ? block_weights(w, p, Li, wt) : 0;
  double gath[MAXU]; /* params gathered per unit, of the dense group */
  if (n == 0 || dense <= 0) {
    n = 1;
    wt[0] = dense;
    gath[0] = dense > f->persistence ? dense : 0;
  } else {
    double sum = 0, small = dense;
    for (int u = 0; u < n; u++)
      small -= wt[u];
    for (int u = 0; u < n; u++)
      sum += wt[u];
    for (int u = 0; u < n; u++)
      gath[u] = wt[u] > f->persistence ? wt[u] : 0;
    /* biases and norms: each no larger than the widest bias, ffn (or 2 ffn gated) / tp */
    double widest = (w->ffn_type == CS_FFN_SWIGLU ? 2.0 : 1.0) * w->ffn / p->tp;
    if (widest < w->hidden) widest = w->hidden;
    if (small > 0 && f->persistence < widest) gath[0] += small;
    (void)sum;
  }
  double total_w = 0;
  for (int u = 0; u < n; u++)
    total_w += wt[u];
  const int regather = f->regather_recompute && p->recompute == CS_RECOMPUTE_FULL;
  const int kb = f->reshard_after_forward ? 1 + regather : 0; /* backward gathers */
  double wb, gb, ob;
  cs_plan_param_bytes(p, &wb, &gb, &ob);
  const double rscale = f->reduce_dtype == CS_FW_RD_FP32 ? 4.0 / gb : 1.0;
  zu->n = n;
  for (int u = 0; u < n; u++) {
    zu->frac[u] = total_w > 0 ? wt[u] / total_w : 1.0 / n;
    for (int g = 0; g < 2; g++) {
      int group = g ? CS_GROUP_EDP : CS_GROUP_DP;
      if (zb[g][0] <= 0 && zb[g][2] <= 0) continue;
      /* the unit's share of the group's bytes: the dense group by gathered params, the expert
       * group (MoE blocks are one unit) whole */
      double gshare = g ? 1.0 : dense > 0 ? gath[u] / dense : 0;
      double rshare = g ? 1.0 : zu->frac[u];
      double agb = zb[g][0] * gshare, rsb = zb[g][2] * rshare * rscale;
      double t[NLEV];
      double ranks = s->grp[group].exists ? s->grp[group].q.ranks : 1;
      double hc = f->host_call + ranks * f->host_rank;
      /* one copy kernel per rank beside the collective on its stream */
      double copies = f->rank_copies ? ranks * s->in.compute->gpu.kernel_overhead : 0;
      enum cs_status st;
      if (agb > 0) {
        st = cost(s, CS_COLL_ALL_GATHER, group, CS_PHASE_FWD, agb, s->m * (1 + kb), t, err);
        if (st != CS_OK) return st;
        for (int l = 0; l < NLEV; l++) {
          zu->agf[u][l] += t[l] + copies;
          zu->agb[u][l] += kb * (t[l] + copies);
        }
        /* a norm of the gathered weight after each fetch: one streaming read of it on the
         * compute stream, waited for (fetch_norm) */
        const struct cs_gpu *gpu = &s->in.compute->gpu;
        double norm =
            f->fetch_norm ? agb / (gpu->hbm_bw * gpu->mem_efficiency) + gpu->kernel_overhead : 0;
        zu->hostf[u] += hc + norm;
        zu->hostb[u] += kb * (hc + norm);
        s->comm_bytes[stage] +=
            s->m * (1 + kb) * agb * cs_coll_busbw_factor(CS_COLL_ALL_GATHER, (int)ranks);
      }
      if (rsb > 0) {
        /* reduce-scattered, or (zero_reduce_scatter off) all-reduced from a flattened copy
         * that is copied back: two streaming reads and writes of the gradients */
        const struct cs_gpu *gpu = &s->in.compute->gpu;
        int rc = f->zero_reduce_scatter ? CS_COLL_REDUCE_SCATTER : CS_COLL_ALL_REDUCE;
        double flat = f->zero_reduce_scatter ? 0 : 4 * rsb / (gpu->hbm_bw * gpu->mem_efficiency);
        st = cost(s, rc, group, CS_PHASE_BWD, rsb, s->m, t, err);
        if (st != CS_OK) return st;
        for (int l = 0; l < NLEV; l++)
          zu->rs[u][l] += t[l] + (f->zero_reduce_scatter ? copies : flat);
        zu->hostb[u] += f->zero_reduce_scatter ? hc : f->host_call; /* one flat tensor */
        s->comm_bytes[stage] += s->m * rsb * cs_coll_busbw_factor(rc, (int)ranks);
      }
    }
    zu->hostf[u] += f->host_module;
    zu->hostb[u] += f->host_module;
    /* stage3.py prefetch_next_sub_modules (v0.3.16): no prefetch while the gathered parameters
     * reach max_live (stage3_max_live_parameters) */
    double live = gath[u] + (dense > 0 ? lc->params_expert : lc->params);
    zu->pf[u] = !(f->max_live > 0 && live >= f->max_live);
  }
  return CS_OK;
}

/* A unit's duration with its host work: exposed in full when each fetch synchronises the device,
 * else hidden behind the unit's GPU work as far as that lasts. */
static double with_host(const struct cs_framework *f, double dur, double host) {
  if (f->sync_per_fetch) return dur + host;
  return dur > host ? dur : host;
}

/* ZeRO-1/2's gather of the updated weights of stage sg (bytes on group), in calls of the
 * profile's allgather_bucket parameters, each with one copy per rank when the framework gathers
 * into a list of per-rank tensors (rank_copies): into s->param. */
static enum cs_status param_gather(struct cs_sim *s, int sg, int group, double bytes,
                                   struct cs_error *err) {
  double wb, gb, ob;
  cs_plan_param_bytes(&s->plan, &wb, &gb, &ob);
  double B = s->fw.allgather_bucket * wb, full = floor(bytes / B), rem = bytes - full * B;
  double ranks = s->grp[group].exists ? s->grp[group].q.ranks : 1;
  double copies = s->fw.rank_copies ? ranks * s->in.compute->gpu.kernel_overhead : 0;
  double t[NLEV], r[NLEV] = {0, 0, 0};
  enum cs_status st = CS_OK;
  if (full > 0) st = cost(s, CS_COLL_ALL_GATHER, group, CS_PHASE_PARAM, B, (long)full, t, err);
  if (st == CS_OK && rem > 0)
    st = cost(s, CS_COLL_ALL_GATHER, group, CS_PHASE_PARAM, rem, 1, r, err);
  if (st != CS_OK) return st;
  double calls = full + (rem > 0);
  for (int l = 0; l < NLEV; l++)
    s->param[l][sg] += (full > 0 ? full * t[l] : 0) + r[l] + calls * copies;
  s->comm_bytes[sg] += bytes * cs_coll_busbw_factor(CS_COLL_ALL_GATHER, (int)ranks);
  return CS_OK;
}

static enum cs_status prepare_run(struct cs_sim *s, struct cs_error *err);

static enum cs_status prepare(struct cs_sim *s, struct cs_error *err) {
  const struct cs_workload *w = s->in.workload;
  const struct cs_plan *p = &s->plan;
  const struct cs_compute *c = s->in.compute;
  const int pp = s->pp, v = s->v, nc = pp * v;
  const double interf = s->interference;
  enum cs_status st = CS_OK;
  s->grad_coll = p->zero == 0 || (p->zero <= 2 && !s->fw.zero_reduce_scatter)
                     ? CS_COLL_ALL_REDUCE
                     : CS_COLL_REDUCE_SCATTER;
  for (int g = 0; g < 2; g++) {
    int group = g ? CS_GROUP_EDP : CS_GROUP_DP;
    st = cost(s, s->grad_coll, group, CS_PHASE_GRAD, p->bucket, 0, s->bucket_cost[g], err);
    if (st != CS_OK) return st;
  }
  for (int k = 0; k < nc; k++)
    s->C[k].first = (size_t)-1;

  /* per-layer scratch for ZeRO-3 in execution order */
  size_t nl = w->nlayer;
  double *z = calloc(nl * 8 * NLEV + 1, sizeof *z);
  if (!z) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  double *fdur = z, *bdur = z + nl * NLEV, *agf = z + 2 * nl * NLEV, *agb = z + 3 * nl * NLEV,
         *rs = z + 4 * nl * NLEV, *cf = z + 5 * nl * NLEV, *cb = z + 6 * nl * NLEV;
  double *dense = calloc((size_t)pp * 4, sizeof *dense);
  if (!dense) {
    free(z);
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  }
  double zero[NLEV] = {0, 0, 0};
  double *pg = dense + (size_t)pp * 2; /* [pp * 2] ZeRO-1/2 weight bytes to gather, DP and EDP */
  const int byunits = p->zero == 3 && zero3_by_units(s);
  struct zunits *zu = byunits ? calloc(nl + 1, sizeof *zu) : NULL;
  if (byunits && !zu) {
    free(z);
    free(dense);
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  }

  struct cs_layer_cost lc;
  struct cs_layer_time lt;
  for (size_t i = 0; i < nl && st == CS_OK; i++) {
    /* transformer blocks repeat: cost a block once per run of identical ones */
    const struct cs_layer *Li = &w->layer[i];
    int same = i > 0 && Li->type == CS_LAYER_BLOCK && w->layer[i - 1].type == CS_LAYER_BLOCK &&
               Li->moe == w->layer[i - 1].moe;
    if (!same) {
      st = cs_workload_layer_cost(w, p, i, &lc, err);
      if (st != CS_OK) break;
      cs_compute_layer_time(c, &lc, &lt);
    }
    int stage = cs_workload_layer_stage(w, p, i), chunk = cs_workload_layer_chunk(w, p, i) / pp;
    struct slayer *L = &s->L[i];
    struct schunk *C = &s->C[stage * v + chunk];
    L->stage = stage, L->chunk = chunk;
    if (C->first == (size_t)-1) C->first = i;
    C->last = i;
    C->has_layers = 1;
    double attn_f = 0, attn_b = 0;
    if (p->cp > 1)
      for (size_t k = 0; k < lc.nops; k++)
        if (lc.op[k].attention) {
          attn_f += cs_compute_op_time(c, &lc.op[k], 0) * c->scale;
          attn_b += cs_compute_op_time(c, &lc.op[k], 1) * c->scale;
        }
    double tpf[NLEV] = {0}, tpb[NLEV] = {0}, cpf[NLEV] = {0}, cpb[NLEV] = {0}, epf[NLEV] = {0},
           epb[NLEV] = {0};
    double *ag_f = agf + i * NLEV, *ag_b = agb + i * NLEV, *r_s = rs + i * NLEV;
    double ring[2] = {0, 0}; /* bytes one rank sends per ring step, forward and backward */
    double zb[2][3] = {{0, 0, 0}, {0, 0, 0}}; /* ZeRO-3 bytes per pass for zero3_units */
    dense[stage * 2] += lc.params - lc.params_expert;
    dense[stage * 2 + 1] += lc.params_expert;
    for (size_t k = 0; k < lc.ncomm && st == CS_OK; k++) {
      const struct cs_comm *cm = &lc.comm[k];
      double t[NLEV];
      if (cm->phase == CS_PHASE_GRAD && (cm->group == CS_GROUP_DP || cm->group == CS_GROUP_EDP)) {
        /* reduced in buckets (dp_stream), not layer by layer; DataParallel reduces them to
         * GPU 0 every micro-batch (dataparallel()) */
        L->grad[cm->group == CS_GROUP_EDP] += cm->count * cm->bytes;
        if (p->dp_mode != CS_DP_DATAPARALLEL)
          s->comm_bytes[stage] += cm->count * cm->bytes *
                                  cs_coll_busbw_factor(cm->coll, cs_plan_group_size(p, cm->group));
        continue;
      }
      if (byunits && (cm->group == CS_GROUP_DP || cm->group == CS_GROUP_EDP) &&
          cm->phase <= CS_PHASE_BWD &&
          (cm->coll == CS_COLL_ALL_GATHER || cm->coll == CS_COLL_REDUCE_SCATTER)) {
        /* ZeRO-3 gathers and reduce-scatters: priced per unit below (zero3_units) */
        int kk = cm->coll == CS_COLL_REDUCE_SCATTER ? 2 : cm->phase == CS_PHASE_BWD;
        zb[cm->group == CS_GROUP_EDP][kk] += cm->count * cm->bytes;
        continue;
      }
      if (s->fw.allgather_bucket > 0 && cm->phase == CS_PHASE_PARAM &&
          cm->coll == CS_COLL_ALL_GATHER &&
          (cm->group == CS_GROUP_DP || cm->group == CS_GROUP_EDP)) {
        /* ZeRO-1/2 updated weights: gathered in allgather_bucket calls (param_gather below) */
        pg[stage * 2 + (cm->group == CS_GROUP_EDP)] += cm->count * cm->bytes;
        continue;
      }
      if (cm->group == CS_GROUP_CP && cm->phase <= CS_PHASE_BWD) {
        /* ring attention: the gathered keys and values (and their gradients) travel one block
         * per step (cp_ring below) */
        ring[cm->phase == CS_PHASE_BWD] += cm->count * cm->bytes / p->cp;
        continue;
      }
      long calls = cm->count * (cm->phase <= CS_PHASE_BWD ? s->m : 1);
      st = cost(s, cm->coll, cm->group, cm->phase, cm->bytes, calls, t, err);
      if (st != CS_OK) break;
      s->comm_bytes[stage] +=
          calls * cm->bytes *
          (cm->coll == CS_COLL_SEND_RECV
               ? 1
               : cs_coll_busbw_factor(cm->coll, cs_plan_group_size(p, cm->group)));
      int g = cm->group, fwd = cm->phase == CS_PHASE_FWD;
      for (int l = 0; l < NLEV; l++) {
        double x = cm->count * t[l];
        if (cm->phase == CS_PHASE_FWD || cm->phase == CS_PHASE_BWD) {
          if (g == CS_GROUP_TP || g == CS_GROUP_EMBED)
            (fwd ? tpf : tpb)[l] += x;
          else if (g == CS_GROUP_CP)
            (fwd ? cpf : cpb)[l] += x;
          else if (g == CS_GROUP_EP)
            (fwd ? epf : epb)[l] += x;
          else if (cm->coll == CS_COLL_ALL_GATHER)
            (fwd ? ag_f : ag_b)[l] += x;
          else
            r_s[l] += x;
        } else if (cm->phase == CS_PHASE_GRAD) {
          if (g == CS_GROUP_EMBED) s->embed[l][stage] += x;
        } else {
          s->param[l][stage] += x;
        }
      }
    }
    if (st != CS_OK) break;
    if (p->cp > 1 && (ring[0] > 0 || ring[1] > 0)) {
      st = cp_ring(s, stage, ring, attn_f, attn_b, cpf, cpb, err);
      if (st != CS_OK) break;
    }
    if (byunits) {
      st = zero3_units(s, stage, Li, &lc, zb, &zu[i], err);
      if (st != CS_OK) break;
    }
    for (int l = 0; l < NLEV; l++) {
      if (p->overlap_tp) { /* hidden behind the layer's GEMMs as far as they last */
        tpf[l] = tpf[l] > lt.fwd ? tpf[l] - lt.fwd : 0;
        tpb[l] = tpb[l] > lt.bwd ? tpb[l] - lt.bwd : 0;
      }
      fdur[i * NLEV + l] = lt.fwd + tpf[l] + cpf[l] + epf[l];
      bdur[i * NLEV + l] = lt.bwd + lt.recompute + tpb[l] + cpb[l] + epb[l];
      L->bdur[l] = bdur[i * NLEV + l];
      cf[i * NLEV + l] = lt.fwd;
      cb[i * NLEV + l] = lt.bwd + lt.recompute;
      C->tp[l] += tpf[l] + tpb[l];
      C->cp[l] += cpf[l] + cpb[l];
      C->ep[l] += epf[l] + epb[l];
      C->cpb[l] += cpb[l];
      C->epb[l] += epb[l];
    }
    C->comp += lt.fwd + lt.bwd + lt.recompute;
    if (chunk == 0) s->first_fwd[stage] += lt.fwd;
  }
  /* DataParallel: no buckets, the gradients are reduced to GPU 0 each micro-batch */
  double dp_grad = 0;
  if (st == CS_OK && p->dp_mode == CS_DP_DATAPARALLEL)
    for (size_t i = 0; i < nl; i++) {
      dp_grad += s->L[i].grad[0] + s->L[i].grad[1];
      s->L[i].grad[0] = s->L[i].grad[1] = 0;
    }
  /* chunk durations (ZeRO-3 streams per chunk), tails of the gradient buckets */
  for (int k = 0; k < nc && st == CS_OK; k++) {
    struct schunk *C = &s->C[k];
    int stage = k / v;
    if (!C->has_layers) continue;
    int n = (int)(C->last - C->first + 1);
    double tot[2] = {0, 0};
    for (size_t i = C->first; i <= C->last; i++)
      for (int g = 0; g < 2; g++)
        tot[g] += s->L[i].grad[g];
    for (int g = 0; g < 2 && st == CS_OK; g++) {
      double rem = fmod(tot[g], p->bucket);
      if (rem > 0)
        st = cost(s, s->grad_coll, g ? CS_GROUP_EDP : CS_GROUP_DP, CS_PHASE_GRAD, rem, 0,
                  C->tail[g], err);
      else
        memcpy(C->tail[g], zero, sizeof zero);
    }
    for (int l = 0; l < NLEV; l++) {
      double F = 0, B = 0;
      for (size_t i = C->first; i <= C->last; i++) {
        F += fdur[i * NLEV + l];
        B += bdur[i * NLEV + l];
      }
      C->F[l] = F, C->B[l] = B;
      C->z3[l] = C->interf[l] = 0;
      if (byunits && s->grp[CS_GROUP_DP].exists) {
        /* execution order by gather unit: forward in model order, backward reversed */
        size_t nu = 0;
        for (size_t i = C->first; i <= C->last; i++)
          nu += (size_t)zu[i].n;
        double *e = malloc(nu * 8 * sizeof *e + 1);
        int *pf = malloc(nu * 2 * sizeof *pf + 1);
        if (!e || !pf) {
          free(e);
          free(pf);
          st = cs_error_set(err, CS_ERR_NOMEM, "out of memory");
          break;
        }
        double *d1 = e, *c1 = e + nu, *a1 = e + 2 * nu, *r1 = e + 3 * nu;
        double *d2 = e + 4 * nu, *c2 = e + 5 * nu, *a2 = e + 6 * nu, *r2 = e + 7 * nu;
        size_t j = 0;
        for (size_t i = C->first; i <= C->last; i++)
          for (int u = 0; u < zu[i].n; u++, j++) {
            const struct zunits *x = &zu[i];
            d1[j] = with_host(&s->fw, fdur[i * NLEV + l] * x->frac[u], x->hostf[u]);
            c1[j] = cf[i * NLEV + l] * x->frac[u];
            a1[j] = x->agf[u][l];
            r1[j] = 0;
            pf[j] = x->pf[u];
          }
        j = 0;
        for (size_t i = C->last + 1; i-- > C->first;)
          for (int u = zu[i].n; u-- > 0; j++) {
            const struct zunits *x = &zu[i];
            d2[j] = with_host(&s->fw, bdur[i * NLEV + l] * x->frac[u], x->hostb[u]);
            c2[j] = cb[i * NLEV + l] * x->frac[u];
            a2[j] = x->agb[u][l];
            r2[j] = x->rs[u][l];
            pf[nu + j] = x->pf[u];
          }
        int pre = p->overlap_param && s->fw.prefetch_depth > 0;
        double x1, x2;
        double f3 = zero3_chunk((int)nu, d1, c1, a1, r1, pre, pf, interf, &x1);
        double b3 = zero3_chunk((int)nu, d2, c2, a2, r2, pre, pf + nu, interf, &x2);
        free(e);
        free(pf);
        C->interf[l] = x1 + x2;
        C->z3[l] = (f3 - F - x1) + (b3 - B - x2);
        C->F[l] = f3, C->B[l] = b3;
      } else if (p->zero == 3 && s->grp[CS_GROUP_DP].exists) {
        /* execution order arrays for this level: forward in model order, backward reversed */
        double *e = malloc((size_t)n * 8 * sizeof *e);
        if (!e) {
          st = cs_error_set(err, CS_ERR_NOMEM, "out of memory");
          break;
        }
        double *d1 = e, *c1 = e + n, *a1 = e + 2 * n, *r1 = e + 3 * n;
        double *d2 = e + 4 * n, *c2 = e + 5 * n, *a2 = e + 6 * n, *r2 = e + 7 * n;
        for (int j = 0; j < n; j++) {
          size_t fi = C->first + (size_t)j, bi = C->last - (size_t)j;
          d1[j] = fdur[fi * NLEV + l], c1[j] = cf[fi * NLEV + l], a1[j] = agf[fi * NLEV + l],
          r1[j] = 0;
          d2[j] = bdur[bi * NLEV + l], c2[j] = cb[bi * NLEV + l], a2[j] = agb[bi * NLEV + l];
          r2[j] = rs[bi * NLEV + l];
        }
        double x1, x2;
        double f3 = zero3_chunk(n, d1, c1, a1, r1, p->overlap_param, NULL, interf, &x1);
        double b3 = zero3_chunk(n, d2, c2, a2, r2, p->overlap_param, NULL, interf, &x2);
        free(e);
        C->interf[l] = x1 + x2;
        C->z3[l] = (f3 - F - x1) + (b3 - B - x2);
        C->F[l] = f3, C->B[l] = b3;
      }
    }
    (void)stage;
    for (int g = 0; g < 2; g++)
      s->cache[g].calls += (long)ceil(tot[g] / p->bucket);
  }
  for (int i = 0; i < pp * 2 && st == CS_OK; i++)
    if (pg[i] > 0) st = param_gather(s, i / 2, i % 2 ? CS_GROUP_EDP : CS_GROUP_DP, pg[i], err);
  if (st == CS_OK && p->dp_mode == CS_DP_DATAPARALLEL && p->dp > 1)
    st = dataparallel(s, (dense[0] + dense[1]), dp_grad, err);
  for (int sg = 0; sg < pp && st == CS_OK; sg++)
    s->opt[sg] = optimizer_time(c, p, dense[sg * 2], dense[sg * 2 + 1]);
  /* the point-to-point transfer between stages: one chunk's output */
  if (st == CS_OK && pp > 1) {
    double out = 0;
    for (size_t i = 0; i < nl && out == 0; i++) {
      if (s->L[i].stage == 0 && (i + 1 == nl || s->L[i + 1].stage != 0)) {
        st = cs_workload_layer_cost(w, p, i, &lc, err);
        out = lc.out_bytes;
      }
    }
    if (st == CS_OK && s->fw.pp_send == CS_FW_PP_SPLIT && p->tp > 1 && !p->sp) {
      /* Megatron-LM's scatter-gather: each TP rank sends 1/tp of the output and the receiving
       * stage all-gathers it over its TP group before the chunk can start */
      double ag[NLEV];
      st = cost(s, CS_COLL_SEND_RECV, CS_GROUP_PP, CS_PHASE_FWD, out / p->tp, 2 * s->m * v, s->p2p,
                err);
      if (st == CS_OK)
        st = cost(s, CS_COLL_ALL_GATHER, CS_GROUP_TP, CS_PHASE_FWD, out, 2 * s->m * v, ag, err);
      for (int l = 0; l < NLEV && st == CS_OK; l++)
        s->p2p[l] += ag[l];
    } else if (st == CS_OK)
      st = cost(s, CS_COLL_SEND_RECV, CS_GROUP_PP, CS_PHASE_FWD, out, 2 * s->m * v, s->p2p, err);
  }
  free(z);
  free(dense);
  free(zu);
  return st;
}

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
  if (st == CS_OK) st = prepare(s, err);
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
  /* compute, host and framework uncertainty, independent of the collectives' */
  double u = s->in.compute->band_rel * (r->part.compute + r->part.optimizer);
  if (u > 0) {
    double dl = r->step - r->step_lo, dh = r->step_hi - r->step;
    r->step_lo = r->step - sqrt(dl * dl + u * u);
    r->step_hi = r->step + sqrt(dh * dh + u * u);
    if (r->step_lo < 0) r->step_lo = 0;
  }
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
  double t = (double)m * (sum.fwd + sum.bwd + sum.recompute) + optimizer_time(c, &one, params, 0);
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
