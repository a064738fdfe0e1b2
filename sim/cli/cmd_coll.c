/* cmd_coll.c — `commscale coll`: predict collective times from a calibration at any message size,
 * GPU count and node count, with the band from the calibration's uncertainty and from the
 * ring-linear vs tree-log ambiguity in node count.
 *
 * One record per (nodes, size) feeds three writers: an aligned table, CSV with units in the
 * header, and JSON that also carries the tool version and the arguments.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calfile.h"
#include "cmds.h"
#include "map.h"
#include "opts.h"
#include "output.h"
#include "units.h"

static const struct cli_opt opts[] = {
    {"cal", 'c', "FILE", "calibration.yaml from commscale fit (default: NCCL-anchored constants)"},
    {"coll", 0, "NAME",
     "collective: all_reduce (default), all_gather, reduce_scatter, broadcast, "
     "reduce, all_to_all, send_recv"},
    {"nodes", 'N', "LIST", "node counts, e.g. 1,4,16,64,400 or 1:400 (default 1)"},
    {"gpus-per-node", 'g', "G", "GPUs per node (default: the calibration's, else 8)"},
    {"sizes", 's', "LIST", "message sizes, e.g. 8:8G (x2 steps), 1M,64M (default 8:8G)"},
    {"minbytes", 'b', "SIZE", "as nccl-tests: the smallest size (with -e, -f; for --sizes b:e:f)"},
    {"maxbytes", 'e', "SIZE", "as nccl-tests: the largest size (default: -b's)"},
    {"stepfactor", 'f', "F", "as nccl-tests: the size factor (default 2)"},
    {"algo", 0, "ALGO",
     "force an algorithm (ring, tree, hier, nvls, collnet, pat, p2p) as NCCL_ALGO; with a "
     "calibration of MPI rows, Open MPI's (recursive_doubling, ring, rabenseifner, ...)"},
    {"proto", 0, "PROTO", "force a protocol (ll, ll128, simple) as NCCL_PROTO"},
    {"placement", 0, "HOW",
     "with a calibration of MPI rows: ranks placed in blocks (block, mpirun's default) or round "
     "robin over the nodes (cyclic, --map-by node); default: as measured"},
    {"enable", 0, "LIST",
     "algorithms the system also offers, e.g. nvls,collnet (as a topology would)"},
    {"topology", 't', "NAME",
     "cluster topology (a bundled name such as dgx-h100, or a file): each "
     "shape gets the links, NICs and algorithms it would use there"},
    {"net-bw", 0, "BW",
     "network bandwidth per node, e.g. 3200Gbps (8 x 400G); taken as exact unless the "
     "calibration measured it (fitted > given > topology > default)"},
    {"net-lat", 0, "TIME",
     "network per-hop latency for Simple, e.g. 14us; taken as exact unless the calibration "
     "measured it"},
    {"select", 0, "HOW",
     "how auto picks the pair: nccl (NCCL's candidates, least calibrated time; default), "
     "fastest (every enabled pair) or nccl-table (NCCL's own constants pick, as its TUNING log)"},
    CLI_OUTPUT_OPTS,
};

static const struct cli_verb verb = {
    "coll",
    "[--cal calibration.yaml] [--coll all_reduce] [--nodes 1,4,16] [-g 8] [--sizes 8:8G]",
    "Predict collective times with their band at any size, GPU count and node count.",
    "Columns: time_us with time_lo_us..time_hi_us (~95%: parameter uncertainty, defaults no data\n"
    "determined, and, beyond the measured node count, both network-latency forms); algbw and\n"
    "busbw as nccl-tests defines them; 'bound' says whether latency or bandwidth dominates.",
    opts,
    (int)(sizeof opts / sizeof opts[0]),
    NULL};

struct rec {
  int nodes, gpn, ranks;
  double bytes, t, lo, hi, algbw, busbw, lat;
  enum cs_algo algo;
  enum cs_proto proto;
  const char *mpi_alg; /* Open MPI's algorithm when the MPI laws priced it (else NULL) */
};

