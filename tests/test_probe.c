/* test_probe.c — the compute-probe CSV: round trip, the GEMM efficiency table the compute model
 * reads (values derived by hand below), and every rejection of the reader. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compute.h"
#include "gpu.h"
#include "probe.h"
#include "stats.h"
#include "testutil.h"

/* A small file as commscale-run writes it. With a peak of 1000 TFLOP/s:
 *   bf16 8192^3         740 and 760 TFLOP/s (two runs)  -> mean efficiency 0.75
 *   bf16 2048x1024x1024 400 TFLOP/s                     -> 0.40
 *   bf16 16x4096x4096   50 TFLOP/s                      -> 0.05
 *   fp16 8192^3         700 TFLOP/s                     -> 0.70 (not in the bf16 table)
 * membw and interference rows are not GEMM points. */
static const char *const probes_csv =
    "# commscale probes v1\n"
    "# gpu: NVIDIA H200, compute capability 9.0\n"
    "kind,dtype,m,n,k,bytes,time_us,time_min_us,time_max_us,trials,tflops,GBps,frac_peak,factor,"
    "gpu,source\n"
    "gemm,bf16,8192,8192,8192,402653184,1485.88,1480,1490,3,740,,0.748,,NVIDIA H200,run1\n"
    "gemm,bf16,8192,8192,8192,402653184,1446.78,,,3,760,,,,NVIDIA H200,run2\n"
    "gemm,bf16,2048,1024,1024,8388608,10.737,,,5,400,,,,NVIDIA H200,run1\n"
    "gemm,bf16,16,4096,4096,33816576,10.737,,,3,50,,,,NVIDIA H200,run1\n"
    "gemm,fp16,8192,8192,8192,402653184,1570.8,,,3,700,,,,NVIDIA H200,run1\n"
    "membw,copy,0,0,0,2147483648,540,,,3,,3976.8,0.83,,NVIDIA H200,run1\n"
    "interference,bf16,8192,4096,4096,268435456,420,,,3,654.5,,0.66,1.12,\"NVIDIA H200\",run1\n";

static const char *write_tmp(const char *name, const char *text, char *buf, size_t len) {
  cs_test_tmp(name, buf, len);
  cs_test_write_file(buf, text);
  return buf;
}

static void read_and_table(void **state) {
  (void)state;
  char path[512];
  write_tmp("probes_ok.csv", probes_csv, path, sizeof path);
  struct cs_probe_set set;
  cs_probe_set_init(&set);
  struct cs_error err = {0};
  assert_int_equal(cs_probe_read_file(path, &set, &err), CS_OK);
  assert_int_equal(set.n, 7);
  assert_string_equal(cs_probe_get_meta(&set, "gpu"), "NVIDIA H200, compute capability 9.0");
  assert_int_equal(set.rows[5].kind, CS_PROBE_MEMBW);
  assert_string_equal(set.rows[5].dtype, "copy");
  assert_close(set.rows[5].GBps, 3976.8, 1e-12);
  assert_true(isnan(set.rows[5].tflops));
  assert_int_equal(set.rows[6].kind, CS_PROBE_INTERFERENCE);
  assert_close(set.rows[6].factor, 1.12, 1e-12);
  assert_string_equal(set.rows[6].gpu, "NVIDIA H200");
  assert_true(isnan(set.rows[1].time_min_us));

  struct cs_gemm_point *pts = NULL;
  size_t n = 0;
  assert_int_equal(cs_probe_gemm_table(&set, "bf16", 1000e12, &pts, &n, &err), CS_OK);
  assert_int_equal(n, 3);
  assert_close(pts[0].m, 8192, 0);
  assert_close(pts[0].efficiency, 0.75, 1e-12); /* (740 + 760) / 2 / 1000 */
  assert_close(pts[1].efficiency, 0.40, 1e-12);
  assert_close(pts[2].efficiency, 0.05, 1e-12);
  assert_close(pts[2].n, 4096, 0);

  /* the compute model picks the nearest measured shape in log space */
  struct cs_gpu g;
  assert_int_equal(cs_gpu_load_string("version: 1\nname: t\nmemory: 80GiB\nhbm_bw: 4TBps\n"
                                      "peak_bf16: 1000TFLOPS\n",
                                      "t.yaml", &g, &err),
                   CS_OK);
  struct cs_compute c;
  assert_int_equal(cs_compute_init(&c, &g, CS_PREC_BF16, &err), CS_OK);
  assert_close(c.peak, 1000e12, 1e-12);
  cs_compute_set_gemm_table(&c, pts, n);
  assert_close(cs_compute_gemm_efficiency(&c, 8000, 8300, 8192), 0.75, 1e-12);
  assert_close(cs_compute_gemm_efficiency(&c, 2048, 1000, 1100), 0.40, 1e-12);
  assert_close(cs_compute_gemm_efficiency(&c, 32, 4096, 4096), 0.05, 1e-12);
  free(pts);

  /* efficiency is relative to the model's own peak: 700 TFLOP/s against 989.4 */
  assert_int_equal(cs_probe_gemm_table(&set, "half", 989.4e12, &pts, &n, &err), CS_OK);
  assert_int_equal(n, 1);
  assert_close(pts[0].efficiency, 700.0 / 989.4, 1e-12);
  free(pts);

  /* no fp8 rows: the message says what the file has */
  assert_int_equal(cs_probe_gemm_table(&set, "fp8", 1978.9e12, &pts, &n, &err), CS_ERR_UNSUPPORTED);
  assert_null(pts);
  assert_int_equal(n, 0);
  assert_non_null(strstr(err.msg, "no gemm rows of dtype fp8 (the file has bf16, fp16)"));
  assert_int_equal(cs_probe_gemm_table(&set, "bf16", 0, &pts, &n, &err), CS_ERR_RANGE);
  assert_int_equal(cs_probe_gemm_table(&set, "int8", 1e15, &pts, &n, &err), CS_ERR_UNSUPPORTED);
  cs_probe_set_fini(&set);

  struct cs_probe_set empty;
  cs_probe_set_init(&empty);
  assert_int_equal(cs_probe_gemm_table(&empty, "bf16", 1e15, &pts, &n, &err), CS_ERR_UNSUPPORTED);
  assert_non_null(strstr(err.msg, "no gemm rows)"));
}

