/* workload.h — models to train, layer by layer: parameters, FLOPs, saved activations, the kernels
 * one micro-batch runs, and the collectives each layer needs under a parallel plan.
 *
 * A workload is read from YAML (model/workloads/NAME.yaml, or a user's file) in one of three forms:
 *
 *   type: decoder   a decoder-only transformer by architecture: layers, hidden, heads, kv_heads
 *                   (GQA/MQA), ffn and ffn_type (gelu | swiglu), norm, vocab, seq, learned
 *                   positions, tied embeddings, biases, dropout, flash attention, and optionally a
 *                   mixture of experts (experts, top_k, expert_ffn, moe_every);
 *   type: encoder   the same blocks with a BERT pre-training head (pooler, MLM transform, NSP);
 *   type: layers    an explicit list of layers (conv, linear, pool, generic), e.g. ResNet-50.
 *
 * Loading expands the architecture into struct cs_layer entries: for transformers an embedding,
 * `layers` blocks and a head. Architecture-level figures are per sample (a sequence of `seq`
 * tokens, or one image) and unsharded. cs_workload_layer_cost then gives one layer's figures on
 * one GPU for one micro-batch under a plan.
 *
 * Conventions, the same as the published formulas this module is tested against:
 *  - FLOPs count the multiply-adds of matrix products as 2 FLOPs each; element-wise work (norms,
 *    softmax, activations, residuals) is memory traffic, not FLOPs. Attention counts the full
 *    s x s score matrix (no causal halving). Backward is twice the forward.
 *  - Activations follow the accounting of arXiv 2205.05198 (sequence parallelism and selective
 *    recomputation): 16-bit tensors at 2 bytes per element (4 under fp32), dropout masks at 1
 *    byte; a GPT block saves s*b*h*(34 + 5*a*s/h) bytes with no parallelism.
 *  - Collective sizes follow nccl-tests (coll.h): the whole buffer of the operation.
 */
#ifndef CS_WORKLOAD_H
#define CS_WORKLOAD_H

#include <stddef.h>

#include "coll.h"
#include "plan.h"
#include "status.h"
#include "yamlcfg.h"

enum cs_wl_type { CS_WL_DECODER, CS_WL_ENCODER, CS_WL_LAYERS };
enum cs_ffn_type { CS_FFN_GELU, CS_FFN_SWIGLU };
enum cs_norm_type { CS_NORM_LAYERNORM, CS_NORM_RMSNORM };
/* The training script's own kernels where they differ from the common fused form (the keys
 * attention_code and loss_code of a workload file; docs/workloads.md lists their sources):
 * megatron-v1 is the Megatron-LM GPT-2 code that DeepSpeed's examples shipped in 2020
 * (DeepSpeedExamples a79272c, Megatron-LM/mpu/transformer.py and mpu/cross_entropy.py). */
enum cs_attn_code { CS_ATTN_CODE_FUSED, CS_ATTN_CODE_MEGATRON_V1 };
enum cs_loss_code { CS_LOSS_CODE_FUSED, CS_LOSS_CODE_MEGATRON_V1 };

enum cs_layer_type {
  CS_LAYER_EMBEDDING, /* token (+ position, token-type) embeddings */
  CS_LAYER_BLOCK,     /* a transformer block: attention + dense or MoE FFN */
  CS_LAYER_HEAD,      /* final norm, output projection (logits) and loss */
  CS_LAYER_CONV,      /* 2-D convolution (+ batch norm + ReLU) */
  CS_LAYER_LINEAR,    /* fully connected */
  CS_LAYER_POOL,      /* pooling / element-wise: memory traffic only */
  CS_LAYER_GENERIC    /* figures given explicitly */
};

/* One layer, architecture-level: per sample, unsharded. Geometry fields are those of the type. */
struct cs_layer {
  char name[32];
  int type;      /* enum cs_layer_type */
  int moe;       /* CS_LAYER_BLOCK: its FFN is a mixture of experts */
  int cin, cout; /* conv: channels; linear: input and output features; pool: channels */
  int kernel, stride, in_size; /* conv/pool: square kernel, stride, input side (pixels) */
  int tokens;                  /* linear: rows per sample */
  int bias, bn;                /* conv/linear: has a bias; conv: followed by batch norm */
  double params;               /* parameters (tied weights counted once) */
  double fwd_flops;            /* forward FLOPs per sample */
  double bwd_flops;            /* backward FLOPs per sample */
  double act_bytes;            /* generic: bytes saved for backward per sample */
  double io_bytes;             /* generic/pool: bytes read and written by the forward per sample */
};

