/* sizenet.h — the `size-network` driver: for each plan family (family.h: bundled or given as
 * data), the least network bandwidth per GPU (and per NIC and node) at which the family meets a
 * target on N nodes at a global batch (sizing.h's cs_decide_size), with that answer at the low and
 * high ends of the collectives' ~95% band, the throughput curve against bandwidth, the knee (never
 * below the answer) and what dominates the step at the answer; given a price list, the cost of
 * the least listed speed that reaches it and the throughput per unit cost; and the figure.
 *
 * One bar for every family: an eff=X target asks every family for X times the throughput of the
 * fastest family of the run on an unlimited network (the bar), not X times its own.
 */
#ifndef CS_SIM_SIZENET_H
#define CS_SIM_SIZENET_H

#include <stdio.h>

#include "family.h"
#include "progress.h"
#include "scenario.h"
#include "sizing.h"
#include "status.h"

struct cs_sizenet_row {
  struct cs_family_spec fam;
  int id;              /* family id in its context */
  struct cs_decide *d; /* its context (one per framework profile; owned by cs_sizenet) */
  struct cs_sizing z;
  int feasible;                  /* the family has a feasible plan */
  int ok;                        /* reachable */
  char reason[CS_ERROR_MSG_MAX]; /* why not ok */
  int price; /* index into the price list of the least speed >= the answer per NIC, -1 none */
  double cost, tokens_at_price, per_cost; /* network cost; throughput at that speed, per 1M */
};

struct cs_sizenet {
  long nodes, gbs;
  struct cs_target target;
  int nf;
  struct cs_sizenet_row rows[CS_FAMILY_SPEC_MAX];
  struct cs_decide *own[CS_FAMILY_SPEC_MAX]; /* the contexts, nown of them */
  int nown;
  int bar_row;     /* the row whose unlimited-network throughput is the bar (-1: none) */
  double bar_step; /* its step, s */
  const struct cs_topology *t;    /* the topology sized (the scenario's, as the search sees it) */
  const struct cs_prices *prices; /* borrowed, may be NULL */
};

/* Sizes the families of fs on scenario s (its plan fields fix every plan's precision and
 * overlaps; a family's framework= replaces the plan's profile). prices and progress may be NULL.
 * z owns its contexts: cs_sizenet_fini it, also on failure. Errors: running out of memory, the
 * search's, a framework profile that does not load. */
enum cs_status cs_sizenet_run(const struct cs_scenario *s, long nodes, long gbs,
                              const struct cs_family_set *fs, const struct cs_target *tg,
                              const struct cs_sizing_opts *so, const struct cs_prices *prices,
                              const struct cs_progress *progress, struct cs_sizenet *z,
                              struct cs_error *err);
void cs_sizenet_fini(struct cs_sizenet *z);

/* The table (answers with their band, knee, dominant part, the curve, prices) to f. */
void cs_sizenet_write_table(FILE *f, const struct cs_scenario *s, const struct cs_sizenet *z);

/* Writes PREFIX.dat/.gp and the images (formats: enum cs_plot_format bits, 0 = SVG): throughput
 * vs Gb/s per GPU per family (the curve with the answer on it), the common target line, each
 * family's least bandwidth and its band's ends. */
enum cs_status cs_sizenet_plot(const struct cs_scenario *s, const struct cs_sizenet *z,
                               const char *prefix, unsigned formats, struct cs_error *err);

#endif
