/* cmd_search.c — `commscale search`: every feasible parallel plan of a workload on N GPUs of a
 * topology, ranked by step time, with the Pareto front of (step time, memory headroom, network
 * bytes per step) (search.h).
 *
 * Under MPI (built with MPI and started by mpirun/srun: OMPI_COMM_WORLD_SIZE, PMI_SIZE or
 * PMIX_RANK set) the space is dealt round-robin over the ranks; rank 0 gathers the entries,
 * merges them, recomputes the front and writes. One record (struct cs_search_entry) feeds the
 * three writers.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef CS_HAVE_MPI
#include <mpi.h>
#endif

#include "busy.h"
#include "cmds.h"
#include "output.h"
#include "search.h"
#include "setup.h"
#include "sizing.h"
#include "units.h"

static const struct cli_opt opts[] = {
    CLI_SETUP_OPTS,
    {"nodes", 'N', "N", "nodes (GPUs = N x GPUs per node of the topology)"},
    {"gpus", 'G', "N", "GPUs instead of nodes"},
    {"gbs", 0, "SAMPLES", "global batch in samples (required)"},
    {"plan", 'p', "PLAN",
     "fixed plan fields for every point: precision, bucket, overlaps, reserve"},
    {"net-gbps", 0, "GBPS", "network Gb/s per GPU (default: the topology's)"},
    {"max-tp", 0, "N", "largest tp (default: GPUs of one NVLink domain)"},
    {"max-cp", 0, "N", "largest cp (default 1, or 16 for sequences >= 8192)"},
    {"max-pp", 0, "N", "largest pp (default: every divisor of the blocks)"},
    {"max-vpp", 0, "N", "largest vpp"},
    {"max-mbs", 0, "N", "largest micro-batch"},
    {"family", 0, "LIST", "keep only these families: zero3,dp+tp,tp+pp,3d"},
    {"top", 'n', "K", "rows to print (default 20; 0 = all)"},
    {"front", 0, NULL, "also print the Pareto front's plans ranked below the top K"},
    {"band", 0, NULL,
     "compute the ~95% band of the top K rows (re-runs them); step_lo/step_hi are blank "
     "without it"},
    CLI_OUTPUT_OPTS,
    {"quiet", 'q', NULL, "no progress line on a terminal's stderr"},
};

static const struct cli_verb verb = {
    "search",
    "--workload NAME --gpu NAME --topology NAME --nodes N --gbs SAMPLES [--cal FILE]",
    "Every feasible plan (tp, pp, vpp, dp, zero, cp, ep, mbs, recompute, sp) on N GPUs, ranked by "
    "step time, with the Pareto front.",
    "The space is exhaustive: every divisor split of the GPUs, every ZeRO stage, micro-batch,\n"
    "recomputation and sequence-parallel setting; a point is kept when the plan is valid and fits\n"
    "the GPU's memory. Pruning uses exact memory bounds only. Front (P): no other plan is at "
    "least\n"
    "as fast, with at least as much memory headroom and at most as many network bytes per step.\n"
    "net_bytes: what one GPU sends over the network per step (nccl-tests sizes times the bus\n"
    "factor). Ranked at the predicted collective times; --band adds the ~95% band.",
    opts,
    (int)(sizeof opts / sizeof opts[0]),
    NULL};

static unsigned parse_families(const char *s, struct cs_error *err) {
  if (!s) return 0;
  unsigned m = 0;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", s);
  char *save = NULL;
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    int f = cs_family_parse(t);
    if (f < 0) {
      cs_error_set(err, CS_ERR_USAGE, "--family: unknown family \"%s\" (zero3, dp+tp, tp+pp, 3d)",
                   t);
      return ~0u;
    }
    m |= 1u << f;
  }
  return m;
}

/* Which rows are printed: the top K (all when top is 0) and, with --front, the rest of the front;
 * the first `banded` rows have a band (--band), the others print step_lo/step_hi blank. */
struct rows {
  size_t top;
  int front;
  size_t banded;
};

static int shown(const struct cs_search_result *r, size_t i, const struct rows *w) {
  return !w->top || i < w->top || (w->front && r->e[i].pareto);
}

