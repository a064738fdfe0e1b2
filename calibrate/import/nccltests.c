/* nccltests.c — importing nccl-tests text output into measurement rows; see nccltests.h.
 *
 * Each line goes through the normaliser of nccllog.c (launcher tags dropped, NCCL debug output
 * split off); what is left is either a comment ("#"), a "### command" line written by the scripts
 * that collect logs, or table data. Table data is read as a stream of tokens: a row is complete
 * when the header's column count is reached, so a row that NCCL INFO lines cut into fragments is
 * reassembled, and a row cut short (a comment or the end of the file before its last column) is an
 * error at the line where it started.
 *
 * The header line ("#  size count type redop root time algbw busbw #wrong time ...") decides the
 * columns, so old column sets (no root, "error" for "#wrong") and the per-iteration and timestamp
 * columns of newer nccl-tests read alike. The first time group is out-of-place, the second
 * in-place. Each row's time is kept; bandwidths are recomputed and the printed busbw only checks
 * that the rank count fits the run.
 *
 * State is per test: a "### command" line starts a new run (its NCCL_* settings and binary name
 * hold until the next one); "# nccl-tests version" or "# Collective test starting" starts a new
 * test within it. Shape, configuration and collective are resolved when the first data row of a
 * table arrives, so errors about them name the line they came from.
 *
 * The line normaliser (launcher tags, NCCL debug output) is nccllog.c; -J JSON output is read by
 * nccltests_json.c, and NCCL's tuning table by nccl_tuning.c.
 */
#include "nccltests.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "input.h"
#include "nccllog.h"
#include "nccltests_json.h"

#define MAX_COLS 40
#define MAX_ROW_TOKENS 64
#define TOKEN_MAX 64

/* ---------------------------------------------------------------------------------------------
 * Text logs
 */

enum colkind {
  COL_SIZE,
  COL_COUNT,
  COL_TYPE,
  COL_REDOP,
  COL_ROOT,
  COL_TIME,
  COL_ALGBW,
  COL_BUSBW,
  COL_WRONG,
  COL_IMIN,
  COL_IMAX,
  COL_TIMESTAMP,
  COL_OTHER
};

struct column {
  enum colkind kind;
  int group; /* -1 before the first time column, then 0 (out-of-place), 1 (in-place) */
  int width; /* tokens: 2 for a timestamp "YYYY-MM-DD HH:MM:SS" */
  char name[16];
};

struct table {
  int ncols, ntokens, ngroups;
  struct column col[MAX_COLS];
};

struct rank_entry {
  long rank, pid;
  char host[64];
};

/* A process's NCCL_HOSTID, from NCCL's "NCCL_HOSTID set by environment to ID" INFO line: NCCL
 * counts processes with different ids as different nodes, whatever their hostname. */
struct hostid_entry {
  long pid;
  char id[64];
};
#define MAX_HOSTIDS 1024

struct text_parser {
  struct hostid_entry hostid[MAX_HOSTIDS];
  int n_hostid;
  const char *path;
  struct cs_meas_set *set;
  struct cs_error *err;
  long line;
  struct cs_nccllog_hosts hosts; /* every host of the file, to split debug prefixes */

  /* run scope: the "### command" line */
  struct cs_nccllog_settings cmd_settings;
  char cmd_coll[64];
  long cmd_coll_line;

  /* test scope */
  struct cs_nccllog_settings test_settings;
  char test_coll[64];
  long test_coll_line;
  struct rank_entry *ranks;
  size_t n_ranks, cap_ranks;
  long last_rank_line;
  int dirty;    /* the test printed a table: a banner or a rank line starts a new test */
  int resolved; /* the fields below are valid */
  enum cs_coll coll;
  int n_total, nodes, gpn;
  enum cs_launch launch;
  /* NCCL's own count from its INIT line "comm 0x.. rank 0 nRanks N nNodes M ..." (0: none) */
  int nccl_ranks, nccl_nodes;

  /* table scope */
  int in_table;
  int table_data; /* the table has had data: the next comment ends it */
  struct table tab;
  char tok[MAX_ROW_TOKENS][TOKEN_MAX];
  int ntok;
  long row_line;

