/* cal.h — a calibration: fitted cost-model parameters with their uncertainty, the fit's quality
 * and provenance, and predictions with an error band.
 *
 * The fitter (calibrate/fit/fit.h) produces a struct cs_cal; calfile.h writes it to and reads it
 * from calibration.yaml; every verb that predicts collective times takes one. Uncertainty is kept
 * as the covariance of the natural logarithms of the fitted parameters (the fit works in log
 * space), so a relative standard error of a parameter is sqrt(cov[i][i]).
 */
#ifndef CS_CAL_H
#define CS_CAL_H

#include <stddef.h>

#include "costmodel.h"
#include "mpicoll.h"
#include "status.h"

#define CS_CAL_VERSION 1
#define CS_CAL_MAX_CV 64
#define CS_CAL_MAX_SOURCES 16

/* Where a parameter's value comes from. */
enum cs_param_source {
  CS_SRC_DEFAULT, /* not touched by any data point: the NCCL-anchored default */
  CS_SRC_FIT,     /* estimated from data (with a weak prior at the default) */
  CS_SRC_USER,    /* set by the user for this prediction (e.g. --net-bw): taken as exact */
  CS_SRC_TOPO     /* the topology's nominal link rate or latency for this prediction's shape */
};

struct cs_cal;

/* Precedence, per parameter, when a prediction combines several sources: fitted > user-given >
 * topology nominal > default. A fitted value is what this system measured; a value the user gave
 * replaces only defaults and topology values; a topology describes the target's links where no
 * measurement or user says otherwise. (A network the user explicitly asks "what if" about is the
 * exception: see cs_topo_cal_apply.) */

/* Short name of a source: "default", "fit", "user", "topology". */
const char *cs_cal_source_name(enum cs_param_source s);

/* Sets parameter i to v as given by the user, unless the calibration fitted it (precedence
 * above). Returns 1 when v was applied, 0 when the fitted value was kept. */
int cs_cal_set_user(struct cs_cal *cal, int i, double v);

struct cs_cal_prov {
  char tool[32];    /* "commscale 0.1.0" */
  char created[32]; /* ISO 8601 UTC */
  char gpu[128];
  char nccl[64];
  char hosts[256];
  char config[256]; /* the NCCL_* configuration fitted ("" = default) */
  char launch[16];  /* "process" or "thread" */
  char sources[CS_CAL_MAX_SOURCES][256];
  int n_sources;
};

/* Leave-one-shape-out cross-validation: one entry per held-out group of rows. */
struct cs_cal_cv {
  char group[96]; /* e.g. "ring/ll n=2 N=1 g=2" */
  int points;
  double median_rel_err, max_rel_err;
};

/* The fit's residual scale by message size, where it exceeds the fit's overall noise: for one
 * collective and the algorithm and protocol the model picks, the root mean square ln residual of
 * the fitted points within one octave of 2^octave bytes (CS_CAL_RESID_MIN_POINTS or more). Where
 * the model misfits a range of sizes, the band there widens to what the misfit was; elsewhere the
 * fit's robust noise (noise_rel) stands. */
#define CS_CAL_MAX_NODE_COUNTS 64
#define CS_CAL_MAX_RESID 512
#define CS_CAL_RESID_MIN_POINTS 3
struct cs_cal_resid {
  unsigned char coll, algo, proto; /* enum cs_coll, cs_algo, cs_proto (never auto) */
  signed char octave;              /* round(log2(bytes)) of the window's centre, 0..62 */
  int points;                      /* fitted points inside the window */
  double rms_ln;                   /* their root mean square ln(predicted / measured) */
};