static const char *rec_algo(const struct rec *r) {
  return r->mpi_alg ? r->mpi_alg : cs_algo_name(r->algo);
}
static const char *rec_proto(const struct rec *r) {
  return r->mpi_alg ? "mpi" : cs_proto_name(r->proto);
}

static void write_table(FILE *f, const struct rec *r, size_t n, const char *coll, const char *links,
                        char warn[][256], int nwarn) {
  fprintf(f, "# %s predicted by commscale %s\n", coll, CS_VERSION);
  for (int i = 0; i < nwarn; i++)
    fprintf(f, "# warning  %s\n", warn[i]);
  for (const char *l = links; l && *l;) {
    size_t k = strcspn(l, "\n");
    fprintf(f, "# links  %.*s\n", (int)k, l);
    l += k + (l[k] == '\n');
  }
  fprintf(f, "#%6s %4s %6s %12s %6s %7s %12s %12s %12s %10s %10s %9s\n", "nodes", "gpn", "ranks",
          "size", "algo", "proto", "time", "time_lo", "time_hi", "algbw", "busbw", "bound");
  fprintf(f, "#%6s %4s %6s %12s %6s %7s %12s %12s %12s %10s %10s %9s\n", "", "", "", "(B)", "", "",
          "(us)", "(us)", "(us)", "(GB/s)", "(GB/s)", "");
  for (size_t i = 0; i < n; i++) {
    char sz[32];
    cs_units_format_size(r[i].bytes, sz, sizeof sz);
    fprintf(f, " %6d %4d %6d %12s %6s %7s %12.2f %12.2f %12.2f %10.2f %10.2f %9s\n", r[i].nodes,
            r[i].gpn, r[i].ranks, sz, rec_algo(&r[i]), rec_proto(&r[i]), r[i].t, r[i].lo, r[i].hi,
            r[i].algbw, r[i].busbw, r[i].lat > 0.5 * r[i].t ? "latency" : "bandwidth");
  }
}

static void write_csv(FILE *f, const struct rec *r, size_t n, const char *coll) {
  fprintf(f, "collective,nodes,gpus_per_node,ranks,bytes,algorithm,protocol,time_us,time_lo_us,"
             "time_hi_us,algbw_GBps,busbw_GBps,latency_us\n");
  for (size_t i = 0; i < n; i++)
    fprintf(f, "%s,%d,%d,%d,%.0f,%s,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", coll, r[i].nodes, r[i].gpn,
            r[i].ranks, r[i].bytes, rec_algo(&r[i]), rec_proto(&r[i]), r[i].t, r[i].lo, r[i].hi,
            r[i].algbw, r[i].busbw, r[i].lat);
}

static void write_json(FILE *f, const struct rec *r, size_t n, const char *coll, int argc,
                       char **argv, const char *calpath, const char *links) {
  cli_json_head(f, argc, argv);
  fputs(", \"calibration\": ", f);
  if (calpath)
    cli_json_string(f, calpath);
  else
    fputs("null", f);
  fputs(", \"links\": ", f);
  cli_json_string(f, links);
  fprintf(f, ", \"collective\": \"%s\", \"predictions\": [\n", coll);
  for (size_t i = 0; i < n; i++)
    fprintf(f,
            "  {\"nodes\": %d, \"gpus_per_node\": %d, \"ranks\": %d, \"bytes\": %.0f, "
            "\"algorithm\": \"%s\", \"protocol\": \"%s\", \"time_us\": %.6g, \"time_lo_us\": %.6g, "
            "\"time_hi_us\": %.6g, \"algbw_GBps\": %.6g, \"busbw_GBps\": %.6g, \"latency_us\": "
            "%.6g}%s\n",
            r[i].nodes, r[i].gpn, r[i].ranks, r[i].bytes, rec_algo(&r[i]), rec_proto(&r[i]), r[i].t,
            r[i].lo, r[i].hi, r[i].algbw, r[i].busbw, r[i].lat, i + 1 < n ? "," : "");
  fputs("]}\n", f);
}