  long n_results;                 /* data rows read, size 0 included */
  struct cs_nccltests_left *left; /* rows left out for wrong results (never NULL) */
  const char *coll_hint;          /* the caller's collective for tests that name none */
};

static void test_reset(struct text_parser *tp) {
  tp->test_settings.n = 0;
  tp->test_coll[0] = '\0';
  tp->test_coll_line = 0;
  tp->n_ranks = 0;
  tp->nccl_ranks = tp->nccl_nodes = 0;
  tp->last_rank_line = 0;
  tp->dirty = 0;
  tp->resolved = 0;
  tp->in_table = 0;
  tp->table_data = 0;
  tp->ntok = 0;
}

static void run_reset(struct text_parser *tp) {
  tp->cmd_settings.n = 0;
  tp->cmd_coll[0] = '\0';
  tp->cmd_coll_line = 0;
  test_reset(tp);
}

static enum cs_status truncated_row(struct text_parser *tp) {
  char names[256] = "";
  size_t used = 0;
  for (int c = 0; c < tp->tab.ncols && used + 1 < sizeof names; c++) {
    int k = snprintf(names + used, sizeof names - used, "%s%s", c ? " " : "", tp->tab.col[c].name);
    if (k < 0) break;
    used += (size_t)k < sizeof names - used ? (size_t)k : sizeof names - used - 1;
  }
  return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->row_line, 0,
                     "expected a data row of %d fields (%s), got %d: the row is truncated",
                     tp->tab.ntokens, names, tp->ntok);
}

/* Ends the current table; a row still waiting for fields is an error. */
static enum cs_status end_table(struct text_parser *tp) {
  enum cs_status st = CS_OK;
  if (tp->in_table && tp->ntok > 0) st = truncated_row(tp);
  tp->in_table = 0;
  tp->table_data = 0;
  tp->ntok = 0;
  return st;
}

static enum cs_status on_command(struct text_parser *tp, char *text) {
  run_reset(tp);
  char *tok[256];
  int n = cs_nccllog_split_words(text, tok, 256);
  for (int i = 0; i < n; i++) {
    char name[64], value[192];
    if (cs_nccllog_assignment(tok[i], name, sizeof name, value, sizeof value))
      cs_nccllog_settings_put(&tp->cmd_settings, name, value);
    else if (tp->cmd_coll[0] == '\0' &&
             cs_nccllog_perf_name(tok[i], tp->cmd_coll, sizeof tp->cmd_coll))
      tp->cmd_coll_line = tp->line;
  }
  return CS_OK;
}

/* "#  Rank  0 Group  0 Pid   1319 on         vm device  0 [0000:00:06] NVIDIA H200"; older
 * nccl-tests print no Group. */
static const char *node_of(const struct text_parser *tp, const struct rank_entry *r);