struct cs_workload {
  char name[64];
  char description[256];
  int version;
  int type;        /* enum cs_wl_type */
  char sample[32]; /* what one sample is, for throughput: "sequence", "image" */
  /* transformer architecture */
  int layers, hidden, heads, kv_heads, ffn, vocab, seq;
  int ffn_type, norm; /* enum cs_ffn_type, enum cs_norm_type */
  int max_positions;  /* learned absolute position embeddings; 0 for rotary or ALiBi */
  int type_vocab;     /* encoder: token-type embeddings */
  int tied_embeddings, bias, dropout, flash_attention, embedding_norm;
  int attention_code, loss_code;             /* enum cs_attn_code, enum cs_loss_code */
  int experts, top_k, expert_ffn, moe_every; /* experts 0 = dense */
  /* the expanded layer list (owned) */
  struct cs_layer *layer;
  size_t nlayer;
};

/* Loads a workload file (path) or YAML text (name stands in for the path in messages). On success
 * *w is allocated; free it with cs_workload_free. Unknown keys, bare numbers where units are
 * needed, and architectures that do not add up (hidden not divisible by heads, heads by
 * kv_heads, top_k > experts, ...) are CS_ERR_PARSE or CS_ERR_RANGE at path:line:col. */
enum cs_status cs_workload_load(const char *path, struct cs_workload **w, struct cs_error *err);
enum cs_status cs_workload_load_string(const char *text, const char *name, struct cs_workload **w,
                                       struct cs_error *err);
void cs_workload_free(struct cs_workload *w);

/* Applies "key=value" to a transformer's architecture (e.g. "seq=512") and re-expands the
 * layers. CS_ERR_USAGE for an unknown key, a bad value, a layer-list workload, or an
 * architecture that no longer adds up (w is then unchanged). */
enum cs_status cs_workload_set(struct cs_workload *w, const char *assignment, struct cs_error *err);

/* The architecture schema (for --help-config); *n receives its length. */
const struct cs_cfg_field *cs_workload_fields(size_t *n);

/* Whether w is a transformer (decoder or encoder). */
int cs_workload_is_transformer(const struct cs_workload *w);

/* Total parameters (tied embeddings once), and those one token uses (MoE: top_k experts). */
double cs_workload_params(const struct cs_workload *w);
double cs_workload_active_params(const struct cs_workload *w);

/* Transformer blocks, or layers for a layer list: the unit pipeline stages divide. */
size_t cs_workload_blocks(const struct cs_workload *w);

/* The model chunk (0 .. pp*vpp-1) and pipeline stage (chunk % pp) that hold layer i under p:
 * blocks are split evenly over the chunks, the embedding joins chunk 0 and the head the last. */
int cs_workload_layer_chunk(const struct cs_workload *w, const struct cs_plan *p, size_t i);
int cs_workload_layer_stage(const struct cs_workload *w, const struct cs_plan *p, size_t i);

/* ---- one layer on one GPU under a plan ----------------------------------------------------- */

/* The groups a collective runs in. DP: the dp*cp ranks holding the same dense weights (under
 * hybrid sharding the shard ranks that share one ZeRO-3 shard); EDP: the dp*cp/ep ranks holding
 * the same experts; EMBED: the first and last pipeline stage (tied embeddings); PP: neighbouring
 * stages; REPLICA: under hybrid sharding the dp/shard ranks holding the same shard. */
enum cs_group {
  CS_GROUP_TP,
  CS_GROUP_CP,
  CS_GROUP_EP,
  CS_GROUP_DP,
  CS_GROUP_EDP,
  CS_GROUP_PP,
  CS_GROUP_EMBED,
  CS_GROUP_REPLICA,
  CS_GROUP_COUNT
};

