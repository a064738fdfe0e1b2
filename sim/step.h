/* step.h — the step simulator: one training step of a workload under a parallel plan on a
 * topology, every collective costed by a calibration at the shape of its own group.
 *
 * The step of one representative rank per pipeline stage is a set of streams with dependencies:
 *
 *  - compute: each layer's forward, backward and recomputation (compute.h);
 *  - TP collectives (all-reduce, or all-gather/reduce-scatter under sequence parallelism), EP
 *    all-to-alls and the vocabulary-parallel loss reductions sit on the critical path: they block
 *    the compute stream (overlap_tp hides them behind the neighbouring GEMMs instead);
 *  - CP: ring attention as cp - 1 point-to-point steps per pass, each moving one key/value block
 *    (1/cp of the gathered keys and values; in backward with their gradients) to the next rank
 *    while one block of attention (attention / cp) runs; the rank's own block hides the first
 *    transfer, so a pass exposes (cp - 1) max(0, transfer - attention / cp);
 *  - ZeRO-3: each layer's weights are all-gathered in forward and again in backward on the
 *    data-parallel stream, issued when the previous layer starts (prefetch one ahead, when
 *    overlap_param); gradients are reduce-scattered after each layer's backward;
 *  - ZeRO-0/1/2: gradients fill buckets (plan.bucket, 25 MiB by default) in the order backward
 *    produces them during the last micro-batch of each model chunk; a full bucket is all-reduced
 *    (ZeRO-0) or reduce-scattered (ZeRO-1/2) on the data-parallel stream as soon as the stream is
 *    free, overlapping the rest of backward (with overlap_grad; otherwise after it). Many small
 *    buckets pay many latencies, one huge bucket cannot overlap: both effects come out of the
 *    queue. ZeRO-1/2 then all-gather the updated weights (hidden behind the next step's first
 *    forward with overlap_param);
 *  - PP: the 1F1B or interleaved schedule of pipeline.h with one point-to-point transfer of the
 *    chunk's output between neighbouring stages; tied embeddings are all-reduced between the first
 *    and last stage after the flush;
 *  - optimizer: Adam over the parameters this GPU owns after ZeRO sharding, memory-bound;
 *  - plan.dp_mode = dataparallel (single-process DataParallel; one node, zero=0, tp=pp=cp=ep=1):
 *    instead of the bucket queue, GPU 0 broadcasts the weights and sends each other GPU its mbs
 *    samples before every micro-batch's forward and the gradients are reduced onto it after its
 *    backward, all serialized with compute (exposed dp time of every micro-batch); then the
 *    optimizer runs on GPU 0 alone (the same time as DDP's replicated optimizer).
 *
 * NIC sharing: when the data-parallel gradient stream leaves the node (DP or EDP group on more
 * than one node) it shares each GPU's NIC with the other network-crossing traffic of the last
 * micro-batch's backward: the point-to-point send of each chunk's result to the previous stage
 * (PP across nodes) and the EP all-to-alls and CP exchanges of that backward (across nodes).
 * Rule: two transfers that overlap each run at half rate while they overlap, so each is
 * lengthened by the time it overlapped the other at full rate (o = the overlap of the send
 * [t, t + p2p] with the stream's busy time until it is free; for EP/CP, the lesser of their
 * exposed time and the buckets issued during that backward). The overlaps are measured on the
 * schedule without sharing; the schedule is run once more with the sends and backwards
 * lengthened, and the gradient stream lengthened by the same amounts (one correction pass, not
 * a fixed point). ZeRO-3's per-layer gathers and the ZeRO-1/2 weight gathers are not counted.
 * cs_sim_set_nic_sharing turns the rule off for comparisons.
 *
 * Compute that runs while a data-parallel collective is in flight is slowed by `interference`
 * (1 = none) in proportion to the overlap.
 *
 * Collectives: the group of each kind (TP, CP, EP, DP, EDP, PP, EMBED) is placed on the topology
 * with cs_topo_map in Megatron-LM's rank order (tp, cp, ep, dp, pp), with all sibling groups of
 * the kind communicating at once (they share NICs); the topology's link rates for that group are
 * written into a copy of the calibration's model (cs_topo_model_apply: the network bandwidth the
 * group is left always; the NVLink/PCIe bandwidth only where the calibration did not fit it) and
 * cs_cal_predict gives the time and its ~95% band. The whole schedule is run three times: with
 * every collective at its predicted time, at its low and at its high bound.
 *
 * Cost: cs_sim_alloc does the per-plan work (layer costs, one prediction per distinct collective,
 * the pipeline schedule compiled into a flat list, the gradient queue reduced to two numbers per
 * chunk); cs_sim_run replays the schedule once for all four of its runs (pipeline.h's lanes) in
 * O(pp * vpp * m) with no allocation: microseconds, independent of the number of data-parallel
 * replicas and so of the node count.
 */
