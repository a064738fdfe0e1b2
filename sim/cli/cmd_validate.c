/* cmd_validate.c — `commscale validate`: every validation case predicted and set beside the figure
 * that was published (or measured) for it, with the error, the mean and the worst.
 *
 * The case engine (case files, values from logs and nccl-tests files, calibrations, predictions)
 * is sim/validate.c; this verb reads the options and writes the engine's records as a table, CSV
 * or JSON.
 *
 * Exit status: 1 when a case's error exceeds its tolerance (with --bounds: its bound, or its
 * tolerance where it has none), 2 for usage errors, 1 for a case file that does not parse (one
 * located line).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "busy.h"
#include "cmds.h"
#include "opts.h"
#include "output.h"
#include "validate.h"
#include "valband.h"

static const struct cli_opt opts[] = {
    {"cases", 0, "DIR|FILE,...",
     "case files or folders of them (default: the bundled validation/)"},
    CLI_OUTPUT_OPTS,
    {"bounds", 0, NULL,
     "fail only where a case exceeds its bound (known misses) or, without one, "
     "its tolerance: the regression guard"},
    {"section", 0, "S,...", "only the cases of these sections (e.g. 2,5)"},
    {"quiet", 'q', NULL, "no progress line on a terminal's stderr"},
};

static const struct cli_verb verb = {
    "validate",
    "[--cases DIR|FILE,...] [--format table|csv|json] [--bounds] [--section S]",
    "Predict every validation case and compare with the published figures.",
    "error = (predicted - published) / published (zero inside a published range). status: ok\n"
    "within tolerance; MISS (known, within bound) for a known miss that holds its bound; MISS.\n"
    "Exit 1 when any case exceeds its tolerance (with --bounds: its bound). Case files:\n"
    "docs/validation.md. Further case files may also be given as arguments.",
    opts,
    (int)(sizeof opts / sizeof opts[0]),
    NULL};

/* ---- writers ------------------------------------------------------------------------------- */

static void fmt_pub(const struct cs_val_case *c, char *buf, size_t len) {
  double s = cs_val_metric_scale(c->metric);
  if (c->pub_lo == c->pub_hi)
    snprintf(buf, len, "%.4g", c->pub_lo * s);
  else
    snprintf(buf, len, "%.4g..%.4g", c->pub_lo * s, c->pub_hi * s);
}

/* Band coverage and median half-width per section, in the order the sections first appear. */
static void write_band_sections(FILE *f, const struct cs_val *v, const struct cs_val_case *cs,
                                size_t n) {
  fprintf(f,
          "band by section (an %.0f%% interval; the framework term of a section's steps from "
          "the other sections' speedups):",
          100 * CS_VALBAND_COVERAGE);
  for (size_t i = 0; i < n; i++) {
    size_t j = 0;
    while (strcmp(cs[j].section, cs[i].section) != 0)
      j++;
    if (j != i) continue;
    struct cs_val_summary sm;
    cs_val_summary_of(v, cs[i].section, &sm);
    fprintf(f, "%s %s: %zu of %zu, %.1f%%", i ? ";" : "", cs[i].section, sm.covered, sm.n,
            100 * sm.median_half_rel);
  }
  fputc('\n', f);
}

static void write_table(FILE *f, const struct cs_val_case *cs, size_t n,
                        const struct cs_val_summary *sm) {
  fprintf(f, "# commscale %s validate: predicted vs published\n", CS_VERSION);
  fprintf(f, "#%-4s %-46s %-9s %8s %11s %13s %8s %5s  %s\n", "sec", "case", "metric", "unit",
          "predicted", "published", "error", "tol", "status");
  for (size_t i = 0; i < n; i++) {
    const struct cs_val_case *c = &cs[i];
    char pub[64];
    fmt_pub(c, pub, sizeof pub);
    fprintf(f, " %-4s %-46s %-9s %8s %11.4g %13s %+7.1f%% %4.0f%%  %s\n", c->section, c->name,
            cs_val_metric_name(c->metric), cs_val_metric_unit(c->metric),
            c->pred * cs_val_metric_scale(c->metric), pub, 100 * c->err, 100 * c->tolerance,
            cs_val_status_name(c->status));
  }
  fprintf(f,
          "cases: %zu, mean |error|: %.1f%%, max |error|: %.1f%%, over tolerance: %zu (%zu known, "
          "within bound), over 12%%: %zu, over %.0f%%: %zu\n",
          sm->n, 100 * sm->mean, 100 * sm->max, sm->over_tol, sm->known, sm->over_old,
          100 * CS_VAL_ACCEPT_MAX, sm->over_accept);
  fprintf(f, "acceptance (mean <= %.0f%%, every case <= %.0f%%): %s\n", 100 * CS_VAL_ACCEPT_MEAN,
          100 * CS_VAL_ACCEPT_MAX, sm->accepted ? "met" : "MISSED");
  fprintf(f,
          "band: published inside step_lo..step_hi (or the metric's band) in %zu of %zu cases "
          "(%.0f%%; target 85%%), median half-width %.1f%% (target <= 15%%)\n",
          sm->covered, sm->n, sm->n ? 100.0 * (double)sm->covered / (double)sm->n : 0,
          100 * sm->median_half_rel);
}

