/* setup.c — see setup.h. */
#include "setup.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "calfile.h"
#include "datadir.h"
#include "probe.h"
#include "step.h"
#include "units.h"

void cli_exe_path(char *buf, size_t len) {
  ssize_t n = readlink("/proc/self/exe", buf, len - 1);
  buf[n > 0 ? (size_t)n : 0] = '\0';
}

static enum cs_status onoff(const char *s, const char *opt, int *out, struct cs_error *err) {
  if (!s) return CS_OK;
  if (strcasecmp(s, "on") == 0 || strcmp(s, "1") == 0 || strcasecmp(s, "true") == 0)
    *out = 1;
  else if (strcasecmp(s, "off") == 0 || strcmp(s, "0") == 0 || strcasecmp(s, "false") == 0)
    *out = 0;
  else
    return cs_error_set(err, CS_ERR_USAGE, "--%s expects on or off, got \"%s\"", opt, s);
  return CS_OK;
}

enum cs_status cli_int_opt(const struct cli_verb *v, const struct cli_args *a, const char *name,
                           long min, long max, long def, long *out, struct cs_error *err) {
  const char *s = cli_get(v, a, name);
  *out = def;
  if (!s) return CS_OK;
  char *end;
  long x = strtol(s, &end, 10);
  if (*end || x < min || x > max)
    return cs_error_set(err, CS_ERR_USAGE, "--%s expects an integer from %ld to %ld, got \"%s\"",
                        name, min, max, s);
  *out = x;
  return CS_OK;
}

/* The network edits named by the options. */
static enum cs_status edits(const struct cli_verb *v, const struct cli_args *a,
                            struct cs_topology *t, struct cs_error *err) {
  struct cs_net_edit e;
  cs_net_edit_init(&e);
  long rails;
  enum cs_status st = cli_int_opt(v, a, "rails", 1, CS_TOPO_MAX_NICS, 0, &rails, err);
  e.rails = (int)rails;
  const char *s;
  if (st == CS_OK && (s = cli_get(v, a, "oversub")) &&
      (st = cs_net_edit_parse_oversub(t, s, &e, err)) != CS_OK && strncmp(err->msg, "--", 2) != 0)
    cs_error_prefix(err, "--oversub");
  if (st == CS_OK) st = onoff(cli_get(v, a, "sharp"), "sharp", &e.sharp, err);
  if (st == CS_OK) st = onoff(cli_get(v, a, "nvls"), "nvls", &e.nvls, err);
  if (st == CS_OK && (s = cli_get(v, a, "transport"))) {
    if (strcasecmp(s, "ib") == 0 || strcasecmp(s, "infiniband") == 0)
      e.transport = CS_TOPO_INFINIBAND;
    else if (strcasecmp(s, "roce") == 0)
      e.transport = CS_TOPO_ROCE;
    else if (strcasecmp(s, "tcp") == 0)
      e.transport = CS_TOPO_TCP;
    else
      st = cs_error_set(err, CS_ERR_USAGE, "--transport expects ib, roce or tcp, got \"%s\"", s);
  }
  if (st == CS_OK && (s = cli_get(v, a, "net-latency"))) {
    st = cs_units_parse_quantity(s, CS_UNIT_TIME, &e.latency, err);
    if (st != CS_OK) {
      cs_error_prefix(err, "--net-latency");
      st = err->status = CS_ERR_USAGE;
    }
  }
  if (st == CS_OK) st = cs_net_edit_apply(t, &e, err);
  if (st != CS_OK) err->status = st = CS_ERR_USAGE;
  return st;
}

/* s empty: no workload, default calibration, default plan and interference. */
static void reset(struct cli_setup *s) {
  memset(s, 0, sizeof *s);
  cs_cal_init(&s->cal);
  cs_plan_init(&s->base);
  s->interference = CS_SIM_DEFAULT_INTERFERENCE;
}

