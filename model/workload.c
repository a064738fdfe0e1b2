/* workload.c — reading workloads, expanding them into layers, and each layer's figures under a
 * parallel plan; see workload.h.
 *
 * Design: one function per layer type computes everything about that layer on one GPU for one
 * micro-batch under a plan (parameters, FLOPs, kernels, saved activations, collectives). The
 * architecture-level figures stored in struct cs_layer (per sample, unsharded) are the same
 * functions evaluated under the unit plan (every degree 1, one sample), so the totals and the
 * sharded figures can never drift apart.
 *
 * Activation accounting per transformer block follows arXiv 2205.05198 term by term, generalised
 * to GQA (K and V have kv_heads heads), SwiGLU (the gate doubles the first FFN output), no
 * dropout (no masks, no dropout output) and flash attention (no s x s tensors; a fp32
 * log-sum-exp per head and token instead). Per token of the GPU's share, with e bytes per element
 * and t = tp (SP: the parts outside tensor parallelism divide by t too):
 *
 *   norm inputs 2eh, QKV input eh, Q e*h/t, K and V 2e*g*d/t, softmax output e*a*s/t, dropout
 *   mask and output (1+e)*a*s/t, projection input e*h/t, two dropout masks 2h, FFN input eh,
 *   FFN intermediate 2e*f/t (GELU: input and output) or 3e*f/t (SwiGLU)
 *
 * which is sbh(34 + 5as/h) for GPT (e=2, f=4h, g=a, dropout) with no parallelism. Selective
 * recomputation drops the s x s terms; full recomputation keeps only the block input.
 */
#include "workload.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const char *const wl_types[] = {"decoder", "encoder", "layers", NULL};
static const char *const ffn_types[] = {"gelu", "swiglu", NULL};
static const char *const norm_types[] = {"layernorm", "rmsnorm", NULL};
static const char *const attn_codes[] = {"fused", "megatron-v1", NULL};
static const char *const loss_codes[] = {"fused", "megatron-v1", NULL};
static const char *const layer_types[] = {"conv", "linear", "pool", "generic", NULL};

#define W(key, type, field, size, unit, lo, hi, def, names, help)                                  \
  { key, type, offsetof(struct cs_workload, field), size, unit, lo, hi, def, names, help }

static const struct cs_cfg_field wl_fields[] = {
    W("version", CS_CFG_INT, version, 0, 0, 1, 1, NULL, NULL, "file format version: 1"),
    W("name", CS_CFG_STRING, name, 64, 0, 0, 0, NULL, NULL, "short name, e.g. gpt3-175b"),
    W("description", CS_CFG_STRING, description, 256, 0, 0, 0, "\"\"", NULL,
      "one line: what the model is and where its figures come from"),
    W("type", CS_CFG_ENUM, type, 0, 0, 0, 0, NULL, wl_types,
      "decoder, encoder (BERT-style) or layers (explicit layer_list)"),
    W("sample", CS_CFG_STRING, sample, 32, 0, 0, 0, "\"\"", NULL,
      "what one sample is (default: sequence, or image for layer lists)"),
    W("layers", CS_CFG_INT, layers, 0, 0, 0, 100000, "0", NULL, "transformer blocks"),
    W("hidden", CS_CFG_INT, hidden, 0, 0, 0, 1 << 24, "0", NULL, "model width h"),
    W("heads", CS_CFG_INT, heads, 0, 0, 0, 1 << 16, "0", NULL, "attention heads a"),
    W("kv_heads", CS_CFG_INT, kv_heads, 0, 0, 0, 1 << 16, "0", NULL,
      "key/value heads (GQA; 1 = MQA; 0 = heads)"),
    W("ffn", CS_CFG_INT, ffn, 0, 0, 0, 1 << 26, "0", NULL, "FFN width (0 = 4*hidden)"),
    W("ffn_type", CS_CFG_ENUM, ffn_type, 0, 0, 0, 0, "gelu", ffn_types, "gelu or swiglu"),
    W("norm", CS_CFG_ENUM, norm, 0, 0, 0, 0, "layernorm", norm_types, "layernorm or rmsnorm"),
    W("vocab", CS_CFG_INT, vocab, 0, 0, 0, 1 << 26, "0", NULL, "vocabulary size V"),
    W("seq", CS_CFG_INT, seq, 0, 0, 0, 1 << 26, "0", NULL, "sequence length s of one sample"),
    W("max_positions", CS_CFG_INT, max_positions, 0, 0, 0, 1 << 26, "0", NULL,
      "learned position embeddings (0 = rotary or ALiBi)"),
    W("type_vocab", CS_CFG_INT, type_vocab, 0, 0, 0, 1 << 20, "0", NULL,
      "token-type embeddings (BERT: 2)"),
    W("tied_embeddings", CS_CFG_BOOL, tied_embeddings, 0, 0, 0, 1, "false", NULL,
      "output projection shares the token embedding"),
    W("bias", CS_CFG_BOOL, bias, 0, 0, 0, 1, "false", NULL, "linear layers have biases"),
    W("dropout", CS_CFG_BOOL, dropout, 0, 0, 0, 1, "false", NULL,
      "dropout after attention scores, attention and FFN (masks are saved)"),
    W("flash_attention", CS_CFG_BOOL, flash_attention, 0, 0, 0, 1, "false", NULL,
      "fused attention: no s x s tensors saved"),
    W("attention_code", CS_CFG_ENUM, attention_code, 0, 0, 0, 0, "fused", attn_codes,
      "unfused attention's elementwise passes: fused (scale and mask inside the softmax) or "
      "megatron-v1 (scale, mask multiply and mask subtract each a pass over the scores)"),
    W("loss_code", CS_CFG_ENUM, loss_code, 0, 0, 0, 0, "fused", loss_codes,
      "cross-entropy kernels: fused or megatron-v1 (fp32 copy of the logits, then clone, max, "
      "subtract, exp, sum and divide)"),
    W("embedding_norm", CS_CFG_BOOL, embedding_norm, 0, 0, 0, 1, "false", NULL,
      "a norm after the embedding (BERT, BLOOM)"),
    W("experts", CS_CFG_INT, experts, 0, 0, 0, 1 << 16, "0", NULL,
      "experts per MoE layer (0 = dense)"),
    W("top_k", CS_CFG_INT, top_k, 0, 0, 0, 1 << 16, "0", NULL, "experts per token"),
    W("expert_ffn", CS_CFG_INT, expert_ffn, 0, 0, 0, 1 << 26, "0", NULL,
      "FFN width of one expert (0 = ffn)"),
    W("moe_every", CS_CFG_INT, moe_every, 0, 0, 1, 1 << 16, "1", NULL,
      "every n-th block is MoE (1 = all)"),
};
#undef W
#define NWL (sizeof wl_fields / sizeof wl_fields[0])

/* One entry of layer_list, before expansion. */
struct spec {
  int type;
  char name[32];
  int cin, cout, kernel, stride, in_size, tokens, bias, bn, repeat;
  double params, fwd_flops, bwd_flops, act, io;
};

#define S(key, type, field, size, unit, lo, hi, def, names, help)                                  \
  { key, type, offsetof(struct spec, field), size, unit, lo, hi, def, names, help }

