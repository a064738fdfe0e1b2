/* probe_cuda.c — the compute probes of commscale-run: GEMM throughput (cuBLASLt), device memory
 * bandwidth, and GEMM slowdown under a concurrent all-reduce (NCCL); see probe.h.
 *
 * GEMMs. Each point is D = A^T B in column-major storage (cuBLASLt's "TN" layout, the one every
 * precision supports on Hopper, fp8 included), A stored k x m, B k x n, D m x n, alpha 1, beta 0,
 * run with the first algorithm cuBLASLt's heuristic offers for a 32 MiB workspace (PyTorch's
 * default cuBLASLt workspace on Hopper), as frameworks do; with --gemm-algos N the heuristic's
 * first N algorithms are each timed (one batch of about a trial) and the fastest is kept. Operands
 * hold random values of magnitude 1/8..2 (random bits in a narrow exponent range, so every
 * precision gets finite, non-zero data; the matrix units draw more power on random data than on
 * zeros, and their clocks follow). The shapes are those of a transformer layer: m tokens per
 * micro-batch (2048..16384) against hidden sizes h of 1024..16384 (QKV m x 3h x h, projection
 * m x h x h, FFN m x 4h x h and m x h x 4h), skinny ones (m of 16..512: small micro-batches,
 * decoding) and attention-like ones (s x s x 128, s x 128 x s). Points whose single product
 * would take more than about 60 ms (plain fp32 at the largest sizes) are left out so that a full
 * run stays near a minute.
 *
 * Timing follows the collective harness (runner.h): one product to warm up and one to estimate,
 * then trials of back-to-back products sized to --trial-time, between CUDA events on one stream,
 * repeated (--trials MIN:MAX) until (max - min) / median <= --tol; the row keeps the median.
 *
 * Memory bandwidth: cudaMemcpyAsync device-to-device (bytes read + written per copy) and
 * cudaMemsetAsync (bytes written), 256 MiB to 4 GiB, far beyond the L2.
 *
 * Launch floor: a queue of back-to-back 4-byte cudaMemsetAsync calls (each one minimal kernel):
 * the GPU time per kernel between CUDA events ("device") and the CPU time per enqueue ("host").
 *
 * Interference: one process drives every local GPU; each runs the same GEMM on its own stream
 * while an all-reduce (256 MiB of float, in place) runs on a high-priority stream of each, as
 * training frameworks give their communication streams. A trial runs the GEMM batch alone, then
 * again behind a queue of all-reduces long enough to outlast it; the factor is the median time
 * under contention over the median time alone, both the maximum over the GPUs.
 *
 * What is written besides the rows (the probe CSV's provenance, --resume, the table) is in
 * probe_cuda_out.c; the structures both files share are in probe_cuda_impl.h.
 */
#include "probe.h"
#include "runner.h"
#include "stats.h"

#ifndef CS_HAVE_CUDA

enum cs_status cs_probe_run(const struct cs_run_opts *o, int nprocs, int proc,
                            struct cs_error *err) {
  (void)o, (void)nprocs, (void)proc;
  return cs_error_set(err, CS_ERR_UNSUPPORTED,
                      "the compute probes need CUDA and cuBLASLt; this commscale-run was built "
                      "without them");
}

#else

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "probe_cuda_impl.h"

#define WORKSPACE (32u << 20)
#define MAX_CALL_S 0.06 /* leave out products estimated to take longer than this */
#define MAX_ALGOS 16
#define LAUNCHES 2000 /* the fewest minimal kernels in a launch-floor batch */

struct gemm {
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t la, lb, ld;
  cublasLtMatmulHeuristicResult_t heur;
};

/* ---- errors, mapped at the boundary --------------------------------------------------------- */

static enum cs_status cuda_fail(struct cs_error *err, const struct probe *P, int dev, cudaError_t e,
                                const char *what) {
  return cs_error_set(err, CS_ERR_EXTERNAL, "rank 0 on %s: GPU %d: %s: CUDA error %s (%s)", P->host,
                      dev, what, cudaGetErrorName(e), cudaGetErrorString(e));
}

static enum cs_status lt_fail(struct cs_error *err, const struct probe *P, int dev,
                              cublasStatus_t s, const char *what) {
  return cs_error_set(err, s == CUBLAS_STATUS_NOT_SUPPORTED ? CS_ERR_UNSUPPORTED : CS_ERR_EXTERNAL,
                      "rank 0 on %s: GPU %d: %s: cuBLASLt error %s (%s)", P->host, dev, what,
                      cublasLtGetStatusName(s), cublasLtGetStatusString(s));
}

#define CUDA_TRY(dv, call, what)                                                                   \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) return cuda_fail(err, P, (dv), e_, (what));                             \
  } while (0)
#define LT_TRY(dv, call, what)                                                                     \
  do {                                                                                             \
    cublasStatus_t s_ = (call);                                                                    \
    if (s_ != CUBLAS_STATUS_SUCCESS) return lt_fail(err, P, (dv), s_, (what));                     \
  } while (0)

static void progress(const struct cs_run_opts *o, const char *what) {
  if (o->progress) o->progress(o->progress_ctx, what);
}

static void note(const struct probe *P, const char *fmt, const char *a, const char *b) {
  if (P->o->log) {
    fprintf(P->o->log, "commscale-run: probes: ");
    fprintf(P->o->log, fmt, a, b);
    fputc('\n', P->o->log);
    fflush(P->o->log);
  }
}

/* ---- the GPU ------------------------------------------------------------------------------- */

