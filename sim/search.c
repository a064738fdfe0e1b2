/* search.c — see search.h.
 *
 * The enumeration is a nest of loops, outermost the knobs that decide the weights a GPU holds
 * (tp, cp, pp, ep, zero), innermost those that only decide the activations (vpp, sp, recompute,
 * mbs). Before an inner nest runs, the memory of its smallest-activation point (mbs the least,
 * full recomputation, sp on) is estimated: when even that point does not fit, none of the nest
 * does, and it is counted as pruned. Within a nest, activations grow with mbs (a stage holds
 * min(K * mbs, gbs / dp) samples' worth), so the first mbs that does not fit ends the mbs loop,
 * but for the last, one micro-batch per step, which peaks lower under a profile that frees its
 * gradients after each step (memory.h); the nest's bound takes that point too. Both bounds are
 * exact: no feasible point is skipped.
 *
 * Each point that fits is simulated with a shared collective-cost cache (step.h) and only at its
 * predicted times (cs_sim_run_step); the band is computed afterwards for the entries kept.
 */
#include "search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "memory.h"
#include "step.h"

static const char *const family_names[CS_FAMILY_COUNT] = {"zero3", "dp+tp", "tp+pp", "3d"};

const char *cs_family_name(int f) {
  return f >= 0 && f < CS_FAMILY_COUNT ? family_names[f] : "?";
}

int cs_family_parse(const char *name) {
  for (int f = 0; f < CS_FAMILY_COUNT; f++)
    if (name && strcasecmp(name, family_names[f]) == 0) return f;
  return -1;
}

int cs_plan_family(const struct cs_plan *p, int gpus_per_node) {
  if (p->zero == 3) return CS_FAMILY_ZERO3;
  if (p->pp == 1) return CS_FAMILY_DPTP;
  if (p->tp == gpus_per_node && p->cp == 1) return CS_FAMILY_TPPP;
  return CS_FAMILY_3D;
}