static enum cs_status on_rank_line(struct text_parser *tp, const char *raw) {
  char buf[1024];
  cs_nccllog_copy(buf, sizeof buf, raw);
  char *tok[32];
  int n = cs_nccllog_split_ws(buf, tok, 32);
  long rank = -1, pid = -1;
  const char *host = NULL;
  int have_device = 0;
  for (int i = 0; i + 1 < n; i++) {
    if (strcmp(tok[i], "Rank") == 0 && cs_nccllog_long(tok[i + 1], &rank) != 0) rank = -1;
    if (strcmp(tok[i], "Pid") == 0 && cs_nccllog_long(tok[i + 1], &pid) != 0) pid = -1;
    if (strcmp(tok[i], "on") == 0 && host == NULL) host = tok[i + 1];
    if (strcmp(tok[i], "device") == 0) have_device = 1;
  }
  if (rank < 0 || pid < 0 || host == NULL || !have_device)
    return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->line, 0,
                       "expected a rank line \"#  Rank N Group G Pid P on HOST device D [BUS] "
                       "NAME\"");
  if (tp->dirty) {
    /* a rank list after a table: an old log without test banners */
    struct cs_nccllog_settings keep = tp->test_settings;
    char coll[64];
    long coll_line = tp->test_coll_line;
    cs_nccllog_copy(coll, sizeof coll, tp->test_coll);
    test_reset(tp);
    tp->test_settings = keep;
    cs_nccllog_copy(tp->test_coll, sizeof tp->test_coll, coll);
    tp->test_coll_line = coll_line;
  }
  for (size_t i = 0; i < tp->n_ranks; i++)
    if (tp->ranks[i].rank == rank)
      return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->line, 0,
                         "expected each rank once, got rank %ld a second time", rank);
  if (tp->n_ranks == tp->cap_ranks) {
    size_t nc = tp->cap_ranks ? tp->cap_ranks * 2 : 16;
    struct rank_entry *p = realloc(tp->ranks, nc * sizeof *p);
    if (p == NULL) return cs_error_set(tp->err, CS_ERR_NOMEM, "out of memory reading %s", tp->path);
    tp->ranks = p;
    tp->cap_ranks = nc;
  }
  struct rank_entry *r = &tp->ranks[tp->n_ranks++];
  r->rank = rank;
  r->pid = pid;
  cs_nccllog_copy(r->host, sizeof r->host, host);
  if (cs_nccllog_hosts_add(&tp->hosts, host) != 0)
    return cs_error_set(tp->err, CS_ERR_NOMEM, "out of memory reading %s", tp->path);
  tp->last_rank_line = tp->line;
  tp->resolved = 0;

  /* the device name: what follows the bus id "[...]" after "device D" */
  const char *dev = strstr(raw, " device ");
  const char *close = dev ? strchr(dev, ']') : NULL;
  if (close) {
    char name[256];
    cs_nccllog_copy(name, sizeof name, close + 1);
    enum cs_status st = cs_nccllog_meta_add(tp->set, "gpu", cs_nccllog_trim(name), tp->err);
    if (st != CS_OK) return st;
  }
  return cs_nccllog_meta_add(tp->set, "hosts", host, tp->err);
}

static enum colkind column_kind(const char *name, int *width) {
  static const struct {
    const char *name;
    enum colkind kind;
  } map[] = {{"size", COL_SIZE},          {"count", COL_COUNT}, {"type", COL_TYPE},
             {"redop", COL_REDOP},        {"root", COL_ROOT},   {"time", COL_TIME},
             {"cputime", COL_TIME},       {"algbw", COL_ALGBW}, {"busbw", COL_BUSBW},
             {"#wrong", COL_WRONG},       {"wrong", COL_WRONG}, {"error", COL_WRONG},
             {"errors", COL_WRONG},       {"i_min", COL_IMIN},  {"i_max", COL_IMAX},
             {"timestamp", COL_TIMESTAMP}};
  *width = 1;
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (strcmp(name, map[i].name) == 0) {
      if (map[i].kind == COL_TIMESTAMP) *width = 2;
      return map[i].kind;
    }
  return COL_OTHER;
}

/* Reads a column header (tokens after '#'); returns 1 if it is one. */
static int parse_header(struct table *t, char **tok, int n) {
  if (n < 2 || strcmp(tok[0], "size") != 0) return 0;
  int has_time = 0;
  for (int i = 0; i < n; i++)
    if (strcmp(tok[i], "time") == 0 || strcmp(tok[i], "cputime") == 0) has_time = 1;
  if (!has_time || n > MAX_COLS) return 0;
  memset(t, 0, sizeof *t);
  int group = -1;
  for (int i = 0; i < n; i++) {
    struct column *c = &t->col[t->ncols++];
    c->kind = column_kind(tok[i], &c->width);
    if (c->kind == COL_TIME) group++;
    c->group = group;
    if (group > 1 && c->kind != COL_TIMESTAMP) c->kind = COL_OTHER; /* a third group: not ours */
    cs_nccllog_copy(c->name, sizeof c->name, tok[i]);
    t->ntokens += c->width;
  }
  t->ngroups = group + 1 > 2 ? 2 : group + 1;
  return t->ntokens <= MAX_ROW_TOKENS;
}

/* Whether st sets name. */
static int names_setting(const struct cs_nccllog_settings *st, const char *name) {
  for (int i = 0; i < st->n; i++)
    if (strcmp(st->s[i].name, name) == 0) return 1;
  return 0;
}

