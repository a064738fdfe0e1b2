/* scenario.c — see scenario.h. */
#include "scenario.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calfile.h"
#include "datadir.h"
#include "map.h"
#include "probe.h"
#include "stats.h"
#include "yamlcfg.h"

static int is_path(const char *s) {
  size_t n = strlen(s);
  return strchr(s, '/') || (n > 5 && strcmp(s + n - 5, ".yaml") == 0) ||
         (n > 4 && strcmp(s + n - 4, ".yml") == 0);
}

/* A path relative to base (when base is set and path is relative), else path as it is. */
static enum cs_status join(const char *base, const char *path, char *out, size_t len,
                           struct cs_error *err) {
  int n = base && base[0] && path[0] != '/' ? snprintf(out, len, "%s/%s", base, path)
                                            : snprintf(out, len, "%s", path);
  if (n < 0 || (size_t)n >= len) return cs_error_set(err, CS_ERR_RANGE, "path too long: %s", path);
  return CS_OK;
}

/* The file of a bundled name or a path: kind/src_subdir as in datadir.h, topologies through
 * cs_topo_find (kind NULL). */
static enum cs_status find(const struct cs_scenario_spec *sp, const char *kind, const char *src,
                           const char *name, char *out, size_t len, struct cs_error *err) {
  if (is_path(name)) return join(sp->base_dir, name, out, len, err);
  if (kind == NULL) return cs_topo_find(name, out, len, err);
  return cs_datadir_find(kind, src, name, sp->exe, out, len, err);
}

enum cs_status cs_scenario_plan(const char *text, struct cs_plan *p, struct cs_error *err) {
  size_t n = strlen(text);
  /* a file names no key: "framework=my.yaml" ends in .yaml but is a plan text */
  int file = !strchr(text, '=') && ((n > 5 && strcmp(text + n - 5, ".yaml") == 0) ||
                                    (n > 4 && strcmp(text + n - 4, ".yml") == 0));
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

enum cs_status cs_scenario_probes(struct cs_scenario *s, const char *paths, int take_interference,
                                  struct cs_error *err) {
  cs_compute_set_gemm_table(&s->compute, NULL, 0);
  cs_compute_set_attn_table(&s->compute, NULL, 0);
  free(s->gemm);
  free(s->attn);
  s->gemm = NULL, s->attn = NULL;
  s->ngemm = s->nattn = 0;
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
  if (st == CS_OK && gemm_rows > 0 &&
      (st = cs_probe_gemm_table(&ps, cs_precision_name(s->base.precision), s->compute.peak,
                                &s->gemm, &s->ngemm, err)) != CS_OK)
    cs_error_prefix(err, path);
  if (st == CS_OK && s->gemm) cs_compute_set_gemm_table(&s->compute, s->gemm, s->ngemm);
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
    if (nf > 0) s->interference = cs_stats_median(f, nf);
  }
  free(f);
  cs_probe_set_fini(&ps);
  if (st != CS_OK && strncmp(err->msg, path, strlen(path)) != 0) cs_error_prefix(err, path);
  return st;
}

/* An empty s: no workload, the default calibration and plan, the default interference. */
static void reset(struct cs_scenario *s) {
  memset(s, 0, sizeof *s);
  cs_cal_init(&s->cal);
  s->calp = &s->cal;
  cs_plan_init(&s->base);
  s->interference = CS_SIM_DEFAULT_INTERFERENCE;
}

/* The parts of a load up to the topology and calibration. */
static enum cs_status load_inputs(struct cs_scenario *s, const struct cs_scenario_spec *sp,
                                  struct cs_error *err) {
  char path[4096];
  enum cs_status st =
      find(sp, "workloads", "model/workloads", sp->workload, path, sizeof path, err);
  if (st == CS_OK) st = cs_workload_load(path, &s->workload, err);
  if (st == CS_OK) st = find(sp, "gpus", "model/gpus", sp->gpu, path, sizeof path, err);
  if (st == CS_OK) st = cs_gpu_load(path, &s->gpu, err);
  if (st == CS_OK && sp->topology) {
    st = find(sp, NULL, NULL, sp->topology, path, sizeof path, err);
    if (st == CS_OK) st = cs_topo_load(path, &s->topo, err);
    s->has_topology = st == CS_OK;
  }
  if (st == CS_OK && sp->shared_cal)
    s->calp = sp->shared_cal;
  else if (st == CS_OK && sp->cal) {
    st = join(sp->base_dir, sp->cal, path, sizeof path, err);
    if (st == CS_OK) st = cs_calfile_read(path, &s->cal, err);
    snprintf(s->calpath, sizeof s->calpath, "%s", sp->cal);
  }
  if (st == CS_OK && sp->set) {
    char buf[1024];
    if ((size_t)snprintf(buf, sizeof buf, "%s", sp->set) >= sizeof buf)
      return cs_error_set(err, CS_ERR_RANGE, "workload overrides longer than %zu bytes",
                          sizeof buf - 1);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t && st == CS_OK; t = strtok_r(NULL, ",", &save))
      st = cs_workload_set(s->workload, t, err);
  }
  return st;
}

