/* fit.h — fitting the collective cost model (model/costmodel.h) to measurements with GSL.
 *
 * Method. The fitted quantities are the natural logarithms of the model parameters that some
 * selected measurement actually influences; the others keep their defaults and are reported as
 * such. Residuals are ln(t_model) - ln(t_measured), i.e. relative errors, so a 10 us and a 10 ms
 * point weigh alike. Each parameter also carries a weak log-normal prior centred on its default
 * (a factor of 2-10 wide, by family): where the data cannot separate two parameters (a base
 * latency and a per-hop latency measured at a single rank count, say) the prior splits them and
 * their standard errors stay wide, which is the honest answer. Robustness: iteratively reweighted
 * least squares with Huber weights (k = 1.345 robust standard deviations, the scale taken from the
 * median absolute deviation), so an outlier is down-weighted, not silently kept at full weight.
 * The solver is gsl_multifit_nlinear (trust-region Levenberg-Marquardt, finite-difference
 * Jacobian); the covariance of the ln parameters is (J'J)^-1 of the final weighted problem.
 *
 * "auto" rows (NCCL chose the algorithm) are fitted by the lower envelope of every enabled valid
 * (algorithm, protocol) pair; rows with a forced algorithm/protocol are fitted by that pair.
 *
 * The network-latency form (ring-linear vs tree-log in node count) is fitted both ways when the
 * data spans more than one node count, compared by AIC, and the other form's network hop latencies
 * kept for prediction bands. Cross-validation holds out one measured shape at a time (algorithm,
 * protocol, ranks, nodes, GPUs per node), refits and predicts it.
 */
#ifndef CS_FIT_H
#define CS_FIT_H

#include <stddef.h>

#include "cal.h"
#include "meas.h"
#include "status.h"

struct cs_fit_opts {
  const char *config; /* configuration tag to fit; NULL or "" = rows without a tag */
  int launch;         /* enum cs_launch to fit, or -1 = the launch with most matching rows */
  int with_in_place;  /* 1: fit in-place rows too (default 0: out-of-place only) */
  int cross_validate; /* 1: leave-one-shape-out cross-validation (default 1) */
  double huber_k;     /* default 1.345 */
  int max_irls;       /* outer reweighting passes, default 8 */
  int max_iter;       /* solver iterations per pass, default 300 */
  /* the centres of the parameters' priors, and the values of those the data does not determine;
   * NULL = cs_model_defaults. The search starts from cs_model_nccl_tuning either way. */
  const struct cs_model *prior;
};

/* The quality gate. A calibration whose fit misses its own points by a median of more than
 * CS_FIT_GATE_MEDIAN, or whose held-out shapes miss by more than CS_FIT_GATE_CV (the median over
 * shapes of each shape's median error in leave-one-shape-out cross-validation), describes the
 * data too poorly to extrapolate from: cs_fit_run still succeeds
 * but writes the reason into quality.gate, and `commscale fit` refuses to write it without
 * --force. The levels are policy, not fitted: the bundled real fits (2 x H200, 4 x H200) sit at
 * medians of 3.5-5% and cross-validation medians of 7-22%; the CPU loopback fit the review
 * describes sat at 48% and 281%. A solver that ran out of iterations (quality.converged false,
 * GSL's own answer) is reported by a note and by the prediction verbs, not refused: the least-
 * squares point is then usually found but flat along a direction the data does not determine. */
#define CS_FIT_GATE_MEDIAN 0.25
#define CS_FIT_GATE_CV 0.50

/* Fills opts with the defaults above. */
void cs_fit_opts_default(struct cs_fit_opts *opts);

#define CS_FIT_MAX_NOTES 16

/* What the fit used and how well each used row is predicted, for reports. Arrays are owned and
 * released by cs_fit_result_fini(). */
struct cs_fit_result {
  size_t n;                          /* rows used */
  size_t *row;                       /* index into the measurement set of each used row */
  double *pred_us;                   /* fitted time of each used row */
  double *weight;                    /* final robust weight in [0, 1] */
  char notes[CS_FIT_MAX_NOTES][256]; /* skipped rows and why, choices made, warnings */
  int n_notes;
};

void cs_fit_result_fini(struct cs_fit_result *res);

/* Fits the rows of meas selected by opts. cal must be cs_cal_init()ed; on success it holds the
 * fitted model, covariance, quality and cross-validation (provenance: tool, created, config,
 * launch, and gpu/nccl/hosts when meas carries them; the caller adds source file names). res may
 * be NULL. Errors: CS_ERR_USAGE when no row matches (the message says which configs and launches
 * exist), CS_ERR_NUMERIC when the solver fails or the result is not finite (the message advises
 * more sizes or shapes), CS_ERR_NOMEM. */
enum cs_status cs_fit_run(const struct cs_meas_set *meas, const struct cs_fit_opts *opts,
                          struct cs_cal *cal, struct cs_fit_result *res, struct cs_error *err);

/* Whether a fit of opts uses row r among the rows launched as launch (enum cs_launch; < 0: any
 * launch): its configuration, its launch, out-of-place unless opts takes in-place rows too, two
 * ranks or more and a positive time. */
int cs_fit_row_selected(const struct cs_meas_row *r, const struct cs_fit_opts *o, int launch);

/* The residual table of a fit (cal.h, struct cs_cal_resid): for the n points (queries q, measured
 * seconds t), each under the pair model m picks for it, per collective, algorithm and protocol and
 * per whole octave of size, the rms ln residual of the points within one octave; entries of
 * CS_CAL_RESID_MIN_POINTS points or more whose rms exceeds noise_ln go into out->resid (the first
 * CS_CAL_MAX_RESID by collective, algorithm, protocol and octave), allocated here (what out held
 * before is freed; NULL when no entry). Points the model cannot price are left out. Errors:
 * CS_ERR_NOMEM. */
enum cs_status cs_fit_resid_table(const struct cs_model *m, const struct cs_coll_query *q,
                                  const double *t, size_t n, double noise_ln,
                                  struct cs_cal_quality *out, struct cs_error *err);

/* How far the data says the calibration extrapolates in node count: with rows (of opts's
 * configuration) at three node counts or more, fits the rows below the largest count again (no
 * cross-validation) and predicts the rows at it; the rms of ln(predicted / measured) over those
 * rows within three robust scales of zero (1.4826 x their median |ln|: erratic rows left out, as
 * the fit treats outliers), less in quadrature the held-in fit's noise (the band adds that
 * anyway), per square root of the doublings between the two largest counts, goes into
 * cal->quality.extrap_sd (with extrap_from / extrap_to, the two counts), which cs_cal_predict uses
 * for the band beyond the measured node count in place of CS_CAL_EXTRAP_SD. Fewer node counts, or
 * a held-in fit that fails: extrap_sd stays NAN. Errors: CS_ERR_NOMEM. */
enum cs_status cs_fit_extrapolation(const struct cs_meas_set *meas, const struct cs_fit_opts *opts,
                                    struct cs_cal *cal, struct cs_error *err);

#endif
