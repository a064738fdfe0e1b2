/* calmpi.h — the `mpi:` section of calibration.yaml: Open MPI's all_reduce and all_gather laws
 * fitted to MPI rows (model/mpicoll.h, calibrate/fit/mpifit.h), written by `commscale fit` on MPI
 * data and read by the verbs that price MPI collectives.
 *
 *   mpi:
 *     library: "Open MPI v4.1.4"       the MPI the rows measured
 *     elem_size: 4                     bytes per element of the fitted rows
 *     points: 24
 *     noise_rel: 0.013                 robust scale of the relative residuals
 *     median_rel_err: 0.06
 *     max_rel_err: 0.42
 *     cv_median_rel_err: 0.09          null when no shape could be held out
 *     max_nodes: 4                     most nodes measured (0: the network never)
 *     max_ranks_local: 0               most ranks per node measured (0: one per node only)
 *     parameters: {alpha.local: null, ..., beta.net: 7.9e-08, ..., gamma: null}
 *                                      s, s/byte; null: the rows did not determine it (0)
 *     covariance: [[...], ...]         CS_MPI_NPARAMS rows in the order of mpicoll.h
 *
 * Errors name file:line:col and what was expected.
 */
#ifndef CS_CALMPI_H
#define CS_CALMPI_H

#include <stdio.h>

#include "mpicoll.h"
#include "status.h"
#include "yamlcfg.h"

/* Writes the section when m->fitted (nothing otherwise). */
void cs_calmpi_emit(FILE *f, const struct cs_mpi_fit *m);

/* Reads the section at node map of doc into m (m->fitted = 1 on success). */
enum cs_status cs_calmpi_read(const struct cs_yaml *doc, int map, struct cs_mpi_fit *m,
                              struct cs_error *err);

#endif
