/* plan.h — a parallel training plan: how one model is spread over GPUs and how one step runs.
 *
 * A plan names the degrees of data (dp), tensor (tp), pipeline (pp, with vpp virtual stages per
 * GPU for the interleaved schedule), context (cp) and expert (ep) parallelism; the ZeRO stage;
 * the micro-batch (mbs) and global batch (gbs) in samples, which give the number of micro-batches
 * per step gbs / (mbs * dp); activation recomputation; sequence parallelism; the numeric
 * precision; the DDP gradient bucket and the overlap switches the step simulator honours.
 *
 * GPUs = dp * tp * pp * cp. Expert parallelism is carved out of the dp * cp ranks that hold the
 * same dense weights (as Megatron-LM does), so ep must divide dp * cp. Dense gradients are reduced
 * over dp * cp ranks, expert gradients over dp * cp / ep ranks; ZeRO shards over the same groups.
 * Hybrid sharding (shard=N, FSDP's HSDP) shards ZeRO-3 over groups of N data-parallel ranks and
 * all-reduces each group's gradient shard across the dp / N replicas.
 *
 * One schema table (cs_plan_fields) serves the command line ("tp=8,pp=8,zero=1"), YAML files,
 * --help-config and the resolved-configuration dump.
 */
#ifndef CS_PLAN_H
#define CS_PLAN_H

#include <stddef.h>
#include <stdio.h>

#include "status.h"
#include "yamlcfg.h"

enum cs_recompute { CS_RECOMPUTE_NONE, CS_RECOMPUTE_SELECTIVE, CS_RECOMPUTE_FULL };

/* Numeric precision of the GEMMs. fp16/bf16/fp8 mean mixed precision with fp32 master weights
 * and Adam state; fp8 runs the linear layers in fp8 and attention in bf16. */
enum cs_precision { CS_PREC_FP32, CS_PREC_TF32, CS_PREC_FP16, CS_PREC_BF16, CS_PREC_FP8 };

struct cs_plan {
  int dp, tp, pp, vpp, cp, ep;
  int zero;      /* 0 (DDP), 1 (optimizer state sharded), 2 (+ gradients), 3 (+ weights) */
  int shard;     /* hybrid sharding: ZeRO-3 over groups of shard dp ranks (0 = over all dp * cp) */
  int mbs, gbs;  /* samples; gbs 0 means mbs * dp (one micro-batch per step) */
  int recompute; /* enum cs_recompute */
  int sp;        /* sequence parallelism: the parts of a layer outside TP split by tp too */
  int precision; /* enum cs_precision */
  double bucket; /* DDP gradient bucket, bytes */
  int overlap_grad;  /* DP gradient reduction overlaps the backward pass */
  int overlap_param; /* ZeRO parameter all-gathers are prefetched and overlap compute */
  int overlap_tp;    /* TP collectives overlap the GEMMs next to them */
  double weight_bytes, grad_bytes, optim_bytes; /* per parameter; 0 = from precision */
  double reserve; /* bytes per GPU held back: CUDA context, allocator slack, library workspaces */
  int dp_mode;    /* enum cs_dp_mode: how the data-parallel replicas meet (DDP by default) */
  char framework[64]; /* the framework profile (framework.h), "pytorch-ddp" by default */
  double loader;      /* samples/s one node's input pipeline sustains; 0 = no cap */
};

/* Data parallelism as DDP (every rank reduces gradients in buckets beside backward) or as
 * single-process DataParallel (GPU 0 broadcasts the weights, scatters the inputs and reduces the
 * gradients onto itself every micro-batch, serialized with compute; one node only). */
enum cs_dp_mode { CS_DP_DDP, CS_DP_DATAPARALLEL };

/* The plan's schema table: *n receives its length. */
const struct cs_cfg_field *cs_plan_fields(size_t *n);

