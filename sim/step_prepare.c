/* step_prepare.c — pricing a plan for the step simulator; see step_impl.h.
 *
 * cs_sim_prepare walks the layers once: each layer's compute time, its collectives priced through
 * cs_sim_cost (blocking tensor-, context- and expert-parallel time per pass; ZeRO-3 gathers and
 * reduce-scatters per layer or per gather unit of the framework profile; gradients set aside for
 * the bucket queue), then each (stage, chunk)'s forward and backward with the ZeRO-3 streams, the
 * ZeRO-1/2 weight gather, DataParallel's copies, the optimizer and the transfer between stages.
 * step.c replays the result.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "step_impl.h"

static double adam_bytes(const struct cs_plan *p) {
  double wb, gb, ob;
  cs_plan_param_bytes(p, &wb, &gb, &ob);
  return wb + gb + 2 * ob; /* read gradient and state, write state and weights */
}

double cs_sim_optimizer_time(const struct cs_compute *c, const struct cs_plan *p, double dense,
                             double expert) {
  double dpg = cs_plan_group_size(p, CS_GROUP_DP), edp = cs_plan_group_size(p, CS_GROUP_EDP);
  if (p->zero >= 1) dense /= dpg, expert /= edp;
  /* a steps calibration's host overhead per step runs beside nothing: the optimizer phase */
  return (dense + expert) * adam_bytes(p) / c->mem_bw[CS_MEM_OPTIM] + c->step_overhead;
}

/* The forward or backward of one micro-batch through a chunk's layers under ZeRO-3: weights are
 * gathered on the data-parallel stream (one layer ahead with prefetch), gradients reduce-scattered
 * after each layer's backward. dur[i], ag[i], rs[i], cmp[i] per layer (or gather unit) in
 * execution order; pf[i] (NULL = all) says whether the next gather may be issued while unit i
 * runs (a live-parameter limit forbids it); host[i] (NULL = none) delays that issue to when the
 * host has issued unit i (an implicit prefetch; at most the unit's duration), so a host-bound
 * unit hides nothing. Returns the chunk's duration; *extra receives the interference added to
 * compute. */