#ifndef CS_SIM_STEP_H
#define CS_SIM_STEP_H

#include "cal.h"
#include "compute.h"
#include "framework.h"
#include "plan.h"
#include "status.h"
#include "topology.h"
#include "workload.h"

/* Compute slowdown beside overlapped collectives when no probe or steps calibration gives one:
 * the median, 1.164, of the 40 interference probes (a bf16 or fp8 GEMM of 8192 x 4096..16384 x
 * 4096..16384 beside 256 MiB all-reduces, NCCL over NVLink) of three calls on 2 x H200 machines
 * (tests/data/h200x2-commscale/probes.csv, tests/data/h200x2-interference), range 1.13-1.33. */
#define CS_SIM_DEFAULT_INTERFERENCE 1.16

/* A cache of collective costs shared by many simulations (a plan search): keyed by the link
 * parameters a group's collective sees (bandwidths, network latency, algorithms on offer), its
 * shape and its size, so that plans whose groups land on the same shape share one prediction. One
 * cache serves one calibration: handing it a simulation with another calibration empties it. Not
 * thread-safe: one per thread. */
struct cs_sim_cache;

/* Allocates an empty cache (CS_ERR_NOMEM). Free with cs_sim_cache_free (NULL is harmless). */
enum cs_status cs_sim_cache_alloc(struct cs_sim_cache **out, struct cs_error *err);
void cs_sim_cache_free(struct cs_sim_cache *c);
/* Lookups answered from the cache, and those that had to predict. */
long cs_sim_cache_hits(const struct cs_sim_cache *c);
long cs_sim_cache_misses(const struct cs_sim_cache *c);

/* What one simulation needs; every pointer is borrowed and must outlive the struct cs_sim. */
struct cs_sim_inputs {
  const struct cs_workload *workload;
  const struct cs_plan *plan;       /* must pass cs_workload_check_plan for the workload */
  const struct cs_compute *compute; /* the GPU at the plan's precision (maybe calibrated) */
  const struct cs_topology *topology;
  const struct cs_cal *cal; /* collective model and its uncertainty */
  double interference;      /* >= 1: compute slowdown under overlapped collectives */
  /* the framework profile (framework.h); NULL = the one the plan names, found with
   * cs_framework_find (a shared cache keeps the last one loaded) */
  const struct cs_framework *framework;
};

/* Where the time of the step goes, on the pipeline stage that finishes last (seconds). The parts
 * add up to step: compute + tp + cp + ep + dp + pp + bubble + optimizer. */
struct cs_sim_breakdown {
  double compute;    /* kernels, including recomputation and interference */
  double tp, cp, ep; /* exposed tensor-, context- and expert-parallel collectives */
  double dp;         /* exposed data-parallel traffic: gradient tail, ZeRO waits, weight gathers,
                        tied-embedding reduction */
  double pp;         /* waiting for point-to-point transfers between stages */
  double bubble;     /* pipeline idle time that the schedule leaves with free transfers */
  double optimizer;
};

struct cs_sim_result {
  /* s; lo/hi: an ~85% interval: every collective at its band's bounds, widened in quadrature by
   * the compute's uncertainty (cs_sim_compute_band) and, above one GPU, the framework's
   * (cs_compute.band_fw of the step); see cs_sim_band */
  double step, step_lo, step_hi;
  double step_lo_coll, step_hi_coll; /* the collectives' part of the band alone */
  struct cs_sim_breakdown part;      /* of the predicted step */
  double host; /* of part.compute: the GPU waiting for an eager host beyond its kernels */
  int stage;   /* the critical pipeline stage */
  long gpus, microbatches;
  double samples;               /* per step (the global batch) */
  double tokens;                /* per step; 0 when the workload has no sequence */
  double model_flops, hw_flops; /* per step, all GPUs */
  double samples_per_s, tokens_per_s;
  double tflops_per_gpu;    /* model FLOP/s per GPU / 1e12 */
  double hw_tflops_per_gpu; /* including recomputation */
  double mfu;               /* model FLOP/s per GPU / peak */
  double comm_bytes;        /* bytes one GPU sends into collectives per step (nccl-tests
                               sizes times the bus factor) */
};

