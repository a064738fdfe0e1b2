/* compute.h — how long a layer's kernels take on one GPU.
 *
 * Each forward kernel of struct cs_layer_cost is costed by a roofline:
 *
 *   t = max(flops / (peak * eff), bytes / (hbm_bw * mem_efficiency)) + kernel_overhead
 *
 * where peak is the GPU's dense peak at the plan's precision (attention stays at bf16/fp16 under
 * fp8) and eff depends on the GEMM's shape. Memory-bound kernels run at the efficiency of their
 * class (norm, activation, residual, softmax, cross-entropy, optimizer; others at mem_efficiency),
 * each the fraction of hbm_bw at which the model's own byte count of that class ran in the
 * probes. A fused attention kernel executes half the score FLOPs under a causal mask and runs at
 *
 *   eff_attn(d, s) = attn_efficiency * d / (d + attn_half_dim) * s / (s + attn_half_seq)
 *
 * of the attention peak (head dimension d, sequence s); its backward takes attn_bwd_factor times
 * the forward. Measured probes replace these curves (cs_compute_set_probes). The default GEMM curve
 * is
 *
 *   eff(m, n, k) = gemm_efficiency * x / (x + gemm_half_dim),   x = min(m, n, k)
 *
 * (large square GEMMs approach gemm_efficiency; a thin dimension, such as attention's head size
 * or a small micro-batch, lowers it). Measured GEMM efficiencies replace the curve: the point
 * nearest in log(m), log(n), log(k) is used. Backward runs two GEMMs per forward GEMM (input and
 * weight gradients, with the shapes transposed accordingly) and twice the traffic of each memory
 * kernel that runs in both passes (one of a single pass, struct cs_op's pass, moves its bytes
 * once).
 *
 * An eager framework's host issues the kernels (host_layer seconds per layer): without its split
 * a layer takes max(GPU time, host_layer); with the forward's share s of it known
 * (host_fwd_share), max(max(s host_layer, GPU forward) + GPU backward, host_layer).
 *
 * A measured single-GPU time overrides the model: cs_compute_calibrate scales every layer's time
 * so that the modelled micro-batch equals the measurement, i.e. splits the measured time over the
 * layers in proportion to the model.
 */
#ifndef CS_COMPUTE_H
#define CS_COMPUTE_H

#include <stddef.h>

#include "gemm_point.h"
#include "gpu.h"
#include "plan.h"
#include "status.h"
#include "workload.h"

/* The class of a memory kernel by its name (cs_op.name): norm*, gelu/swiglu, residual*, softmax,
 * cross_entropy; CS_MEM_COPY for the rest. */
enum cs_mem_class cs_mem_class_of(const char *op_name);

/* The relative ~95% half-width of modelled compute time without a steps calibration: the 85th
 * percentile of |predicted/measured - 1| over the 29 single-GPU training steps of
 * tests/data/single-gpu/{h100,h200}.yaml (16 GPT shapes on the H100, 13 on the H200, from the GPU
 * file alone; linear interpolation between order statistics): 0.097. It sets the width of the
 * band, never a prediction; docs/constants.md has the
 * command that recomputes it. */
#define CS_COMPUTE_BAND_REL 0.097

/* The relative half-width of a multi-GPU step's framework and scaling uncertainty (DDP hooks,
 * stream overlap, host and input pipeline: what a speedup over one GPU does not cancel) without
 * a steps calibration: the 85th percentile of |error| over the 33 speedup cases of
 * tests/validation (DLPerf V100 data parallelism, the real 2 and 4 x H200 runs), where the
 * compute level cancels. `commscale validate` never scores a case with it: it recomputes the
 * percentile without the case's section (cs_valband_quantile). docs/constants.md has the command.
 */
#define CS_COMPUTE_BAND_FW 0.268

/* The relative half-width of the host time an eager step waits for beyond its kernels
 * (cs_layer_time.host): how far the host's time per layer moves between machines of one kind and
 * between moments on one machine. The 85th percentile of |probe / GPU file - 1| over the host
 * probes of tests/data/{h100,h200}-compute that the GPU files were not set from (run6/a, run6/b
 * on two H100 machines, run4 on a second H200; each probe the median of its three widths, as
 * the files' values are): 0.182. docs/constants.md has the command. */
#define CS_COMPUTE_BAND_HOST 0.182