void cs_search_space_init(struct cs_search_space *s, long gpus, int gbs) {
  memset(s, 0, sizeof *s);
  s->gpus = gpus;
  s->gbs = gbs;
  s->sp = -1;
  cs_plan_init(&s->base);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- results ------------------------------------------------------------------------------ */

/* The search's bounds on the split for this workload and topology (the space's own, or the
 * defaults of search.h). */
struct split_rules {
  const struct cs_workload *wl;
  int transformer, nblocks, max_tp, max_cp, max_pp;
};

static struct split_rules split_rules(const struct cs_search_inputs *in,
                                      const struct cs_search_space *sp) {
  const struct cs_workload *wl = in->workload;
  const struct cs_topology *t = in->topology;
  int domain = t->node.nvlink_domain > 0 ? t->node.nvlink_domain : t->node.gpus;
  struct split_rules r = {wl, cs_workload_is_transformer(wl), (int)cs_workload_blocks(wl), 0, 0, 0};
  r.max_tp = sp->max_tp ? sp->max_tp : domain;
  r.max_cp = sp->max_cp ? sp->max_cp : (r.transformer && wl->seq >= 8192 ? 16 : 1);
  r.max_pp = sp->max_pp ? sp->max_pp : r.nblocks;
  return r;
}

static int divides(long d, long n) {
  return d > 0 && n % d == 0;
}

/* tp the workload's heads and FFN width allow (a transformer's only) */
static int tp_allowed(const struct split_rules *r, int tp) {
  const struct cs_workload *wl = r->wl;
  if (!r->transformer) return tp == 1;
  return !(wl->heads % tp || wl->ffn % tp || (wl->kv_heads % tp && tp % wl->kv_heads));
}

static int cp_allowed(const struct split_rules *r, int cp) {
  return r->transformer ? r->wl->seq % cp == 0 : cp == 1;
}

/* Whether gpus GPUs split as dp x tp x pp x cp with dp dividing gbs under rules r. */
static int has_split(const struct split_rules *r, long gpus, long gbs) {
  for (int tp = 1; tp <= r->max_tp; tp++) {
    if (!divides(tp, gpus) || !tp_allowed(r, tp)) continue;
    for (int cp = 1; cp <= r->max_cp; cp++) {
      if (!divides((long)tp * cp, gpus) || !cp_allowed(r, cp)) continue;
      for (int pp = 1; pp <= r->max_pp; pp++)
        if (r->nblocks % pp == 0 && divides((long)tp * cp * pp, gpus) &&
            gbs % (gpus / ((long)tp * cp * pp)) == 0)
          return 1;
    }
  }
  return 0;
}

void cs_search_empty_hint(const struct cs_search_inputs *in, const struct cs_search_space *sp,
                          char *buf, size_t len) {
  if (len) buf[0] = '\0';
  if (!in || !in->workload || !in->topology || sp->gpus <= 0 || sp->gbs <= 0) return;
  struct split_rules r = split_rules(in, sp);
  const long gpus = sp->gpus, gbs = sp->gbs;
  if (has_split(&r, gpus, gbs)) return; /* the masks (ZeRO, families) emptied it, not the split */
  long a = gpus, b = gbs;
  while (b) {
    long t = a % b;
    a = b, b = t;
  }
  /* the nearest batch with a split (gbs = a multiple of the GPU count always has dp = GPUs),
   * and below the nearest GPU count with one: each looked for within HINT_REACH steps, which
   * bounds the time on absurd sizes (millions of GPUs) */
  enum { HINT_REACH = 2048 };
  long near = 0;
  for (long d = 1; d <= gpus && d <= HINT_REACH; d++) {
    if (gbs - d >= 1 && has_split(&r, gpus, gbs - d)) {
      near = gbs - d;
      break;
    }
    if (has_split(&r, gpus, gbs + d)) {
      near = gbs + d;
      break;
    }
  }
  /* the nearest GPU count with a split at this batch, in whole nodes where gpus is whole nodes */
  int gpn = in->topology->node.gpus > 0 ? in->topology->node.gpus : 1;
  long step = gpus % gpn == 0 ? gpn : 1, other = 0;
  for (long d = step; d <= gpus && d <= HINT_REACH * step && !other; d += step) {
    if (gpus - d >= step && has_split(&r, gpus - d, gbs))
      other = gpus - d;
    else if (has_split(&r, gpus + d, gbs))
      other = gpus + d;
  }
  int n = snprintf(buf, len,
                   "; no split of the %ld GPUs fits gbs=%ld: dp divides both (their greatest "
                   "common divisor is %ld) and %ld / dp = tp x pp x cp, with tp up to %d dividing "
                   "the heads and the FFN, pp dividing the %d blocks, cp up to %d dividing the "
                   "sequence",
                   gpus, gbs, a, gpus, r.max_tp, r.nblocks, r.max_cp);
  if (near && n > 0 && (size_t)n < len)
    n += snprintf(buf + n, len - (size_t)n, "; the nearest global batch with a split is %ld", near);
  if (other && n > 0 && (size_t)n < len) {
    if (step > 1)
      snprintf(buf + n, len - (size_t)n, ", the nearest node count %ld (%ld GPUs)", other / gpn,
               other);
    else
      snprintf(buf + n, len - (size_t)n, ", the nearest GPU count %ld", other);
  }
}

void cs_search_result_free(struct cs_search_result *r) {
  if (!r) return;
  free(r->e);
  r->e = NULL;
  r->n = 0;
}

static int entry_cmp(const void *a, const void *b) {
  const struct cs_search_entry *x = a, *y = b;
  if (x->step != y->step) return x->step < y->step ? -1 : 1;
  if (x->memory != y->memory) return x->memory < y->memory ? -1 : 1;
  char s1[256], s2[256];
  cs_plan_format(&x->plan, s1, sizeof s1);
  cs_plan_format(&y->plan, s2, sizeof s2);
  return strcmp(s1, s2);
}

/* Sorted by step: an entry is on the front unless an earlier (not slower) entry has at least its
 * headroom and at most its network bytes, one of the three strictly better. Only front members
 * can dominate, so each entry is compared with the front so far. */
enum cs_status cs_search_pareto(struct cs_search_result *r, struct cs_error *err) {
  size_t *front = malloc((r->n + 1) * sizeof *front), h = 0;
  if (!front) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < r->n; i++) {
    struct cs_search_entry *e = &r->e[i];
    int dominated = 0;
    for (size_t k = 0; k < h && !dominated; k++) {
      const struct cs_search_entry *f = &r->e[front[k]];
      if (f->step <= e->step && f->headroom >= e->headroom && f->net_bytes <= e->net_bytes &&
          (f->step < e->step || f->headroom > e->headroom || f->net_bytes < e->net_bytes))
        dominated = 1;
      /* identical figures: the first in order represents them */
      if (f->step == e->step && f->headroom == e->headroom && f->net_bytes == e->net_bytes)
        dominated = 1;
    }
    e->pareto = !dominated;
    if (e->pareto) front[h++] = i;
  }
  free(front);
  return CS_OK;
}