static const struct cs_cfg_field spec_fields[] = {
    S("type", CS_CFG_ENUM, type, 0, 0, 0, 0, NULL, layer_types, "conv, linear, pool or generic"),
    S("name", CS_CFG_STRING, name, 32, 0, 0, 0, NULL, NULL, "layer name"),
    S("cin", CS_CFG_INT, cin, 0, 0, 0, 1 << 24, "0", NULL, "input channels / features"),
    S("cout", CS_CFG_INT, cout, 0, 0, 0, 1 << 24, "0", NULL, "output channels / features"),
    S("kernel", CS_CFG_INT, kernel, 0, 0, 1, 1024, "1", NULL, "square kernel side"),
    S("stride", CS_CFG_INT, stride, 0, 0, 1, 1024, "1", NULL, "stride"),
    S("in_size", CS_CFG_INT, in_size, 0, 0, 0, 1 << 16, "0", NULL, "input side in pixels"),
    S("tokens", CS_CFG_INT, tokens, 0, 0, 1, 1 << 26, "1", NULL, "linear: rows per sample"),
    S("bias", CS_CFG_BOOL, bias, 0, 0, 0, 1, "false", NULL, "has a bias"),
    S("bn", CS_CFG_BOOL, bn, 0, 0, 0, 1, "false", NULL, "conv: batch norm + ReLU follow"),
    S("repeat", CS_CFG_INT, repeat, 0, 0, 1, 100000, "1", NULL, "this many identical layers"),
    S("params", CS_CFG_DOUBLE, params, 0, 0, 0, 1e16, "0", NULL, "generic: parameters"),
    S("fwd_flops", CS_CFG_DOUBLE, fwd_flops, 0, 0, 0, 1e20, "0", NULL,
      "generic: forward FLOPs per sample"),
    S("bwd_flops", CS_CFG_DOUBLE, bwd_flops, 0, 0, 0, 1e20, "0", NULL,
      "generic: backward FLOPs per sample (0 = twice forward)"),
    S("act", CS_CFG_QTY, act, 0, CS_UNIT_BYTES, 0, 1e15, "0B", NULL,
      "generic: bytes saved for backward per sample"),
    S("io", CS_CFG_QTY, io, 0, CS_UNIT_BYTES, 0, 1e15, "0B", NULL,
      "generic: bytes the forward reads and writes per sample"),
};
#undef S
#define NSPEC (sizeof spec_fields / sizeof spec_fields[0])

const struct cs_cfg_field *cs_workload_fields(size_t *n) {
  *n = NWL;
  return wl_fields;
}

int cs_workload_is_transformer(const struct cs_workload *w) {
  return w->type != CS_WL_LAYERS;
}

const char *cs_wl_type_name(int t) {
  return t >= 0 && t <= CS_WL_LAYERS ? wl_types[t] : "?";
}

const char *cs_group_name(int g) {
  static const char *const names[] = {"tp", "cp", "ep", "dp", "edp", "pp", "embed", "replica"};
  return g >= 0 && g < CS_GROUP_COUNT ? names[g] : "?";
}

const char *cs_phase_name(int ph) {
  static const char *const names[] = {"fwd", "bwd", "grad", "param"};
  return ph >= 0 && ph <= CS_PHASE_PARAM ? names[ph] : "?";
}

enum cs_status cs_workload_check_plan(const struct cs_workload *w, const struct cs_plan *p,
                                      struct cs_error *err) {
  enum cs_status st = cs_plan_check_self(p, err);
  if (st != CS_OK) return st;
  if (w == NULL) return CS_OK;
  if (!cs_workload_is_transformer(w)) {
    if (p->tp > 1 || p->cp > 1 || p->ep > 1 || p->sp)
      return cs_error_set(err, CS_ERR_USAGE,
                          "plan: %s is a layer list; tp, cp, ep and sp need a transformer",
                          w->name);
    size_t nb = cs_workload_blocks(w);
    if ((size_t)p->pp * p->vpp > nb)
      return cs_error_set(err, CS_ERR_USAGE, "plan: pp*vpp = %d exceeds the %zu layers of %s",
                          p->pp * p->vpp, nb, w->name);
    return CS_OK;
  }
  if (w->heads % p->tp != 0)
    return cs_error_set(err, CS_ERR_USAGE,
                        "plan: %s has %d attention heads, not divisible by tp=%d", w->name,
                        w->heads, p->tp);
  if (w->kv_heads % p->tp != 0 && p->tp % w->kv_heads != 0)
    return cs_error_set(err, CS_ERR_USAGE,
                        "plan: %s has %d KV heads; tp=%d must divide them or be a multiple of them",
                        w->name, w->kv_heads, p->tp);
  if (w->layers % (p->pp * p->vpp) != 0)
    return cs_error_set(err, CS_ERR_USAGE,
                        "plan: %s has %d layers, not divisible by pp*vpp = %d*%d", w->name,
                        w->layers, p->pp, p->vpp);
  if (w->experts == 0 && p->ep > 1)
    return cs_error_set(err, CS_ERR_USAGE, "plan: ep=%d but %s has no experts", p->ep, w->name);
  if (w->experts > 0 && w->experts % p->ep != 0)
    return cs_error_set(err, CS_ERR_USAGE, "plan: %s has %d experts, not divisible by ep=%d",
                        w->name, w->experts, p->ep);
  if (w->seq % p->cp != 0)
    return cs_error_set(err, CS_ERR_USAGE, "plan: sequence %d of %s is not divisible by cp=%d",
                        w->seq, w->name, p->cp);
  if (p->sp && w->seq / p->cp % p->tp != 0)
    return cs_error_set(err, CS_ERR_USAGE,
                        "plan: sequence parallelism splits the %d tokens per GPU by tp=%d unevenly",
                        w->seq / p->cp, p->tp);
  if (w->ffn % p->tp != 0 || (w->experts > 0 && w->expert_ffn % p->tp != 0))
    return cs_error_set(err, CS_ERR_USAGE, "plan: the FFN width of %s is not divisible by tp=%d",
                        w->name, p->tp);
  return CS_OK;
}

int cs_plan_group_size(const struct cs_plan *p, int g) {
  switch (g) {
  case CS_GROUP_TP:
    return p->tp;
  case CS_GROUP_CP:
    return p->cp;
  case CS_GROUP_EP:
    return p->ep;
  case CS_GROUP_DP:
    return cs_plan_hybrid_shard(p) ? p->shard : p->dp * p->cp;
  case CS_GROUP_EDP:
    return cs_plan_hybrid_shard(p) ? p->shard : p->dp * p->cp / p->ep;
  case CS_GROUP_REPLICA:
    return cs_plan_hybrid_shard(p) ? p->dp / p->shard : 1;
  case CS_GROUP_PP:
    return p->pp;
  case CS_GROUP_EMBED:
    return p->pp > 1 ? 2 : 1;
  }
  return 1;
}

/* ---- per-layer figures --------------------------------------------------------------------- */

/* Appends a kernel; returns it, or NULL when the layer's list is full. */
static struct cs_op *add_op(struct cs_layer_cost *c, const char *name, int kind, double m, double n,
                            double k, double batch, double bytes, int recompute) {
  if (c->nops >= CS_LAYER_MAX_OPS) return NULL;
  struct cs_op *o = &c->op[c->nops];
  o->name = name;
  o->kind = kind;
  o->attention = 0;
  o->fused = 0;
  o->causal = 0;
  o->m = m, o->n = n, o->k = k, o->batch = batch;
  o->flops = kind == CS_OP_GEMM ? 2.0 * m * n * k * batch : 0;
  o->bytes = bytes;
  o->pass = CS_OP_BOTH;
  c->op_recompute[c->nops] = recompute;
  c->nops++;
  return o;
}

