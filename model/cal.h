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
#include "status.h"

#define CS_CAL_VERSION 1
#define CS_CAL_MAX_CV 64
#define CS_CAL_MAX_SOURCES 16

/* Where a parameter's value comes from. */
enum cs_param_source {
  CS_SRC_DEFAULT, /* not touched by any data point: the NCCL-anchored default */
  CS_SRC_FIT,     /* estimated from data (with a weak prior at the default) */
  CS_SRC_USER     /* set by the user for this prediction (e.g. --net-bw): taken as exact */
};

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

struct cs_cal_quality {
  int points, outliers, iterations, converged;
  double noise_rel; /* robust scale of relative residuals */
  double median_rel_err, p90_rel_err, max_rel_err;
  double aic[2];      /* per enum cs_net_form; NAN when that form was not fitted */
  int net_determined; /* 1 if the data spans more than one node count */
  int max_nodes, max_ranks, max_gpus_per_node; /* the measured shapes' extent */
  struct cs_cal_cv cv[CS_CAL_MAX_CV];
  int n_cv;
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
};

/* Initialises cal with the default model, no fitted parameters and empty provenance. */
void cs_cal_init(struct cs_cal *cal);
/* Frees what cal owns (the covariance); cal may be re-initialised afterwards. */
void cs_cal_fini(struct cs_cal *cal);

/* Allocates cal->cov for n_fit parameters (zeroed). CS_ERR_NOMEM on failure. */
enum cs_status cs_cal_alloc_cov(struct cs_cal *cal, int n_fit, struct cs_error *err);

/* Relative standard error of parameter i (sqrt of its ln-variance), NAN when not fitted. */
double cs_cal_param_se(const struct cs_cal *cal, int i);

/* Predicts q with cal->model and a band [lo, hi] (seconds) covering ~95%: the fitted parameters'
 * covariance and the prior uncertainty of the default parameters that no measurement determined
 * (cs_model_param_prior_sd; CS_SRC_USER parameters count as exact) propagated through the model
 * (delta method in log space, +-1.96 sigma), widened to include the other network-latency form
 * when q spans more nodes than the calibration measured. */
enum cs_status cs_cal_predict(const struct cs_cal *cal, const struct cs_coll_query *q,
                              struct cs_coll_pred *pred, double *lo, double *hi,
                              struct cs_error *err);

#endif