/* Sets every field to its default: dp=tp=pp=vpp=cp=ep=1, zero=0, mbs=1, gbs=0, recompute=none,
 * sp=false, precision=bf16, bucket=25MiB, overlap_grad=overlap_param=true, overlap_tp=false,
 * bytes per parameter from the precision, reserve=1GiB, framework=pytorch-ddp. The defaults are
 * converted from the schema once per process and copied: this allocates nothing and cannot fail. */
void cs_plan_init(struct cs_plan *p);

/* Parses "tp=8,pp=8,dp=16,zero=1,mbs=1,gbs=1536,recompute=selective" on top of the defaults.
 * Items are key=value separated by commas; spaces around them are ignored; a later item
 * overrides an earlier one. A bad item is CS_ERR_USAGE naming it: 'plan item 2 "pp=x": pp:
 * expected an integer ...'. On failure *p holds the defaults plus the items before the bad one. */
enum cs_status cs_plan_parse(const char *text, struct cs_plan *p, struct cs_error *err);

/* Reads a plan from mapping node map of doc (a plan file, or a "plan:" section). */
enum cs_status cs_plan_read(const struct cs_yaml *doc, int map, struct cs_plan *p,
                            struct cs_error *err);

/* Checks the plan on its own: gbs a multiple of mbs * dp, ep dividing dp * cp, vpp > 1 only with
 * pp > 1, shard only with zero=3, cp=1 and ep=1 and dividing dp. Fails with CS_ERR_USAGE and the
 * reason. The checks against a workload are cs_workload_check_plan (workload.h), which runs these
 * first. */
enum cs_status cs_plan_check_self(const struct cs_plan *p, struct cs_error *err);

/* The shard p takes from a search's or family's hybrid sharding `shard` (0 = none): shard where
 * it applies to p (zero=3, cp = ep = 1, shard below dp and dividing it), else 0 (full sharding). */
int cs_plan_fit_shard(const struct cs_plan *p, int shard);

/* The shard group size when p shards hybridly (0 < shard < dp), else 0. */
int cs_plan_hybrid_shard(const struct cs_plan *p);

/* The single-GPU reference of p: p with dp = tp = pp = vpp = cp = ep = 1, no sequence
 * parallelism, ZeRO 0 and gbs 0 (one micro-batch of mbs samples); precision, recomputation and
 * every other field kept. A measured single-GPU time is taken on this plan (cs_compute_calibrate)
 * and speedups are relative to it. */
struct cs_plan cs_plan_single_gpu(const struct cs_plan *p);

/* 1 when the plan text names key ("dp=" at the start of an item, spaces allowed before '='), so
 * that a caller does not fill that field in itself (predict fills dp from the GPUs). */
int cs_plan_text_names(const char *text, const char *key);

/* The first key of "key=value,..." text, in item order, that sets the parallel layout or the batch
 * (dp, tp, pp, vpp, cp, ep, zero, mbs, gbs, recompute, sp), or NULL: what a plan search chooses
 * itself and refuses in its fixed part. Static storage. */
const char *cs_plan_layout_key(const char *text);

/* GPUs the plan occupies: dp * tp * pp * cp. */
long cs_plan_gpus(const struct cs_plan *p);

/* Micro-batches per step on each pipeline: gbs / (mbs * dp) (1 when gbs is 0). */
long cs_plan_microbatches(const struct cs_plan *p);

/* Bytes per parameter of weights, gradients and optimizer state under the plan: the explicit
 * weight_bytes/grad_bytes/optim_bytes when set, else 2/2/12 for fp16, bf16 and fp8 (fp32 master
 * weights, Adam m and v: the 16 bytes of mixed-precision Adam) and 4/4/8 for fp32 and tf32. */
void cs_plan_param_bytes(const struct cs_plan *p, double *weight, double *grad, double *optim);

/* Bytes per stored activation element: 4 for fp32/tf32, else 2. */
double cs_plan_act_bytes(const struct cs_plan *p);

/* Writes the plan as "dp=..,tp=..,..." with the non-default fields (always dp,tp,pp,mbs,gbs). */
void cs_plan_format(const struct cs_plan *p, char *buf, size_t len);

const char *cs_recompute_name(int r);
const char *cs_precision_name(int prec);

#endif