enum cs_status cli_setup_load(struct cli_setup *s, const struct cli_verb *v,
                              const struct cli_args *a, const char *plan_text,
                              struct cs_error *err) {
  reset(s);
  if (!cli_get(v, a, "workload") || !cli_get(v, a, "gpu") || !cli_get(v, a, "topology"))
    return cs_error_set(err, CS_ERR_USAGE, "--workload, --gpu and --topology are required");
  /* the decision verbs choose the parallel layout themselves: --plan holds fixed fields only */
  static const char *const searched[] = {"dp",   "tp",  "pp",  "vpp",       "cp", "ep",
                                         "zero", "mbs", "gbs", "recompute", "sp"};
  for (const char *t = plan_text; t && *t; t += strcspn(t, ","), t += *t == ',') {
    size_t klen = strcspn(t, "=,");
    while (klen > 0 && t[0] == ' ')
      t++, klen--;
    for (size_t k = 0; k < sizeof searched / sizeof searched[0]; k++)
      if (strlen(searched[k]) == klen && strncmp(t, searched[k], klen) == 0)
        return cs_error_set(err, CS_ERR_USAGE,
                            "--plan: %s is chosen by commscale %s (use its own options); --plan "
                            "sets fixed fields only (precision, bucket, overlaps, reserve, ...)",
                            searched[k], v->name);
  }
  struct cs_plan plan;
  cs_plan_init(&plan);
  if (plan_text && cs_plan_parse(plan_text, &plan, err) != CS_OK) {
    cs_error_prefix(err, "--plan");
    if (err->status != CS_ERR_NOMEM)
      err->status = CS_ERR_USAGE; /* out of memory is no usage error */
    return err->status;
  }
  return cli_setup_load_parts(s, v, a, &plan, CLI_SETUP_TOPOLOGY, err);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* --probes FILE,...: every row of the files into one set; the GEMM table of the plan's precision,
 * the attention table, the memory-kernel bandwidths and the launch figures into s->compute (each
 * where the files measure it), and the median interference factor into s->interference when
 * take_interference. */
static enum cs_status load_probes(struct cli_setup *s, const char *paths, int take_interference,
                                  struct cs_error *err) {
  struct cs_probe_set ps;
  cs_probe_set_init(&ps);
  char buf[4096], path[4096] = "";
  snprintf(buf, sizeof buf, "%s", paths);
  enum cs_status st = CS_OK;
  char *save = NULL;
  for (char *t = strtok_r(buf, ",", &save); t && st == CS_OK; t = strtok_r(NULL, ",", &save)) {
    snprintf(path, sizeof path, "%s", t);
    st = cs_probe_read_file(t, &ps, err);
  }
  size_t gemm_rows = 0;
  for (size_t i = 0; i < ps.n; i++)
    gemm_rows += ps.rows[i].kind == CS_PROBE_GEMM;
  if (st == CS_OK && gemm_rows > 0) {
    st = cs_probe_gemm_table(&ps, cs_precision_name(s->base.precision), s->compute.peak, &s->gemm,
                             &s->ngemm, err);
    if (st == CS_OK) cs_compute_set_gemm_table(&s->compute, s->gemm, s->ngemm);
  }
  if (st == CS_OK) {
    enum cs_status as = cs_probe_attn_table(&ps, s->compute.peak_attn, &s->attn, &s->nattn, err);
    if (as == CS_OK)
      cs_compute_set_attn_table(&s->compute, s->attn, s->nattn);
    else if (as != CS_ERR_UNSUPPORTED)
      st = as;
  }
  if (st == CS_OK) {
    double wb, gb, ob;
    cs_plan_param_bytes(&s->base, &wb, &gb, &ob);
    cs_probe_memop_bw(&ps, cs_plan_act_bytes(&s->base), wb + gb + 2 * ob, s->compute.mem_bw, NULL);
    cs_probe_launch(&ps, &s->compute.kernel_overhead, &s->compute.host_layer);
  }
  double *f = NULL;
  size_t nf = 0;
  if (st == CS_OK && take_interference && ps.n > 0) {
    f = malloc(ps.n * sizeof *f);
    if (f == NULL) st = cs_error_set(err, CS_ERR_NOMEM, "out of memory");
    for (size_t i = 0; f && i < ps.n; i++)
      if (ps.rows[i].kind == CS_PROBE_INTERFERENCE && ps.rows[i].factor >= 1 &&
          ps.rows[i].factor <= 10)
        f[nf++] = ps.rows[i].factor;
    if (nf > 0) {
      qsort(f, nf, sizeof *f, cmp_double);
      s->interference = nf % 2 ? f[nf / 2] : 0.5 * (f[nf / 2 - 1] + f[nf / 2]);
    }
  }
  free(f);
  cs_probe_set_fini(&ps);
  if (st != CS_OK) cs_error_prefix(err, path);
  return st;
}

enum cs_status cli_setup_load_parts(struct cli_setup *s, const struct cli_verb *v,
                                    const struct cli_args *a, const struct cs_plan *plan,
                                    unsigned parts, struct cs_error *err) {
  reset(s);
  s->base = *plan;
  int topo = (parts & CLI_SETUP_TOPOLOGY) != 0;
  const char *wname = cli_get(v, a, "workload"), *gname = cli_get(v, a, "gpu");
  const char *tname = cli_get(v, a, "topology"), *calpath = cli_get(v, a, "cal");
  if (!wname || !gname || (topo && !tname))
    return cs_error_set(err, CS_ERR_USAGE,
                        topo ? "--workload, --gpu and --topology are required"
                             : "--workload and --gpu are required");
  char exe[4096], path[4096];
  cli_exe_path(exe, sizeof exe);
  enum cs_status st = CS_OK;
  const char *x;
  if ((x = cli_get(v, a, "interference"))) {
    char *end;
    s->interference = strtod(x, &end);
    if (*end || !(s->interference >= 1 && s->interference <= 10))
      return cs_error_set(err, CS_ERR_USAGE,
                          "--interference expects a number from 1 to 10, got "
                          "\"%s\"",
                          x);
  }
  st = cs_datadir_find("workloads", "model/workloads", wname, exe, path, sizeof path, err);
  if (st == CS_OK) st = cs_workload_load(path, &s->workload, err);
  if (st == CS_OK) st = cs_datadir_find("gpus", "model/gpus", gname, exe, path, sizeof path, err);
  if (st == CS_OK) st = cs_gpu_load(path, &s->gpu, err);
  if (st == CS_OK && topo) st = cs_topo_find(tname, path, sizeof path, err);
  if (st == CS_OK && topo) st = cs_topo_load(path, &s->topo, err);
  if (st == CS_OK && topo && calpath) {
    st = cs_calfile_read(calpath, &s->cal, err);
    snprintf(s->calpath, sizeof s->calpath, "%s", calpath);
  } else if (st == CS_OK && topo && (parts & CLI_SETUP_CAL_NOTE))
    fprintf(stderr,
            "commscale %s: no --cal given: collectives costed with the default "
            "(NCCL-anchored) model and the topology's link rates\n",
            v->name);
  if (st == CS_OK && (x = cli_get(v, a, "set"))) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", x);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t && st == CS_OK; t = strtok_r(NULL, ",", &save))
      st = cs_workload_set(s->workload, t, err);
  }
  if (st == CS_OK && topo) st = edits(v, a, &s->topo, err);
  if (st == CS_OK) st = cs_compute_init(&s->compute, &s->gpu, s->base.precision, err);
  if (st == CS_OK && (x = cli_get(v, a, "probes")))
    st = load_probes(s, x, cli_get(v, a, "interference") == NULL, err);
  /* a steps calibration (commscale fit --steps) scales compute, adds its host time per step and
   * sets the interference it fitted (unless --interference) */
  if (st == CS_OK && topo && s->cal.steps.fitted) {
    s->compute.scale = s->cal.steps.compute_scale;
    s->compute.step_overhead = s->cal.steps.host_s;
    s->compute.band_rel = cs_cal_steps_band(&s->cal.steps);
    if (cli_get(v, a, "interference") == NULL) s->interference = s->cal.steps.interference;
  }
  if (st != CS_OK) cli_setup_fini(s);
  return st;
}

