/* costmodel.h — the collective cost model: t = latency + bytes / bandwidth, per algorithm and
 * protocol, at any group shape (ranks, nodes, GPUs per node).
 *
 * For collective c, algorithm a, protocol p, n ranks on N nodes of g GPUs, message S bytes
 * (nccl-tests size):
 *
 *   t = lat + x + 2 sqrt(stages * pipe[a][p] * x) + own
 *   x = min(U, W) / (B * coll_bw[c]) + max(U - W, 0) / (B * eff[a][p] * coll_bw[c])
 *   U = S * busbw_factor(c, n)    (bus bytes),   W = win[a][p] when eff < 1, else 0
 *
 * The first term is the start-up latency (below); x is the time to push the bus bytes through the
 * bottleneck link of bandwidth B(a, shape): the first W bytes at the full link rate, the rest at
 * the protocol's sustained efficiency. W models the flow-control window of the LL protocols: while
 * a message fits in the receiver's buffers the sender never waits, beyond it every line waits for a
 * flag round trip (on 2 x H200, Ring/LL moves ~350 GB/s up to ~2 MiB and ~122 GB/s beyond); the
 * last term is the pipeline fill of a segmented transfer through `stages` stages with per-segment
 * overhead pipe (the optimal-segmentation result T = (sqrt(stages*o) + sqrt(x))^2 without its
 * constant, which lives in lat). pipe = 0 gives the plain linear model. A ring inside one node is
 * one stage at any rank count (its chunks stream through all steps at once; on one NVSwitch node
 * bus bandwidth rises with n, which a per-step overhead would contradict); across nodes each ring
 * step is a stage (the network path's per-chunk overheads: the netns cluster data fits with a 15%
 * median error so, 22% without); tree, hier and NVLS count their levels. own (below) is counted on
 * one node only: across nodes it is small beside the network time and the data of one GPU per node
 * cannot tell it from the network bandwidth.
 *
 * own = S / (n * local) (one node only) is the rank's work on its own 1/n share that no link
 * carries: the copy of its own block into the output (all_gather, all_to_all, broadcast), the local
 * reduction of its share (reduce_scatter, reduce, all_reduce); send_recv has none. `local`
 * (bytes/s) is one rate per GPU. The term explains why bus bandwidth rises with the rank count on
 * one NVSwitch node (4 x H200, 1 GiB: all_gather 271 GB/s at 2 ranks, 327 at 4; all_reduce 330 and
 * 356): without it a fit on 2 ranks over-predicts 4 ranks by ~29%
 * (tests/validation/rank_scaling.sh). It vanishes at scale, as it should.
 *
 * Latency, with hop[t][p] the per-step latency of link tier t (the node's intra tier, or net):
 *   ring:    base[a][p]*coll_lat[c] + (steps - inter)*hop[intra][p] + inter*hop[net][p]
 *            steps = 2(n-1) all_reduce, n-1 all_gather/reduce_scatter/broadcast/reduce;
 *            inter = 2(N-1) all_reduce, N-1 otherwise (ring-linear network form), or
 *            2*ceil(log2 N) (tree-log network form, the alternative hypothesis; see net_form)
 *   tree:    base*coll_lat + 2((g-1)*tree_hop[intra] + ceil(log2 N)*tree_hop[net])
 *            (the tree's own per-level latencies, as NCCL keeps them apart from the ring's)
 *   hier:    base*coll_lat + 2(g-1)*hop[intra] + inter*hop[net] (inter as ring, over N nodes)
 *   nvls:    base*coll_lat + 2*hop[intra] + 2*ceil(log2 N)*hop[net]
 *   collnet: base*coll_lat + 2*hop[intra]*(g>1) + 2*hop[net]*(N>1)
 *   pat:     base*coll_lat + ceil(log2 n)*hop[tier]      (tier = net when N > 1)
 *   p2p:     base*coll_lat + (n-1)*hop[tier]  all_to_all;  base*coll_lat + hop[tier]  send_recv
 *
 * A query that forces its algorithm or protocol (as NCCL_ALGO / NCCL_PROTO do) pays force_lat[p] on
 * top: on the 2 x H200 data a forced Ring/LL all-reduce is ~3.6 us slower than the same pair
 * chosen by NCCL itself (which uses fewer channels for small messages), a forced Ring/Simple one
 * only ~0.5 us.
 *
 * Physical bounds (link_max, and the network's bw itself): an efficiency above 1 (eff * coll_bw,
 * relative to the tier's ring/Simple rate) is what a fit on one node may find for a tree or a
 * broadcast on NVLink; it never applies to the network, whose bw is the rate of its wires: there
 * eff * coll_bw counts at most 1, and 2 for CollNet all_reduce (SHARP reduces in the switch).
 * Where a topology gives the physical rate, no tier exceeds it (twice it for NVLS all_reduce on
 * the intra tier, CollNet all_reduce on the network).
 *
 * Bottleneck bandwidth B: on one node the intra tier's per-GPU bandwidth; across nodes the lesser
 * (a smooth minimum, (B_intra^-8 + B_net^-8)^(-1/8); just B_net with one GPU per node) of that and
 * the network bandwidth per node (a ring or tree crosses each node boundary once per
 * channel, so the node's NICs together carry the bus bytes). A tree's network side runs at
 * eff[ring][p] times NCCL's multi-node tree/ring ratio (0.92 Simple, 120/128 LL128, 0.484 LL),
 * not at eff[tree][p], which its chain inside the node sets. hier's network phase moves S/g per
 * GPU through bw[net]/g; all_to_all and send_recv across nodes use bw[net]/g per GPU.
 *
 * All values are SI (seconds, bytes, bytes/s). Every parameter is positive, which lets the fitter
 * work on their logarithms. Parameters are addressed by index (0 .. CS_MODEL_NPARAMS-1) so that
 * the fitter, the calibration file and the uncertainty propagation treat them uniformly.
 */
