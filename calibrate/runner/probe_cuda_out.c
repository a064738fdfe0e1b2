/* probe_cuda_out.c — what the compute probes write besides their rows: the row identity that
 * --resume compares, the provenance block of a new probe CSV (tool, date, GPU, CUDA and NCCL
 * versions, timing, datasheet peaks), appending to an existing one, and the table on stdout; see
 * probe_cuda_impl.h. probe_cuda.c plans and measures.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "probe_cuda_impl.h"
#include "runfile.h"

/* See probe_cuda_impl.h. */
void cs_probe_cuda_row_ident(const struct probe *P, const struct point *p, struct cs_probe_row *r) {
  memset(r, 0, sizeof *r);
  r->kind = p->kind;
  snprintf(r->dtype, sizeof r->dtype, "%s",
           p->kind == CS_PROBE_MEMBW    ? (p->dtype == MB_COPY ? "copy" : "memset")
           : p->kind == CS_PROBE_LAUNCH ? (p->dtype == LAUNCH_DEVICE ? "device" : "host")
                                        : cs_probe_dtype_name((enum cs_probe_dtype)p->dtype));
  r->m = p->m, r->n = p->n, r->k = p->k;
  if (p->kind == CS_PROBE_GEMM)
    r->bytes = (double)esz_ab(p->dtype) * (p->m * p->k + p->k * p->n) +
               (double)esz_d(p->dtype) * p->m * p->n;
  else if (p->kind == CS_PROBE_MEMBW)
    r->bytes = p->dtype == MB_COPY ? 2 * p->bytes : p->bytes;
  else if (p->kind == CS_PROBE_LAUNCH)
    r->bytes = 0;
  else
    r->bytes = p->bytes;
  r->time_min_us = r->time_max_us = r->tflops = r->GBps = r->frac_peak = r->factor = NAN;
  snprintf(r->gpu, sizeof r->gpu, "%s", P->gpu);
  snprintf(r->source, sizeof r->source, "%s", P->source);
}

/* An existing probe file is appended to; with --resume the points it holds are skipped. */
static enum cs_status scan_done(void *ctx, const char *path, struct cs_error *err) {
  struct probe *P = ctx;
  const struct cs_run_opts *o = P->o;
  struct cs_probe_set old;
  cs_probe_set_init(&old);
  enum cs_status st = cs_probe_read_file(path, &old, err);
  if (st != CS_OK) {
    cs_probe_set_fini(&old);
    cs_error_prefix(err, "--probe-output (not appending to it)");
    return st;
  }
  size_t skipped = 0;
  if (o->resume)
    for (size_t i = 0; i < P->npts; i++) {
      struct cs_probe_row r;
      cs_probe_cuda_row_ident(P, &P->pts[i], &r);
      for (size_t j = 0; j < old.n && !P->pts[i].skip; j++)
        P->pts[i].skip = cs_probe_same_point(&r, &old.rows[j]);
      skipped += P->pts[i].skip;
    }
  if (o->log)
    fprintf(o->log, "commscale-run: probes: %s holds %zu rows; appending%s (%zu points done)\n",
            path, old.n, o->resume ? ", skipping those" : "", skipped);
  cs_probe_set_fini(&old);
  return CS_OK;
}

/* The provenance of a new probe file, then its column header. */
static enum cs_status write_header(void *ctx, FILE *f, struct cs_error *err) {
  struct probe *P = ctx;
  const struct cs_run_opts *o = P->o;
  struct cs_probe_set meta;
  cs_probe_set_init(&meta);
  char buf[256], tbuf[64];
  time_t now = time(NULL);
  struct tm tmv;
  strftime(tbuf, sizeof tbuf, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tmv));
  cs_probe_set_meta(&meta, "tool", "commscale-run " CS_VERSION, NULL);
  cs_probe_set_meta(&meta, "date", tbuf, NULL);
  cs_probe_set_meta(&meta, "run", P->source, NULL);
  cs_probe_set_meta(&meta, "host", P->host, NULL);
  struct cudaDeviceProp prop;
  memset(&prop, 0, sizeof prop);
  cudaGetDeviceProperties(&prop, P->dev[0].id);
  snprintf(buf, sizeof buf, "%s, compute capability %d.%d, %d SMs, %.0f MiB, L2 %.0f MiB; %d GPUs",
           P->gpu, P->cc_major, P->cc_minor, prop.multiProcessorCount,
           (double)prop.totalGlobalMem / MIB, (double)prop.l2CacheSize / MIB, P->ndev);
  cs_probe_set_meta(&meta, "gpu", buf, NULL);
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  snprintf(buf, sizeof buf, "runtime %d.%d, driver %d.%d; cuBLASLt %zu", rt / 1000, rt % 1000 / 10,
           drv / 1000, drv % 1000 / 10, cublasLtGetVersion());
  cs_probe_set_meta(&meta, "cuda", buf, NULL);
#ifdef CS_HAVE_NCCL
  int nv = 0;
  ncclGetVersion(&nv);
  snprintf(buf, sizeof buf, "%d.%d.%d", nv / 10000, nv / 100 % 100, nv % 100);
  cs_probe_set_meta(&meta, "nccl", buf, NULL);