/* Resolves the collective, shape and launch of the current test, once per table. */
static enum cs_status resolve_test(struct text_parser *tp) {
  if (tp->resolved) return CS_OK;
  const char *name = NULL;
  long name_line = 0;
  char from_path[64];
  if (tp->test_coll[0])
    name = tp->test_coll, name_line = tp->test_coll_line;
  else if (tp->cmd_coll[0])
    name = tp->cmd_coll, name_line = tp->cmd_coll_line;
  else if (tp->coll_hint)
    name = tp->coll_hint;
  else if (cs_nccllog_perf_name(tp->path, from_path, sizeof from_path))
    name = from_path;
  if (name == NULL)
    return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->row_line, 0,
                       "expected the collective's name (a \"# Collective test starting: "
                       "NAME_perf\" or \"### ... NAME_perf\" line) before the data");
  if (cs_coll_parse(name, &tp->coll) != 0)
    return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, name_line, 0,
                       "expected a known collective (%s), got \"%s\"", cs_nccllog_known_colls,
                       name);
  if (tp->n_ranks == 0)
    return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->row_line, 0,
                       "expected the \"#  Rank N ... on HOST device D\" lines before the data");
  size_t n = tp->n_ranks;
  for (size_t i = 0; i < n; i++)
    if (tp->ranks[i].rank >= (long)n)
      return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->last_rank_line, 0,
                         "expected ranks 0..%zu in the rank list, got rank %ld", n - 1,
                         tp->ranks[i].rank);
  /* distinct hosts, ranks per host, pids shared by ranks */
  int nodes = 0, per_host = -1, thread = 0;
  for (size_t i = 0; i < n; i++) {
    int first = 1, count = 0;
    for (size_t j = 0; j < n; j++) {
      if (strcmp(node_of(tp, &tp->ranks[j]), node_of(tp, &tp->ranks[i])) != 0) continue;
      if (j < i) first = 0;
      count++;
      if (j != i && tp->ranks[j].pid == tp->ranks[i].pid) thread = 1;
    }
    if (!first) continue;
    nodes++;
    if (per_host < 0)
      per_host = count;
    else if (count != per_host)
      return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->last_rank_line, 0,
                         "expected the same number of ranks on every host, got %zu ranks on "
                         "%d+ hosts (%d on %s, %d on %s)",
                         n, nodes, per_host, tp->ranks[0].host, count, tp->ranks[i].host);
  }
  if (n % (size_t)nodes != 0) /* cannot happen when every host has per_host ranks */
    return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->last_rank_line, 0,
                       "expected %zu ranks to divide evenly over %d hosts", n, nodes);
  /* a run that set NCCL_HOSTID (in its "###" command line or NCCL's environment report) split its
   * hosts into the nodes NCCL counted: NCCL's own INIT count wins over the host names */
  int hostid = tp->n_hostid > 0 || names_setting(&tp->cmd_settings, "NCCL_HOSTID") ||
               names_setting(&tp->test_settings, "NCCL_HOSTID");
  if (hostid && tp->nccl_nodes > nodes && tp->nccl_ranks == (int)n && n % tp->nccl_nodes == 0)
    nodes = tp->nccl_nodes;
  tp->n_total = (int)n;
  tp->nodes = nodes;
  tp->gpn = (int)n / nodes;
  tp->launch = thread ? CS_LAUNCH_THREAD : CS_LAUNCH_PROCESS;
  tp->resolved = 1;
  return CS_OK;
}

/* The cells of a table row that emit_row uses (NULL when the table has no such column); times,
 * bus bandwidths and per-iteration bounds by group: 0 out-of-place, 1 in-place. */
struct cells {
  const char *size, *type;
  const char *time[2], *busbw[2], *imin[2], *imax[2];
  double wrong[2]; /* elements nccl-tests' check found wrong (0: none, or not a count) */
};

/* Checks every cell of the pending row against its column's kind and picks out those emit_row
 * uses into *x (zeroed first). Errors: CS_ERR_PARSE naming the row's line, the column and the
 * cell, for a cell that is not what its column holds. */
