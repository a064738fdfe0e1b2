/* coll.h — the vocabulary shared by measurement, fit and simulation: collectives, algorithms,
 * protocols, and the nccl-tests conventions for message size and bus bandwidth.
 *
 * Message size S follows nccl-tests: the "size" column, i.e. the total buffer of the operation
 * (for all_gather the gathered output, for reduce_scatter the input, for all_to_all the bytes each
 * rank sends, for send_recv the bytes each rank sends). Bus bandwidth = algbw x busbw factor, the
 * factor being 2(n-1)/n for all_reduce, (n-1)/n for all_gather, reduce_scatter and all_to_all, and
 * 1 for broadcast, reduce and send_recv, so that busbw is comparable with link bandwidth.
 */
#ifndef CS_COLL_H
#define CS_COLL_H

#include <stddef.h>

enum cs_coll {
  CS_COLL_ALL_REDUCE,
  CS_COLL_ALL_GATHER,
  CS_COLL_REDUCE_SCATTER,
  CS_COLL_BROADCAST,
  CS_COLL_REDUCE,
  CS_COLL_ALL_TO_ALL,
  CS_COLL_SEND_RECV,
  CS_COLL_COUNT
};

/* Algorithms. ring and tree as NCCL; hier = intra-node reduce-scatter, inter-node all-reduce,
 * intra-node all-gather; nvls = NVLink SHARP (NVSwitch in-network reduction); collnet = network
 * SHARP; pat = NCCL's parallel aggregated trees for all_gather/reduce_scatter; p2p = the direct
 * point-to-point exchange used by all_to_all and send_recv. CS_ALGO_AUTO means "NCCL's choice"
 * in measurements and "the fastest enabled" in predictions. */
enum cs_algo {
  CS_ALGO_RING,
  CS_ALGO_TREE,
  CS_ALGO_HIER,
  CS_ALGO_NVLS,
  CS_ALGO_COLLNET,
  CS_ALGO_PAT,
  CS_ALGO_P2P,
  CS_ALGO_COUNT,
  CS_ALGO_AUTO = CS_ALGO_COUNT
};

enum cs_proto {
  CS_PROTO_LL,
  CS_PROTO_LL128,
  CS_PROTO_SIMPLE,
  CS_PROTO_COUNT,
  CS_PROTO_AUTO = CS_PROTO_COUNT
};

/* Canonical lower-case names: "all_reduce", "ring", "simple", "auto". Never NULL for valid
 * values; "?" for out-of-range ones. */
const char *cs_coll_name(enum cs_coll c);
const char *cs_algo_name(enum cs_algo a);
const char *cs_proto_name(enum cs_proto p);

/* Parse a name, case-insensitively. Collectives accept the nccl-tests and NCCL spellings too
 * ("allreduce", "AllReduce", "alltoall", "sendrecv", "all_reduce_perf"); algorithms accept NCCL's
 * ("Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"); protocols "LL", "LL128",
 * "Simple". Return 0 on success, -1 if the name is not known (*out untouched). */
int cs_coll_parse(const char *name, enum cs_coll *out);
int cs_algo_parse(const char *name, enum cs_algo *out);
int cs_proto_parse(const char *name, enum cs_proto *out);

/* nccl-tests bus bandwidth factor for n ranks (n >= 1); 0 only when n == 1 for the collectives
 * whose factor has (n-1) in it. */
double cs_coll_busbw_factor(enum cs_coll c, int n);

/* NCCL's treeCorrectionFactor (2.28.3 src/graph/tuning.cc:578-582): the factor NCCL multiplies
 * the tree all_reduce bandwidth of protocol p by for a message of bytes, indexed by
 * log2i(bytes >> 6) (tuning.cc:591); 1.0 outside the table (under 64 bytes, over 256 MiB). */
double cs_nccl_tree_correction(enum cs_proto p, double bytes);

/* Element types, named as nccl-tests prints them (the runner's --dtype, a measurement row's
 * dtype column). */
enum cs_dtype {
  CS_DTYPE_INT8,
  CS_DTYPE_UINT8,
  CS_DTYPE_INT32,
  CS_DTYPE_UINT32,
  CS_DTYPE_INT64,
  CS_DTYPE_UINT64,
  CS_DTYPE_HALF,
  CS_DTYPE_FLOAT,
  CS_DTYPE_DOUBLE,
  CS_DTYPE_BFLOAT16,
  CS_DTYPE_COUNT
};

/* "float", "bfloat16", ...; "?" when out of range. */
const char *cs_dtype_name(enum cs_dtype d);
/* Bytes per element; 0 when out of range. */
size_t cs_dtype_size(enum cs_dtype d);
/* Accepts the nccl-tests names and the common aliases (fp32, f32, bf16, fp16, int, char, ...);
 * 0 on success, -1 if unknown (*out untouched). */
int cs_dtype_parse(const char *name, enum cs_dtype *out);

/* Whether algorithm a can run collective c at all (as NCCL: tree only for all_reduce; p2p only
 * and always for all_to_all and send_recv; pat for all_gather and reduce_scatter; ...). */
int cs_coll_algo_valid(enum cs_coll c, enum cs_algo a);

#endif
