/* cmd_fit.c — `commscale fit`: fit the cost model to measurements and write calibration.yaml.
 *
 * Prints the fitted model (every parameter the data determined, with its relative standard
 * error), the fit quality, which network-latency form the data supports, and the leave-one-shape-
 * out cross-validation. With --report it also prints every fitted point (measured vs model, and
 * NCCL's own prediction when --nccl-log names a TUNING debug log) and per-shape error summaries,
 * so that our model and NCCL's can be compared on the same points.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calfile.h"
#include "cmds.h"
#include "fit.h"
#include "measread.h"
#include "mpifit.h"
#include "nccltests.h"
#include "opts.h"
#include "output.h"
#include "setup.h"
#include "stats.h"
#include "stepfit.h"
#include "units.h"

static const struct cli_opt opts[] = {
    {"output", 'o', "FILE", "calibration file to write (default calibration.yaml; - = stdout)"},
    {"config", 0, "TAG",
     "fit the rows with this NCCL_* configuration tag (default: untagged rows)"},
    {"launch", 0, "KIND",
     "fit rows launched as 'process' (one per GPU) or 'thread' (default: most rows)"},
    {"in-place", 0, NULL, "fit in-place rows too (default: out-of-place only)"},
    {"no-cv", 0, NULL, "skip leave-one-shape-out cross-validation"},
    {"prior", 0, "SRC",
     "centre the parameters' priors on 'defaults' (the default: NCCL's constants with the tree's "
     "network side from published multi-node runs), 'nccl' (NCCL's constants alone) or the "
     "values of a calibration FILE (e.g. a larger cluster's); parameters the data does not "
     "determine take these values"},
    {"report", 0, NULL, "print every fitted point and per-shape error summaries"},
    {"nccl-log", 0, "LOG",
     "compare with NCCL's own model read from an NCCL_DEBUG_SUBSYS=TUNING log"},
    {"format", 0, "FMT",
     "summary format: table (default); json (one object: parameters, quality, and with --report "
     "the points and shapes); csv (one table: the fitted parameters, or with --report the points)"},
    {"steps", 0, "FILE",
     "steps calibration: fit compute scale, host overhead and interference to the timed "
     "training steps of FILE (YAML; docs/calibration.md) instead of collectives"},
    {"cal", 0, "FILE", "with --steps: the calibration to add the steps section to (default: none)"},
    {"check", 0, "FILE", "with --steps: steps to predict with the fit (held out), with errors"},
    {"quiet", 'q', NULL, "print nothing but errors"},
    {"force", 0, NULL,
     "write the calibration even when it fails the quality gate (marked so in the file)"},
};

static const struct cli_verb verb = {
    "fit",
    "MEASUREMENTS... [-o calibration.yaml] [--report] [--nccl-log LOG] | --steps FILE [--cal IN] "
    "[--check FILE]",
    "Fit the collective cost model to measurements (commscale CSV or nccl-tests logs).",
    "The fit uses one configuration at a time: rows whose NCCL_* settings (other than NCCL_ALGO\n"
    "and NCCL_PROTO) differ are different systems. Parameters no row depends on keep their\n"
    "defaults (--prior) and are marked 'default'. See docs/model.md and docs/calibration.md.",
    opts,
    (int)(sizeof opts / sizeof opts[0]),
    NULL};

static double percent(double x) {
  return 100.0 * x;
}

static void print_model(FILE *o, const struct cs_cal *cal) {
  fprintf(o,
          "# fitted parameters (value, relative standard error; the rest keep their defaults)\n");
  fprintf(o, "%-26s %16s %8s\n", "parameter", "value", "se");
  for (int k = 0; k < cal->n_fit; k++) {
    int i = cal->fit_index[k];
    char name[64], val[48];
    cs_model_param_name(i, name, sizeof name);
    double v = cs_model_param_get(&cal->model, i);
    const char *u = cs_model_param_unit(i);
    if (strcmp(u, "s") == 0)
      snprintf(val, sizeof val, "%.4g us", v * 1e6);
    else if (strcmp(u, "Bps") == 0)
      snprintf(val, sizeof val, "%.4g GB/s", v / 1e9);
    else if (strcmp(u, "B") == 0)
      snprintf(val, sizeof val, "%.4g KiB", v / 1024);
    else
      snprintf(val, sizeof val, "%.4g", v);
    fprintf(o, "%-26s %16s %7.1f%%\n", name, val, percent(cs_cal_param_se(cal, i)));
  }
}

static void print_quality(FILE *o, const struct cs_cal *cal) {
  const struct cs_cal_quality *q = &cal->quality;
  fprintf(o,
          "# fit: %d points, median |error| %.1f%%, p90 %.1f%%, max %.1f%%, robust noise %.1f%%, "
          "%d outliers down-weighted\n",
          q->points, percent(q->median_rel_err), percent(q->p90_rel_err), percent(q->max_rel_err),
          percent(q->noise_rel), q->outliers);
  if (!q->net_determined)
    fprintf(o,
            "# network latency: not determined by this data (one node count); predictions across "
            "nodes carry both the ring-linear and tree-log forms in their band\n");
  else
    fprintf(
        o, "# network latency: %s explains the data better (AIC ring-linear %.1f, tree-log %.1f)\n",
        cal->model.net_form == CS_NET_RING_LINEAR ? "ring-linear" : "tree-log", q->aic[0],
        q->aic[1]);
  if (isfinite(q->extrap_sd))
    fprintf(
        o,
        "# extrapolation: refitted without the %d-node rows, those predicted from %d nodes "
        "miss by %.1f%% (log, beyond the fit's noise); the band beyond %d nodes widens by that per "
        "sqrt(doubling)\n",
        q->extrap_to, q->extrap_from, 100 * cs_cal_extrap_miss(q), q->max_nodes);
  else if (q->net_determined)
    fprintf(o,
            "# extrapolation: fewer than three node counts measured; the band beyond %d nodes "
            "widens by the default %.3f per sqrt(doubling) (model/cal.h)\n",
            q->max_nodes, CS_CAL_EXTRAP_SD);
  if (q->n_resid > 0) {
    /* the widest misfit window, the one the band widens most for */
    int w = 0;
    for (int i = 1; i < q->n_resid; i++)
      if (q->resid[i].rms_ln > q->resid[w].rms_ln) w = i;
    const struct cs_cal_resid *r = &q->resid[w];
    char size[32];
    cs_units_format_size(ldexp(1, r->octave), size, sizeof size);
    fprintf(o,
            "# band by size: %d size windows missed by more than the noise (quality.residuals), "
            "the widest %s %s/%s around %s by %.1f%% (rms, log); the band there widens to it\n",
            q->n_resid, cs_coll_name(r->coll), cs_algo_name(r->algo), cs_proto_name(r->proto), size,
            100 * r->rms_ln);
  }
  if (q->n_cv > 0) {
    fprintf(o, "# cross-validation: each shape held out, the rest refitted, the held-out shape "
               "predicted\n");
    fprintf(o, "%-32s %6s %9s %9s\n", "held_out", "points", "median", "max");
    for (int i = 0; i < q->n_cv; i++)
      fprintf(o, "%-32s %6d %8.1f%% %8.1f%%\n", q->cv[i].group, q->cv[i].points,
              percent(q->cv[i].median_rel_err), percent(q->cv[i].max_rel_err));
  }
}