enum cs_status cs_search_merge(struct cs_search_result *r, const struct cs_search_entry *more,
                               size_t n, const struct cs_search_stats *st, struct cs_error *err) {
  if (n > 0) {
    struct cs_search_entry *e = realloc(r->e, (r->n + n) * sizeof *e);
    if (!e) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
    memcpy(e + r->n, more, n * sizeof *e);
    r->e = e;
    r->n += n;
    qsort(r->e, r->n, sizeof *r->e, entry_cmp);
  }
  enum cs_status ps = cs_search_pareto(r, err);
  if (ps != CS_OK) return ps;
  if (st) {
    r->stats.points += st->points;
    r->stats.invalid += st->invalid;
    r->stats.memory += st->memory;
    r->stats.pruned += st->pruned;
    r->stats.simulated += st->simulated;
    r->stats.cache_hits += st->cache_hits;
    r->stats.cache_misses += st->cache_misses;
    if (st->seconds > r->stats.seconds) r->stats.seconds = st->seconds;
  }
  return CS_OK;
}

/* ---- one point ---------------------------------------------------------------------------- */

static double net_bytes(const struct cs_sim *s) {
  struct cs_sim_coll_info info[128];
  int n = cs_sim_collectives(s, info, 128);
  double b = 0;
  for (int i = 0; i < n; i++) {
    if (info[i].nodes <= 1) continue;
    double f =
        info[i].coll == CS_COLL_SEND_RECV ? 1 : cs_coll_busbw_factor(info[i].coll, info[i].ranks);
    /* a ring (or tree) leaves each node once per channel: the node's network carries the bus
     * bytes of one member, shared by the group's members on that node */
    int g = info[i].gpus_per_node > 0 ? info[i].gpus_per_node : 1;
    b += (double)info[i].calls * info[i].bytes * f / g;
  }
  return b;
}

/* Simulates p (valid and fitting) and fills e. */
static enum cs_status simulate(const struct cs_search_inputs *in, struct cs_sim_cache *cache,
                               const struct cs_plan *p, const struct cs_memory *mem,
                               struct cs_search_entry *e, struct cs_error *err) {
  struct cs_sim_inputs si = {in->workload,     p,   in->compute, in->topology, in->cal,
                             in->interference, NULL};
  struct cs_sim *s = NULL;
  enum cs_status st = cs_sim_alloc_cached(&si, cache, &s, err);
  if (st != CS_OK) return st;
  struct cs_sim_result r;
  cs_sim_run_step(s, &r);
  memset(e, 0, sizeof *e);
  e->plan = *p;
  e->family = cs_plan_family(p, in->topology->node.gpus);
  e->step = e->step_lo = e->step_hi = r.step;
  e->samples_per_s = r.samples_per_s;
  e->tokens_per_s = r.tokens_per_s;
  e->mfu = r.mfu;
  e->memory = mem->total;
  e->headroom = mem->capacity > mem->total ? mem->capacity - mem->total : 0;
  e->comm_bytes = r.comm_bytes;
  e->net_bytes = net_bytes(s);
  cs_sim_free(s);
  return CS_OK;
}