#ifndef CS_COSTMODEL_H
#define CS_COSTMODEL_H

#include <stddef.h>

#include "coll.h"
#include "status.h"

enum cs_tier { CS_TIER_NVLINK, CS_TIER_PCIE, CS_TIER_NET, CS_TIER_COUNT };

/* How network latency grows with node count for ring-like algorithms: linearly in ring steps (what
 * NCCL's ring does) or in log2(nodes) (what trees do). Fitting both and comparing says which one
 * the data supports; predictions outside the measured node range report both as a band. */
enum cs_net_form { CS_NET_RING_LINEAR, CS_NET_TREE_LOG };

/* How an AUTO query picks its (algorithm, protocol).
 *
 * CS_SELECT_NCCL (the default) follows the rule of NCCL's tuner (src/graph/tuning.cc,
 * ncclTopoGetAlgoTime and the enable/disable pass after it, NCCL 2.18-2.27): among the pairs NCCL
 * offers for that collective and shape, take the one with the least predicted time. NCCL predicts
 * with its own constants; we predict with the calibrated ones, so the pick is the fastest pair
 * under the calibration among those NCCL would consider. The pairs NCCL offers (cs_model_offers):
 * NVLS, CollNet and PAT with the Simple protocol only; NVLS for all_gather and reduce_scatter on
 * one node only (across nodes NCCL needs a CollNet plugin with iallgather/ireducescatter); CollNet
 * (SHARP) for all_reduce across nodes only, never all_gather or reduce_scatter; PAT for
 * all_gather/reduce_scatter with one GPU per node; tree for all_reduce; broadcast and reduce by
 * ring; LL128 only when the node's GPUs are joined by NVLink (intra tier nvlink) or one GPU per
 * node. Because every candidate's time grows with the message size, and the pick is their
 * minimum, the predicted time never decreases with size and moves continuously where the pick
 * switches.
 *
 * CS_SELECT_FASTEST takes the fastest of every enabled valid pair, including those NCCL never
 * offers (what an ideal tuner with every kernel could do).
 *
 * CS_SELECT_NCCL_TABLE reproduces NCCL's own choice: the pair is picked with the NCCL-anchored
 * default constants (NCCL's latency and bandwidth tables; NCCL 2.28.3's tree latencies, tree
 * correction factor, one-GPU-per-node network latency and PAT terms, costmodel.c nccl_table_pick)
 * and the model's network bandwidth, then
 * priced with the calibrated parameters. It is what NCCL_DEBUG_SUBSYS=TUNING reports and what a
 * real run executes (on the 2 x H200 data NCCL switches from LL to Simple at 2 MiB although LL is
 * still faster there), but where NCCL's table and the calibration disagree the priced time can
 * fall as the size grows; use it to compare with NCCL's logs, not for extrapolation. */