static enum cs_status check_cells(struct text_parser *tp, struct cells *x) {
  const struct table *t = &tp->tab;
  const char *f[MAX_COLS];
  memset(x, 0, sizeof *x);
  int k = 0;
  for (int c = 0; c < t->ncols; c++) {
    f[c] = tp->tok[k];
    k += t->col[c].width;
  }
  for (int c = 0; c < t->ncols; c++) {
    const struct column *col = &t->col[c];
    const char *v = f[c];
    int g = col->group;
    double d;
    long l;
    const char *where = g == 0 ? ", out-of-place" : g == 1 ? ", in-place" : "";
    switch (col->kind) {
    case COL_SIZE:
      if (cs_nccllog_size(v, &d) != 0)
        return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->row_line, 0,
                           "expected a message size in bytes (column \"size\"), got \"%s\"", v);
      x->size = v;
      break;
    case COL_COUNT:
      if (cs_nccllog_size(v, &d) != 0)
        return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->row_line, 0,
                           "expected an element count (column \"count\"), got \"%s\"", v);
      break;
    case COL_TYPE:
    case COL_REDOP:
      if (!isalpha((unsigned char)v[0]))
        return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->row_line, 0,
                           "expected a name in column \"%s\", got \"%s\" (a truncated or "
                           "garbled row)",
                           col->name, v);
      if (col->kind == COL_TYPE) x->type = v;
      break;
    case COL_ROOT:
      if (cs_nccllog_long(v, &l) != 0)
        return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->row_line, 0,
                           "expected a root rank (column \"root\"), got \"%s\"", v);
      break;
    case COL_TIME:
      if (cs_nccllog_double(v, &d) != 0 || !isfinite(d) || d <= 0)
        return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->row_line, 0,
                           "expected a positive time in us (column \"%s\"%s), got \"%s\"",
                           col->name, where, v);
      x->time[g] = v;
      break;
    case COL_ALGBW:
    case COL_BUSBW:
    case COL_IMIN:
    case COL_IMAX:
      if (cs_nccllog_double(v, &d) != 0 || !isfinite(d) || d < 0)
        return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->row_line, 0,
                           "expected a non-negative number (column \"%s\"%s), got \"%s\"",
                           col->name, where, v);
      if (g >= 0 && g < 2) {
        if (col->kind == COL_BUSBW) x->busbw[g] = v;
        if (col->kind == COL_IMIN) x->imin[g] = v;
        if (col->kind == COL_IMAX) x->imax[g] = v;
      }
      break;
    case COL_WRONG:
      if (strcmp(v, "N/A") != 0 && (cs_nccllog_double(v, &d) != 0 || !(d >= 0)))
        return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->row_line, 0,
                           "expected a count of wrong elements or N/A (column \"%s\"%s), got "
                           "\"%s\"",
                           col->name, where, v);
      /* old nccl-tests print the largest deviation under "error", not a count */
      if (strcmp(v, "N/A") != 0 && strcmp(col->name, "error") != 0 && g >= 0 && g < 2)
        x->wrong[g] = d;
      break;
    case COL_TIMESTAMP:
    case COL_OTHER:
      break;
    }
  }
  return CS_OK;
}

/* The pending row, complete: checked (check_cells), then one measurement row per timed group
 * (out-of-place, in-place) pushed onto tp->set, with the test's shape and NCCL_* settings; a row
 * of size 0 is checked and dropped. Errors: CS_ERR_PARSE naming the row's line for a bad cell,
 * missing size or time columns, settings too long, or a printed busbw that disagrees with size,
 * time and the rank count; resolve_test's; cs_meas_set_push's. */