enum cs_status cs_search_eval(const struct cs_search_inputs *in, const struct cs_plan *p,
                              struct cs_search_entry *e, struct cs_error *err) {
  enum cs_status st = cs_workload_check_plan(in->workload, p, err);
  if (st != CS_OK) return st;
  struct cs_memory mem;
  st = cs_memory_estimate(in->workload, p, in->gpu, &mem, err);
  if (st != CS_OK) return st;
  if (!cs_memory_fits(&mem)) return cs_memory_check(&mem, in->gpu ? in->gpu->name : NULL, err);
  return simulate(in, NULL, p, &mem, e, err);
}

enum cs_status cs_search_band(const struct cs_search_inputs *in, struct cs_search_result *r,
                              size_t k, struct cs_error *err) {
  for (size_t i = 0; i < k && i < r->n; i++) {
    struct cs_search_entry *e = &r->e[i];
    struct cs_sim_inputs si = {in->workload, &e->plan,         in->compute, in->topology,
                               in->cal,      in->interference, NULL};
    struct cs_sim_result res;
    enum cs_status st = cs_sim_predict(&si, &res, err);
    if (st != CS_OK) return st;
    e->step_lo = res.step_lo;
    e->step_hi = res.step_hi;
  }
  return CS_OK;
}

/* ---- the enumeration ---------------------------------------------------------------------- */

struct walk {
  const struct cs_search_inputs *in;
  const struct cs_search_space *sp;
  struct cs_sim_cache *cache;
  int rank, nranks;
  long index; /* enumeration index, for the round-robin split */
  struct cs_search_result *r;
  size_t cap;
  struct cs_error *err;
};

static enum cs_status push(struct walk *w, const struct cs_search_entry *e) {
  struct cs_search_result *r = w->r;
  if (r->n == w->cap) {
    size_t cap = w->cap ? 2 * w->cap : 1024;
    struct cs_search_entry *x = realloc(r->e, cap * sizeof *x);
    if (!x) return cs_error_set(w->err, CS_ERR_NOMEM, "out of memory");
    r->e = x;
    w->cap = cap;
  }
  r->e[r->n++] = *e;
  return CS_OK;
}

/* Memory of p, or -1 when it cannot be estimated (invalid), or -2 when memory ran out (then
 * *w->err says so: running out is no verdict on the plan). */
static double memory_of(const struct walk *w, const struct cs_plan *p, struct cs_memory *m) {
  if (cs_workload_check_plan(w->in->workload, p, NULL) != CS_OK) return -1;
  struct cs_error e2 = {0};
  if (cs_memory_estimate(w->in->workload, p, w->in->gpu, m, &e2) != CS_OK) {
    if (e2.status != CS_ERR_NOMEM) return -1;
    *w->err = e2;
    return -2;
  }
  return m->total;
}

static int fits(const struct walk *w, double total) {
  double cap = w->in->gpu ? w->in->gpu->memory : 0;
  return cap <= 0 || total <= cap;
}