enum cs_select { CS_SELECT_NCCL, CS_SELECT_FASTEST, CS_SELECT_NCCL_TABLE };

struct cs_model {
  double bw[CS_TIER_COUNT];                   /* bytes/s: per GPU (nvlink, pcie), per node (net) */
  double hop[CS_TIER_COUNT][CS_PROTO_COUNT];  /* s per step */
  double base[CS_ALGO_COUNT][CS_PROTO_COUNT]; /* s */
  double eff[CS_ALGO_COUNT][CS_PROTO_COUNT];  /* dimensionless */
  double pipe[CS_ALGO_COUNT][CS_PROTO_COUNT]; /* s per pipeline stage */
  double win[CS_ALGO_COUNT][CS_PROTO_COUNT];  /* bytes of bus traffic moved at full link rate */
  double coll_lat[CS_COLL_COUNT];             /* dimensionless, multiplies base */
  double coll_bw[CS_COLL_COUNT];              /* dimensionless, multiplies eff */
  double force_lat[CS_PROTO_COUNT];           /* s added when NCCL_ALGO/NCCL_PROTO force the pair */
  double local;                               /* bytes/s: a GPU's work on its own share (own) */
  double tree_hop[CS_TIER_COUNT][CS_PROTO_COUNT]; /* s per tree level, as hop for the tree */
  /* bytes/s: the physical rate of a tier where a topology states it (per GPU for nvlink/pcie,
   * per node for net), 0 = unknown. Not a parameter: it bounds the others. No algorithm moves
   * bus bytes faster than its links, except by reducing inside a switch (NVLS on the intra tier,
   * CollNet/SHARP on the network), which at most halves the bytes a link carries. */
  double link_max[CS_TIER_COUNT];
  enum cs_tier intra; /* link tier between GPUs of one node */
  /* the path between nodes rules LL128 out: NCCL offers LL128 only where the NIC sits close to
   * the GPU (tuning.cc, NCCL 2.28.3: typeInter <= PATH_PXB, or PATH_PXN on Hopper), never over
   * its socket transport through the host (a tcp topology; a tuning log whose table gives LL128
   * no bandwidth). 0 = offered. */
  int net_no_ll128;
  enum cs_net_form net_form;
  unsigned algo_enabled; /* bit (1u << a) set for each algorithm offered */
  enum cs_select select; /* how AUTO queries pick their pair */
};

#define CS_MODEL_NPARAMS                                                                           \
  (CS_TIER_COUNT + CS_TIER_COUNT * CS_PROTO_COUNT + 4 * CS_ALGO_COUNT * CS_PROTO_COUNT +           \
   2 * CS_COLL_COUNT + CS_PROTO_COUNT + 1 + CS_TIER_COUNT * CS_PROTO_COUNT)

/* The family a parameter belongs to, for priors and reporting. */
enum cs_param_kind {
  CS_PK_BW,
  CS_PK_HOP,
  CS_PK_BASE,
  CS_PK_EFF,
  CS_PK_PIPE,
  CS_PK_WIN,
  CS_PK_COLL_LAT,
  CS_PK_COLL_BW,
  CS_PK_FORCE,
  CS_PK_LOCAL,
  CS_PK_TREE_HOP
};

/* One query: which collective, on what shape, how big; algo/proto CS_*_AUTO let the model choose.
 */
struct cs_coll_query {
  enum cs_coll coll;
  enum cs_algo algo;
  enum cs_proto proto;
  int ranks, nodes, gpus_per_node; /* ranks == nodes * gpus_per_node */
  double bytes;
};