static enum cs_status emit_row(struct text_parser *tp) {
  const struct table *t = &tp->tab;
  struct cells x;
  tp->n_results++;
  enum cs_status st = check_cells(tp, &x);
  if (st != CS_OK) return st;
  if (x.size == NULL || x.time[0] == NULL)
    return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->row_line, 0,
                       "expected \"size\" and \"time\" columns in the table header");
  double bytes = 0;
  cs_nccllog_size(x.size, &bytes);
  if (bytes == 0) return CS_OK;

  if ((st = resolve_test(tp)) != CS_OK) return st;
  struct cs_nccllog_settings eff = tp->cmd_settings;
  for (int i = 0; i < tp->test_settings.n; i++)
    cs_nccllog_settings_put(&eff, tp->test_settings.s[i].name, tp->test_settings.s[i].value);

  struct cs_meas_row row;
  memset(&row, 0, sizeof row);
  row.coll = tp->coll;
  if (cs_nccllog_settings_apply(&eff, &row.algo, &row.proto, row.config, sizeof row.config) != 0)
    return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->row_line, 0,
                       "expected NCCL_* settings that fit in %zu characters", sizeof row.config);
  cs_nccllog_copy(row.dtype, sizeof row.dtype, x.type ? x.type : "");
  row.ranks = tp->n_total;
  row.nodes = tp->nodes;
  row.gpus_per_node = tp->gpn;
  row.bytes = bytes;
  row.launch = tp->launch;
  snprintf(row.source, sizeof row.source, "%s:%ld", tp->path, tp->row_line);
  for (int g = 0; g < t->ngroups; g++) {
    if (x.time[g] == NULL) continue;
    if (x.wrong[g] > 0) { /* the run returned wrong data: its time measures no collective */
      if (tp->left->wrong++ == 0)
        snprintf(tp->left->first, sizeof tp->left->first, "%s:%ld (%s, #wrong %.0f)", tp->path,
                 tp->row_line, g ? "in-place" : "out-of-place", x.wrong[g]);
      continue;
    }
    cs_nccllog_double(x.time[g], &row.time_us);
    row.time_min_us = row.time_max_us = NAN;
    if (x.imin[g]) cs_nccllog_double(x.imin[g], &row.time_min_us);
    if (x.imax[g]) cs_nccllog_double(x.imax[g], &row.time_max_us);
    row.trials = 0;
    row.in_place = g;
    cs_meas_row_derive(&row);
    double printed;
    if (x.busbw[g] && cs_nccllog_double(x.busbw[g], &printed) == 0 &&
        !cs_nccllog_busbw_agrees(printed, row.busbw_GBps))
      return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->row_line, 0,
                         "expected busbw %.2f GB/s (size / time x the %s factor for %d ranks), "
                         "got %s: the rank list does not match the run",
                         row.busbw_GBps, cs_coll_name(row.coll), row.ranks, x.busbw[g]);
    st = cs_meas_set_push(tp->set, &row, tp->err);
    if (st != CS_OK) return st;
  }
  return CS_OK;
}

/* Adds the tokens of one data fragment to the pending row, emitting rows as they complete. */
static enum cs_status on_data(struct text_parser *tp, char *text) {
  char *tok[MAX_ROW_TOKENS * 2];
  int n = cs_nccllog_split_ws(text, tok, MAX_ROW_TOKENS * 2);
  /* a whole row on one line while another waits for fields: that one was cut short */
  if (tp->ntok > 0 && n == tp->tab.ntokens) return truncated_row(tp);
  for (int i = 0; i < n; i++) {
    if (tp->ntok == 0) tp->row_line = tp->line;
    tp->table_data = 1;
    cs_nccllog_copy(tp->tok[tp->ntok++], TOKEN_MAX, tok[i]);
    if (tp->ntok == tp->tab.ntokens) {
      enum cs_status st = emit_row(tp);
      tp->ntok = 0;
      if (st != CS_OK) return st;
    }
  }
  return CS_OK;
}

/* NCCL's own output: its version, and the settings it read from the environment. */
/* The node a rank belongs to: its process's NCCL_HOSTID when the log names it, else its host. */
static const char *node_of(const struct text_parser *tp, const struct rank_entry *r) {
  for (int i = 0; i < tp->n_hostid; i++)
    if (tp->hostid[i].pid == r->pid) return tp->hostid[i].id;
  return r->host;
}