static void round_trip(void **state) {
  (void)state;
  struct cs_probe_set set;
  cs_probe_set_init(&set);
  struct cs_error err = {0};
  assert_int_equal(cs_probe_set_meta(&set, "gpu", "NVIDIA H200", &err), CS_OK);
  assert_int_equal(cs_probe_set_meta(&set, "gpu", "NVIDIA H200 (2)", &err), CS_OK);
  assert_int_equal(set.n_meta, 1);
  char path[512];
  cs_test_tmp("probes_rt.csv", path, sizeof path);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  assert_int_equal(cs_probe_write_header(f, &set, &err), CS_OK);
  struct cs_probe_row r;
  memset(&r, 0, sizeof r);
  r.kind = CS_PROBE_GEMM;
  strcpy(r.dtype, "fp8");
  r.m = 16384, r.n = 65536, r.k = 16384;
  r.bytes = 3221225472.0;
  r.time_us = 24000.5;
  r.time_min_us = 23990;
  r.time_max_us = NAN;
  r.trials = 4;
  r.tflops = 1466.1;
  r.GBps = r.factor = NAN;
  r.frac_peak = 0.741;
  strcpy(r.gpu, "GPU, with \"comma\"");
  strcpy(r.source, "commscale-run:h:20260101T000000Z");
  assert_int_equal(cs_probe_write_row(f, &r, &err), CS_OK);
  fclose(f);

  struct cs_probe_set back;
  cs_probe_set_init(&back);
  assert_int_equal(cs_probe_read_file(path, &back, &err), CS_OK);
  assert_int_equal(back.n, 1);
  assert_string_equal(cs_probe_get_meta(&back, "gpu"), "NVIDIA H200 (2)");
  assert_null(cs_probe_get_meta(&back, "nccl"));
  const struct cs_probe_row *b = &back.rows[0];
  assert_true(cs_probe_same_point(&r, b));
  assert_close(b->time_us, 24000.5, 1e-6);
  assert_close(b->time_min_us, 23990, 1e-6);
  assert_true(isnan(b->time_max_us));
  assert_int_equal(b->trials, 4);
  assert_close(b->tflops, 1466.1, 1e-6);
  assert_string_equal(b->gpu, r.gpu);
  struct cs_probe_row other = *b;
  other.k = 8192;
  assert_false(cs_probe_same_point(&r, &other));
  cs_probe_set_fini(&back);
  cs_probe_set_fini(&set);
}

