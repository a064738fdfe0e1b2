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
#include "wlsummary.h"
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
    {"layers", 0, NULL,
     "also print one row per layer (JSON: a \"layers\" array; CSV: one table per file, so the "
     "layers go to FILE.layers.csv beside -o FILE.csv)"},
    {"list", 0, NULL, "list the bundled workloads and GPUs"},
    {"help-config", 0, NULL, "list the plan and workload keys with their defaults"},
    CLI_OUTPUT_OPTS,
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
    (int)(sizeof opts / sizeof opts[0]),
    NULL};

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
  } else if (fmt == CLI_CSV) {
    fprintf(f, "layer,stage,params,fwd_flops,bwd_flops,recompute_flops,act_bytes,fwd_s,bwd_s,"
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
    else if (fmt == CLI_CSV) {
      cli_csv_field(f, w->layer[i].name);
      fprintf(f, ",%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%d\n", stage, lc.params,
              lc.fwd_flops, lc.bwd_flops, lc.recompute_flops, lc.act_bytes, t.fwd, t.bwd,
              t.recompute, comm, ncoll);
    } else {
      fprintf(f, "%s\n  {\"layer\": ", i ? "," : "");
      cli_json_string(f, w->layer[i].name);
      fprintf(f, ", \"stage\": %d, \"params\": ", stage);
      const double v[] = {lc.params,    lc.fwd_flops, lc.bwd_flops, lc.recompute_flops,
                          lc.act_bytes, t.fwd,        t.bwd,        t.recompute,
                          comm};
      static const char *const k[] = {"fwd_flops", "bwd_flops", "recompute_flops", "act_bytes",
                                      "fwd_s",     "bwd_s",     "recompute_s",     "comm_bytes"};
      cli_json_num(f, "%.6g", v[0]);
      for (int j = 0; j < 8; j++) {
        fprintf(f, ", \"%s\": ", k[j]);
        cli_json_num(f, "%.6g", v[j + 1]);
      }
      fprintf(f, ", \"collectives\": %d}", ncoll);
    }
  }
}

static void write_table(FILE *f, const struct cs_scenario *su, const char *ptxt, const char *gemm,
                        const struct cs_plan *plan, const struct cs_wl_summary *o) {
  fprintf(f, "# commscale %s workload\n# workload  %s: %s\n# gpu       %s: %s\n# plan      %s\n",
          CS_VERSION, su->workload->name, su->workload->description, su->gpu.name,
          su->gpu.description, ptxt);
  if (gemm)
    fprintf(f, "# gemm      %s: %zu measured %s shapes\n", gemm, su->ngemm,
            cs_precision_name(plan->precision));
  fprintf(f, "#%-21s %16s  %s\n", "quantity", "value", "unit");
  for (int i = 0; i < o->n; i++)
    fprintf(f, " %-21s %16.6g  %s\n", o->q[i].key, o->q[i].value, o->q[i].unit);
}

static void write_csv(FILE *f, const struct cs_scenario *su, const char *ptxt,
                      const struct cs_wl_summary *o) {
  fputs("workload,gpu,plan", f);
  for (int i = 0; i < o->n; i++) {
    const char *u = o->q[i].unit;
    if (strcmp(u, "GiB") == 0)
      fprintf(f, ",%s_GiB", o->q[i].key);
    else if (strncmp(u, "ms", 2) == 0)
      fprintf(f, ",%s_ms", o->q[i].key);
    else if (strncmp(u, "s ", 2) == 0)
      fprintf(f, ",%s_s", o->q[i].key);
    else if (strcmp(u, "TFLOP/s") == 0)
      fprintf(f, ",%s_TFLOPS", o->q[i].key);
    else
      fprintf(f, ",%s", o->q[i].key);
  }
  fputc('\n', f);
  cli_csv_field(f, su->workload->name);
  fputc(',', f);
  cli_csv_field(f, su->gpu.name);
  fputc(',', f);
  cli_csv_field(f, ptxt);
  for (int i = 0; i < o->n; i++)
    fprintf(f, ",%.8g", o->q[i].value);
  fputc('\n', f);
}

static void write_json(FILE *f, const struct cs_scenario *su, const struct cs_plan *plan,
                       const struct cs_wl_summary *o, int layers, int argc, char **argv) {
  cli_json_head(f, argc, argv);
  fputs(",\n \"workload\": ", f);
  cli_json_string(f, su->workload->name);
  fputs(", \"gpu\": ", f);
  cli_json_string(f, su->gpu.name);
  fputs(", \"plan\": ", f);
  cli_json_plan(f, plan);
  fputs(",\n \"results\": {", f);
  for (int i = 0; i < o->n; i++) {
    fprintf(f, "%s\"%s\": {\"value\": ", i ? ", " : "", o->q[i].key);
    cli_json_num(f, "%.8g", o->q[i].value);
    fputs(", \"unit\": ", f);
    cli_json_string(f, o->q[i].unit);
    fputc('}', f);
  }
  fputc('}', f);
  if (layers) {
    fputs(",\n \"layers\": [", f);
    write_layers(f, CLI_JSON, su->workload, plan, &su->compute);
    fputs("]", f);
  }
  fputs("}\n", f);
}

