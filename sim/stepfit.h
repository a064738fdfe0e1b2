/* stepfit.h — steps calibration: fit the compute scale, a per-step host overhead and the compute
 * slowdown beside collectives (interference, the overlap efficiency) to training steps the user
 * timed, with standard errors (GSL nonlinear least squares).
 *
 * A steps file (YAML, schema in docs/calibration.md):
 *
 *   version: 1
 *   defaults: {workload: gpt.yaml, gpu: h200, topology: h200x4.yaml, cal: calibration.yaml}
 *   steps:
 *     - {plan: "dp=1,mbs=8,gbs=8", gpus: 1, step: 309.5ms}
 *     - {plan: "dp=2,mbs=8,gbs=16", gpus: 2, log: ddp2.log, format: torch}
 *     - {plan: "...", gpus: 8, log: train.log, format: megatron}
 *     - {plan: "...", gpus: 8, log: ds.log, format: deepspeed}   # samples/s -> gbs / rate
 *
 * Each entry may override the defaults' keys. Paths are relative to the steps file; gpu and
 * topology may name bundled files. A log's step time: `torch`, the `# result ... step_ms=X` line
 * of tests/gpu/steps.py (the first); `megatron`, the median of Megatron-LM's "elapsed time per
 * iteration (ms): X"; `deepspeed`, the plan's gbs over the median of DeepSpeed's "samples/sec: X"
 * (or "SamplesPerSec=X").
 *
 * The model of a step: the simulator's step with every layer's compute times the compute scale,
 * host seconds added to each step outside the overlapped phases, and the interference factor in
 * place of the default. Residuals are ln(predicted / measured). When the steps cannot tell the
 * host overhead from the compute scale (the Jacobian's two columns correlate beyond 0.995: one
 * workload at one micro-batch), the host overhead stays 0 and is reported as not determined;
 * likewise the interference stays at its default when no step has more than one GPU.
 */
#ifndef CS_STEPFIT_H
#define CS_STEPFIT_H

#include <stddef.h>

#include "cal.h"
#include "compute.h"
#include "status.h"

struct cs_steps; /* opaque: the loaded entries */

/* Loads path; exe is argv[0]'s resolved path (for bundled files). Errors name path:line:col. */
enum cs_status cs_steps_load(const char *path, const char *exe, struct cs_steps **out,
                             struct cs_error *err);
void cs_steps_free(struct cs_steps *s);
size_t cs_steps_count(const struct cs_steps *s);
/* Entry i's name (its plan and GPUs when it has none) and measured step, seconds. */
const char *cs_steps_name(const struct cs_steps *s, size_t i);
double cs_steps_measured(const struct cs_steps *s, size_t i);

/* Entry i predicted with the parameters of f (f->fitted == 0: the model as it is). */
enum cs_status cs_steps_predict(const struct cs_steps *s, size_t i, const struct cs_cal_steps *f,
                                double *step, struct cs_error *err);

/* Fits f (compute_scale, host_s, interference and their standard errors, points, errors). */
enum cs_status cs_steps_fit(const struct cs_steps *s, struct cs_cal_steps *f, struct cs_error *err);

#endif
