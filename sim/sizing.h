/* sizing.h — network sizing: the least bandwidth per GPU at which a plan family meets a target on
 * a given number of nodes, the knee beyond which more bandwidth stops helping, and the topology
 * edits that change the answer (rails, oversubscription, SHARP/NVLS, RoCE vs InfiniBand).
 *
 * A decision context (struct cs_decide) holds one workload on one topology at one node count and
 * global batch. It runs the plan search (search.h) once: which plans are valid and fit memory does
 * not depend on the network. Every question is then "the fastest plan of family F at bandwidth B":
 *
 *   best_F(B) = min over the feasible plans p of F of step_p(B).
 *
 * Each plan's step time at an unlimited network (B_inf = 1e6 Gb/s per GPU, latencies unchanged)
 * is computed once; as a step never gets faster when bandwidth drops, step_p(B) >= step_p(B_inf),
 * so plans are visited in order of step_p(B_inf) and the visit stops when the next one's
 * unlimited-network time is already slower than the best found: exact, and most plans are never
 * simulated again.
 *
 * Targets. Every target is a bound on the step time at the fixed global batch:
 *   eff=X     network scaling efficiency: throughput(B) / throughput(B_inf) of the family >= X,
 *             i.e. step <= best_F(B_inf) / X: the fraction of what the plan family reaches on
 *             these nodes with a network that costs nothing (DLPerf's speedup over one GPU mixes
 *             in pipeline bubbles and the optimizer, which no network can remove);
 *   mfu=X     model FLOP utilisation >= X: step <= model FLOPs / (GPUs * peak * X);
 *   tokens=X  tokens per second >= X (samples=X for workloads without a sequence).
 * The least bandwidth is found by bisection on log B between lo and hi Gb/s per GPU, then rounded
 * up to a whole Gb/s per NIC (what `commscale predict --net-gbps` takes), so that predict at the
 * answer meets the target. The knee is the least B at which doubling the bandwidth gains less than
 * knee_gain (5%) in throughput.
 */
#ifndef CS_SIM_SIZING_H
#define CS_SIM_SIZING_H

#include <stddef.h>

#include "netedit.h"
#include "search.h"
#include "status.h"
#include "topology.h"

enum cs_target_kind { CS_TARGET_EFF, CS_TARGET_MFU, CS_TARGET_TOKENS };
struct cs_target {
  int kind;     /* enum cs_target_kind */
  double value; /* eff and mfu as fractions (0, 1]; tokens per second */
};
/* Parses "eff=0.8", "eff=80%", "mfu=0.4", "tokens=1.2e6" (or "samples=" for non-sequence
 * workloads, the same kind). CS_ERR_USAGE with the reason. */
enum cs_status cs_target_parse(const char *text, struct cs_target *t, struct cs_error *err);
/* Writes "80% network scaling efficiency" etc. */
void cs_target_format(const struct cs_target *t, char *buf, size_t len);

#define CS_DECIDE_IDEAL_GBPS 1e6 /* "unlimited": per GPU */

struct cs_decide;

/* Builds a context: searches the space (s: gpus = nodes * GPUs per node, gbs, knobs) on topology
 * t (copied; its per-GPU rate is irrelevant to feasibility) and costs each feasible plan at the
 * unlimited network. Pointers in in are borrowed (in->topology is ignored: t is used). Errors as
 * cs_search_run; CS_ERR_RANGE when no plan is feasible (the message says how many points were
 * rejected for memory and validity). Free with cs_decide_free. */
enum cs_status cs_decide_alloc(const struct cs_search_inputs *in, const struct cs_topology *t,
                               const struct cs_search_space *s, struct cs_decide **out,
                               struct cs_error *err);
void cs_decide_free(struct cs_decide *d);

/* The topology the context costs with (its NIC speed changes with every call below). */
const struct cs_topology *cs_decide_topology(const struct cs_decide *d);
/* Plans of family f that are feasible (0 when none). */
size_t cs_decide_count(const struct cs_decide *d, int family);
/* The search behind the context (all families, sorted at the topology's own bandwidth). */
const struct cs_search_result *cs_decide_search(const struct cs_decide *d);

/* The fastest plan of family f at gbps per GPU into *e. CS_ERR_RANGE when f has no feasible plan.
 * gbps <= 0 means the unlimited network. */
enum cs_status cs_decide_best(struct cs_decide *d, int family, double gbps,
                              struct cs_search_entry *e, struct cs_error *err);

/* The step-time bound of target t for family f (see above), seconds. */
double cs_decide_threshold(struct cs_decide *d, int family, const struct cs_target *t);

struct cs_sizing {
  int family;
  int reachable;    /* 0: not even the unlimited network meets the target */
  double threshold; /* s: the step time the target allows */
  double gbps_gpu;  /* least Gb/s per GPU meeting it (rounded up to whole Gb/s per NIC) */
  double gbps_nic, gbps_node;
  struct cs_search_entry at;    /* the family's best plan at gbps_gpu */
  struct cs_search_entry below; /* the family's best plan at 0.9 * gbps_gpu (does not meet) */
  struct cs_search_entry ideal; /* the family's best at the unlimited network */
  double knee_gbps_gpu;         /* least B where doubling gains < knee_gain */
  struct cs_search_entry knee;
  int evaluations; /* family-best evaluations made */
};

struct cs_sizing_opts {
  double lo_gbps, hi_gbps; /* search range per GPU (default 1 .. 100000) */
  double rel_tol;          /* bisection tolerance on B (default 0.002) */
  double knee_gain;        /* default 0.05 */
};
void cs_sizing_opts_init(struct cs_sizing_opts *o);

/* Sizes family f for target t. CS_ERR_RANGE when f has no feasible plan; an unreachable target
 * is not an error (reachable = 0, gbps fields 0). */
enum cs_status cs_decide_size(struct cs_decide *d, int family, const struct cs_target *t,
                              const struct cs_sizing_opts *o, struct cs_sizing *out,
                              struct cs_error *err);

/* A price list: per NIC speed, the price of one NIC, one switch port and one cable (and
 * optionally of one node without its NICs, for throughput per unit cost of the whole cluster).
 *
 *   version: 1
 *   currency: USD
 *   node: 250000          # optional
 *   speeds:
 *     - speed: 200Gbps
 *       nic: 1200
 *       switch_port: 700
 *       cable: 250
 */
#define CS_PRICES_MAX 16
struct cs_price {
  double gbps; /* per NIC */
  double nic, port, cable;
};
struct cs_prices {
  char currency[16];
  double node;
  struct cs_price speed[CS_PRICES_MAX]; /* sorted by speed */
  int n;
};
/* Loads a price list; errors are located "path:line:col". */
enum cs_status cs_prices_load(const char *path, struct cs_prices *p, struct cs_error *err);
/* The network cost of t's fabric on `nodes` nodes at price entry k: per NIC one NIC, and per
 * switch level below the top one cable and two ports per uplink share (1 / product of the
 * oversubscription up to that level) plus the NIC's own port and cable. *ports and *cables (may
 * be NULL) receive the totals. */
double cs_prices_network_cost(const struct cs_prices *p, int k, const struct cs_topology *t,
                              long nodes, double *ports, double *cables);

#endif