/* One fitted point of the report. */
struct point_rec {
  const struct cs_meas_row *row;
  double model_us, err, nccl_us, nccl_err;
};

/* median and max of |v| (v replaced by |v|, sorted) */
static void med_max(double *v, size_t n, double *med, double *max) {
  *med = *max = NAN;
  if (n == 0) return;
  for (size_t i = 0; i < n; i++)
    v[i] = fabs(v[i]);
  *med = cs_stats_median(v, n);
  *max = v[n - 1];
}

static void print_report(FILE *o, const struct point_rec *p, size_t n, int fmt, int have_nccl) {
  if (fmt == CLI_CSV) {
    fprintf(o,
            "collective,algorithm,protocol,ranks,nodes,gpus_per_node,bytes,measured_us,model_us,"
            "err_pct%s\n",
            have_nccl ? ",nccl_us,nccl_err_pct" : "");
  } else {
    fprintf(o, "# every fitted point: measured vs model%s\n",
            have_nccl ? " vs NCCL's own table" : "");
    fprintf(o, "%-14s %-5s %-6s %5s %5s %4s %12s %11s %11s %7s", "collective", "algo", "proto",
            "ranks", "nodes", "gpn", "bytes", "measured_us", "model_us", "err%");
    if (have_nccl) fprintf(o, " %11s %7s", "nccl_us", "err%");
    fprintf(o, "\n");
  }
  for (size_t i = 0; i < n; i++) {
    const struct cs_meas_row *r = p[i].row;
    if (fmt == CLI_CSV) {
      fprintf(o, "%s,%s,%s,%d,%d,%d,%.0f,%.6g,%.6g,%.3f", cs_coll_name(r->coll),
              cs_algo_name(r->algo), cs_proto_name(r->proto), r->ranks, r->nodes, r->gpus_per_node,
              r->bytes, r->time_us, p[i].model_us, percent(p[i].err));
      if (have_nccl) {
        if (isfinite(p[i].nccl_us))
          fprintf(o, ",%.6g,%.3f", p[i].nccl_us, percent(p[i].nccl_err));
        else
          fprintf(o, ",,");
      }
      fprintf(o, "\n");
    } else {
      char sz[32];
      cs_units_format_size(r->bytes, sz, sizeof sz);
      fprintf(o, "%-14s %-5s %-6s %5d %5d %4d %12s %11.2f %11.2f %+6.1f%%", cs_coll_name(r->coll),
              cs_algo_name(r->algo), cs_proto_name(r->proto), r->ranks, r->nodes, r->gpus_per_node,
              sz, r->time_us, p[i].model_us, percent(p[i].err));
      if (have_nccl) {
        if (isfinite(p[i].nccl_us))
          fprintf(o, " %11.2f %+6.1f%%", p[i].nccl_us, percent(p[i].nccl_err));
        else
          fprintf(o, " %11s %7s", "-", "-");
      }
      fprintf(o, "\n");
    }
  }
}

