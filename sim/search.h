/* search.h — every feasible parallel plan of a workload on a given number of GPUs, ranked by step
 * time, with the Pareto front of (step time, memory headroom, network bytes per step).
 *
 * The space is the product of
 *
 *   tp   divisors of the heads (and of the KV heads or a multiple of them) and of the FFN width,
 *        at most max_tp (default: the GPUs of one NVLink domain);
 *   cp   divisors of the sequence, at most max_cp (default 1 for sequences under 8192, else 16);
 *   pp   divisors of the transformer blocks (layers for a layer list);
 *   vpp  divisors of blocks / pp (1 when pp = 1), at most max_vpp (default: no limit);
 *   dp   = gpus / (tp * pp * cp), which must be whole;
 *   ep   divisors of the experts that divide dp * cp (1 for dense models);
 *   zero 0..3 (zero_mask);
 *   mbs  divisors of gbs / dp, at most max_mbs (default: no limit);
 *   recompute none, selective, full (recompute_mask);
 *   sp   off and, when tp > 1, on (sp: -1 both, 0 off, 1 on where tp > 1);
 *
 * with the rest of the plan (precision, bucket, overlaps, reserve) taken from `base`. A point is
 * feasible when cs_workload_check_plan accepts it, its fullest stage fits the GPU's memory
 * (cs_memory_estimate, cs_memory_fits) and the step simulator can place it on the topology (the
 * interleaved schedule needs the micro-batches to be a multiple of pp). Nothing is sampled: every
 * feasible point is simulated at its predicted collective times and ranked; the ~95% band is then
 * computed for the entries the caller keeps (cs_search_band).
 *
 * Speed. The work shared between points is done once: the memory of a plan does not depend on its
 * ZeRO stage's collectives, the layer costs of transformer blocks repeat, and the collective costs
 * are cached per (group shape on the topology, collective, size) across the whole search
 * (step.h's cs_sim_cache). Points are pruned only with exact bounds: a plan whose memory without
 * activations already exceeds the GPU stops the loop over the knobs that only add activations.
 *
 * Splitting. With nranks > 1 the points are dealt round-robin by their index in the enumeration:
 * rank r simulates the points with index % nranks == r; the caller merges the entries of every
 * rank (cs_search_merge) and recomputes the front. The stats of one rank count its own points.
 */
#ifndef CS_SIM_SEARCH_H
#define CS_SIM_SEARCH_H

#include <stddef.h>

#include "cal.h"
#include "compute.h"
#include "gpu.h"
#include "plan.h"
#include "progress.h"
#include "status.h"
#include "topology.h"
#include "workload.h"

/* Plan families, as the sizing and sweep verbs compare them. */
enum cs_family {
  CS_FAMILY_ZERO3, /* zero = 3: weights, gradients and optimizer state sharded over DP */
  CS_FAMILY_DPTP,  /* pp = 1, zero < 3: data parallel (replicated or ZeRO-1/2 weights) +- TP */
  CS_FAMILY_TPPP,  /* pp > 1, zero < 3, tp filling one NVLink domain's node, cp = 1: Megatron's
                      TP-in-node + PP (with DP over the rest) */
  CS_FAMILY_3D,    /* pp > 1, zero < 3, any other split (tp smaller than the node, cp > 1) */
  CS_FAMILY_COUNT
};

/* The family of p on nodes of gpus_per_node GPUs. */
int cs_plan_family(const struct cs_plan *p, int gpus_per_node);
/* "zero3", "dp+tp", "tp+pp", "3d"; "?" out of range. */
const char *cs_family_name(int f);
/* Parses a family name (as above, case-insensitive); -1 when unknown. */
int cs_family_parse(const char *name);

struct cs_search_space {
  long gpus;                                    /* GPUs of the plan: nodes * GPUs per node */
  int gbs;                                      /* global batch, samples (> 0) */
  int max_tp, max_cp, max_pp, max_vpp, max_mbs; /* 0 = defaults above */
  unsigned families;                            /* bit (1u << family) per family kept; 0 = all */
  unsigned zero_mask;                           /* bit z for ZeRO stage z; 0 = all four */
  unsigned recompute_mask;                      /* bit r per enum cs_recompute; 0 = all three */
  int sp;                                       /* -1 both, 0 off, 1 on where tp > 1 */
  struct cs_plan base;                          /* the fixed part of every plan */
  struct cs_progress progress;                  /* told at each tp (zero: nobody) */
};