/* The innermost loops for fixed (tp, cp, pp, ep, zero, vpp, sp, recompute): mbs ascending. */
static enum cs_status walk_mbs(struct walk *w, struct cs_plan *p, long per_replica) {
  const struct cs_search_space *sp = w->sp;
  int stop = 0;
  for (long mbs = 1; mbs <= per_replica; mbs++) {
    if (per_replica % mbs || (sp->max_mbs && mbs > sp->max_mbs)) continue;
    p->mbs = (int)mbs;
    long idx = w->index++;
    int mine = idx % w->nranks == w->rank;
    if (!mine) continue;
    w->r->stats.points++;
    /* the last mbs is one micro-batch per step, whose peak may be the smaller (memory.h) */
    if (stop && mbs != per_replica) {
      w->r->stats.pruned++;
      continue;
    }
    struct cs_memory m;
    double tot = memory_of(w, p, &m);
    if (tot == -2) return CS_ERR_NOMEM;
    if (tot < 0) {
      w->r->stats.invalid++;
      continue;
    }
    if (!fits(w, tot)) {
      w->r->stats.memory++;
      stop = 1; /* activations only grow with mbs while there are several micro-batches */
      continue;
    }
    struct cs_search_entry e;
    struct cs_error e2 = {0};
    enum cs_status st = simulate(w->in, w->cache, p, &m, &e, &e2);
    if (st == CS_ERR_NOMEM) {
      *w->err = e2;
      return st;
    }
    if (st != CS_OK) {
      w->r->stats.invalid++;
      continue;
    }
    w->r->stats.simulated++;
    if ((st = push(w, &e)) != CS_OK) return st;
  }
  return CS_OK;
}

/* Counts (for this rank) the points of the mbs loop without evaluating them. */
static void skip_mbs(struct walk *w, long per_replica, long *count) {
  for (long mbs = 1; mbs <= per_replica; mbs++) {
    if (per_replica % mbs || (w->sp->max_mbs && mbs > w->sp->max_mbs)) continue;
    long idx = w->index++;
    if (idx % w->nranks == w->rank) {
      w->r->stats.points++;
      (*count)++;
    }
  }
}

static enum cs_status walk_inner(struct walk *w, struct cs_plan *p, int nblocks) {
  const struct cs_search_space *sp = w->sp;
  long per_replica = sp->gbs / p->dp;
  unsigned rmask = sp->recompute_mask ? sp->recompute_mask : 7u;
  /* exact bound: the smallest-activation point of the nest */
  struct cs_plan lo = *p;
  lo.vpp = 1;
  lo.mbs = 1;
  lo.recompute = (rmask & 4u)   ? CS_RECOMPUTE_FULL
                 : (rmask & 2u) ? CS_RECOMPUTE_SELECTIVE
                                : CS_RECOMPUTE_NONE;
  lo.sp = p->tp > 1 && sp->sp != 0 && (w->in->workload->seq / p->cp) % p->tp == 0;
  struct cs_memory m;
  double tot = memory_of(w, &lo, &m);
  if (tot == -2) return CS_ERR_NOMEM;
  int hopeless = tot >= 0 && !fits(w, tot);
  if (hopeless && per_replica > 1) {
    /* one micro-batch per step: a profile that frees its gradients peaks lower (memory.h) */
    lo.mbs = (int)per_replica;
    tot = memory_of(w, &lo, &m);
    if (tot == -2) return CS_ERR_NOMEM;
    hopeless = tot >= 0 && !fits(w, tot);
  }
  for (int vpp = 1; vpp <= nblocks / p->pp; vpp++) {
    if ((nblocks / p->pp) % vpp || (vpp > 1 && p->pp == 1)) continue;
    if (sp->max_vpp && vpp > sp->max_vpp) continue;
    p->vpp = vpp;
    for (int spon = 0; spon <= 1; spon++) {
      if (spon && p->tp == 1) continue;
      if ((sp->sp == 0 && spon) || (sp->sp == 1 && !spon && p->tp > 1)) continue;
      p->sp = spon;
      for (int rc = 0; rc < 3; rc++) {
        if (!(rmask & (1u << rc))) continue;
        p->recompute = rc;
        if (hopeless) {
          skip_mbs(w, per_replica, &w->r->stats.pruned);
          continue;
        }
        enum cs_status st = walk_mbs(w, p, per_replica);
        if (st != CS_OK) return st;
      }
    }
  }
  return CS_OK;
}

