/* validate.h — the validation case engine: case files read, every case predicted with the library
 * and set beside the figure that was published (or measured) for it.
 *
 * The cases are data: YAML files under tests/validation (installed as share/commscale/validation,
 * found through datadir.h) with `version: 1`, a prose `source:` and `assumptions:`, optional
 * file-wide `section:`, `calibration:` and `defaults:` (keys every case inherits) and a list of
 * `cases:`. docs/validation.md describes the keys; validate.c's fields table is their schema.
 *
 * Use: cs_val_alloc, cs_val_add (files or folders) or cs_val_add_bundled, cs_val_run, then read
 * the records with cs_val_cases and the totals with cs_val_summary; cs_val_free. The engine
 * never prints: the `validate` verb writes the records as a table, CSV or JSON.
 */
#ifndef CS_SIM_VALIDATE_H
#define CS_SIM_VALIDATE_H

#include <stddef.h>

#include "progress.h"
#include "status.h"

/* The acceptance of the framework-profiles issue (which replaced the first validation issue's 5%
 * and 12% when sections 8-11 were added): mean |error| <= 6%, every case <= 15%. The count of
 * cases over 12% (the older bar) is still reported, as JSON key over_12pct. */
#define CS_VAL_ACCEPT_MEAN 0.06
#define CS_VAL_ACCEPT_MAX 0.15
#define CS_VAL_OLD_MAX 0.12

/* Training-step metrics first (up to CS_VAL_TFLOPS, model FLOPs per GPU), then collectives. */
enum cs_val_metric {
  CS_VAL_SPEEDUP,
  CS_VAL_HW_TFLOPS,
  CS_VAL_STEP,
  CS_VAL_TFLOPS,
  CS_VAL_BUSBW,
  CS_VAL_TIME
};
enum cs_val_status { CS_VAL_OK, CS_VAL_KNOWN, CS_VAL_MISS };

/* One case and its outcome. Values are SI; cs_val_metric_scale gives the printed unit's factor. */
struct cs_val_case {
  const char *file; /* the case file's path (borrowed from the engine) */
  char section[16], name[128], note[1024];
  enum cs_val_metric metric;
  double tolerance, bound;          /* accepted |error|; a known miss's bound (0 = none) */
  double pred, pub_lo, pub_hi, err; /* predicted, published range, relative error */
  double band_lo, band_hi;          /* the prediction's band (step_lo..step_hi and kin; the
                                       framework term left out of the case's own section) */
  enum cs_val_status status;
};

struct cs_val_summary {
  size_t n, over_tol, known, over_bound, over_accept; /* over_accept: |error| > CS_VAL_ACCEPT_MAX */
  size_t over_old;                                    /* |error| > CS_VAL_OLD_MAX */
  double mean, max;                                   /* of |error| */
  int accepted;           /* mean <= CS_VAL_ACCEPT_MEAN and no case over CS_VAL_ACCEPT_MAX */
  size_t covered;         /* the published value inside the prediction's band */
  double median_half_rel; /* median (band_hi - band_lo) / 2 / predicted */
};

struct cs_val;

/* A new engine; exe is the running executable's path (for bundled data), may be "". Returns
 * NULL when out of memory. */
struct cs_val *cs_val_alloc(const char *exe);
/* Tells p about each case cs_val_run predicts (it is copied). */
void cs_val_set_progress(struct cs_val *v, const struct cs_progress *p);
void cs_val_free(struct cs_val *v);

/* Adds a case file, or every *.yaml of a folder (sorted). */
enum cs_status cs_val_add(struct cs_val *v, const char *path, struct cs_error *err);
/* Adds the bundled case files (validation/ through datadir.h). */
enum cs_status cs_val_add_bundled(struct cs_val *v, struct cs_error *err);

/* Reads every added file (a located error for the first bad one), keeps the cases of the
 * comma-separated sections (NULL: all) and predicts each. Calibrations are loaded or fitted once.
 */
enum cs_status cs_val_run(struct cs_val *v, const char *sections, struct cs_error *err);

/* The cases after cs_val_run, in file order; *n their count. */
const struct cs_val_case *cs_val_cases(const struct cs_val *v, size_t *n);
void cs_val_summary(const struct cs_val *v, struct cs_val_summary *sm);
/* The same over the cases of one section (NULL: all). */
void cs_val_summary_of(const struct cs_val *v, const char *section, struct cs_val_summary *sm);

const char *cs_val_metric_name(enum cs_val_metric m); /* "speedup", "hw_tflops", ... */
const char *cs_val_metric_unit(enum cs_val_metric m); /* "x", "TFLOP/s", "s", "GB/s", "us" */
double cs_val_metric_scale(enum cs_val_metric m);     /* SI -> the printed unit */
const char *cs_val_status_name(enum cs_val_status s); /* "ok", "MISS (known, ...)", "MISS" */

#endif