enum cs_status cli_setup_plan(const char *text, struct cs_plan *p, struct cs_error *err) {
  size_t n = strlen(text);
  int file =
      (n > 5 && strcmp(text + n - 5, ".yaml") == 0) || (n > 4 && strcmp(text + n - 4, ".yml") == 0);
  if (!file) return cs_plan_parse(text, p, err);
  struct cs_yaml *d = NULL;
  enum cs_status st = cs_yaml_load(text, &d, err);
  if (st == CS_OK) {
    int root = cs_yaml_root(d), sec = cs_yaml_get(d, root, "plan");
    st = cs_plan_read(d, sec ? sec : root, p, err);
  }
  cs_yaml_free(d);
  return st;
}

void cli_setup_fini(struct cli_setup *s) {
  cs_workload_free(s->workload);
  s->workload = NULL;
  free(s->gemm);
  s->gemm = NULL;
  free(s->attn);
  s->attn = NULL;
  s->nattn = 0;
  s->ngemm = 0;
  cs_compute_set_gemm_table(&s->compute, NULL, 0);
  cs_cal_fini(&s->cal);
}

struct cs_search_inputs cli_setup_inputs(const struct cli_setup *s) {
  return (struct cs_search_inputs){s->workload, &s->compute, &s->gpu,
                                   &s->topo,    &s->cal,     s->interference};
}
