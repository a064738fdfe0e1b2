/* gpu.c — GPU specification files; see gpu.h. */
#include "gpu.h"

#include <string.h>

#define G(key, type, field, size, unit, lo, hi, def, help)                                         \
  { key, type, offsetof(struct cs_gpu, field), size, unit, lo, hi, def, NULL, help }

static const struct cs_cfg_field fields[] = {
    G("version", CS_CFG_INT, version, 0, 0, 1, 1, NULL, "file format version: 1"),
    G("name", CS_CFG_STRING, name, 64, 0, 0, 0, NULL, "short name, e.g. a100-80gb"),
    G("description", CS_CFG_STRING, description, 256, 0, 0, 0, "\"\"",
      "the product, and the datasheet the figures come from"),
    G("memory", CS_CFG_QTY, memory, 0, CS_UNIT_BYTES, 1e6, 1e15, NULL, "device memory, e.g. 80GiB"),
    G("hbm_bw", CS_CFG_QTY, hbm_bw, 0, CS_UNIT_BANDWIDTH, 1e6, 1e15, NULL,
      "device memory bandwidth, e.g. 3.35TBps"),
    G("nvlink_bw", CS_CFG_QTY, nvlink_bw, 0, CS_UNIT_BANDWIDTH, 0, 1e15, "0GBps",
      "NVLink bandwidth per GPU, both directions (0 = none)"),
    G("pcie_bw", CS_CFG_QTY, pcie_bw, 0, CS_UNIT_BANDWIDTH, 0, 1e15, "32GBps",
      "host link bandwidth per direction"),
    G("peak_fp32", CS_CFG_QTY, peak_fp32, 0, CS_UNIT_FLOPS, 0, 1e18, "0TFLOPS", "dense fp32"),
    G("peak_tf32", CS_CFG_QTY, peak_tf32, 0, CS_UNIT_FLOPS, 0, 1e18, "0TFLOPS",
      "dense tf32 tensor cores (0 = none)"),
    G("peak_fp16", CS_CFG_QTY, peak_fp16, 0, CS_UNIT_FLOPS, 0, 1e18, "0TFLOPS",
      "dense fp16 tensor cores, fp32 accumulate"),
    G("peak_bf16", CS_CFG_QTY, peak_bf16, 0, CS_UNIT_FLOPS, 0, 1e18, "0TFLOPS",
      "dense bf16 tensor cores (0 = none)"),
    G("peak_fp8", CS_CFG_QTY, peak_fp8, 0, CS_UNIT_FLOPS, 0, 1e18, "0TFLOPS",
      "dense fp8 tensor cores (0 = none)"),
    G("gemm_efficiency", CS_CFG_DOUBLE, gemm_efficiency, 0, 0, 0.01, 1, "0.8",
      "fraction of peak large GEMMs reach"),
    G("gemm_half_dim", CS_CFG_DOUBLE, gemm_half_dim, 0, 0, 0, 1e6, "64",
      "smallest GEMM dimension at which efficiency is half of gemm_efficiency"),
    G("gemm_efficiency_fp8", CS_CFG_DOUBLE, gemm_efficiency_fp8, 0, 0, 0, 1, "0",
      "fraction of the fp8 peak large fp8 GEMMs reach (0 = gemm_efficiency)"),
    G("mem_efficiency", CS_CFG_DOUBLE, mem_efficiency, 0, 0, 0.01, 1, "0.8",
      "fraction of hbm_bw that streaming kernels reach"),
    G("norm_efficiency", CS_CFG_DOUBLE, norm_efficiency, 0, 0, 0, 4, "0",
      "LayerNorm/RMSNorm: fraction of hbm_bw for the model's bytes (0 = mem_efficiency)"),
    G("act_efficiency", CS_CFG_DOUBLE, act_efficiency, 0, 0, 0, 4, "0",
      "GELU/SwiGLU: fraction of hbm_bw for the model's bytes (0 = mem_efficiency)"),
    G("residual_efficiency", CS_CFG_DOUBLE, residual_efficiency, 0, 0, 0, 4, "0",
      "residual adds: fraction of hbm_bw for the model's bytes (0 = mem_efficiency)"),
    G("softmax_efficiency", CS_CFG_DOUBLE, softmax_efficiency, 0, 0, 0, 4, "0",
      "unfused softmax: fraction of hbm_bw for the model's bytes (0 = mem_efficiency)"),
    G("xent_efficiency", CS_CFG_DOUBLE, xent_efficiency, 0, 0, 0, 4, "0",
      "cross-entropy: fraction of hbm_bw for the model's bytes (0 = mem_efficiency)"),
    G("optim_efficiency", CS_CFG_DOUBLE, optim_efficiency, 0, 0, 0, 4, "0",
      "optimizer step: fraction of hbm_bw for the model's bytes (0 = mem_efficiency)"),
    G("gather_efficiency", CS_CFG_DOUBLE, gather_efficiency, 0, 0, 0, 4, "0",
      "query/key/value gradient concatenation: fraction of hbm_bw for the model's bytes (0 = "
      "mem_efficiency)"),
    G("reduce_efficiency", CS_CFG_DOUBLE, reduce_efficiency, 0, 0, 0, 4, "0",
      "bias gradients (sums over tokens): fraction of hbm_bw for the model's bytes (0 = "
      "mem_efficiency)"),
    G("cast_efficiency", CS_CFG_DOUBLE, cast_efficiency, 0, 0, 0, 4, "0",
      "16-bit weight gradient cast to fp32: fraction of hbm_bw for the model's bytes (0 = "
      "mem_efficiency)"),
    G("gemm_power_gain", CS_CFG_DOUBLE, gemm_power_gain, 0, 0, 0, 1, "0",
      "extra speed of tensor-core kernels sharing the time with memory-bound ones (power limit)"),
    G("gemm_power_share_lo", CS_CFG_DOUBLE, gemm_power_share_lo, 0, 0, 0, 1, "0.41",
      "tensor-core time share at or under which gemm_power_gain is reached"),
    G("gemm_power_share_hi", CS_CFG_DOUBLE, gemm_power_share_hi, 0, 0, 0, 1, "0.81",
      "tensor-core time share at or over which there is no gain"),
    G("attn_efficiency", CS_CFG_DOUBLE, attn_efficiency, 0, 0, 0, 1, "0",
      "fused attention forward: fraction of peak at large head dim and sequence (0 = GEMM curve)"),
    G("attn_half_dim", CS_CFG_DOUBLE, attn_half_dim, 0, 0, 0, 1e6, "0",
      "head dimension at which fused attention reaches half of attn_efficiency"),
    G("attn_half_seq", CS_CFG_DOUBLE, attn_half_seq, 0, 0, 0, 1e9, "0",
      "sequence length at which fused attention reaches half of attn_efficiency"),
    G("attn_bwd_factor", CS_CFG_DOUBLE, attn_bwd_factor, 0, 0, 1, 10, "2.5",
      "fused attention backward time / forward time"),
    G("kernel_overhead", CS_CFG_QTY, kernel_overhead, 0, CS_UNIT_TIME, 0, 1e-2, "3us",
      "time added per kernel (launch and tail)"),
    G("host_layer_time", CS_CFG_QTY, host_layer_time, 0, CS_UNIT_TIME, 0, 1, "0us",
      "host time per layer of a step (forward, backward, optimizer) in an eager framework"),
    G("host_fwd_share", CS_CFG_DOUBLE, host_fwd_share, 0, 0, 0, 1, "0",
      "the forward's share of host_layer_time (0 = the host time spread over both phases)"),
};
#undef G
#define NFIELDS (sizeof fields / sizeof fields[0])