/* The launch floor and the framework-side rows (tests/gpu/torch_probes.py) read back. */
static void framework_rows(void **state) {
  (void)state;
  char path[512];
  write_tmp("probes_fw.csv",
            "# commscale probes v1\n"
            "kind,dtype,m,n,k,bytes,time_us,time_min_us,time_max_us,trials,tflops,GBps,frac_peak,"
            "factor,gpu,source\n"
            "launch,device,0,0,0,0,0.88,,,3,,,,,H200,r\n"
            "launch,eager_layer,56,32,0,0,1834,,,15,,,,,H200,r\n"
            "attn_fwd,bf16,4096,128,64,268435456,526.6,,,5,522,,,,H200,r\n"
            "attn_bwd,bf16,4096,128,64,536870912,1572.7,,,5,437,,,,H200,r\n"
            "memop,layernorm_bwd,16384,2048,1,402653184,228.7,,,5,,1760.7,,,H200,r\n",
            path, sizeof path);
  struct cs_probe_set set;
  cs_probe_set_init(&set);
  struct cs_error err = {0};
  assert_int_equal(cs_probe_read_file(path, &set, &err), CS_OK);
  assert_int_equal(set.n, 5);
  assert_int_equal(set.rows[0].kind, CS_PROBE_LAUNCH);
  assert_string_equal(set.rows[1].dtype, "eager_layer");
  assert_close(set.rows[1].m, 56, 0);
  assert_int_equal(set.rows[2].kind, CS_PROBE_ATTN_FWD);
  assert_int_equal(set.rows[3].kind, CS_PROBE_ATTN_BWD);
  assert_int_equal(set.rows[4].kind, CS_PROBE_MEMOP);
  assert_string_equal(set.rows[4].dtype, "layernorm_bwd");
  assert_close(set.rows[4].GBps, 1760.7, 1e-12);
  /* the model's bytes over the measured times (probe.h): LayerNorm 2 T h e forward, twice that
   * backward, against both kernels' times; here a forward row alone gives no norm figure */
  double bw[CS_MEM_CLASS_COUNT] = {0};
  unsigned have = 0;
  cs_probe_memop_bw(&set, 2, 24, bw, &have);
  assert_int_equal(have, 0);
  cs_probe_set_fini(&set);
  cs_probe_set_init(&set);
  write_tmp("probes_fw2.csv",
            "kind,dtype,m,n,k,bytes,time_us,tflops,GBps\n"
            "memop,layernorm_fwd,1000,100,1,800000,1,,800\n"
            "memop,layernorm_bwd,1000,100,1,1200000,3,,400\n"
            "memop,adamw,1000000,1,1,28000000,10,,2800\n"
            "memop,cross_entropy,10,1000,1,280000,2,,140\n"
            "memop,qkv_grad_cat,1000,300,1,1200000,3,,400\n"
            "memop,bias_grad,1000,400,1,800000,0.5,,1600\n"
            "memop,grad_cast,400,100,1,240000,0.2,,1200\n"
            "membw,copy,0,0,0,2000000,1,,2000\n"
            "launch,device,0,0,0,0,0.9,,\n",
            path, sizeof path);
  assert_int_equal(cs_probe_read_file(path, &set, &err), CS_OK);
  cs_probe_memop_bw(&set, 2, 24, bw, &have);
  /* norm: 3 * 2 * 1000 * 100 * 2 bytes in 4 us; adamw 24e6 bytes in 10 us; xent 36 * 1e4 in 2 us */
  assert_close(bw[CS_MEM_NORM], 1.2e6 / 4e-6, 1e-6);
  assert_close(bw[CS_MEM_OPTIM], 24e6 / 10e-6, 1e-6);
  assert_close(bw[CS_MEM_XENT], 36e4 / 2e-6, 1e-6);
  assert_close(bw[CS_MEM_COPY], 2e6 / 1e-6, 1e-6);
  /* the eager backward's kernels: 2 * 1000 * 300 * 2 in 3 us; 1000 * 400 * 2 in 0.5 us;
   * 400 * 100 * (4 + 2) in 0.2 us */
  assert_close(bw[CS_MEM_GATHER], 1.2e6 / 3e-6, 1e-6);
  assert_close(bw[CS_MEM_REDUCE], 8e5 / 0.5e-6, 1e-6);
  assert_close(bw[CS_MEM_CAST], 2.4e5 / 0.2e-6, 1e-6);
  assert_int_equal(have, (1u << CS_MEM_NORM) | (1u << CS_MEM_OPTIM) | (1u << CS_MEM_XENT) |
                             (1u << CS_MEM_COPY) | (1u << CS_MEM_GATHER) | (1u << CS_MEM_REDUCE) |
                             (1u << CS_MEM_CAST));
  double k = 0, hl = 7;
  cs_probe_launch(&set, &k, &hl);
  assert_close(k, 0.9e-6, 1e-15);
  assert_close(hl, 7, 0);
  /* the runner's kinds exclude the file-only ones */
  unsigned bits = 0;
  assert_int_equal(cs_probe_parse_kinds("all", &bits, &err), CS_OK);
  assert_int_equal(bits, CS_PROBE_ALL_KINDS);
  assert_true(bits & CS_PROBE_BIT(CS_PROBE_LAUNCH));
  assert_false(bits & CS_PROBE_BIT(CS_PROBE_MEMOP));
  assert_int_equal(cs_probe_parse_kinds("attn_fwd", &bits, &err), CS_ERR_USAGE);
  cs_probe_set_fini(&set);
}

