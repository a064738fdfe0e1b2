/* pipeline.h — the pipeline-parallel schedule of one training step as an event simulation.
 *
 * One representative rank per pipeline stage runs its forward (F) and backward (B) passes of m
 * micro-batches in the order Megatron-LM's schedules give them:
 *
 *   1F1B (vpp = 1): stage s runs min(pp - s - 1, m) warm-up forwards, then alternates one forward
 *   and one backward, then drains the remaining backwards;
 *   interleaved (vpp = v > 1): each stage holds v model chunks (virtual stage c * pp + s); the k-th
 *   forward runs chunk (k mod pp*v) / pp of micro-batch (k / (pp*v)) * pp + k mod pp, backwards
 *   visit the chunks in reverse; warm-up is min((pp - s - 1) * 2 + (v - 1) * pp, m * v) forwards.
 *   m must be a multiple of pp (as Megatron-LM requires).
 *
 * A forward of virtual stage u waits for the forward of u - 1 on the same micro-batch plus one
 * point-to-point transfer; a backward of u waits for the backward of u + 1 plus one transfer (the
 * last virtual stage's backward follows its own forward). A stage runs one operation at a time in
 * its fixed order. The bubble is not a formula: it is the idle time the dependencies leave. For
 * uniform stages without transfers the idle fraction comes out as (pp - 1) / (m + pp - 1).
 *
 * Cost: cs_sim_pipe_alloc compiles the schedule into a flat list of operations in dependency
 * order (O(pp * v * m) time and about 64 bytes per operation), once per shape (pp, v, m) in a
 * process while the shape has at most 16,384 operations and fewer than 64 shapes were kept
 * (compiled schedules are read-only and shared; thread-safe); a run is one pass over that list,
 * O(pp * v * m) with no allocation, for up to CS_SIM_PIPE_LANES sets of durations at once.
 */
#ifndef CS_SIM_PIPELINE_H
#define CS_SIM_PIPELINE_H

#include "status.h"

struct cs_sim_pipe; /* workspace for one (pp, vpp, m) shape */

/* Independent runs one call can make over the same schedule. */
#define CS_SIM_PIPE_LANES 4

/* Per stage, what one run of the schedule gives (seconds from the step's start). */
struct cs_sim_pipe_stage {
  double end;  /* when its last operation ends */
  double busy; /* sum of its operations' durations */
  double idle; /* end - busy: bubble plus waiting for transfers */
};

/* Allocates a workspace for pp >= 1 stages, vpp >= 1 chunks per stage and m >= 1 micro-batches.
 * CS_ERR_USAGE when vpp > 1 and m is not a multiple of pp, or a size is out of range;
 * CS_ERR_NOMEM. Free with cs_sim_pipe_free (NULL is harmless). */
enum cs_status cs_sim_pipe_alloc(int pp, int vpp, long m, struct cs_sim_pipe **out,
                                 struct cs_error *err);
void cs_sim_pipe_free(struct cs_sim_pipe *p);

/* Runs the schedule. fwd[s * vpp + c] and bwd[s * vpp + c] are the durations of one micro-batch's
 * forward and backward of chunk c on stage s; p2p the time of one activation (or gradient)
 * transfer between neighbouring stages (ignored when pp = 1). Writes pp entries into st and, when
 * last_bwd is not NULL, pp * vpp start times of each chunk's last backward (when its gradients
 * start to be produced for the data-parallel reduction). Returns the step's pipeline time (the
 * latest end). Never fails: inputs are durations >= 0. */
double cs_sim_pipe_run(struct cs_sim_pipe *p, const double *fwd, const double *bwd, double p2p,
                       struct cs_sim_pipe_stage *st, double *last_bwd);

/* cs_sim_pipe_run_ext for lanes (1 .. CS_SIM_PIPE_LANES) independent runs at once: every array
 * holds its entries lane by lane (fwd[(s * vpp + c) * lanes + l], p2p[l], st[s * lanes + l],
 * last_bwd[(s * vpp + c) * lanes + l]). Each lane's results are those of cs_sim_pipe_run_ext with
 * that lane's inputs. Returns the pipeline time of lane 0. */
double cs_sim_pipe_run_lanes(struct cs_sim_pipe *p, int lanes, const double *fwd, const double *bwd,
                             const double *p2p, const double *bwd_extra, const double *send_extra,
                             struct cs_sim_pipe_stage *st, double *last_bwd);

/* cs_sim_pipe_run_lanes again after a cs_sim_pipe_run_lanes call with the same lanes, fwd, bwd
 * and p2p, with other bwd_extra and send_extra: the same results, but only the operations from
 * the first one an extra can touch (the last micro-batch's backwards, near the end of the
 * schedule) are replayed. With other lanes it is cs_sim_pipe_run_lanes. */
double cs_sim_pipe_rerun_lanes(struct cs_sim_pipe *p, int lanes, const double *fwd,
                               const double *bwd, const double *p2p, const double *bwd_extra,
                               const double *send_extra, struct cs_sim_pipe_stage *st,
                               double *last_bwd);

/* cs_sim_pipe_run with the last micro-batch's backward of each chunk lengthened: bwd_extra[s *
 * vpp + c] is added to the duration of that backward on stage s, chunk c, and send_extra[s * vpp +
 * c] to the transfer of its result to the previous virtual stage (the step simulator's NIC sharing
 * with the data-parallel stream). Either may be NULL (no extra). */
double cs_sim_pipe_run_ext(struct cs_sim_pipe *p, const double *fwd, const double *bwd, double p2p,
                           const double *bwd_extra, const double *send_extra,
                           struct cs_sim_pipe_stage *st, double *last_bwd);

#endif
