/* setup.h — the options of the inputs the simulating verbs share (workload, GPU, topology with
 * the network edits of sizing.h, calibration, probes, interference) mapped onto the scenario
 * loader (scenario.h), which loads them. The decision verbs (sweep, search, size-network, report)
 * load all of it with cli_setup_load(); predict and workload parse their plan themselves (it may be
 * a file) and load what they need with cli_setup_load_parts().
 */
#ifndef CS_CLI_SETUP_H
#define CS_CLI_SETUP_H

#include "cal.h"
#include "compute.h"
#include "gpu.h"
#include "opts.h"
#include "output.h"
#include "plan.h"
#include "scenario.h"
#include "sizing.h"
#include "status.h"
#include "topology.h"
#include "workload.h"

/* The option rows every decision verb has, for its table (CLI_SETUP_NOPTS of them). */
#define CLI_SETUP_OPTS                                                                             \
  {"workload", 'w', "NAME|FILE", "a bundled workload (commscale workload --list) or a YAML file"}, \
      {"gpu", 0, "NAME|FILE", "a bundled GPU or a GPU YAML file"},                                 \
      {"topology", 't', "NAME|FILE", "a bundled topology or a YAML file"},                         \
      {"cal", 'c', "FILE", "calibration.yaml (default: NCCL-anchored constants)"},                 \
      {"set", 0, "K=V,...", "override workload architecture keys, e.g. seq=4096"},                 \
      {"interference", 0, "X",                                                                     \
       "compute slowdown under overlapped collectives (default 1.16, measured)"},                  \
      {"probes", 0, "FILE",                                                                        \
       "compute probes of this GPU (commscale-run --probes): measured GEMM "                       \
       "efficiencies and, unless --interference, the median interference"},                        \
      CLI_NETEDIT_OPTS
#define CLI_SETUP_NOPTS 13

/* The network edits of sizing.h as options (6 rows), in predict and in every decision verb. */
#define CLI_NETEDIT_OPTS                                                                           \
  {"rails", 0, "N", "NICs per node (the per-GPU rate is kept)"},                                   \
      {"oversub", 0, "L=R,...", "oversubscription per switch level, e.g. leaf=2:1,spine=4"},       \
      {"sharp", 0, "on|off", "in-network reduction (CollNet)"},                                    \
      {"nvls", 0, "on|off", "NVLink SHARP in the node's switches"},                                \
      {"transport", 0, "ib|roce|tcp", "network transport: its default latencies and efficiency"},  \
  {                                                                                                \
    "net-latency", 0, "TIME", "one network step, e.g. 5us (after --transport)"                     \
  }

/* Loads everything named by the options of a (plan text may be NULL). Errors name the option or
 * the file; on failure s is finalised. */
enum cs_status cli_setup_load(struct cs_scenario *s, const struct cli_verb *v,
                              const struct cli_args *a, const char *plan_text,
                              struct cs_error *err);

/* What cli_setup_load_parts() loads beyond the workload (--workload, then --set) and the GPU
 * (--gpu), and the compute model of the plan's precision. */
#define CLI_SETUP_TOPOLOGY 1u /* --topology, required, with the network edits; --cal when given */
#define CLI_SETUP_CAL_NOTE 2u /* without --cal, say on stderr that the default model is used */

/* Like cli_setup_load, with the plan already parsed (copied into s->base) and the parts to load
 * named. --interference and --probes are read when the verb has them: --probes FILE (a probe CSV
 * of commscale-run) gives the compute model its measured GEMM efficiencies for the plan's
 * precision (CS_ERR_UNSUPPORTED when the file has no GEMM row of it) and, unless --interference
 * is given, the interference factor: the median of the file's interference rows (kept at the
 * default when it has none). The verb's option table needs only the
 * options of the parts it asks for (an option it lacks counts as not given). Errors name the
 * option or the file; on failure s is finalised (cs_scenario_fini after success). */
enum cs_status cli_setup_load_parts(struct cs_scenario *s, const struct cli_verb *v,
                                    const struct cli_args *a, const struct cs_plan *plan,
                                    unsigned parts, struct cs_error *err);

/* Reads a --plan value: a plan YAML file (its "plan" section, or the whole document) when text
 * ends in .yaml or .yml, else "key=value,..." text; unnamed keys keep their defaults. */
enum cs_status cli_setup_plan(const char *text, struct cs_plan *p, struct cs_error *err);

/* The path of the running executable ("" when unknown), where bundled data is searched from. */
void cli_exe_path(char *buf, size_t len);

/* Parses a positive integer option (def when absent). */
enum cs_status cli_int_opt(const struct cli_verb *v, const struct cli_args *a, const char *name,
                           long min, long max, long def, long *out, struct cs_error *err);

#endif
