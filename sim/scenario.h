/* scenario.h — one loader for everything a prediction needs: the workload (with its overrides),
 * the GPU and its compute model, the topology (with caller edits), the calibration, the plan, the
 * measured GEMM efficiencies and interference of a probe file, and a measured single-GPU time.
 *
 * Every verb of the command line, `validate`, the public API (commscale.h) and the tests load
 * through here. The inputs are plain C fields (names or paths), never command-line options; the
 * front end maps its options onto a struct cs_scenario_spec and adds the option name to messages
 * where it wants one.
 *
 * Contract
 *   - Storage is the caller's: cs_scenario_load() fills a struct cs_scenario (no init needed) and
 *     cs_scenario_fini() releases what it owns. After a failed load the struct is already
 *     finalised (calling cs_scenario_fini again is harmless); after a successful one the caller
 *     must call cs_scenario_fini exactly once. Do not copy a loaded struct and finalise both.
 *   - The spec and every string in it are read during the call only; nothing is kept.
 *   - spec->shared_cal, when given, is borrowed: it must outlive the scenario (s->calp points to
 *     it). Otherwise s->cal is owned and s->calp == &s->cal.
 *   - Errors: an enum cs_status and one line in err. Input-file errors carry the loaders'
 *     "file:line:col: what was expected"; a missing bundled name lists the folders searched.
 *     Nothing is printed; nothing exits.
 *
 * Names and paths: a value that contains '/' or ends in .yaml/.yml is a path, anything else a
 * bundled name found through datadir.h ($COMMSCALE_DATA_DIR, the installed share/commscale, the
 * source tree). A relative path is taken relative to spec->base_dir when that is set (a case file's
 * folder), else to the working directory.
 */
#ifndef CS_SCENARIO_H
#define CS_SCENARIO_H

#include <stddef.h>

#include "cal.h"
#include "compute.h"
#include "gpu.h"
#include "plan.h"
#include "search.h"
#include "status.h"
#include "step.h"
#include "topology.h"
#include "workload.h"

/* What to load and from where. Zero-initialise it and set what applies. */
struct cs_scenario_spec {
  const char *workload; /* required: bundled name or YAML path */
  const char *set;      /* workload overrides "key=value,..." applied in order; NULL none */
  const char *gpu;      /* required: bundled name or YAML path */
  const char *topology; /* bundled name or YAML path; NULL: no topology (s->has_topology = 0) */
  const char *cal;      /* calibration.yaml path; NULL: the default (NCCL-anchored) model */
  const struct cs_cal *shared_cal; /* borrowed instead of loading cal (cal must then be NULL) */
  /* Called on the loaded topology before anything after it is loaded (the command line applies
   * its network edits here); its error ends the load. NULL: none. */
  enum cs_status (*edit_topology)(struct cs_topology *t, void *ctx, struct cs_error *err);
  void *edit_ctx;
  /* The plan: plan (copied) when given, else plan_text — "key=value,..." or a plan YAML file
   * (ending in .yaml/.yml: its "plan" section, or the whole document) — else the defaults. A
   * plan_text error is prefixed with "plan". The plan's precision picks the compute model. */
  const struct cs_plan *plan;
  const char *plan_text;
  /* A probe CSV of commscale-run --probes: its GEMM rows of the plan's precision become the
   * compute model's measured efficiencies (CS_ERR_UNSUPPORTED when it has none of that
   * precision); with probes_interference, the median of its interference rows in [1, 10] becomes
   * s->interference (kept when it has none). NULL: none. */
  const char *probes;
  int probes_interference;
  /* >= 1: the compute slowdown under overlapped collectives; 0: CS_SIM_DEFAULT_INTERFERENCE (or
   * the probes' median, see above). Values below 1 or above 10 are CS_ERR_RANGE. */
  double interference;
  /* > 0: the measured time of one micro-batch (forward + backward + recomputation) on one GPU,
   * seconds: scales the compute model (cs_scenario_calibrate). 0: none. */
  double measured;
  const char *base_dir; /* for relative paths; NULL: the working directory */
  const char *exe;      /* the running executable's path, for bundled data; NULL: none */
};