/* Dense datasheet peaks of the GPUs we know by name; frac_peak stays empty for others. */
static void datasheet(struct probe *P) {
  static const struct {
    const char *name, *not ;
    double bf16, tf32, fp32, fp8, bw; /* TFLOP/s, TB/s */
  } known[] = {
      {"H200", NULL, 989.4, 494.7, 66.9, 1978.9, 4.8},
      {"H100 PCIe", NULL, 756.0, 378.0, 51.2, 1513.0, 2.0},
      {"H100", "PCIe", 989.4, 494.7, 66.9, 1978.9, 3.35},
      {"A100-SXM4-80GB", NULL, 312.0, 156.0, 19.5, 0, 2.039},
      {"A100 80GB PCIe", NULL, 312.0, 156.0, 19.5, 0, 1.935},
      {"A100", NULL, 312.0, 156.0, 19.5, 0, 1.555},
  };
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
    if (strstr(P->gpu, known[i].name) == NULL) continue;
    if (known[i].not &&strstr(P->gpu, known[i].not )) continue;
    P->peak[CS_PROBE_BF16] = P->peak[CS_PROBE_FP16] = known[i].bf16 * 1e12;
    P->peak[CS_PROBE_TF32] = known[i].tf32 * 1e12;
    P->peak[CS_PROBE_FP32] = known[i].fp32 * 1e12;
    P->peak[CS_PROBE_FP8] = known[i].fp8 * 1e12;
    P->peak_bw = known[i].bw * 1e12;
    return;
  }
}

/* A guess of each precision's rate, only to leave out products that would take too long. */
static double guess_rate(int t) {
  static const double r[CS_PROBE_DTYPE_COUNT] = {7e14, 7e14, 3.5e14, 5e13, 1.2e15};
  return r[t];
}

/* Random bits in a narrow exponent range: magnitudes 1/8..2 in every format. */
static void random_elems(unsigned char *buf, size_t bytes, int t, uint64_t *state) {
  size_t es = esz_ab(t);
  for (size_t off = 0; off + es <= bytes; off += es) {
    uint64_t x = *state;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    *state = x;
    uint32_t s = (uint32_t)(x >> 63), e = (uint32_t)(x >> 32) & 3u, mant = (uint32_t)x;
    if (es == 4) {
      uint32_t v = s << 31 | (124u + e) << 23 | (mant & 0x7fffffu);
      memcpy(buf + off, &v, 4);
    } else if (es == 2) {
      uint16_t v = t == CS_PROBE_BF16 ? (uint16_t)(s << 15 | (124u + e) << 7 | (mant & 0x7fu))
                                      : (uint16_t)(s << 15 | (12u + e) << 10 | (mant & 0x3ffu));
      memcpy(buf + off, &v, 2);
    } else {
      buf[off] = (unsigned char)(s << 7 | (4u + e) << 3 | (mant & 7u)); /* e4m3, never NaN */
    }
  }
}

/* Fills A and B of d with random elements of dtype t: one 16 MiB chunk from the host, then
 * doubling device-to-device copies. */
static enum cs_status fill(struct probe *P, struct dev *d, int t, struct cs_error *err) {
  if (d->filled == t) return CS_OK;
  size_t chunk = 16u << 20;
  unsigned char *h = malloc(chunk);
  if (h == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  uint64_t st = 0x9e3779b97f4a7c15ull ^ (uint64_t)t;
  random_elems(h, chunk, t, &st);
  void *bufs[2] = {d->a, d->b};
  size_t caps[2] = {d->cap_a, d->cap_b};
  cudaError_t e = cudaSuccess;
  for (int i = 0; i < 2 && e == cudaSuccess; i++) {
    unsigned char *p = bufs[i];
    size_t first = caps[i] < chunk ? caps[i] : chunk;
    e = cudaMemcpy(p, h, first, cudaMemcpyHostToDevice);
    for (size_t done = first; done < caps[i] && e == cudaSuccess;) {
      size_t n = done < caps[i] - done ? done : caps[i] - done;
      e = cudaMemcpy(p + done, p, n, cudaMemcpyDeviceToDevice);
      done += n;
    }
  }
  free(h);
  if (e != cudaSuccess) return cuda_fail(err, P, d->id, e, "filling the operands");
  d->filled = t;
  return CS_OK;
}

static void gemm_free(struct gemm *g) {
  if (g->la) cublasLtMatrixLayoutDestroy(g->la);
  if (g->lb) cublasLtMatrixLayoutDestroy(g->lb);
  if (g->ld) cublasLtMatrixLayoutDestroy(g->ld);
  if (g->op) cublasLtMatmulDescDestroy(g->op);
  memset(g, 0, sizeof *g);
}

/* Describes D = A^T B of dtype t and asks the heuristic for its algorithm. CS_ERR_UNSUPPORTED
 * when cuBLASLt has none. On failure g holds nothing. */
static enum cs_status gemm_init(struct probe *P, struct dev *d, int t, double m, double n, double k,
                                struct gemm *g, cublasLtMatmulHeuristicResult_t *alts, int nalts,
                                int *found_out, struct cs_error *err) {
  memset(g, 0, sizeof *g);
  cudaDataType_t ab = CUDA_R_16BF, cd = CUDA_R_16BF;
  cublasComputeType_t ct = CUBLAS_COMPUTE_32F;
  switch (t) {
  case CS_PROBE_FP16:
    ab = cd = CUDA_R_16F;
    break;
  case CS_PROBE_FP32:
    ab = cd = CUDA_R_32F;
    break;
  case CS_PROBE_TF32:
    ab = cd = CUDA_R_32F, ct = CUBLAS_COMPUTE_32F_FAST_TF32;
    break;
  case CS_PROBE_FP8:
    ab = CUDA_R_8F_E4M3, cd = CUDA_R_16BF;
    break;
  default:
    break;
  }
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  uint64_t ws = WORKSPACE;
  cublasLtMatmulPreference_t pref = NULL;
  int found = 0;
  cublasStatus_t s = cublasLtMatmulDescCreate(&g->op, ct, CUDA_R_32F);
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatrixLayoutCreate(&g->la, ab, (uint64_t)k, (uint64_t)m, (int64_t)k);
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatrixLayoutCreate(&g->lb, ab, (uint64_t)k, (uint64_t)n, (int64_t)k);
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatrixLayoutCreate(&g->ld, cd, (uint64_t)m, (uint64_t)n, (int64_t)m);
  if (s == CUBLAS_STATUS_SUCCESS) s = cublasLtMatmulPreferenceCreate(&pref);
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                             sizeof ws);
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatmulAlgoGetHeuristic(d->lt, g->op, g->la, g->lb, g->ld, g->ld, pref,
                                       alts ? nalts : 1, alts ? alts : &g->heur, &found);
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  if (s == CUBLAS_STATUS_SUCCESS && found < 1) s = CUBLAS_STATUS_NOT_SUPPORTED;
  if (s == CUBLAS_STATUS_SUCCESS && alts) g->heur = alts[0];
  if (found_out) *found_out = found;
  if (s != CUBLAS_STATUS_SUCCESS) {
    gemm_free(g);
    return lt_fail(err, P, d->id, s, "choosing a GEMM algorithm");
  }
  return CS_OK;
}