static void band_text(const struct cs_search_entry *e, size_t i, const struct rows *w,
                      const char *blank, char *lo, char *hi, size_t len) {
  if (i < w->banded) {
    snprintf(lo, len, "%.6g", e->step_lo);
    snprintf(hi, len, "%.6g", e->step_hi);
  } else {
    snprintf(lo, len, "%s", blank);
    snprintf(hi, len, "%s", blank);
  }
}

static void write_table(FILE *f, const struct cs_search_result *r, const struct rows *w,
                        const char *head) {
  const struct cs_search_stats *s = &r->stats;
  int pw = 52; /* the plan column fits the longest plan shown */
  for (size_t i = 0; i < r->n; i++)
    if (shown(r, i, w)) {
      char plan[256];
      cs_plan_format(&r->e[i].plan, plan, sizeof plan);
      if ((int)strlen(plan) > pw) pw = (int)strlen(plan);
    }
  fprintf(f, "# commscale %s search\n%s", CS_VERSION, head);
  fprintf(f,
          "# space: %ld points; %ld invalid, %ld do not fit memory, %ld pruned by exact memory "
          "bounds, %ld feasible and simulated; %.3f s (%.0f points/s); collective cache %ld hits, "
          "%ld predictions\n",
          s->points, s->invalid, s->memory, s->pruned, s->simulated, s->seconds,
          s->seconds > 0 ? s->points / s->seconds : 0, s->cache_hits, s->cache_misses);
  fprintf(f, "#%4s %1s %-*s %-6s %9s %9s %9s %11s %6s %7s %8s %9s\n", "rank", "P", pw, "plan",
          "family", "step", "step_lo", "step_hi", "tokens/s", "MFU", "mem", "headroom", "net/step");
  fprintf(f, "#%4s %1s %-*s %-6s %9s %9s %9s %11s %6s %7s %8s %9s\n", "", "", pw, "", "", "(s)",
          "(s)", "(s)", "", "(%)", "(GiB)", "(GiB)", "(GB)");
  size_t front_n = 0, hidden = 0;
  for (size_t i = 0; i < r->n; i++) {
    const struct cs_search_entry *e = &r->e[i];
    front_n += e->pareto;
    if (!shown(r, i, w)) {
      hidden += e->pareto;
      continue;
    }
    char plan[256], lo[32] = "", hi[32] = "";
    cs_plan_format(&e->plan, plan, sizeof plan);
    if (i < w->banded) {
      snprintf(lo, sizeof lo, "%.4g", e->step_lo);
      snprintf(hi, sizeof hi, "%.4g", e->step_hi);
    }
    fprintf(f, " %4zu %1s %-*s %-6s %9.4g %9s %9s %11.4g %6.1f %7.1f %8.1f %9.3g\n", i + 1,
            e->pareto ? "P" : "", pw, plan, cs_family_name(e->family), e->step, lo, hi,
            e->tokens_per_s, 100 * e->mfu, e->memory / 1073741824.0, e->headroom / 1073741824.0,
            e->net_bytes / 1e9);
  }
  fprintf(f, "# front: %zu plans (P)", front_n);
  if (hidden) fprintf(f, ", %zu of them below the top %zu (--front prints them)", hidden, w->top);
  fputc('\n', f);
}

static void write_csv(FILE *f, const struct cs_search_result *r, const struct rows *w) {
  fputs("rank,pareto,plan,family,tp,pp,vpp,dp,cp,ep,zero,mbs,gbs,recompute,sp,step_s,step_lo_s,"
        "step_hi_s,samples_per_s,tokens_per_s,mfu,memory_GiB,headroom_GiB,net_bytes_per_gpu,"
        "comm_bytes_per_gpu\n",
        f);
  for (size_t i = 0; i < r->n; i++) {
    const struct cs_search_entry *e = &r->e[i];
    if (!shown(r, i, w)) continue;
    char plan[256], lo[32], hi[32];
    cs_plan_format(&e->plan, plan, sizeof plan);
    band_text(e, i, w, "", lo, hi, sizeof lo);
    const struct cs_plan *p = &e->plan;
    fprintf(f, "%zu,%d,", i + 1, e->pareto);
    cli_csv_field(f, plan);
    fprintf(f,
            ",%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%s,%d,%.6g,%s,%s,%.6g,%.6g,%.6g,"
            "%.5g,%.5g,%.6g,%.6g\n",
            cs_family_name(e->family), p->tp, p->pp, p->vpp, p->dp, p->cp, p->ep, p->zero, p->mbs,
            p->gbs, cs_recompute_name(p->recompute), p->sp, e->step, lo, hi, e->samples_per_s,
            e->tokens_per_s, e->mfu, e->memory / 1073741824.0, e->headroom / 1073741824.0,
            e->net_bytes, e->comm_bytes);
  }
}