static void names_and_lists(void **state) {
  (void)state;
  enum cs_probe_kind k;
  enum cs_probe_dtype d;
  assert_int_equal(cs_probe_kind_parse("interference", &k), 0);
  assert_int_equal(k, CS_PROBE_INTERFERENCE);
  assert_int_equal(cs_probe_kind_parse("gemms", &k), -1);
  assert_int_equal(cs_probe_kind_parse(NULL, &k), -1);
  assert_string_equal(cs_probe_kind_name((enum cs_probe_kind)7), "?");
  assert_int_equal(cs_probe_dtype_parse("BFloat16", &d), 0);
  assert_int_equal(d, CS_PROBE_BF16);
  assert_int_equal(cs_probe_dtype_parse("fp8_e4m3", &d), 0);
  assert_string_equal(cs_probe_dtype_name(d), "fp8");
  assert_int_equal(cs_probe_dtype_parse(NULL, &d), -1);
  assert_string_equal(cs_probe_dtype_name((enum cs_probe_dtype)9), "?");

  struct cs_error err = {0};
  unsigned bits = 0;
  assert_int_equal(cs_probe_parse_kinds("gemm,membw", &bits, &err), CS_OK);
  assert_int_equal(bits, CS_PROBE_BIT(CS_PROBE_GEMM) | CS_PROBE_BIT(CS_PROBE_MEMBW));
  assert_int_equal(cs_probe_parse_kinds("all", &bits, &err), CS_OK);
  assert_int_equal(bits, CS_PROBE_ALL_KINDS);
  assert_int_equal(cs_probe_parse_kinds("gemm,flops", &bits, &err), CS_ERR_USAGE);
  assert_non_null(strstr(err.msg, "--probes: unknown item \"flops\""));
  assert_int_equal(bits, CS_PROBE_ALL_KINDS); /* untouched */
  assert_int_equal(cs_probe_parse_kinds(",", &bits, &err), CS_ERR_USAGE);
  assert_int_equal(cs_probe_parse_dtypes("bf16,fp8", &bits, &err), CS_OK);
  assert_int_equal(bits, CS_PROBE_BIT(CS_PROBE_BF16) | CS_PROBE_BIT(CS_PROBE_FP8));
  assert_int_equal(cs_probe_parse_dtypes("int4", &bits, &err), CS_ERR_USAGE);
  assert_non_null(strstr(err.msg, "--probe-dtypes"));
  char longlist[400];
  memset(longlist, 'a', sizeof longlist - 1);
  longlist[sizeof longlist - 1] = '\0';
  assert_int_equal(cs_probe_parse_dtypes(longlist, &bits, &err), CS_ERR_USAGE);
}

