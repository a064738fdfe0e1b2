/* commscale.h — the public C API of commscale: collective and training-step time predictions from
 * your own code (a framework, a scheduler, a notebook through ctypes).
 *
 * Build and link:  cc app.c $(pkg-config --cflags --libs commscale)
 * (libcommscale.so; for the static libcommscale.a use pkg-config --static --libs.)
 *
 * The contract
 * ------------
 * - Every function that can fail returns a commscale_status and, when errmsg is not NULL and
 *   errlen > 0, writes one NUL-terminated line into errmsg (truncated to errlen - 1 bytes): the
 *   empty string on success, else what went wrong. Input-file errors name "file:line:col: what
 *   was expected"; a missing bundled name lists the folders searched. Nothing is ever printed to
 *   stdout or stderr, and the library never calls exit() or abort().
 * - The library never keeps a pointer you pass in: strings and structs are read during the call.
 *   Results are written into structs you own; nothing the library returns needs freeing except a
 *   handle, which commscale_close() frees.
 * - A NULL pointer where a value is required is COMMSCALE_MISUSE (the call has no other effect).
 * - Units are SI: seconds, bytes, bytes per second, FLOP/s.
 * - Threads: a handle is used by one thread at a time; different handles are independent.
 * - Names or paths: "workload", "gpu" and "topology" take a bundled name (`commscale workload
 *   --list`, `commscale topology list`) or a path to a YAML file (a value that contains '/' or
 *   ends in .yaml/.yml). Bundled files are searched in $COMMSCALE_DATA_DIR, then in
 *   <prefix>/share/commscale of the installed executable and of this library, then in the source
 *   tree the library was built from.
 * - Identifiers beginning with commscale_ / COMMSCALE_ are this API's; libcommscale.a also
 *   defines internal symbols beginning with cs_.
 * - Compatibility: the structs below only ever grow at their end, and a caller zero-initialises
 *   every query struct (a later field left zero keeps today's behaviour).
 */
#ifndef COMMSCALE_H
#define COMMSCALE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define COMMSCALE_VERSION "0.1.0"
#define COMMSCALE_VERSION_NUMBER 1000 /* major * 1000000 + minor * 1000 + patch */

typedef enum commscale_status {
  COMMSCALE_OK = 0,
  COMMSCALE_USAGE = 1,       /* a bad argument value (unknown collective, plan syntax, ...) */
  COMMSCALE_PARSE = 2,       /* a malformed input file */
  COMMSCALE_IO = 3,          /* a file could not be found, opened or read */
  COMMSCALE_NOMEM = 4,       /* an allocation failed */
  COMMSCALE_RANGE = 5,       /* a value outside what is physically meaningful; no feasible plan */
  COMMSCALE_NUMERIC = 6,     /* the model gave no finite result */
  COMMSCALE_UNSUPPORTED = 7, /* a combination the model does not provide (yet) */
  COMMSCALE_EXTERNAL = 8,    /* a foreign library failed */
  COMMSCALE_MISUSE = 9       /* a NULL handle or result pointer */
} commscale_status;

/* The library's version, e.g. "0.1.0" (may differ from COMMSCALE_VERSION of the header you
 * compiled against). Never NULL; static storage. */
const char *commscale_libversion(void);

/* A short English name of st ("parse error", ...). Never NULL; static storage. */
const char *commscale_status_name(commscale_status st);

/* ---- a calibration ----------------------------------------------------------------------------
 */

/* An opened collective cost model: a fitted calibration.yaml (`commscale fit`) or the default
 * NCCL-anchored constants. Opaque. */
typedef struct commscale commscale;

/* Opens calibration (a calibration.yaml path), or the default model when calibration is NULL. On
 * success *out is a new handle (free it with commscale_close); on failure *out is NULL. */
commscale_status commscale_open(const char *calibration, commscale **out, char *errmsg,
                                size_t errlen);

/* Frees h and everything it owns. NULL is harmless. */
void commscale_close(commscale *h);

/* ---- one collective ---------------------------------------------------------------------------
 */

typedef struct commscale_collective {
  double time;                     /* predicted time, s */
  double time_lo, time_hi;         /* the model's ~95% band around it, s */
  double latency;                  /* the latency part of time, s */
  double algbw, busbw;             /* bytes / time and nccl-tests' bus bandwidth, bytes/s */
  int ranks, nodes, gpus_per_node; /* the shape costed */
  char algorithm[16];              /* the chosen NCCL algorithm ("ring", "tree", ...) */
  char protocol[16];               /* the chosen NCCL protocol ("simple", "ll", "ll128") */
} commscale_collective;

/* Predicts one collective as `commscale coll` does. collective: "all_reduce", "all_gather",
 * "reduce_scatter", "broadcast", "reduce", "all_to_all", "send_recv" (or the aliases `commscale
 * coll` takes, e.g. "allreduce"); bytes: the nccl-tests size (> 0); nodes >= 1; gpus_per_node: 0
 * takes the topology's GPUs per node, or without a topology the calibration's largest measured
 * node (8 for the default model); ranks: 0, or nodes * gpus_per_node (checked). topology: NULL
 * for the calibration alone, or a bundled name or YAML path whose links, latencies and algorithms
 * shape the model for this collective (as `commscale coll --topology`). Fills *out. */
commscale_status commscale_predict_collective(commscale *h, const char *collective, double bytes,
                                              int ranks, int nodes, int gpus_per_node,
                                              const char *topology, commscale_collective *out,
                                              char *errmsg, size_t errlen);