struct cs_sim;

/* Prepares the step of in: checks the plan against the workload (cs_workload_check_plan), maps
 * every group on the topology, costs every distinct collective and every layer. in is copied; what
 * it points to is borrowed. Errors: CS_ERR_USAGE (plan, interference < 1, dp_mode=dataparallel with
 * zero > 0, tp/pp/cp/ep > 1 or a dp group on more than one node), CS_ERR_RANGE (the plan
 * needs more nodes than the topology has), CS_ERR_UNSUPPORTED (a group leaves a node that has no
 * network), CS_ERR_NOMEM. On failure *out is NULL. Free with cs_sim_free (NULL is harmless). */
enum cs_status cs_sim_alloc(const struct cs_sim_inputs *in, struct cs_sim **out,
                            struct cs_error *err);
void cs_sim_free(struct cs_sim *s);

/* cs_sim_alloc with a shared collective-cost cache (borrowed; NULL = none): the same results. */
enum cs_status cs_sim_alloc_cached(const struct cs_sim_inputs *in, struct cs_sim_cache *cache,
                                   struct cs_sim **out, struct cs_error *err);

/* The compute's half-width of r's band, seconds: c->band_rel x (compute + optimizer) and
 * c->band_host x the host time r->host, in quadrature (a host-bound step also carries how far
 * the host's speed moves between machines). */
double cs_sim_compute_band(const struct cs_compute *c, const struct cs_sim_result *r);

/* The band of r widened, in quadrature with the collectives' (r->step_lo_coll..step_hi_coll),
 * by u_compute and u_framework (seconds of half-width, independent of each other and of the
 * collectives): *lo = step - sqrt(dl^2 + u_c^2 + u_f^2), *hi likewise, *lo clipped at 0.
 * cs_sim_run uses it with cs_sim_compute_band and, above one GPU, band_fw x step;
 * validate with its own framework term (one left out of the section it scores). */
void cs_sim_band(const struct cs_sim_result *r, double u_compute, double u_framework, double *lo,
                 double *hi);

/* Runs the prepared step (three times, for the band, and once more with free transfers to split
 * the pipeline's idle time into bubble and transfer waits) and fills *r. Never fails. */
void cs_sim_run(struct cs_sim *s, struct cs_sim_result *r);

/* Runs the prepared step once, at the predicted collective times only: fills r as cs_sim_run
 * does, with step_lo = step_hi = step, and bubble and pp transfer waits not told apart (both in
 * part.pp). One lane instead of four (about half the time of cs_sim_run), for searches that
 * rank plans. Never fails. */
void cs_sim_run_step(struct cs_sim *s, struct cs_sim_result *r);

/* cs_sim_alloc + cs_sim_run + cs_sim_free. */
enum cs_status cs_sim_predict(const struct cs_sim_inputs *in, struct cs_sim_result *r,
                              struct cs_error *err);

/* The single-GPU reference of DLPerf's speedup: the same workload, micro-batch and number of
 * micro-batches per step on one GPU holding the whole model, compute and optimizer only (memory
 * is not checked: the reference may be hypothetical). *samples_per_s receives its throughput;
 * speedup(n) = samples_per_s(n) / this, scaling efficiency = speedup / n. */
enum cs_status cs_sim_single_gpu(const struct cs_workload *w, const struct cs_plan *p,
                                 const struct cs_compute *c, double *samples_per_s,
                                 struct cs_error *err);

/* Turns NIC sharing (above) on (the default) or off for the following runs of s. */
void cs_sim_set_nic_sharing(struct cs_sim *s, int on);

/* One line per collective kind for --explain: fills at most max entries, returns how many. */
struct cs_sim_coll_info {
  int group;    /* enum cs_group */
  int coll;     /* enum cs_coll */
  int phase;    /* enum cs_phase */
  double bytes; /* one call's nccl-tests size */
  int calls;    /* per step on the critical stage */
  int ranks, nodes, gpus_per_node;
  int algo, proto;     /* the model's choice */
  double time, lo, hi; /* s, one call */
};
int cs_sim_collectives(const struct cs_sim *s, struct cs_sim_coll_info *info, int max);

#endif
