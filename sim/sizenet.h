/* sizenet.h — the `size-network` driver: for each plan family, the least network bandwidth per
 * GPU at which the family meets a target on N nodes at a global batch (sizing.h's cs_decide_size),
 * with, given a price list, the cost of the least listed speed that reaches it and the throughput
 * per unit cost; and the figure (throughput vs Gb/s per GPU per family, targets, chosen points).
 */
#ifndef CS_SIM_SIZENET_H
#define CS_SIM_SIZENET_H

#include "scenario.h"
#include "sizing.h"
#include "status.h"

struct cs_sizenet_row {
  struct cs_sizing z; /* z.family is always set */
  int ok;             /* reachable */
  char reason[256];   /* why not ok */
  int price; /* index into the price list of the least speed >= the answer per NIC, -1 none */
  double cost, tokens_at_price, per_cost; /* network cost; throughput at that speed, per 1M */
};

struct cs_sizenet {
  long nodes, gbs;
  struct cs_target target;
  int nf;
  struct cs_sizenet_row rows[CS_FAMILY_COUNT];
  struct cs_decide *d;            /* owned */
  const struct cs_topology *t;    /* the topology sized (the scenario's, as the search sees it) */
  const struct cs_prices *prices; /* borrowed, may be NULL */
};

/* Sizes families fams[0..nf-1] on scenario s (its plan fields fix every plan's precision and
 * overlaps). prices may be NULL. z is filled (and owns a cs_decide: cs_sizenet_fini it, also on
 * failure). Errors: running out of memory, or the search's. */
enum cs_status cs_sizenet_run(const struct cs_scenario *s, long nodes, long gbs, const int *fams,
                              int nf, const struct cs_target *tg, const struct cs_sizing_opts *so,
                              const struct cs_prices *prices, struct cs_sizenet *z,
                              struct cs_error *err);
void cs_sizenet_fini(struct cs_sizenet *z);

/* Writes PREFIX.dat/.gp/.svg: throughput vs Gb/s per GPU (10 to 10000, 25 points) per family,
 * each family's target line and its least bandwidth. */
enum cs_status cs_sizenet_plot(const struct cs_scenario *s, const struct cs_sizenet *z,
                               const char *prefix, struct cs_error *err);

#endif
