/* nccl_tuning.h — NCCL's own cost model, read from the TUNING table that an NCCL_DEBUG=INFO
 * NCCL_DEBUG_SUBSYS=TUNING log prints, and the (algorithm, protocol) it chose per message size.
 * The functions keep the cs_nccltests_ prefix they had when this lived in nccltests.c.
 */
#ifndef CS_NCCL_TUNING_H
#define CS_NCCL_TUNING_H

#include "coll.h"
#include "status.h"

#define CS_NCCL_TUNING_MAX_CHOICES 512

/* NCCL's own model, as printed in its TUNING table: latency (us) and algorithm bandwidth (GB/s)
 * per collective, algorithm and protocol (0 where NCCL prints 0.0, i.e. disabled); plus the
 * (algorithm, protocol) NCCL chose per message size, from its "AllReduce: N Bytes -> Algo X proto
 * Y" lines. NCCL's algorithms map onto ours: CollNetDirect -> collnet, NVLS -> nvls, PAT -> pat
 * (CollNetChain and NVLSTree are not kept). */
struct cs_nccl_tuning {
  int present[CS_COLL_COUNT];
  double lat_us[CS_COLL_COUNT][CS_ALGO_COUNT][CS_PROTO_COUNT];
  double bw_GBps[CS_COLL_COUNT][CS_ALGO_COUNT][CS_PROTO_COUNT];
  /* the communicator the table is for, from NCCL's INIT lines ("comm 0x.. rank 0 nRanks 4 nNodes
   * 2 ..." and "2 coll channels, ..."): 0 where the log does not say */
  int ranks, nodes, channels;
  int n_choices;
  struct {
    enum cs_coll coll;
    double bytes;
    enum cs_algo algo;
    enum cs_proto proto;
  } choice[CS_NCCL_TUNING_MAX_CHOICES];
};

/* Reads the first tuning table and the choice lines of path into t. CS_ERR_PARSE naming path
 * when the log has no tuning table. */
enum cs_status cs_nccltests_read_tuning(const char *path, struct cs_nccl_tuning *t,
                                        struct cs_error *err);

/* NCCL's predicted time (us) for coll at bytes, using its chosen (algo, proto) for that size when
 * the log recorded one, else the fastest pair of its table: lat + bytes / (1000 * bw). Returns a
 * negative value when the table has no usable entry. Writes the pair used to *a, *p if non-NULL. */
double cs_nccltests_tuning_time_us(const struct cs_nccl_tuning *t, enum cs_coll coll, double bytes,
                                   enum cs_algo *a, enum cs_proto *p);

/* NCCL's own pick for coll at bytes (nccl-tests' size: the whole output of an all_gather, the
 * whole input of a reduce_scatter, which is the nBytes NCCL prices, enqueue.cc getAlgoInfo)
 * replayed on the logged table by NCCL's rule: time = lat + bytes / (1000 * bw) with the tree
 * all_reduce correction by size (src/graph/tuning.cc ncclTopoGetAlgoTime, NCCL 2.28.3
 * lines 578-600), the least time over the enabled pairs (src/enqueue.cc topoGetAlgoInfo,
 * lines 1812-1822). algo/proto: CS_*_AUTO or the pair NCCL_ALGO/NCCL_PROTO forced. Returns the
 * time (us), negative when no pair is usable; writes the pair to *a, *p. Across nodes (t->nodes >
 * 1) a ring Simple all_reduce of at least 64 bytes per channel and rank has its latency times
 * 1.4, NCCL's "plateau effect of ring" (tuning.cc:593-596; 1.4 from compute capability 8.0 on,
 * the GPUs of every bundled log; 1.9 before, which the table does not tell apart). */
double cs_nccl_tuning_pick(const struct cs_nccl_tuning *t, enum cs_coll coll, double bytes,
                           enum cs_algo algo, enum cs_proto proto, enum cs_algo *a,
                           enum cs_proto *p);

#endif