static enum cs_status on_info(struct text_parser *tp, char *info, const char *who) {
  char *s = cs_nccllog_trim(info);
  static const char hid[] = "NCCL_HOSTID set by environment to ";
  if (strncmp(s, hid, sizeof hid - 1) == 0) {
    /* who is "HOST:PID:TID" */
    const char *c = strchr(who, ':');
    long pid = -1;
    char num[32];
    if (c) {
      cs_nccllog_copy(num, sizeof num, c + 1);
      num[strcspn(num, ":")] = '\0';
      if (cs_nccllog_long(num, &pid) != 0) pid = -1;
    }
    if (pid < 0 || tp->n_hostid == MAX_HOSTIDS) return CS_OK;
    struct hostid_entry *e = &tp->hostid[tp->n_hostid++];
    e->pid = pid;
    cs_nccllog_copy(e->id, sizeof e->id, cs_nccllog_trim(s + sizeof hid - 1));
    size_t vl = strlen(e->id);
    if (vl > 0 && e->id[vl - 1] == '.') e->id[vl - 1] = '\0';
    tp->resolved = 0;
    return CS_OK;
  }
  if (cs_nccllog_comm_shape(s, &tp->nccl_ranks, &tp->nccl_nodes)) {
    tp->resolved = 0;
    return CS_OK;
  }
  if (strncmp(s, "NCCL version ", 13) == 0) {
    char v[64];
    cs_nccllog_copy(v, sizeof v, s + 13);
    v[strcspn(v, "+ ")] = '\0';
    if (cs_meas_get_meta(tp->set, "nccl") == NULL)
      return cs_nccllog_meta_add(tp->set, "nccl", v, tp->err);
    return CS_OK;
  }
  const char *marker = strstr(s, " set by environment to ");
  if (strncmp(s, "NCCL_", 5) == 0 && marker) {
    char name[64], value[192];
    size_t len = (size_t)(marker - s);
    if (len >= sizeof name) return CS_OK;
    memcpy(name, s, len);
    name[len] = '\0';
    cs_nccllog_copy(value, sizeof value, marker + strlen(" set by environment to "));
    size_t vl = strlen(value);
    if (vl > 0 && value[vl - 1] == '.') value[vl - 1] = '\0';
    cs_nccllog_settings_put(&tp->test_settings, name, cs_nccllog_trim(value));
    tp->resolved = 0;
  }
  return CS_OK;
}

static enum cs_status on_comment(struct text_parser *tp, char *text) {
  enum cs_status st = CS_OK;
  /* the units line under the header keeps the table open; a comment after data ends it */
  if (tp->ntok > 0 || tp->table_data) st = end_table(tp);
  if (st != CS_OK) return st;
  char raw[1024];
  cs_nccllog_copy(raw, sizeof raw, text);
  char *body = text + 1;
  char *tok[MAX_COLS + 8];
  int n = cs_nccllog_split_ws(body, tok, MAX_COLS + 8);
  if (n == 0) return CS_OK;
  if (n >= 3 && strcmp(tok[0], "nccl-tests") == 0 && strcmp(tok[1], "version") == 0) {
    test_reset(tp);
    for (int i = 2; i < n; i++)
      if (strncmp(tok[i], "nccl-library=", 13) == 0) {
        long code;
        if (cs_nccllog_long(tok[i] + 13, &code) == 0 && code > 0) {
          char v[32];
          cs_nccllog_version_string(code, v, sizeof v);
          st = cs_nccllog_meta_add(tp->set, "nccl", v, tp->err);
          if (st != CS_OK) return st;
        }
      }
    return CS_OK;
  }
  if (n >= 4 && strcmp(tok[0], "Collective") == 0 && strcmp(tok[1], "test") == 0 &&
      strcmp(tok[2], "starting:") == 0) {
    if (tp->dirty) test_reset(tp);
    cs_nccllog_copy(tp->test_coll, sizeof tp->test_coll, tok[3]);
    tp->test_coll_line = tp->line;
    return CS_OK;
  }
  if (strcmp(tok[0], "Rank") == 0) return on_rank_line(tp, raw);
  if (parse_header(&tp->tab, tok, n)) {
    tp->in_table = 1;
    tp->table_data = 0;
    tp->dirty = 1;
    tp->ntok = 0;
    return CS_OK;
  }
  if (strncmp(tok[0], "NCCL_", 5) == 0 && strchr(tok[0], '=')) {
    n = cs_nccllog_split_words(raw + 1, tok, MAX_COLS + 8);
    for (int i = 0; i < n; i++) {
      char name[64], value[192];
      if (cs_nccllog_assignment(tok[i], name, sizeof name, value, sizeof value))
        cs_nccllog_settings_put(&tp->test_settings, name, value);
    }
    tp->resolved = 0;
  }
  return CS_OK;
}

