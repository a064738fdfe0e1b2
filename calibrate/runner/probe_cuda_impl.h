/* probe_cuda_impl.h — the compute probes' internals, shared by probe_cuda.c (planning and
 * measuring) and probe_cuda_out.c (the probe CSV's provenance, --resume and the table). Compiled
 * only with CUDA (CS_HAVE_CUDA). Not a contract for any other file: probe.h is the module's.
 */
#ifndef CS_PROBE_CUDA_IMPL_H
#define CS_PROBE_CUDA_IMPL_H

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <stdio.h>

#ifdef CS_HAVE_NCCL
#include <nccl.h>
#endif

#include "probe.h"
#include "runner.h"

#define MAXDEV 16
#define AR_BYTES (256.0 * 1048576) /* the all-reduce of the interference probe */
#define MIB 1048576.0

enum { MB_COPY, MB_MEMSET };
enum { LAUNCH_DEVICE, LAUNCH_HOST };

struct point {
  enum cs_probe_kind kind;
  int dtype;      /* enum cs_probe_dtype; MB_COPY or MB_MEMSET for membw */
  double m, n, k; /* GEMM shape */
  double bytes;   /* membw: bytes of one buffer; interference: all-reduce bytes */
  int skip;       /* already in the file (--resume) */
};

struct dev {
  int id;
  cudaStream_t s, s_comm;
  cudaEvent_t e0, e1, c0, c1;
  cublasLtHandle_t lt;
  void *a, *b, *d, *ws, *ar;
  size_t cap_a, cap_b, cap_d;
  int filled; /* the dtype whose random data A and B hold, -1 = none */
};

struct probe {
  const struct cs_run_opts *o;
  char host[64];
  char gpu[64];
  int cc_major, cc_minor;
  int ndev;
  struct dev dev[MAXDEV];
  struct point *pts;
  size_t npts, cap;
  FILE *csv, *table;
  char source[128];
  double peak[CS_PROBE_DTYPE_COUNT]; /* datasheet FLOP/s, 0 = unknown */
  double peak_bw;                    /* datasheet bytes/s, 0 = unknown */
#ifdef CS_HAVE_NCCL
  ncclComm_t comm[MAXDEV];
  int have_comm;
#endif
};

/* Bytes of one element of A and B, and of D, for GEMM precision t (enum cs_probe_dtype). */
static inline size_t esz_ab(int t) {
  return t == CS_PROBE_FP8 ? 1 : (t == CS_PROBE_FP32 || t == CS_PROBE_TF32) ? 4 : 2;
}

static inline size_t esz_d(int t) {
  return t == CS_PROBE_FP32 || t == CS_PROBE_TF32 ? 4 : 2;
}

/* The row point p will become, its identity filled (what --resume compares), the rest NaN. */
void cs_probe_cuda_row_ident(const struct probe *P, const struct point *p, struct cs_probe_row *r);

/* Opens --probe-output for P (cs_runfile_open): a new file gets the run's provenance and the
 * column header; an existing one is appended to, its points marked skip with --resume. P->csv
 * receives the stream (NULL on a dry run). Errors: cs_runfile_open's. */
enum cs_status cs_probe_cuda_open_output(struct probe *P, struct cs_error *err);

/* The table's three header lines, and one row of it (nothing when P->table is NULL). */
void cs_probe_cuda_table_head(struct probe *P);
void cs_probe_cuda_table_row(struct probe *P, const struct cs_probe_row *r);

#endif
