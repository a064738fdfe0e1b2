/* gemm_point.h — one measured GEMM efficiency, the type that the compute-probe CSV (cs_meas,
 * calibrate/meas/probe.h) produces and the compute model (cs_model, compute.h) consumes.
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

#endif
