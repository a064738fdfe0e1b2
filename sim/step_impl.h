/* step_impl.h — the step simulator's internals, shared by its two files: step.c (allocation,
 * groups, the collective-cost cache, runs) and step_prepare.c (pricing a plan into per-layer and
 * per-chunk durations). Not a contract for any other file: step.h is the module's contract.
 */
#ifndef CS_SIM_STEP_IMPL_H
#define CS_SIM_STEP_IMPL_H

#include <stddef.h>

#include "framework.h"
#include "pipeline.h"
#include "step.h"

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

/* Whether group g spans more than one rank: only then do its collectives move anything. */
static inline int sgroup_spans(const struct sgroup *g) {
  return g->exists && g->q.ranks > 1;
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
  double host;                 /* of comp: the GPU waiting for an eager host (cs_layer_time) */
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

/* The cost of one collective (coll over group, in phase, of bytes, called calls times per step)
 * at the three levels into t[NLEV]; remembered per (coll, group, phase, bytes) with its calls
 * summed, and shared between simulations through s->shared. Errors: cs_cal_predict's, prefixed
 * with the group's name. Defined in step.c. */
enum cs_status cs_sim_cost(struct cs_sim *s, int coll, int group, int phase, double bytes,
                           long calls, double *t, struct cs_error *err);

/* Seconds of the optimizer phase of plan p on GPU c over dense and expert parameters (each
 * divided over its data-parallel group under ZeRO >= 1): one Adam pass over the gradients,
 * weights and optimizer state at c's optimizer memory rate, plus c's host overhead per step.
 * Defined in step_prepare.c. */
double cs_sim_optimizer_time(const struct cs_compute *c, const struct cs_plan *p, double dense,
                             double expert);

/* Prices the plan into s (allocated by cs_sim_alloc_cached, groups mapped): per layer and per
 * (stage, chunk) durations at each level, the gradient buckets, the ZeRO-1/2 weight gather,
 * DataParallel's copies, the optimizer and the transfer between stages. Errors: cs_sim_cost's,
 * cs_workload_layer_cost's, CS_ERR_NOMEM. Defined in step_prepare.c. */
enum cs_status cs_sim_prepare(struct cs_sim *s, struct cs_error *err);

#endif