/* The model's answer: the chosen pair, total time and its parts (seconds). */
struct cs_coll_pred {
  enum cs_algo algo;
  enum cs_proto proto;
  double time, lat, bw_time, pipe_time, own_time;
};

/* Fills m with NCCL's own tuning constants (src/graph/tuning.cc) for an NVLink4 node and a network
 * of 8 x 400 Gb/s per node: its latencies per algorithm, protocol and tier, its bandwidth ratios,
 * a per-stage pipeline overhead of 0.1 us. What --select nccl-table picks with, and where the fit
 * starts its search. algo_enabled = ring, tree, pat, p2p (nvls, collnet and hier must be enabled
 * by the caller, as a topology would). */
void cs_model_nccl_tuning(struct cs_model *m);

/* Fills m with the default constants: NCCL's (cs_model_nccl_tuning) but for the tree's network
 * side, tree_hop[net] and pipe[tree], which take what published multi-node runs show (slower than
 * NCCL's model; docs/constants.md). What a prediction uses for a
 * parameter no calibration measured, and the centre of the fit's prior. */
void cs_model_defaults(struct cs_model *m);

/* Parameter access by index i in [0, CS_MODEL_NPARAMS). Returns NULL for an out-of-range i. */
double *cs_model_param(struct cs_model *m, int i);
double cs_model_param_get(const struct cs_model *m, int i);
/* Name of parameter i, e.g. "bw.nvlink", "hop.net.simple", "base.ring.ll", "coll_lat.all_gather",
 * "force_lat.ll", "bw.local". */
const char *cs_model_param_name(int i, char *buf, size_t len);
/* Index of a parameter by name, or -1. */
int cs_model_param_index(const char *name);
/* Index of "bw.TIER" and of "hop.TIER.PROTO" without a name lookup (the hot paths' form). */
int cs_model_param_bw_index(enum cs_tier t);
int cs_model_param_hop_index(enum cs_tier t, enum cs_proto p);
enum cs_param_kind cs_model_param_kind(int i);
/* Unit kind of a parameter when written to a file: "s", "Bps" or "" (dimensionless). */
const char *cs_model_param_unit(int i);

/* Standard deviation, in ln units, of the prior belief in parameter i's default: how far the
 * truth may plausibly sit from the default (the prior's centre) on an unknown system (ln 2 for
 * bandwidths, efficiencies, base latencies and per-collective factors, ln 3 for per-hop latencies,
 * ln 10 for pipeline overheads, ln 4 for windows), and 0 for the three references that are fixed by
 * definition: eff.ring.simple, coll_lat.all_reduce and coll_bw.all_reduce are 1, so that bw.<tier>
 * is the ring/Simple all-reduce bus bandwidth of that tier. The fitter uses it as a weak prior;
 * predictions use it as the uncertainty of parameters no measurement determined. */
double cs_model_param_prior_sd(int i);

/* Checks that q is meaningful (ranks = nodes x gpus_per_node >= 1, bytes >= 0, valid enums). */
enum cs_status cs_model_check_query(const struct cs_coll_query *q, struct cs_error *err);

/* Time of q with algorithm a and protocol p forced (a, p not AUTO). CS_ERR_UNSUPPORTED when a
 * cannot run q->coll (see cs_coll_algo_valid); a single rank costs 0. */
enum cs_status cs_model_time(const struct cs_model *m, const struct cs_coll_query *q,
                             enum cs_algo a, enum cs_proto p, struct cs_coll_pred *out,
                             struct cs_error *err);

/* Whether NCCL offers pair (a, p) for q's collective and shape under m's enabled algorithms (the
 * rules listed at enum cs_select). 0 for invalid or disabled pairs. */
int cs_model_offers(const struct cs_model *m, const struct cs_coll_query *q, enum cs_algo a,
                    enum cs_proto p);

/* The prediction for q: with q->algo/q->proto AUTO, the pair m->select picks (enum cs_select;
 * NCCL_ALGO/NCCL_PROTO-style overrides are q->algo/q->proto and restrict the candidates). */
enum cs_status cs_model_predict(const struct cs_model *m, const struct cs_coll_query *q,
                                struct cs_coll_pred *out, struct cs_error *err);

#endif
