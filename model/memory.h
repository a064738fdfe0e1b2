/* memory.h — memory per GPU of a plan: weights, gradients, optimizer state, saved activations,
 * temporary buffers and a reserve, for the fullest pipeline stage.
 *
 * Parameters and optimizer state follow the ZeRO paper's accounting (arXiv 1910.02054): with
 * mixed-precision Adam a parameter costs 2 bytes of weights, 2 of gradients and K = 12 of
 * optimizer state (fp32 master weights, momentum, variance); ZeRO-1 divides the optimizer state,
 * ZeRO-2 also the gradients, ZeRO-3 also the weights by the data-parallel group (dp * cp ranks for
 * dense parameters, dp * cp / ep for expert parameters). Tensor, pipeline and expert parallelism
 * decide which parameters a GPU holds in the first place (workload.h).
 *
 * Activations: a stage holds the saved activations of several micro-batches at once. Under 1F1B
 * stage s of p holds min(p - s, m) of m micro-batches; under the interleaved schedule with v
 * virtual stages, min(2(p - s - 1) + (v - 1)p + 1, m v) model chunks, i.e. the first stage holds
 * (1 + (p - 1)/(p v)) times the activations of its layers for one micro-batch each (arXiv
 * 2205.05198). The output layer's activations (fp32 logits) are held for one micro-batch.
 *
 * Temporary buffers: under ZeRO-3 the gathered weights of the largest layer, twice (the layer
 * running and the one prefetched), or all of them where the profile does not reshard after
 * forward; under DDP whose gradients are not views into its buckets (the
 * framework profile's bucket_view; PyTorch's default) a copy of every gradient; otherwise, with
 * data parallelism, two gradient buckets. With the profile's fp32_logits the last stage also
 * holds the loss's logits gradient in fp32 and in the compute type.
 *
 * Peak: the sum of all of these, or, under a profile whose gradients are freed after each step
 * (grads_freed: PyTorch's zero_grad(set_to_none=True)) and one micro-batch per step, the larger
 * of the end of forward (weights, autocast copies, activations) and the end of backward (weights
 * and gradients), plus optimizer state, temporaries and reserve: total says so, the parts stay as
 * they are. Gradient accumulation over several micro-batches keeps the gradients through the later
 * forwards, so the sum stands there.
 *
 * The plan's framework profile (framework.h) is applied first: a distributed optimizer shards the
 * optimizer state, an fp32 reduction makes gradients 4 bytes. FP8 adds Transformer Engine's FP8
 * weight and transpose copies (2 bytes per parameter); 16-bit autocast over 32-bit weights adds
 * the cached 16-bit copy (2 bytes per parameter). An unknown profile is CS_ERR_IO.
 */
#ifndef CS_MEMORY_H
#define CS_MEMORY_H

#include "gpu.h"
#include "plan.h"
#include "status.h"
#include "workload.h"

struct cs_memory {
  int stage;     /* the pipeline stage described */
  double params; /* parameters on one GPU of the stage, before ZeRO sharding */
  double weights, grads, optimizer, activations, temp, reserve, total; /* bytes */
  double act_microbatch; /* one micro-batch's saved activations on the stage */
  double inflight;       /* how many micro-batches' worth of activations the stage holds */
  double capacity;       /* the GPU's memory, 0 when no GPU was given */
};

/* The breakdown for pipeline stage `stage` (0 .. pp-1) of plan p. */
enum cs_status cs_memory_stage(const struct cs_workload *w, const struct cs_plan *p, int stage,
                               struct cs_memory *m, struct cs_error *err);

/* The breakdown of the stage that needs the most memory; capacity from g (g may be NULL). */
enum cs_status cs_memory_estimate(const struct cs_workload *w, const struct cs_plan *p,
                                  const struct cs_gpu *g, struct cs_memory *m,
                                  struct cs_error *err);

/* Whether m fits its capacity (1 also when the capacity is unknown). */
int cs_memory_fits(const struct cs_memory *m);

/* CS_OK when m fits; else CS_ERR_RANGE with "needs X GiB per GPU on stage s but NAME has Y GiB:"
 * and the whole breakdown. */
enum cs_status cs_memory_check(const struct cs_memory *m, const char *gpu_name,
                               struct cs_error *err);

#endif