/* One shape (collective, algorithm, protocol, ranks, nodes, gpn) of the report: median and max
 * error of ours and, where known (nb > 0), NCCL's on the same points. */
struct shape_rec {
  const struct cs_meas_row *row;
  size_t na, nb;
  double lo, hi, am, ax, bm, bx;
};

/* Groups the n points into shapes (out has room for n) and stores their number in *nshapes;
 * returns -1 when out of memory. */
static int group_shapes(const struct point_rec *p, size_t n, struct shape_rec *out,
                        size_t *nshapes) {
  double *a = malloc((n ? n : 1) * sizeof *a), *b = malloc((n ? n : 1) * sizeof *b);
  char *done = calloc(n ? n : 1, 1);
  size_t ns = 0;
  int rc = a && b && done ? 0 : -1;
  if (rc) goto out;
  for (size_t i = 0; i < n; i++) {
    if (done[i]) continue;
    const struct cs_meas_row *r = p[i].row;
    size_t na = 0, nb = 0;
    double lo = r->bytes, hi = r->bytes;
    for (size_t j = i; j < n; j++) {
      const struct cs_meas_row *s = p[j].row;
      if (done[j] || s->coll != r->coll || s->algo != r->algo || s->proto != r->proto ||
          s->ranks != r->ranks || s->nodes != r->nodes || s->gpus_per_node != r->gpus_per_node)
        continue;
      done[j] = 1;
      a[na++] = p[j].err;
      if (isfinite(p[j].nccl_err)) b[nb++] = p[j].nccl_err;
      if (s->bytes < lo) lo = s->bytes;
      if (s->bytes > hi) hi = s->bytes;
    }
    struct shape_rec *x = &out[ns++];
    x->row = r, x->na = na, x->nb = nb, x->lo = lo, x->hi = hi;
    med_max(a, na, &x->am, &x->ax);
    med_max(b, nb, &x->bm, &x->bx);
  }
out:
  free(a);
  free(b);
  free(done);
  *nshapes = ns;
  return rc;
}

static void print_summary(FILE *o, const struct shape_rec *s, size_t ns, int have_nccl) {
  fprintf(o, "# error per shape: commscale%s on the same points\n",
          have_nccl ? " vs NCCL's own model" : "");
  fprintf(o, "%-14s %-5s %-6s %5s %5s %4s %6s %13s %10s", "collective", "algo", "proto", "ranks",
          "nodes", "gpn", "points", "sizes", "median");
  fprintf(o, " %9s", "max");
  if (have_nccl) fprintf(o, " %12s %9s", "nccl_median", "nccl_max");
  fprintf(o, "\n");
  for (size_t i = 0; i < ns; i++) {
    const struct shape_rec *x = &s[i];
    const struct cs_meas_row *r = x->row;
    char sl[16], sh[16], range[40];
    cs_units_format_size(x->lo, sl, sizeof sl);
    cs_units_format_size(x->hi, sh, sizeof sh);
    snprintf(range, sizeof range, "%s-%s", sl, sh);
    fprintf(o, "%-14s %-5s %-6s %5d %5d %4d %6zu %13s %9.1f%% %8.1f%%", cs_coll_name(r->coll),
            cs_algo_name(r->algo), cs_proto_name(r->proto), r->ranks, r->nodes, r->gpus_per_node,
            x->na, range, percent(x->am), percent(x->ax));
    if (have_nccl) {
      if (x->nb)
        fprintf(o, " %11.1f%% %8.1f%%", percent(x->bm), percent(x->bx));
      else
        fprintf(o, " %12s %9s", "-", "-");
    }
    fprintf(o, "\n");
  }
}

/* The fit as one JSON object: provenance, every fitted parameter with its relative standard
 * error, the quality and cross-validation, and with --report the points and the shapes. */