/* Queues iters products between d's events e0 and e1 on its GEMM stream. */
static enum cs_status gemm_enqueue(struct probe *P, struct dev *d, struct gemm *g, int iters,
                                   struct cs_error *err) {
  float alpha = 1, beta = 0;
  CUDA_TRY(d->id, cudaSetDevice(d->id), "selecting the device");
  CUDA_TRY(d->id, cudaEventRecord(d->e0, d->s), "recording an event");
  for (int i = 0; i < iters; i++)
    LT_TRY(d->id,
           cublasLtMatmul(d->lt, g->op, &alpha, d->a, g->la, d->b, g->lb, &beta, d->d, g->ld, d->d,
                          g->ld, &g->heur.algo, d->ws, WORKSPACE, d->s),
           "running a GEMM");
  CUDA_TRY(d->id, cudaEventRecord(d->e1, d->s), "recording an event");
  return CS_OK;
}

/* Waits for d's e1 and returns the interval e0..e1 in seconds. */
static enum cs_status elapsed(struct probe *P, struct dev *d, cudaEvent_t a, cudaEvent_t b,
                              double *sec, struct cs_error *err) {
  float ms = 0;
  CUDA_TRY(d->id, cudaEventSynchronize(b), "waiting for the GPU");
  CUDA_TRY(d->id, cudaEventElapsedTime(&ms, a, b), "reading the events");
  *sec = 1e-3 * ms;
  return CS_OK;
}

/* ---- trials --------------------------------------------------------------------------------- */

/* One timed batch of `iters` operations; *sec per operation. */
typedef enum cs_status (*batch_fn)(struct probe *P, void *ctx, int iters, double *sec,
                                   struct cs_error *err);

struct stats {
  double med, min, max;
  int n;
};

static void summarise(double *t, int n, struct stats *s) {
  s->med = cs_stats_median(t, (size_t)n); /* sorts t */
  s->min = t[0];
  s->max = t[n - 1];
  s->n = n;
}

static int settled(const double *t, int n, double tol) {
  double c[1000];
  memcpy(c, t, (size_t)n * sizeof *c);
  struct stats s = {0, 0, 0, 0};
  summarise(c, n, &s);
  return s.med > 0 && (s.max - s.min) / s.med <= tol;
}

static int iters_for(const struct cs_run_opts *o, double est) {
  double it = est > 0 ? floor(o->trial_time_s / est) : 1;
  return it < 1 ? 1 : it > 10000 ? 10000 : (int)it;
}

/* Warm-up, estimate, then trials until the spread is within o->tol. */
static enum cs_status measure(struct probe *P, batch_fn fn, void *ctx, struct stats *out,
                              struct cs_error *err) {
  const struct cs_run_opts *o = P->o;
  double est = 0, t[1000];
  enum cs_status st;
  if ((st = fn(P, ctx, 1, &est, err)) != CS_OK || (st = fn(P, ctx, 1, &est, err)) != CS_OK)
    return st;
  int iters = iters_for(o, est), n = 0;
  while (n < o->max_trials && n < 1000) {
    if ((st = fn(P, ctx, iters, &t[n], err)) != CS_OK) return st;
    n++;
    if (n >= o->min_trials && settled(t, n, o->tol)) break;
  }
  summarise(t, n, out);
  return CS_OK;
}

struct gemm_ctx {
  struct dev *d;
  struct gemm *g;
};

static enum cs_status gemm_batch(struct probe *P, void *ctx, int iters, double *sec,
                                 struct cs_error *err) {
  struct gemm_ctx *c = ctx;
  enum cs_status st = gemm_enqueue(P, c->d, c->g, iters, err);
  if (st == CS_OK) st = elapsed(P, c->d, c->d->e0, c->d->e1, sec, err);
  *sec /= iters;
  return st;
}

struct mem_ctx {
  struct dev *d;
  int op;
  size_t bytes;
};

static enum cs_status mem_batch(struct probe *P, void *ctx, int iters, double *sec,
                                struct cs_error *err) {
  struct mem_ctx *c = ctx;
  struct dev *d = c->d;
  CUDA_TRY(d->id, cudaEventRecord(d->e0, d->s), "recording an event");
  for (int i = 0; i < iters; i++) {
    if (c->op == MB_COPY)
      CUDA_TRY(d->id, cudaMemcpyAsync(d->d, d->a, c->bytes, cudaMemcpyDeviceToDevice, d->s),
               "copying device memory");
    else
      CUDA_TRY(d->id, cudaMemsetAsync(d->d, i & 0xff, c->bytes, d->s), "setting device memory");
  }
  CUDA_TRY(d->id, cudaEventRecord(d->e1, d->s), "recording an event");
  enum cs_status st = elapsed(P, d, d->e0, d->e1, sec, err);
  *sec /= iters;
  return st;
}

/* The launch floor: iters minimal kernels (4-byte memsets) back to back; *sec per kernel, on the
 * GPU's clock (c->op LAUNCH_DEVICE) or the host's for the enqueueing (LAUNCH_HOST). */
static enum cs_status launch_batch(struct probe *P, void *ctx, int iters, double *sec,
                                   struct cs_error *err) {
  struct mem_ctx *c = ctx;
  struct dev *d = c->d;
  struct timespec h0, h1;
  int n = iters < LAUNCHES ? LAUNCHES : iters;
  CUDA_TRY(d->id, cudaStreamSynchronize(d->s), "waiting for the GPU");
  CUDA_TRY(d->id, cudaEventRecord(d->e0, d->s), "recording an event");
  clock_gettime(CLOCK_MONOTONIC, &h0);
  for (int i = 0; i < n; i++)
    CUDA_TRY(d->id, cudaMemsetAsync(d->d, i & 0xff, 4, d->s), "launching a minimal kernel");
  clock_gettime(CLOCK_MONOTONIC, &h1);
  CUDA_TRY(d->id, cudaEventRecord(d->e1, d->s), "recording an event");
  enum cs_status st = elapsed(P, d, d->e0, d->e1, sec, err);
  if (c->op == LAUNCH_HOST)
    *sec = (double)(h1.tv_sec - h0.tv_sec) + 1e-9 * (double)(h1.tv_nsec - h0.tv_nsec);
  *sec /= n;
  return st;
}