const struct cs_cfg_field *cs_gpu_fields(size_t *n) {
  *n = NFIELDS;
  return fields;
}

static enum cs_status read_doc(const struct cs_yaml *d, struct cs_gpu *g, struct cs_error *err) {
  struct cs_gpu tmp;
  memset(&tmp, 0, sizeof tmp);
  int root = cs_yaml_root(d);
  enum cs_status st = cs_cfg_read(d, root, fields, NFIELDS, &tmp, NULL, err);
  if (st != CS_OK) return st;
  if (tmp.peak_fp32 <= 0 && tmp.peak_tf32 <= 0 && tmp.peak_fp16 <= 0 && tmp.peak_bf16 <= 0 &&
      tmp.peak_fp8 <= 0)
    return cs_yaml_error(d, root, err, CS_ERR_RANGE,
                         "%s: expected a peak for at least one precision (peak_fp32 ... peak_fp8)",
                         tmp.name);
  if (tmp.gemm_power_gain > 0 && !(tmp.gemm_power_share_lo < tmp.gemm_power_share_hi))
    return cs_yaml_error(d, root, err, CS_ERR_RANGE,
                         "%s: expected gemm_power_share_lo below gemm_power_share_hi", tmp.name);
  *g = tmp;
  return CS_OK;
}

enum cs_status cs_gpu_load(const char *path, struct cs_gpu *g, struct cs_error *err) {
  struct cs_yaml *d = NULL;
  enum cs_status st = cs_yaml_load(path, &d, err);
  if (st == CS_OK) st = read_doc(d, g, err);
  cs_yaml_free(d);
  return st;
}

enum cs_status cs_gpu_load_string(const char *text, const char *name, struct cs_gpu *g,
                                  struct cs_error *err) {
  struct cs_yaml *d = NULL;
  enum cs_status st = cs_yaml_load_string(text, name, &d, err);
  if (st == CS_OK) st = read_doc(d, g, err);
  cs_yaml_free(d);
  return st;
}

double cs_gpu_peak(const struct cs_gpu *g, int prec) {
  switch (prec) {
  case CS_PREC_FP32:
    return g->peak_fp32;
  case CS_PREC_TF32:
    return g->peak_tf32 > 0 ? g->peak_tf32 : g->peak_fp32;
  case CS_PREC_FP16:
    return g->peak_fp16;
  case CS_PREC_BF16:
    return g->peak_bf16;
  case CS_PREC_FP8:
    return g->peak_fp8;
  }
  return 0;
}