static double zero3_chunk(int n, const double *dur, const double *cmp, const double *ag,
                          const double *rs, int prefetch_all, const int *pf, const double *host,
                          double interf, double *extra) {
  double t = 0, free_at = 0, ag_end = n > 0 ? ag[0] : 0;
  *extra = 0;
  free_at = ag_end;
  for (int i = 0; i < n; i++) {
    const int prefetch = prefetch_all && (!pf || pf[i]);
    double start = t > ag_end ? t : ag_end;
    double next_end = 0;
    if (i + 1 < n && prefetch) {
      double at = start + (host ? (host[i] < dur[i] ? host[i] : dur[i]) : 0);
      double issue = free_at > at ? free_at : at;
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
    enum cs_status st = cs_sim_cost(s, CS_COLL_SEND_RECV, CS_GROUP_CP,
                                    b ? CS_PHASE_BWD : CS_PHASE_FWD, ring[b], calls, x, err);
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
 * as DDP would all-reduce them) are reduced onto GPU 0; with fused attention each replica's
 * thread first builds its attention graph (host_attn_graph). Nothing overlaps: all of it is
 * exposed data-parallel time of every micro-batch. */
static enum cs_status dataparallel(struct cs_sim *s, double params, double grad_bytes,
                                   struct cs_error *err) {
  const struct cs_plan *p = &s->plan;
  double wb, gb, ob;
  cs_plan_param_bytes(p, &wb, &gb, &ob);
  double bc[NLEV], rd[NLEV], sc[NLEV] = {0, 0, 0};
  double in = p->mbs * input_bytes(s->in.workload);
  enum cs_status st =
      cs_sim_cost(s, CS_COLL_BROADCAST, CS_GROUP_DP, CS_PHASE_FWD, params * wb, s->m, bc, err);
  if (st == CS_OK)
    st = cs_sim_cost(s, CS_COLL_REDUCE, CS_GROUP_DP, CS_PHASE_BWD, grad_bytes, s->m, rd, err);
  if (st == CS_OK && in > 0)
    st = cs_sim_cost(s, CS_COLL_SEND_RECV, CS_GROUP_DP, CS_PHASE_FWD, in, s->m * (p->dp - 1), sc,
                     err);
  if (st != CS_OK) return st;
  struct schunk *C = &s->C[0];
  /* each forward starts one thread per replica, and each rebuilds the fused attention kernel's
   * per-thread graph before its replica runs (host_attn_graph): one after the other */
  const double graphs = s->in.workload->flash_attention ? p->dp * s->fw.host_attn_graph : 0;
  for (int l = 0; l < NLEV; l++) {
    double f = bc[l] + (p->dp - 1) * sc[l] + graphs;
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
  double cpf[MAXU], cpb[MAXU]; /* GPU seconds of copying gathered weights out (gather_copy) */
  int pf[MAXU];                /* the next unit's gather may be issued while this one runs */
};

/* Whether the profile's ZeRO-3 schedule differs from one cost-free gather per block with one
 * prefetch ahead (the schedule of plain cs_sim before profiles, kept bit for bit). */
static int zero3_by_units(const struct cs_sim *s) {
  const struct cs_framework *f = &s->fw;
  return f->unit == CS_FW_UNIT_MODULE || f->host_call > 0 || f->host_module > 0 ||
         f->host_prefetch > 0 || f->host_rank > 0 || f->host_copy > 0 || f->rank_copies ||
         f->fetch_norm || f->fetch_zero || f->gather_copy || !f->zero_reduce_scatter ||
         f->sync_per_fetch || f->persistence > 0 || f->reduce_dtype == CS_FW_RD_FP32 ||
         !f->reshard_after_forward || f->root_unit ||
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
/* Hybrid sharding: a unit's gradient shard (bytes) all-reduced across the replicas after its
 * reduce-scatter, on the same stream: its time into rs, its call into *host. Nothing without a
 * replica group. */
static enum cs_status replica_reduce(struct cs_sim *s, int stage, double bytes, double *rs,
                                     double *host, struct cs_error *err) {
  const struct sgroup *rg = &s->grp[CS_GROUP_REPLICA];
  if (!rg->exists || rg->q.ranks <= 1 || !(bytes > 0)) return CS_OK;
  double t[NLEV];
  enum cs_status st =
      cs_sim_cost(s, CS_COLL_ALL_REDUCE, CS_GROUP_REPLICA, CS_PHASE_BWD, bytes, s->m, t, err);
  if (st != CS_OK) return st;
  for (int l = 0; l < NLEV; l++)
    rs[l] += t[l];
  *host += s->fw.host_call;
  s->comm_bytes[stage] += s->m * bytes * cs_coll_busbw_factor(CS_COLL_ALL_REDUCE, rg->q.ranks);
  return CS_OK;
}

/* Seconds to stream `bytes` of memory traffic (reads plus writes) through the GPU at the compute
 * model's copy rate (mem_bw[CS_MEM_COPY]: the GPU file's hbm_bw x mem_efficiency, or the copy
 * probe's measured rate; 0 when there is none). */
static double stream_time(const struct cs_compute *c, double bytes) {
  double rate = c->mem_bw[CS_MEM_COPY];
  return rate > 0 ? bytes / rate : 0;
}

/* The host time of unit u's hooks (of n in layer Li, dense parameters; around[0] and around[1]
 * layers of its stage before and after it) in each pass: host_module in every pass over the
 * module (forward, backward and, under full recomputation, the forward re-run inside backward),
 * and the prefetch's walk, host_prefetch per unit it passes: forward the units after u, backward
 * the ones before it (every layer of the stage taken as n units of this layer's size), until they
 * hold prefetch_params. */
static void unit_hooks(const struct cs_sim *s, const double around[2], const struct cs_layer *Li,
                       int u, int n, double dense, struct zunits *zu) {
  const struct cs_framework *f = &s->fw;
  const struct cs_plan *p = &s->plan;
  const int rerun = p->recompute == CS_RECOMPUTE_FULL && Li->type == CS_LAYER_BLOCK;
  zu->hostf[u] += f->host_module;
  zu->hostb[u] += f->host_module * (1 + rerun);
  if (!(f->host_prefetch > 0 && f->prefetch_params > 0 && dense > 0)) return;
  double ahead = f->prefetch_params / (dense / n);
  double rf = around[1] * n + (n - 1 - u), rb = around[0] * n + u;
  double walk_f = rf < ahead ? rf : ahead, walk_b = rb < ahead ? rb : ahead;
  zu->hostf[u] += f->host_prefetch * walk_f;
  zu->hostb[u] += f->host_prefetch * (walk_b + rerun * walk_f);
}

/* Layer Li's gather units into zu: its gathers (zb: the layer's ZeRO-3 bytes per pass) and
 * reduce-scatters at each level, their host work and copies, and the prefetch each allows. root
 * (the profile's root_unit, for a layer outside the blocks): 0 not the root; 1 the first layer of
 * its stage's root, which carries the root's hooks and calls; 2 a later one, whose bytes ride on
 * them (gathered where that layer runs, not with the first: an untied head's share arrives late,
 * which the prefetch mostly hides). Errors: those of cs_sim_cost. */
static enum cs_status zero3_units(struct cs_sim *s, int stage, const double around[2], int root,
                                  const struct cs_layer *Li, const struct cs_layer_cost *lc,
                                  double zb[2][3], struct zunits *zu, struct cs_error *err) {
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
  /* backward gathers: none for the root, which stays gathered from forward to backward */
  const int kb0 = f->reshard_after_forward && !root ? 1 + regather : 0;
  double wb, gb, ob;
  cs_plan_param_bytes(p, &wb, &gb, &ob);
  const double rscale = f->reduce_dtype == CS_FW_RD_FP32 ? 4.0 / gb : 1.0;
  zu->n = n;
  for (int u = 0; u < n; u++) {
    /* stage3.py release_sub_module keeps a weight whose reuse distance (the parameters of the
     * sub-modules run before its next use) is under max_reuse: after its recomputed forward a
     * matrix is next used by its own backward, with the later matrices of the block recomputed
     * and back-propagated in between. Known per matrix only (a block as one unit: always). */
    double after = 0;
    for (int v = u + 1; v < n; v++)
      after += wt[v];
    const int kb = kb0 - (regather && n > 1 && f->max_reuse > 0 && 2 * after < f->max_reuse);
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
      /* one copy kernel per rank beside the collective on its stream, each issued by the
       * calling thread (host_copy): the host holds the call ranks x host_copy, and a copy's GPU
       * time hides behind the next one's issue as far as host_copy lasts */
      double hcopy = f->rank_copies ? f->host_copy : 0;
      /* a later layer of the root rides on its first layer's call and hooks */
      double hc = root > 1 ? 0 : f->host_call + ranks * (f->host_rank + hcopy);
      const struct cs_compute *cm = s->in.compute;
      double ko = cm->kernel_overhead;
      double copies = f->rank_copies ? ranks * (ko > hcopy ? ko - hcopy : 0) : 0;
      enum cs_status st;
      if (agb > 0) {
        st = cs_sim_cost(s, CS_COLL_ALL_GATHER, group, CS_PHASE_FWD, agb, s->m * (1 + kb), t, err);
        if (st != CS_OK) return st;
        for (int l = 0; l < NLEV; l++) {
          zu->agf[u][l] += t[l] + copies;
          zu->agb[u][l] += kb * (t[l] + copies);
        }
        /* a norm of the gathered weight after each fetch: one streaming read of it on the
         * compute stream, waited for (fetch_norm) */
        double norm = f->fetch_norm ? stream_time(cm, agb) + ko : 0;
        /* a zero-fill of the gathered buffer before each gather, waited for by a device
         * synchronisation (fetch_zero): one streaming write of it */
        if (f->fetch_zero) norm += stream_time(cm, agb) + ko;
        /* the gathered buffer copied out into the parameters on the compute stream before the
         * unit runs (gather_copy): a read and a write of it, GPU time of the unit */
        double cpy = f->gather_copy ? stream_time(cm, 2 * agb) + ko : 0;
        zu->cpf[u] += cpy;
        zu->cpb[u] += kb * cpy;
        zu->hostf[u] += hc + norm;
        zu->hostb[u] += kb * (hc + norm);
        s->comm_bytes[stage] +=
            s->m * (1 + kb) * agb * cs_coll_busbw_factor(CS_COLL_ALL_GATHER, (int)ranks);
      }
      if (rsb > 0) {
        /* reduce-scattered, or (zero_reduce_scatter off) all-reduced from a flattened copy
         * that is copied back: two streaming reads and writes of the gradients */
        int rc = f->zero_reduce_scatter ? CS_COLL_REDUCE_SCATTER : CS_COLL_ALL_REDUCE;
        double flat = f->zero_reduce_scatter ? 0 : stream_time(cm, 4 * rsb);
        st = cs_sim_cost(s, rc, group, CS_PHASE_BWD, rsb, s->m, t, err);
        if (st != CS_OK) return st;
        for (int l = 0; l < NLEV; l++)
          zu->rs[u][l] += t[l] + (f->zero_reduce_scatter ? copies : flat);
        zu->hostb[u] +=
            f->zero_reduce_scatter || root > 1 ? hc : f->host_call; /* one flat tensor */
        s->comm_bytes[stage] += s->m * rsb * cs_coll_busbw_factor(rc, (int)ranks);
        st = replica_reduce(s, stage, rsb / ranks, zu->rs[u], &zu->hostb[u], err);
        if (st != CS_OK) return st;
      }
    }
    if (root < 2) unit_hooks(s, around, Li, u, n, dense, zu);
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
  /* each copy issued by the host (host_copy) or run by the GPU, whichever takes longer: the
   * gather after the optimizer overlaps nothing */
  double ko = s->in.compute->kernel_overhead;
  double copies = s->fw.rank_copies ? ranks * (ko > s->fw.host_copy ? ko : s->fw.host_copy) : 0;
  double t[NLEV], r[NLEV] = {0, 0, 0};
  enum cs_status st = CS_OK;
  if (full > 0)
    st = cs_sim_cost(s, CS_COLL_ALL_GATHER, group, CS_PHASE_PARAM, B, (long)full, t, err);
  if (st == CS_OK && rem > 0)
    st = cs_sim_cost(s, CS_COLL_ALL_GATHER, group, CS_PHASE_PARAM, rem, 1, r, err);
  if (st != CS_OK) return st;
  double calls = full + (rem > 0);
  for (int l = 0; l < NLEV; l++)
    s->param[l][sg] += (full > 0 ? full * t[l] : 0) + r[l] + calls * copies;
  s->comm_bytes[sg] += bytes * cs_coll_busbw_factor(CS_COLL_ALL_GATHER, (int)ranks);
  return CS_OK;
}

/* Scratch of prepare(): per-layer figures in execution order, per level, and per-stage sums. */
struct prep {
  double *z;              /* one block holding the seven per-layer arrays below */
  double *fdur, *bdur;    /* [nl * NLEV] forward, backward with the blocking collectives */
  double *agf, *agb, *rs; /* [nl * NLEV] ZeRO-3 gathers (forward, backward), reduce-scatters */
  double *cf, *cb;        /* [nl * NLEV] compute alone of the forward, backward */
  double *dense;          /* [pp * 2] dense and expert parameters per stage; pg, slack,
                             grad_host, layers, seen and roots follow it in the same allocation */
  double *pg;             /* [pp * 2] ZeRO-1/2 weight bytes to gather, DP and EDP */
  double *slack;          /* [pp] backward GPU time per stage that the host runs ahead of */
  double *grad_host;      /* [pp] host_grad_param time per stage */
  double *layers, *seen;  /* [pp] layers per stage; of them prepared so far */
  double *roots;          /* [pp] layers of the stage's root prepared so far (root_unit) */
  int has_blocks;         /* the workload has transformer blocks (the root is the rest) */
  struct zunits *zu;      /* [nl] ZeRO-3 gather units when byunits, else NULL */
  int byunits;            /* ZeRO-3 priced per gather unit (zero3_by_units) */
};

/* One layer's collectives as prepare_layer sums them: blocking time per pass at each level, and
 * the bytes priced elsewhere (ring attention, ZeRO-3 units). */
struct lcomm {
  double tpf[NLEV], tpb[NLEV], cpf[NLEV], cpb[NLEV], epf[NLEV], epb[NLEV];
  double ring[2];  /* bytes one rank sends per ring step, forward and backward */
  double ntp[2];   /* tensor-parallel collective calls per micro-batch, forward and backward */
  double zb[2][3]; /* ZeRO-3 bytes per pass for zero3_units */
};

/* Allocates P's arrays for s (zeroed, P->byunits set). Errors: CS_ERR_NOMEM, with nothing left
 * allocated. */
static enum cs_status prep_alloc(const struct cs_sim *s, struct prep *P, struct cs_error *err) {
  size_t nl = s->in.workload->nlayer;
  memset(P, 0, sizeof *P);
  P->z = calloc(nl * 8 * NLEV + 1, sizeof *P->z);
  if (!P->z) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  double *z = P->z;
  P->fdur = z, P->bdur = z + nl * NLEV, P->agf = z + 2 * nl * NLEV, P->agb = z + 3 * nl * NLEV;
  P->rs = z + 4 * nl * NLEV, P->cf = z + 5 * nl * NLEV, P->cb = z + 6 * nl * NLEV;
  P->dense = calloc((size_t)s->pp * 9, sizeof *P->dense);
  if (!P->dense) {
    free(P->z);
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  }
  P->pg = P->dense + (size_t)s->pp * 2;
  P->slack = P->dense + (size_t)s->pp * 4;
  P->grad_host = P->dense + (size_t)s->pp * 5;
  P->layers = P->dense + (size_t)s->pp * 6, P->seen = P->dense + (size_t)s->pp * 7;
  P->roots = P->dense + (size_t)s->pp * 8;
  for (size_t j = 0; j < nl; j++) {
    P->layers[cs_workload_layer_stage(s->in.workload, &s->plan, j)] += 1;
    P->has_blocks |= s->in.workload->layer[j].type == CS_LAYER_BLOCK;
  }
  P->byunits = s->plan.zero == 3 && zero3_by_units(s);
  P->zu = P->byunits ? calloc(nl + 1, sizeof *P->zu) : NULL;
  if (P->byunits && !P->zu) {
    free(P->z);
    free(P->dense);
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  }
  return CS_OK;
}

/* Prices the collectives of layer i (lc, on stage): blocking TP, CP and EP time per pass into x,
 * ZeRO-3 gathers and reduce-scatters into P's arrays, embedding and parameter collectives into
 * s->embed and s->param; what is priced elsewhere is set aside: gradients for the bucket queue
 * (s->L[i].grad), ZeRO-3 bytes per unit (x->zb), ZeRO-1/2 weight bytes (P->pg), ring-attention
 * bytes (x->ring). Errors: cost's. */
static enum cs_status layer_comm(struct cs_sim *s, struct prep *P, size_t i, int stage,
                                 const struct cs_layer_cost *lc, struct lcomm *x,
                                 struct cs_error *err) {
  const struct cs_plan *p = &s->plan;
  struct slayer *L = &s->L[i];
  double *ag_f = P->agf + i * NLEV, *ag_b = P->agb + i * NLEV, *r_s = P->rs + i * NLEV;
  for (size_t k = 0; k < lc->ncomm; k++) {
    const struct cs_comm *cm = &lc->comm[k];
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
    if (P->byunits && (cm->group == CS_GROUP_DP || cm->group == CS_GROUP_EDP) &&
        cm->phase <= CS_PHASE_BWD &&
        (cm->coll == CS_COLL_ALL_GATHER || cm->coll == CS_COLL_REDUCE_SCATTER)) {
      /* ZeRO-3 gathers and reduce-scatters: priced per unit (zero3_units) */
      int kk = cm->coll == CS_COLL_REDUCE_SCATTER ? 2 : cm->phase == CS_PHASE_BWD;
      x->zb[cm->group == CS_GROUP_EDP][kk] += cm->count * cm->bytes;
      continue;
    }
    if (P->byunits && cm->group == CS_GROUP_REPLICA) continue; /* with each unit (zero3_units) */
    if (s->fw.allgather_bucket > 0 && cm->phase == CS_PHASE_PARAM &&
        cm->coll == CS_COLL_ALL_GATHER && (cm->group == CS_GROUP_DP || cm->group == CS_GROUP_EDP)) {
      /* ZeRO-1/2 updated weights: gathered in allgather_bucket calls (param_gather) */
      P->pg[stage * 2 + (cm->group == CS_GROUP_EDP)] += cm->count * cm->bytes;
      continue;
    }
    if (cm->group == CS_GROUP_CP && cm->phase <= CS_PHASE_BWD) {
      /* ring attention: the gathered keys and values (and their gradients) travel one block
       * per step (cp_ring) */
      x->ring[cm->phase == CS_PHASE_BWD] += cm->count * cm->bytes / p->cp;
      continue;
    }
    long calls = cm->count * (cm->phase <= CS_PHASE_BWD ? s->m : 1);
    enum cs_status st = cs_sim_cost(s, cm->coll, cm->group, cm->phase, cm->bytes, calls, t, err);
    if (st != CS_OK) return st;
    s->comm_bytes[stage] +=
        calls * cm->bytes *
        (cm->coll == CS_COLL_SEND_RECV
             ? 1
             : cs_coll_busbw_factor(cm->coll, cs_plan_group_size(p, cm->group)));
    int g = cm->group, fwd = cm->phase == CS_PHASE_FWD;
    if ((g == CS_GROUP_TP || g == CS_GROUP_EMBED) && cm->phase <= CS_PHASE_BWD)
      x->ntp[!fwd] += cm->count;
    for (int l = 0; l < NLEV; l++) {
      double y = cm->count * t[l];
      if (cm->phase == CS_PHASE_FWD || cm->phase == CS_PHASE_BWD) {
        if (g == CS_GROUP_TP || g == CS_GROUP_EMBED)
          (fwd ? x->tpf : x->tpb)[l] += y;
        else if (g == CS_GROUP_CP)
          (fwd ? x->cpf : x->cpb)[l] += y;
        else if (g == CS_GROUP_EP)
          (fwd ? x->epf : x->epb)[l] += y;
        else if (cm->coll == CS_COLL_ALL_GATHER)
          (fwd ? ag_f : ag_b)[l] += y;
        else
          r_s[l] += y;
      } else if (cm->phase == CS_PHASE_GRAD) {
        if (g == CS_GROUP_EMBED) s->embed[l][stage] += y;
      } else {
        s->param[l][stage] += y;
      }
    }
  }
  return CS_OK;
}

/* The host time of a layer's forward (backward = 0) or backward (1) whose compute takes f and b
 * as the compute model has it: the GPU file's host_layer split by host_fwd_share (or by f and b
 * when the split is not known), scaled as the layer's times are; 0 where no eager host is
 * modelled. */
static double phase_host(const struct cs_compute *c, double f, double b, int backward) {
  if (!(c->host_layer > 0)) return 0;
  double share = c->host_fwd_share > 0 ? c->host_fwd_share : f + b > 0 ? f / (f + b) : 0.5;
  return c->host_layer * (backward ? 1 - share : share) * c->scale;
}

/* What the host's tensor-parallel calls (h seconds in one pass) add to that pass of a layer that
 * takes gpu (its kernels and TP collectives; f, b: the layer's compute as priced): the part of
 * the pass's host time with them (phase_host + h) that outlasts gpu; 0 when the GPU sets the
 * pace. */
static double tp_host(const struct cs_compute *c, double h, double f, double b, int backward,
                      double gpu) {
  if (!(h > 0)) return 0;
  double host = phase_host(c, f, b, backward) + h;
  return host > gpu ? host - gpu : 0;
}

/* Layer i (costed as lc, timed as lt) into s and P: its stage and chunk, its collectives
 * (layer_comm, cp_ring, zero3_units), its forward and backward at each level with their blocking
 * collectives, and the sums of its chunk and stage. Errors: those of layer_comm, cp_ring and
 * zero3_units. */
static enum cs_status prepare_layer(struct cs_sim *s, struct prep *P, size_t i,
                                    const struct cs_layer_cost *lc, const struct cs_layer_time *lt,
                                    struct cs_error *err) {
  const struct cs_workload *w = s->in.workload;
  const struct cs_plan *p = &s->plan;
  const struct cs_compute *c = s->in.compute;
  const int pp = s->pp, v = s->v;
  const struct cs_layer *Li = &w->layer[i];
  int stage = cs_workload_layer_stage(w, p, i), chunk = cs_workload_layer_chunk(w, p, i) / pp;
  struct slayer *L = &s->L[i];
  struct schunk *C = &s->C[stage * v + chunk];
  L->stage = stage, L->chunk = chunk;
  if (C->first == (size_t)-1) C->first = i;
  C->last = i;
  C->has_layers = 1;
  double attn_f = 0, attn_b = 0;
  if (p->cp > 1)
    for (size_t k = 0; k < lc->nops; k++)
      if (lc->op[k].attention) {
        attn_f += cs_compute_op_time(c, &lc->op[k], 0) * c->scale;
        attn_b += cs_compute_op_time(c, &lc->op[k], 1) * c->scale;
      }
  struct lcomm x;
  memset(&x, 0, sizeof x);
  P->dense[stage * 2] += lc->params - lc->params_expert;
  P->dense[stage * 2 + 1] += lc->params_expert;
  enum cs_status st = layer_comm(s, P, i, stage, lc, &x, err);
  if (st != CS_OK) return st;
  if (p->cp > 1 && (x.ring[0] > 0 || x.ring[1] > 0)) {
    st = cp_ring(s, stage, x.ring, attn_f, attn_b, x.cpf, x.cpb, err);
    if (st != CS_OK) return st;
  }
  const double around[2] = {P->seen[stage], P->layers[stage] - P->seen[stage] - 1};
  P->seen[stage] += 1;
  if (P->byunits) {
    int root = 0;
    if (s->fw.root_unit && P->has_blocks && Li->type != CS_LAYER_BLOCK)
      root = P->roots[stage]++ > 0 ? 2 : 1;
    st = zero3_units(s, stage, around, root, Li, lc, x.zb, &P->zu[i], err);
    if (st != CS_OK) return st;
  }
  for (int l = 0; l < NLEV; l++) {
    if (p->overlap_tp) { /* hidden behind the layer's GEMMs as far as they last; the GEMMs they
                            hide behind run slower by the interference factor over that window
                            (as beside data-parallel collectives), counted as TP time */
      double k = s->interference - 1;
      double of = fmin(x.tpf[l], lt->fwd), ob = fmin(x.tpb[l], lt->bwd);
      x.tpf[l] = x.tpf[l] - of + k * of;
      x.tpb[l] = x.tpb[l] - ob + k * ob;
    }
    /* the host issues each tensor-parallel collective besides the layer's kernels
     * (host_tp_call): where it sets the layer's pace, the pass waits for it */
    x.tpf[l] += tp_host(c, s->fw.host_tp_call * x.ntp[0], lt->fwd, lt->bwd, 0, lt->fwd + x.tpf[l]);
    x.tpb[l] += tp_host(c, s->fw.host_tp_call * x.ntp[1], lt->fwd, lt->bwd, 1,
                        lt->bwd + lt->recompute + x.tpb[l]);
    P->fdur[i * NLEV + l] = lt->fwd + x.tpf[l] + x.cpf[l] + x.epf[l];
    P->bdur[i * NLEV + l] = lt->bwd + lt->recompute + x.tpb[l] + x.cpb[l] + x.epb[l];
    L->bdur[l] = P->bdur[i * NLEV + l];
    P->cf[i * NLEV + l] = lt->fwd;
    P->cb[i * NLEV + l] = lt->bwd + lt->recompute;
    C->tp[l] += x.tpf[l] + x.tpb[l];
    C->cp[l] += x.cpf[l] + x.cpb[l];
    C->ep[l] += x.epf[l] + x.epb[l];
    C->cpb[l] += x.cpb[l];
    C->epb[l] += x.epb[l];
  }
  C->comp += lt->fwd + lt->bwd + lt->recompute;
  C->host += lt->host;
  if (chunk == 0) s->first_fwd[stage] += lt->fwd;
  return CS_OK;
}

/* ZeRO-3 by gather unit, level l of chunk C (F, B: its passes without ZeRO-3): the units in
 * execution order (forward in model order, backward reversed) through zero3_chunk, with their host
 * work and the profile's prefetch. Sets C->F, C->B, C->z3 and C->interf at l. Errors:
 * CS_ERR_NOMEM. */
static enum cs_status chunk_units(struct cs_sim *s, const struct prep *P, struct schunk *C, int l,
                                  double F, double B, struct cs_error *err) {
  const struct zunits *zu = P->zu;
  size_t nu = 0;
  for (size_t i = C->first; i <= C->last; i++)
    nu += (size_t)zu[i].n;
  double *e = malloc(nu * 10 * sizeof *e + 1);
  int *pf = malloc(nu * 2 * sizeof *pf + 1);
  if (!e || !pf) {
    free(e);
    free(pf);
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  }
  double *d1 = e, *c1 = e + nu, *a1 = e + 2 * nu, *r1 = e + 3 * nu;
  double *d2 = e + 4 * nu, *c2 = e + 5 * nu, *a2 = e + 6 * nu, *r2 = e + 7 * nu;
  double *h1 = e + 8 * nu, *h2 = e + 9 * nu; /* host time of each unit, forward and backward */
  const struct cs_compute *cm = s->in.compute;
  const int imp = s->fw.prefetch_implicit;
  size_t j = 0;
  for (size_t i = C->first; i <= C->last; i++)
    for (int u = 0; u < zu[i].n; u++, j++) {
      const struct zunits *x = &zu[i];
      const double cf = P->cf[i * NLEV + l], cb = P->cb[i * NLEV + l];
      d1[j] = with_host(&s->fw, P->fdur[i * NLEV + l] * x->frac[u] + x->cpf[u], x->hostf[u]);
      c1[j] = cf * x->frac[u];
      a1[j] = x->agf[u][l];
      r1[j] = 0;
      if (imp) h1[j] = x->hostf[u] + phase_host(cm, cf, cb, 0) * x->frac[u];
      pf[j] = x->pf[u];
    }
  j = 0;
  for (size_t i = C->last + 1; i-- > C->first;)
    for (int u = zu[i].n; u-- > 0; j++) {
      const struct zunits *x = &zu[i];
      const double cf = P->cf[i * NLEV + l], cb = P->cb[i * NLEV + l];
      d2[j] = with_host(&s->fw, P->bdur[i * NLEV + l] * x->frac[u] + x->cpb[u], x->hostb[u]);
      c2[j] = cb * x->frac[u];
      a2[j] = x->agb[u][l];
      r2[j] = x->rs[u][l];
      if (imp) h2[j] = x->hostb[u] + phase_host(cm, cf, cb, 1) * x->frac[u];
      pf[nu + j] = x->pf[u];
    }
  int pre = s->plan.overlap_param && s->fw.prefetch_depth > 0;
  double x1, x2;
  double f3 = zero3_chunk((int)nu, d1, c1, a1, r1, pre, pf, imp ? h1 : NULL, s->interference, &x1);
  double b3 =
      zero3_chunk((int)nu, d2, c2, a2, r2, pre, pf + nu, imp ? h2 : NULL, s->interference, &x2);
  free(e);
  free(pf);
  C->interf[l] = x1 + x2;
  C->z3[l] = (f3 - F - x1) + (b3 - B - x2);
  C->F[l] = f3, C->B[l] = b3;
  return CS_OK;
}

/* ZeRO-3 by layer, level l of chunk C (F, B: its passes without ZeRO-3): the layers in execution
 * order (forward in model order, backward reversed) through zero3_chunk, one gather ahead when
 * the plan overlaps parameters. Sets C->F, C->B, C->z3 and C->interf at l. Errors:
 * CS_ERR_NOMEM. */
static enum cs_status chunk_layers(struct cs_sim *s, const struct prep *P, struct schunk *C, int l,
                                   double F, double B, struct cs_error *err) {
  int n = (int)(C->last - C->first + 1);
  double *e = malloc((size_t)n * 8 * sizeof *e);
  if (!e) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  double *d1 = e, *c1 = e + n, *a1 = e + 2 * n, *r1 = e + 3 * n;
  double *d2 = e + 4 * n, *c2 = e + 5 * n, *a2 = e + 6 * n, *r2 = e + 7 * n;
  for (int j = 0; j < n; j++) {
    size_t fi = C->first + (size_t)j, bi = C->last - (size_t)j;
    d1[j] = P->fdur[fi * NLEV + l], c1[j] = P->cf[fi * NLEV + l], a1[j] = P->agf[fi * NLEV + l],
    r1[j] = 0;
    d2[j] = P->bdur[bi * NLEV + l], c2[j] = P->cb[bi * NLEV + l], a2[j] = P->agb[bi * NLEV + l];
    r2[j] = P->rs[bi * NLEV + l];
  }
  double x1, x2;
  double f3 =
      zero3_chunk(n, d1, c1, a1, r1, s->plan.overlap_param, NULL, NULL, s->interference, &x1);
  double b3 =
      zero3_chunk(n, d2, c2, a2, r2, s->plan.overlap_param, NULL, NULL, s->interference, &x2);
  free(e);
  C->interf[l] = x1 + x2;
  C->z3[l] = (f3 - F - x1) + (b3 - B - x2);
  C->F[l] = f3, C->B[l] = b3;
  return CS_OK;
}

/* How long the GPU still runs a layer's backward after the host has issued it (lt as priced):
 * the backward's time less the host's share of it (phase_host), 0 where the host sets the pace.
 * Host work after backward (host_grad_param) runs in that time. */
static double backward_slack(const struct cs_compute *c, const struct cs_layer_time *lt) {
  double hb = phase_host(c, lt->fwd, lt->bwd, 1);
  return lt->bwd > hb ? lt->bwd - hb : 0;
}

/* The parameter tensors of layer L as PyTorch modules hold them (each weight matrix, bias and
 * norm scale a tensor; a block's fused QKV and first FFN matrix one each, as Megatron-LM and
 * tests/gpu/steps.py build them; an MoE block's experts two or three matrices each), before any
 * sharding: ZeRO partitions every tensor, so each rank holds a piece of all of them. */
static double param_tensors(const struct cs_workload *w, const struct cs_layer *L) {
  const double norm = w->norm == CS_NORM_RMSNORM ? 1 : 1 + (w->bias != 0);
  const double b = w->bias != 0;
  switch (L->type) {
  case CS_LAYER_EMBEDDING:
    return 1 + (w->max_positions > 0) + (w->type_vocab > 0) + (w->embedding_norm ? norm : 0);
  case CS_LAYER_BLOCK: {
    double ffn = 2 * (1 + b);
    if (L->moe) ffn = 1 + w->experts * (w->ffn_type == CS_FFN_SWIGLU ? 3.0 : 2.0) * (1 + b);
    return 2 * (1 + b) + ffn + 2 * norm;
  }
  case CS_LAYER_HEAD:
    return norm + !w->tied_embeddings;
  case CS_LAYER_CONV:
    return 1 + (L->bias != 0) + 2 * (L->bn != 0);
  case CS_LAYER_LINEAR:
    return 1 + (L->bias != 0);
  default:
    return 0;
  }
}

/* The copies of the gradients (dense and expert parameters of a stage) that a bucketed
 * reduction makes each step on the compute stream (the profile's grad_copies: PyTorch DDP's
 * Reducer copies each gradient into its bucket and, after the all-reduce, back; DeepSpeed's
 * contiguous buffer takes one copy in): streaming passes of a read and a write of the gradient
 * bytes, at the GPU's copy rate. Counted with the optimizer step, which waits for them (the
 * copy in runs on the compute stream during backward, the copy back after it). None under
 * ZeRO-3 (its units price their own), DataParallel, or without a data-parallel group. */
static double grad_copy_time(const struct cs_sim *s, double dense, double expert) {
  const struct cs_plan *p = &s->plan;
  if (s->fw.grad_copies <= 0 || p->zero == 3 || p->dp_mode == CS_DP_DATAPARALLEL) return 0;
  double wb, gb, ob, bytes = 0;
  cs_plan_param_bytes(p, &wb, &gb, &ob);
  if (sgroup_spans(&s->grp[CS_GROUP_DP])) bytes += dense * gb;
  if (sgroup_spans(&s->grp[CS_GROUP_EDP])) bytes += expert * gb;
  return stream_time(s->in.compute, s->fw.grad_copies * 2.0 * bytes);
}

/* Chunk k's durations at each level from its layers (with the ZeRO-3 streams: chunk_units or
 * chunk_layers) and the tails of its gradient buckets; counts its bucket reductions. Errors:
 * cost's, CS_ERR_NOMEM. */
static enum cs_status prepare_chunk(struct cs_sim *s, const struct prep *P, int k,
                                    struct cs_error *err) {
  const struct cs_plan *p = &s->plan;
  static const double zero[NLEV] = {0, 0, 0};
  struct schunk *C = &s->C[k];
  if (!C->has_layers) return CS_OK;
  double tot[2] = {0, 0};
  for (size_t i = C->first; i <= C->last; i++)
    for (int g = 0; g < 2; g++)
      tot[g] += s->L[i].grad[g];
  enum cs_status st = CS_OK, zs;
  for (int g = 0; g < 2 && st == CS_OK; g++) {
    double rem = fmod(tot[g], p->bucket);
    if (rem > 0)
      st = cs_sim_cost(s, s->grad_coll, g ? CS_GROUP_EDP : CS_GROUP_DP, CS_PHASE_GRAD, rem, 1,
                       C->tail[g], err);
    else
      memcpy(C->tail[g], zero, sizeof zero);
  }
  for (int l = 0; l < NLEV; l++) {
    double F = 0, B = 0;
    for (size_t i = C->first; i <= C->last; i++) {
      F += P->fdur[i * NLEV + l];
      B += P->bdur[i * NLEV + l];
    }
    C->F[l] = F, C->B[l] = B;
    C->z3[l] = C->interf[l] = 0;
    if (P->byunits && s->grp[CS_GROUP_DP].exists) {
      if ((zs = chunk_units(s, P, C, l, F, B, err)) != CS_OK) {
        st = zs;
        break;
      }
    } else if (p->zero == 3 && s->grp[CS_GROUP_DP].exists) {
      if ((zs = chunk_layers(s, P, C, l, F, B, err)) != CS_OK) {
        st = zs;
        break;
      }
    }
  }
  /* full buckets here; the tail, a smaller reduction, was counted as its own call above */
  for (int g = 0; g < 2; g++)
    s->cache[g].calls += (long)floor(tot[g] / p->bucket);
  return st;
}

/* The point-to-point transfer between stages into s->p2p: one chunk's output (that of stage 0's
 * last layer), sent whole, or with the profile's split send (tp > 1, no sp) 1/tp per TP rank and
 * all-gathered on the receiving stage. Errors: cs_workload_layer_cost's, cost's. */
static enum cs_status stage_p2p(struct cs_sim *s, struct cs_error *err) {
  const struct cs_workload *w = s->in.workload;
  const struct cs_plan *p = &s->plan;
  const size_t nl = w->nlayer;
  const int v = s->v;
  struct cs_layer_cost lc;
  enum cs_status st = CS_OK;
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
    st = cs_sim_cost(s, CS_COLL_SEND_RECV, CS_GROUP_PP, CS_PHASE_FWD, out / p->tp, 2 * s->m * v,
                     s->p2p, err);
    if (st == CS_OK)
      st =
          cs_sim_cost(s, CS_COLL_ALL_GATHER, CS_GROUP_TP, CS_PHASE_FWD, out, 2 * s->m * v, ag, err);
    for (int l = 0; l < NLEV && st == CS_OK; l++)
      s->p2p[l] += ag[l];
  } else if (st == CS_OK)
    st = cs_sim_cost(s, CS_COLL_SEND_RECV, CS_GROUP_PP, CS_PHASE_FWD, out, 2 * s->m * v, s->p2p,
                     err);
  return st;
}

/* Prices the plan into s: per layer and per (stage, chunk) durations at each level, the gradient
 * buckets, the ZeRO-1/2 weight gather, DataParallel's copies, the optimizer and the transfer
 * between stages. Errors: cost's, cs_workload_layer_cost's, CS_ERR_NOMEM. */
enum cs_status cs_sim_prepare(struct cs_sim *s, struct cs_error *err) {
  const struct cs_workload *w = s->in.workload;
  const struct cs_plan *p = &s->plan;
  const struct cs_compute *c = s->in.compute;
  const int pp = s->pp, nc = pp * s->v;
  enum cs_status st = CS_OK;
  s->grad_coll = p->zero == 0 || (p->zero <= 2 && !s->fw.zero_reduce_scatter)
                     ? CS_COLL_ALL_REDUCE
                     : CS_COLL_REDUCE_SCATTER;
  for (int g = 0; g < 2; g++) {
    int group = g ? CS_GROUP_EDP : CS_GROUP_DP;
    st = cs_sim_cost(s, s->grad_coll, group, CS_PHASE_GRAD, p->bucket, 0, s->bucket_cost[g], err);
    if (st != CS_OK) return st;
  }
  for (int k = 0; k < nc; k++)
    s->C[k].first = (size_t)-1;
  struct prep P;
  if ((st = prep_alloc(s, &P, err)) != CS_OK) return st;
  /* the gradient reduction's per-tensor host work exists where gradients are reduced: a
   * data-parallel group of more than one rank (one GPU's plain step has none) */
  const int reduces = sgroup_spans(&s->grp[CS_GROUP_DP]) || sgroup_spans(&s->grp[CS_GROUP_EDP]);
  const double grad_param = reduces ? s->fw.host_grad_param : 0;

  size_t nl = w->nlayer;
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
    st = prepare_layer(s, &P, i, &lc, &lt, err);
    if (grad_param > 0) P.slack[cs_workload_layer_stage(w, p, i)] += backward_slack(c, &lt);
  }
  /* DataParallel: no buckets, the gradients are reduced to GPU 0 each micro-batch */
  double dp_grad = 0;
  if (st == CS_OK && p->dp_mode == CS_DP_DATAPARALLEL)
    for (size_t i = 0; i < nl; i++) {
      dp_grad += s->L[i].grad[0] + s->L[i].grad[1];
      s->L[i].grad[0] = s->L[i].grad[1] = 0;
    }
  /* chunk durations (ZeRO-3 streams per chunk), tails of the gradient buckets */
  for (int k = 0; k < nc && st == CS_OK; k++)
    st = prepare_chunk(s, &P, k, err);
  const double *dense = P.dense, *pg = P.pg;
  for (int i = 0; i < pp * 2 && st == CS_OK; i++)
    if (pg[i] > 0) st = param_gather(s, i / 2, i % 2 ? CS_GROUP_EDP : CS_GROUP_DP, pg[i], err);
  if (st == CS_OK && p->dp_mode == CS_DP_DATAPARALLEL && p->dp > 1)
    st = dataparallel(s, (dense[0] + dense[1]), dp_grad, err);
  for (int sg = 0; sg < pp && st == CS_OK; sg++)
    s->opt[sg] = cs_sim_optimizer_time(c, p, dense[sg * 2], dense[sg * 2 + 1]) +
                 grad_copy_time(s, dense[sg * 2], dense[sg * 2 + 1]);
  /* the optimizer step's per-tensor checks (host_step_param), each waiting for the device; the
   * per-tensor work of a reduction after backward (host_grad_param), which the host does while
   * the GPU still runs the last micro-batch's backward: what outlasts it */
  const struct cs_framework *f = &s->fw;
  for (size_t i = 0; i < nl && st == CS_OK && f->host_step_param + grad_param > 0; i++) {
    int sg = cs_workload_layer_stage(w, p, i);
    double n = param_tensors(w, &w->layer[i]);
    s->opt[sg] += f->host_step_param * n;
    P.grad_host[sg] += grad_param * n;
  }
  for (int sg = 0; sg < pp && st == CS_OK; sg++)
    if (P.grad_host[sg] > P.slack[sg]) s->opt[sg] += P.grad_host[sg] - P.slack[sg];
  if (st == CS_OK && pp > 1) st = stage_p2p(s, err);
  free(P.z);
  free(P.dense);
  free(P.zu);
  return st;
}