static void write_csv(FILE *f, const struct cs_val_case *cs, size_t n) {
  fputs("file,section,case,metric,unit,predicted,published_lo,published_hi,error,tolerance,bound,"
        "status,note,band_lo,band_hi\n",
        f);
  for (size_t i = 0; i < n; i++) {
    const struct cs_val_case *c = &cs[i];
    const char *base = strrchr(c->file, '/');
    double s = cs_val_metric_scale(c->metric);
    cli_csv_field(f, base ? base + 1 : c->file);
    fputc(',', f);
    cli_csv_field(f, c->section);
    fputc(',', f);
    cli_csv_field(f, c->name);
    fprintf(f, ",%s,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,", cs_val_metric_name(c->metric),
            cs_val_metric_unit(c->metric), c->pred * s, c->pub_lo * s, c->pub_hi * s, c->err,
            c->tolerance, c->bound);
    cli_csv_field(f, cs_val_status_name(c->status));
    fputc(',', f);
    cli_csv_field(f, c->note);
    fprintf(f, ",%.6g,%.6g\n", c->band_lo * s, c->band_hi * s);
  }
}

static void write_json(FILE *f, const struct cs_val_case *cs, size_t n,
                       const struct cs_val_summary *sm, int argc, char **argv) {
  cli_json_head(f, argc, argv);
  fputs(",\n \"cases\": [\n", f);
  for (size_t i = 0; i < n; i++) {
    const struct cs_val_case *c = &cs[i];
    double s = cs_val_metric_scale(c->metric);
    fputs("  {\"file\": ", f);
    cli_json_string(f, c->file);
    fputs(", \"section\": ", f);
    cli_json_string(f, c->section);
    fputs(", \"case\": ", f);
    cli_json_string(f, c->name);
    fprintf(f,
            ", \"metric\": \"%s\", \"unit\": \"%s\", \"predicted\": %.6g, \"published_lo\": %.6g, "
            "\"published_hi\": %.6g, \"error\": %.6g, \"tolerance\": %.6g, \"bound\": %.6g, "
            "\"status\": \"%s\", \"note\": ",
            cs_val_metric_name(c->metric), cs_val_metric_unit(c->metric), c->pred * s,
            c->pub_lo * s, c->pub_hi * s, c->err, c->tolerance, c->bound,
            cs_val_status_name(c->status));
    cli_json_string(f, c->note);
    fprintf(f, "}%s\n", i + 1 < n ? "," : "");
  }
  fprintf(f,
          "],\n \"summary\": {\"cases\": %zu, \"mean_abs_error\": %.6g, \"max_abs_error\": %.6g, "
          "\"over_tolerance\": %zu, \"known_within_bound\": %zu, \"over_12pct\": %zu, "
          "\"over_15pct\": %zu, \"acceptance_met\": %s}}\n",
          sm->n, sm->mean, sm->max, sm->over_tol, sm->known, sm->over_old, sm->over_accept,
          sm->accepted ? "true" : "false");
}

int cs_cmd_validate(int argc, char **argv) {
  struct cs_error err = {0};
  struct cli_args a;
  int fmt;
  int begun = cli_begin(&verb, argc, argv, &a, 0, CLI_MAX_POS, NULL, &fmt);
  if (begun >= 0) return begun;
  const char *outpath = cli_get(&verb, &a, "output");
  int bounds = cli_get(&verb, &a, "bounds") != NULL;
  char exe[4096];
  ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[l > 0 ? (size_t)l : 0] = '\0';
  struct cs_val *v = cs_val_alloc(exe);
  enum cs_status st = v ? CS_OK : cs_error_set(&err, CS_ERR_NOMEM, "out of memory");
  const char *given = cli_get(&verb, &a, "cases");
  if (st == CS_OK && given) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", given);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t && st == CS_OK; t = strtok_r(NULL, ",", &save))
      st = cs_val_add(v, t, &err);
  }
  for (int i = 0; st == CS_OK && i < a.npos; i++)
    st = cs_val_add(v, a.pos[i], &err);
  if (st == CS_OK && !given && a.npos == 0) st = cs_val_add_bundled(v, &err);
  struct cli_progress busy;
  struct cs_progress pg;
  cli_progress_init(&busy, "validate", cli_get(&verb, &a, "quiet") != NULL, &pg);
  if (v) cs_val_set_progress(v, &pg);
  if (st == CS_OK) st = cs_val_run(v, cli_get(&verb, &a, "section"), &err);
  cli_progress_end(&busy);
  int rc = 0;
  if (st == CS_OK) {
    struct cs_val_summary sm;
    size_t n;
    const struct cs_val_case *cs = cs_val_cases(v, &n);
    cs_val_summary(v, &sm);
    FILE *f = cli_open_out(outpath, &err);
    if (f == NULL)
      st = CS_ERR_IO;
    else {
      if (fmt == CLI_CSV)
        write_csv(f, cs, n);
      else if (fmt == CLI_JSON)
        write_json(f, cs, n, &sm, argc, argv);
      else {
        write_table(f, cs, n, &sm);
        write_band_sections(f, v, cs, n);
      }
      st = cli_close_out(f, &err);
      size_t bad = bounds ? sm.over_bound : sm.over_tol;
      if (bad && !bounds && sm.known == bad) {
        /* a newcomer's first run: say that these are the model's documented misses, and how to
         * check for regressions only, rather than only that the tool fails */
        fprintf(stderr,
                "commscale validate: %zu case%s over tolerance, all known misses within their "
                "bounds (docs/validation.md); --bounds fails only past a bound\n",
                bad, bad == 1 ? "" : "s");
        rc = 1;
      } else if (bad) {
        fprintf(stderr, "commscale validate: %zu case%s over %s\n", bad, bad == 1 ? "" : "s",
                bounds ? "their bound (or tolerance where none)" : "tolerance");
        rc = 1;
      }
    }
  }
  if (st != CS_OK) rc = cli_fail("validate", &err);
  cs_val_free(v);
  return rc;
}