enum cs_status cs_scenario_load(struct cs_scenario *s, const struct cs_scenario_spec *sp,
                                struct cs_error *err) {
  reset(s);
  if (sp->workload == NULL || sp->gpu == NULL)
    return cs_error_set(err, CS_ERR_USAGE, "a scenario needs a workload and a GPU");
  if (sp->interference != 0 && !(sp->interference >= 1 && sp->interference <= 10))
    return cs_error_set(err, CS_ERR_RANGE, "interference %g is outside [1, 10]", sp->interference);
  if (sp->shared_cal && sp->cal)
    return cs_error_set(err, CS_ERR_USAGE, "a scenario takes a calibration file or a shared one");
  enum cs_status st = CS_OK;
  if (sp->plan)
    s->base = *sp->plan;
  else if (sp->plan_text) {
    char path[4096];
    const char *text = sp->plan_text;
    if (is_path(text) && (st = join(sp->base_dir, text, path, sizeof path, err)) == CS_OK)
      text = path;
    if (st == CS_OK) st = cs_scenario_plan(text, &s->base, err);
    if (st != CS_OK) cs_error_prefix(err, "plan");
  }
  if (sp->interference != 0) s->interference = sp->interference;
  if (st == CS_OK) st = load_inputs(s, sp, err);
  if (st == CS_OK && s->has_topology && sp->edit_topology)
    st = sp->edit_topology(&s->topo, sp->edit_ctx, err);
  if (st == CS_OK) st = cs_compute_init(&s->compute, &s->gpu, s->base.precision, err);
  if (st == CS_OK && sp->probes)
    st = cs_scenario_probes(s, sp->probes, sp->probes_interference && sp->interference == 0, err);
  /* a steps calibration scales compute, adds its host time per step, sets its interference */
  if (st == CS_OK && s->calp->steps.fitted) {
    s->compute.scale = s->calp->steps.compute_scale;
    s->compute.step_overhead = s->calp->steps.host_s;
    s->compute.band_rel = cs_cal_steps_band(&s->calp->steps);
    s->compute.band_fw = 0;
    s->compute.band_host = 0;
    if (sp->interference == 0) s->interference = s->calp->steps.interference;
  }
  if (st == CS_OK && sp->measured != 0) st = cs_scenario_calibrate(s, sp->measured, err);
  if (st != CS_OK) cs_scenario_fini(s);
  return st;
}

enum cs_status cs_scenario_calibrate(struct cs_scenario *s, double measured_s,
                                     struct cs_error *err) {
  struct cs_plan one = cs_plan_single_gpu(&s->base);
  return cs_compute_calibrate(&s->compute, s->workload, &one, measured_s, err);
}

void cs_scenario_fini(struct cs_scenario *s) {
  cs_workload_free(s->workload);
  s->workload = NULL;
  free(s->gemm);
  s->gemm = NULL;
  s->ngemm = 0;
  cs_compute_set_gemm_table(&s->compute, NULL, 0);
  free(s->attn);
  s->attn = NULL;
  s->nattn = 0;
  cs_compute_set_attn_table(&s->compute, NULL, 0);
  cs_cal_fini(&s->cal);
  s->calp = &s->cal;
}

struct cs_sim_inputs cs_scenario_sim_inputs(const struct cs_scenario *s, const struct cs_plan *p) {
  return (struct cs_sim_inputs){s->workload,     p,   &s->compute, &s->topo, s->calp,
                                s->interference, NULL};
}

struct cs_search_inputs cs_scenario_search_inputs(const struct cs_scenario *s) {
  return (struct cs_search_inputs){s->workload, &s->compute, &s->gpu,
                                   &s->topo,    s->calp,     s->interference};
}

size_t cs_scenario_links(const struct cs_scenario *s, long nodes, int what_if, char *buf,
                         size_t len) {
  if (len == 0) return 0;
  buf[0] = '\0';
  if (!s->has_topology || s->calp == NULL) return 0;
  const struct cs_topology *topo = &s->topo;
  int n = nodes > 1 && topo->net.nics > 0 ? 2 : 1;
  struct cs_topo_group grp;
  struct cs_cal shape = *s->calp; /* shallow: nothing of it is freed */
  char links[768] = "";
  if (cs_topo_map_shape(topo, n, topo->node.gpus, 0, &grp, NULL) != CS_OK) return 0;
  cs_topo_cal_apply(topo, &grp, what_if ? CS_TOPO_NET_WHAT_IF : 0, &shape);
  cs_topo_cal_sources(&shape, n, links, sizeof links);
  size_t k = 0;
  for (const char *l = links; *l && k + 1 < len;) {
    size_t m = strcspn(l, "\n");
    int w = snprintf(buf + k, len - k, "# links     %.*s\n", (int)m, l);
    if (w < 0) break;
    k += (size_t)w < len - k ? (size_t)w : len - k - 1;
    l += m + (l[m] == '\n');
  }
  return k;
}
