/* wlsummary.h — the `workload` verb's figures of one plan: GPUs, micro-batches, parameters,
 * FLOPs, the memory estimate per GPU and the compute time of a micro-batch, as a list of
 * (key, value, unit) quantities in a fixed order that the verb's writers print.
 */
#ifndef CS_SIM_WLSUMMARY_H
#define CS_SIM_WLSUMMARY_H

#include "memory.h"
#include "plan.h"
#include "scenario.h"
#include "status.h"

struct cs_quantity {
  const char *key;
  double value;
  const char *unit; /* "GiB", "ms per micro-batch", "" ... (static strings) */
};

struct cs_wl_summary {
  struct cs_quantity q[48];
  int n;
  struct cs_memory mem; /* the estimate (cs_memory_check tells whether it fits) */
};

/* Fills out for plan on scenario s (workload, GPU, compute model): checks the plan against the
 * workload, counts FLOPs, estimates memory, then, when gemm_path is given, takes the probe CSV's
 * GEMM efficiencies, and, unless measured < 0 (none), calibrates the compute model to measured
 * (seconds of one GPU's micro-batch; 0 is an error); then times a micro-batch. */
enum cs_status cs_wl_summary(struct cs_scenario *s, const struct cs_plan *plan,
                             const char *gemm_path, double measured, struct cs_wl_summary *out,
                             struct cs_error *err);

#endif
