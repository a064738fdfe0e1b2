/* predict.h — the `predict` driver: a training plan (or several side by side) costed over node
 * (or GPU) counts x network speeds. Per count, dp fills the GPUs unless the plan names it (a
 * "fixed" plan must occupy exactly the count); a point whose plan does not divide the model, does
 * not fit memory or does not fit the cluster is a row with the reason instead of figures.
 */
#ifndef CS_SIM_PREDICT_H
#define CS_SIM_PREDICT_H

#include <stddef.h>

#include "plan.h"
#include "scenario.h"
#include "status.h"
#include "step.h"

struct cs_predict_row {
  int pi, ni; /* index of the plan and of the network speed */
  long nodes, gpus, dp;
  double net_gbps; /* per NIC (the topology's when no speeds are given) */
  int ok;
  char reason[CS_ERROR_MSG_MAX];
  char plan[256]; /* the resolved plan (the given text for an unresolved row of several plans) */
  struct cs_sim_result r;
  double speedup, efficiency, mem_gib; /* over one GPU; speedup / GPUs; memory per GPU, GiB */
};

struct cs_predict_spec {
  const struct cs_plan *plans;
  const int *fixed;         /* plans[i] names dp: it must occupy exactly the GPUs */
  const char (*texts)[256]; /* the plans as given */
  int nplan;
  const long *counts; /* node counts, or GPU counts with by_gpus */
  size_t ncount;
  int by_gpus;
  const long *nets; /* Gb/s per NIC; NULL = the topology's */
  size_t nnet;
  long accum; /* gradient accumulation steps when the plan has no gbs */
  int ignore_memory;
};

/* Called once, for the first feasible point, with its simulator and inputs (s's topology set to
 * that point's speed). Returns 1 to take the simulator (the caller frees it with cs_sim_free). */
typedef int (*cs_predict_first_fn)(void *ctx, struct cs_sim *sim, const struct cs_sim_inputs *in,
                                   const struct cs_predict_row *row);

/* Costs the grid (plans x counts x speeds, in that nesting) on scenario s, whose topology's NIC
 * rate is set per point (it holds the last point's afterwards). *rows is malloc'd (caller
 * frees), *n its length. first may be NULL. Only running out of memory fails; rows made before
 * that are kept in *rows. */
enum cs_status cs_predict_run(struct cs_scenario *s, const struct cs_predict_spec *sp,
                              cs_predict_first_fn first, void *ctx, struct cs_predict_row **rows,
                              size_t *n, struct cs_error *err);

#endif