static void write_json(FILE *o, int argc, char **argv, const char *out, size_t rows,
                       const struct cs_cal *cal, const struct point_rec *p, size_t n,
                       const struct shape_rec *s, size_t ns, int report) {
  const struct cs_cal_quality *q = &cal->quality;
  cli_json_head(o, argc, argv);
  fputs(",\n \"calibration\": ", o);
  cli_json_string(o, out);
  fprintf(o, ", \"rows\": %zu, \"configuration\": ", rows);
  cli_json_string(o, cal->prov.config);
  fputs(", \"launch\": ", o);
  cli_json_string(o, cal->prov.launch);
  fputs(", \"gpu\": ", o);
  cli_json_string(o, cal->prov.gpu);
  fputs(", \"nccl\": ", o);
  cli_json_string(o, cal->prov.nccl);
  fputs(",\n \"parameters\": [", o);
  for (int k = 0; k < cal->n_fit; k++) {
    int i = cal->fit_index[k];
    char name[64];
    cs_model_param_name(i, name, sizeof name);
    fprintf(o, "%s\n  {\"name\": ", k ? "," : "");
    cli_json_string(o, name);
    fputs(", \"value\": ", o);
    cli_json_num(o, "%.10g", cs_model_param_get(&cal->model, i));
    fputs(", \"unit\": ", o);
    cli_json_string(o, cs_model_param_unit(i));
    fputs(", \"rel_se\": ", o);
    cli_json_num(o, "%.6g", cs_cal_param_se(cal, i));
    fputc('}', o);
  }
  fprintf(o, "],\n \"quality\": {\"points\": %d, \"median_rel_err\": ", q->points);
  cli_json_num(o, "%.6g", q->median_rel_err);
  fputs(", \"p90_rel_err\": ", o);
  cli_json_num(o, "%.6g", q->p90_rel_err);
  fputs(", \"max_rel_err\": ", o);
  cli_json_num(o, "%.6g", q->max_rel_err);
  fputs(", \"noise_rel\": ", o);
  cli_json_num(o, "%.6g", q->noise_rel);
  fprintf(o, ", \"outliers\": %d, \"net_determined\": %s, \"net_form\": \"%s\", \"aic\": [",
          q->outliers, q->net_determined ? "true" : "false",
          cal->model.net_form == CS_NET_RING_LINEAR ? "ring-linear" : "tree-log");
  cli_json_num(o, "%.6g", q->aic[0]);
  fputs(", ", o);
  cli_json_num(o, "%.6g", q->aic[1]);
  fputs("], \"extrap_sd\": ", o);
  cli_json_num(o, "%.6g", q->extrap_sd);
  fputs("},\n \"cross_validation\": [", o);
  for (int i = 0; i < q->n_cv; i++) {
    fprintf(o, "%s\n  {\"held_out\": ", i ? "," : "");
    cli_json_string(o, q->cv[i].group);
    fprintf(o, ", \"points\": %d, \"median_rel_err\": ", q->cv[i].points);
    cli_json_num(o, "%.6g", q->cv[i].median_rel_err);
    fputs(", \"max_rel_err\": ", o);
    cli_json_num(o, "%.6g", q->cv[i].max_rel_err);
    fputc('}', o);
  }
  fputc(']', o);
  if (report) {
    fputs(",\n \"points\": [", o);
    for (size_t i = 0; i < n; i++) {
      const struct cs_meas_row *r = p[i].row;
      fprintf(o,
              "%s\n  {\"collective\": \"%s\", \"algorithm\": \"%s\", \"protocol\": \"%s\", "
              "\"ranks\": %d, \"nodes\": %d, \"gpus_per_node\": %d, \"bytes\": %.0f, "
              "\"measured_us\": ",
              i ? "," : "", cs_coll_name(r->coll), cs_algo_name(r->algo), cs_proto_name(r->proto),
              r->ranks, r->nodes, r->gpus_per_node, r->bytes);
      const double v[] = {r->time_us, p[i].model_us, percent(p[i].err), p[i].nccl_us,
                          percent(p[i].nccl_err)};
      static const char *const k[] = {"model_us", "err_pct", "nccl_us", "nccl_err_pct"};
      cli_json_num(o, "%.6g", v[0]);
      for (int j = 0; j < 4; j++) {
        fprintf(o, ", \"%s\": ", k[j]);
        cli_json_num(o, "%.6g", v[j + 1]);
      }
      fputc('}', o);
    }
    fputs("],\n \"shapes\": [", o);
    for (size_t i = 0; i < ns; i++) {
      const struct cs_meas_row *r = s[i].row;
      fprintf(o,
              "%s\n  {\"collective\": \"%s\", \"algorithm\": \"%s\", \"protocol\": \"%s\", "
              "\"ranks\": %d, \"nodes\": %d, \"gpus_per_node\": %d, \"points\": %zu, "
              "\"bytes_min\": %.0f, \"bytes_max\": %.0f, \"median_err_pct\": ",
              i ? "," : "", cs_coll_name(r->coll), cs_algo_name(r->algo), cs_proto_name(r->proto),
              r->ranks, r->nodes, r->gpus_per_node, s[i].na, s[i].lo, s[i].hi);
      cli_json_num(o, "%.6g", percent(s[i].am));
      fputs(", \"max_err_pct\": ", o);
      cli_json_num(o, "%.6g", percent(s[i].ax));
      fputs(", \"nccl_median_err_pct\": ", o);
      cli_json_num(o, "%.6g", s[i].nb ? percent(s[i].bm) : NAN);
      fputs(", \"nccl_max_err_pct\": ", o);
      cli_json_num(o, "%.6g", s[i].nb ? percent(s[i].bx) : NAN);
      fputc('}', o);
    }
    fputc(']', o);
  }
  fputs("}\n", o);
}

