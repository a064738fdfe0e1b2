/* gpu.h — GPU specifications: peak dense throughput per precision, memory capacity and bandwidth,
 * NVLink bandwidth, and the parameters of the compute model's efficiency curve.
 *
 * Specs are read from YAML (model/gpus/NAME.yaml, or a user's file) with units in the values:
 *
 *   version: 1
 *   name: h100-sxm
 *   description: "NVIDIA H100 SXM5 80GB; datasheet ..."
 *   memory: 80GiB
 *   hbm_bw: 3.35TBps
 *   nvlink_bw: 900GBps          # per GPU, both directions together, as datasheets state it
 *   peak_fp32: 67TFLOPS
 *   peak_tf32: 494.7TFLOPS      # dense (datasheets often print the 2:4-sparse figure: halve it)
 *   peak_fp16: 989.4TFLOPS
 *   peak_bf16: 989.4TFLOPS
 *   peak_fp8: 1978.9TFLOPS
 *
 * A precision the GPU lacks has peak 0 (V100: bf16, fp8). The efficiency curve and overhead keys
 * (gemm_efficiency, gemm_half_dim, attn_*, mem_efficiency, the per-class *_efficiency of memory-
 * bound kernels, kernel_overhead, host_layer_time) have defaults; compute.h says what they mean.
 * Measured GPUs (H100, H200) set them from their probes (tests/gpu/gpu_defaults.py).
 */
#ifndef CS_GPU_H
#define CS_GPU_H

#include <stddef.h>

#include "plan.h"
#include "status.h"
#include "yamlcfg.h"

struct cs_gpu {
  int version;
  char name[64];
  char description[256];
  double memory;    /* bytes */
  double hbm_bw;    /* bytes/s */
  double nvlink_bw; /* bytes/s per GPU, both directions; 0 = none */
  double pcie_bw;   /* bytes/s per direction */
  double peak_fp32, peak_tf32, peak_fp16, peak_bf16, peak_fp8; /* dense FLOP/s; 0 = not offered */
  double gemm_efficiency;     /* the fraction of peak a large GEMM reaches */
  double gemm_half_dim;       /* the smallest GEMM dimension at which it reaches half of that */
  double gemm_efficiency_fp8; /* fp8 GEMMs: the same curve with this fraction of the fp8 peak
                                 (0 = gemm_efficiency) */
  double mem_efficiency;      /* the fraction of hbm_bw streaming kernels reach (copies, lookups) */
  /* memory-bound kernels by class: the fraction of hbm_bw at which the model's byte count of that
   * class runs (enum cs_mem_class order from CS_MEM_NORM; 0 = mem_efficiency) */
  double norm_efficiency, act_efficiency, residual_efficiency, softmax_efficiency, xent_efficiency,
      optim_efficiency, gather_efficiency, reduce_efficiency, cast_efficiency;
  /* tensor-core kernels beside memory-bound ones run faster than back to back, where the power
   * limit holds the clock lowest: a layer whose tensor-core kernels take the share s of its time
   * runs them gemm_power_gain times faster in addition when s <= gemm_power_share_lo, nothing
   * when s >= gemm_power_share_hi, linearly between (0 = no gain: the GEMM and attention figures
   * hold as measured) */
  double gemm_power_gain, gemm_power_share_lo, gemm_power_share_hi;
  /* fused attention: forward efficiency attn_efficiency * d/(d + attn_half_dim) *
   * s/(s + attn_half_seq) of the executed FLOPs (half the score matrix when causal); the backward
   * takes attn_bwd_factor times the forward. attn_efficiency 0 = the GEMM curve (older files). */
  double attn_efficiency, attn_half_dim, attn_half_seq, attn_bwd_factor;
  double kernel_overhead; /* seconds added per kernel launch */
  double host_layer_time; /* host seconds per layer of a step in an eager framework; 0 = none */
  /* the share of host_layer_time the forward call takes (the rest: loss.backward()); 0 = not
   * known: the host time then scales both phases alike */
  double host_fwd_share;
};

/* The schema table; *n receives its length. */
const struct cs_cfg_field *cs_gpu_fields(size_t *n);

/* Loads a GPU file or YAML text (name stands in for the path). Errors are located
 * "path:line:col: ..."; a spec with no peak for any precision is CS_ERR_RANGE. */
enum cs_status cs_gpu_load(const char *path, struct cs_gpu *g, struct cs_error *err);
enum cs_status cs_gpu_load_string(const char *text, const char *name, struct cs_gpu *g,
                                  struct cs_error *err);

/* Peak dense FLOP/s of g at precision prec (enum cs_precision). tf32 falls back to fp32 on GPUs
 * without it. Returns 0 when g cannot run that precision (V100 bf16 or fp8, A100 fp8). */
double cs_gpu_peak(const struct cs_gpu *g, int prec);

#endif
