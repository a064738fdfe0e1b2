/* setup.h — the inputs the decision verbs (sweep, search, size-network, report) share: workload,
 * GPU, topology (with the network edits of sizing.h), calibration, compute model and the fixed
 * part of the plan, loaded from names or files with one set of options.
 */
#ifndef CS_CLI_SETUP_H
#define CS_CLI_SETUP_H

#include "cal.h"
#include "compute.h"
#include "gpu.h"
#include "opts.h"
#include "plan.h"
#include "sizing.h"
#include "status.h"
#include "topology.h"
#include "workload.h"

struct cli_setup {
  struct cs_workload *workload; /* owned */
  struct cs_gpu gpu;
  struct cs_topology topo;      /* with the edits applied */
  struct cs_cal cal;            /* owned */
  struct cs_compute compute;
  struct cs_plan base;          /* the --plan text's fields (precision, overlaps, ...) */
  double interference;
  char calpath[512];            /* "" = the default model */
};

/* The option rows every decision verb has, for its table (CLI_SETUP_NOPTS of them). */
#define CLI_SETUP_OPTS                                                                           \
  {"workload", 'w', "NAME|FILE", "a bundled workload (commscale workload --list) or a YAML file"}, \
  {"gpu", 0, "NAME|FILE", "a bundled GPU or a GPU YAML file"},                                    \
  {"topology", 't', "NAME|FILE", "a bundled topology or a YAML file"},                            \
  {"cal", 'c', "FILE", "calibration.yaml (default: NCCL-anchored constants)"},                    \
  {"set", 0, "K=V,...", "override workload architecture keys, e.g. seq=4096"},                    \
  {"interference", 0, "X", "compute slowdown under overlapped collectives (default 1.05)"},       \
  {"rails", 0, "N", "NICs per node (the per-GPU rate is kept)"},                                  \
  {"oversub", 0, "L=R,...", "oversubscription per switch level, e.g. leaf=2:1,spine=4"},          \
  {"sharp", 0, "on|off", "in-network reduction (CollNet)"},                                       \
  {"nvls", 0, "on|off", "NVLink SHARP in the node's switches"},                                   \
  {"transport", 0, "ib|roce|tcp", "network transport: its default latencies and efficiency"},     \
  {"net-latency", 0, "TIME", "one network step, e.g. 5us (after --transport)"}
#define CLI_SETUP_NOPTS 12

/* Loads everything named by the options of a (plan text may be NULL). Errors name the option or
 * the file; on failure s is finalised. */
enum cs_status cli_setup_load(struct cli_setup *s, const struct cli_verb *v,
                              const struct cli_args *a, const char *plan_text,
                              struct cs_error *err);
void cli_setup_fini(struct cli_setup *s);

/* The search inputs of s. */
struct cs_search_inputs cli_setup_inputs(const struct cli_setup *s);

/* Parses a positive integer option (def when absent). */
enum cs_status cli_int_opt(const struct cli_verb *v, const struct cli_args *a, const char *name,
                           long min, long max, long def, long *out, struct cs_error *err);

/* Writes s as a JSON string. */
void cli_json_string(FILE *f, const char *s);

#endif
