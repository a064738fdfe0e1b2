/* compute.c — roofline kernel times with a shape-dependent GEMM efficiency; see compute.h. */
#include "compute.h"

#include <math.h>
#include <string.h>

enum cs_status cs_compute_init(struct cs_compute *c, const struct cs_gpu *g, int prec,
                               struct cs_error *err) {
  memset(c, 0, sizeof *c);
  c->gpu = *g;
  c->precision = prec;
  c->peak = cs_gpu_peak(g, prec);
  if (!(c->peak > 0))
    return cs_error_set(err, CS_ERR_UNSUPPORTED,
                        "%s has no %s tensor cores (its peak is not given)", g->name,
                        cs_precision_name(prec));
  c->peak_attn = c->peak;
  if (prec == CS_PREC_FP8) {
    c->peak_attn = g->peak_bf16 > 0 ? g->peak_bf16 : g->peak_fp16;
    if (!(c->peak_attn > 0)) c->peak_attn = c->peak;
  }
  c->elem_bytes = prec == CS_PREC_FP32 || prec == CS_PREC_TF32 ? 4 : prec == CS_PREC_FP8 ? 1 : 2;
  const double cls[CS_MEM_CLASS_COUNT] = {
      g->mem_efficiency,     g->norm_efficiency, g->act_efficiency,   g->residual_efficiency,
      g->softmax_efficiency, g->xent_efficiency, g->optim_efficiency, g->gather_efficiency,
      g->reduce_efficiency,  g->cast_efficiency};
  for (int i = 0; i < CS_MEM_CLASS_COUNT; i++)
    c->mem_bw[i] = g->hbm_bw * (cls[i] > 0 ? cls[i] : g->mem_efficiency);
  c->kernel_overhead = g->kernel_overhead;
  c->host_layer = g->host_layer_time;
  c->host_fwd_share = g->host_fwd_share;
  c->band_rel = CS_COMPUTE_BAND_REL;
  c->band_fw = CS_COMPUTE_BAND_FW;
  c->band_host = CS_COMPUTE_BAND_HOST;
  c->scale = 1;
  return CS_OK;
}

enum cs_mem_class cs_mem_class_of(const char *n) {
  if (n == NULL) return CS_MEM_COPY;
  if (strstr(n, "norm") && strcmp(n, "bn_relu") != 0) return CS_MEM_NORM;
  if (strcmp(n, "gelu") == 0 || strcmp(n, "swiglu") == 0) return CS_MEM_ACT;
  if (strncmp(n, "residual", 8) == 0) return CS_MEM_RESIDUAL;
  if (strcmp(n, "softmax") == 0) return CS_MEM_SOFTMAX;
  if (strcmp(n, "cross_entropy") == 0) return CS_MEM_XENT;
  if (strcmp(n, "optimizer") == 0) return CS_MEM_OPTIM;
  if (strcmp(n, "qkv_grad_cat") == 0) return CS_MEM_GATHER;
  if (strcmp(n, "bias_grad") == 0) return CS_MEM_REDUCE;
  if (strcmp(n, "grad_cast") == 0 || strcmp(n, "act_grad_cast") == 0) return CS_MEM_CAST;
  return CS_MEM_COPY;
}

void cs_compute_set_attn_table(struct cs_compute *c, const struct cs_attn_point *pts, size_t n) {
  c->attn = n ? pts : NULL;
  c->nattn = n;
}

double cs_compute_host_time(const struct cs_compute *c, double layers) {
  return c->host_layer > 0 && layers > 0 ? c->host_layer * layers : 0;
}

void cs_compute_set_gemm_table(struct cs_compute *c, const struct cs_gemm_point *pts, size_t n) {
  c->table = n ? pts : NULL;
  c->ntable = n;
}

static double lg(double x) {
  return log(x > 1 ? x : 1);
}

double cs_compute_gemm_efficiency(const struct cs_compute *c, double m, double n, double k) {
  if (m <= 0 || n <= 0 || k <= 0) return c->gpu.gemm_efficiency;
  if (c->table) {
    double best = INFINITY, eff = c->gpu.gemm_efficiency;
    for (size_t i = 0; i < c->ntable; i++) {
      const struct cs_gemm_point *q = &c->table[i];
      double dm = lg(m) - lg(q->m), dn = lg(n) - lg(q->n), dk = lg(k) - lg(q->k);
      double dist = dm * dm + dn * dn + dk * dk;
      if (dist < best) best = dist, eff = q->efficiency;
    }
    return eff;
  }
  double x = fmin(m, fmin(n, k));
  return c->gpu.gemm_efficiency * x / (x + c->gpu.gemm_half_dim);
}

