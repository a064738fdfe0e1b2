/* valsum.c — the totals of a validation run (validate.h's cs_val_summary and cs_val_summary_of):
 * accuracy over the cases of one section or all of them, and the band's coverage (the published
 * range meets the band) with its median relative half-width. Apart from validate.c so that the
 * band pass (valband.h), which validate.c calls, never includes validate.h: no include cycle. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "validate.h"

static void summarize(const struct cs_val_case *all, size_t nall, const char *section,
                      struct cs_val_summary *sm) {
  struct cs_val_case *cs = nall ? malloc(nall * sizeof *cs) : NULL;
  size_t n = 0;
  for (size_t i = 0; cs && i < nall; i++)
    if (section == NULL || strcmp(all[i].section, section) == 0) cs[n++] = all[i];
  memset(sm, 0, sizeof *sm);
  for (size_t i = 0; i < n; i++) {
    double e = fabs(cs[i].err);
    sm->n++;
    sm->mean += e;
    if (e > sm->max) sm->max = e;
    sm->over_tol += cs[i].status != CS_VAL_OK;
    sm->known += cs[i].status == CS_VAL_KNOWN;
    sm->over_bound += cs[i].status == CS_VAL_MISS;
    sm->over_accept += e > CS_VAL_ACCEPT_MAX;
    sm->over_old += e > CS_VAL_OLD_MAX;
  }
  if (sm->n) sm->mean /= (double)sm->n;
  sm->accepted = sm->mean <= CS_VAL_ACCEPT_MEAN && sm->over_accept == 0;
  double *hw = n ? malloc(n * sizeof *hw) : NULL;
  for (size_t i = 0; i < n; i++) {
    sm->covered += cs[i].pub_hi >= cs[i].band_lo && cs[i].pub_lo <= cs[i].band_hi;
    if (hw) hw[i] = cs[i].pred > 0 ? (cs[i].band_hi - cs[i].band_lo) / 2 / cs[i].pred : 0;
  }
  if (hw) sm->median_half_rel = cs_stats_median(hw, n);
  free(hw);
  free(cs);
}

void cs_val_summary(const struct cs_val *v, struct cs_val_summary *sm) {
  cs_val_summary_of(v, NULL, sm);
}

void cs_val_summary_of(const struct cs_val *v, const char *section, struct cs_val_summary *sm) {
  size_t n;
  const struct cs_val_case *cs = cs_val_cases(v, &n);
  summarize(cs, n, section, sm);
}