static enum cs_status import_text(const char *path, FILE *f, struct cs_meas_set *set,
                                  const struct cs_nccltests_hint *hint,
                                  struct cs_nccltests_left *left, struct cs_error *err) {
  struct text_parser *tp = calloc(1, sizeof *tp);
  if (tp == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory reading %s", path);
  tp->path = path;
  tp->left = left;
  tp->coll_hint = hint ? hint->coll : NULL;
  tp->set = set;
  tp->err = err;
  run_reset(tp);
  struct cs_lines in = {.f = f, .path = path};
  enum cs_status st = CS_OK;
  while (st == CS_OK && cs_lines_next(&in, err) >= 0) {
    tp->line++;
    char *s = in.buf;
    if (cs_nccllog_strip_tag(&s) != 0) continue; /* rank 0 prints the tables */
    char *info, who[192] = "";
    cs_nccllog_split_debug(s, &tp->hosts, &info, who, sizeof who);
    if (info) st = on_info(tp, info, who);
    if (st != CS_OK) break;
    char *text = cs_nccllog_trim(s);
    if (*text == '\0') continue;
    if (strncmp(text, "###", 3) == 0) {
      st = end_table(tp);
      if (st == CS_OK) st = on_command(tp, text + 3);
    } else if (text[0] == '#') {
      st = on_comment(tp, text);
    } else if (tp->in_table) {
      st = on_data(tp, text);
    }
  }
  /* a line or the log over its cap, a read error or no memory: never a silently shortened log */
  if (st == CS_OK) st = in.st;
  if (st == CS_OK) st = end_table(tp);
  if (st == CS_OK && tp->n_results == 0)
    st = cs_error_at(err, CS_ERR_PARSE, path, 0, 0,
                     "expected nccl-tests results (a \"#  size count type ...\" table with "
                     "data rows, or -J JSON), found none");
  free(in.buf);
  free(tp->ranks);
  free(tp->hosts.h);
  free(tp);
  return st;
}

/* ---------------------------------------------------------------------------------------------
 * Entry point
 */

enum cs_status cs_nccltests_import(const char *path, struct cs_meas_set *set,
                                   struct cs_error *err) {
  struct cs_nccltests_left left;
  return cs_nccltests_import_left(path, set, &left, err);
}

enum cs_status cs_nccltests_import_left(const char *path, struct cs_meas_set *set,
                                        struct cs_nccltests_left *left, struct cs_error *err) {
  return cs_nccltests_import_hinted(path, set, NULL, left, err);
}

enum cs_status cs_nccltests_import_hinted(const char *path, struct cs_meas_set *set,
                                          const struct cs_nccltests_hint *hint,
                                          struct cs_nccltests_left *left, struct cs_error *err) {
  memset(left, 0, sizeof *left);
  FILE *f = cs_input_open(path, err);
  if (f == NULL) return err ? err->status : CS_ERR_IO;
  int c;
  /* the bytes looked at are read again (a pipe cannot rewind: `import <(cat log)`) */
  f = cs_input_peek(f, path, &c, err);
  if (f == NULL) return err ? err->status : CS_ERR_IO;
  enum cs_status st = c == '{' ? cs_nccltests_json_import(path, f, set, &left->wrong, left->first,
                                                          sizeof left->first, err)
                               : import_text(path, f, set, hint, left, err);
  /* the provenance keeps what was left out, so a CSV written from the set says so */
  if (st == CS_OK && left->wrong > 0) {
    char item[400];
    snprintf(item, sizeof item, "%ld with wrong elements from %s", left->wrong, left->first);
    st = cs_nccllog_meta_add(set, "left_out", item, err);
  }
  fclose(f);
  return st;
}