/* Parses an option's quantity that must be > 0; a bad one is a usage error naming the option. */
static enum cs_status positive(const char *opt, const char *text, enum cs_unit_kind kind, double *v,
                               struct cs_error *err) {
  if (cs_units_parse_quantity(text, kind, v, err) != CS_OK) {
    cs_error_prefix(err, opt);
    err->status = CS_ERR_USAGE;
    return CS_ERR_USAGE;
  }
  if (!(*v > 0)) return cs_error_set(err, CS_ERR_USAGE, "%s must be greater than 0", opt);
  return CS_OK;
}

/* Applies the exact user-given network parameters to cal. */
static enum cs_status apply_overrides(struct cs_cal *cal, const char *net_bw, const char *net_lat,
                                      const char *enable, const char *select,
                                      struct cs_error *err) {
  double v;
  if (net_bw) {
    if (positive("--net-bw", net_bw, CS_UNIT_BANDWIDTH, &v, err) != CS_OK) return CS_ERR_USAGE;
    if (!cs_cal_set_user(cal, cs_model_param_index("bw.net"), v))
      fprintf(stderr, "commscale coll: note: --net-bw ignored: the calibration measured the "
                      "network bandwidth (fitted values win over given ones)\n");
  }
  if (net_lat) {
    if (positive("--net-lat", net_lat, CS_UNIT_TIME, &v, err) != CS_OK) return CS_ERR_USAGE;
    /* keep the protocols' ratios to Simple, as NCCL's table has them */
    double scale = v / cal->model.hop[CS_TIER_NET][CS_PROTO_SIMPLE];
    int kept = 0;
    for (int p = 0; p < CS_PROTO_COUNT; p++) {
      char name[32];
      snprintf(name, sizeof name, "hop.net.%s", cs_proto_name(p));
      if (cs_cal_set_user(cal, cs_model_param_index(name), cal->model.hop[CS_TIER_NET][p] * scale))
        cal->alt_hop_net[p] *= scale;
      else
        kept++;
      /* the tree's levels cross the same network: the same scale */
      snprintf(name, sizeof name, "tree_hop.net.%s", cs_proto_name(p));
      cs_cal_set_user(cal, cs_model_param_index(name), cal->model.tree_hop[CS_TIER_NET][p] * scale);
    }
    if (kept)
      fprintf(stderr,
              "commscale coll: note: --net-lat ignored for %d protocols the calibration "
              "measured (fitted values win over given ones)\n",
              kept);
  }
  if (enable) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", enable);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
      enum cs_algo a;
      if (cs_algo_parse(t, &a) != 0 || a == CS_ALGO_AUTO)
        return cs_error_set(err, CS_ERR_USAGE, "--enable: unknown algorithm \"%s\"", t);
      cal->model.algo_enabled |= 1u << a;
    }
  }
  if (select) {
    if (strcmp(select, "nccl") == 0)
      cal->model.select = CS_SELECT_NCCL;
    else if (strcmp(select, "fastest") == 0)
      cal->model.select = CS_SELECT_FASTEST;
    else if (strcmp(select, "nccl-table") == 0)
      cal->model.select = CS_SELECT_NCCL_TABLE;
    else
      return cs_error_set(err, CS_ERR_USAGE,
                          "--select expects nccl, fastest or nccl-table, got \"%s\"", select);
  }
  return CS_OK;
}

/* --sizes, or nccl-tests' -b/-e/-f as the range "b:e:f"; NULL (err set) when both are given. */
static const char *sizes_arg(const struct cli_args *a, char *buf, size_t len,
                             struct cs_error *err) {
  const char *b = cli_get(&verb, a, "minbytes"), *e = cli_get(&verb, a, "maxbytes"),
             *f = cli_get(&verb, a, "stepfactor"), *s = cli_get(&verb, a, "sizes");
  if (!b && !e && !f) return s ? s : "8:8G";
  if (s || !b) {
    cs_error_set(err, CS_ERR_USAGE,
                 s ? "give --sizes or -b/-e/-f, not both" : "-e and -f need -b, the smallest size");
    return NULL;
  }
  snprintf(buf, len, "%.30s:%.30s:%.30s", b, e ? e : b, f ? f : "2");
  return buf;
}