/* The head dimension a FlashAttention-2 kernel runs at: its kernels are built for multiples of
 * 32 up to 192 and for 256, and a head is padded up to the next (flash_api.cpp, mha_fwd:
 * head_size_rounded = head_size <= 192 ? round_multiple(head_size, 32) : 256). The H100 and H200
 * probes show it: head dimension 80 runs at 80/96 of the rate of 96 (the H100 and H200
 * torch_probes.csv under tests/data). */
double cs_compute_attn_padded_dim(double d) {
  return d <= 192 ? 32 * ceil(d / 32) : 256;
}

double cs_compute_attn_efficiency(const struct cs_compute *c, double s, double d, double bh,
                                  int backward) {
  if (c->attn) {
    double best = INFINITY, eff = 0;
    for (size_t i = 0; i < c->nattn; i++) {
      const struct cs_attn_point *q = &c->attn[i];
      double ds = lg(s) - lg(q->s), dd = lg(d) - lg(q->d), db = lg(bh) - lg(q->bh);
      /* the head dimension picks the kernel: weigh it above the sizes */
      double dist = ds * ds + 4 * dd * dd + db * db;
      if (dist < best) best = dist, eff = backward ? q->eff_bwd : q->eff_fwd;
    }
    if (eff > 0) return eff;
  }
  const struct cs_gpu *g = &c->gpu;
  /* the curve in the padded dimension, times the share of the padded work that is the head's */
  const double dp = cs_compute_attn_padded_dim(d);
  double e =
      g->attn_efficiency * dp / (dp + g->attn_half_dim) * s / (s + g->attn_half_seq) * d / dp;
  return backward ? e * 2.5 / g->attn_bwd_factor : e;
}

static double gemm_time(const struct cs_compute *c, const struct cs_op *op, double m, double n,
                        double k, double flops) {
  double peak = op->attention ? c->peak_attn : c->peak;
  double eff = cs_compute_gemm_efficiency(c, m, n, k);
  /* fp8 linears on the curve's shape at the fp8 fraction (attention stays 16-bit; a probe table
   * holds the plan's precision already) */
  const struct cs_gpu *g = &c->gpu;
  if (c->precision == CS_PREC_FP8 && !op->attention && !c->table && g->gemm_efficiency_fp8 > 0)
    eff *= g->gemm_efficiency_fp8 / g->gemm_efficiency;
  double bytes = op->bytes > 0 ? op->bytes : c->elem_bytes * (m * k + k * n + m * n) * op->batch;
  double tc = flops / (peak * eff);
  double tm = bytes / c->mem_bw[CS_MEM_COPY];
  return fmax(tc, tm) + c->kernel_overhead;
}

/* A fused attention kernel with the attention curve or table (attn_efficiency given or probes). */
static double attn_time(const struct cs_compute *c, const struct cs_op *op, int backward) {
  double flops = op->flops * (op->causal ? 0.5 : 1) * (backward ? 2.5 : 1);
  double eff = cs_compute_attn_efficiency(c, op->n, op->k, op->batch, backward);
  double tm = (backward ? 2 : 1) * op->bytes / c->mem_bw[CS_MEM_COPY];
  return fmax(flops / (c->peak_attn * eff), tm) + c->kernel_overhead;
}

double cs_compute_op_time(const struct cs_compute *c, const struct cs_op *op, int backward) {
  if (op->kind == CS_OP_MEMORY) {
    if (op->pass == (backward ? CS_OP_FWD_ONLY : CS_OP_BWD_ONLY)) return 0;
    double t = op->bytes / c->mem_bw[cs_mem_class_of(op->name)];
    return (backward && op->pass == CS_OP_BOTH ? 2 : 1) * t + c->kernel_overhead;
  }
  if (op->fused && (c->attn || c->gpu.attn_efficiency > 0)) return attn_time(c, op, backward);
  double f = gemm_time(c, op, op->m, op->n, op->k, op->flops);
  if (!backward) return f;
  /* no attention curve (older GPU files): the GEMM curve, backward 2.5 times the forward */
  if (op->fused) return 2.5 * (f - c->kernel_overhead) + c->kernel_overhead;
  /* input gradient: (m x n)(n x k); weight gradient: (k x m)(m x n) */
  return gemm_time(c, op, op->m, op->k, op->n, op->flops) +
         gemm_time(c, op, op->k, op->n, op->m, op->flops);
}

double cs_compute_power_gain(const struct cs_gpu *g, double share) {
  const double lo = g->gemm_power_share_lo, hi = g->gemm_power_share_hi;
  if (!(g->gemm_power_gain > 0) || !(hi > lo) || !(share < hi)) return 0;
  return g->gemm_power_gain * (share <= lo ? 1 : (hi - share) / (hi - lo));
}