/* The fitted parameters as one CSV table (--format csv without --report). */
static void write_params_csv(FILE *o, const struct cs_cal *cal) {
  fputs("parameter,value,unit,rel_se\n", o);
  for (int k = 0; k < cal->n_fit; k++) {
    int i = cal->fit_index[k];
    char name[64];
    cs_model_param_name(i, name, sizeof name);
    cli_csv_field(o, name);
    fprintf(o, ",%.10g,", cs_model_param_get(&cal->model, i));
    cli_csv_field(o, cs_model_param_unit(i));
    fprintf(o, ",%.6g\n", cs_cal_param_se(cal, i));
  }
}

/* --report: every fitted point beside its measurement (and NCCL's own model from a tuning log,
 * at the 2-rank shape it was printed for), and the points grouped by shape. */
static enum cs_status points_report(const struct cs_meas_set *set, const struct cs_fit_result *res,
                                    const struct cs_nccl_tuning *tuning, struct point_rec **ptsp,
                                    struct shape_rec **shapesp, size_t *ns, struct cs_error *err) {
  struct point_rec *pts = *ptsp = calloc(res->n ? res->n : 1, sizeof *pts);
  struct shape_rec *shapes = *shapesp = calloc(res->n ? res->n : 1, sizeof *shapes);
  if (pts == NULL || shapes == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < res->n; i++) {
    pts[i].row = &set->rows[res->row[i]];
    pts[i].model_us = res->pred_us[i];
    pts[i].err = res->pred_us[i] / pts[i].row->time_us - 1.0;
    pts[i].nccl_us = pts[i].nccl_err = NAN;
    if (!tuning) continue;
    const struct cs_meas_row *r = pts[i].row;
    double t = -1;
    if (r->algo == CS_ALGO_AUTO && r->proto == CS_PROTO_AUTO) {
      t = cs_nccltests_tuning_time_us(tuning, r->coll, r->bytes, NULL, NULL);
    } else if (r->algo != CS_ALGO_AUTO && r->proto != CS_PROTO_AUTO &&
               tuning->bw_GBps[r->coll][r->algo][r->proto] > 0) {
      t = tuning->lat_us[r->coll][r->algo][r->proto] +
          r->bytes / (1000.0 * tuning->bw_GBps[r->coll][r->algo][r->proto]);
    }
    /* NCCL's table describes the shape it was printed for */
    if (t > 0 && r->ranks == 2) {
      pts[i].nccl_us = t;
      pts[i].nccl_err = t / r->time_us - 1.0;
    }
  }
  if (group_shapes(pts, res->n, shapes, ns) != 0)
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  return CS_OK;
}

/* The fit's options (configuration, launch, in-place rows, cross-validation, the priors' centres,
 * kept in *prior) into fo. */
static enum cs_status fit_opts(const struct cli_args *a, struct cs_fit_opts *fo,
                               struct cs_model *prior, struct cs_error *err) {
  cs_fit_opts_default(fo);
  const char *src = cli_get(&verb, a, "prior");
  if (src && strcmp(src, "nccl") == 0) {
    cs_model_nccl_tuning(prior);
    fo->prior = prior;
  } else if (src && strcmp(src, "defaults") != 0) {
    struct cs_cal pc;
    cs_cal_init(&pc);
    enum cs_status st = cs_calfile_read(src, &pc, err);
    *prior = pc.model;
    cs_cal_fini(&pc);
    if (st != CS_OK) return st;
    fo->prior = prior;
  }
  fo->config = cli_get(&verb, a, "config");
  const char *launch = cli_get(&verb, a, "launch");
  if (launch) {
    enum cs_launch l;
    if (cs_meas_launch_parse(launch, &l) != 0)
      return cs_error_set(err, CS_ERR_USAGE, "--launch expects process or thread, got \"%s\"",
                          launch);
    fo->launch = (int)l;
  }
  fo->with_in_place = cli_get(&verb, a, "in-place") != NULL;
  fo->cross_validate = cli_get(&verb, a, "no-cv") == NULL;
  return CS_OK;
}