/* The collective, algorithm and protocol of --coll, --algo and --proto into q. Errors:
 * CS_ERR_USAGE for an unknown name or an algorithm that cannot run the collective. */
static enum cs_status parse_query(const struct cli_args *a, struct cs_coll_query *q,
                                  struct cs_error *err) {
  const char *s;
  if ((s = cli_get(&verb, a, "coll")) && cs_coll_parse(s, &q->coll) != 0)
    return cs_error_set(err, CS_ERR_USAGE, "--coll: unknown collective \"%s\"", s);
  int m;
  if ((s = cli_get(&verb, a, "algo")) && cs_algo_parse(s, &q->algo) != 0 &&
      cs_mpi_coll_alg_parse(q->coll, s, &m) != 0) /* Open MPI's: for a calibration with MPI laws */
    return cs_error_set(err, CS_ERR_USAGE, "--algo: unknown algorithm \"%s\"", s);
  if ((s = cli_get(&verb, a, "proto")) && (cs_proto_parse(s, &q->proto) != 0))
    return cs_error_set(err, CS_ERR_USAGE, "--proto: unknown protocol \"%s\"", s);
  if (q->algo != CS_ALGO_AUTO && !cs_coll_algo_valid(q->coll, q->algo))
    return cs_error_set(err, CS_ERR_USAGE, "--algo %s cannot run %s", cs_algo_name(q->algo),
                        cs_coll_name(q->coll));
  return CS_OK;
}

/* What the verb predicts and what it learns on the way: the shapes and sizes asked for, one
 * record per (shape, size), and the header's facts about the links. */
struct coll_run {
  long *nodes, *gpn; /* node counts; the one GPUs-per-node value */
  double *sizes;
  size_t nn, ng, ns;
  struct rec *recs; /* nn * ns of them, n filled */
  size_t n;
  struct cs_topology topo;
  int have_topo;
  char links[768];      /* the sources of the widest shape's links */
  int links_net, intra; /* that shape crosses the network; its intra-node tier (-1: none) */
  enum cs_param_source src_net;
};

/* --nodes, --gpus-per-node (the calibration's, else 8) and --sizes (or -b/-e/-f) into R, and
 * room for the records. Errors: CS_ERR_USAGE prefixed with the option; CS_ERR_NOMEM. */
static enum cs_status parse_shapes(const struct cli_args *a, const struct cs_cal *cal,
                                   struct coll_run *R, struct cs_error *err) {
  const char *s = cli_get(&verb, a, "nodes");
  enum cs_status st = cs_units_parse_ints(s ? s : "1", 1, 1 << 20, &R->nodes, &R->nn, err);
  if (st != CS_OK) {
    cs_error_prefix(err, "--nodes");
    if (st != CS_ERR_NOMEM) err->status = st = CS_ERR_USAGE;
    return st;
  }
  char def[16];
  snprintf(def, sizeof def, "%d",
           cal->quality.max_gpus_per_node > 0 ? cal->quality.max_gpus_per_node : 8);
  s = cli_get(&verb, a, "gpus-per-node");
  st = cs_units_parse_ints(s ? s : def, 1, 1024, &R->gpn, &R->ng, err);
  if (st != CS_OK) {
    cs_error_prefix(err, "--gpus-per-node");
    if (st != CS_ERR_NOMEM) err->status = st = CS_ERR_USAGE;
    return st;
  } else if (R->ng != 1)
    return cs_error_set(err, CS_ERR_USAGE, "--gpus-per-node takes one number");
  char nt[96];
  if (!(s = sizes_arg(a, nt, sizeof nt, err))) return err->status;
  st = cs_units_parse_sizes(s, &R->sizes, &R->ns, err);
  if (st != CS_OK) {
    cs_error_prefix(err, "--sizes");
    if (st != CS_ERR_NOMEM) err->status = st = CS_ERR_USAGE;
    return st;
  }
  if (!(R->recs = calloc(R->nn * R->ns + 1, sizeof *R->recs)))
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  return CS_OK;
}