/* Appends a memory-bound kernel of the given bytes that runs in one pass only (CS_OP_FWD_ONLY or
 * CS_OP_BWD_ONLY): the casts and autograd's copies. A full list drops it, as add_op does. */
static void add_pass_op(struct cs_layer_cost *c, const char *name, double bytes, int pass,
                        int recompute) {
  struct cs_op *o = add_op(c, name, CS_OP_MEMORY, 0, 0, 0, 1, bytes, recompute);
  if (o) o->pass = pass;
}

/* Bytes per element of a norm's saved input: under autocast over weights wider than the compute
 * type the residual stream stays in the weights' type (the embedding's fp32 output plus each
 * block's outputs), and LayerNorm runs in fp32 (autocast's fp32 op list), so both norm inputs of
 * a block are saved wide. Measured on the GPT of tests/gpu/steps.py at 13 shapes
 * (tests/data/h100-compute/saved_bytes.csv, tests/gpu/saved_bytes.py): 8 bytes per token and
 * hidden unit in fp32 per block beside 28 in bf16, the model's count with 4-byte norm inputs. */
static double norm_bytes(const struct cs_plan *p) {
  double wb, gb, ob, e = cs_plan_act_bytes(p);
  cs_plan_param_bytes(p, &wb, &gb, &ob);
  return wb > e ? wb : e;
}

/* Weights kept wider than the compute type (fp32 weights under bf16/fp16 autocast, PyTorch's
 * AMP recipe: weight_bytes above the activation bytes) are cast for every forward: autocast casts
 * each weight that enters a matrix product once per autocast region (torch.autocast's weight
 * cache lives as long as the region), reading the wide copy and writing the narrow one; the
 * backward casts the weight's gradient back (ToCopyBackward: the same bytes, a widening copy that
 * runs at the cast class's rate, slower than the narrowing one: tests/data/h100-compute/run5).
 * params: the weights of the layer's products on this
 * GPU; redone under full recomputation (the checkpointed forward runs under autocast again).
 * Under ZeRO-3 only the local shard is cast: FSDP's mixed-precision policy and DeepSpeed gather
 * the weights already in the compute type. */
static void add_weight_cast(struct cs_layer_cost *c, const struct cs_plan *p, double params,
                            int recompute) {
  double wb, gb, ob;
  cs_plan_param_bytes(p, &wb, &gb, &ob);
  const double e = cs_plan_act_bytes(p);
  if (p->zero == 3 && p->dp > 1) params /= cs_plan_hybrid_shard(p) ? p->shard : p->dp;
  if (!(wb > e && params > 0)) return;
  add_pass_op(c, "weight_cast", params * (wb + e), CS_OP_FWD_ONLY, recompute);
  add_pass_op(c, "grad_cast", params * (wb + e), CS_OP_BWD_ONLY, 0);
}

/* The activation casts of autocast over a residual stream wider than the compute type (norm_bytes
 * above the activation bytes): each norm's output (LayerNorm runs in fp32 under autocast) is cast
 * to the compute type where it enters a matrix product, and backward widens that product's input
 * gradient again for the norm's backward (a widening copy: the cast class, as grad_cast). Each
 * branch that ends in a product adds its narrow output to the wide stream, so its output
 * gradient arrives wide and autograd narrows it to the product's type (the engine casts a
 * gradient to its input's dtype). n_norm: norm outputs feeding products, n_branch: branches
 * added to the stream, each of x elements. Seen as kernels in
 * tests/data/h100-compute/run5/op_profile.csv: per block two bfloat16_copy calls of T x h forward,
 * and in backward two narrowing and two widening copies of the same size. */
static void add_act_casts(struct cs_layer_cost *c, const struct cs_plan *p, double x, int n_norm,
                          int n_branch, int recompute) {
  const double e = cs_plan_act_bytes(p), en = norm_bytes(p);
  if (!(en > e && x > 0)) return;
  if (n_norm > 0) {
    add_pass_op(c, "act_cast", n_norm * x * (en + e), CS_OP_FWD_ONLY, recompute);
    add_pass_op(c, "act_grad_cast", n_norm * x * (en + e), CS_OP_BWD_ONLY, 0);
  }
  if (n_branch > 0) add_pass_op(c, "branch_grad_cast", n_branch * x * (en + e), CS_OP_BWD_ONLY, 0);
}

static void add_comm(struct cs_layer_cost *c, const struct cs_plan *p, int coll, int group,
                     int phase, int count, double bytes, const char *what) {
  if (count <= 0 || bytes <= 0 || cs_plan_group_size(p, group) <= 1) return;
  if (c->ncomm >= CS_LAYER_MAX_COMM) return;
  c->comm[c->ncomm++] = (struct cs_comm){coll, group, phase, count, bytes, what};
}

/* Data-parallel traffic of the parameters this GPU holds, by ZeRO stage. */
static void add_dp_comm(struct cs_layer_cost *c, const struct cs_plan *p) {
  double wb, gb, ob;
  cs_plan_param_bytes(p, &wb, &gb, &ob);
  const double part[2] = {c->params - c->params_expert, c->params_expert};
  const int group[2] = {CS_GROUP_DP, CS_GROUP_EDP};
  for (int i = 0; i < 2; i++) {
    double n = part[i];
    if (n <= 0) continue;
    if (p->zero == 0) {
      add_comm(c, p, CS_COLL_ALL_REDUCE, group[i], CS_PHASE_GRAD, 1, n * gb, "gradients");
    } else if (p->zero <= 2) {
      add_comm(c, p, CS_COLL_REDUCE_SCATTER, group[i], CS_PHASE_GRAD, 1, n * gb, "gradients");
      add_comm(c, p, CS_COLL_ALL_GATHER, group[i], CS_PHASE_PARAM, 1, n * wb, "updated weights");
    } else {
      add_comm(c, p, CS_COLL_ALL_GATHER, group[i], CS_PHASE_FWD, 1, n * wb, "weights for forward");
      add_comm(c, p, CS_COLL_ALL_GATHER, group[i], CS_PHASE_BWD, 1, n * wb, "weights for backward");
      add_comm(c, p, CS_COLL_REDUCE_SCATTER, group[i], CS_PHASE_BWD, 1, n * gb, "gradients");
      /* hybrid sharding: each shard group's gradient shard all-reduced across the replicas
       * (FSDP2's HSDP: after the reduce-scatter, on its stream) */
      add_comm(c, p, CS_COLL_ALL_REDUCE, CS_GROUP_REPLICA, CS_PHASE_BWD, 1,
               n * gb / cs_plan_group_size(p, group[i]), "gradient shards across replicas");
    }
  }
}

static double norm_params(const struct cs_workload *w) {
  return w->norm == CS_NORM_LAYERNORM ? 2.0 * w->hidden : (double)w->hidden;
}

/* The parameters of one transformer block L into c: those this GPU holds under plan p (params,
 * params_expert of them in experts) and the whole block's (params_full). */