/* Prints measured and predicted steps of s with the fit f (and without it), their errors. */
static enum cs_status print_steps(FILE *o, const char *title, const struct cs_steps *s,
                                  const struct cs_cal_steps *f, struct cs_error *err) {
  fprintf(o, "# %s\n%-44s %11s %11s %8s %11s %8s\n", title, "step", "measured", "model", "error",
          "fitted", "error");
  for (size_t i = 0; i < cs_steps_count(s); i++) {
    double m = cs_steps_measured(s, i), t0 = 0, t1 = 0;
    enum cs_status st = cs_steps_predict(s, i, NULL, &t0, err);
    if (st == CS_OK) st = cs_steps_predict(s, i, f, &t1, err);
    if (st != CS_OK) return st;
    fprintf(o, "%-44.44s %9.2fms %9.2fms %+7.1f%% %9.2fms %+7.1f%%\n", cs_steps_name(s, i), m * 1e3,
            t0 * 1e3, percent(t0 / m - 1), t1 * 1e3, percent(t1 / m - 1));
  }
  return CS_OK;
}

static int steps_mode(const struct cli_args *a) {
  struct cs_error err = {0};
  if (a->npos > 0) {
    cs_error_set(&err, CS_ERR_USAGE, "--steps fits timed steps: give no measurements files");
    return cli_fail("fit", &err);
  }
  const char *path = cli_get(&verb, a, "steps"), *base = cli_get(&verb, a, "cal");
  const char *check = cli_get(&verb, a, "check"), *out = cli_get(&verb, a, "output");
  int quiet = cli_get(&verb, a, "quiet") != NULL;
  if (out == NULL) out = "calibration.yaml";
  char exe[4096];
  cli_exe_path(exe, sizeof exe);
  struct cs_cal cal;
  cs_cal_init(&cal);
  struct cs_steps *s = NULL, *held = NULL;
  enum cs_status st = base ? cs_calfile_read(base, &cal, &err) : CS_OK;
  if (st == CS_OK) st = cs_steps_load(path, exe, &s, &err);
  if (st == CS_OK && check) st = cs_steps_load(check, exe, &held, &err);
  if (st == CS_OK) st = cs_steps_fit(s, &cal.steps, &err);
  if (st == CS_OK) {
    snprintf(cal.steps.source, sizeof cal.steps.source, "%s", path);
    st = cs_calfile_write(out, &cal, &err);
  }
  if (st == CS_OK && !quiet) {
    const struct cs_cal_steps *f = &cal.steps;
    FILE *o = strcmp(out, "-") == 0 ? stderr : stdout;
    fprintf(stderr, "commscale fit: wrote %s\n", out);
    fprintf(o, "# commscale fit --steps %s: %d steps\n", path, f->points);
    fprintf(o, "%-16s %12s %12s\n", "parameter", "value", "se");
    fprintf(o, "%-16s %12.4f %12.4f\n", "compute_scale", f->compute_scale, f->compute_scale_se);
    if (isfinite(f->host_s_se))
      fprintf(o, "%-16s %10.3fms %10.3fms  (correlation with the scale %+.2f)\n", "host",
              f->host_s * 1e3, f->host_s_se * 1e3, f->corr_scale_host);
    else
      fprintf(o, "%-16s %12s %12s  (not determined: the steps move with the compute scale)\n",
              "host", "0", "-");
    if (isfinite(f->interference_se))
      fprintf(o, "%-16s %12.4f %12.4f\n", "interference", f->interference, f->interference_se);
    else
      fprintf(o, "%-16s %12.4f %12s  (default: no step has more than one GPU)\n", "interference",
              f->interference, "-");
    fprintf(o, "# fit: median |error| %.1f%%, max %.1f%%\n", percent(f->median_rel_err),
            percent(f->max_rel_err));
    st = print_steps(o, "fitted steps", s, f, &err);
    if (st == CS_OK && held) st = print_steps(o, "held-out steps (--check)", held, f, &err);
  }
  cs_steps_free(s);
  cs_steps_free(held);
  cs_cal_fini(&cal);
  return st == CS_OK ? 0 : cli_fail("fit", &err);
}

/* MPI rows (the runner's mpi backend): fits Open MPI's all_reduce and all_gather laws into cal->mpi
 * (mpifit.h), of every configuration, forced algorithms included, and fails the quality gate on
 * them as on the collective model. The collective model's fit takes one configuration: without
 * --config and without untagged rows, the configuration with the most rows (said on stderr). */
static enum cs_status mpi_section(const struct cs_meas_set *set, struct cs_fit_opts *fo,
                                  struct cs_cal *cal, int quiet, struct cs_error *err) {
  static char pick[256];
  if (fo->config == NULL) {
    /* the configurations present (the first 64 distinct ones) and their row counts */
    const char *cfg[64];
    size_t count[64] = {0}, ncfg = 0, best = 0, untagged = 0;
    for (size_t i = 0; i < set->n; i++) {
      const char *c = set->rows[i].config;
      size_t k = 0;
      untagged += c[0] == '\0';
      while (k < ncfg && strcmp(cfg[k], c) != 0)
        k++;
      if (k == ncfg && ncfg < 64) cfg[ncfg++] = c;
      if (k < ncfg && ++count[k] > best) best = count[k], snprintf(pick, sizeof pick, "%s", c);
    }
    if (untagged == 0 && best > 0) {
      fo->config = pick;
      if (!quiet)
        fprintf(stderr,
                "commscale fit: the collective model takes configuration \"%s\" (most "
                "rows; choose another with --config)\n",
                pick);
    }
  }
  struct cs_mpifit_notes notes = {0};
  enum cs_status st = cs_mpifit_run(set, &cal->mpi, &notes, err);
  for (int i = 0; st == CS_OK && !quiet && i < notes.n; i++)
    fprintf(stderr, "commscale fit: MPI laws: %s\n", notes.line[i]);
  return st;
}

