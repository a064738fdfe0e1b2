/* calwrite.c — calibration.yaml written (calfile.h, cs_calfile_write; schema in
 * docs/calibration.md).
 *
 * The whole calibration is checked first (finite, non-negative parameters, a covariance that
 * matches the fitted set), so that the writer never produces a file the reader (calfile.c) would
 * refuse; then it is printed with plain fprintf into a temporary file in the target's directory,
 * which is renamed over the target only when every byte reached the disk. Numbers are written with
 * ten significant digits (round trip within 1e-9 relative), quantities with their unit (times in
 * us, bandwidths in GBps, windows in B), strings always double-quoted with every non-ASCII
 * character escaped, so that a configuration like "NCCL_ALGO=Ring;NCCL_PROTO=LL" or a path holding
 * ": " or "#" survives, and the file stays plain ASCII.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "calfile.h"
#include "calmpi.h"
#include "calnames.h"
#include "wfile.h"
#include "yamlcfg.h"

#define NUM_FMT "%.10g"

/* A dimensionless number, or null when it is not finite (statistics that were not computed). */
static void put_num(FILE *f, double v) {
  if (isfinite(v))
    fprintf(f, NUM_FMT, v);
  else
    fputs("null", f);
}

/* Parameter i's value with the unit cs_model_param_unit(i) asks for. */
static void put_param_value(FILE *f, int i, double v) {
  const char *u = cs_model_param_unit(i);
  if (strcmp(u, "s") == 0)
    fprintf(f, NUM_FMT "us", v * 1e6);
  else if (strcmp(u, "Bps") == 0)
    fprintf(f, NUM_FMT "GBps", v / 1e9);
  else if (strcmp(u, "B") == 0)
    fprintf(f, NUM_FMT "B", v);
  else
    fprintf(f, NUM_FMT, v);
}

static int fit_position(const struct cs_cal *cal, int i) {
  for (int k = 0; k < cal->n_fit; k++)
    if (cal->fit_index[k] == i) return k;
  return -1;
}