static void block_params(const struct cs_workload *w, const struct cs_plan *p,
                         const struct cs_layer *L, struct cs_layer_cost *c) {
  const double h = w->hidden, a = w->heads, t = p->tp, d = h / a, g = w->kv_heads;
  const double al = a / t, gl = g >= t ? g / t : 1; /* KV heads replicate when fewer than tp */
  const int gated = w->ffn_type == CS_FFN_SWIGLU;
  const double nmat = gated ? 3 : 2;
  double qkv_n = a * d + 2 * g * d, qkv_nl = al * d + 2 * gl * d;
  double attn_full = h * qkv_n + a * d * h + (w->bias ? qkv_n + h : 0);
  double attn_local = h * qkv_nl + al * d * h + (w->bias ? qkv_nl + h : 0);
  double norms = 2 * norm_params(w);
  double f = L->moe ? w->expert_ffn : w->ffn;
  double fc1 = gated ? 2 * f : f;
  double ffn_one = nmat * h * f + (w->bias ? fc1 + h : 0);
  double ffn_one_local = nmat * h * f / t + (w->bias ? fc1 / t + h : 0);
  double E = w->experts;
  if (L->moe) {
    double local_experts = E / p->ep;
    c->params_expert = local_experts * ffn_one_local;
    c->params = attn_local + norms + h * E + c->params_expert;
    c->params_full = attn_full + norms + h * E + E * ffn_one;
  } else {
    c->params = attn_local + norms + ffn_one_local;
    c->params_full = attn_full + norms + ffn_one;
  }
}

/* The collectives of one transformer block L under plan p into c, per micro-batch: tensor- (or
 * sequence-) parallel activations, context-parallel keys and values, expert-parallel tokens and
 * the data-parallel traffic of c->params (set before). */
static void block_comm(const struct cs_workload *w, const struct cs_plan *p,
                       const struct cs_layer *L, struct cs_layer_cost *c) {
  const double b = p->mbs, s = w->seq, sl = s / p->cp, h = w->hidden, a = w->heads;
  const double t = p->tp, d = h / a, g = w->kv_heads;
  const double gl = g >= t ? g / t : 1; /* KV heads replicate when fewer than tp */
  const double T = b * sl, e = cs_plan_act_bytes(p);
  const int sp = p->sp && p->tp > 1;
  const int full = p->recompute == CS_RECOMPUTE_FULL;
  const double k = w->top_k;
  double x = T * h * e;
  if (sp) {
    add_comm(c, p, CS_COLL_ALL_GATHER, CS_GROUP_TP, CS_PHASE_FWD, 2, x, "sequence-parallel gather");
    add_comm(c, p, CS_COLL_REDUCE_SCATTER, CS_GROUP_TP, CS_PHASE_FWD, 2, x,
             "sequence-parallel reduce-scatter");
    add_comm(c, p, CS_COLL_ALL_GATHER, CS_GROUP_TP, CS_PHASE_BWD, full ? 6 : 4, x,
             "sequence-parallel gather (gradients, re-gathered inputs)");
    add_comm(c, p, CS_COLL_REDUCE_SCATTER, CS_GROUP_TP, CS_PHASE_BWD, full ? 4 : 2, x,
             "sequence-parallel reduce-scatter");
  } else {
    add_comm(c, p, CS_COLL_ALL_REDUCE, CS_GROUP_TP, CS_PHASE_FWD, 2, x,
             "attention and FFN outputs");
    add_comm(c, p, CS_COLL_ALL_REDUCE, CS_GROUP_TP, CS_PHASE_BWD, full ? 4 : 2, x,
             "attention and FFN input gradients");
  }
  double kv = b * s * 2 * gl * d * e;
  add_comm(c, p, CS_COLL_ALL_GATHER, CS_GROUP_CP, CS_PHASE_FWD, 1, kv, "keys and values");
  add_comm(c, p, CS_COLL_ALL_GATHER, CS_GROUP_CP, CS_PHASE_BWD, full ? 2 : 1, kv,
           "keys and values");
  add_comm(c, p, CS_COLL_REDUCE_SCATTER, CS_GROUP_CP, CS_PHASE_BWD, 1, kv,
           "key and value gradients");
  if (L->moe) {
    double y = T * k * h * e;
    add_comm(c, p, CS_COLL_ALL_TO_ALL, CS_GROUP_EP, CS_PHASE_FWD, 2, y,
             "token dispatch and combine");
    add_comm(c, p, CS_COLL_ALL_TO_ALL, CS_GROUP_EP, CS_PHASE_BWD, full ? 4 : 2, y,
             "gradient dispatch and combine");
  }
  add_dp_comm(c, p);
}