/* The quality gate of the MPI laws, beside the collective model's (fit.h's levels). */
static void mpi_gate(struct cs_cal *cal) {
  const struct cs_mpi_fit *m = &cal->mpi;
  if (!m->fitted || cal->quality.gate[0]) return;
  if (m->median_rel_err > CS_FIT_GATE_MEDIAN || m->cv_median_rel_err > CS_FIT_GATE_CV)
    snprintf(cal->quality.gate, sizeof cal->quality.gate,
             "the MPI laws miss their rows by a median of %.0f%% (held-out shapes %.0f%%; gate "
             "%.0f%%, %.0f%%)",
             100 * m->median_rel_err, 100 * m->cv_median_rel_err, 100 * CS_FIT_GATE_MEDIAN,
             100 * CS_FIT_GATE_CV);
}

/* The MPI laws' parameters and quality (cal->mpi), after the collective model's. */
static void print_mpi(FILE *o, const struct cs_cal *cal) {
  const struct cs_mpi_fit *m = &cal->mpi;
  if (!m->fitted) return;
  fprintf(o,
          "# MPI laws (%s; Open MPI's all_reduce and all_gather algorithms, model/mpicoll.h): %d "
          "rows\n",
          m->library, m->points);
  fprintf(o, "%-14s %14s %12s\n", "parameter", "value", "se");
  for (int i = 0; i < CS_MPI_NPARAMS; i++) {
    int beta = i == CS_MPI_BETA(CS_MPI_LOCAL) || i == CS_MPI_BETA(CS_MPI_NET);
    if (!(m->determined & (1u << i)))
      fprintf(o, "%-14s %14s %12s  (not determined)\n", cs_mpi_param_name(i), "-", "-");
    else if (beta)
      fprintf(o, "%-14s %11.4g MB/s %9.1f%%\n", cs_mpi_param_name(i), 1e-6 / m->theta[i],
              100 * sqrt(m->cov[i][i]) / m->theta[i]);
    else
      fprintf(o, "%-14s %12.4g %s %9.1f%%\n", cs_mpi_param_name(i), m->theta[i],
              i == CS_MPI_GAMMA || i == CS_MPI_BEYOND(CS_MPI_LOCAL) ||
                      i == CS_MPI_BEYOND(CS_MPI_NET)
                  ? "s/B"
                  : "s  ",
              100 * sqrt(m->cov[i][i]) / m->theta[i]);
  }
  fprintf(o, "# MPI laws: median |error| %.1f%%, max %.1f%%, held-out shapes %.1f%%\n",
          percent(m->median_rel_err), percent(m->max_rel_err), percent(m->cv_median_rel_err));
  char setup[200];
  fprintf(o, "# MPI laws: %s\n", cs_mpi_setup_describe(&m->setup, setup, sizeof setup));
}

/* A calibration that fails its quality gate (cal->quality.gate set): an error (CS_ERR_NUMERIC,
 * the fit's notes and quality on stderr unless quiet) that keeps it from being written, or with
 * --force a warning and the mark in the file. */
static enum cs_status gate(const struct cli_args *a, struct cs_cal *cal,
                           const struct cs_fit_result *res, int quiet, struct cs_error *err) {
  enum cs_status st = CS_OK;
  if (!cli_get(&verb, a, "force")) {
    if (!quiet) {
      for (int i = 0; i < res->n_notes; i++)
        fprintf(stderr, "commscale fit: %s\n", res->notes[i]);
      print_quality(stderr, cal);
    }
    st = cs_error_set(err, CS_ERR_NUMERIC,
                      "the calibration fails the quality gate: %s; not written. Measure more "
                      "sizes and shapes on a quiet system, fit one configuration at a time "
                      "(--config), or write it anyway with --force (marked in the file)",
                      cal->quality.gate);
  } else {
    cal->quality.forced = 1;
    fprintf(stderr,
            "commscale fit: warning: the calibration fails the quality gate (%s); "
            "written anyway (--force), marked in the file\n",
            cal->quality.gate);
  }
  return st;
}

