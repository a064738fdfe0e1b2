/* netedit.h — editing a loaded topology's network: the bandwidth per GPU, and the edits that
 * network sizing (sim/sizing.h) and the CLI's --rails, --oversub, --sharp, --nvls, --transport and
 * --net-latency options apply (more or fewer rails, oversubscription per switch level, in-network
 * reductions, another transport with the loader's defaults for it).
 */
#ifndef CS_NETEDIT_H
#define CS_NETEDIT_H

#include "status.h"
#include "topology.h"

/* Gb/s per GPU of the network: nics * nic_bw / gpus (0 without a network). */
double cs_netedit_gbps_per_gpu(const struct cs_topology *t);
/* Sets the NIC speed so that every GPU gets gbps Gb/s (nic_bw = gbps * gpus / nics). */
void cs_netedit_set_gbps_per_gpu(struct cs_topology *t, double gbps);

/* Topology edits the sizing can apply; a field at its "keep" value leaves the topology alone. */
struct cs_netedit {
  int rails;                          /* NICs per node; 0 keep. The per-GPU rate is kept. */
  double oversub[CS_TOPO_MAX_LEVELS]; /* per switch level, >= 1; 0 keep */
  int sharp, nvls;                    /* 1 on, 0 off, -1 keep */
  int transport;                      /* enum cs_topo_transport; -1 keep. Re-derives latency,
                                         switch latency and efficiency from the loader's defaults
                                         for that transport (cs_topo_defaults) */
  double latency;                     /* s per network step; 0 keep (applied after transport) */
};

/* Sets every field of e to "keep". */
void cs_netedit_init(struct cs_netedit *e);
/* Applies e to t. CS_ERR_USAGE for rails outside 1..CS_TOPO_MAX_NICS, an oversubscription below
 * 1 or on a level the topology does not have, or any edit on a topology without a network. */
enum cs_status cs_netedit_apply(struct cs_topology *t, const struct cs_netedit *e,
                                struct cs_error *err);
/* Parses "0=2,1=4" or "leaf=2:1,spine=4" (level index or name = ratio) into e->oversub. */
enum cs_status cs_netedit_parse_oversub(const struct cs_topology *t, const char *text,
                                        struct cs_netedit *e, struct cs_error *err);

#endif