/* Refuses what the reader would refuse, so that a written file always reads back. */
static enum cs_status check_writable(const struct cs_cal *cal, struct cs_error *err) {
  char name[64];
  for (int i = 0; i < CS_MODEL_NPARAMS; i++) {
    double v = cs_model_param_get(&cal->model, i);
    if (!isfinite(v) || v < 0)
      return cs_error_set(err, CS_ERR_NUMERIC, "cannot write calibration: parameter %s is %g",
                          cs_model_param_name(i, name, sizeof name), v);
    if (cal->source[i] < CS_SRC_DEFAULT || cal->source[i] > CS_SRC_TOPO)
      return cs_error_set(err, CS_ERR_RANGE, "cannot write calibration: parameter %s has no source",
                          cs_model_param_name(i, name, sizeof name));
    if (cal->source[i] == CS_SRC_FIT && fit_position(cal, i) < 0)
      return cs_error_set(err, CS_ERR_RANGE,
                          "cannot write calibration: parameter %s is fitted but has no covariance",
                          cs_model_param_name(i, name, sizeof name));
  }
  if (cal->n_fit < 0 || cal->n_fit > CS_MODEL_NPARAMS || (cal->n_fit > 0 && cal->cov == NULL))
    return cs_error_set(err, CS_ERR_RANGE,
                        "cannot write calibration: covariance of %d parameters "
                        "is missing",
                        cal->n_fit);
  for (int k = 0; k < cal->n_fit; k++) {
    int i = cal->fit_index[k];
    if (i < 0 || i >= CS_MODEL_NPARAMS || cal->source[i] != CS_SRC_FIT || fit_position(cal, i) != k)
      return cs_error_set(err, CS_ERR_RANGE,
                          "cannot write calibration: covariance entry %d is not "
                          "a distinct fitted parameter",
                          k);
    for (int j = 0; j < cal->n_fit; j++)
      if (!isfinite(cal->cov[k * cal->n_fit + j]))
        return cs_error_set(err, CS_ERR_NUMERIC,
                            "cannot write calibration: covariance is not finite");
    if (cal->cov[k * cal->n_fit + k] < 0)
      return cs_error_set(err, CS_ERR_NUMERIC, "cannot write calibration: negative variance of %s",
                          cs_model_param_name(i, name, sizeof name));
  }
  if (cal->model.intra != CS_TIER_NVLINK && cal->model.intra != CS_TIER_PCIE)
    return cs_error_set(err, CS_ERR_RANGE,
                        "cannot write calibration: intra-node tier is not "
                        "nvlink or pcie");
  if ((unsigned)cal->model.net_form > CS_NET_TREE_LOG ||
      (unsigned)cal->model.select > CS_SELECT_NCCL_TABLE)
    return cs_error_set(err, CS_ERR_RANGE,
                        "cannot write calibration: unknown net form or selection");
  if (cal->model.algo_enabled == 0 || (cal->model.algo_enabled >> CS_ALGO_COUNT) != 0)
    return cs_error_set(err, CS_ERR_RANGE, "cannot write calibration: no valid algorithm enabled");
  for (int p = 0; p < CS_PROTO_COUNT; p++)
    if (!isfinite(cal->alt_hop_net[p]) || cal->alt_hop_net[p] < 0)
      return cs_error_set(err, CS_ERR_NUMERIC,
                          "cannot write calibration: alternative hop.net.%s "
                          "is %g",
                          cs_proto_name(p), cal->alt_hop_net[p]);
  if (cal->prov.n_sources < 0 || cal->prov.n_sources > CS_CAL_MAX_SOURCES ||
      cal->quality.n_cv < 0 || cal->quality.n_cv > CS_CAL_MAX_CV || cal->quality.n_resid < 0 ||
      cal->quality.n_resid > CS_CAL_MAX_RESID)
    return cs_error_set(err, CS_ERR_RANGE,
                        "cannot write calibration: too many sources, "
                        "cross-validation or residual entries");
  const struct cs_cal_quality *q = &cal->quality;
  if (q->n_node_counts < 0 || q->n_node_counts > CS_CAL_MAX_NODE_COUNTS)
    return cs_error_set(err, CS_ERR_RANGE, "cannot write calibration: too many node counts");
  for (int i = 0; i < q->n_node_counts; i++) {
    int c = q->node_counts[i];
    if (c < 1 || c > 100000000 || (i > 0 && c <= q->node_counts[i - 1]) ||
        (q->max_nodes > 0 && c > q->max_nodes))
      return cs_error_set(err, CS_ERR_RANGE,
                          "cannot write calibration: measured node counts are not distinct, "
                          "ascending and within 1..max_nodes");
  }
  if (q->n_resid > 0 && q->resid == NULL)
    return cs_error_set(err, CS_ERR_RANGE, "cannot write calibration: residual entries missing");
  for (int i = 0; i < q->n_resid; i++) {
    const struct cs_cal_resid *e = &q->resid[i];
    if (e->coll >= CS_COLL_COUNT || e->algo >= CS_ALGO_COUNT || e->proto >= CS_PROTO_COUNT ||
        e->octave < 0 || e->octave > 62 || e->points < 1 || !isfinite(e->rms_ln) || e->rms_ln < 0)
      return cs_error_set(err, CS_ERR_RANGE,
                          "cannot write calibration: residual entry %d is not a collective, "
                          "algorithm, protocol, octave 0..62, points >= 1 and rms >= 0",
                          i);
  }
  return CS_OK;
}

/* The optional steps section (sim/stepfit.h), written only when a steps fit filled it. */
static void emit_steps(FILE *f, const struct cs_cal_steps *s) {
  if (!s->fitted) return;
  fputs("steps:\n  source: ", f);
  cs_yaml_write_string(f, s->source);
  static const char *const keys[] = {"compute_scale",   "compute_scale_se", "host",
                                     "host_se",         "interference",     "interference_se",
                                     "corr_scale_host", "median_rel_err",   "max_rel_err"};
  const double v[] = {s->compute_scale,   s->compute_scale_se, s->host_s,
                      s->host_s_se,       s->interference,     s->interference_se,
                      s->corr_scale_host, s->median_rel_err,   s->max_rel_err};
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
    fprintf(f, "\n  %s: ", keys[k]);
    if ((k == 2 || k == 3) && isfinite(v[k]))
      fprintf(f, "%.9gs", v[k]);
    else
      put_num(f, v[k]);
  }
  fprintf(f, "\n  points: %d\n", s->points);
}