static void write_json(FILE *f, const struct cs_search_result *r, const struct rows *w, int argc,
                       char **argv, const struct cs_scenario *su, long gpus, int gbs) {
  const struct cs_search_stats *s = &r->stats;
  fprintf(f, "{\"tool\": \"commscale %s\", \"arguments\": [", CS_VERSION);
  for (int i = 0; i < argc; i++) {
    if (i) fputs(", ", f);
    cli_json_string(f, argv[i]);
  }
  fputs("],\n \"workload\": ", f);
  cli_json_string(f, su->workload->name);
  fputs(", \"gpu\": ", f);
  cli_json_string(f, su->gpu.name);
  fputs(", \"topology\": ", f);
  cli_json_string(f, su->topo.name);
  fprintf(f, ", \"net_Gbps_per_gpu\": %g, \"gpus\": %ld, \"gbs\": %d,\n",
          cs_netedit_gbps_per_gpu(&su->topo), gpus, gbs);
  fprintf(f,
          " \"stats\": {\"points\": %ld, \"invalid\": %ld, \"memory\": %ld, \"pruned\": %ld, "
          "\"simulated\": %ld, \"seconds\": %.4f, \"cache_hits\": %ld, \"cache_misses\": %ld},\n"
          " \"plans\": [\n",
          s->points, s->invalid, s->memory, s->pruned, s->simulated, s->seconds, s->cache_hits,
          s->cache_misses);
  int first = 1;
  for (size_t i = 0; i < r->n; i++) {
    const struct cs_search_entry *e = &r->e[i];
    if (!shown(r, i, w)) continue;
    char plan[256], lo[32], hi[32];
    cs_plan_format(&e->plan, plan, sizeof plan);
    band_text(e, i, w, "null", lo, hi, sizeof lo);
    fprintf(f, "%s  {\"rank\": %zu, \"pareto\": %s, \"plan\": ", first ? "" : ",\n", i + 1,
            e->pareto ? "true" : "false");
    cli_json_string(f, plan);
    fprintf(f,
            ", \"family\": \"%s\", \"step_s\": %.6g, \"step_lo_s\": %s, \"step_hi_s\": %s, "
            "\"samples_per_s\": %.6g, \"tokens_per_s\": %.6g, \"mfu\": %.6g, \"memory_GiB\": "
            "%.5g, \"headroom_GiB\": %.5g, \"net_bytes_per_gpu\": %.6g, \"comm_bytes_per_gpu\": "
            "%.6g}",
            cs_family_name(e->family), e->step, lo, hi, e->samples_per_s, e->tokens_per_s, e->mfu,
            e->memory / 1073741824.0, e->headroom / 1073741824.0, e->net_bytes, e->comm_bytes);
    first = 0;
  }
  fputs("\n]}\n", f);
}