int cs_cmd_fit(int argc, char **argv) {
  struct cs_error err = {0};
  struct cli_args a;
  int fmt;
  int begun = cli_begin(&verb, argc, argv, &a, 0, CLI_MAX_POS, NULL, &fmt);
  if (begun >= 0) return begun;
  if (cli_get(&verb, &a, "steps")) return steps_mode(&a);
  if (a.npos == 0) {
    cs_error_set(&err, CS_ERR_USAGE,
                 "expected at least one measurements file (see commscale fit --help)");
    return cli_fail("fit", &err);
  }
  if (!cli_get(&verb, &a, "format")) fmt = CLI_TABLE; /* -o names the calibration, not the report */
  struct cs_fit_opts fo;
  struct cs_model prior;
  if (fit_opts(&a, &fo, &prior, &err) != CS_OK) return cli_fail("fit", &err);
  int quiet = cli_get(&verb, &a, "quiet") != NULL;
  const char *out = cli_get(&verb, &a, "output");
  if (out == NULL) out = "calibration.yaml";

  struct cs_nccl_tuning *tuning = NULL;
  const char *nccl_log = cli_get(&verb, &a, "nccl-log");
  if (nccl_log) {
    tuning = calloc(1, sizeof *tuning);
    if (tuning == NULL) {
      cs_error_set(&err, CS_ERR_NOMEM, "out of memory");
      return cli_fail("fit", &err);
    }
    if (cs_nccltests_read_tuning(nccl_log, tuning, &err) != CS_OK) {
      free(tuning);
      return cli_fail("fit", &err);
    }
  }

  struct cs_meas_set set;
  cs_meas_set_init(&set);
  struct cs_cal cal;
  cs_cal_init(&cal);
  struct cs_fit_result res;
  memset(&res, 0, sizeof res);
  struct point_rec *pts = NULL;
  struct shape_rec *shapes = NULL;
  size_t ns = 0;
  enum cs_status st = CS_OK;
  a.npos = cli_unique_inputs("fit", a.pos, a.npos);
  for (int i = 0; i < a.npos && st == CS_OK; i++) {
    size_t before = set.n;
    st = cs_meas_read_any(a.pos[i], &set, &err);
    if (st == CS_OK && set.n == before)
      st = cs_error_set(&err, CS_ERR_PARSE, "%s: the file has no data rows", a.pos[i]);
    if (st == CS_OK && cal.prov.n_sources < CS_CAL_MAX_SOURCES)
      snprintf(cal.prov.sources[cal.prov.n_sources++], sizeof cal.prov.sources[0], "%s", a.pos[i]);
  }
  const char *left_out = st == CS_OK ? cs_meas_get_meta(&set, "left_out") : NULL;
  if (left_out && !quiet)
    fprintf(stderr, "commscale fit: not fitted, nccl-tests counted wrong elements: %s\n", left_out);
  if (st == CS_OK && cs_mpifit_applies(&set)) st = mpi_section(&set, &fo, &cal, quiet, &err);
  if (st == CS_OK) st = cs_fit_run(&set, &fo, &cal, &res, &err);
  if (st == CS_OK) st = cs_fit_extrapolation(&set, &fo, &cal, &err);
  if (st == CS_OK) mpi_gate(&cal);
  if (st == CS_OK && cal.quality.gate[0]) st = gate(&a, &cal, &res, quiet, &err);
  if (st == CS_OK) st = cs_calfile_write(out, &cal, &err);
  if (st == CS_OK && !quiet) {
    for (int i = 0; i < res.n_notes; i++)
      fprintf(stderr, "commscale fit: %s\n", res.notes[i]);
    fprintf(stderr, "commscale fit: wrote %s\n", out);
    FILE *o = strcmp(out, "-") == 0 ? stderr : stdout; /* "-": the calibration owns stdout */
    if (fmt == CLI_TABLE) {
      fprintf(o, "# commscale fit: %zu rows, configuration \"%s\", launch %s, %s%s%s\n", res.n,
              cal.prov.config, cal.prov.launch, cal.prov.gpu[0] ? cal.prov.gpu : "unknown GPU",
              cal.prov.nccl[0] ? ", NCCL " : "", cal.prov.nccl);
      print_model(o, &cal);
      print_quality(o, &cal);
      print_mpi(o, &cal);
    }
    int report = cli_get(&verb, &a, "report") != NULL;
    if (report) st = points_report(&set, &res, tuning, &pts, &shapes, &ns, &err);
    if (st != CS_OK) {
    } else if (fmt == CLI_JSON) {
      write_json(o, argc, argv, out, res.n, &cal, pts, res.n, shapes, ns, report);
    } else if (report) { /* the table, or the CSV of the points (one table per CSV) */
      print_report(o, pts, res.n, fmt, tuning != NULL);
      if (fmt == CLI_TABLE) print_summary(o, shapes, ns, tuning != NULL);
    } else if (fmt == CLI_CSV) {
      write_params_csv(o, &cal);
    }
    fflush(o);
  }
  free(shapes);
  free(pts);
  free(tuning);
  cs_fit_result_fini(&res);
  cs_cal_fini(&cal);
  cs_meas_set_fini(&set);
  return st == CS_OK ? 0 : cli_fail("fit", &err);
}
