/* test_band.c — the band's statistics on synthetic cases with a known spread.
 *
 * The band of a training step is meant as an 85% interval (CS_VALBAND_COVERAGE): each term is
 * the 85% quantile of |residual| of cases it is not scored on (cs_valband_quantile) and the
 * terms combine in quadrature (cs_sim_band). On residuals drawn from known normal laws (fixed
 * seed) the band must cover the stated fraction of fresh draws within sampling error, a section's
 * own residuals must not move its band, and for two independent terms the quadrature of their
 * quantiles must be the quantile of their sum. Each check fails on a wrong quantile (a 1-sigma
 * half-width covers 68%, a 95% one 95%), a band fitted in-sample, or terms added linearly.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "step.h"
#include "testutil.h"
#include "valband.h"

/* A standard normal draw (Box-Muller over a fixed-seed 64-bit LCG: the same on every libc). */
static unsigned long long rng_state = 88172645463325252ULL;
static double uniform(void) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return ((double)(rng_state >> 11) + 0.5) / 9007199254740992.0;
}
static double normal(void) {
  return sqrt(-2 * log(uniform())) * cos(6.283185307179586 * uniform());
}

/* Three binomial standard errors of a fraction p over n draws. */
static double slack(double p, int n) {
  return 3 * sqrt(p * (1 - p) / n);
}

/* Linear interpolation between order statistics; leaving a group out; NAN when none is left. */
static void test_quantile(void **state) {
  (void)state;
  const double x[] = {5, 1, 4, 2, 3, 100};
  const int g[] = {0, 0, 0, 0, 0, 1};
  assert_close(cs_valband_quantile(x, g, 5, -1, 0.5), 3, 1e-12);
  assert_close(cs_valband_quantile(x, g, 5, -1, 0.85), 4.4, 1e-12); /* 4 + 0.4 x (5 - 4) */
  assert_close(cs_valband_quantile(x, g, 5, -1, 1), 5, 1e-12);
  assert_close(cs_valband_quantile(x, g, 6, 1, 0.85), 4.4, 1e-12); /* the outlier's group out */
  assert_true(cs_valband_quantile(x, g, 6, -1, 0.85) > 5);
  assert_true(isnan(cs_valband_quantile(x, g, 5, 0, 0.85)));
  assert_true(isnan(cs_valband_quantile(x, g, 0, -1, 0.85)));
}

/* Sections of residuals with one known spread: each section's band, from the others alone,
 * covers CS_VALBAND_COVERAGE of fresh draws; an outlying section does not widen its own band. */
static void test_loso_coverage(void **state) {
  (void)state;
  enum { SECTIONS = 8, PER = 100, FRESH = 4000 };
  const double sigma = 0.07;
  double e[SECTIONS * PER];
  int g[SECTIONS * PER];
  for (int i = 0; i < SECTIONS * PER; i++)
    e[i] = fabs(sigma * normal()), g[i] = i / PER;
  int inside = 0;
  for (int s = 0; s < SECTIONS; s++) {
    double q = cs_valband_quantile(e, g, SECTIONS * PER, s, CS_VALBAND_COVERAGE);
    for (int k = 0; k < FRESH / SECTIONS; k++)
      inside += fabs(sigma * normal()) <= q;
  }
  double cov = (double)inside / FRESH;
  assert_true(fabs(cov - CS_VALBAND_COVERAGE) < slack(CS_VALBAND_COVERAGE, FRESH));
  /* section 0 ten times as wide: its own band is the others', theirs grows */
  double q0 = cs_valband_quantile(e, g, SECTIONS * PER, 0, CS_VALBAND_COVERAGE);
  double q1 = cs_valband_quantile(e, g, SECTIONS * PER, 1, CS_VALBAND_COVERAGE);
  for (int i = 0; i < PER; i++)
    e[i] *= 10;
  assert_close(cs_valband_quantile(e, g, SECTIONS * PER, 0, CS_VALBAND_COVERAGE), q0, 1e-12);
  assert_true(cs_valband_quantile(e, g, SECTIONS * PER, 1, CS_VALBAND_COVERAGE) > q1);
}

/* Compute and framework errors independent normals (and a collective band of its own): the step
 * band of cs_sim_band with each term at its 85% quantile covers 85% of the summed error. */
static void test_quadrature(void **state) {
  (void)state;
  enum { N = 20000 };
  const double step = 2.0, comp = 1.5, sc = 0.10, sf = 0.06, z85 = 1.4395314709384563;
  struct cs_sim_result r;
  memset(&r, 0, sizeof r);
  r.step = step, r.step_lo_coll = step, r.step_hi_coll = step;
  double lo, hi;
  cs_sim_band(&r, z85 * sc * comp, z85 * sf * step, &lo, &hi);
  assert_close(hi - step, z85 * hypot(sc * comp, sf * step), 1e-12);
  assert_close(step - lo, hi - step, 1e-12);
  int inside = 0, inside_lin = 0;
  double lin = z85 * (sc * comp + sf * step); /* linear addition: too wide */
  for (int i = 0; i < N; i++) {
    double t = step + sc * comp * normal() + sf * step * normal();
    inside += t >= lo && t <= hi;
    inside_lin += fabs(t - step) <= lin;
  }
  double cov = (double)inside / N;
  assert_true(fabs(cov - 0.85) < slack(0.85, N));
  assert_true((double)inside_lin / N > 0.85 + slack(0.85, N));
  /* the collectives' own asymmetric band adds in quadrature on each side */
  r.step_lo_coll = step - 0.3, r.step_hi_coll = step + 0.4;
  cs_sim_band(&r, 0.3, 0, &lo, &hi);
  assert_close(step - lo, hypot(0.3, 0.3), 1e-12);
  assert_close(hi - step, 0.5, 1e-12);
  r.step_lo_coll = step; /* a band below zero is clipped */
  cs_sim_band(&r, 10, 0, &lo, &hi);
  assert_true(lo == 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_quantile),
      cmocka_unit_test(test_loso_coverage),
      cmocka_unit_test(test_quadrature),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