/* The provenance block of a calibration file: where the measurements came from (pv). */
static void emit_provenance(FILE *f, const struct cs_cal_prov *pv) {
  fputs("provenance:\n", f);
  static const struct {
    const char *key;
    size_t off;
  } pstr[] = {{"tool", offsetof(struct cs_cal_prov, tool)},
              {"created", offsetof(struct cs_cal_prov, created)},
              {"gpu", offsetof(struct cs_cal_prov, gpu)},
              {"nccl", offsetof(struct cs_cal_prov, nccl)},
              {"hosts", offsetof(struct cs_cal_prov, hosts)},
              {"config", offsetof(struct cs_cal_prov, config)},
              {"launch", offsetof(struct cs_cal_prov, launch)}};
  for (size_t k = 0; k < sizeof pstr / sizeof pstr[0]; k++) {
    fprintf(f, "  %s: ", pstr[k].key);
    cs_yaml_write_string(f, (const char *)pv + pstr[k].off);
    fputc('\n', f);
  }
  if (pv->n_sources == 0)
    fputs("  sources: []\n", f);
  else
    fputs("  sources:\n", f);
  for (int s = 0; s < pv->n_sources; s++) {
    fputs("    - ", f);
    cs_yaml_write_string(f, pv->sources[s]);
    fputc('\n', f);
  }
}

/* The covariance block: the fitted parameters' names and their covariance matrix (empty when
 * nothing was fitted). */
static void emit_covariance(FILE *f, const struct cs_cal *cal) {
  char name[64];
  fputs("covariance:\n", f);
  if (cal->n_fit == 0) {
    fputs("  params: []\n  matrix: []\n", f);
  } else {
    fputs("  params: [", f);
    for (int k = 0; k < cal->n_fit; k++)
      fprintf(f, "%s%s", k ? ", " : "", cs_model_param_name(cal->fit_index[k], name, sizeof name));
    fputs("]\n  matrix:\n", f);
    for (int r = 0; r < cal->n_fit; r++) {
      fputs("    - [", f);
      for (int c = 0; c < cal->n_fit; c++) {
        if (c) fputs(", ", f);
        put_num(f, cal->cov[r * cal->n_fit + c]);
      }
      fputs("]\n", f);
    }
  }
}