/* Each hostile file is rejected with "path:line:col: ..." naming what was expected. */
static void rejects(void **state) {
  (void)state;
  static const char *const head =
      "# commscale probes v1\nkind,dtype,m,n,k,bytes,time_us,time_min_us,time_max_us,trials,"
      "tflops,GBps,frac_peak,factor,gpu,source\n";
  static const struct {
    const char *body, *expect;
  } bad[] = {
      {"flop,bf16,1,1,1,6,1,,,1,1,,,,g,s\n", ":3:1: column kind: expected gemm, membw"},
      {"gemm,int4,1,1,1,6,1,,,1,1,,,,g,s\n", ":3:6: column dtype: expected bf16"},
      {"membw,bf16,0,0,0,6,1,,,1,,5,,,g,s\n", "column dtype: expected copy or memset"},
      {"gemm,bf16,0,1,1,6,1,,,1,1,,,,g,s\n", ":3:11: column m: expected a whole dimension"},
      {"gemm,bf16,1,1.5,1,6,1,,,1,1,,,,g,s\n", "column n: expected a whole dimension"},
      {"gemm,bf16,1,1,-4,6,1,,,1,1,,,,g,s\n", "column k: expected"},
      {"gemm,bf16,1,1,1,6.5,1,,,1,1,,,,g,s\n", "column bytes: expected a whole number"},
      {"gemm,bf16,1,1,1,6,0,,,1,1,,,,g,s\n", "column time_us: expected a time in microseconds > 0"},
      {"gemm,bf16,1,1,1,6,1,x,,1,1,,,,g,s\n", "column time_min_us"},
      {"gemm,bf16,1,1,1,6,1,,inf,1,1,,,,g,s\n", "column time_max_us"},
      {"gemm,bf16,1,1,1,6,1,,,2.5,1,,,,g,s\n", "column trials: expected a trial count"},
      {"gemm,bf16,1,1,1,6,1,,,1,,,,,g,s\n", "column tflops: expected TFLOP/s > 0"},
      {"membw,copy,0,0,0,6,1,,,1,3,,,,g,s\n", "column GBps: expected GB/s > 0"},
      {"membw,copy,0,0,0,6,1,,,1,-1,5,,,g,s\n", "column tflops: expected TFLOP/s or nothing"},
      {"gemm,bf16,1,1,1,6,1,,,1,1,,1e999,,g,s\n", "column frac_peak"},
      {"interference,bf16,1,1,1,6,1,,,1,1,,,,g,s\n", "column factor: expected a slowdown factor"},
      {"gemm,bf16,1,1,1,6,1,,,1,1,,,nan,g,s\n", "column factor: expected a factor or nothing"},
      {"gemm,bf16,1,1,1,6,1,,,1,1,,,\n", ":3:1: expected 16 fields, found 14"},
      {"gemm,bf16,1,1,1,6,1,,,1,1,,,,\"g,s\n", ":3:1: expected a closing double quote"},
      {"launch,gpu,0,0,0,0,1,,,1,,,,,g,s\n", "column dtype: expected device, host, eager"},
      {"memop,Layer Norm,1,1,1,6,1,,,1,,5,,,g,s\n", "column dtype: expected an operation name"},
      {"memop,adamw,1,1,1,6,1,,,1,,,,,g,s\n", "column GBps: expected GB/s > 0"},
      {"attn_fwd,bf16,2048,0,16,6,1,,,1,1,,,,g,s\n", "column n: expected a whole dimension"},
      {"attn_bwd,bf16,2048,128,16,6,1,,,1,,,,,g,s\n", "column tflops: expected TFLOP/s > 0"},
  };
  char path[512];
  struct cs_error err = {0};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char text[1024];
    snprintf(text, sizeof text, "%s%s", head, bad[i].body);
    write_tmp("probes_bad.csv", text, path, sizeof path);
    struct cs_probe_set set;
    cs_probe_set_init(&set);
    enum cs_status st = cs_probe_read_file(path, &set, &err);
    if (st != CS_ERR_PARSE || strstr(err.msg, bad[i].expect) == NULL)
      fail_msg("case %zu: got status %d, \"%s\"; expected \"%s\"", i, st, err.msg, bad[i].expect);
    assert_non_null(strstr(err.msg, path));
    cs_probe_set_fini(&set);
  }
  static const struct {
    const char *text, *expect;
  } files[] = {
      {"# commscale measurements v1\n", ":1:1: expected \"# commscale probes v1\""},
      {"# commscale probes v1\nkind,dtype,m,n,k,bytes,time_us\n", "column \"tflops\""},
      {"# commscale probes v1\n# only: comments\n", ":3: expected the header"},
  };
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    write_tmp("probes_bad.csv", files[i].text, path, sizeof path);
    struct cs_probe_set set;
    cs_probe_set_init(&set);
    enum cs_status st = cs_probe_read_file(path, &set, &err);
    if (st != CS_ERR_PARSE || strstr(err.msg, files[i].expect) == NULL)
      fail_msg("file %zu: got status %d, \"%s\"; expected \"%s\"", i, st, err.msg, files[i].expect);
    cs_probe_set_fini(&set);
  }
  /* a file without the magic line but with the header reads; a missing source gets file:line */
  write_tmp("probes_nomagic.csv",
            "kind,dtype,m,n,k,bytes,time_us,tflops\ngemm,fp32,64,64,64,49152,2,0.26\n", path,
            sizeof path);
  struct cs_probe_set set;
  cs_probe_set_init(&set);
  assert_int_equal(cs_probe_read_file(path, &set, &err), CS_OK);
  assert_int_equal(set.n, 1);
  assert_non_null(strstr(set.rows[0].source, "probes_nomagic.csv:2"));
  cs_probe_set_fini(&set);
  assert_int_equal(cs_probe_read_file("/nonexistent/probes.csv", &set, &err), CS_ERR_IO);
  assert_non_null(strstr(err.msg, "/nonexistent/probes.csv: cannot open"));
}