static int help_config(void) {
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
  f = cs_framework_fields(&n);
  printf("\nframework profile keys (model/frameworks/NAME.yaml; plan key framework=NAME):\n");
  cs_cfg_help(stdout, f, n);
  return 0;
}

/* With --layers and CSV the layer table goes to FILE.layers.csv beside -o FILE.csv (one table per
 * CSV): its path, or a usage error. */
static enum cs_status layers_csv_path(const char *outpath, char *buf, size_t len,
                                      struct cs_error *err) {
  size_t n = outpath && strcmp(outpath, "-") ? strlen(outpath) : 0;
  if (n > 4 && strcmp(outpath + n - 4, ".csv") == 0) n -= 4;
  if (n == 0 || n + 12 > len)
    return cs_error_set(err, CS_ERR_USAGE,
                        "--layers with CSV output needs -o FILE.csv (the layer "
                        "table is written to FILE.layers.csv: one table per CSV)");
  snprintf(buf, len, "%.*s.layers.csv", (int)n, outpath);
  return CS_OK;
}

/* Writes the summary (and with --layers the layer table) in the chosen format. */
static enum cs_status write_all(const struct cli_args *a, int fmt, const struct cs_scenario *su,
                                const struct cs_plan *plan, const struct cs_wl_summary *o,
                                const char *layers_path, int argc, char **argv,
                                struct cs_error *err) {
  int layers = cli_get(&verb, a, "layers") != NULL;
  FILE *f = cli_open_out(cli_get(&verb, a, "output"), err);
  if (f == NULL) return CS_ERR_IO;
  char ptxt[512];
  cs_plan_format(plan, ptxt, sizeof ptxt);
  if (fmt == CLI_TABLE)
    write_table(f, su, ptxt, cli_get(&verb, a, "gemm"), plan, o);
  else if (fmt == CLI_CSV)
    write_csv(f, su, ptxt, o);
  else
    write_json(f, su, plan, o, layers, argc, argv);
  if (layers && fmt == CLI_TABLE) write_layers(f, fmt, su->workload, plan, &su->compute);
  enum cs_status st = cli_close_out(f, err);
  if (st == CS_OK && layers && fmt == CLI_CSV) { /* one table per CSV: the layers beside it */
    if ((f = cli_open_out(layers_path, err)) == NULL) return CS_ERR_IO;
    write_layers(f, fmt, su->workload, plan, &su->compute);
    st = cli_close_out(f, err);
  }
  return st;
}

int cs_cmd_workload(int argc, char **argv) {
  struct cs_error err = {0};
  struct cli_args a;
  int fmt;
  int begun = cli_begin(&verb, argc, argv, &a, 0, 0, NULL, &fmt);
  if (begun >= 0) return begun;
  char exe[4096];
  cli_exe_path(exe, sizeof exe);
  if (cli_get(&verb, &a, "list")) return list_all(exe);
  if (cli_get(&verb, &a, "help-config")) return help_config();
  const char *ptext = cli_get(&verb, &a, "plan"), *s;
  if (!cli_get(&verb, &a, "workload") || !cli_get(&verb, &a, "gpu")) {
    cs_error_set(&err, CS_ERR_USAGE, "--workload and --gpu are required (or --list)");
    return cli_fail("workload", &err);
  }
  char layers_path[4096] = "";
  double measured = -1; /* none */
  struct cs_plan plan;
  enum cs_status st = CS_OK;
  if (cli_get(&verb, &a, "layers") && fmt == CLI_CSV)
    st = layers_csv_path(cli_get(&verb, &a, "output"), layers_path, sizeof layers_path, &err);
  if (st == CS_OK && (st = cli_setup_plan(ptext ? ptext : "", &plan, &err)) != CS_OK)
    cs_error_prefix(&err, "--plan");
  if (st == CS_OK && (s = cli_get(&verb, &a, "measured")) &&
      cs_units_parse_quantity(s, CS_UNIT_TIME, &measured, &err) != CS_OK) {
    cs_error_prefix(&err, "--measured");
    st = err.status = CS_ERR_USAGE;
  }
  if (st != CS_OK) return cli_fail("workload", &err);
  /* the workload with --set, the GPU and the compute model of the plan's precision */
  struct cs_scenario su;
  if (cli_setup_load_parts(&su, &verb, &a, &plan, 0, &err) != CS_OK)
    return cli_fail("workload", &err);
  static struct cs_wl_summary o; /* 1.5 KiB */
  st = cs_wl_summary(&su, &plan, cli_get(&verb, &a, "gemm"), measured, &o, &err);
  if (st == CS_OK) st = write_all(&a, fmt, &su, &plan, &o, layers_path, argc, argv, &err);
  if (st == CS_OK) st = cs_memory_check(&o.mem, su.gpu.name, &err);
  int rc = st != CS_OK ? cli_fail("workload", &err) : 0;
  cs_scenario_fini(&su);
  return rc;
}