static void block_cost(const struct cs_workload *w, const struct cs_plan *p,
                       const struct cs_layer *L, struct cs_layer_cost *c) {
  const double b = p->mbs, s = w->seq, sl = s / p->cp, h = w->hidden, a = w->heads;
  const double t = p->tp, d = h / a, g = w->kv_heads;
  const double al = a / t, gl = g >= t ? g / t : 1; /* KV heads replicate when fewer than tp */
  const double T = b * sl, e = cs_plan_act_bytes(p), en = norm_bytes(p);
  const int sp = p->sp && p->tp > 1;
  const double tsp = sp ? t : 1;
  const int gated = w->ffn_type == CS_FFN_SWIGLU, drop = w->dropout, flash = w->flash_attention;
  const int full = p->recompute == CS_RECOMPUTE_FULL;
  const int sel = p->recompute == CS_RECOMPUTE_SELECTIVE;

  /* parameters */
  block_params(w, p, L, c);
  double qkv_nl = al * d + 2 * gl * d;
  double f = L->moe ? w->expert_ffn : w->ffn;
  double fc1 = gated ? 2 * f : f;
  double E = w->experts, k = w->top_k;

  /* forward kernels */
  add_weight_cast(c, p, c->params, full);
  add_op(c, "norm1", CS_OP_MEMORY, 0, 0, 0, 1, 2 * T * h * e / tsp, full);
  add_op(c, "qkv", CS_OP_GEMM, T, qkv_nl, h, 1, 0, full);
  double core_flops = 4 * b * al * sl * s * d;
  if (flash) {
    add_op(c, "attention", CS_OP_GEMM, sl, s, d, b * al, T * (2 * al * d + 2 * gl * d) * e, full);
    c->op[c->nops - 1].flops = core_flops;
    c->op[c->nops - 1].attention = 1;
    c->op[c->nops - 1].fused = 1;
    c->op[c->nops - 1].causal = w->type == CS_WL_DECODER;
  } else {
    add_op(c, "scores", CS_OP_GEMM, sl, s, d, b * al, 0, full || sel);
    c->op[c->nops - 1].attention = 1;
    add_op(c, "softmax", CS_OP_MEMORY, 0, 0, 0, 1,
           b * al * sl * s * (2 * e + (drop ? 2 * e + 1 : 0)), full || sel);
    add_op(c, "context", CS_OP_GEMM, sl, d, s, b * al, 0, full || sel);
    c->op[c->nops - 1].attention = 1;
    if (w->attention_code == CS_ATTN_CODE_MEGATRON_V1) {
      /* mpu/transformer.py (DeepSpeedExamples a79272c, lines 127-133): the scores are divided
       * by sqrt(d), multiplied by the causal mask and reduced by 10000 (1 - mask) before the
       * softmax, three passes that each read and write them; backward, the product and the
       * division each pass the gradient once more (the subtrahend needs none) */
      const double n_sc = b * al * sl * s; /* score elements */
      add_pass_op(c, "score_mask", 3 * 2 * e * n_sc, CS_OP_FWD_ONLY, full || sel);
      add_pass_op(c, "score_mask_grad", 2 * 2 * e * n_sc, CS_OP_BWD_ONLY, 0);
    }
  }
  add_op(c, "proj", CS_OP_GEMM, T, h, al * d, 1, 0, full);
  add_op(c, "residual1", CS_OP_MEMORY, 0, 0, 0, 1, T * h * (3 * e + (drop ? 1 : 0)) / tsp, full);
  add_op(c, "norm2", CS_OP_MEMORY, 0, 0, 0, 1, 2 * T * h * e / tsp, full);
  if (L->moe) {
    double tok = T * k, per_expert = tok * p->ep / E;
    add_op(c, "router", CS_OP_GEMM, T, E, h, 1, 0, full);
    add_op(c, "permute", CS_OP_MEMORY, 0, 0, 0, 1, 2 * tok * h * e, full);
    add_op(c, "expert_fc1", CS_OP_GEMM, per_expert, fc1 / t, h, E / p->ep, 0, full);
    add_op(c, gated ? "swiglu" : "gelu", CS_OP_MEMORY, 0, 0, 0, 1, tok * (fc1 + f) / t * e, full);
    add_op(c, "expert_fc2", CS_OP_GEMM, per_expert, h, f / t, E / p->ep, 0, full);
    add_op(c, "unpermute", CS_OP_MEMORY, 0, 0, 0, 1, 2 * tok * h * e, full);
  } else {
    add_op(c, "fc1", CS_OP_GEMM, T, fc1 / t, h, 1, 0, full);
    add_op(c, gated ? "swiglu" : "gelu", CS_OP_MEMORY, 0, 0, 0, 1, T * (fc1 + f) / t * e, full);
    add_op(c, "fc2", CS_OP_GEMM, T, h, f / t, 1, 0, full);
  }
  add_op(c, "residual2", CS_OP_MEMORY, 0, 0, 0, 1, T * h * (3 * e + (drop ? 1 : 0)) / tsp, full);
  add_act_casts(c, p, T * h / tsp, 2, 2, full);
  /* what autograd adds to an eager backward (tests/data/h100-compute/run5/op_profile.csv): the
   * query, key and value gradients concatenated into the fused projection's output gradient
   * (the backward of splitting that output: reads the three, writes one), and with biases each
   * bias gradient, the output gradient summed over this GPU's tokens (the row-parallel outputs
   * over T/tp under sequence parallelism) */
  add_pass_op(c, "qkv_grad_cat", 2 * T * qkv_nl * e, CS_OP_BWD_ONLY, 0);
  if (w->bias) {
    double col = qkv_nl + (L->moe ? 0 : fc1 / t), row = L->moe ? h : 2 * h;
    add_pass_op(c, "bias_grad", T * col * e + T / tsp * row * e, CS_OP_BWD_ONLY, 0);
  }
  for (size_t i = 0; i < c->nops; i++)
    c->fwd_flops += c->op[i].flops;
  c->bwd_flops = 2 * c->fwd_flops;
  c->recompute_flops = full ? c->fwd_flops : sel && !flash ? core_flops : 0;
  if (flash) c->recompute_flops += core_flops / 2; /* its backward recomputes the scores */

  /* saved activations, per token of this GPU's share */
  double keep = 2 * en * h / tsp            /* the two norm inputs */
                + e * h / tsp               /* QKV input */
                + e * al * d                /* Q */
                + 2 * e * gl * d            /* K, V */
                + e * al * d                /* projection input (attention output) */
                + e * h / tsp               /* FFN input */
                + (drop ? 2 * h / tsp : 0); /* attention and FFN dropout masks */
  if (L->moe)
    keep += 4 * E + k * (e * h + e * (fc1 + f) / t); /* router logits; routed tokens */
  else
    keep += e * (fc1 + f) / t;
  double core = flash ? 4 * al : e * al * s + (drop ? (1 + e) * al * s : 0);
  if (full)
    c->act_bytes = T * e * h / tsp;
  else if (sel)
    c->act_bytes = T * (keep + (flash ? core : 0));
  else
    c->act_bytes = T * (keep + core);
  c->out_bytes = T * h * e / tsp;

  /* collectives */
  block_comm(w, p, L, c);
}

static void embedding_cost(const struct cs_workload *w, const struct cs_plan *p,
                           struct cs_layer_cost *c) {
  const double b = p->mbs, sl = (double)w->seq / p->cp, h = w->hidden, t = p->tp;
  const double T = b * sl, e = cs_plan_act_bytes(p), V = w->vocab;
  const int sp = p->sp && p->tp > 1;
  const double tsp = sp ? t : 1;
  double other =
      (double)(w->max_positions + w->type_vocab) * h + (w->embedding_norm ? norm_params(w) : 0);
  c->params_full = V * h + other;
  c->params = V * h / t + other;
  add_op(c, "lookup", CS_OP_MEMORY, 0, 0, 0, 1, (w->max_positions ? 3 : 1) * T * h * e, 0);
  if (w->embedding_norm) add_op(c, "norm", CS_OP_MEMORY, 0, 0, 0, 1, 2 * T * h * e / tsp, 0);
  c->act_bytes = T * ((w->dropout ? h / tsp : 0) + (w->embedding_norm ? e * h / tsp : 0));
  c->out_bytes = T * h * e / tsp;
  /* a vocabulary-parallel lookup sums the partial embeddings across tp */
  add_comm(c, p, sp ? CS_COLL_REDUCE_SCATTER : CS_COLL_ALL_REDUCE, CS_GROUP_TP, CS_PHASE_FWD, 1,
           T * h * e, "embedding output");
  double wb, gb, ob;
  cs_plan_param_bytes(p, &wb, &gb, &ob);
  if (w->tied_embeddings)
    add_comm(c, p, CS_COLL_ALL_REDUCE, CS_GROUP_EMBED, CS_PHASE_GRAD, 1, V * h / t * gb,
             "tied embedding gradients (first and last stage)");
  add_dp_comm(c, p);
}