/* Whether this process was started by an MPI launcher. */
static int under_mpi(void) {
  return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

#ifdef CS_HAVE_MPI
/* Under mpirun with several ranks: every rank's entries gathered at rank 0 and merged there. */
static void mpi_gather(struct cs_search_result *r, int rank, int size, enum cs_status *st,
                       struct cs_error *err) {
  /* gather the entries at rank 0 as bytes, then merge */
  int mine = *st == CS_OK ? (int)(r->n * sizeof *r->e) : 0;
  int *counts = rank == 0 ? calloc((size_t)size, sizeof *counts) : NULL;
  int *displs = rank == 0 ? calloc((size_t)size, sizeof *displs) : NULL;
  MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  char *all = NULL;
  long total = 0;
  if (rank == 0) {
    for (int i = 0; i < size; i++)
      displs[i] = (int)total, total += counts[i];
    all = malloc((size_t)total + 1);
  }
  MPI_Gatherv(r->e, mine, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
  double stats[7] = {(double)r->stats.points,      (double)r->stats.invalid,
                     (double)r->stats.memory,      (double)r->stats.pruned,
                     (double)r->stats.simulated,   (double)r->stats.cache_hits,
                     (double)r->stats.cache_misses};
  double sum[7];
  double secs = r->stats.seconds, maxs = 0;
  MPI_Reduce(stats, sum, 7, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&secs, &maxs, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0 && *st == CS_OK) {
    struct cs_search_result m = {0};
    struct cs_search_stats ms = {(long)sum[0], (long)sum[1], (long)sum[2], (long)sum[3],
                                 (long)sum[4], (long)sum[5], (long)sum[6], maxs};
    if (!all)
      *st = cs_error_set(err, CS_ERR_NOMEM, "out of memory");
    else
      *st = cs_search_merge(&m, (const struct cs_search_entry *)all, (size_t)total / sizeof *r->e,
                            &ms, err);
    cs_search_result_free(r);
    *r = m;
  }
  free(all);
  free(counts);
  free(displs);
}
#endif

/* The plan space of the options, with the scenario loaded (s is finalised on failure). */
static enum cs_status parse_space(const struct cli_args *a, struct cs_scenario *su,
                                  struct cs_search_space *sp, long *gpus, long *gbs, long *top,
                                  struct cs_error *err) {
  long nodes, mtp, mcp, mpp, mvpp, mmbs;
  enum cs_status st = cli_int_opt(&verb, a, "nodes", 1, 1 << 20, 0, &nodes, err);
  if (st == CS_OK) st = cli_int_opt(&verb, a, "gpus", 1, 1 << 24, 0, gpus, err);
  if (st == CS_OK) st = cli_int_opt(&verb, a, "gbs", 1, 1 << 30, 0, gbs, err);
  if (st == CS_OK) st = cli_int_opt(&verb, a, "top", 0, 1 << 30, 20, top, err);
  if (st == CS_OK) st = cli_int_opt(&verb, a, "max-tp", 1, 1 << 20, 0, &mtp, err);
  if (st == CS_OK) st = cli_int_opt(&verb, a, "max-cp", 1, 1 << 20, 0, &mcp, err);
  if (st == CS_OK) st = cli_int_opt(&verb, a, "max-pp", 1, 1 << 20, 0, &mpp, err);
  if (st == CS_OK) st = cli_int_opt(&verb, a, "max-vpp", 1, 1 << 20, 0, &mvpp, err);
  if (st == CS_OK) st = cli_int_opt(&verb, a, "max-mbs", 1, 1 << 20, 0, &mmbs, err);
  if (st == CS_OK && *gbs == 0) st = cs_error_set(err, CS_ERR_USAGE, "--gbs is required");
  if (st == CS_OK && !nodes == !*gpus)
    st = cs_error_set(err, CS_ERR_USAGE, "give one of --nodes and --gpus");
  unsigned fam = st == CS_OK ? parse_families(cli_get(&verb, a, "family"), err) : 0;
  if (st == CS_OK && fam == ~0u) st = CS_ERR_USAGE;
  if (st != CS_OK) return st;
  if ((st = cli_setup_load(su, &verb, a, cli_get(&verb, a, "plan"), err)) != CS_OK) return st;
  const char *s;
  if ((s = cli_get(&verb, a, "net-gbps"))) {
    char *end;
    double g = strtod(s, &end);
    if (*end || !(g > 0) || g > 1e6) { /* above 1 Pb/s per GPU: beyond any real network */
      cs_scenario_fini(su);
      return cs_error_set(err, CS_ERR_USAGE,
                          "--net-gbps expects Gb/s per GPU from > 0 to 1000000, got \"%s\"", s);
    }
    cs_netedit_set_gbps_per_gpu(&su->topo, g);
  }
  if (!*gpus) *gpus = nodes * su->topo.node.gpus;
  cs_search_space_init(sp, *gpus, (int)*gbs);
  sp->base = su->base;
  sp->max_tp = (int)mtp, sp->max_cp = (int)mcp, sp->max_pp = (int)mpp, sp->max_vpp = (int)mvpp;
  sp->max_mbs = (int)mmbs, sp->families = fam;
  return CS_OK;
}

/* The ranked plans in the chosen format; "no feasible plan" when there is none. */
static enum cs_status write_all(const struct cli_args *a, int fmt, const struct cs_search_result *r,
                                const struct cs_scenario *su, const struct cs_search_space *sp,
                                long gpus, long gbs, const struct rows *w, int size, int argc,
                                char **argv, struct cs_error *err) {
  FILE *f = cli_open_out(cli_get(&verb, a, "output"), err);
  if (!f) return CS_ERR_IO;
  char head[4096];
  snprintf(head, sizeof head,
           "# workload  %s\n# gpu       %s\n# topology  %s, %.0f Gb/s per GPU\n# cal       %s\n"
           "# framework %s\n# GPUs %ld, gbs %d%s\n",
           su->workload->description, su->gpu.description, su->topo.description,
           cs_netedit_gbps_per_gpu(&su->topo), su->calpath[0] ? su->calpath : "(default model)",
           su->base.framework, gpus, (int)gbs, size > 1 ? " (split over MPI ranks)" : "");
  size_t used = strlen(head);
  int gpn = su->topo.node.gpus > 0 ? su->topo.node.gpus : 1;
  cs_scenario_links(su, (gpus + gpn - 1) / gpn, 0, head + used, sizeof head - used);
  if (fmt == CLI_CSV)
    write_csv(f, r, w);
  else if (fmt == CLI_JSON)
    write_json(f, r, w, argc, argv, su, gpus, (int)gbs);
  else
    write_table(f, r, w, head);
  enum cs_status st = cli_close_out(f, err);
  char hint[640] = "";
  if (st == CS_OK && r->n == 0 && r->stats.points == 0) {
    struct cs_search_inputs in = cs_scenario_search_inputs(su);
    cs_search_empty_hint(&in, sp, hint, sizeof hint);
  }
  if (st == CS_OK && r->n == 0)
    st = cs_error_set(err, CS_ERR_RANGE,
                      "no feasible plan: %ld points, %ld invalid, %ld do not "
                      "fit memory, %ld pruned%s",
                      r->stats.points, r->stats.invalid, r->stats.memory, r->stats.pruned, hint);
  return st;
}

int cs_cmd_search(int argc, char **argv) {
  struct cs_error err = {0};
  struct cli_args a;
  int fmt;
  int begun = cli_begin(&verb, argc, argv, &a, 0, 0, NULL, &fmt);
  if (begun >= 0) return begun;
  long gpus, gbs, top;
  struct cs_search_space sp;
  struct cs_scenario su;
  enum cs_status st = parse_space(&a, &su, &sp, &gpus, &gbs, &top, &err);
  if (st != CS_OK) return cli_fail("search", &err);
  struct cs_search_inputs in = cs_scenario_search_inputs(&su);
  int rank = 0, size = 1;
#ifdef CS_HAVE_MPI
  int mpi = under_mpi();
  if (mpi) {
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  }
#else
  if (under_mpi())
    fprintf(stderr, "commscale search: built without MPI: every rank searches the whole space\n");
#endif
  struct cs_search_result r;
  struct cli_progress busy;
  cli_progress_init(&busy, "search", cli_get(&verb, &a, "quiet") != NULL || rank != 0,
                    &sp.progress);
  st = cs_search_run(&in, &sp, rank, size, &r, &err);
  cli_progress_end(&busy);
#ifdef CS_HAVE_MPI
  if (mpi && size > 1) mpi_gather(&r, rank, size, &st, &err);
#endif
  int rc = 0;
  struct rows w = {(size_t)top, cli_get(&verb, &a, "front") != NULL, 0};
  if (st == CS_OK && rank == 0 && cli_get(&verb, &a, "band")) {
    w.banded = top && (size_t)top < r.n ? (size_t)top : r.n;
    st = cs_search_band(&in, &r, w.banded, &err);
  }
  if (st == CS_OK && rank == 0)
    st = write_all(&a, fmt, &r, &su, &sp, gpus, gbs, &w, size, argc, argv, &err);
  if (st != CS_OK && rank == 0) rc = cli_fail("search", &err);
#ifdef CS_HAVE_MPI
  if (mpi) MPI_Finalize();
#endif
  cs_search_result_free(&r);
  cs_scenario_fini(&su);
  return rc;
}
