/* gemm_point.h — one measured GEMM efficiency (and attention efficiency, memory-kernel class), the
 * types that the compute-probe CSV (cs_meas, calibrate/meas/probe.h) produces and the compute model
 * (cs_model, compute.h) consumes.
 *
 * Part of cs_core (libc only, header only): the measurement runner, which must build on a GPU
 * node with nothing but libc, CUDA, NCCL and MPI, reaches it without the model's headers.
 */
#ifndef CS_GEMM_POINT_H
#define CS_GEMM_POINT_H

/* One measured GEMM: its shape and the fraction of peak it reached. */
struct cs_gemm_point {
  double m, n, k, efficiency;
};

/* One measured fused attention: sequence, head dimension, batch x heads, and the fractions of the
 * attention peak its forward and backward reached on the FLOPs they execute (causal: half the
 * scores; the backward 2.5 times the forward's). */
struct cs_attn_point {
  double s, d, bh, eff_fwd, eff_bwd;
};

/* The classes of memory-bound kernels, each with its own efficiency (compute.h). */
enum cs_mem_class {
  CS_MEM_COPY, /* copies, lookups, permutes: mem_efficiency */
  CS_MEM_NORM,
  CS_MEM_ACT,
  CS_MEM_RESIDUAL,
  CS_MEM_SOFTMAX,
  CS_MEM_XENT,
  CS_MEM_OPTIM,
  CS_MEM_GATHER, /* the backward's concatenation of query, key and value gradients */
  CS_MEM_REDUCE, /* bias gradients: an output gradient summed over tokens */
  CS_MEM_CAST,   /* a 16-bit weight gradient cast back to the weights' fp32 */
  CS_MEM_CLASS_COUNT
};

#endif