static void head_cost(const struct cs_workload *w, const struct cs_plan *p,
                      struct cs_layer_cost *c) {
  const double b = p->mbs, sl = (double)w->seq / p->cp, h = w->hidden, t = p->tp;
  const double T = b * sl, e = cs_plan_act_bytes(p), V = w->vocab;
  const int sp = p->sp && p->tp > 1;
  const double tsp = sp ? t : 1;
  const int enc = w->type == CS_WL_ENCODER;
  /* the encoder's pre-training head: MLM transform (dense + norm), output bias, pooler, NSP */
  double extra = enc ? (h * h + h) + norm_params(w) + V + (h * h + h) + (2 * h + 2) : 0;
  double out_w = V * h;
  c->params_full = norm_params(w) + (w->tied_embeddings ? 0 : out_w) + extra;
  /* with tied embeddings and a pipeline, the last stage keeps its own copy of the matrix */
  int holds = !w->tied_embeddings || p->pp > 1;
  c->params = norm_params(w) + (holds ? out_w / t : 0) + (enc ? extra - V + V / t : 0);
  add_op(c, "final_norm", CS_OP_MEMORY, 0, 0, 0, 1, 2 * T * h * e / tsp, 0);
  if (enc) {
    add_op(c, "mlm_dense", CS_OP_GEMM, T, h, h, 1, 0, 0);
    add_op(c, "mlm_norm", CS_OP_MEMORY, 0, 0, 0, 1, 4 * T * h * e, 0);
    add_op(c, "pooler", CS_OP_GEMM, b, h, h, 1, 0, 0);
    add_op(c, "nsp", CS_OP_GEMM, b, 2, h, 1, 0, 0);
  }
  add_weight_cast(c, p, out_w / t, 0);
  add_act_casts(c, p, T * h / tsp, 1, 0, 0);
  add_op(c, "logits", CS_OP_GEMM, T, V / t, h, 1, 0, 0);
  if (w->loss_code == CS_LOSS_CODE_MEGATRON_V1) {
    /* pretrain_gpt2.py passes output.float() to mpu/cross_entropy.py (DeepSpeedExamples
     * a79272c): forward the widening copy (e + 4 bytes per logit), clone (8), max (4), subtract
     * in place (8), exp (8), sum (4) and the softmax's division in place (8); backward the
     * product with the incoming gradient in place (8) and the copy back to the logits' type
     * (4 + e) */
    add_pass_op(c, "cross_entropy", (e + 44) * T * V / t, CS_OP_FWD_ONLY, 0);
    add_pass_op(c, "cross_entropy", (e + 12) * T * V / t, CS_OP_BWD_ONLY, 0);
  } else {
    add_op(c, "cross_entropy", CS_OP_MEMORY, 0, 0, 0, 1, 3 * 4 * T * V / t, 0);
  }
  for (size_t i = 0; i < c->nops; i++)
    c->fwd_flops += c->op[i].flops;
  c->bwd_flops = 2 * c->fwd_flops;
  c->act_bytes = T * (norm_bytes(p) * h / tsp + e * h + 4 * V / t + (enc ? 3 * e * h : 0));
  c->out_bytes = 0;
  double x = T * h * e;
  if (sp) {
    add_comm(c, p, CS_COLL_ALL_GATHER, CS_GROUP_TP, CS_PHASE_FWD, 1, x, "final norm output");
    add_comm(c, p, CS_COLL_REDUCE_SCATTER, CS_GROUP_TP, CS_PHASE_BWD, 1, x, "its gradient");
  } else {
    add_comm(c, p, CS_COLL_ALL_REDUCE, CS_GROUP_TP, CS_PHASE_BWD, 1, x, "logits input gradient");
  }
  add_comm(c, p, CS_COLL_ALL_REDUCE, CS_GROUP_TP, CS_PHASE_FWD, 3, T * 4,
           "vocabulary-parallel cross-entropy (max, sum, target)");
  double wb, gb, ob;
  cs_plan_param_bytes(p, &wb, &gb, &ob);
  if (w->tied_embeddings)
    add_comm(c, p, CS_COLL_ALL_REDUCE, CS_GROUP_EMBED, CS_PHASE_GRAD, 1, out_w / t * gb,
             "tied embedding gradients (first and last stage)");
  add_dp_comm(c, p);
}

static int conv_out(const struct cs_layer *L) {
  return (L->in_size + L->stride - 1) / L->stride;
}

static void list_cost(const struct cs_workload *w, const struct cs_plan *p,
                      const struct cs_layer *L, struct cs_layer_cost *c) {
  (void)w;
  const double b = p->mbs, e = cs_plan_act_bytes(p);
  c->params = c->params_full = L->params;
  switch (L->type) {
  case CS_LAYER_CONV: {
    double o = conv_out(L), in = L->in_size;
    add_op(c, "conv", CS_OP_GEMM, b * o * o, L->cout, (double)L->cin * L->kernel * L->kernel, 1, 0,
           0);
    if (L->bn) add_op(c, "bn_relu", CS_OP_MEMORY, 0, 0, 0, 1, 4 * b * L->cout * o * o * e, 0);
    /* the output before and after batch norm + ReLU; the input is the previous layer's output,
     * already counted there (only a first layer adds it) */
    c->act_bytes =
        b * e * ((L->bn ? 2 : 1) * L->cout * o * o + (L->cin <= 4 ? L->cin * in * in : 0));
    c->out_bytes = b * e * L->cout * o * o;
    break;
  }
  case CS_LAYER_LINEAR:
    add_op(c, "linear", CS_OP_GEMM, b * L->tokens, L->cout, L->cin, 1, 0, 0);
    c->act_bytes = b * e * L->tokens * L->cin;
    c->out_bytes = b * e * L->tokens * L->cout;
    break;
  case CS_LAYER_POOL: {
    double o = conv_out(L), in = L->in_size;
    add_op(c, "pool", CS_OP_MEMORY, 0, 0, 0, 1, b * e * L->cin * (in * in + o * o), 0);
    c->act_bytes = b * e * L->cin * o * o; /* its output (ReLU mask, pooling indices) */
    c->out_bytes = b * e * L->cin * o * o;
    break;
  }
  default: /* generic: an opaque GEMM-like kernel at full efficiency, plus its traffic */
    if (L->fwd_flops > 0) {
      add_op(c, "compute", CS_OP_GEMM, 0, 0, 0, 1, b * L->io_bytes, 0);
      c->op[c->nops - 1].flops = b * L->fwd_flops;
    } else {
      add_op(c, "memory", CS_OP_MEMORY, 0, 0, 0, 1, b * L->io_bytes, 0);
    }
    c->act_bytes = b * L->act_bytes;
    c->out_bytes = 0;
    break;
  }
  for (size_t i = 0; i < c->nops; i++)
    c->fwd_flops += c->op[i].flops;
  c->bwd_flops =
      L->type == CS_LAYER_GENERIC && L->bwd_flops > 0 ? b * L->bwd_flops : 2 * c->fwd_flops;
  if (p->recompute == CS_RECOMPUTE_FULL) {
    c->recompute_flops = c->fwd_flops;
    for (size_t i = 0; i < c->nops; i++)
      c->op_recompute[i] = 1;
  }
  add_dp_comm(c, p);
}

static void layer_cost(const struct cs_workload *w, const struct cs_plan *p, size_t i,
                       struct cs_layer_cost *c) {
  memset(c, 0, sizeof *c);
  const struct cs_layer *L = &w->layer[i];
  switch (L->type) {
  case CS_LAYER_BLOCK:
    block_cost(w, p, L, c);
    break;
  case CS_LAYER_EMBEDDING:
    embedding_cost(w, p, c);
    break;
  case CS_LAYER_HEAD:
    head_cost(w, p, c);
    break;
  default:
    list_cost(w, p, L, c);
    break;
  }
}

/* The plan under which a layer's figures are its architecture-level ones: one sample, one GPU.
 * Fails only when out of memory. */
static enum cs_status unit_plan(struct cs_plan *u, int recompute, struct cs_error *err) {
  enum cs_status st = cs_plan_parse(NULL, u, err);
  u->recompute = recompute;
  return st;
}

enum cs_status cs_workload_layer_cost(const struct cs_workload *w, const struct cs_plan *p,
                                      size_t i, struct cs_layer_cost *c, struct cs_error *err) {
  if (i >= w->nlayer)
    return cs_error_set(err, CS_ERR_RANGE, "%s has %zu layers; layer %zu does not exist", w->name,
                        w->nlayer, i);
  enum cs_status st = cs_workload_check_plan(w, p, err);
  if (st != CS_OK) return st;
  layer_cost(w, p, i, c);
  return CS_OK;
}