/* ---- the plan ------------------------------------------------------------------------------- */

static enum cs_status add(struct probe *P, struct point p, struct cs_error *err) {
  if (P->npts == P->cap) {
    size_t nc = P->cap ? 2 * P->cap : 256;
    struct point *q = realloc(P->pts, nc * sizeof *q);
    if (q == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
    P->pts = q;
    P->cap = nc;
  }
  P->pts[P->npts++] = p;
  return CS_OK;
}

/* The interference shapes: a layer's GEMMs at 8192 tokens and h = 4096 / 8192. */
static const double inter_shapes[][3] = {
    {8192, 4096, 4096}, {8192, 16384, 4096}, {8192, 4096, 16384}, {8192, 8192, 8192}};

static enum cs_status plan(struct probe *P, int fp8_ok, int can_interfere, struct cs_error *err) {
  const struct cs_run_opts *o = P->o;
  static const double ms[] = {2048, 4096, 8192, 16384};
  static const double hs[] = {1024, 2048, 4096, 8192, 16384};
  static const double skinny_m[] = {16, 128, 512};
  static const double skinny_h[] = {4096, 8192};
  static const double seqs[] = {2048, 4096, 8192};
  enum cs_status st = CS_OK;
  for (int t = 0; t < CS_PROBE_DTYPE_COUNT && st == CS_OK; t++) {
    if (!(o->probes & CS_PROBE_BIT(CS_PROBE_GEMM)) || !(o->probe_dtypes & CS_PROBE_BIT(t)))
      continue;
    if (t == CS_PROBE_FP8 && !fp8_ok) continue;
    double shp[160][3];
    int ns = 0;
    for (size_t i = 0; i < sizeof ms / sizeof *ms; i++)
      for (size_t j = 0; j < sizeof hs / sizeof *hs; j++) {
        double m = ms[i], h = hs[j];
        double s4[4][3] = {{m, 3 * h, h}, {m, h, h}, {m, 4 * h, h}, {m, h, 4 * h}};
        memcpy(shp[ns], s4, sizeof s4);
        ns += 4;
      }
    for (size_t i = 0; i < sizeof skinny_m / sizeof *skinny_m; i++)
      for (size_t j = 0; j < sizeof skinny_h / sizeof *skinny_h; j++) {
        double m = skinny_m[i], h = skinny_h[j];
        double s3[3][3] = {{m, h, h}, {m, 4 * h, h}, {m, h, 4 * h}};
        memcpy(shp[ns], s3, sizeof s3);
        ns += 3;
      }
    for (size_t i = 0; i < sizeof seqs / sizeof *seqs; i++) {
      double s2[2][3] = {{seqs[i], seqs[i], 128}, {seqs[i], 128, seqs[i]}};
      memcpy(shp[ns], s2, sizeof s2);
      ns += 2;
    }
    for (int i = 0; i < ns && st == CS_OK; i++) {
      double fl = 2 * shp[i][0] * shp[i][1] * shp[i][2];
      if (fl / guess_rate(t) > MAX_CALL_S) continue;
      st = add(P, (struct point){CS_PROBE_GEMM, t, shp[i][0], shp[i][1], shp[i][2], 0, 0}, err);
    }
  }
  if (o->probes & CS_PROBE_BIT(CS_PROBE_MEMBW)) {
    static const double copy_mib[] = {256, 1024, 4096}, set_mib[] = {1024, 4096};
    for (size_t i = 0; i < 3 && st == CS_OK; i++)
      st = add(P, (struct point){CS_PROBE_MEMBW, MB_COPY, 0, 0, 0, copy_mib[i] * MIB, 0}, err);
    for (size_t i = 0; i < 2 && st == CS_OK; i++)
      st = add(P, (struct point){CS_PROBE_MEMBW, MB_MEMSET, 0, 0, 0, set_mib[i] * MIB, 0}, err);
  }
  if (o->probes & CS_PROBE_BIT(CS_PROBE_LAUNCH)) {
    for (int i = LAUNCH_DEVICE; i <= LAUNCH_HOST && st == CS_OK; i++)
      st = add(P, (struct point){CS_PROBE_LAUNCH, i, 0, 0, 0, 0, 0}, err);
  }
  if ((o->probes & CS_PROBE_BIT(CS_PROBE_INTERFERENCE)) && can_interfere) {
    static const int idt[] = {CS_PROBE_BF16, CS_PROBE_FP8};
    for (size_t t = 0; t < 2; t++) {
      if (!(o->probe_dtypes & CS_PROBE_BIT(idt[t])) || (idt[t] == CS_PROBE_FP8 && !fp8_ok))
        continue;
      for (size_t i = 0; i < sizeof inter_shapes / sizeof *inter_shapes && st == CS_OK; i++)
        st = add(P,
                 (struct point){CS_PROBE_INTERFERENCE, idt[t], inter_shapes[i][0],
                                inter_shapes[i][1], inter_shapes[i][2], AR_BYTES, 0},
                 err);
    }
  }
  return st;
}

/* ---- set-up and output ---------------------------------------------------------------------- */

static enum cs_status dev_open(struct probe *P, struct dev *d, int id, size_t ca, size_t cb,
                               size_t cd, int comm, struct cs_error *err) {
  d->id = id;
  d->filled = -1;
  CUDA_TRY(id, cudaSetDevice(id), "selecting the device");
  CUDA_TRY(id, cudaStreamCreateWithFlags(&d->s, cudaStreamNonBlocking), "creating a stream");
  if (comm) {
    int least = 0, greatest = 0;
    CUDA_TRY(id, cudaDeviceGetStreamPriorityRange(&least, &greatest), "reading stream priorities");
    CUDA_TRY(id, cudaStreamCreateWithPriority(&d->s_comm, cudaStreamNonBlocking, greatest),
             "creating a stream");
    CUDA_TRY(id, cudaEventCreate(&d->c0), "creating an event");
    CUDA_TRY(id, cudaEventCreate(&d->c1), "creating an event");
    CUDA_TRY(id, cudaMalloc(&d->ar, (size_t)AR_BYTES), "allocating the all-reduce buffer");
    CUDA_TRY(id, cudaMemset(d->ar, 0, (size_t)AR_BYTES), "clearing the all-reduce buffer");
  }
  CUDA_TRY(id, cudaEventCreate(&d->e0), "creating an event");
  CUDA_TRY(id, cudaEventCreate(&d->e1), "creating an event");
  LT_TRY(id, cublasLtCreate(&d->lt), "creating a cuBLASLt handle");
  CUDA_TRY(id, cudaMalloc(&d->a, ca), "allocating A");
  CUDA_TRY(id, cudaMalloc(&d->b, cb), "allocating B");
  CUDA_TRY(id, cudaMalloc(&d->d, cd), "allocating D");
  CUDA_TRY(id, cudaMalloc(&d->ws, WORKSPACE), "allocating the cuBLASLt workspace");
  d->cap_a = ca, d->cap_b = cb, d->cap_d = cd;
  return CS_OK;
}

static void dev_close(struct dev *d) {
  if (d->lt == NULL && d->s == NULL) return;
  cudaSetDevice(d->id);
  cudaDeviceSynchronize();
  cudaFree(d->a), cudaFree(d->b), cudaFree(d->d), cudaFree(d->ws), cudaFree(d->ar);
  if (d->lt) cublasLtDestroy(d->lt);
  if (d->e0) cudaEventDestroy(d->e0);
  if (d->e1) cudaEventDestroy(d->e1);
  if (d->c0) cudaEventDestroy(d->c0);
  if (d->c1) cudaEventDestroy(d->c1);
  if (d->s) cudaStreamDestroy(d->s);
  if (d->s_comm) cudaStreamDestroy(d->s_comm);
  memset(d, 0, sizeof *d);
}

/* Settled clocks: a GPU that was idle runs its first tens of milliseconds of GEMMs at a boost
 * clock it cannot hold (a first 20 ms window ran 15% faster than later ones on an H200,
 * tests/data/h200-compute/README.md); a training step runs at the settled clock. Runs the
 * planned GEMM with the most flops (its operands fit the buffers by construction) back to back for
 * o->probe_settle_s before the first point. Errors: the GEMM's. */
static enum cs_status settle(struct probe *P, struct cs_error *err) {
  const struct cs_run_opts *o = P->o;
  const struct point *big = NULL;
  for (size_t i = 0; i < P->npts; i++) {
    const struct point *p = &P->pts[i];
    if (!p->skip && p->kind == CS_PROBE_GEMM &&
        (big == NULL || p->m * p->n * p->k > big->m * big->n * big->k))
      big = p;
  }
  if (big == NULL || o->probe_settle_s <= 0) return CS_OK;
  int t = big->dtype;
  struct dev *d = &P->dev[0];
  CUDA_TRY(d->id, cudaSetDevice(d->id), "selecting the device");
  enum cs_status st = fill(P, d, t, err);
  if (st != CS_OK) return st;
  struct gemm g;
  if ((st = gemm_init(P, d, t, big->m, big->n, big->k, &g, NULL, 1, NULL, err)) != CS_OK) return st;
  struct gemm_ctx c = {d, &g};
  double est = 0, done = 0, sec = 0;
  st = gemm_batch(P, &c, 1, &est, err);
  /* batches of about 100 ms until the settle time is spent */
  int iters = est > 0 ? (int)ceil(0.1 / est) : 1;
  while (st == CS_OK && done < o->probe_settle_s) {
    st = gemm_batch(P, &c, iters, &sec, err);
    done += sec * iters;
  }
  gemm_free(&g);
  return st;
}

/* ---- the three probes ----------------------------------------------------------------------- */

static enum cs_status run_gemm(struct probe *P, const struct point *p, struct cs_probe_row *r,
                               struct cs_error *err) {
  struct dev *d = &P->dev[0];
  CUDA_TRY(d->id, cudaSetDevice(d->id), "selecting the device");
  enum cs_status st = fill(P, d, p->dtype, err);
  if (st != CS_OK) return st;
  struct gemm g;
  cublasLtMatmulHeuristicResult_t alts[MAX_ALGOS];
  int nalts = P->o->gemm_algos > 1 ? P->o->gemm_algos : 1, found = 1;
  if (nalts > MAX_ALGOS) nalts = MAX_ALGOS;
  st = gemm_init(P, d, p->dtype, p->m, p->n, p->k, &g, nalts > 1 ? alts : NULL, nalts, &found, err);
  if (st != CS_OK) return st;
  struct gemm_ctx c = {d, &g};
  if (nalts > 1 && found > 1) {
    /* one batch of about a trial per candidate; keep the fastest */
    double best = INFINITY, est = 0, t = 0;
    int pick = 0;
    for (int a = 0; a < found && st == CS_OK; a++) {
      g.heur = alts[a];
      st = gemm_batch(P, &c, 1, &est, err);
      if (st == CS_OK) st = gemm_batch(P, &c, iters_for(P->o, est), &t, err);
      if (st == CS_ERR_UNSUPPORTED || st == CS_ERR_EXTERNAL) {
        /* an algorithm the heuristic offered but that does not run here: pass it over */
        cudaGetLastError();
        st = CS_OK;
        continue;
      }
      if (st == CS_OK && t < best) best = t, pick = a;
    }
    g.heur = alts[pick];
  }
  struct stats s = {0, 0, 0, 0};
  if (st == CS_OK) st = measure(P, gemm_batch, &c, &s, err);
  gemm_free(&g);
  if (st != CS_OK) return st;
  double flops = 2 * p->m * p->n * p->k;
  r->time_us = 1e6 * s.med, r->time_min_us = 1e6 * s.min, r->time_max_us = 1e6 * s.max;
  r->trials = s.n;
  r->tflops = flops / s.med / 1e12;
  if (P->peak[p->dtype] > 0) r->frac_peak = flops / s.med / P->peak[p->dtype];
  return CS_OK;
}

static enum cs_status run_membw(struct probe *P, const struct point *p, struct cs_probe_row *r,
                                struct cs_error *err) {
  struct dev *d = &P->dev[0];
  CUDA_TRY(d->id, cudaSetDevice(d->id), "selecting the device");
  struct mem_ctx c = {d, p->dtype, (size_t)p->bytes};
  struct stats s = {0, 0, 0, 0};
  enum cs_status st = measure(P, mem_batch, &c, &s, err);
  if (st != CS_OK) return st;
  r->time_us = 1e6 * s.med, r->time_min_us = 1e6 * s.min, r->time_max_us = 1e6 * s.max;
  r->trials = s.n;
  r->GBps = r->bytes / s.med / 1e9;
  if (P->peak_bw > 0) r->frac_peak = r->bytes / s.med / P->peak_bw;
  return CS_OK;
}

static enum cs_status run_launch(struct probe *P, const struct point *p, struct cs_probe_row *r,
                                 struct cs_error *err) {
  struct dev *d = &P->dev[0];
  CUDA_TRY(d->id, cudaSetDevice(d->id), "selecting the device");
  struct mem_ctx c = {d, p->dtype, 4};
  struct stats s = {0, 0, 0, 0};
  enum cs_status st = measure(P, launch_batch, &c, &s, err);
  if (st != CS_OK) return st;
  r->time_us = 1e6 * s.med, r->time_min_us = 1e6 * s.min, r->time_max_us = 1e6 * s.max;
  r->trials = s.n;
  return CS_OK;
}

#ifdef CS_HAVE_NCCL
static enum cs_status nccl_fail(struct cs_error *err, const struct probe *P, ncclResult_t r,
                                const char *what) {
  const char *last = ncclGetLastError(NULL);
  return cs_error_set(err, CS_ERR_EXTERNAL, "rank 0 on %s: %s: NCCL error %s%s%s", P->host, what,
                      ncclGetErrorString(r), last && *last ? ": " : "", last ? last : "");
}

/* Queues n in-place all-reduces of AR_BYTES on every GPU's communication stream. */
static enum cs_status ar_enqueue(struct probe *P, int n, struct cs_error *err) {
  for (int j = 0; j < n; j++) {
    ncclResult_t r = ncclGroupStart();
    for (int i = 0; i < P->ndev && r == ncclSuccess; i++)
      r = ncclAllReduce(P->dev[i].ar, P->dev[i].ar, (size_t)(AR_BYTES / 4), ncclFloat, ncclSum,
                        P->comm[i], P->dev[i].s_comm);
    ncclResult_t r2 = ncclGroupEnd();
    if (r == ncclSuccess) r = r2;
    if (r != ncclSuccess) return nccl_fail(err, P, r, "queueing an all_reduce");
  }
  return CS_OK;
}

/* Times n all-reduces alone: seconds per operation, the maximum over the GPUs. */
static enum cs_status ar_time(struct probe *P, int n, double *sec, struct cs_error *err) {
  for (int i = 0; i < P->ndev; i++)
    CUDA_TRY(P->dev[i].id, cudaEventRecord(P->dev[i].c0, P->dev[i].s_comm), "recording an event");
  enum cs_status st = ar_enqueue(P, n, err);
  if (st != CS_OK) return st;
  *sec = 0;
  for (int i = 0; i < P->ndev; i++) {
    CUDA_TRY(P->dev[i].id, cudaEventRecord(P->dev[i].c1, P->dev[i].s_comm), "recording an event");
    double t = 0;
    if ((st = elapsed(P, &P->dev[i], P->dev[i].c0, P->dev[i].c1, &t, err)) != CS_OK) return st;
    if (t / n > *sec) *sec = t / n;
  }
  return CS_OK;
}

/* The GEMM batch on every GPU, behind nar all-reduces when nar > 0; the maximum over the GPUs. */
static enum cs_status inter_batch(struct probe *P, struct gemm *g, int iters, int nar, double *sec,
                                  struct cs_error *err) {
  enum cs_status st = CS_OK;
  if (nar > 0 && (st = ar_enqueue(P, nar, err)) != CS_OK) return st;
  for (int i = 0; i < P->ndev && st == CS_OK; i++)
    st = gemm_enqueue(P, &P->dev[i], &g[i], iters, err);
  *sec = 0;
  for (int i = 0; i < P->ndev && st == CS_OK; i++) {
    double t = 0;
    st = elapsed(P, &P->dev[i], P->dev[i].e0, P->dev[i].e1, &t, err);
    if (t / iters > *sec) *sec = t / iters;
  }
  for (int i = 0; i < P->ndev && st == CS_OK && nar > 0; i++)
    CUDA_TRY(P->dev[i].id, cudaStreamSynchronize(P->dev[i].s_comm), "waiting for the all_reduces");
  return st;
}

static enum cs_status run_interference(struct probe *P, const struct point *p, double t_ar,
                                       struct cs_probe_row *r, struct cs_error *err) {
  const struct cs_run_opts *o = P->o;
  struct gemm g[MAXDEV];
  memset(g, 0, sizeof g);
  enum cs_status st = CS_OK;
  int ng = 0;
  for (; ng < P->ndev && st == CS_OK; ng++) {
    cudaError_t ce = cudaSetDevice(P->dev[ng].id);
    if (ce != cudaSuccess) st = cuda_fail(err, P, P->dev[ng].id, ce, "selecting the device");
    if (st == CS_OK) st = fill(P, &P->dev[ng], p->dtype, err);
    if (st == CS_OK)
      st = gemm_init(P, &P->dev[ng], p->dtype, p->m, p->n, p->k, &g[ng], NULL, 0, NULL, err);
  }
  double est = 0, alone[1000], cont[1000];
  int n = 0;
  if (st == CS_OK) st = inter_batch(P, g, 1, 0, &est, err);
  if (st == CS_OK) st = inter_batch(P, g, 1, 0, &est, err);
  int iters = iters_for(o, est);
  /* enough all-reduces to outlast the batch twice over, were the GEMMs not slowed at all */
  double want = ceil(2 * iters * est / t_ar) + 2;
  int nar = want > 2000 ? 2000 : (int)want;
  while (st == CS_OK && n < o->max_trials && n < 1000) {
    st = inter_batch(P, g, iters, 0, &alone[n], err);
    if (st == CS_OK) st = inter_batch(P, g, iters, nar, &cont[n], err);
    if (st != CS_OK) break;
    n++;
    if (n >= o->min_trials && settled(alone, n, o->tol) && settled(cont, n, o->tol)) break;
  }
  for (int i = 0; i < ng; i++)
    gemm_free(&g[i]);
  if (st != CS_OK) return st;
  struct stats sa = {0, 0, 0, 0}, sc = {0, 0, 0, 0};
  summarise(alone, n, &sa);
  summarise(cont, n, &sc);
  double flops = 2 * p->m * p->n * p->k;
  r->time_us = 1e6 * sc.med, r->time_min_us = 1e6 * sc.min, r->time_max_us = 1e6 * sc.max;
  r->trials = n;
  r->tflops = flops / sc.med / 1e12;
  if (P->peak[p->dtype] > 0) r->frac_peak = flops / sc.med / P->peak[p->dtype];
  r->factor = sc.med / sa.med;
  return CS_OK;
}
#endif

/* ---- the run -------------------------------------------------------------------------------- */

/* This host's name, the GPUs the probes drive (all visible, --ngpus, or one per process under
 * MPI), the first one's model, compute capability and datasheet peaks, and the run's source tag,
 * into P. Errors: CS_ERR_EXTERNAL with no device, CS_ERR_USAGE for more GPUs than visible. */
static enum cs_status find_devices(struct probe *P, int nprocs, struct cs_error *err) {
  const struct cs_run_opts *o = P->o;
  if (gethostname(P->host, sizeof P->host) != 0) snprintf(P->host, sizeof P->host, "?");
  P->host[sizeof P->host - 1] = '\0';
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    return cs_error_set(err, CS_ERR_EXTERNAL, "%s: probes: no CUDA device visible (%s)", P->host,
                        e != cudaSuccess ? cudaGetErrorString(e) : "count is 0");
  P->ndev = o->ngpus > 0 ? o->ngpus : count;
  if (P->ndev > count || P->ndev > MAXDEV)
    return cs_error_set(err, CS_ERR_USAGE, "%s: probes: %d GPUs asked for, %d visible (at most %d)",
                        P->host, P->ndev, count, MAXDEV);
  if (nprocs > 1) P->ndev = 1; /* under MPI the other GPUs belong to other processes */
  struct cudaDeviceProp prop;
  if ((e = cudaGetDeviceProperties(&prop, 0)) != cudaSuccess)
    return cuda_fail(err, P, 0, e, "reading the device properties");
  snprintf(P->gpu, sizeof P->gpu, "%.63s", prop.name);
  P->cc_major = prop.major, P->cc_minor = prop.minor;
  datasheet(P);
  char tbuf[32];
  time_t now = time(NULL);
  struct tm tmv;
  strftime(tbuf, sizeof tbuf, "%Y%m%dT%H%M%SZ", gmtime_r(&now, &tmv));
  snprintf(P->source, sizeof P->source, "commscale-run:%.60s:%s", P->host, tbuf);
  return CS_OK;
}

/* Whether the interference probe can run here (asked for, NCCL built in, one process driving at
 * least 2 GPUs); says why not on the log when it was asked for. */
static int interference_possible(const struct probe *P, int nprocs) {
  int can_interfere = 0;
  if (P->o->probes & CS_PROBE_BIT(CS_PROBE_INTERFERENCE)) {
#ifdef CS_HAVE_NCCL
    if (nprocs > 1)
      note(P, "interference skipped: %s%s",
           "it needs one process driving every GPU of the node "
           "(run the probes without mpirun)",
           "");
    else if (P->ndev < 2)
      note(P, "interference skipped: %s%s", "it needs at least 2 GPUs and this process has 1", "");
    else
      can_interfere = 1;
#else
    (void)nprocs;
    note(P, "interference skipped: %s%s", "this commscale-run was built without NCCL", "");
#endif
  }
  return can_interfere;
}

/* Buffer sizes for the planned points: cap[0..2] the A, B and D of the first GPU (the largest
 * operands of any point, the copies' buffers in A and D), cap[3..5] those of the interference
 * probe's other GPUs. */
static void buffer_sizes(const struct probe *P, size_t cap[6]) {
  size_t ca = 1, cb = 1, cd = 256, ia = 1, ib = 1, id = 1; /* cd: the launch floor's memsets */
  for (size_t i = 0; i < P->npts; i++) {
    const struct point *p = &P->pts[i];
    if (p->kind == CS_PROBE_MEMBW) {
      if (p->bytes > ca) ca = (size_t)p->bytes;
      if (p->bytes > cd) cd = (size_t)p->bytes;
      continue;
    }
    size_t a = esz_ab(p->dtype) * (size_t)(p->m * p->k),
           b = esz_ab(p->dtype) * (size_t)(p->k * p->n),
           d = esz_d(p->dtype) * (size_t)(p->m * p->n);
    ca = a > ca ? a : ca, cb = b > cb ? b : cb, cd = d > cd ? d : cd;
    if (p->kind == CS_PROBE_INTERFERENCE)
      ia = a > ia ? a : ia, ib = b > ib ? b : ib, id = d > id ? d : id;
  }
  cap[0] = ca, cap[1] = cb, cap[2] = cd, cap[3] = ia, cap[4] = ib, cap[5] = id;
}

/* --dry-run: one line per planned point on the table (none with --quiet), "(done)" on those
 * --resume skips. */
static void print_plan(const struct probe *P) {
  if (P->table == NULL) return;
  for (size_t i = 0; i < P->npts; i++) {
    struct cs_probe_row r;
    cs_probe_cuda_row_ident(P, &P->pts[i], &r);
    fprintf(P->table, "%-12s %-6s m %6.0f n %6.0f k %6.0f bytes %.0f%s\n",
            cs_probe_kind_name(r.kind), r.dtype, r.m, r.n, r.k, r.bytes,
            P->pts[i].skip ? "  (done)" : "");
  }
}

#ifdef CS_HAVE_NCCL
/* The interference probe's communicator over P's GPUs, and its all-reduce timed alone into
 * *t_ar (shown on the table). Errors: NCCL's and CUDA's, mapped. */
static enum cs_status interference_setup(struct probe *P, double *t_ar, struct cs_error *err) {
  const struct cs_run_opts *o = P->o;
  int devs[MAXDEV];
  for (int i = 0; i < P->ndev; i++)
    devs[i] = P->dev[i].id;
  progress(o, "creating the communicator of the interference probe");
  ncclResult_t nr = ncclCommInitAll(P->comm, P->ndev, devs);
  progress(o, NULL);
  if (nr != ncclSuccess) return nccl_fail(err, P, nr, "ncclCommInitAll");
  P->have_comm = 1;
  progress(o, "timing the all_reduce of the interference probe alone");
  enum cs_status st = ar_time(P, 3, t_ar, err);
  if (st == CS_OK) st = ar_time(P, 10, t_ar, err);
  progress(o, NULL);
  if (st != CS_OK) return st;
  if (P->table)
    fprintf(P->table,
            "# interference all_reduce: %.0f MiB float in %.1f us alone (%.0f GB/s "
            "algbw) on %d GPUs\n",
            AR_BYTES / MIB, 1e6 * *t_ar, AR_BYTES / *t_ar / 1e9, P->ndev);
  return CS_OK;
}
#endif

/* Measures every planned point not done yet, one row each to the CSV and the table; a point
 * cuBLASLt has no algorithm for is noted and skipped. t_ar: the interference all-reduce alone.
 * Errors: the probes' and cs_probe_write_row's. */
static enum cs_status measure_points(struct probe *P, double t_ar, struct cs_error *err) {
  const struct cs_run_opts *o = P->o;
  enum cs_status st = CS_OK;
  (void)t_ar; /* used by the interference probe (NCCL builds) */
  for (size_t i = 0; i < P->npts && st == CS_OK; i++) {
    const struct point *p = &P->pts[i];
    if (p->skip) continue;
    struct cs_probe_row r;
    cs_probe_cuda_row_ident(P, p, &r);
    char what[160];
    snprintf(what, sizeof what, "probe %s %s %.0fx%.0fx%.0f (%.0f bytes)",
             cs_probe_kind_name(p->kind), r.dtype, p->m, p->n, p->k, r.bytes);
    progress(o, what);
    if (p->kind == CS_PROBE_GEMM)
      st = run_gemm(P, p, &r, err);
    else if (p->kind == CS_PROBE_MEMBW)
      st = run_membw(P, p, &r, err);
    else if (p->kind == CS_PROBE_LAUNCH)
      st = run_launch(P, p, &r, err);
#ifdef CS_HAVE_NCCL
    else
      st = run_interference(P, p, t_ar, &r, err);
#endif
    progress(o, NULL);
    if (st == CS_ERR_UNSUPPORTED) {
      /* no cuBLASLt algorithm for this shape and precision: say so, keep going */
      note(P, "%s: skipped (%s)", what, err->msg);
      cs_error_set(err, CS_OK, " ");
      st = CS_OK;
      continue;
    }
    if (st != CS_OK) break;
    if ((st = cs_probe_write_row(P->csv, &r, err)) != CS_OK) break;
    cs_probe_cuda_table_row(P, &r);
  }
  return st;
}

enum cs_status cs_probe_run(const struct cs_run_opts *o, int nprocs, int proc,
                            struct cs_error *err) {
  if (proc != 0) return CS_OK;
  struct probe *P = calloc(1, sizeof *P);
  if (P == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  P->o = o;
  P->table = o->quiet ? NULL : o->table ? o->table : stdout;
  enum cs_status st = find_devices(P, nprocs, err);
  if (st != CS_OK) goto out;
  int fp8_ok = P->cc_major * 10 + P->cc_minor >= 89;
  if ((o->probes & CS_PROBE_BIT(CS_PROBE_GEMM)) && (o->probe_dtypes & CS_PROBE_BIT(CS_PROBE_FP8)) &&
      !fp8_ok)
    note(P, "fp8 GEMMs skipped: %s%s has no fp8 tensor cores (compute capability < 8.9)", P->gpu,
         "");
  int can_interfere = interference_possible(P, nprocs);
  if ((st = plan(P, fp8_ok, can_interfere, err)) != CS_OK) goto out;
  size_t cap[6];
  buffer_sizes(P, cap);
  if ((st = cs_probe_cuda_open_output(P, err)) != CS_OK) goto out;
  size_t todo = 0;
  for (size_t i = 0; i < P->npts; i++)
    todo += !P->pts[i].skip;
  if (o->log)
    fprintf(o->log, "commscale-run: probes on %s: %zu points to measure%s\n", P->gpu, todo,
            o->dry_run ? " (dry run)" : "");
  if (o->dry_run) {
    print_plan(P);
    goto out;
  }
  if (todo == 0) goto out;

  progress(o, "allocating the probe buffers");
  if ((st = dev_open(P, &P->dev[0], 0, cap[0], cap[1], cap[2], can_interfere, err)) != CS_OK)
    goto out;
  for (int i = 1; i < P->ndev && can_interfere && st == CS_OK; i++)
    st = dev_open(P, &P->dev[i], i, cap[3], cap[4], cap[5], 1, err);
  progress(o, NULL);
  if (st != CS_OK) goto out;
  cs_probe_cuda_table_head(P);
  double t_ar = 0;
#ifdef CS_HAVE_NCCL
  if (can_interfere && (st = interference_setup(P, &t_ar, err)) != CS_OK) goto out;
#endif
  progress(o, "settling the clocks");
  st = settle(P, err);
  progress(o, NULL);
  if (st == CS_OK) st = measure_points(P, t_ar, err);

out:
  if (P->csv && fclose(P->csv) != 0 && st == CS_OK)
    st = cs_error_set(err, CS_ERR_IO, "%s: cannot write: %s", o->probe_out, strerror(errno));
#ifdef CS_HAVE_NCCL
  if (P->have_comm)
    for (int i = 0; i < P->ndev; i++)
      ncclCommDestroy(P->comm[i]);
#endif
  for (int i = 0; i < MAXDEV; i++)
    dev_close(&P->dev[i]);
  free(P->pts);
  free(P);
  return st;
}

#endif