struct cs_compute {
  struct cs_gpu gpu;                 /* a copy */
  int precision;                     /* enum cs_precision */
  double peak;                       /* FLOP/s of the linear layers at that precision */
  double peak_attn;                  /* FLOP/s of attention (bf16/fp16 under fp8) */
  double elem_bytes;                 /* bytes per GEMM operand element */
  const struct cs_gemm_point *table; /* borrowed; NULL = the default curve */
  size_t ntable;
  const struct cs_attn_point *attn; /* borrowed; NULL = the attention curve */
  size_t nattn;
  double mem_bw[CS_MEM_CLASS_COUNT]; /* bytes/s of each class of memory kernel */
  double kernel_overhead;            /* seconds per kernel (the GPU file's, or measured) */
  double host_layer;                 /* host seconds per layer of an eager step; 0 = none */
  double host_fwd_share;             /* the forward's share of host_layer; 0 = not known */
  double step_overhead; /* host seconds per step outside the layers (a steps calibration's) */
  /* the ~95% relative half-width of the compute time (compute, host and framework uncertainty):
   * CS_COMPUTE_BAND_REL uncalibrated, from the fit's covariance and residuals when calibrated */
  double band_rel;
  /* the same for the framework's share of a step of more than one GPU, relative to the whole
   * step: CS_COMPUTE_BAND_FW uncalibrated, 0 with a steps calibration (its residuals are in
   * band_rel) */
  double band_fw;
  /* the same for the host time a step waits for beyond its kernels (cs_layer_time.host):
   * CS_COMPUTE_BAND_HOST uncalibrated, 0 with a steps calibration (its residuals hold it) */
  double band_host;
  double scale; /* 1, or measured / modelled after cs_compute_calibrate */
};

/* Times for one layer and one micro-batch, seconds. recompute: the forward work re-run during
 * backward under the plan's recomputation (and no more). */
struct cs_layer_time {
  double fwd, bwd, recompute;
  double host; /* of fwd + bwd: the time the GPU waits for the host beyond its kernels */
};

/* Prepares c for GPU g at precision prec. CS_ERR_UNSUPPORTED when g has no peak for it
 * ("v100-16gb has no bf16 tensor cores"). */
enum cs_status cs_compute_init(struct cs_compute *c, const struct cs_gpu *g, int prec,
                               struct cs_error *err);

/* Uses measured efficiencies (n points, borrowed: they must outlive c); n == 0 restores the
 * default curve. */
void cs_compute_set_gemm_table(struct cs_compute *c, const struct cs_gemm_point *pts, size_t n);

/* Uses measured attention efficiencies (n points, borrowed); n == 0 restores the curve. */
void cs_compute_set_attn_table(struct cs_compute *c, const struct cs_attn_point *pts, size_t n);

/* The head dimension a fused (FlashAttention-2) kernel computes at: d rounded up to a multiple of
 * 32 up to 192, else 256. */
double cs_compute_attn_padded_dim(double d);

/* The efficiency of a fused attention kernel's forward (backward = 0) or backward (1) at sequence
 * s, head dimension d and batch x heads bh, of the FLOPs of the head dimension d (the curve:
 * E dp/(dp + attn_half_dim) s/(s + attn_half_seq) d/dp, dp the padded dimension). */
double cs_compute_attn_efficiency(const struct cs_compute *c, double s, double d, double bh,
                                  int backward);

/* The efficiency of an m x n x k GEMM (a dimension of 0 means "unknown, large"). */
double cs_compute_gemm_efficiency(const struct cs_compute *c, double m, double n, double k);

/* The time of one forward kernel (backward = 0) or of its backward (backward = 1). */
double cs_compute_op_time(const struct cs_compute *c, const struct cs_op *op, int backward);

/* The host time of one micro-batch's forward and backward of a model of `layers` layers in an
 * eager framework (c->host_layer per layer; 0 when not modelled). */
double cs_compute_host_time(const struct cs_compute *c, double layers);

/* The times of one layer (scaled by c->scale). */
/* The extra speed of tensor-core kernels that take the share `share` of a layer's GPU time
 * (struct cs_gpu gemm_power_*): 0 without the keys or at a share of gemm_power_share_hi and more,
 * gemm_power_gain at gemm_power_share_lo and less, linear between. The kernel times divide by
 * 1 + gain. */
double cs_compute_power_gain(const struct cs_gpu *g, double share);

void cs_compute_layer_time(const struct cs_compute *c, const struct cs_layer_cost *lc,
                           struct cs_layer_time *t);

/* The compute of one micro-batch under p on one GPU of pipeline stage `stage` (-1: every layer,
 * as one GPU holding the whole model would run them). per_layer (may be NULL) receives w->nlayer
 * entries, zero for layers on other stages; *sum the totals. */
enum cs_status cs_compute_microbatch(const struct cs_compute *c, const struct cs_workload *w,
                                     const struct cs_plan *p, int stage,
                                     struct cs_layer_time *per_layer, struct cs_layer_time *sum,
                                     struct cs_error *err);

/* Sets c->scale so that one micro-batch of w under p (normally a single-GPU plan) takes
 * measured_s (forward + backward + recomputation). CS_ERR_RANGE for a non-positive measurement. */
enum cs_status cs_compute_calibrate(struct cs_compute *c, const struct cs_workload *w,
                                    const struct cs_plan *p, double measured_s,
                                    struct cs_error *err);

#endif