void cs_compute_layer_time(const struct cs_compute *c, const struct cs_layer_cost *lc,
                           struct cs_layer_time *t) {
  memset(t, 0, sizeof *t);
  double gemm_fwd = 0, gemm_bwd = 0, other_bwd = 0, gemm_rec = 0;
  for (size_t i = 0; i < lc->nops; i++) {
    const struct cs_op *op = &lc->op[i];
    double f = cs_compute_op_time(c, op, 0);
    double b = cs_compute_op_time(c, op, 1);
    t->fwd += f;
    if (op->kind == CS_OP_GEMM) {
      gemm_fwd += f;
      gemm_bwd += b;
      if (lc->op_recompute[i]) gemm_rec += f;
    } else {
      other_bwd += b;
    }
    if (lc->op_recompute[i]) t->recompute += f;
  }
  /* layers whose backward is not twice the forward (generic ones) scale their GEMM part */
  if (lc->fwd_flops > 0) gemm_bwd *= lc->bwd_flops / (2 * lc->fwd_flops);
  /* the tensor-core kernels' share of the layer sets how far the power limit holds the clock
   * down (cs_compute_power_gain); the GEMM and attention figures are back-to-back ones */
  double all = t->fwd + gemm_bwd + other_bwd;
  double gain = all > 0 ? cs_compute_power_gain(&c->gpu, (gemm_fwd + gemm_bwd) / all) : 0;
  if (gain > 0) {
    double cut = gain / (1 + gain); /* of each tensor-core time */
    t->fwd -= gemm_fwd * cut;
    t->recompute -= gemm_rec * cut;
    gemm_bwd -= gemm_bwd * cut;
  }
  t->bwd = gemm_bwd + other_bwd;
  /* an eager framework's host issues the layer's kernels: the GPU waits when the host is slower.
   * With the host's split known (forward hf, backward hb): the GPU ends the forward at
   * max(hf, gpu forward), and the backward's kernels run after that and not before the host has
   * issued them, so the layer takes max(max(hf, fwd) + bwd, hf + hb). A forward that the host
   * holds back while the backward is GPU-bound (a thin model at a larger micro-batch) costs the
   * difference, which the layer's total alone does not show. */
  double gpu = t->fwd + t->bwd;
  if (c->host_layer > 0 && c->host_fwd_share > 0 && gpu > 0) {
    double hf = c->host_layer * c->host_fwd_share;
    double f = t->fwd > hf ? t->fwd : hf;
    double total = f + t->bwd > c->host_layer ? f + t->bwd : c->host_layer;
    t->fwd = f;
    t->bwd = total - f;
  } else if (c->host_layer > gpu && gpu > 0) {
    t->fwd *= c->host_layer / gpu;
    t->bwd *= c->host_layer / gpu;
  }
  if (gpu > 0 && t->fwd + t->bwd > gpu) t->host = t->fwd + t->bwd - gpu;
  t->fwd *= c->scale;
  t->bwd *= c->scale;
  t->recompute *= c->scale;
  t->host *= c->scale;
}

enum cs_status cs_compute_microbatch(const struct cs_compute *c, const struct cs_workload *w,
                                     const struct cs_plan *p, int stage,
                                     struct cs_layer_time *per_layer, struct cs_layer_time *sum,
                                     struct cs_error *err) {
  enum cs_status st = cs_workload_check_plan(w, p, err);
  if (st != CS_OK) return st;
  memset(sum, 0, sizeof *sum);
  struct cs_layer_cost lc;
  for (size_t i = 0; i < w->nlayer; i++) {
    struct cs_layer_time t = {0, 0, 0, 0};
    if (stage < 0 || cs_workload_layer_stage(w, p, i) == stage) {
      if ((st = cs_workload_layer_cost(w, p, i, &lc, err)) != CS_OK) return st;
      cs_compute_layer_time(c, &lc, &t);
    }
    if (per_layer) per_layer[i] = t;
    sum->fwd += t.fwd;
    sum->bwd += t.bwd;
    sum->recompute += t.recompute;
    sum->host += t.host;
  }
  return CS_OK;
}

enum cs_status cs_compute_calibrate(struct cs_compute *c, const struct cs_workload *w,
                                    const struct cs_plan *p, double measured_s,
                                    struct cs_error *err) {
  if (!(measured_s > 0) || !isfinite(measured_s))
    return cs_error_set(err, CS_ERR_RANGE, "a measured step time must be positive, got %g s",
                        measured_s);
  c->scale = 1;
  struct cs_layer_time sum;
  enum cs_status st = cs_compute_microbatch(c, w, p, -1, NULL, &sum, err);
  if (st != CS_OK) return st;
  double model = sum.fwd + sum.bwd + sum.recompute;
  if (!(model > 0))
    return cs_error_set(err, CS_ERR_NUMERIC, "%s: the modelled micro-batch takes no time", w->name);
  c->scale = measured_s / model;
  return CS_OK;
}
