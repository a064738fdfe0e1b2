/* sweep.h — a grid over nodes x network Gb/s per GPU x curves x global batch, the `sweep` verb's
 * driver. A curve is a given plan (dp filling the GPUs, as in predict) or a family (family.h,
 * bundled or NAME=KEYS): the fastest feasible plan of the family at that grid point (one cs_decide
 * per node count, batch and framework). The records feed the verb's table, CSV and JSON writers;
 * cs_sweep_plot draws the two figures.
 */
#ifndef CS_SIM_SWEEP_H
#define CS_SIM_SWEEP_H

#include <stddef.h>

#include "family.h"
#include "plan.h"
#include "progress.h"
#include "scenario.h"
#include "status.h"

#define CS_SWEEP_MAX_CURVES 16

struct cs_sweep_spec {
  const long *nodes; /* node counts, ascending as given */
  size_t nn;
  const long *gbs; /* global batches */
  size_t ng;
  const long *nets; /* Gb/s per GPU, or per node with per_node */
  size_t nnet;
  int per_node;
  int ncurve;
  int fam[CS_SWEEP_MAX_CURVES]; /* >= 0: the curve is family famspec[i]; -1: plans[i] */
  struct cs_family_spec famspec[CS_SWEEP_MAX_CURVES]; /* a bundled or a NAME=KEYS family */
  struct cs_plan plans[CS_SWEEP_MAX_CURVES];          /* dp and gbs are filled per point */
  char names[CS_SWEEP_MAX_CURVES][64];
  struct cs_progress progress; /* told after each node count and batch (zero: nobody) */
};

/* One grid point: ok with the plan and its figures, or the reason it has none. */
struct cs_sweep_rec {
  long nodes;
  double gbps_gpu;
  int gbs, curve, ok;
  char name[64], plan[256], reason[256];
  double step, samples_per_s, tokens_per_s, mfu, net_bytes;
  double speedup; /* over the smallest node count of the same curve, speed and batch */
};

/* Runs the grid on scenario s (nodes x batch x curve x speed, in that nesting). *recs is
 * malloc'd (caller frees), *n its length. Points without a feasible plan are records with a
 * reason; only running out of memory fails. */
enum cs_status cs_sweep_run(const struct cs_scenario *s, const struct cs_sweep_spec *sp,
                            struct cs_sweep_rec **recs, size_t *n, struct cs_error *err);

/* The plotted value: 0 million tokens/s, 1 MFU in %, 2 samples/s. */
enum cs_sweep_metric { CS_SWEEP_TOKENS, CS_SWEEP_MFU, CS_SWEEP_SAMPLES };

/* Writes PREFIX-net.{dat,gp,svg} (metric vs Gb/s per GPU at the largest node count and the first
 * batch, one curve each, the swept speeds as tick labels) and PREFIX-nodes (speedup vs nodes at
 * the fastest swept speed, log-log, with the linear ideal n / n0 at every swept node count and
 * those counts as tick labels). formats: enum cs_plot_format bits (0: SVG). */
enum cs_status cs_sweep_plot(const struct cs_scenario *s, const struct cs_sweep_spec *sp,
                             const struct cs_sweep_rec *r, size_t n, int metric, const char *prefix,
                             unsigned formats, struct cs_error *err);

#endif