/* ---- a training step --------------------------------------------------------------------------
 */

/* What to predict. Zero-initialise, then set what applies. */
typedef struct commscale_step_query {
  const char *workload;  /* required: bundled name ("gpt3-175b") or workload YAML path */
  const char *gpu;       /* required: bundled name ("h100-sxm") or GPU YAML path */
  const char *topology;  /* required: bundled name ("dgx-h100") or topology YAML path */
  const char *plan;      /* "tp=8,pp=8,zero=1,mbs=1,gbs=3200" or a plan YAML file; NULL: the
                            defaults. For commscale_search: fixed fields only (precision,
                            bucket, overlaps, ...; a layout key is COMMSCALE_USAGE) */
  const char *framework; /* a framework profile ("megatron-core", "deepspeed-zero3", ...: the
                            bundled model/frameworks/NAME.yaml, or a path) as the plan's
                            framework=NAME; NULL: the plan's own (pytorch-ddp by default) */
  long nodes;            /* > 0: the step runs on nodes x the topology's GPUs per node */
  long gpus;             /* > 0 instead of nodes: on this many GPUs. With neither, the plan's own
                            dp * tp * pp * cp. When the plan does not name dp it is filled from
                            the GPUs; when it does, it must match them */
  double interference; /* >= 1: compute slowdown under overlapped collectives; 0: 1.16 (measured) */
  double measured;     /* > 0: the measured time, s, of one micro-batch on one GPU (forward +
                          backward + recomputation): scales the compute model; 0: none */
} commscale_step_query;

typedef struct commscale_step {
  double step;                        /* predicted step time, s */
  double step_lo, step_hi;            /* band: every collective at its band's bounds, s */
  double samples_per_s, tokens_per_s; /* tokens_per_s 0 for workloads without a sequence */
  double tflops_per_gpu;              /* model FLOP/s per GPU (no recomputation), in 1e12 FLOP/s */
  double hw_tflops_per_gpu;           /* the same with recomputation, in 1e12 FLOP/s */
  double mfu;                         /* model FLOP/s per GPU over the GPU's peak, 0..1 */
  double speedup, efficiency; /* over one GPU running the same micro-batches; speedup / gpus */
  double memory;              /* bytes per GPU on the fullest pipeline stage */
  int fits;                   /* 1 when memory fits the GPU (predict rejects a plan that does
                                 not; this API reports it and predicts anyway) */
  long gpus, nodes, microbatches;
  char plan[256]; /* the plan as resolved ("dp=16,tp=8,pp=8,...") */
} commscale_step;

/* Predicts one step of q on h's collective model, as `commscale predict` does for one row.
 * COMMSCALE_USAGE for a plan that does not fit the GPUs or the workload (heads not divisible by
 * tp, ...); the loaders' statuses for the files. Fills *out. */
commscale_status commscale_predict_step(commscale *h, const commscale_step_query *q,
                                        commscale_step *out, char *errmsg, size_t errlen);

/* Searches the parallel plans of q's workload on q's GPUs (nodes or gpus, required here) at
 * global batch gbs (> 0), as `commscale search` does, and writes the k fastest that fit memory
 * into top[0..k), fastest first, each predicted as commscale_predict_step would (with its band).
 * *found (when not NULL) receives the number of feasible plans; fewer than k are written when
 * fewer exist. top may be NULL when k is 0. COMMSCALE_RANGE when no plan is feasible. */
commscale_status commscale_search(commscale *h, const commscale_step_query *q, int gbs,
                                  commscale_step *top, size_t k, size_t *found, char *errmsg,
                                  size_t errlen);

/* ---- network sizing --------------------------------------------------------------------------
 */

/* One plan family's answer, as a row of `commscale size-network`. */
typedef struct commscale_sizing {
  char family[64];
  int reachable;           /* 0: not even an unlimited network meets the target (reason says) */
  double gbps_gpu;         /* least Gb/s per GPU meeting the target (whole Gb/s per NIC) */
  double gbps_gpu_lo;      /* the same with every collective at its band's low end (0: none) */
  double gbps_gpu_hi;      /* ... at its band's high end (0: not reached) */
  double gbps_node;        /* gbps_gpu x GPUs per node */
  double knee_gbps_gpu;    /* >= gbps_gpu: from there on no doubling gains 5% throughput */
  double tokens_per_s;     /* at the answer (samples/s for workloads without a sequence) */
  double bar_tokens_per_s; /* the common bar of eff targets: the fastest family, unlimited net */
  double step, max_step;   /* s: the step at the answer and the most the target allows */
  char dominant[48];       /* the largest part of that step other than compute */
  double dominant_s;
  char plan[256]; /* the family's best plan at the answer */
  char reason[256];
} commscale_sizing;

/* Sizes the network for q's workload on q->nodes nodes (required) at global batch gbs, as
 * `commscale size-network --target TARGET --family FAMILIES` does: target "eff=0.8" (80% of one
 * bar for every family), "mfu=0.4" or "tokens=1.2e6"; families as in docs/scenario.md (NULL: the
 * bundled default set). Writes up to k rows into out (in the order of the families), *n (when
 * not NULL) the number of families. COMMSCALE_USAGE for a bad target or family list. */
commscale_status commscale_size_network(commscale *h, const commscale_step_query *q, int gbs,
                                        const char *target, const char *families,
                                        commscale_sizing *out, size_t k, size_t *n, char *errmsg,
                                        size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
