/* framework.h — what a training framework does with a parallel plan, as data.
 *
 * The same plan (dp, tp, pp, zero, ...) costs differently under PyTorch DDP, FSDP, DeepSpeed or
 * Megatron: when gradients are reduced and in which buckets, how ZeRO-3/FSDP gathers parameters
 * and how far ahead, what overlaps what, how pipeline activations travel, and the host work of
 * each collective call and hooked module. A profile holds these facts for one framework at one
 * version; every value in a bundled profile (model/frameworks/NAME.yaml) cites the framework's
 * documentation or code it comes from (docs/frameworks.md lists them).
 *
 * A plan names its profile with `framework=NAME` (default CS_FRAMEWORK_DEFAULT, PyTorch DDP and
 * FSDP, which is also compiled in so that the default needs no file). cs_framework_apply writes
 * the profile into the plan fields the simulator and the memory model already read (bucket,
 * overlap switches, dp_mode, ZeRO stage of a distributed optimizer); a plan field set to
 * something other than its default wins over the profile. The rest of the profile is read by the
 * step simulator (step.h) and the memory model (memory.h) directly.
 *
 * Sizes that a framework states in elements (DeepSpeed's bucket sizes) are kept in elements
 * (`params`); sizes it states in bytes are kept in bytes.
 */
#ifndef CS_FRAMEWORK_H
#define CS_FRAMEWORK_H

#include <stddef.h>

#include "plan.h"
#include "status.h"
#include "yamlcfg.h"

#define CS_FRAMEWORK_DEFAULT "pytorch-ddp"

/* When data-parallel gradients are reduced. */
enum cs_fw_grad {
  CS_FW_GRAD_OVERLAP,       /* buckets all-reduced as backward fills them */
  CS_FW_GRAD_AFTER_BACKWARD /* one pass over all gradients after backward ends */
};

/* What one ZeRO-3/FSDP all-gather holds. */
enum cs_fw_unit {
  CS_FW_UNIT_BLOCK, /* one transformer block (FSDP wrapping policy per block) */
  CS_FW_UNIT_MODULE /* one leaf module's weight (DeepSpeed's per-sub-module fetch) */
};

/* How a pipeline stage sends its output to the next one when tp > 1 without sequence
 * parallelism. */
enum cs_fw_ppsend {
  CS_FW_PP_FULL, /* every TP rank sends the whole activation */
  CS_FW_PP_SPLIT /* each TP rank sends 1/tp; the receiver all-gathers over TP */
};

/* Data type of the gradient reduction. */
enum cs_fw_rdtype { CS_FW_RD_GRAD, CS_FW_RD_FP32 };