enum cs_status cs_workload_step_flops(const struct cs_workload *w, const struct cs_plan *p,
                                      double *model_flops, double *hw_flops, struct cs_error *err) {
  enum cs_status st = cs_workload_check_plan(w, p, err);
  if (st != CS_OK) return st;
  struct cs_plan u;
  st = unit_plan(&u, p->recompute, err);
  if (st != CS_OK) return st;
  double samples = p->gbs ? p->gbs : (double)p->mbs * p->dp;
  double model = 0, hw = 0;
  struct cs_layer_cost c;
  for (size_t i = 0; i < w->nlayer; i++) {
    /* a layer like the one before it but for its name (a transformer's blocks) costs what it
     * did: the cost reads every field after the name, never the name */
    const size_t from = offsetof(struct cs_layer, type);
    if (i == 0 || memcmp((const char *)&w->layer[i] + from, (const char *)&w->layer[i - 1] + from,
                         sizeof w->layer[i] - from) != 0)
      layer_cost(w, &u, i, &c);
    model += c.fwd_flops + c.bwd_flops;
    hw += c.fwd_flops + c.bwd_flops + c.recompute_flops;
  }
  if (model_flops) *model_flops = model * samples;
  if (hw_flops) *hw_flops = hw * samples;
  return CS_OK;
}

double cs_workload_params(const struct cs_workload *w) {
  double n = 0;
  for (size_t i = 0; i < w->nlayer; i++)
    n += w->layer[i].params;
  return n;
}

double cs_workload_active_params(const struct cs_workload *w) {
  double n = cs_workload_params(w);
  if (w->experts == 0) return n;
  double gated = w->ffn_type == CS_FFN_SWIGLU;
  double f = w->expert_ffn, h = w->hidden;
  double one = (gated ? 3 : 2) * h * f + (w->bias ? (gated ? 2 * f : f) + h : 0);
  for (size_t i = 0; i < w->nlayer; i++)
    if (w->layer[i].moe) n -= (w->experts - w->top_k) * one;
  return n;
}

size_t cs_workload_blocks(const struct cs_workload *w) {
  return cs_workload_is_transformer(w) ? (size_t)w->layers : w->nlayer;
}

int cs_workload_layer_chunk(const struct cs_workload *w, const struct cs_plan *p, size_t i) {
  long chunks = (long)p->pp * p->vpp;
  if (i >= w->nlayer) return 0;
  if (!cs_workload_is_transformer(w)) return (int)((long)i * chunks / (long)w->nlayer);
  if (w->layer[i].type == CS_LAYER_EMBEDDING) return 0;
  if (w->layer[i].type == CS_LAYER_HEAD) return (int)(chunks - 1);
  long per = w->layers / chunks;
  if (per < 1) per = 1;
  long c = ((long)i - 1) / per;
  return (int)(c < chunks ? c : chunks - 1);
}

int cs_workload_layer_stage(const struct cs_workload *w, const struct cs_plan *p, size_t i) {
  return cs_workload_layer_chunk(w, p, i) % p->pp;
}

/* ---- loading --------------------------------------------------------------------------------- */

/* Checks a transformer architecture; on failure names the offending key and what is wrong. */
static int check_arch(const struct cs_workload *w, const char **key, char *msg, size_t len) {
#define BAD(k, ...)                                                                                \
  do {                                                                                             \
    *key = k;                                                                                      \
    snprintf(msg, len, __VA_ARGS__);                                                               \
    return -1;                                                                                     \
  } while (0)
  if (w->layers < 1) BAD("layers", "a transformer needs layers >= 1");
  if (w->hidden < 1) BAD("hidden", "a transformer needs hidden >= 1");
  if (w->heads < 1) BAD("heads", "a transformer needs heads >= 1");
  if (w->vocab < 1) BAD("vocab", "a transformer needs vocab >= 1");
  if (w->seq < 1) BAD("seq", "a transformer needs seq >= 1");
  if (w->hidden % w->heads != 0)
    BAD("heads", "hidden %d is not divisible by heads %d", w->hidden, w->heads);
  if (w->heads % w->kv_heads != 0)
    BAD("kv_heads", "heads %d is not divisible by kv_heads %d", w->heads, w->kv_heads);
  if (w->max_positions > 0 && w->seq > w->max_positions)
    BAD("seq", "seq %d exceeds max_positions %d", w->seq, w->max_positions);
  if (w->experts > 0 && (w->top_k < 1 || w->top_k > w->experts))
    BAD("top_k", "top_k must be from 1 to experts (%d), got %d", w->experts, w->top_k);
  if (w->experts == 0 && w->top_k > 0) BAD("top_k", "top_k is set but experts is 0");
  return 0;
#undef BAD
}