struct cs_cal_quality {
  int points, outliers, iterations, converged;
  double noise_rel; /* robust scale of relative residuals */
  double median_rel_err, p90_rel_err, max_rel_err;
  double aic[2];      /* per enum cs_net_form; NAN when that form was not fitted */
  int net_determined; /* 1 if the data spans more than one node count */
  int max_nodes, max_ranks, max_gpus_per_node; /* the measured shapes' extent */
  /* the distinct node counts measured, ascending (n_node_counts 0: not recorded, older files) */
  int node_counts[CS_CAL_MAX_NODE_COUNTS];
  int n_node_counts;
  /* ln-time sd per sqrt(doubling) beyond max_nodes that the calibration's own data shows
   * (cs_fit_extrapolation: extrap_from nodes predicting extrap_to, beyond the fit's noise); NAN =
   * not measured, then CS_CAL_EXTRAP_SD */
  double extrap_sd;
  int extrap_from, extrap_to;
  struct cs_cal_cv cv[CS_CAL_MAX_CV];
  int n_cv;
  /* n_resid entries ordered by coll, algo, proto, octave; owned by the cs_cal the quality is in
   * (cs_cal_fini frees it; shallow copies share it, as they share the covariance) */
  struct cs_cal_resid *resid;
  int n_resid;
  /* The fit's quality gate (calibrate/fit.h): "" when passed, else why it failed; forced = 1 when
   * the calibration was written anyway (commscale fit --force). Prediction verbs warn on both. */
  char gate[256];
  int forced;
};

/* A steps calibration (sim/stepfit.h): what `commscale fit --steps` fitted to timed training
 * steps. fitted == 0: none (older files, or a collective-only fit). */
struct cs_cal_steps {
  int fitted;
  double compute_scale, host_s, interference;          /* the model's step terms */
  double compute_scale_se, host_s_se, interference_se; /* standard errors; NAN = not determined */
  double corr_scale_host;                              /* their correlation; NAN when not fitted */
  int points;
  double median_rel_err, max_rel_err;
  char source[256];
};

/* The relative ~95% half-width of compute a steps calibration leaves: 1.96 times the compute
 * scale's relative standard error and, in quadrature, the fit's largest relative residual (the
 * model error its parameters do not absorb). */
double cs_cal_steps_band(const struct cs_cal_steps *s);

struct cs_cal {
  int version;
  struct cs_model model; /* the preferred net form's parameters */
  enum cs_param_source source[CS_MODEL_NPARAMS];
  int n_fit;                          /* number of CS_SRC_FIT parameters */
  int fit_index[CS_MODEL_NPARAMS];    /* their indices, in covariance order */
  double *cov;                        /* n_fit x n_fit, row-major, ln-space; owned */
  double alt_hop_net[CS_PROTO_COUNT]; /* hop[net][p] fitted under the other net form */
  struct cs_cal_prov prov;
  struct cs_cal_quality quality;
  struct cs_cal_steps steps;
  struct cs_mpi_fit mpi; /* Open MPI's laws, when the rows were the MPI backend's (calmpi.h) */
};

/* Initialises cal with the default model, no fitted parameters and empty provenance. */
void cs_cal_init(struct cs_cal *cal);
/* Frees what cal owns (the covariance); cal may be re-initialised afterwards. */
void cs_cal_fini(struct cs_cal *cal);

/* Allocates cal->cov for n_fit parameters (zeroed). CS_ERR_NOMEM on failure. */
enum cs_status cs_cal_alloc_cov(struct cs_cal *cal, int n_fit, struct cs_error *err);

#define CS_CAL_MAX_WARN 6

/* cs_cal_warnings names a prediction beyond the measured nodes when the calibration's own
 * extrapolation check (quality.extrap_sd) missed by more than this (log, beyond the fit's noise)
 * over its doublings:
 * policy, as the fit's quality gate (25%, calibrate/fit.h) is. */
#define CS_CAL_EXTRAP_WARN 0.25

/* What a prediction for a target should say about this calibration: it failed its quality gate
 * (written with --force); its solver did not converge; it was measured on another GPU model than
 * target_gpu (the first "letters+digits" token of each name, e.g. H200 vs H100; NULL or no token =
 * unknown); it measured a different intra-node tier than target_intra (-1 = unknown); the query
 * spans more than one node (max_nodes) and the network bandwidth was never measured, which names
 * where the network values come from (src_net: the source of bw.net in the prediction, e.g.
 * CS_SRC_TOPO); the query goes beyond the measured nodes and the calibration's own extrapolation
 * check missed by more than CS_CAL_EXTRAP_WARN. Writes up to CS_CAL_MAX_WARN lines (no newline)
 * into w and returns their number. */
int cs_cal_warnings(const struct cs_cal *cal, const char *target_gpu, int target_intra,
                    int max_nodes, enum cs_param_source src_net, char w[][256]);