struct cs_framework {
  int version; /* file format version: 1 */
  char name[64];
  char release[128]; /* the framework release the values describe */
  char description[256];
  /* gradients */
  int grad_reduce;           /* enum cs_fw_grad */
  double grad_bucket;        /* bytes; 0 = every gradient in one call */
  double bucket_params;      /* params per bucket (0 = grad_bucket bytes) ... */
  double bucket_params_rank; /* ... at least this many params per data-parallel rank */
  double first_bucket;       /* bytes of the first bucket (DDP); recorded, priced as grad_bucket */
  int reduce_dtype;          /* enum cs_fw_rdtype */
  double reduce_bucket;      /* params per reduce(-scatter) call under ZeRO (DeepSpeed) */
  double allgather_bucket;   /* params per updated-weight all-gather call under ZeRO-1/2 */
  int zero_reduce_scatter;   /* ZeRO-1/2 reduce-scatter gradients (else all-reduce them) */
  /* ZeRO-3 / FSDP */
  int unit;                  /* enum cs_fw_unit */
  double persistence;        /* params: weights at or under this stay whole on every rank */
  double prefetch_params;    /* params gathered ahead of the running unit */
  double max_live;           /* params gathered at once (memory bound) */
  double max_reuse;          /* params run before reuse under which a weight is kept */
  int prefetch_depth;        /* units whose gather is issued ahead (0 = none) */
  int overlap_param;         /* gathers run on a side stream beside compute */
  int sync_per_fetch;        /* each fetch synchronises the device: host work is exposed */
  int prefetch_implicit;     /* the next unit's gather is issued when the host reaches that unit
                                (FSDP2's implicit prefetch), so it overlaps only the time the
                                GPU lags behind the host, not the running unit's whole time */
  int fetch_norm;            /* each fetch reads every fetched weight once more (a norm) */
  int fetch_zero;            /* each gather zero-fills its full-size buffer, then syncs */
  int reshard_after_forward; /* gathered weights freed after forward, gathered again in backward */
  int root_unit;             /* the layers outside the blocks are one unit, the root: gathered once
                                in forward and kept for backward, its hooks run once per pass */
  int regather_recompute;    /* full recomputation gathers the weights once more */
  /* other parallelism */
  int overlap_tp;            /* TP collectives overlap GEMMs */
  int pp_send;               /* enum cs_fw_ppsend */
  int dataparallel;          /* single-process nn.DataParallel through GPU 0 */
  int distributed_optimizer; /* optimizer state sharded and weights all-gathered (ZeRO-1) */
  int fp32_logits;           /* the loss keeps fp32 logits and their gradient */
  int grads_freed; /* gradients freed after each optimizer step (zero_grad(set_to_none=True)) */
  int bucket_view; /* gradients are views into the reduction buckets (else DDP's buckets
                      hold a copy of every gradient) */
  int gather_copy; /* a ZeRO-3 gather's output is copied into the parameters on the compute stream
                      before they are used (FSDP2's copy-out): a read and a write of the gathered
                      bytes per gather */
  int grad_copies; /* streaming passes (a read and a write) over the gradient bytes that the
                      bucketed reduction (zero < 3) adds on the compute stream each step: into
                      the reduction buffer before it is reduced, back into the gradients after */
  /* host work, seconds */
  double host_call;       /* per collective call */
  double host_module;     /* per hooked module per pass (ZeRO-3/FSDP hooks) */
  double host_rank;       /* per rank per call of a collective taking a list of per-rank tensors */
  int rank_copies;        /* such a collective also copies each rank's tensor in or out: one kernel
                             per rank on the collective's stream (the GPU's kernel_overhead each) */
  double host_copy;       /* host time to issue each such copy: the calling thread dispatches and
                             launches them one by one, so a call holds the host ranks x host_copy and
                             the copies' GPU time hides behind it as far as host_copy lasts */
  double host_step_param; /* per parameter tensor in the optimizer step: per-tensor checks that
                             each wait for the device (DeepSpeed v0.3's overflow test and
                             gradient norm, an .item() each), exposed */
  double host_prefetch;   /* per unit the prefetch looks ahead at, each fetch: the host walks
                             the units that follow in the pass until their parameters reach
                             prefetch_params (DeepSpeed's get_params_to_prefetch), so thin units
                             cost more walking each */
  double host_tp_call;    /* per tensor-parallel collective a layer's pass issues from the host (an
                             autograd function and its torch.distributed call), in the layer's
                             host time: it counts where the host sets the layer's pace */
  double host_attn_graph; /* DataParallel, a workload with fused attention: host time per replica
                             and forward to build the attention kernel's graph again (cuDNN's
                             attention caches it per thread; the replicas' threads are new each
                             forward), one replica after the other, before they run */
  double host_grad_param; /* per parameter tensor of the gradient reduction's host work, in
                             backward hooks or after backward (DeepSpeed: each gradient copied
                             into and out of the reduction buffer one tensor at a time). The host
                             does it while the GPU still runs the backward it issued; what
                             outlasts that is priced with the optimizer phase */
};

/* The profile's schema table: *n receives its length. */
const struct cs_cfg_field *cs_framework_fields(size_t *n);

/* The compiled-in default profile (CS_FRAMEWORK_DEFAULT); the bundled YAML file of that name
 * holds the same values (a test checks it). Cannot fail. */
void cs_framework_default(struct cs_framework *f);

/* Reads a profile file: `version: 1`, every key of the table, unknown keys rejected with
 * file:line:col. On failure *f is unchanged. */
enum cs_status cs_framework_load(const char *path, struct cs_framework *f, struct cs_error *err);
enum cs_status cs_framework_load_string(const char *text, const char *name, struct cs_framework *f,
                                        struct cs_error *err);

/* The profile a plan names: CS_FRAMEWORK_DEFAULT without reading a file, else the bundled
 * frameworks/NAME.yaml (datadir.h; exe may be NULL) or a path. CS_ERR_IO naming the folders
 * searched when there is none. The last profile found by name is kept for the process (under a
 * mutex) and returned again without reading its file. */
enum cs_status cs_framework_find(const char *name, const char *exe, struct cs_framework *f,
                                 struct cs_error *err);

/* Writes f into the plan fields it decides (bucket, overlap_grad, overlap_param, overlap_tp,
 * dp_mode, zero for a distributed optimizer, grad_bytes 4 for an fp32 reduction) where p holds
 * the plan default; fields the plan set otherwise are kept. With the default profile and a
 * default plan this changes nothing. */
void cs_framework_apply(const struct cs_framework *f, struct cs_plan *p);

#endif
