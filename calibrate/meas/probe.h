/* probe.h — the compute-probe CSV: what one GPU's matrix units and memory deliver, and how much a
 * concurrent all-reduce slows its GEMMs.
 *
 * Seven kinds of row, one file. The runner (commscale-run --probes) measures the first four:
 *   gemm          one m x n x k matrix product (D = A^T B through cuBLASLt) in one precision:
 *                 its time and TFLOP/s (2 m n k per product), and the fraction of the GPU's
 *                 datasheet peak when the runner knows the GPU;
 *   membw         one device-to-device copy (dtype "copy": bytes = read + written) or one memset
 *                 (dtype "memset": bytes = written) of device memory, in GB/s;
 *   interference  the same GEMM on every local GPU while an all-reduce of `bytes` runs on another
 *                 stream of each: time_us is the GEMM under contention and factor its time over
 *                 the time alone (1 = no slowdown);
 *   launch        the kernel-launch floor: dtype "device" is the GPU time per kernel of a queue of
 *                 back-to-back minimal kernels (4-byte memsets), "host" the CPU time to enqueue
 *                 one (cudaMemsetAsync), "eager" the CPU time per operator of a framework's eager
 *                 mode and "eager_layer" its CPU time per transformer layer of a training step
 *                 (forward, backward, optimizer) with m = the kernels that layer launches
 *                 (written by tests/gpu/torch_probes.py); otherwise m, n, k and bytes are 0.
 * and a framework-side script (tests/gpu/torch_probes.py) writes the other three:
 *   attn_fwd      a fused (flash) attention forward, causal: m = sequence, n = head dimension,
 *   attn_bwd      k = batch x heads; tflops counts 4 s^2 d (b h) / 2 for the forward and 2.5 times
 *                 that for the backward (the backward's five products over the forward's two);
 *   memop         one memory-bound kernel (dtype names it: layernorm_fwd, gelu_bwd, adamw, ...):
 *                 bytes read + written, and the GB/s reached.
 *
 * Like the measurements CSV (meas.h), this module needs nothing but the C library, because the
 * runner that writes it builds on GPU nodes; the runner appends one row at a time and flushes it.
 * The compute model reads the gemm rows back through cs_probe_gemm_table().
 *
 * File format (documented for users in docs/calibrate.md):
 *   # commscale probes v1                     <- first line
 *   # key: value                              <- provenance (gpu, cuda, cublaslt, command, ...)
 *   kind,dtype,m,n,k,bytes,time_us,...        <- the header, exactly CS_PROBE_HEADER
 *   gemm,bf16,8192,8192,8192,402653184,1712.3,...
 * Columns are found by header name; unknown statistics are empty fields.
 */
#ifndef CS_PROBE_H
#define CS_PROBE_H

#include <stddef.h>
#include <stdio.h>

#include "gemm_point.h"
#include "meas.h"
#include "status.h"

#define CS_PROBE_MAGIC "# commscale probes v1"
#define CS_PROBE_HEADER                                                                            \
  "kind,dtype,m,n,k,bytes,time_us,time_min_us,time_max_us,trials,tflops,GBps,frac_peak,factor,"    \
  "gpu,source"

enum cs_probe_kind {
  CS_PROBE_GEMM,
  CS_PROBE_MEMBW,
  CS_PROBE_INTERFERENCE,
  CS_PROBE_LAUNCH,
  CS_PROBE_RUNNER_KIND_COUNT, /* the kinds above are the runner's; those below come from files */
  CS_PROBE_ATTN_FWD = CS_PROBE_RUNNER_KIND_COUNT,
  CS_PROBE_ATTN_BWD,
  CS_PROBE_MEMOP,
  CS_PROBE_KIND_COUNT
};

/* The GEMM precisions probed. Names follow the plan's precision names (plan.h): "bf16", "fp16",
 * "tf32" (fp32 data, TF32 tensor cores), "fp32" (plain fp32 arithmetic) and "fp8" (e4m3 inputs,
 * bf16 output, fp32 accumulation). */
