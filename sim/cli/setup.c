/* setup.c — see setup.h. */
#include "setup.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "calfile.h"
#include "datadir.h"
#include "step.h"
#include "units.h"

static void exe_path(char *buf, size_t len) {
  ssize_t n = readlink("/proc/self/exe", buf, len - 1);
  buf[n > 0 ? (size_t)n : 0] = '\0';
}

static enum cs_status onoff(const char *s, const char *opt, int *out, struct cs_error *err) {
  if (!s) return CS_OK;
  if (strcasecmp(s, "on") == 0 || strcmp(s, "1") == 0 || strcasecmp(s, "true") == 0) *out = 1;
  else if (strcasecmp(s, "off") == 0 || strcmp(s, "0") == 0 || strcasecmp(s, "false") == 0) *out = 0;
  else return cs_error_set(err, CS_ERR_USAGE, "--%s expects on or off, got \"%s\"", opt, s);
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

void cli_json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
    else fputc(*s, f);
  }
  fputc('"', f);
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
  if (st == CS_OK && (s = cli_get(v, a, "oversub"))) st = cs_net_edit_parse_oversub(t, s, &e, err);
  if (st == CS_OK) st = onoff(cli_get(v, a, "sharp"), "sharp", &e.sharp, err);
  if (st == CS_OK) st = onoff(cli_get(v, a, "nvls"), "nvls", &e.nvls, err);
  if (st == CS_OK && (s = cli_get(v, a, "transport"))) {
    if (strcasecmp(s, "ib") == 0 || strcasecmp(s, "infiniband") == 0) e.transport = CS_TOPO_INFINIBAND;
    else if (strcasecmp(s, "roce") == 0) e.transport = CS_TOPO_ROCE;
    else if (strcasecmp(s, "tcp") == 0) e.transport = CS_TOPO_TCP;
    else st = cs_error_set(err, CS_ERR_USAGE, "--transport expects ib, roce or tcp, got \"%s\"", s);
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

enum cs_status cli_setup_load(struct cli_setup *s, const struct cli_verb *v,
                              const struct cli_args *a, const char *plan_text,
                              struct cs_error *err) {
  memset(s, 0, sizeof *s);
  cs_cal_init(&s->cal);
  cs_plan_init(&s->base);
  s->interference = CS_SIM_DEFAULT_INTERFERENCE;
  const char *wname = cli_get(v, a, "workload"), *gname = cli_get(v, a, "gpu");
  const char *tname = cli_get(v, a, "topology"), *calpath = cli_get(v, a, "cal");
  if (!wname || !gname || !tname)
    return cs_error_set(err, CS_ERR_USAGE, "--workload, --gpu and --topology are required");
  char exe[4096], path[4096];
  exe_path(exe, sizeof exe);
  enum cs_status st = CS_OK;
  const char *x;
  if (plan_text && (st = cs_plan_parse(plan_text, &s->base, err)) != CS_OK) {
    cs_error_prefix(err, "--plan");
    return err->status = CS_ERR_USAGE;
  }
  if ((x = cli_get(v, a, "interference"))) {
    char *end;
    s->interference = strtod(x, &end);
    if (*end || !(s->interference >= 1 && s->interference <= 10))
      return cs_error_set(err, CS_ERR_USAGE, "--interference expects a number from 1 to 10, got "
                          "\"%s\"", x);
  }
  st = cs_datadir_find("workloads", "model/workloads", wname, exe, path, sizeof path, err);
  if (st == CS_OK) st = cs_workload_load(path, &s->workload, err);
  if (st == CS_OK) st = cs_datadir_find("gpus", "model/gpus", gname, exe, path, sizeof path, err);
  if (st == CS_OK) st = cs_gpu_load(path, &s->gpu, err);
  if (st == CS_OK) st = cs_topo_find(tname, path, sizeof path, err);
  if (st == CS_OK) st = cs_topo_load(path, &s->topo, err);
  if (st == CS_OK && calpath) {
    st = cs_calfile_read(calpath, &s->cal, err);
    snprintf(s->calpath, sizeof s->calpath, "%s", calpath);
  }
  if (st == CS_OK && (x = cli_get(v, a, "set"))) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", x);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t && st == CS_OK; t = strtok_r(NULL, ",", &save))
      st = cs_workload_set(s->workload, t, err);
  }
  if (st == CS_OK) st = edits(v, a, &s->topo, err);
  if (st == CS_OK) st = cs_compute_init(&s->compute, &s->gpu, s->base.precision, err);
  if (st != CS_OK) cli_setup_fini(s);
  return st;
}

void cli_setup_fini(struct cli_setup *s) {
  cs_workload_free(s->workload);
  s->workload = NULL;
  cs_cal_fini(&s->cal);
}

struct cs_search_inputs cli_setup_inputs(const struct cli_setup *s) {
  return (struct cs_search_inputs){s->workload, &s->compute, &s->gpu, &s->topo, &s->cal,
                                   s->interference};
}
