/* setup.c — see setup.h. */
#include "setup.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

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
struct opts {
  const struct cli_verb *v;
  const struct cli_args *a;
};

static enum cs_status edits(struct cs_topology *t, void *ctx, struct cs_error *err) {
  const struct cli_verb *v = ((struct opts *)ctx)->v;
  const struct cli_args *a = ((struct opts *)ctx)->a;
  struct cs_netedit e;
  cs_netedit_init(&e);
  long rails;
  enum cs_status st = cli_int_opt(v, a, "rails", 1, CS_TOPO_MAX_NICS, 0, &rails, err);
  e.rails = (int)rails;
  const char *s;
  if (st == CS_OK && (s = cli_get(v, a, "oversub")) &&
      (st = cs_netedit_parse_oversub(t, s, &e, err)) != CS_OK && strncmp(err->msg, "--", 2) != 0)
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
  if (st == CS_OK) st = cs_netedit_apply(t, &e, err);
  if (st != CS_OK) err->status = st = CS_ERR_USAGE;
  return st;
}

enum cs_status cli_setup_load(struct cs_scenario *s, const struct cli_verb *v,
                              const struct cli_args *a, const char *plan_text,
                              struct cs_error *err) {
  memset(s, 0, sizeof *s);
  s->calp = &s->cal;
  if (!cli_get(v, a, "workload") || !cli_get(v, a, "gpu") || !cli_get(v, a, "topology"))
    return cs_error_set(err, CS_ERR_USAGE, "--workload, --gpu and --topology are required");
  /* the decision verbs choose the parallel layout themselves: --plan holds fixed fields only */
  const char *key = cs_plan_layout_key(plan_text);
  if (key)
    return cs_error_set(err, CS_ERR_USAGE,
                        "--plan: %s is chosen by commscale %s (use its own options); --plan "
                        "sets fixed fields only (precision, bucket, overlaps, reserve, ...)",
                        key, v->name);
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

enum cs_status cli_setup_load_parts(struct cs_scenario *s, const struct cli_verb *v,
                                    const struct cli_args *a, const struct cs_plan *plan,
                                    unsigned parts, struct cs_error *err) {
  memset(s, 0, sizeof *s);
  s->calp = &s->cal;
  int topo = (parts & CLI_SETUP_TOPOLOGY) != 0;
  struct opts o = {v, a};
  char exe[4096];
  cli_exe_path(exe, sizeof exe);
  struct cs_scenario_spec sp = {
      .workload = cli_get(v, a, "workload"),
      .set = cli_get(v, a, "set"),
      .gpu = cli_get(v, a, "gpu"),
      .topology = topo ? cli_get(v, a, "topology") : NULL,
      .cal = topo ? cli_get(v, a, "cal") : NULL,
      .edit_topology = edits,
      .edit_ctx = &o,
      .plan = plan,
      .probes = cli_get(v, a, "probes"),
      .probes_interference = 1,
      .exe = exe,
  };
  if (!sp.workload || !sp.gpu || (topo && !sp.topology))
    return cs_error_set(err, CS_ERR_USAGE,
                        topo ? "--workload, --gpu and --topology are required"
                             : "--workload and --gpu are required");
  const char *x;
  if ((x = cli_get(v, a, "interference"))) {
    char *end;
    sp.interference = strtod(x, &end);
    if (*end || !(sp.interference >= 1 && sp.interference <= 10))
      return cs_error_set(err, CS_ERR_USAGE,
                          "--interference expects a number from 1 to 10, got "
                          "\"%s\"",
                          x);
  }
  enum cs_status st = cs_scenario_load(s, &sp, err);
  if (st == CS_OK && topo && !sp.cal && (parts & CLI_SETUP_CAL_NOTE))
    fprintf(stderr,
            "commscale %s: no --cal given: collectives costed with the default "
            "(NCCL-anchored) model and the topology's link rates\n",
            v->name);
  return st;
}

enum cs_status cli_setup_plan(const char *text, struct cs_plan *p, struct cs_error *err) {
  return cs_scenario_plan(text, p, err);
}