enum cs_status cs_search_run(const struct cs_search_inputs *in, const struct cs_search_space *sp,
                             int rank, int nranks, struct cs_search_result *r,
                             struct cs_error *err) {
  memset(r, 0, sizeof *r);
  if (!in || !in->workload || !in->compute || !in->topology || !in->cal)
    return cs_error_set(err, CS_ERR_USAGE,
                        "the search needs a workload, a GPU, a topology and a "
                        "calibration");
  if (sp->gpus < 1 || sp->gbs < 1)
    return cs_error_set(err, CS_ERR_USAGE, "the search needs gpus >= 1 and gbs >= 1 (got %ld, %d)",
                        sp->gpus, sp->gbs);
  if (nranks < 1 || rank < 0 || rank >= nranks)
    return cs_error_set(err, CS_ERR_USAGE, "rank %d of %d", rank, nranks);
  double t0 = now();
  const struct cs_workload *wl = in->workload;
  const struct cs_topology *t = in->topology;
  const struct split_rules rules = split_rules(in, sp);
  const int nblocks = rules.nblocks, max_tp = rules.max_tp, max_cp = rules.max_cp,
            max_pp = rules.max_pp;
  unsigned zmask = sp->zero_mask ? sp->zero_mask : 15u;
  unsigned fmask = sp->families ? sp->families : (1u << CS_FAMILY_COUNT) - 1;
  struct walk w = {in, sp, NULL, rank, nranks, 0, r, 0, err};
  enum cs_status st = cs_sim_cache_alloc(&w.cache, err);
  if (st != CS_OK) return st;
  for (int tp = 1; tp <= max_tp && st == CS_OK; tp++) {
    char what[32];
    snprintf(what, sizeof what, "tp=%d", tp);
    cs_progress_report(&sp->progress, what, tp - 1, max_tp);
    if (!divides(tp, sp->gpus) || !tp_allowed(&rules, tp)) continue;
    for (int cp = 1; cp <= max_cp && st == CS_OK; cp++) {
      if (!divides((long)tp * cp, sp->gpus) || !cp_allowed(&rules, cp)) continue;
      for (int pp = 1; pp <= max_pp && st == CS_OK; pp++) {
        if (nblocks % pp || !divides((long)tp * cp * pp, sp->gpus)) continue;
        long dp = sp->gpus / ((long)tp * cp * pp);
        if (sp->gbs % dp) continue; /* no whole micro-batch count */
        int maxep = wl->experts > 0 ? wl->experts : 1;
        for (int ep = 1; ep <= maxep && st == CS_OK; ep++) {
          if ((wl->experts > 0 && wl->experts % ep) || (dp * cp) % ep) continue;
          for (int z = 0; z <= 3 && st == CS_OK; z++) {
            if (!(zmask & (1u << z))) continue;
            struct cs_plan p = sp->base;
            p.tp = tp, p.cp = cp, p.pp = pp, p.dp = (int)dp, p.ep = ep, p.zero = z;
            p.gbs = sp->gbs;
            p.shard = cs_plan_fit_shard(&p, sp->base.shard);
            /* the family depends on (zero, pp, tp, cp) only */
            if (!(fmask & (1u << cs_plan_family(&p, t->node.gpus)))) continue;
            st = walk_inner(&w, &p, nblocks);
          }
        }
      }
    }
  }
  r->stats.cache_hits = cs_sim_cache_hits(w.cache);
  r->stats.cache_misses = cs_sim_cache_misses(w.cache);
  cs_sim_cache_free(w.cache);
  if (st != CS_OK) {
    cs_search_result_free(r);
    return st;
  }
  if (r->n > 1) qsort(r->e, r->n, sizeof *r->e, entry_cmp);
  if ((st = cs_search_pareto(r, err)) != CS_OK) {
    cs_search_result_free(r);
    return st;
  }
  r->stats.seconds = now() - t0;
  return CS_OK;
}