/* One record per (shape, size) of R into R->recs, q's collective, algorithm and protocol, from a
 * copy of cal per shape with the links the topology gives that shape (R->have_topo); the header
 * facts of the widest shape into R. Errors: cs_topo_map_shape's, cs_cal_predict's;
 * CS_ERR_NUMERIC when the model gives no finite figure. */
static enum cs_status predict_all(const struct cs_cal *cal, struct cs_coll_query q,
                                  struct coll_run *R, struct cs_error *err) {
  enum cs_status st = CS_OK;
  for (size_t i = 0; st == CS_OK && i < R->nn; i++) {
    /* each shape sees its own links on a topology: work on a copy of the calibration */
    struct cs_cal shape = *cal;
    q.nodes = (int)R->nodes[i];
    q.gpus_per_node = (int)R->gpn[0];
    q.ranks = q.nodes * q.gpus_per_node;
    if (R->have_topo) {
      struct cs_topo_group grp;
      st = cs_topo_map_shape(&R->topo, q.nodes, q.gpus_per_node, 0, &grp, err);
      if (st != CS_OK) break;
      cs_topo_cal_apply(&R->topo, &grp, 0, &shape);
      cs_topo_group_query(&grp, &q);
    }
    /* the header names the sources of the widest shape's links */
    if (i == 0 || (q.nodes > 1 && !R->links_net)) {
      cs_topo_cal_sources(&shape, q.nodes, R->links, sizeof R->links);
      R->links_net = q.nodes > 1;
      R->src_net = shape.source[cs_model_param_index("bw.net")];
      R->intra = R->have_topo ? (int)shape.model.intra : -1;
    }
    for (size_t j = 0; st == CS_OK && j < R->ns; j++) {
      q.bytes = R->sizes[j];
      struct cs_coll_pred pr;
      double lo, hi;
      st = cs_cal_predict(&shape, &q, &pr, &lo, &hi, err);
      if (st != CS_OK) break;
      struct rec *r = &R->recs[R->n++];
      r->nodes = q.nodes, r->gpn = q.gpus_per_node, r->ranks = q.ranks, r->bytes = q.bytes;
      r->t = pr.time * 1e6, r->lo = lo * 1e6, r->hi = hi * 1e6, r->lat = pr.lat * 1e6;
      r->algo = pr.algo, r->proto = pr.proto;
      r->algbw = pr.time > 0 ? q.bytes / pr.time / 1e9 : 0;
      r->busbw = r->algbw * cs_coll_busbw_factor(q.coll, q.ranks);
      /* no NaN or Inf ever reaches the output */
      if (!isfinite(r->t) || !isfinite(r->lo) || !isfinite(r->hi) || !isfinite(r->lat) ||
          !isfinite(r->algbw) || !isfinite(r->busbw))
        st = cs_error_set(err, CS_ERR_NUMERIC,
                          "the model gives no finite time for %d nodes x %d GPUs at %.0f bytes "
                          "(check the calibration and the --net-* values)",
                          q.nodes, q.gpus_per_node, q.bytes);
    }
  }
  return st;
}

/* The MPI laws of cal (model/mpicoll.h) for collective c at every (shape, size) of R, Open MPI's
 * algorithm `name` forced (NULL or "auto": its own choice). Errors: CS_ERR_USAGE for a name Open
 * MPI has not; CS_ERR_RANGE for a shape or tier the laws cannot price (the message says why). */