enum cs_probe_dtype {
  CS_PROBE_BF16,
  CS_PROBE_FP16,
  CS_PROBE_TF32,
  CS_PROBE_FP32,
  CS_PROBE_FP8,
  CS_PROBE_DTYPE_COUNT
};

/* A set of kinds or dtypes, one bit each (1u << kind). */
#define CS_PROBE_BIT(x) (1u << (unsigned)(x))
#define CS_PROBE_ALL_KINDS (CS_PROBE_BIT(CS_PROBE_RUNNER_KIND_COUNT) - 1u) /* the runner's */
#define CS_PROBE_ALL_DTYPES (CS_PROBE_BIT(CS_PROBE_DTYPE_COUNT) - 1u)

struct cs_probe_row {
  enum cs_probe_kind kind;
  char dtype[24];     /* a cs_probe_dtype name; membw: copy, memset; launch: device, host, eager;
                         memop: the operation */
  double m, n, k;     /* GEMM shape; 0 for membw */
  double bytes;       /* gemm: A + B + D bytes; membw: bytes moved; interference: all-reduce size */
  double time_us;     /* median of the trials, per operation */
  double time_min_us; /* NAN when unknown */
  double time_max_us; /* NAN when unknown */
  int trials;         /* 0 when unknown */
  double tflops;      /* gemm and interference; NAN for membw */
  double GBps;        /* membw; NAN otherwise */
  double frac_peak;   /* of the datasheet peak; NAN when the GPU is not known */
  double factor;      /* interference: time under contention / time alone; NAN otherwise */
  char gpu[64];       /* the device's name as CUDA gives it ("NVIDIA H200") */
  char source[128];   /* the runner's run id, or "file:line" */
};

/* The rows and provenance of one or more files. Initialise with cs_probe_set_init(), release with
 * cs_probe_set_fini(); the set owns its arrays. */
struct cs_probe_set {
  struct cs_probe_row *rows;
  size_t n, cap;
  struct cs_csv_meta *meta;
  size_t n_meta, cap_meta;
};

void cs_probe_set_init(struct cs_probe_set *set);
void cs_probe_set_fini(struct cs_probe_set *set);

/* Appends a copy of row. CS_ERR_NOMEM on allocation failure (the set is unchanged). */
enum cs_status cs_probe_set_push(struct cs_probe_set *set, const struct cs_probe_row *row,
                                 struct cs_error *err);

/* Adds or replaces provenance key (truncated to fit). CS_ERR_NOMEM as above. */
enum cs_status cs_probe_set_meta(struct cs_probe_set *set, const char *key, const char *value,
                                 struct cs_error *err);

/* The value for key, or NULL. */
const char *cs_probe_get_meta(const struct cs_probe_set *set, const char *key);

/* "gemm", "membw", "interference", "launch", "attn_fwd", "attn_bwd", "memop"; "?" when out of
 * range. */
const char *cs_probe_kind_name(enum cs_probe_kind k);
/* 0 on success, -1 if unknown (*out untouched). */
int cs_probe_kind_parse(const char *name, enum cs_probe_kind *out);
/* "bf16", "fp16", "tf32", "fp32", "fp8"; "?" when out of range. */
const char *cs_probe_dtype_name(enum cs_probe_dtype d);
/* Accepts the names above and bfloat16, half, float, fp8_e4m3; 0 on success, -1 if unknown. */
int cs_probe_dtype_parse(const char *name, enum cs_probe_dtype *out);

/* Parses a comma-separated list of the runner's kinds ("gemm,membw", "all") or dtypes ("bf16,fp8",
 * "all") into a set of bits. CS_ERR_USAGE naming the bad item; *bits untouched then. */
enum cs_status cs_probe_parse_kinds(const char *list, unsigned *bits, struct cs_error *err);
enum cs_status cs_probe_parse_dtypes(const char *list, unsigned *bits, struct cs_error *err);

/* Writes the magic line, one "# key: value" line per entry of meta_from (may be NULL) and the
 * header to f, and flushes it. CS_ERR_IO when the write fails. */