/* Expands a transformer's architecture into embedding, blocks and head. */
static enum cs_status expand_transformer(struct cs_workload *w, struct cs_error *err) {
  size_t n = (size_t)w->layers + 2;
  struct cs_layer *L = calloc(n, sizeof *L);
  if (L == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory expanding %s", w->name);
  snprintf(L[0].name, sizeof L[0].name, "embedding");
  L[0].type = CS_LAYER_EMBEDDING;
  for (int j = 0; j < w->layers; j++) {
    snprintf(L[j + 1].name, sizeof L[j + 1].name, "block%d", j + 1);
    L[j + 1].type = CS_LAYER_BLOCK;
    L[j + 1].moe = w->experts > 0 && (j + 1) % w->moe_every == 0;
  }
  snprintf(L[n - 1].name, sizeof L[n - 1].name, "head");
  L[n - 1].type = CS_LAYER_HEAD;
  free(w->layer);
  w->layer = L;
  w->nlayer = n;
  struct cs_plan u;
  enum cs_status st = unit_plan(&u, CS_RECOMPUTE_NONE, err);
  if (st != CS_OK) return st;
  struct cs_layer_cost c;
  for (size_t i = 0; i < n; i++) {
    layer_cost(w, &u, i, &c);
    L[i].params = c.params_full;
    L[i].fwd_flops = c.fwd_flops;
    L[i].bwd_flops = c.bwd_flops;
    L[i].act_bytes = c.act_bytes;
  }
  return CS_OK;
}

static void fill_defaults(struct cs_workload *w) {
  if (w->kv_heads == 0) w->kv_heads = w->heads;
  if (w->ffn == 0) w->ffn = 4 * w->hidden;
  if (w->experts > 0 && w->expert_ffn == 0) w->expert_ffn = w->ffn;
  if (w->sample[0] == '\0')
    snprintf(w->sample, sizeof w->sample, "%s", w->type == CS_WL_LAYERS ? "image" : "sequence");
}

static enum cs_status read_layer_list(const struct cs_yaml *d, int root, struct cs_workload *w,
                                      struct cs_error *err) {
  int list = cs_yaml_get(d, root, "layer_list");
  if (list == 0)
    return cs_yaml_error(d, root, err, CS_ERR_PARSE,
                         "missing required key \"layer_list\" (the layers of a type: layers "
                         "workload)");
  if (cs_yaml_kind(d, list) != CS_YAML_SEQ || cs_yaml_len(d, list) == 0)
    return cs_yaml_error(d, list, err, CS_ERR_PARSE, "expected a non-empty list of layers");
  size_t n = 0, len = cs_yaml_len(d, list);
  struct spec *sp = calloc(len, sizeof *sp);
  if (sp == NULL)
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory reading %s", cs_yaml_path(d));
  enum cs_status st = CS_OK;
  for (size_t i = 0; i < len && st == CS_OK; i++) {
    int item = cs_yaml_item(d, list, i);
    st = cs_cfg_read(d, item, spec_fields, NSPEC, &sp[i], NULL, err);
    if (st != CS_OK) break;
    struct spec *s = &sp[i];
    const char *need = NULL;
    if (s->type == 0 && (s->cin < 1 || s->cout < 1 || s->in_size < 1))
      need = "a conv layer needs cin, cout and in_size";
    else if (s->type == 1 && (s->cin < 1 || s->cout < 1))
      need = "a linear layer needs cin and cout";
    else if (s->type == 2 && (s->cin < 1 || s->in_size < 1))
      need = "a pool layer needs cin (channels) and in_size";
    if (need) st = cs_yaml_error(d, item, err, CS_ERR_PARSE, "%s", need);
    n += (size_t)s->repeat;
  }
  if (st == CS_OK && n > 1000000)
    st = cs_yaml_error(d, list, err, CS_ERR_RANGE, "more than 1000000 layers after repeat");
  struct cs_layer *L = st == CS_OK ? calloc(n, sizeof *L) : NULL;
  if (st == CS_OK && L == NULL)
    st = cs_error_set(err, CS_ERR_NOMEM, "out of memory reading %s", cs_yaml_path(d));
  if (st != CS_OK) {
    free(sp);
    return st;
  }
  size_t k = 0;
  static const int type_of[] = {CS_LAYER_CONV, CS_LAYER_LINEAR, CS_LAYER_POOL, CS_LAYER_GENERIC};
  for (size_t i = 0; i < len; i++) {
    const struct spec *s = &sp[i];
    for (int r = 0; r < s->repeat; r++, k++) {
      struct cs_layer *l = &L[k];
      if (s->repeat > 1)
        snprintf(l->name, sizeof l->name, "%.20s.%d", s->name, (r + 1) % 1000000);
      else
        snprintf(l->name, sizeof l->name, "%s", s->name);
      l->type = type_of[s->type];
      l->cin = s->cin, l->cout = s->cout, l->kernel = s->kernel, l->stride = s->stride;
      l->in_size = s->in_size, l->tokens = s->tokens, l->bias = s->bias, l->bn = s->bn;
      double kk = (double)s->kernel * s->kernel;
      switch (l->type) {
      case CS_LAYER_CONV: {
        double o = conv_out(l);
        l->params = kk * s->cin * s->cout + (s->bias ? s->cout : 0) + (s->bn ? 2.0 * s->cout : 0);
        l->fwd_flops = 2 * kk * s->cin * s->cout * o * o;
        break;
      }
      case CS_LAYER_LINEAR:
        l->params = (double)s->cin * s->cout + (s->bias ? s->cout : 0);
        l->fwd_flops = 2.0 * s->tokens * s->cin * s->cout;
        break;
      case CS_LAYER_POOL: {
        double o = conv_out(l);
        l->io_bytes = 2.0 * s->cin * ((double)s->in_size * s->in_size + o * o);
        break;
      }
      default:
        l->params = s->params;
        l->fwd_flops = s->fwd_flops;
        l->act_bytes = s->act;
        l->io_bytes = s->io;
        break;
      }
      l->bwd_flops =
          l->type == CS_LAYER_GENERIC && s->bwd_flops > 0 ? s->bwd_flops : 2 * l->fwd_flops;
    }
  }
  free(sp);
  w->layer = L;
  w->nlayer = n;
  return CS_OK;
}

static enum cs_status read_doc(const struct cs_yaml *d, struct cs_workload **out,
                               struct cs_error *err) {
  struct cs_workload *w = calloc(1, sizeof *w);
  if (w == NULL)
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory reading %s", cs_yaml_path(d));
  int root = cs_yaml_root(d);
  static const char *const extra[] = {"layer_list", NULL};
  enum cs_status st = cs_cfg_read(d, root, wl_fields, NWL, w, extra, err);
  if (st == CS_OK) {
    fill_defaults(w);
    if (w->type == CS_WL_LAYERS) {
      static const char *const arch[] = {"layers", "hidden", "heads",   "kv_heads", "ffn",
                                         "vocab",  "seq",    "experts", NULL};
      for (int i = 0; arch[i] && st == CS_OK; i++) {
        int node = cs_yaml_get(d, root, arch[i]);
        if (node)
          st = cs_yaml_error(d, node, err, CS_ERR_PARSE,
                             "\"%s\" belongs to transformers; a type: layers workload lists its "
                             "layers in layer_list",
                             arch[i]);
      }
      if (st == CS_OK) st = read_layer_list(d, root, w, err);
    } else {
      int node = cs_yaml_get(d, root, "layer_list");
      const char *key = NULL;
      char msg[256];
      if (node)
        st = cs_yaml_error(d, node, err, CS_ERR_PARSE,
                           "layer_list belongs to type: layers workloads");
      else if (check_arch(w, &key, msg, sizeof msg) != 0) {
        int kn = cs_yaml_get(d, root, key);
        st = cs_yaml_error(d, kn ? kn : root, err, kn ? CS_ERR_RANGE : CS_ERR_PARSE, "%s", msg);
      } else {
        st = expand_transformer(w, err);
      }
    }
  }
  if (st != CS_OK) {
    cs_workload_free(w);
    return st;
  }
  *out = w;
  return CS_OK;
}

enum cs_status cs_workload_load(const char *path, struct cs_workload **w, struct cs_error *err) {
  struct cs_yaml *d = NULL;
  enum cs_status st = cs_yaml_load(path, &d, err);
  if (st == CS_OK) st = read_doc(d, w, err);
  cs_yaml_free(d);
  return st;
}

enum cs_status cs_workload_load_string(const char *text, const char *name, struct cs_workload **w,
                                       struct cs_error *err) {
  struct cs_yaml *d = NULL;
  enum cs_status st = cs_yaml_load_string(text, name, &d, err);
  if (st == CS_OK) st = read_doc(d, w, err);
  cs_yaml_free(d);
  return st;
}

void cs_workload_free(struct cs_workload *w) {
  if (w == NULL) return;
  free(w->layer);
  free(w);
}

enum cs_status cs_workload_set(struct cs_workload *w, const char *assignment,
                               struct cs_error *err) {
  if (!cs_workload_is_transformer(w))
    return cs_error_set(err, CS_ERR_USAGE,
                        "%s is a layer list; only transformer architectures take key=value "
                        "overrides",
                        w->name);
  if (strncmp(assignment, "type=", 5) == 0 || strncmp(assignment, "version=", 8) == 0)
    return cs_error_set(err, CS_ERR_USAGE, "\"%s\": type and version cannot be overridden",
                        assignment);
  struct cs_workload tmp = *w;
  tmp.layer = NULL;
  tmp.nlayer = 0;
  enum cs_status st = cs_cfg_assign(wl_fields, NWL, &tmp, assignment, err);
  if (st != CS_OK) return st;
  fill_defaults(&tmp);
  const char *key;
  char msg[256];
  if (check_arch(&tmp, &key, msg, sizeof msg) != 0)
    return cs_error_set(err, CS_ERR_USAGE, "\"%s\": %s", assignment, msg);
  st = expand_transformer(&tmp, err);
  if (st != CS_OK) return st;
  free(w->layer);
  *w = tmp;
  return CS_OK;
}