static enum cs_status predict_mpi(const struct cs_cal *cal, enum cs_coll c, const char *name,
                                  struct coll_run *R, struct cs_error *err) {
  int force = 0;
  if (name && cs_mpi_coll_alg_parse(c, name, &force) != 0)
    return cs_error_set(err, CS_ERR_USAGE,
                        "--algo %s: the calibration prices Open MPI's %s algorithms: expected "
                        "auto or one of Open MPI's names for it (docs/model.md)",
                        name, cs_coll_name(c));
  char setup[200];
  snprintf(R->links, sizeof R->links,
           "MPI laws fitted to %s rows (%d nodes widest); Open MPI's fixed decision (4.1.0-5.0.9) "
           "picks the algorithm; %s",
           cal->mpi.library, cal->mpi.max_nodes,
           cs_mpi_setup_describe(&cal->mpi.setup, setup, sizeof setup));
  for (size_t i = 0; i < R->nn; i++)
    for (size_t j = 0; j < R->ns; j++) {
      struct rec *r = &R->recs[R->n];
      char msg[200];
      int alg;
      double t, lo, hi, x[CS_MPI_NPARAMS];
      int nodes = (int)R->nodes[i], gpn = (int)R->gpn[0];
      if (cs_mpi_predict(&cal->mpi, c, force, nodes, gpn, R->sizes[j], &alg, &t, &lo, &hi, x, msg,
                         sizeof msg) != 0)
        return cs_error_set(err, CS_ERR_RANGE, "%s", msg);
      R->n++;
      r->nodes = nodes, r->gpn = gpn, r->ranks = nodes * gpn, r->bytes = R->sizes[j];
      r->t = t * 1e6, r->lo = lo * 1e6, r->hi = hi * 1e6;
      r->lat = 1e6 * (x[CS_MPI_ALPHA(CS_MPI_NET)] * cal->mpi.theta[CS_MPI_ALPHA(CS_MPI_NET)] +
                      x[CS_MPI_ALPHA(CS_MPI_LOCAL)] * cal->mpi.theta[CS_MPI_ALPHA(CS_MPI_LOCAL)]);
      r->mpi_alg = cs_mpi_coll_alg_name(c, alg);
      r->algbw = t > 0 ? r->bytes / t / 1e9 : 0;
      r->busbw = r->algbw * cs_coll_busbw_factor(c, r->ranks);
    }
  return CS_OK;
}

/* --placement (NULL: as measured) into an MPI calibration's setup; a usage error for another
 * value or a calibration without MPI laws. */
static enum cs_status set_placement(struct cs_cal *cal, const char *placement,
                                    struct cs_error *err) {
  if (placement == NULL) return CS_OK;
  int cyclic;
  if (cs_mpi_placement_parse(placement, &cyclic) != 0)
    return cs_error_set(err, CS_ERR_USAGE, "--placement: expected block or cyclic, got \"%.40s\"",
                        placement);
  if (!cal->mpi.fitted)
    return cs_error_set(err, CS_ERR_USAGE,
                        "--placement applies to a calibration of MPI rows (its mpi: section); "
                        "NCCL's rings and trees are laid out by NCCL itself");
  cal->mpi.setup.cyclic = cyclic;
  return CS_OK;
}