enum cs_status cs_probe_write_header(FILE *f, const struct cs_probe_set *meta_from,
                                     struct cs_error *err);

/* Writes one row and flushes f, so that a killed writer leaves every finished row. */
enum cs_status cs_probe_write_row(FILE *f, const struct cs_probe_row *row, struct cs_error *err);

/* Reads a probe CSV and appends its rows and provenance to set. Every field is validated where it
 * enters; the first bad one ends the read with "path:line:col: column X: expected ...". On error
 * the rows read so far stay in set. */
enum cs_status cs_probe_read_file(const char *path, struct cs_probe_set *set, struct cs_error *err);

/* 1 when the two rows are the same probe point (kind, dtype, shape, bytes, GPU): what --resume
 * skips. */
int cs_probe_same_point(const struct cs_probe_row *a, const struct cs_probe_row *b);

/* Turns the gemm rows of dtype into GEMM efficiencies for the compute model (compute.h):
 * efficiency = measured FLOP/s / peak, where peak is the compute model's own peak for that
 * precision (cs_compute's c->peak), so that the model's time flops / (peak * efficiency) is the
 * measured time. Rows of the same shape (repeated runs) are averaged. *pts receives a malloc'ed
 * array of *n points (the caller frees it with free()). CS_ERR_RANGE for a peak <= 0;
 * CS_ERR_UNSUPPORTED when set holds no gemm row of dtype (the message lists the dtypes it holds);
 * CS_ERR_NOMEM. On failure *pts is NULL and *n is 0. */
enum cs_status cs_probe_gemm_table(const struct cs_probe_set *set, const char *dtype, double peak,
                                   struct cs_gemm_point **pts, size_t *n, struct cs_error *err);

/* Turns the attn_fwd/attn_bwd rows into the compute model's attention table: efficiency =
 * measured TFLOP/s (on executed FLOPs, as the rows count them) / peak. Rows of one shape are
 * averaged; a shape needs both directions. *pts is malloc'ed (free()). CS_ERR_UNSUPPORTED when
 * the set holds no attention row, CS_ERR_RANGE for a peak <= 0, CS_ERR_NOMEM. */
enum cs_status cs_probe_attn_table(const struct cs_probe_set *set, double peak,
                                   struct cs_attn_point **pts, size_t *n, struct cs_error *err);

/* The memory-bound classes (enum cs_mem_class) the memop and membw rows measure, in the compute
 * model's bytes per second: each row's time is set against the bytes the model counts for that
 * kernel at the row's shape (workload.c, activations of act_bytes each: LayerNorm 2·T·h forward
 * and twice that backward, measured as layernorm_fwd + layernorm_bwd; GELU 2·T·f, likewise; the
 * residual add 3·T·h; softmax 2·m·n; cross-entropy 12 bytes per logit forward and 24 backward,
 * measured together; the optimizer adam_bytes per parameter; the query/key/value gradient
 * concatenation 2·m·n (qkv_grad_cat); a bias gradient m·n (bias_grad); the cast of an m x n
 * weight gradient to fp32 m·n·(4 + act_bytes) (grad_cast); copies as measured). bw[i] is set
 * for the classes the set measures (bit i of *have); the others are left alone. Several rows of
 * one class: the median. */
void cs_probe_memop_bw(const struct cs_probe_set *set, double act_bytes, double adam_bytes,
                       double bw[CS_MEM_CLASS_COUNT], unsigned *have);

/* The launch rows: the GPU's time per minimal kernel (launch,device), seconds, left alone when the
 * set lacks it. host_layer_s is left alone too: the eager_layer rows of torch_probes.py (a slope
 * over 2..34 layers of 15 steps each) scattered by 1.5x between runs of one GPU, so the host time
 * per layer comes from the GPU file (host_probe.py's slope over 4..36 layers at three widths). */
void cs_probe_launch(const struct cs_probe_set *set, double *kernel_s, double *host_layer_s);

#endif