#endif
  if (o->cmdline) cs_probe_set_meta(&meta, "command", o->cmdline, NULL);
  char settle[96] = "";
  if ((o->probes & CS_PROBE_BIT(CS_PROBE_GEMM)) && o->probe_settle_s > 0)
    snprintf(settle, sizeof settle,
             "; GEMMs after %.1f s of the largest planned GEMM back to back (settled clocks)",
             o->probe_settle_s);
  snprintf(buf, sizeof buf,
           "median of %d..%d trials within %.0f%%, trials of about %.0f ms between CUDA events, "
           "after one warm-up and one estimating operation%s",
           o->min_trials, o->max_trials, 100 * o->tol, 1e3 * o->trial_time_s, settle);
  cs_probe_set_meta(&meta, "timing", buf, NULL);
  if (o->gemm_algos > 1)
    snprintf(buf, sizeof buf,
             "D = A^T B column-major (TN), alpha 1 beta 0, the fastest of cuBLASLt heuristic's "
             "first %d algorithms, 32 MiB workspace, random operands; fp8 = e4m3 in, bf16 out",
             o->gemm_algos);
  else
    snprintf(buf, sizeof buf,
             "D = A^T B column-major (TN), alpha 1 beta 0, cuBLASLt heuristic's first "
             "algorithm, 32 MiB workspace, random operands; fp8 = e4m3 in, bf16 out");
  cs_probe_set_meta(&meta, "gemm", buf, NULL);
  if (o->probes & CS_PROBE_BIT(CS_PROBE_LAUNCH))
    cs_probe_set_meta(&meta, "launch",
                      "device: GPU time per kernel of >= 2000 back-to-back 4-byte cudaMemsetAsync; "
                      "host: CPU time per cudaMemsetAsync call",
                      NULL);
  if (P->peak[CS_PROBE_BF16] > 0) {
    snprintf(buf, sizeof buf,
             "datasheet dense TFLOP/s bf16 %.1f fp16 %.1f tf32 %.1f fp32 %.1f fp8 %.1f; "
             "HBM %.2f TB/s",
             P->peak[CS_PROBE_BF16] / 1e12, P->peak[CS_PROBE_FP16] / 1e12,
             P->peak[CS_PROBE_TF32] / 1e12, P->peak[CS_PROBE_FP32] / 1e12,
             P->peak[CS_PROBE_FP8] / 1e12, P->peak_bw / 1e12);
    cs_probe_set_meta(&meta, "peak", buf, NULL);
  } else {
    cs_probe_set_meta(&meta, "peak", "unknown GPU: frac_peak left empty", NULL);
  }
  if (o->probes & CS_PROBE_BIT(CS_PROBE_INTERFERENCE)) {
    snprintf(buf, sizeof buf,
             "the GEMM on each of %d GPUs alone, then beside in-place float all-reduces of %.0f "
             "MiB on a high-priority stream of each (NCCL, one process)",
             P->ndev, AR_BYTES / MIB);
    cs_probe_set_meta(&meta, "interference", buf, NULL);
  }
  enum cs_status st = cs_probe_write_header(f, &meta, err);
  cs_probe_set_fini(&meta);
  return st;
}

enum cs_status cs_probe_cuda_open_output(struct probe *P, struct cs_error *err) {
  const struct cs_run_opts *o = P->o;
  struct cs_runfile spec = {o->probe_out, "--probe-output", 1, o->overwrite, 0, o->dry_run,
                            scan_done,    write_header,     P};
  return cs_runfile_open(&spec, &P->csv, err);
}

void cs_probe_cuda_table_head(struct probe *P) {
  if (P->table == NULL) return;
  fprintf(P->table, "#\n# compute probes on %s (GPU %d%s)\n#\n", P->gpu, P->dev[0].id,
          P->ndev > 1 ? "; interference on every GPU" : "");
  fprintf(P->table, "# %-12s %-6s %6s %6s %6s %11s %9s %9s %6s %6s %6s\n", "kind", "dtype", "m",
          "n", "k", "time", "TFLOP/s", "GB/s", "%peak", "factor", "trials");
  fprintf(P->table, "# %-12s %-6s %6s %6s %6s %11s %9s %9s %6s %6s %6s\n", "", "", "", "", "",
          "(us)", "", "", "", "", "");
}

void cs_probe_cuda_table_row(struct probe *P, const struct cs_probe_row *r) {
  if (P->table == NULL) return;
  char tf[16] = "-", bw[16] = "-", fp[16] = "-", fa[16] = "-";
  if (isfinite(r->tflops)) snprintf(tf, sizeof tf, "%.1f", r->tflops);
  if (isfinite(r->GBps)) snprintf(bw, sizeof bw, "%.0f", r->GBps);
  if (isfinite(r->frac_peak)) snprintf(fp, sizeof fp, "%.1f", 100 * r->frac_peak);
  if (isfinite(r->factor)) snprintf(fa, sizeof fa, "%.3f", r->factor);
  fprintf(P->table, "  %-12s %-6s %6.0f %6.0f %6.0f %11.2f %9s %9s %6s %6s %6d\n",
          cs_probe_kind_name(r->kind), r->dtype, r->m, r->n, r->k, r->time_us, tf, bw, fp, fa,
          r->trials);
  fflush(P->table);
}
