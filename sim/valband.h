/* valband.h — the band of validation cases: the terms set from residuals, never from the case's
 * own section.
 *
 * The band of a prediction is meant as a CS_VALBAND_COVERAGE interval (compute, framework and
 * collective terms, each at that quantile, combined in quadrature: cs_sim_band). Where no fit's
 * covariance says how far off a term is, validate sets it from the spread of the validation
 * residuals, leaving out the section the case belongs to: a multi-GPU step's framework term is
 * the quantile of |error| of the other sections' speedups (where the compute level cancels),
 * and a collective costed with the default model adds that of the other sections' collectives.
 * docs/constants.md lists the terms and their sources.
 */
#ifndef CS_SIM_VALBAND_H
#define CS_SIM_VALBAND_H

#include <stddef.h>

#include "status.h"
#include "step.h"

/* The coverage the band is meant to have: an 85% interval (issue 15's target). */
#define CS_VALBAND_COVERAGE 0.85

enum cs_valband_kind {
  CS_VALBAND_STEP,    /* a step time: the band is step_lo..step_hi */
  CS_VALBAND_RATE,    /* a rate per step (TFLOP/s): pred x step / step_hi .. / step_lo */
  CS_VALBAND_SPEEDUP, /* as a rate; its residual is the framework's spread */
  CS_VALBAND_COLL     /* a collective's busbw or time */
};

/* One case as the band pass reads it (borrowed section) and, in lo/hi, writes it. */
struct cs_valband {
  const char *section;
  int kind; /* enum cs_valband_kind */
  double pred, err;
  double lo, hi; /* a collective's model band on entry; every case's band on return */
  /* a training step's band before its framework term */
  struct cs_sim_result sim;
  double u_compute; /* seconds of compute half-width the metric does not cancel */
  int multi;        /* more than one GPU (and no steps calibration): the framework term applies */
  int coll_default; /* a collective costed with the default model (no fitted parameter) */
};

/* The p-quantile (p in [0, 1]; linear interpolation between order statistics) of the x[i] whose
 * group[i] != skip (skip < 0: all of them): the spread of the residuals outside one group, so
 * that a group's band is never set from its own cases. NAN when no value remains (or out of
 * memory); x and group are not modified. */
double cs_valband_quantile(const double *x, const int *group, size_t n, int skip, double p);

/* Sets the band of each of the n cases once every case has its error (CS_VALBAND_COVERAGE
 * quantiles, each section's from the other sections; CS_COMPUTE_BAND_FW where no other section
 * has a speedup). CS_ERR_NOMEM. */
enum cs_status cs_valband_pass(struct cs_valband *const *c, size_t n, struct cs_error *err);

#endif