/* The V100 file's GEMM curve against DeepBench's published V100 fp16 GEMM times (83 shapes,
 * tests/data/public/deepbench-v100, a measurement this project did not make): the curve's keys
 * were fitted to them (fit.py there), so they must describe them better than the defaults the
 * file had before (gemm_efficiency 0.8, gemm_half_dim 64: rms log error 0.276, median 10.6%),
 * within a median of 12% (11.1% by hand). */
static double deepbench_rms(const struct cs_gpu *g, const struct cs_probe_set *set, double *med) {
  struct cs_compute c;
  struct cs_error err = {0};
  assert_int_equal(cs_compute_init(&c, g, CS_PREC_FP16, &err), CS_OK);
  double sum = 0, e[128];
  size_t n = 0;
  for (size_t i = 0; i < set->n && n < 128; i++) {
    const struct cs_probe_row *r = &set->rows[i];
    if (r->kind != CS_PROBE_GEMM) continue;
    struct cs_op op = {.name = "gemm",
                       .kind = CS_OP_GEMM,
                       .m = r->m,
                       .n = r->n,
                       .k = r->k,
                       .batch = 1,
                       .flops = 2 * r->m * r->n * r->k,
                       .bytes = r->bytes};
    double t = cs_compute_op_time(&c, &op, 0), lr = log(t / (r->time_us * 1e-6));
    sum += lr * lr;
    e[n++] = fabs(t / (r->time_us * 1e-6) - 1);
  }
  assert_int_equal(n, 83);
  *med = cs_stats_median(e, n);
  return sqrt(sum / (double)n);
}

static void v100_deepbench(void **state) {
  (void)state;
  struct cs_probe_set set;
  cs_probe_set_init(&set);
  struct cs_error err = {0};
  assert_int_equal(
      cs_probe_read_file(CS_TEST_DATA "/public/deepbench-v100/gemm-fp16.csv", &set, &err), CS_OK);
  struct cs_gpu v100, dflt;
  assert_int_equal(cs_gpu_load(CS_TEST_DATA "/../../model/gpus/v100-16gb.yaml", &v100, &err),
                   CS_OK);
  dflt = v100;
  dflt.gemm_efficiency = 0.8, dflt.gemm_half_dim = 64;
  double med_v, med_d;
  double rms_v = deepbench_rms(&v100, &set, &med_v), rms_d = deepbench_rms(&dflt, &set, &med_d);
  print_message("V100 vs DeepBench: file rms log %.3f median %.1f%%; defaults rms log %.3f "
                "median %.1f%%\n",
                rms_v, 100 * med_v, rms_d, 100 * med_d);
  assert_true(rms_v < rms_d - 0.02);
  assert_true(med_v <= 0.12);
  cs_probe_set_fini(&set);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(read_and_table),  cmocka_unit_test(round_trip),
      cmocka_unit_test(names_and_lists), cmocka_unit_test(rejects),
      cmocka_unit_test(framework_rows),  cmocka_unit_test(v100_deepbench)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