/* Everything loaded. Read the fields; change topo, plan or interference freely between
 * predictions (the sweeps do). */
struct cs_scenario {
  struct cs_workload *workload; /* owned */
  struct cs_gpu gpu;
  struct cs_compute compute; /* the GPU at the plan's precision; borrows gemm */
  int has_topology;
  struct cs_topology topo;   /* with edit_topology applied; zero when !has_topology */
  struct cs_cal cal;         /* owned (default model when no cal was named) */
  const struct cs_cal *calp; /* &cal, or spec->shared_cal */
  char calpath[512];         /* spec->cal as given, "" for the default model or a shared one */
  struct cs_plan base;       /* the plan as loaded */
  double interference;
  struct cs_gemm_point *gemm; /* owned: the measured GEMM table (NULL = the default curve) */
  size_t ngemm;
  struct cs_attn_point *attn; /* owned: the measured attention table (NULL = the curve) */
  size_t nattn;
};

/* Loads s from spec (see the contract above). CS_ERR_USAGE when workload or gpu is NULL; the
 * loaders' statuses otherwise. On failure s is finalised. */
enum cs_status cs_scenario_load(struct cs_scenario *s, const struct cs_scenario_spec *spec,
                                struct cs_error *err);

/* Releases what s owns and leaves it empty; harmless on an empty or finalised s. */
void cs_scenario_fini(struct cs_scenario *s);

/* The "# links" header lines of a prediction over s: for a whole-node group over `nodes` nodes
 * (the network tier only when nodes > 1 and the topology has NICs), each link value of s's
 * calibration as the predictions use it (cs_topo_cal_apply: fitted > given > topology > default)
 * with its source (cs_topo_cal_sources); what_if when the verb re-costs the network at speeds it
 * is given (--net-gbps, size-network's sweep), so the network rate is marked as such. Each line
 * is "# links     ..." and ends in a newline; nothing without a topology. Writes at most len
 * bytes (NUL included) into buf and returns the characters written. */
size_t cs_scenario_links(const struct cs_scenario *s, long nodes, int what_if, char *buf,
                         size_t len);

/* What spec->probes does, on a loaded s (replacing tables loaded before): path is one probe CSV or
 * several joined by commas (commscale-run's and tests/gpu/torch_probes.py's); their GEMM rows of
 * the plan's precision become the compute model's efficiencies, their attention rows its
 * attention table, their memop/membw rows its memory-kernel bandwidths and their launch,device
 * row its kernel overhead (each where the files measure it); with take_interference the median of
 * the interference rows in [1, 10] becomes s->interference. Errors name the file; on failure s
 * keeps the default curves and stays loaded. A calibration with a steps section (commscale fit
 * --steps) sets the compute scale, the host time per step and, unless spec->interference, the
 * interference after the probes. */
enum cs_status cs_scenario_probes(struct cs_scenario *s, const char *path, int take_interference,
                                  struct cs_error *err);

/* Scales s->compute so that one micro-batch of the workload on one GPU
 * (cs_plan_single_gpu(s->base)) takes measured_s seconds. CS_ERR_RANGE for measured_s <= 0. */
enum cs_status cs_scenario_calibrate(struct cs_scenario *s, double measured_s,
                                     struct cs_error *err);

/* Reads a plan: a plan YAML file (its "plan" section, or the whole document) when text ends in
 * .yaml or .yml and holds no '=', else "key=value,..." text (cs_plan_parse, whose framework=
 * may name a profile file); unnamed keys keep their defaults. */
enum cs_status cs_scenario_plan(const char *text, struct cs_plan *p, struct cs_error *err);

/* The simulator inputs for plan p (borrowed, like everything else in the result). */
struct cs_sim_inputs cs_scenario_sim_inputs(const struct cs_scenario *s, const struct cs_plan *p);

/* The plan-search inputs of s. */
struct cs_search_inputs cs_scenario_search_inputs(const struct cs_scenario *s);

#endif