/* Fills s with the defaults for gpus GPUs and global batch gbs (base = cs_plan_init). */
void cs_search_space_init(struct cs_search_space *s, long gpus, int gbs);

struct cs_search_inputs;

/* Why the space sp holds no point at all, as "; ..." to append to a "no feasible plan" message:
 * no split of its GPUs as dp x tp x pp x cp under the search's rules has a dp dividing the global
 * batch. Names the rules, the nearest global batch with a split and the nearest node count (GPU
 * count when sp->gpus is not whole nodes) with one at this batch. Writes "" when a split exists
 * (the ZeRO or family masks emptied the space) or in/sp are incomplete. */
void cs_search_empty_hint(const struct cs_search_inputs *in, const struct cs_search_space *sp,
                          char *buf, size_t len);

/* What every point is evaluated with; pointers are borrowed. */
struct cs_search_inputs {
  const struct cs_workload *workload;
  const struct cs_compute *compute;
  const struct cs_gpu *gpu; /* memory capacity */
  const struct cs_topology *topology;
  const struct cs_cal *cal;
  double interference; /* >= 1, see step.h */
};

struct cs_search_entry {
  struct cs_plan plan;
  int family;                    /* enum cs_family */
  double step, step_lo, step_hi; /* s; lo = hi = step until cs_search_band */
  double samples_per_s, tokens_per_s, mfu;
  double memory;     /* bytes per GPU on the fullest stage */
  double headroom;   /* capacity - memory, bytes (>= 0) */
  double net_bytes;  /* bytes per GPU of the critical stage that cross the network per
                        step: for each collective of a group that spans more than one
                        NVLink domain, nccl-tests size times the bus factor (what leaves
                        a node per ring) divided by the group's members per node */
  double comm_bytes; /* the same over every tier (step.h's comm_bytes) */
  int pareto;        /* 1: on the front of (step, -headroom, net_bytes) */
};

struct cs_search_stats {
  long points;    /* points of the space enumerated (this rank's share when split) */
  long invalid;   /* rejected by cs_workload_check_plan or the step simulator's placement */
  long memory;    /* rejected: do not fit memory */
  long pruned;    /* skipped without evaluation by an exact memory bound */
  long simulated; /* simulated and kept */
  long cache_hits, cache_misses; /* collective-cost cache */
  double seconds;                /* wall time of cs_search_run */
};

struct cs_search_result {
  struct cs_search_entry *e; /* sorted by step time, ties by plan text; owned */
  size_t n;
  struct cs_search_stats stats;
};

/* Enumerates and simulates the space on rank `rank` of nranks (1 and 0 for the whole space),
 * sorts the entries by step time and marks the Pareto front among them. On success *r owns its
 * entries (free with cs_search_result_free). Errors: CS_ERR_USAGE (bad space or inputs: gpus < 1,
 * gbs < 1, rank out of range), CS_ERR_NOMEM. An empty result is not an error (r->n == 0 and the
 * stats say why). */
enum cs_status cs_search_run(const struct cs_search_inputs *in, const struct cs_search_space *s,
                             int rank, int nranks, struct cs_search_result *r,
                             struct cs_error *err);

/* Appends the entries of `more` (n of them) to r, re-sorts and re-marks the front, and adds the
 * stats. CS_ERR_NOMEM leaves r unchanged. */
enum cs_status cs_search_merge(struct cs_search_result *r, const struct cs_search_entry *more,
                               size_t n, const struct cs_search_stats *st, struct cs_error *err);

/* Marks r->e[i].pareto for the front of (step min, headroom max, net_bytes min). O(n log n + n h)
 * where h is the front's size. CS_ERR_NOMEM leaves the marks unset. */
enum cs_status cs_search_pareto(struct cs_search_result *r, struct cs_error *err);

/* Fills step_lo/step_hi of entries [0, k) with the full band of the step simulator (a re-run of
 * each of those plans). */
enum cs_status cs_search_band(const struct cs_search_inputs *in, struct cs_search_result *r,
                              size_t k, struct cs_error *err);

void cs_search_result_free(struct cs_search_result *r);

/* Simulates one plan the way the search does (no band) and fills *e; CS_ERR_RANGE when it does
 * not fit memory, CS_ERR_USAGE when it is not valid. For brute-force checks and the sizing. */
enum cs_status cs_search_eval(const struct cs_search_inputs *in, const struct cs_plan *p,
                              struct cs_search_entry *e, struct cs_error *err);

#endif