/* The log miss (beyond the fit's noise) of the calibration's own extrapolation check over its
 * doublings (quality.extrap_sd x sqrt(log2(extrap_to / extrap_from))); NAN when there was none. */
double cs_cal_extrap_miss(const struct cs_cal_quality *q);

/* The ln-time residual scale the fit showed near `bytes` for the pair a prediction picked
 * (pred->algo, pred->proto) of collective c: the entry of q->resid whose octave is
 * round(log2(bytes)), else NAN (the overall noise_rel applies). */
double cs_cal_resid_scale(const struct cs_cal_quality *q, enum cs_coll c,
                          const struct cs_coll_pred *pred, double bytes);

/* How many doublings a prediction at `nodes` lies from what the calibration measured: beyond the
 * largest count, log2(nodes / max_nodes); inside the range, the distance in doublings to the
 * nearest measured count (0 at one of them, and always 0 when the counts were not recorded). */
double cs_cal_unmeasured_doublings(const struct cs_cal_quality *q, int nodes);

/* Relative standard error of parameter i (sqrt of its ln-variance), NAN when not fitted. */
double cs_cal_param_se(const struct cs_cal *cal, int i);

/* The log-time standard deviation that each doubling of the node count beyond the largest one a
 * calibration measured adds, independently (a random walk: sd = this x sqrt(doublings)), when the
 * calibration's own data could not say (quality.extrap_sd: fewer than three node counts). Set from
 * published multi-node runs of four clusters (tests/data/public: ALCF Polaris, CSCS Alps, ABCI 2.0
 * A100 and V100), fitted on their node counts up to 4 (Polaris: 2 and 8) and predicted at the
 * rest, sizes >= 1 KiB, 311 points, every calibration taking this one value: the least value, in
 * steps of 0.025, with which 90% or more of every cluster's measurements fall inside the band
 * (Polaris 94.6%, Alps 100%, ABCI A100 90.6%, ABCI V100 91.7%; at 0.2 ABCI A100 84.4%). Chosen
 * from three clusters and scored on the fourth it is 0.25 every time: 94.6%, 100%, 90.6%, 91.7%.
 * It was 0.175 (90% pooled) when the fit could write a model other than the one it had fitted
 * (fit.c find_parameters). A band width, never a prediction; docs/model.md. */
#define CS_CAL_EXTRAP_SD 0.25

/* The ln-space spread of the network rate NCCL reaches against a topology's nominal one, which
 * the band gives bw.net when a topology set it (CS_SRC_TOPO; the prediction keeps the nominal
 * rate): the root mean square of ln(fitted bw.net / nominal) over the four published clusters of
 * tests/data/public, each fitted on all its node counts (tests/bench/coll_public.sh's full fits):
 * ALCF Polaris 39.3 / 50 GB/s, CSCS Alps 109.7 / 100, ABCI 2.0 A100 46.3 / 100, ABCI 2.0 V100
 * 22.5 / 25 (ln -0.24, +0.09, -0.77, -0.10). Topology latencies and intra-node rates stay exact
 * (no such data). docs/constants.md. */
#define CS_CAL_TOPO_NET_SD 0.41

/* Predicts q with cal->model and a band [lo, hi] (seconds) covering ~95%: the fitted parameters'
 * covariance and the prior uncertainty of the default parameters that no measurement determined
 * (cs_model_param_prior_sd; CS_SRC_USER parameters count as exact, CS_SRC_TOPO ones too but for
 * the network rate, CS_CAL_TOPO_NET_SD) propagated through the model
 * (delta method in log space, +-1.96 sigma), together with the fit's robust residual scale
 * (quality.noise_rel: the band is for one measurement, not only for the model's mean), or where
 * larger the fit's residual scale near q's size for the pair picked (cs_cal_resid_scale), and, when
 * q spans a node count the calibration did not measure, quality.extrap_sd (else CS_CAL_EXTRAP_SD)
 * per sqrt(doubling) of its distance from the measured counts (cs_cal_unmeasured_doublings); beyond
 * the largest, widened to include the other network-latency form. */
enum cs_status cs_cal_predict(const struct cs_cal *cal, const struct cs_coll_query *q,
                              struct cs_coll_pred *pred, double *lo, double *hi,
                              struct cs_error *err);

#endif