static void emit(FILE *f, const struct cs_cal *cal) {
  const struct cs_cal_prov *pv = &cal->prov;
  const struct cs_cal_quality *q = &cal->quality;
  const struct cs_model *m = &cal->model;
  char name[64];

  fputs("# commscale calibration: a fitted collective cost model (schema: docs/calibration.md)\n",
        f);
  fprintf(f, "version: %d\n", CS_CAL_VERSION);

  emit_provenance(f, pv);

  fputs("system:\n", f);
  fprintf(f, "  intra_tier: %s\n", cs_cal_intra_names[m->intra]);
  fprintf(f, "  net_form: %s\n", cs_cal_net_form_names[m->net_form]);
  fprintf(f, "  select: %s\n", cs_cal_select_names[m->select]);
  fputs("  algorithms: [", f);
  for (int a = 0, first = 1; a < CS_ALGO_COUNT; a++)
    if (m->algo_enabled & (1u << a)) {
      fprintf(f, "%s%s", first ? "" : ", ", cs_algo_name(a));
      first = 0;
    }
  fputs("]\n", f);
  fprintf(f, "  measured: {max_nodes: %d, max_ranks: %d, max_gpus_per_node: %d", q->max_nodes,
          q->max_ranks, q->max_gpus_per_node);
  if (q->n_node_counts > 0) {
    fputs(", node_counts: [", f);
    for (int i = 0; i < q->n_node_counts; i++)
      fprintf(f, "%s%d", i ? ", " : "", q->node_counts[i]);
    fputc(']', f);
  }
  fputs("}\n", f);

  fputs("parameters:\n", f);
  for (int i = 0; i < CS_MODEL_NPARAMS; i++) {
    fprintf(f, "  %s: {value: ", cs_model_param_name(i, name, sizeof name));
    put_param_value(f, i, cs_model_param_get(m, i));
    int k = cal->source[i] == CS_SRC_FIT ? fit_position(cal, i) : -1;
    if (k >= 0) {
      fputs(", se_rel: ", f);
      put_num(f, sqrt(cal->cov[k * cal->n_fit + k]));
    }
    fprintf(f, ", source: %s}\n", cs_cal_source_names[cal->source[i]]);
  }

  emit_covariance(f, cal);

  fputs("alternative:\n", f);
  fprintf(f, "  net_form: %s\n", cs_cal_net_form_names[m->net_form == CS_NET_RING_LINEAR]);
  for (int p = 0; p < CS_PROTO_COUNT; p++)
    fprintf(f, "  hop.net.%s: " NUM_FMT "us\n", cs_proto_name(p), cal->alt_hop_net[p] * 1e6);

  fputs("quality:\n", f);
  fprintf(f, "  points: %d\n  outliers: %d\n  iterations: %d\n  converged: %s\n", q->points,
          q->outliers, q->iterations, q->converged ? "true" : "false");
  static const struct {
    const char *key;
    size_t off;
  } qnum[] = {{"noise_rel", offsetof(struct cs_cal_quality, noise_rel)},
              {"median_rel_err", offsetof(struct cs_cal_quality, median_rel_err)},
              {"p90_rel_err", offsetof(struct cs_cal_quality, p90_rel_err)},
              {"max_rel_err", offsetof(struct cs_cal_quality, max_rel_err)},
              {"extrap_sd", offsetof(struct cs_cal_quality, extrap_sd)}};
  for (size_t k = 0; k < sizeof qnum / sizeof qnum[0]; k++) {
    fprintf(f, "  %s: ", qnum[k].key);
    put_num(f, *(const double *)((const char *)q + qnum[k].off));
    fputc('\n', f);
  }
  fprintf(f, "  aic: {%s: ", cs_cal_net_form_names[0]);
  put_num(f, q->aic[0]);
  fprintf(f, ", %s: ", cs_cal_net_form_names[1]);
  put_num(f, q->aic[1]);
  fprintf(f, "}\n  net_determined: %s\n", q->net_determined ? "true" : "false");
  if (isfinite(q->extrap_sd))
    fprintf(f, "  extrap_from: %d\n  extrap_to: %d\n", q->extrap_from, q->extrap_to);
  if (q->n_resid > 0) fputs("  residuals:\n", f);
  for (int i = 0; i < q->n_resid; i++) {
    const struct cs_cal_resid *e = &q->resid[i];
    fprintf(f,
            "    - {collective: %s, algorithm: %s, protocol: %s, octave: %d, points: %d, rms_ln: ",
            cs_coll_name(e->coll), cs_algo_name(e->algo), cs_proto_name(e->proto), e->octave,
            e->points);
    put_num(f, e->rms_ln);
    fputs("}\n", f);
  }
  if (q->gate[0]) {
    fputs("  gate: ", f);
    cs_yaml_write_string(f, q->gate);
    fprintf(f, "\n  forced: %s\n", q->forced ? "true" : "false");
  }

  if (q->n_cv == 0)
    fputs("cross_validation: []\n", f);
  else
    fputs("cross_validation:\n", f);
  for (int c = 0; c < q->n_cv; c++) {
    fputs("  - {held_out: ", f);
    cs_yaml_write_string(f, q->cv[c].group);
    fprintf(f, ", points: %d, median_rel_err: ", q->cv[c].points);
    put_num(f, q->cv[c].median_rel_err);
    fputs(", max_rel_err: ", f);
    put_num(f, q->cv[c].max_rel_err);
    fputs("}\n", f);
  }
  emit_steps(f, &cal->steps);
  cs_calmpi_emit(f, &cal->mpi);
}

enum cs_status cs_calfile_write(const char *path, const struct cs_cal *cal, struct cs_error *err) {
  enum cs_status st = check_writable(cal, err);
  if (st != CS_OK) return st;
  /* a temporary beside the file renamed over it; a device, FIFO or stdout written through */
  struct cs_wfile *w;
  if ((st = cs_wfile_open(path, &w, err)) != CS_OK) return st;
  emit(cs_wfile_fp(w), cal);
  return cs_wfile_commit(w, err);
}
