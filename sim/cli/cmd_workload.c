/* cmd_workload.c — `commscale workload`: what one training step of a model costs per GPU under a
 * parallel plan: parameters, FLOPs per step, the memory breakdown of the fullest pipeline stage
 * (and whether it fits), and the compute time of one micro-batch on that stage.
 *
 * One list of records (name, value, unit) feeds the three writers: an aligned table, CSV with the
 * units in the header, and JSON carrying the tool version, the arguments and the resolved plan.
 * --layers adds one row per layer. Workloads and GPUs are bundled names (datadir.h) or paths.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "datadir.h"
#include "memory.h"
#include "opts.h"
#include "output.h"
#include "probe.h"
#include "setup.h"
#include "units.h"

static const struct cli_opt opts[] = {
    {"workload", 'w', "NAME|FILE", "a bundled workload (see --list) or a workload YAML file"},
    {"plan", 'p', "PLAN",
     "parallel plan, e.g. \"tp=8,pp=8,dp=16,zero=1,mbs=1,gbs=1536,"
     "recompute=selective\", or a plan YAML file"},
    {"gpu", 'g', "NAME|FILE", "a bundled GPU (see --list) or a GPU YAML file"},
    {"set", 0, "K=V,...", "override workload architecture keys, e.g. seq=512,layers=12"},
    {"measured", 0, "TIME",
     "measured single-GPU time of one micro-batch (fwd+bwd), e.g. 310ms: "
     "the model's layer times are scaled to it"},
    {"gemm", 0, "FILE",
     "measured GEMM throughput: a probe CSV (commscale-run --probes gemm); its "
     "gemm rows of the plan's precision replace the efficiency curve"},
    {"probes", 0, "FILE,...",
     "compute probes of this GPU (commscale-run --probes, tests/gpu/torch_probes.py): measured "
     "GEMM, attention, memory-kernel and launch figures"},
    {"layers", 0, NULL, "also print one row per layer"},
    {"list", 0, NULL, "list the bundled workloads and GPUs"},
    {"help-config", 0, NULL, "list the plan and workload keys with their defaults"},
    {"format", 0, "FMT", "table (default), csv or json; -o FILE.csv/.json implies it"},
    {"output", 'o', "FILE", "write to FILE instead of stdout"},
};

static const struct cli_verb verb = {
    "workload",
    "--workload NAME --plan PLAN --gpu NAME [--format table|csv|json] | --list",
    "Per-GPU parameters, FLOPs per step, memory breakdown and compute time of a training plan.",
    "FLOPs: model FLOPs count forward and backward matrix products (2 per multiply-add);\n"
    "hardware FLOPs add recomputation. Memory is that of the fullest pipeline stage; a plan that\n"
    "does not fit is reported with its breakdown and exit status 1. Compute time is one GPU's\n"
    "kernels for one micro-batch on that stage, without communication or pipeline bubble.\n"
    "Bundled files are searched in $COMMSCALE_DATA_DIR, <prefix>/share/commscale, then the\n"
    "source tree.",
    opts,
    (int)(sizeof opts / sizeof opts[0])};

#define GIB 1073741824.0

struct rec {
  const char *key;
  double value;
  const char *unit;
};

struct out {
  struct rec r[48];
  int n;
};

static void put(struct out *o, const char *key, double value, const char *unit) {
  if (o->n < (int)(sizeof o->r / sizeof o->r[0])) o->r[o->n++] = (struct rec){key, value, unit};
}

static int list_all(const char *exe) {
  struct cs_error err = {0};
  static const char *const kinds[2][3] = {{"workloads", "model/workloads", "workload"},
                                          {"gpus", "model/gpus", "gpu"}};
  for (int k = 0; k < 2; k++) {
    char **names = NULL;
    size_t n = 0;
    if (cs_datadir_list(kinds[k][0], kinds[k][1], exe, &names, &n, &err) != CS_OK)
      return cli_fail("workload", &err);
    printf("# bundled %s (--%s NAME)\n", kinds[k][0], kinds[k][2]);
    for (size_t i = 0; i < n; i++) {
      char path[4096];
      char desc[256] = "";
      if (cs_datadir_find(kinds[k][0], kinds[k][1], names[i], exe, path, sizeof path, &err) ==
          CS_OK) {
        if (k == 0) {
          struct cs_workload *w = NULL;
          if (cs_workload_load(path, &w, &err) == CS_OK)
            snprintf(desc, sizeof desc, "%s", w->description);
          else
            snprintf(desc, sizeof desc, "(unreadable: %.200s)", err.msg);
          cs_workload_free(w);
        } else {
          struct cs_gpu g;
          if (cs_gpu_load(path, &g, &err) == CS_OK)
            snprintf(desc, sizeof desc, "%s", g.description);
          else
            snprintf(desc, sizeof desc, "(unreadable: %.200s)", err.msg);
        }
      }
      printf("  %-16s %s\n", names[i], desc);
    }
    cs_datadir_list_free(names, n);
  }
  return 0;
}

static void write_layers(FILE *f, int fmt, const struct cs_workload *w, const struct cs_plan *p,
                         const struct cs_compute *c) {
  struct cs_error err = {0};
  struct cs_layer_cost lc;
  struct cs_layer_time t;
  if (fmt == CLI_TABLE) {
    fprintf(f, "#\n#%-19s %5s %12s %12s %12s %10s %10s %10s %5s\n", "layer", "stage", "params",
            "fwd_flops", "activations", "fwd", "bwd", "comm", "colls");
    fprintf(f, "#%-19s %5s %12s %12s %12s %10s %10s %10s %5s\n", "", "", "(per GPU)", "(GFLOP)",
            "(MiB)", "(ms)", "(ms)", "(MiB)", "");
  } else {
    fprintf(f, "\nlayer,stage,params,fwd_flops,bwd_flops,recompute_flops,act_bytes,fwd_s,bwd_s,"
               "recompute_s,comm_bytes,collectives\n");
  }
  for (size_t i = 0; i < w->nlayer; i++) {
    if (cs_workload_layer_cost(w, p, i, &lc, &err) != CS_OK) return;
    cs_compute_layer_time(c, &lc, &t);
    double comm = 0;
    int ncoll = 0;
    for (size_t k = 0; k < lc.ncomm; k++) {
      comm += lc.comm[k].bytes * lc.comm[k].count;
      ncoll += lc.comm[k].count;
    }
    int stage = cs_workload_layer_stage(w, p, i);
    if (fmt == CLI_TABLE)
      fprintf(f, " %-19s %5d %12.4g %12.4g %12.2f %10.4f %10.4f %10.2f %5d\n", w->layer[i].name,
              stage, lc.params, lc.fwd_flops / 1e9, lc.act_bytes / 1048576.0, t.fwd * 1e3,
              t.bwd * 1e3, comm / 1048576.0, ncoll);
    else
      fprintf(f, "%s,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%d\n", w->layer[i].name, stage,
              lc.params, lc.fwd_flops, lc.bwd_flops, lc.recompute_flops, lc.act_bytes, t.fwd, t.bwd,
              t.recompute, comm, ncoll);
  }
}

int cs_cmd_workload(int argc, char **argv) {
  struct cs_error err = {0};
  struct cli_args a;
  int help;
  if (cli_parse(&verb, argc, argv, &a, &help, &err) != CS_OK) return cli_fail("workload", &err);
  if (help) {
    cli_usage(stdout, &verb);
    return 0;
  }
  char exe[4096];
  cli_exe_path(exe, sizeof exe);
  if (cli_get(&verb, &a, "list")) return list_all(exe);
  if (cli_get(&verb, &a, "help-config")) {
    size_t n;
    const struct cs_cfg_field *f = cs_plan_fields(&n);
    printf("plan keys (--plan \"key=value,...\"):\n");
    cs_cfg_help(stdout, f, n);
    f = cs_workload_fields(&n);
    printf("\nworkload keys (workload YAML files; --set key=value,...):\n");
    cs_cfg_help(stdout, f, n);
    f = cs_gpu_fields(&n);
    printf("\nGPU keys (GPU YAML files):\n");
    cs_cfg_help(stdout, f, n);
    return 0;
  }
  if (a.npos > 0) {
    cs_error_set(&err, CS_ERR_USAGE, "unexpected argument \"%s\" (see commscale workload --help)",
                 a.pos[0]);
    return cli_fail("workload", &err);
  }
  const char *wname = cli_get(&verb, &a, "workload"), *gname = cli_get(&verb, &a, "gpu");
  const char *ptext = cli_get(&verb, &a, "plan"), *outpath = cli_get(&verb, &a, "output");
  if (wname == NULL || gname == NULL) {
    cs_error_set(&err, CS_ERR_USAGE, "--workload and --gpu are required (or --list)");
    return cli_fail("workload", &err);
  }
  int fmt = cli_format(cli_get(&verb, &a, "format"), outpath);
  if (fmt < 0) {
    cs_error_set(&err, CS_ERR_USAGE, "--format expects table, csv or json");
    return cli_fail("workload", &err);
  }

  struct cs_plan plan;
  if (cli_setup_plan(ptext ? ptext : "", &plan, &err) != CS_OK) {
    cs_error_prefix(&err, "--plan");
    return cli_fail("workload", &err);
  }
  /* the workload with --set, the GPU and the compute model of the plan's precision */
  struct cli_setup su;
  if (cli_setup_load_parts(&su, &verb, &a, &plan, 0, &err) != CS_OK)
    return cli_fail("workload", &err);
  struct cs_workload *w = su.workload;
  const struct cs_gpu *gpu = &su.gpu;
  struct cs_compute *comp = &su.compute;
  struct cs_gemm_point *gemm_pts = NULL; /* the measured GEMM table, borrowed by comp */
  size_t ngemm = 0;
  int rc = 0;
  if (cs_plan_check(&plan, w, &err) != CS_OK) {
    rc = cli_fail("workload", &err);
    goto done;
  }

  double model_flops, hw_flops;
  struct cs_memory mem;
  struct cs_layer_time mb;
  if (cs_workload_step_flops(w, &plan, &model_flops, &hw_flops, &err) != CS_OK ||
      cs_memory_estimate(w, &plan, gpu, &mem, &err) != CS_OK) {
    rc = cli_fail("workload", &err);
    goto done;
  }
  const char *gemm = cli_get(&verb, &a, "gemm");
  if (gemm) {
    struct cs_probe_set ps;
    cs_probe_set_init(&ps);
    enum cs_status gs = cs_probe_read_file(gemm, &ps, &err);
    if (gs == CS_OK && (gs = cs_probe_gemm_table(&ps, cs_precision_name(plan.precision), comp->peak,
                                                 &gemm_pts, &ngemm, &err)) != CS_OK)
      cs_error_prefix(&err, gemm);
    cs_probe_set_fini(&ps);
    if (gs != CS_OK) {
      rc = cli_fail("workload", &err);
      goto done;
    }
    cs_compute_set_gemm_table(comp, gemm_pts, ngemm);
  }
  const char *measured = cli_get(&verb, &a, "measured");
  if (measured) {
    double m;
    struct cs_plan one = plan;
    one.dp = one.tp = one.pp = one.vpp = one.cp = one.ep = 1;
    one.sp = 0;
    one.gbs = 0;
    one.zero = 0;
    if (cs_units_parse_quantity(measured, CS_UNIT_TIME, &m, &err) != CS_OK) {
      cs_error_prefix(&err, "--measured");
      err.status = CS_ERR_USAGE;
      rc = cli_fail("workload", &err);
      goto done;
    }
    if (cs_compute_calibrate(comp, w, &one, m, &err) != CS_OK) {
      rc = cli_fail("workload", &err);
      goto done;
    }
  }
  if (cs_compute_microbatch(comp, w, &plan, mem.stage, NULL, &mb, &err) != CS_OK) {
    rc = cli_fail("workload", &err);
    goto done;
  }

  long gpus = cs_plan_gpus(&plan), micro = cs_plan_microbatches(&plan);
  double mbt = mb.fwd + mb.bwd + mb.recompute;
  double samples = plan.gbs ? plan.gbs : (double)plan.mbs * plan.dp;
  struct out o = {.n = 0};
  put(&o, "gpus", (double)gpus, "");
  put(&o, "microbatches", (double)micro, "per step");
  put(&o, "samples", samples, "per step");
  put(&o, "tokens", cs_workload_is_transformer(w) ? samples * w->seq : 0, "per step");
  put(&o, "params_total", cs_workload_params(w), "");
  put(&o, "params_active", cs_workload_active_params(w), "per token");
  put(&o, "params_per_gpu", mem.params, "");
  put(&o, "model_flops", model_flops, "FLOP per step");
  put(&o, "hw_flops", hw_flops, "FLOP per step");
  put(&o, "model_flops_per_gpu", model_flops / gpus, "FLOP per step");
  put(&o, "peak", comp->peak / 1e12, "TFLOP/s");
  put(&o, "stage", mem.stage, "fullest pipeline stage");
  put(&o, "weights", mem.weights / GIB, "GiB");
  put(&o, "grads", mem.grads / GIB, "GiB");
  put(&o, "optimizer", mem.optimizer / GIB, "GiB");
  put(&o, "activations", mem.activations / GIB, "GiB");
  put(&o, "act_microbatch", mem.act_microbatch / GIB, "GiB");
  put(&o, "inflight", mem.inflight, "micro-batches");
  put(&o, "temp", mem.temp / GIB, "GiB");
  put(&o, "reserve", mem.reserve / GIB, "GiB");
  put(&o, "total", mem.total / GIB, "GiB");
  put(&o, "capacity", mem.capacity / GIB, "GiB");
  put(&o, "fits", cs_memory_fits(&mem), "1 = yes");
  put(&o, "fwd_time", mb.fwd * 1e3, "ms per micro-batch");
  put(&o, "bwd_time", mb.bwd * 1e3, "ms per micro-batch");
  put(&o, "recompute_time", mb.recompute * 1e3, "ms per micro-batch");
  put(&o, "microbatch_time", mbt * 1e3, "ms");
  put(&o, "compute_per_step", mbt * micro, "s (no comm, no bubble)");
  put(&o, "compute_scale", comp->scale, "measured/modelled");

  FILE *f = cli_open_out(outpath, &err);
  if (f == NULL) {
    rc = cli_fail("workload", &err);
    goto done;
  }
  char ptxt[512];
  cs_plan_format(&plan, ptxt, sizeof ptxt);
  if (fmt == CLI_TABLE) {
    fprintf(f, "# commscale %s workload\n# workload  %s: %s\n# gpu       %s: %s\n# plan      %s\n",
            CS_VERSION, w->name, w->description, gpu->name, gpu->description, ptxt);
    if (gemm)
      fprintf(f, "# gemm      %s: %zu measured %s shapes\n", gemm, ngemm,
              cs_precision_name(plan.precision));
    fprintf(f, "#%-21s %16s  %s\n", "quantity", "value", "unit");
    for (int i = 0; i < o.n; i++)
      fprintf(f, " %-21s %16.6g  %s\n", o.r[i].key, o.r[i].value, o.r[i].unit);
  } else if (fmt == CLI_CSV) {
    fputs("workload,gpu,plan", f);
    for (int i = 0; i < o.n; i++) {
      const char *u = o.r[i].unit;
      if (strcmp(u, "GiB") == 0)
        fprintf(f, ",%s_GiB", o.r[i].key);
      else if (strncmp(u, "ms", 2) == 0)
        fprintf(f, ",%s_ms", o.r[i].key);
      else if (strncmp(u, "s ", 2) == 0)
        fprintf(f, ",%s_s", o.r[i].key);
      else if (strcmp(u, "TFLOP/s") == 0)
        fprintf(f, ",%s_TFLOPS", o.r[i].key);
      else
        fprintf(f, ",%s", o.r[i].key);
    }
    fprintf(f, "\n%s,%s,\"%s\"", w->name, gpu->name, ptxt);
    for (int i = 0; i < o.n; i++)
      fprintf(f, ",%.8g", o.r[i].value);
    fputc('\n', f);
  } else {
    cli_json_head(f, argc, argv);
    fputs(",\n \"workload\": ", f);
    cli_json_string(f, w->name);
    fputs(", \"gpu\": ", f);
    cli_json_string(f, gpu->name);
    fputs(", \"plan\": ", f);
    cli_json_plan(f, &plan);
    fputs(",\n \"results\": {", f);
    for (int i = 0; i < o.n; i++) {
      fprintf(f, "%s\"%s\": {\"value\": %.8g, \"unit\": ", i ? ", " : "", o.r[i].key, o.r[i].value);
      cli_json_string(f, o.r[i].unit);
      fputc('}', f);
    }
    fputs("}}\n", f);
  }
  if (cli_get(&verb, &a, "layers") && fmt != CLI_JSON) write_layers(f, fmt, w, &plan, comp);
  cli_close_out(f);
  if (cs_memory_check(&mem, gpu->name, &err) != CS_OK) rc = cli_fail("workload", &err);

done:
  free(gemm_pts);
  cli_setup_fini(&su);
  return rc;
}
