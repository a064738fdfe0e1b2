/* busbw.h — the `plot busbw` figure: measured bus bandwidth against message size for every
 * measured shape (ranks, nodes, GPUs per node, algorithm/protocol, launch) of one collective and
 * configuration, the calibrated model's line at each of those shapes (same algorithm/protocol;
 * auto = the model's own choice), and predictions for other node counts with their ~95% band.
 * Shapes are sorted (nodes, GPUs per node, algorithm, protocol, launch) so that the same inputs
 * always give the same files.
 */
#ifndef CS_SIM_BUSBW_H
#define CS_SIM_BUSBW_H

#include <stddef.h>

#include "cal.h"
#include "meas.h"
#include "plot.h"
#include "status.h"

struct cs_busbw_spec {
  enum cs_coll coll;
  const char *config; /* the NCCL_* configuration tag of the rows drawn ("" = untagged) */
  int launch;         /* enum cs_launch of the rows drawn, or -1 for all */
  const long *nodes;  /* node counts to predict (may be none) */
  size_t nn;
  int gpn;             /* GPUs per node of the predictions */
  const double *sizes; /* message sizes of the predictions */
  size_t ns;
  int ylog;
  /* called with a one-line note (a shape left out, rows of another launch), may be NULL */
  void (*note)(void *ctx, const char *msg);
  void *ctx;
};

/* What was drawn. */
struct cs_busbw_counts {
  size_t shapes; /* measured shapes */
};

/* Draws the figure of set's rows under cal into o's files (plot.h). No matching row, or none
 * with a bus bandwidth, is CS_ERR_RANGE (the data lacks what was asked for). */
enum cs_status cs_busbw_figure(const struct cs_meas_set *set, const struct cs_cal *cal,
                               const struct cs_busbw_spec *sp, const struct cs_plot_opts *o,
                               struct cs_busbw_counts *out, struct cs_error *err);

#endif