/* When a collective runs: in a micro-batch's forward or backward (count per micro-batch), or once
 * per step: GRAD as backward produces the gradients (last micro-batch), PARAM after the optimizer
 * step (ZeRO-1/2 parameter all-gather). */
enum cs_phase { CS_PHASE_FWD, CS_PHASE_BWD, CS_PHASE_GRAD, CS_PHASE_PARAM };

struct cs_comm {
  int coll;         /* enum cs_coll */
  int group;        /* enum cs_group */
  int phase;        /* enum cs_phase */
  int count;        /* how many times, each of `bytes` */
  double bytes;     /* nccl-tests size of one */
  const char *what; /* static description */
};

/* One kernel of the forward pass. GEMMs are batch x (m x k)(k x n); `bytes` is the memory traffic
 * (0 for GEMMs means "operands and result once"). */
enum cs_op_kind { CS_OP_GEMM, CS_OP_MEMORY };
struct cs_op {
  const char *name; /* static */
  int kind;         /* enum cs_op_kind */
  int attention;    /* runs at attention precision (bf16 under fp8) */
  int fused;        /* a fused attention kernel: its backward recomputes the scores */
  double m, n, k, batch;
  double flops; /* forward FLOPs */
  double bytes;
  int causal; /* attention with a causal mask: fused kernels skip half the scores */
  int pass;   /* enum cs_op_pass */
};

/* The passes a kernel runs in. A memory kernel of both moves twice its bytes backward (an
 * elementwise gradient reads two tensors and writes one); one of a single pass moves its bytes
 * there only: autocast's weight cast runs forward, the casts, concatenations and sums that
 * autograd adds run backward. */
enum cs_op_pass { CS_OP_BOTH = 0, CS_OP_FWD_ONLY = 1, CS_OP_BWD_ONLY = 2 };

#define CS_LAYER_MAX_OPS 26
#define CS_LAYER_MAX_COMM 16

/* Layer i on one GPU for one micro-batch of plan p. */
struct cs_layer_cost {
  double params;        /* held by this GPU after TP, EP (and tied-copy) placement, before ZeRO */
  double params_expert; /* of which expert parameters (EDP group) */
  double params_full;   /* of the layer before any sharding (ZeRO-3 gathers params/tp of it) */
  double fwd_flops, bwd_flops; /* model FLOPs */
  double recompute_flops;      /* extra forward work of recomputation (and flash attention's) */
  double act_bytes;            /* saved for backward under p's recompute setting */
  double out_bytes;            /* the layer's output on this GPU: what a pipeline send moves */
  size_t nops;
  struct cs_op op[CS_LAYER_MAX_OPS];  /* forward kernels */
  int op_recompute[CS_LAYER_MAX_OPS]; /* re-run in backward under p's recompute */
  size_t ncomm;
  struct cs_comm comm[CS_LAYER_MAX_COMM];
};

/* Fills *c for layer i under p. p must have passed cs_workload_check_plan for w (else
 * CS_ERR_USAGE). */
enum cs_status cs_workload_layer_cost(const struct cs_workload *w, const struct cs_plan *p,
                                      size_t i, struct cs_layer_cost *c, struct cs_error *err);

/* FLOPs of one whole step of plan p over all GPUs: model FLOPs (forward + backward of gbs
 * samples) and hardware FLOPs (plus recomputation). Independent of how the plan shards. */
enum cs_status cs_workload_step_flops(const struct cs_workload *w, const struct cs_plan *p,
                                      double *model_flops, double *hw_flops, struct cs_error *err);

/* Checks plan p on its own (cs_plan_check_self) and against w (w may be NULL to skip those
 * checks): heads and KV heads divisible by tp, blocks by pp * vpp, experts by ep, sequence by cp,
 * tp/cp/ep > 1 only for transformers. Fails with CS_ERR_USAGE and the reason. */
enum cs_status cs_workload_check_plan(const struct cs_workload *w, const struct cs_plan *p,
                                      struct cs_error *err);

/* The size of group g under p (1 when the group does not exist). */
int cs_plan_group_size(const struct cs_plan *p, int g);

const char *cs_group_name(int g);
const char *cs_phase_name(int ph);
const char *cs_wl_type_name(int t);

#endif
