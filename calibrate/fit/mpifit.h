/* mpifit.h — fitting Open MPI's all_reduce and all_gather laws (model/mpicoll.h) to rows of the MPI
 * backend.
 *
 * Every all_reduce and all_gather row is used, of any shape (several nodes of several ranks through
 * the algorithms' schedules, cs_mpi_law_shape) and any configuration: a row forced to an algorithm
 * (its tag, cs_mpi_row_alg) by that algorithm's law, a row at Open MPI's own choice by the law of
 * the algorithm its fixed decision runs (cs_mpi_ompi_choice). The laws are linear in their
 * parameters, so the fit is weighted linear least squares (gsl_multifit_wlinear_tsvd) with weights
 * 1/t^2, i.e. relative residuals, after scaling each column to unit norm. A parameter the rows do
 * not determine is fixed at 0 and named in the notes: one that no row touches, one whose fitted
 * value is not positive, or one whose relative standard error exceeds 1 (with one algorithm at
 * power-of-two rank counts, beta and gamma move in a fixed ratio, and gamma goes). A bandwidth
 * (beta) is never given up while a term of its tier that competes with it (gamma, the rendezvous
 * terms, alpha, in that order) is still fitted: that term goes instead. Robust: Huber reweighting
 * (k = 1.345). Cross-validation holds out one shape (node count, ranks per node) at a time, refits
 * and predicts it.
 */
#ifndef CS_MPIFIT_H
#define CS_MPIFIT_H

#include "meas.h"
#include "mpicoll.h"
#include "status.h"

#define CS_MPIFIT_MAX_NOTES 8

struct cs_mpifit_notes {
  char line[CS_MPIFIT_MAX_NOTES][200];
  int n;
};

/* Whether the set holds rows the MPI laws can fit: measured by the MPI backend (provenance
 * "backend: mpi") with at least one all_reduce or all_gather row of a priced shape. */
int cs_mpifit_applies(const struct cs_meas_set *meas);

/* Fits f from meas (f->library from the provenance "mpi" line). notes may be NULL. Errors:
 * CS_ERR_RANGE when fewer than 3 usable rows or no parameter could be determined, CS_ERR_NOMEM,
 * CS_ERR_NUMERIC when GSL fails; f->fitted is 0 then. */
enum cs_status cs_mpifit_run(const struct cs_meas_set *meas, struct cs_mpi_fit *f,
                             struct cs_mpifit_notes *notes, struct cs_error *err);

#endif