int cs_cmd_coll(int argc, char **argv) {
  struct cs_error err = {0};
  struct cli_args a;
  int fmt;
  int begun = cli_begin(&verb, argc, argv, &a, 0, 0, NULL, &fmt);
  if (begun >= 0) return begun;
  const char *outpath = cli_get(&verb, &a, "output");
  struct cs_coll_query q = {CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_PROTO_AUTO, 1, 1, 1, 0};
  if (parse_query(&a, &q, &err) != CS_OK) return cli_fail("coll", &err);

  struct cs_cal cal;
  cs_cal_init(&cal);
  const char *calpath = cli_get(&verb, &a, "cal");
  struct coll_run R;
  memset(&R, 0, sizeof R);
  R.intra = -1;
  R.src_net = CS_SRC_DEFAULT;
  enum cs_status st = CS_OK;
  if (calpath)
    st = cs_calfile_read(calpath, &cal, &err);
  else
    fprintf(stderr, "commscale coll: no --cal given: using NCCL-anchored default constants\n");
  if (st == CS_OK)
    st = apply_overrides(&cal, cli_get(&verb, &a, "net-bw"), cli_get(&verb, &a, "net-lat"),
                         cli_get(&verb, &a, "enable"), cli_get(&verb, &a, "select"), &err);
  if (st == CS_OK) st = parse_shapes(&a, &cal, &R, &err);
  const char *topo_name = cli_get(&verb, &a, "topology");
  if (st == CS_OK && topo_name) {
    char path[4096];
    st = cs_topo_find(topo_name, path, sizeof path, &err);
    if (st == CS_OK) st = cs_topo_load(path, &R.topo, &err);
    R.have_topo = st == CS_OK;
    if (st == CS_OK && !cli_get(&verb, &a, "gpus-per-node")) R.gpn[0] = R.topo.node.gpus;
  }
  /* a DGX user who forgets -g 8 with a 2-GPU calibration gets 4-rank "nodes": say so */
  if (st == CS_OK && !R.have_topo && !cli_get(&verb, &a, "gpus-per-node") &&
      cal.quality.max_gpus_per_node > 0)
    fprintf(stderr,
            "commscale coll: %ld GPUs per node, as in the calibration (give -g N for another "
            "node size)\n",
            R.gpn[0]);
  /* a calibration of MPI rows prices all_reduce and all_gather by Open MPI's own algorithms */
  int mpi = st == CS_OK && cal.mpi.fitted &&
            (q.coll == CS_COLL_ALL_REDUCE || q.coll == CS_COLL_ALL_GATHER);
  if (mpi && (R.have_topo || cli_get(&verb, &a, "net-bw") || cli_get(&verb, &a, "net-lat")))
    fprintf(stderr,
            "commscale coll: note: the calibration's MPI laws price %s from what it "
            "measured; --topology, --net-bw and --net-lat do not apply to them\n",
            cs_coll_name(q.coll));
  /* the other collectives of an MPI calibration go through the NCCL-form model fitted to the
   * same rows, which does not know Open MPI's algorithm switches: say so */
  if (st == CS_OK && cal.mpi.fitted && !mpi)
    fprintf(stderr,
            "commscale coll: warning: the calibration's MPI laws cover all_reduce and all_gather "
            "only; %s is priced by the collective model fitted to the same rows, which does not "
            "follow Open MPI's choice of algorithm (on the namespace cluster it missed all_reduce "
            "by a median of 34-37%%, docs/model.md)\n",
            cs_coll_name(q.coll));
  if (st == CS_OK) st = set_placement(&cal, cli_get(&verb, &a, "placement"), &err);
  if (mpi && st == CS_OK) st = predict_mpi(&cal, q.coll, cli_get(&verb, &a, "algo"), &R, &err);
  if (st == CS_OK && !mpi) st = predict_all(&cal, q, &R, &err);
  /* what the user should know about this calibration for this target, on stderr and in the
   * table's header */
  char warn[CS_CAL_MAX_WARN][256];
  int nwarn = 0;
  if (st == CS_OK && (calpath || R.links_net)) {
    long widest = 1;
    for (size_t i = 0; i < R.nn; i++)
      widest = R.nodes[i] > widest ? R.nodes[i] : widest;
    nwarn = cs_cal_warnings(&cal, R.have_topo ? R.topo.node.gpu : NULL, R.intra, (int)widest,
                            R.src_net, warn);
    for (int i = 0; i < nwarn; i++)
      fprintf(stderr, "commscale coll: warning: %s\n", warn[i]);
  }
  if (st == CS_OK) {
    FILE *f = cli_open_out(outpath, &err);
    if (f == NULL)
      st = CS_ERR_IO;
    else {
      if (fmt == CLI_CSV)
        write_csv(f, R.recs, R.n, cs_coll_name(q.coll));
      else if (fmt == CLI_JSON)
        write_json(f, R.recs, R.n, cs_coll_name(q.coll), argc, argv, calpath, R.links);
      else
        write_table(f, R.recs, R.n, cs_coll_name(q.coll), R.links, warn, nwarn);
      st = cli_close_out(f, &err);
    }
  }
  free(R.recs);
  free(R.nodes);
  free(R.gpn);
  free(R.sizes);
  cs_cal_fini(&cal);
  return st == CS_OK ? 0 : cli_fail("coll", &err);
}
