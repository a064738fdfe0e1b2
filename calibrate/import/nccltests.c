/* nccltests.c — importing nccl-tests output into measurement rows; see nccltests.h.
 *
 * Text logs are read line by line through one normaliser that (1) drops the "[1,0]<stdout>:" tag
 * of mpirun --tag-output (and the "0: " label of srun --label), skipping the lines of every rank
 * but 0, and (2) splits off NCCL's debug output "HOST:PID:TID [DEV] NCCL INFO ..." wherever it
 * starts, even in the middle of a data row. What is left of a line is either a comment ("#"), a
 * "### command" line written by the scripts that collect logs, or table data. Table data is read
 * as a stream of tokens: a row is complete when the header's column count is reached, so a row
 * that NCCL INFO lines cut into fragments is reassembled, and a row cut short (a comment or the
 * end of the file before its last column) is an error at the line where it started.
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
 * nccl-tests -J writes one JSON object (format version 3 in nccl-tests 2.19): "args", "env",
 * "nccl_version", "config" {"nthreads", "ngpus", "devices": one entry per process}, "results"
 * [{"size", "type", "out_of_place": {"time", "alg_bw", "bus_bw", "nwrong"}, "in_place": {...},
 * "out_of_place_per_iter": {"min_us", "max_us", ...}}]. A small recursive-descent reader below
 * turns it into a tree that keeps each value's line and column.
 *
 * The tuning reader uses the same normaliser and reads NCCL's TUNING table and its per-size
 * choice lines from the debug text.
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

#define MAX_SETTINGS 64
#define MAX_COLS 40
#define MAX_ROW_TOKENS 64
#define TOKEN_MAX 64
#define JSON_MAX_DEPTH 64

static const char known_colls[] =
    "all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv";

/* ---------------------------------------------------------------------------------------------
 * Small string helpers
 */

static void copy_str(char *dst, size_t len, const char *src) {
  snprintf(dst, len, "%s", src ? src : "");
}

static char *trim(char *s) {
  while (isspace((unsigned char)*s))
    s++;
  size_t n = strlen(s);
  while (n > 0 && isspace((unsigned char)s[n - 1]))
    s[--n] = '\0';
  return s;
}

/* Splits s in place at whitespace into at most max tokens; returns the count. */
static int split_ws(char *s, char **tok, int max) {
  int n = 0;
  char *p = s;
  while (*p) {
    while (isspace((unsigned char)*p))
      p++;
    if (*p == '\0') break;
    if (n == max) break;
    tok[n++] = p;
    while (*p && !isspace((unsigned char)*p))
      p++;
    if (*p) *p++ = '\0';
  }
  return n;
}

/* Parses a whole token as a double; 0 on success. Accepts "nan"/"inf" (the caller checks). */
static int parse_double(const char *s, double *out) {
  if (s == NULL || *s == '\0') return -1;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end != '\0') return -1;
  *out = v;
  return 0;
}

/* Parses a whole token as a long integer; 0 on success. */
static int parse_long(const char *s, long *out) {
  if (s == NULL || *s == '\0') return -1;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (end == s || *end != '\0' || errno == ERANGE) return -1;
  *out = v;
  return 0;
}

/* A message size: a whole, non-negative number of bytes up to 2^50 (what the CSV reader takes). */
static int parse_size(const char *s, double *out) {
  double v;
  if (parse_double(s, &v) != 0 || !isfinite(v) || v < 0 || v != floor(v) || v > 0x1p50) return -1;
  *out = v;
  return 0;
}

static int is_host_char(char c) {
  return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
}

/* Adds item to the comma-separated provenance list under key unless it is already there. Items
 * that no longer fit in the value are dropped. */
static enum cs_status meta_add(struct cs_meas_set *set, const char *key, const char *item,
                               struct cs_error *err) {
  if (item == NULL || *item == '\0') return CS_OK;
  const char *cur = cs_meas_get_meta(set, key);
  if (cur == NULL || *cur == '\0') return cs_meas_set_meta(set, key, item, err);
  size_t ilen = strlen(item);
  for (const char *p = cur; *p;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == ilen && strncmp(p, item, len) == 0) return CS_OK;
    if (comma == NULL) break;
    p = comma + 1;
  }
  char buf[sizeof set->meta[0].value];
  int n = snprintf(buf, sizeof buf, "%s,%s", cur, item);
  if (n < 0 || (size_t)n >= sizeof buf) return CS_OK;
  return cs_meas_set_meta(set, key, buf, err);
}

/* NCCL's version code (22803 for 2.28.3, 2708 for 2.7.8) as "2.28.3". */
static void nccl_version_string(long code, char *buf, size_t len) {
  if (code >= 10000)
    snprintf(buf, len, "%ld.%ld.%ld", code / 10000, (code / 100) % 100, code % 100);
  else
    snprintf(buf, len, "%ld.%ld.%ld", code / 1000, (code / 100) % 10, code % 100);
}

/* ---------------------------------------------------------------------------------------------
 * NCCL_* settings and what they mean for a row
 */

struct setting {
  char name[64];
  char value[192];
};

struct settings {
  int n;
  struct setting s[MAX_SETTINGS];
};

static void settings_put(struct settings *st, const char *name, const char *value) {
  for (int i = 0; i < st->n; i++)
    if (strcmp(st->s[i].name, name) == 0) {
      copy_str(st->s[i].value, sizeof st->s[i].value, value);
      return;
    }
  if (st->n == MAX_SETTINGS) return;
  copy_str(st->s[st->n].name, sizeof st->s[st->n].name, name);
  copy_str(st->s[st->n].value, sizeof st->s[st->n].value, value);
  st->n++;
}

/* Finds an assignment NCCL_NAME=VALUE in one command-line token: at its start, or after '=' or
 * ',' as in "--env=NCCL_X=1" or "--export=ALL,NCCL_X=1". Surrounding quotes are removed. Returns
 * 1 when found. */
static int parse_assignment(const char *tok, char *name, size_t nlen, char *value, size_t vlen) {
  const char *p = tok;
  for (;;) {
    p = strstr(p, "NCCL_");
    if (p == NULL) return 0;
    if (p == tok || p[-1] == '=' || p[-1] == ',' || p[-1] == '"' || p[-1] == '\'') break;
    p++;
  }
  const char *q = p;
  while (isupper((unsigned char)*q) || isdigit((unsigned char)*q) || *q == '_')
    q++;
  if (*q != '=') return 0;
  size_t len = (size_t)(q - p);
  if (len >= nlen) len = nlen - 1;
  memcpy(name, p, len);
  name[len] = '\0';
  const char *v = q + 1;
  size_t vl = strlen(v);
  if (vl > 0 && (v[vl - 1] == '"' || v[vl - 1] == '\'')) vl--;
  if (vl > 0 && (v[0] == '"' || v[0] == '\'')) v++, vl--;
  if (vl >= vlen) vl = vlen - 1;
  memcpy(value, v, vl);
  value[vl] = '\0';
  return 1;
}

static int cmp_setting(const void *a, const void *b) {
  return strcmp(((const struct setting *)a)->name, ((const struct setting *)b)->name);
}

/* Maps one NCCL_ALGO value onto our algorithm: only a single name we model (not a list, not an
 * exclusion, not CollNetChain or NVLSTree, which our model does not keep apart). */
static int single_algo(const char *v, enum cs_algo *a) {
  if (strpbrk(v, ",^:;") != NULL) return -1;
  if (strcasecmp(v, "CollNetChain") == 0 || strcasecmp(v, "NVLSTree") == 0) return -1;
  if (strcasecmp(v, "auto") == 0) return -1;
  return cs_algo_parse(v, a);
}

static int single_proto(const char *v, enum cs_proto *p) {
  if (strpbrk(v, ",^:;") != NULL || strcasecmp(v, "auto") == 0) return -1;
  return cs_proto_parse(v, p);
}

/* Derives a row's algorithm, protocol and configuration tag from the effective settings. Returns
 * -1 when the tag does not fit in cfg. */
static int settings_apply(const struct settings *st, enum cs_algo *algo, enum cs_proto *proto,
                          char *cfg, size_t cfglen) {
  struct setting tmp[MAX_SETTINGS];
  int n = 0;
  *algo = CS_ALGO_AUTO;
  *proto = CS_PROTO_AUTO;
  /* NCCL_DEBUG=INFO or TRACE logs every call and slows small messages (20 vs 13 us on the 2 x H200
   * all-reduce): such runs are a different configuration. WARN, VERSION and the output file are
   * diagnostic only. */
  int verbose = 0;
  for (int i = 0; i < st->n; i++)
    if (strcmp(st->s[i].name, "NCCL_DEBUG") == 0)
      verbose = strcasecmp(st->s[i].value, "INFO") == 0 || strcasecmp(st->s[i].value, "TRACE") == 0;
  for (int i = 0; i < st->n; i++) {
    const struct setting *s = &st->s[i];
    if (strncmp(s->name, "NCCL_DEBUG", 10) == 0 &&
        (!verbose || strcmp(s->name, "NCCL_DEBUG_FILE") == 0))
      continue;
    if (strcmp(s->name, "NCCL_ALGO") == 0 && single_algo(s->value, algo) == 0) continue;
    if (strcmp(s->name, "NCCL_PROTO") == 0 && single_proto(s->value, proto) == 0) continue;
    tmp[n++] = *s;
  }
  qsort(tmp, (size_t)n, sizeof tmp[0], cmp_setting);
  size_t used = 0;
  cfg[0] = '\0';
  for (int i = 0; i < n; i++) {
    int k = snprintf(cfg + used, cfglen - used, "%s%s=%s", i ? ";" : "", tmp[i].name, tmp[i].value);
    if (k < 0 || (size_t)k >= cfglen - used) return -1;
    used += (size_t)k;
  }
  return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Line normaliser: launcher tags and NCCL debug output
 */

struct hostlist {
  char (*h)[64];
  size_t n, cap;
};

/* Adds host unless present. Returns 0, or -1 when out of memory: the list splits debug prefixes
 * glued to data rows, so reading on without it could misread rows. */
static int hostlist_add(struct hostlist *hl, const char *host) {
  for (size_t i = 0; i < hl->n; i++)
    if (strcmp(hl->h[i], host) == 0) return 0;
  if (hl->n == hl->cap) {
    size_t nc = hl->cap ? hl->cap * 2 : 16;
    char(*p)[64] = realloc(hl->h, nc * sizeof *p);
    if (p == NULL) return -1;
    hl->h = p;
    hl->cap = nc;
  }
  copy_str(hl->h[hl->n++], sizeof hl->h[0], host);
  return 0;
}

/* Strips an mpirun --tag-output prefix "[J,R]<stdout>:" or an srun --label prefix "R: " from
 * *line. Returns the rank it names, or 0 when there is none. */
static long strip_launcher_tag(char **line) {
  char *s = *line;
  if (s[0] == '[') {
    char *p = s + 1;
    while (isdigit((unsigned char)*p))
      p++;
    if (p > s + 1 && *p == ',') {
      char *r = ++p;
      while (isdigit((unsigned char)*p))
        p++;
      if (p > r && p[0] == ']' && p[1] == '<') {
        char *gt = strchr(p, '>');
        if (gt && gt[1] == ':') {
          long rank = strtol(r, NULL, 10);
          *line = gt + 2;
          return rank;
        }
      }
    }
    return 0;
  }
  char *p = s;
  while (*p == ' ')
    p++;
  char *d = p;
  while (isdigit((unsigned char)*p))
    p++;
  if (p > d && p[0] == ':' && p[1] == ' ') {
    long rank = strtol(d, NULL, 10);
    *line = p + 2;
    return rank;
  }
  return 0;
}

/* Finds where NCCL's debug prefix "HOST:PID:TID [DEV] (file.cc:N )NCCL LEVEL" begins, given the
 * offset of "NCCL" in line. Hosts listed in hl are preferred, since the prefix can follow data
 * without a space ("-1vm:3219:3219 [0] NCCL INFO"). Returns mark when the prefix is not there. */
static size_t debug_prefix_start(const char *line, size_t mark, const struct hostlist *hl) {
  size_t p = mark;
  while (p > 0 && line[p - 1] == ' ')
    p--;
  /* WARN lines carry "file.cc:123 " before the level */
  size_t q = p;
  while (q > 0 && isdigit((unsigned char)line[q - 1]))
    q--;
  if (q < p && q > 0 && line[q - 1] == ':' && line[p - 1] != ']') {
    size_t r = q - 1;
    while (r > 0 && line[r - 1] != ' ' && line[r - 1] != ']')
      r--;
    p = r;
    while (p > 0 && line[p - 1] == ' ')
      p--;
  }
  if (p == 0 || line[p - 1] != ']') return mark;
  q = p - 1;
  while (q > 0 && isdigit((unsigned char)line[q - 1]))
    q--;
  if (q == 0 || line[q - 1] != '[') return mark;
  p = q - 1;
  while (p > 0 && line[p - 1] == ' ')
    p--;
  for (int part = 0; part < 2; part++) { /* ":TID" then ":PID" */
    q = p;
    while (q > 0 && isdigit((unsigned char)line[q - 1]))
      q--;
    if (q == p || q == 0 || line[q - 1] != ':') return mark;
    p = q - 1;
  }
  size_t best = 0;
  for (size_t i = 0; i < hl->n; i++) {
    size_t len = strlen(hl->h[i]);
    if (len > best && len <= p && strncmp(line + p - len, hl->h[i], len) == 0) best = len;
  }
  if (best > 0) return p - best;
  q = p;
  while (q > 0 && is_host_char(line[q - 1]))
    q--;
  size_t start = q;
  while (start < p && !isalpha((unsigned char)line[start]))
    start++;
  if (start == p) start = q;
  return start == p ? mark : start;
}

/* Splits line (tag already stripped) in place into its data part and, when NCCL debug output is
 * present, the text after "NCCL INFO" (*info) and the "HOST:PID:TID" of its prefix (*who). */
static void split_debug(char *line, const struct hostlist *hl, char **info, char *who,
                        size_t wholen) {
  static const char *const levels[] = {"NCCL INFO", "NCCL WARN", "NCCL TRACE", "NCCL ABORT"};
  *info = NULL;
  if (who) who[0] = '\0';
  char *best = NULL;
  size_t blen = 0;
  for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
    char *m = strstr(line, levels[i]);
    if (m && (best == NULL || m < best)) best = m, blen = strlen(levels[i]);
  }
  if (best == NULL) return;
  size_t mark = (size_t)(best - line);
  size_t start = debug_prefix_start(line, mark, hl);
  if (who) {
    size_t k = 0;
    for (size_t i = start; i < mark && line[i] != ' ' && k + 1 < wholen; i++)
      who[k++] = line[i];
    who[k] = '\0';
  }
  *info = best + blen;
  line[start] = '\0';
}

/* Reads one line into *buf (growing it); strips the line break. Returns -1 at end of file. */
static long read_line(FILE *f, char **buf, size_t *cap) {
  ssize_t n = getline(buf, cap, f);
  if (n < 0) return -1;
  while (n > 0 && ((*buf)[n - 1] == '\n' || (*buf)[n - 1] == '\r'))
    (*buf)[--n] = '\0';
  return (long)n;
}

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

struct text_parser {
  const char *path;
  struct cs_meas_set *set;
  struct cs_error *err;
  long line;
  struct hostlist hosts; /* every host of the file, to split debug prefixes */

  /* run scope: the "### command" line */
  struct settings cmd_settings;
  char cmd_coll[64];
  long cmd_coll_line;

  /* test scope */
  struct settings test_settings;
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

  /* table scope */
  int in_table;
  int table_data; /* the table has had data: the next comment ends it */
  struct table tab;
  char tok[MAX_ROW_TOKENS][TOKEN_MAX];
  int ntok;
  long row_line;

  long n_results; /* data rows read, size 0 included */
};

static void test_reset(struct text_parser *tp) {
  tp->test_settings.n = 0;
  tp->test_coll[0] = '\0';
  tp->test_coll_line = 0;
  tp->n_ranks = 0;
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

/* The collective named by a token such as "./build/all_reduce_perf": the part after the last
 * '/' when it ends in "_perf" (or "_perf_mpi"). Returns 1 when the token is such a name. */
static int perf_name(const char *tok, char *out, size_t len) {
  const char *b = strrchr(tok, '/');
  b = b ? b + 1 : tok;
  const char *suffix = strstr(b, "_perf");
  if (suffix == NULL || suffix == b) return 0;
  if (suffix[5] != '\0' && strcmp(suffix + 5, "_mpi") != 0 && suffix[5] != '.') return 0;
  size_t n = (size_t)(suffix - b) + 5;
  if (n >= len) n = len - 1;
  memcpy(out, b, n);
  out[n] = '\0';
  return 1;
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
  int n = split_ws(text, tok, 256);
  for (int i = 0; i < n; i++) {
    char name[64], value[192];
    if (parse_assignment(tok[i], name, sizeof name, value, sizeof value))
      settings_put(&tp->cmd_settings, name, value);
    else if (tp->cmd_coll[0] == '\0' && perf_name(tok[i], tp->cmd_coll, sizeof tp->cmd_coll))
      tp->cmd_coll_line = tp->line;
  }
  return CS_OK;
}

/* "#  Rank  0 Group  0 Pid   1319 on         vm device  0 [0000:00:06] NVIDIA H200"; older
 * nccl-tests print no Group. */
static enum cs_status on_rank_line(struct text_parser *tp, const char *raw) {
  char buf[1024];
  copy_str(buf, sizeof buf, raw);
  char *tok[32];
  int n = split_ws(buf, tok, 32);
  long rank = -1, pid = -1;
  const char *host = NULL;
  int have_device = 0;
  for (int i = 0; i + 1 < n; i++) {
    if (strcmp(tok[i], "Rank") == 0 && parse_long(tok[i + 1], &rank) != 0) rank = -1;
    if (strcmp(tok[i], "Pid") == 0 && parse_long(tok[i + 1], &pid) != 0) pid = -1;
    if (strcmp(tok[i], "on") == 0 && host == NULL) host = tok[i + 1];
    if (strcmp(tok[i], "device") == 0) have_device = 1;
  }
  if (rank < 0 || pid < 0 || host == NULL || !have_device)
    return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->line, 0,
                       "expected a rank line \"#  Rank N Group G Pid P on HOST device D [BUS] "
                       "NAME\"");
  if (tp->dirty) {
    /* a rank list after a table: an old log without test banners */
    struct settings keep = tp->test_settings;
    char coll[64];
    long coll_line = tp->test_coll_line;
    copy_str(coll, sizeof coll, tp->test_coll);
    test_reset(tp);
    tp->test_settings = keep;
    copy_str(tp->test_coll, sizeof tp->test_coll, coll);
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
  copy_str(r->host, sizeof r->host, host);
  if (hostlist_add(&tp->hosts, host) != 0)
    return cs_error_set(tp->err, CS_ERR_NOMEM, "out of memory reading %s", tp->path);
  tp->last_rank_line = tp->line;
  tp->resolved = 0;

  /* the device name: what follows the bus id "[...]" after "device D" */
  const char *dev = strstr(raw, " device ");
  const char *close = dev ? strchr(dev, ']') : NULL;
  if (close) {
    char name[256];
    copy_str(name, sizeof name, close + 1);
    enum cs_status st = meta_add(tp->set, "gpu", trim(name), tp->err);
    if (st != CS_OK) return st;
  }
  return meta_add(tp->set, "hosts", host, tp->err);
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
    copy_str(c->name, sizeof c->name, tok[i]);
    t->ntokens += c->width;
  }
  t->ngroups = group + 1 > 2 ? 2 : group + 1;
  return t->ntokens <= MAX_ROW_TOKENS;
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
  else if (perf_name(tp->path, from_path, sizeof from_path))
    name = from_path;
  if (name == NULL)
    return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->row_line, 0,
                       "expected the collective's name (a \"# Collective test starting: "
                       "NAME_perf\" or \"### ... NAME_perf\" line) before the data");
  if (cs_coll_parse(name, &tp->coll) != 0)
    return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, name_line, 0,
                       "expected a known collective (%s), got \"%s\"", known_colls, name);
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
      if (strcmp(tp->ranks[j].host, tp->ranks[i].host) != 0) continue;
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
  tp->n_total = (int)n;
  tp->nodes = nodes;
  tp->gpn = (int)n / nodes;
  tp->launch = thread ? CS_LAUNCH_THREAD : CS_LAUNCH_PROCESS;
  tp->resolved = 1;
  return CS_OK;
}

/* Checks a printed bus bandwidth against the recomputed one, where rounding left a figure. */
static int busbw_agrees(double printed, double derived) {
  if (printed <= 0) return 1;
  return fabs(printed - derived) <= 0.006 + 0.005 * printed;
}

static enum cs_status emit_row(struct text_parser *tp) {
  const struct table *t = &tp->tab;
  const char *f[MAX_COLS];
  const char *size_s = NULL, *type_s = NULL;
  const char *time_s[2] = {NULL, NULL}, *busbw_s[2] = {NULL, NULL}, *imin_s[2] = {NULL, NULL},
             *imax_s[2] = {NULL, NULL};
  int k = 0;
  for (int c = 0; c < t->ncols; c++) {
    f[c] = tp->tok[k];
    k += t->col[c].width;
  }
  tp->n_results++;
  for (int c = 0; c < t->ncols; c++) {
    const struct column *col = &t->col[c];
    const char *v = f[c];
    int g = col->group;
    double d;
    long l;
    const char *where = g == 0 ? ", out-of-place" : g == 1 ? ", in-place" : "";
    switch (col->kind) {
    case COL_SIZE:
      if (parse_size(v, &d) != 0)
        return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->row_line, 0,
                           "expected a message size in bytes (column \"size\"), got \"%s\"", v);
      size_s = v;
      break;
    case COL_COUNT:
      if (parse_size(v, &d) != 0)
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
      if (col->kind == COL_TYPE) type_s = v;
      break;
    case COL_ROOT:
      if (parse_long(v, &l) != 0)
        return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->row_line, 0,
                           "expected a root rank (column \"root\"), got \"%s\"", v);
      break;
    case COL_TIME:
      if (parse_double(v, &d) != 0 || !isfinite(d) || d <= 0)
        return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->row_line, 0,
                           "expected a positive time in us (column \"%s\"%s), got \"%s\"",
                           col->name, where, v);
      time_s[g] = v;
      break;
    case COL_ALGBW:
    case COL_BUSBW:
    case COL_IMIN:
    case COL_IMAX:
      if (parse_double(v, &d) != 0 || !isfinite(d) || d < 0)
        return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->row_line, 0,
                           "expected a non-negative number (column \"%s\"%s), got \"%s\"",
                           col->name, where, v);
      if (g >= 0 && g < 2) {
        if (col->kind == COL_BUSBW) busbw_s[g] = v;
        if (col->kind == COL_IMIN) imin_s[g] = v;
        if (col->kind == COL_IMAX) imax_s[g] = v;
      }
      break;
    case COL_WRONG:
      if (strcmp(v, "N/A") != 0 && (parse_double(v, &d) != 0 || !(d >= 0)))
        return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->row_line, 0,
                           "expected a count of wrong elements or N/A (column \"%s\"%s), got "
                           "\"%s\"",
                           col->name, where, v);
      break;
    case COL_TIMESTAMP:
    case COL_OTHER:
      break;
    }
  }
  if (size_s == NULL || time_s[0] == NULL)
    return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->row_line, 0,
                       "expected \"size\" and \"time\" columns in the table header");
  double bytes = 0;
  parse_size(size_s, &bytes);
  if (bytes == 0) return CS_OK;

  enum cs_status st = resolve_test(tp);
  if (st != CS_OK) return st;
  struct settings eff = tp->cmd_settings;
  for (int i = 0; i < tp->test_settings.n; i++)
    settings_put(&eff, tp->test_settings.s[i].name, tp->test_settings.s[i].value);

  struct cs_meas_row row;
  memset(&row, 0, sizeof row);
  row.coll = tp->coll;
  if (settings_apply(&eff, &row.algo, &row.proto, row.config, sizeof row.config) != 0)
    return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->row_line, 0,
                       "expected NCCL_* settings that fit in %zu characters", sizeof row.config);
  copy_str(row.dtype, sizeof row.dtype, type_s ? type_s : "");
  row.ranks = tp->n_total;
  row.nodes = tp->nodes;
  row.gpus_per_node = tp->gpn;
  row.bytes = bytes;
  row.launch = tp->launch;
  snprintf(row.source, sizeof row.source, "%s:%ld", tp->path, tp->row_line);
  for (int g = 0; g < t->ngroups; g++) {
    if (time_s[g] == NULL) continue;
    parse_double(time_s[g], &row.time_us);
    row.time_min_us = row.time_max_us = NAN;
    if (imin_s[g]) parse_double(imin_s[g], &row.time_min_us);
    if (imax_s[g]) parse_double(imax_s[g], &row.time_max_us);
    row.trials = 0;
    row.in_place = g;
    cs_meas_row_derive(&row);
    double printed;
    if (busbw_s[g] && parse_double(busbw_s[g], &printed) == 0 &&
        !busbw_agrees(printed, row.busbw_GBps))
      return cs_error_at(tp->err, CS_ERR_PARSE, tp->path, tp->row_line, 0,
                         "expected busbw %.2f GB/s (size / time x the %s factor for %d ranks), "
                         "got %s: the rank list does not match the run",
                         row.busbw_GBps, cs_coll_name(row.coll), row.ranks, busbw_s[g]);
    st = cs_meas_set_push(tp->set, &row, tp->err);
    if (st != CS_OK) return st;
  }
  return CS_OK;
}

/* Adds the tokens of one data fragment to the pending row, emitting rows as they complete. */
static enum cs_status on_data(struct text_parser *tp, char *text) {
  char *tok[MAX_ROW_TOKENS * 2];
  int n = split_ws(text, tok, MAX_ROW_TOKENS * 2);
  /* a whole row on one line while another waits for fields: that one was cut short */
  if (tp->ntok > 0 && n == tp->tab.ntokens) return truncated_row(tp);
  for (int i = 0; i < n; i++) {
    if (tp->ntok == 0) tp->row_line = tp->line;
    tp->table_data = 1;
    copy_str(tp->tok[tp->ntok++], TOKEN_MAX, tok[i]);
    if (tp->ntok == tp->tab.ntokens) {
      enum cs_status st = emit_row(tp);
      tp->ntok = 0;
      if (st != CS_OK) return st;
    }
  }
  return CS_OK;
}

/* NCCL's own output: its version, and the settings it read from the environment. */
static enum cs_status on_info(struct text_parser *tp, char *info) {
  char *s = trim(info);
  if (strncmp(s, "NCCL version ", 13) == 0) {
    char v[64];
    copy_str(v, sizeof v, s + 13);
    v[strcspn(v, "+ ")] = '\0';
    if (cs_meas_get_meta(tp->set, "nccl") == NULL) return meta_add(tp->set, "nccl", v, tp->err);
    return CS_OK;
  }
  const char *marker = strstr(s, " set by environment to ");
  if (strncmp(s, "NCCL_", 5) == 0 && marker) {
    char name[64], value[192];
    size_t len = (size_t)(marker - s);
    if (len >= sizeof name) return CS_OK;
    memcpy(name, s, len);
    name[len] = '\0';
    copy_str(value, sizeof value, marker + strlen(" set by environment to "));
    size_t vl = strlen(value);
    if (vl > 0 && value[vl - 1] == '.') value[vl - 1] = '\0';
    settings_put(&tp->test_settings, name, trim(value));
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
  copy_str(raw, sizeof raw, text);
  char *body = text + 1;
  char *tok[MAX_COLS + 8];
  int n = split_ws(body, tok, MAX_COLS + 8);
  if (n == 0) return CS_OK;
  if (n >= 3 && strcmp(tok[0], "nccl-tests") == 0 && strcmp(tok[1], "version") == 0) {
    test_reset(tp);
    for (int i = 2; i < n; i++)
      if (strncmp(tok[i], "nccl-library=", 13) == 0) {
        long code;
        if (parse_long(tok[i] + 13, &code) == 0 && code > 0) {
          char v[32];
          nccl_version_string(code, v, sizeof v);
          st = meta_add(tp->set, "nccl", v, tp->err);
          if (st != CS_OK) return st;
        }
      }
    return CS_OK;
  }
  if (n >= 4 && strcmp(tok[0], "Collective") == 0 && strcmp(tok[1], "test") == 0 &&
      strcmp(tok[2], "starting:") == 0) {
    if (tp->dirty) test_reset(tp);
    copy_str(tp->test_coll, sizeof tp->test_coll, tok[3]);
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
    for (int i = 0; i < n; i++) {
      char name[64], value[192];
      if (parse_assignment(tok[i], name, sizeof name, value, sizeof value))
        settings_put(&tp->test_settings, name, value);
    }
    tp->resolved = 0;
  }
  return CS_OK;
}

static enum cs_status import_text(const char *path, FILE *f, struct cs_meas_set *set,
                                  struct cs_error *err) {
  struct text_parser *tp = calloc(1, sizeof *tp);
  if (tp == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory reading %s", path);
  tp->path = path;
  tp->set = set;
  tp->err = err;
  run_reset(tp);
  char *buf = NULL;
  size_t cap = 0;
  enum cs_status st = CS_OK;
  while (st == CS_OK && read_line(f, &buf, &cap) >= 0) {
    tp->line++;
    char *s = buf;
    if (strip_launcher_tag(&s) != 0) continue; /* rank 0 prints the tables */
    char *info;
    split_debug(s, &tp->hosts, &info, NULL, 0);
    if (info) st = on_info(tp, info);
    if (st != CS_OK) break;
    char *text = trim(s);
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
  /* getline() fails without setting the error flag when memory runs out: not at the end is an
   * error too, never a silently shortened log */
  if (st == CS_OK && (ferror(f) || !feof(f)))
    st = cs_error_at(err, CS_ERR_IO, path, tp->line, 0, "read error: %s", strerror(errno));
  if (st == CS_OK) st = end_table(tp);
  if (st == CS_OK && tp->n_results == 0)
    st = cs_error_at(err, CS_ERR_PARSE, path, 0, 0,
                     "expected nccl-tests results (a \"#  size count type ...\" table with "
                     "data rows, or -J JSON), found none");
  free(buf);
  free(tp->ranks);
  free(tp->hosts.h);
  free(tp);
  return st;
}

/* ---------------------------------------------------------------------------------------------
 * JSON
 */

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jval {
  enum jtype type;
  double num;
  int boolean;
  char *str;
  struct jval *kids; /* array elements or object values */
  char **keys;       /* object keys, parallel to kids */
  size_t n, cap;
  long line, col;
};

struct jparser {
  const char *path;
  const char *s, *p;
  long line;
  const char *line_start;
  struct cs_error *err;
};

static void jfree(struct jval *v) {
  if (v == NULL) return;
  free(v->str);
  for (size_t i = 0; i < v->n; i++) {
    jfree(&v->kids[i]);
    if (v->keys) free(v->keys[i]);
  }
  free(v->kids);
  free(v->keys);
  memset(v, 0, sizeof *v);
}

static long jcol(const struct jparser *jp) {
  return (long)(jp->p - jp->line_start) + 1;
}

static enum cs_status jerr(struct jparser *jp, const char *what) {
  return cs_error_at(jp->err, CS_ERR_PARSE, jp->path, jp->line, jcol(jp), "expected %s", what);
}

static void jskip(struct jparser *jp) {
  while (*jp->p == ' ' || *jp->p == '\t' || *jp->p == '\r' || *jp->p == '\n') {
    if (*jp->p == '\n') jp->line++, jp->line_start = jp->p + 1;
    jp->p++;
  }
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static enum cs_status jstring(struct jparser *jp, char **out) {
  jp->p++; /* opening quote */
  size_t cap = 32, n = 0;
  char *b = malloc(cap);
  if (b == NULL) return cs_error_set(jp->err, CS_ERR_NOMEM, "out of memory reading %s", jp->path);
  for (;;) {
    char c = *jp->p;
    if (c == '\0' || c == '\n') {
      free(b);
      return jerr(jp, "a closing '\"'");
    }
    if (n + 5 >= cap) {
      char *nb = realloc(b, cap *= 2);
      if (nb == NULL) {
        free(b);
        return cs_error_set(jp->err, CS_ERR_NOMEM, "out of memory reading %s", jp->path);
      }
      b = nb;
    }
    jp->p++;
    if (c == '"') break;
    if (c != '\\') {
      b[n++] = c;
      continue;
    }
    char e = *jp->p++;
    switch (e) {
    case '"':
    case '\\':
    case '/':
      b[n++] = e;
      break;
    case 'b':
      b[n++] = '\b';
      break;
    case 'f':
      b[n++] = '\f';
      break;
    case 'n':
      b[n++] = '\n';
      break;
    case 'r':
      b[n++] = '\r';
      break;
    case 't':
      b[n++] = '\t';
      break;
    case 'u': {
      unsigned u = 0;
      for (int i = 0; i < 4; i++) {
        int h = hexval(jp->p[i]);
        if (h < 0) {
          free(b);
          return jerr(jp, "four hex digits after \\u");
        }
        u = u * 16 + (unsigned)h;
      }
      jp->p += 4;
      if (u < 0x80)
        b[n++] = (char)u;
      else if (u < 0x800)
        b[n++] = (char)(0xC0 | (u >> 6)), b[n++] = (char)(0x80 | (u & 0x3F));
      else
        b[n++] = (char)(0xE0 | (u >> 12)), b[n++] = (char)(0x80 | ((u >> 6) & 0x3F)),
        b[n++] = (char)(0x80 | (u & 0x3F));
      break;
    }
    default:
      jp->p--;
      free(b);
      return jerr(jp, "a valid escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
    }
  }
  b[n] = '\0';
  *out = b;
  return CS_OK;
}

static enum cs_status jvalue(struct jparser *jp, struct jval *v, int depth);

static enum cs_status jpush(struct jparser *jp, struct jval *v, char *key, struct jval *kid) {
  if (v->n == v->cap) {
    size_t nc = v->cap ? v->cap * 2 : 8;
    struct jval *k = realloc(v->kids, nc * sizeof *k);
    if (k == NULL) goto nomem;
    v->kids = k;
    if (v->type == J_OBJ) {
      char **ks = realloc(v->keys, nc * sizeof *ks);
      if (ks == NULL) goto nomem;
      v->keys = ks;
    }
    v->cap = nc;
  }
  v->kids[v->n] = *kid;
  if (v->type == J_OBJ) v->keys[v->n] = key;
  v->n++;
  return CS_OK;
nomem:
  free(key);
  jfree(kid);
  return cs_error_set(jp->err, CS_ERR_NOMEM, "out of memory reading %s", jp->path);
}

static enum cs_status jcontainer(struct jparser *jp, struct jval *v, int depth) {
  int obj = *jp->p == '{';
  char close = obj ? '}' : ']';
  v->type = obj ? J_OBJ : J_ARR;
  jp->p++;
  jskip(jp);
  if (*jp->p == close) {
    jp->p++;
    return CS_OK;
  }
  for (;;) {
    char *key = NULL;
    enum cs_status st;
    if (obj) {
      jskip(jp);
      if (*jp->p != '"') return jerr(jp, "an object key in double quotes");
      st = jstring(jp, &key);
      if (st != CS_OK) return st;
      jskip(jp);
      if (*jp->p != ':') {
        free(key);
        return jerr(jp, "':' after an object key");
      }
      jp->p++;
    }
    struct jval kid;
    memset(&kid, 0, sizeof kid);
    st = jvalue(jp, &kid, depth + 1);
    if (st != CS_OK) {
      free(key);
      jfree(&kid);
      return st;
    }
    st = jpush(jp, v, key, &kid);
    if (st != CS_OK) return st;
    jskip(jp);
    if (*jp->p == ',') {
      jp->p++;
      continue;
    }
    if (*jp->p == close) {
      jp->p++;
      return CS_OK;
    }
    return jerr(jp, obj ? "',' or '}'" : "',' or ']'");
  }
}

static enum cs_status jvalue(struct jparser *jp, struct jval *v, int depth) {
  jskip(jp);
  v->line = jp->line;
  v->col = jcol(jp);
  if (depth > JSON_MAX_DEPTH) return jerr(jp, "JSON nested at most 64 levels deep");
  char c = *jp->p;
  if (c == '{' || c == '[') return jcontainer(jp, v, depth);
  if (c == '"') {
    v->type = J_STR;
    return jstring(jp, &v->str);
  }
  static const struct {
    const char *word;
    enum jtype type;
    int boolean;
  } words[] = {{"true", J_BOOL, 1}, {"false", J_BOOL, 0}, {"null", J_NULL, 0}};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
    size_t len = strlen(words[i].word);
    if (strncmp(jp->p, words[i].word, len) == 0) {
      v->type = words[i].type;
      v->boolean = words[i].boolean;
      jp->p += len;
      return CS_OK;
    }
  }
  if (c == '-' || isdigit((unsigned char)c)) {
    char *end;
    v->num = strtod(jp->p, &end);
    if (end == jp->p) return jerr(jp, "a number");
    v->type = J_NUM;
    jp->p = end;
    return CS_OK;
  }
  return jerr(jp, "a JSON value");
}

static const struct jval *jget(const struct jval *obj, const char *key) {
  if (obj == NULL || obj->type != J_OBJ) return NULL;
  for (size_t i = 0; i < obj->n; i++)
    if (strcmp(obj->keys[i], key) == 0) return &obj->kids[i];
  return NULL;
}

/* A number, or a string holding one (nccl-tests writes NaN as "nan"). */
static int jnum(const struct jval *v, double *out) {
  if (v == NULL) return -1;
  if (v->type == J_NUM) return *out = v->num, 0;
  if (v->type == J_STR) return parse_double(v->str, out);
  return -1;
}

static enum cs_status jat(const char *path, const struct jval *v, const struct jval *root,
                          struct cs_error *err, const char *what) {
  const struct jval *w = v ? v : root;
  return cs_error_at(err, CS_ERR_PARSE, path, w->line, w->col, "expected %s", what);
}

static enum cs_status import_json_tree(const char *path, const struct jval *root,
                                       struct cs_meas_set *set, struct cs_error *err) {
  if (root->type != J_OBJ)
    return jat(path, root, root, err, "a JSON object (nccl-tests -J output)");
  const struct jval *results = jget(root, "results");
  if (results == NULL || results->type != J_ARR)
    return jat(path, results, root, err, "a \"results\" list (nccl-tests -J output)");
  enum cs_status st;

  /* collective from the program name in "args" */
  const struct jval *args = jget(root, "args");
  char cname[64] = "";
  const struct jval *cnode = args;
  if (args && args->type == J_ARR)
    for (size_t i = 0; i < args->n && cname[0] == '\0'; i++)
      if (args->kids[i].type == J_STR && perf_name(args->kids[i].str, cname, sizeof cname))
        cnode = &args->kids[i];
  if (cname[0] == '\0' && !perf_name(path, cname, sizeof cname))
    return jat(path, args, root, err,
               "the program name (\"args\": [\"./NAME_perf\", ...]) naming the collective");
  enum cs_coll coll;
  if (cs_coll_parse(cname, &coll) != 0) {
    const struct jval *w = cnode ? cnode : root;
    return cs_error_at(err, CS_ERR_PARSE, path, w->line, w->col,
                       "expected a known collective (%s), got \"%s\"", known_colls, cname);
  }

  /* NCCL_* settings from "env" */
  struct settings eff;
  eff.n = 0;
  const struct jval *env = jget(root, "env");
  if (env && env->type == J_ARR)
    for (size_t i = 0; i < env->n; i++) {
      char name[64], value[192];
      if (env->kids[i].type == J_STR && strncmp(env->kids[i].str, "NCCL_", 5) == 0 &&
          parse_assignment(env->kids[i].str, name, sizeof name, value, sizeof value))
        settings_put(&eff, name, value);
    }

  double code;
  if (jnum(jget(root, "nccl_version"), &code) == 0 && code > 0 && code < 1e9) {
    char v[32];
    nccl_version_string((long)code, v, sizeof v);
    if ((st = meta_add(set, "nccl", v, err)) != CS_OK) return st;
  }

  /* shape: one "devices" entry per process, each driving nthreads x ngpus ranks */
  const struct jval *config = jget(root, "config");
  const struct jval *devices = jget(config, "devices");
  if (devices == NULL || devices->type != J_ARR || devices->n == 0)
    return jat(path, devices ? devices : config, root, err,
               "\"config\": {\"devices\": [...]} listing the processes");
  double nthreads = 1, ngpus = 1;
  if (jnum(jget(config, "nthreads"), &nthreads) != 0 || nthreads < 1 || nthreads > 1024 ||
      jnum(jget(config, "ngpus"), &ngpus) != 0 || ngpus < 1 || ngpus > 1024)
    return jat(path, config, root, err, "\"nthreads\" and \"ngpus\" from 1 to 1024 in \"config\"");
  int per_proc = (int)nthreads * (int)ngpus;
  int nodes = 0, per_host = -1;
  for (size_t i = 0; i < devices->n; i++) {
    const struct jval *h = jget(&devices->kids[i], "hostname");
    if (h == NULL || h->type != J_STR)
      return jat(path, &devices->kids[i], root, err, "a \"hostname\" in each device entry");
    const struct jval *info = jget(&devices->kids[i], "device_info");
    if (info && info->type == J_STR && (st = meta_add(set, "gpu", info->str, err)) != CS_OK)
      return st;
    if ((st = meta_add(set, "hosts", h->str, err)) != CS_OK) return st;
    int first = 1, count = 0;
    for (size_t j = 0; j < devices->n; j++) {
      const struct jval *hj = jget(&devices->kids[j], "hostname");
      if (hj == NULL || hj->type != J_STR || strcmp(hj->str, h->str) != 0) continue;
      if (j < i) first = 0;
      count++;
    }
    if (!first) continue;
    nodes++;
    if (per_host < 0)
      per_host = count;
    else if (count != per_host)
      return jat(path, &devices->kids[i], root, err, "the same number of processes on every host");
  }
  if ((double)per_proc * (double)devices->n > (double)(1 << 24))
    return jat(path, devices, root, err, "at most 2^24 ranks in \"devices\"");
  int ranks = per_proc * (int)devices->n;

  struct cs_meas_row row;
  memset(&row, 0, sizeof row);
  row.coll = coll;
  if (settings_apply(&eff, &row.algo, &row.proto, row.config, sizeof row.config) != 0)
    return jat(path, env, root, err, "NCCL_* settings that fit in 255 characters");
  row.ranks = ranks;
  row.nodes = nodes;
  row.gpus_per_node = ranks / nodes;
  row.launch = per_proc > 1 ? CS_LAUNCH_THREAD : CS_LAUNCH_PROCESS;

  static const char *const groups[2] = {"out_of_place", "in_place"};
  for (size_t i = 0; i < results->n; i++) {
    const struct jval *r = &results->kids[i];
    if (r->type != J_OBJ) return jat(path, r, root, err, "a result object");
    if (jnum(jget(r, "size"), &row.bytes) != 0 || !(row.bytes >= 0) || row.bytes > 0x1p50 ||
        row.bytes != floor(row.bytes))
      return jat(path, jget(r, "size"), r, err, "\"size\": a whole number of bytes");
    const struct jval *type = jget(r, "type");
    copy_str(row.dtype, sizeof row.dtype, type && type->type == J_STR ? type->str : "");
    if (row.bytes == 0) continue;
    snprintf(row.source, sizeof row.source, "%s:%ld:%ld", path, r->line, r->col);
    for (int g = 0; g < 2; g++) {
      const struct jval *body = jget(r, groups[g]);
      if (body == NULL || body->type == J_NULL) continue;
      const struct jval *tv = jget(body, "time");
      if (tv == NULL) tv = jget(body, "cpu_time");
      if (jnum(tv, &row.time_us) != 0 || !isfinite(row.time_us) || row.time_us <= 0)
        return jat(path, tv ? tv : body, root, err, "a positive finite \"time\" in us");
      char key[32];
      snprintf(key, sizeof key, "%s_per_iter", groups[g]);
      const struct jval *pi = jget(r, key);
      row.time_min_us = row.time_max_us = NAN;
      if (jnum(jget(pi, "min_us"), &row.time_min_us) != 0) row.time_min_us = NAN;
      if (jnum(jget(pi, "max_us"), &row.time_max_us) != 0) row.time_max_us = NAN;
      row.in_place = g;
      cs_meas_row_derive(&row);
      double printed;
      if (jnum(jget(body, "bus_bw"), &printed) == 0 && isfinite(printed) &&
          !busbw_agrees(printed, row.busbw_GBps))
        return jat(path, jget(body, "bus_bw"), root, err,
                   "\"bus_bw\" to agree with size, time and the rank count of \"config\"");
      if ((st = cs_meas_set_push(set, &row, err)) != CS_OK) return st;
    }
  }
  if (results->n == 0) return jat(path, results, root, err, "at least one entry in \"results\"");
  return CS_OK;
}

static enum cs_status import_json(const char *path, FILE *f, struct cs_meas_set *set,
                                  struct cs_error *err) {
  size_t cap = 1 << 16, n = 0;
  char *text = malloc(cap);
  if (text == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory reading %s", path);
  size_t got;
  while ((got = fread(text + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    if (n + 1 == cap) {
      char *nt = realloc(text, cap *= 2);
      if (nt == NULL) {
        free(text);
        return cs_error_set(err, CS_ERR_NOMEM, "out of memory reading %s", path);
      }
      text = nt;
    }
  }
  if (ferror(f)) {
    free(text);
    return cs_error_at(err, CS_ERR_IO, path, 0, 0, "read error: %s", strerror(errno));
  }
  text[n] = '\0';
  if (strlen(text) != n) {
    free(text);
    return cs_error_at(err, CS_ERR_PARSE, path, 0, 0, "expected text, found a NUL byte");
  }
  struct jparser jp = {path, text, text, 1, text, err};
  struct jval root;
  memset(&root, 0, sizeof root);
  enum cs_status st = jvalue(&jp, &root, 0);
  if (st == CS_OK) {
    jskip(&jp);
    if (*jp.p != '\0') st = jerr(&jp, "the end of the JSON document");
  }
  if (st == CS_OK) st = import_json_tree(path, &root, set, err);
  jfree(&root);
  free(text);
  return st;
}

/* ---------------------------------------------------------------------------------------------
 * Entry point
 */

enum cs_status cs_nccltests_import(const char *path, struct cs_meas_set *set,
                                   struct cs_error *err) {
  FILE *f = fopen(path, "r");
  if (f == NULL) return cs_error_at(err, CS_ERR_IO, path, 0, 0, "cannot open: %s", strerror(errno));
  int c;
  while ((c = getc(f)) != EOF && isspace(c)) {
  }
  rewind(f);
  enum cs_status st = c == '{' ? import_json(path, f, set, err) : import_text(path, f, set, err);
  fclose(f);
  return st;
}

/* ---------------------------------------------------------------------------------------------
 * NCCL's tuning table
 */

/* Our algorithm for one of NCCL's names; -1 for those not kept (CollNetChain, NVLSTree) or
 * unknown. NCCL before 2.19 printed indexes in its choice lines, hence the numbers. */
static int nccl_algo(const char *name, enum cs_algo *a) {
  static const char *const by_index[] = {
      "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
  long idx;
  if (parse_long(name, &idx) == 0) {
    if (idx < 0 || idx >= (long)(sizeof by_index / sizeof by_index[0])) return -1;
    name = by_index[idx];
  }
  if (strcasecmp(name, "CollNetChain") == 0 || strcasecmp(name, "NVLSTree") == 0) return -1;
  return cs_algo_parse(name, a);
}

static int nccl_proto(const char *name, enum cs_proto *p) {
  static const char *const by_index[] = {"LL", "LL128", "Simple"};
  long idx;
  if (parse_long(name, &idx) == 0) {
    if (idx < 0 || idx > 2) return -1;
    name = by_index[idx];
  }
  if (strcasecmp(name, "auto") == 0) return -1;
  return cs_proto_parse(name, p);
}

/* Splits a table line "  Label   | a | b |" into its label and its cells' text (after the first
 * '|'). Returns 0 when the line has no '|'. */
static int table_label(char *s, char **label, char **rest) {
  char *bar = strchr(s, '|');
  if (bar == NULL) return 0;
  *bar = '\0';
  *label = trim(s);
  *rest = bar + 1;
  return 1;
}

/* Names of the header cells "| Tree | Ring |" in order. */
static int header_names(char *rest, char names[][32], int max) {
  int n = 0;
  for (char *p = rest; *p; p++)
    if (*p == '|') *p = ' ';
  char *tok[64];
  int k = split_ws(rest, tok, 64);
  for (int i = 0; i < k && n < max; i++)
    copy_str(names[n++], 32, tok[i]);
  return n;
}

enum cs_status cs_nccltests_read_tuning(const char *path, struct cs_nccl_tuning *t,
                                        struct cs_error *err) {
  memset(t, 0, sizeof *t);
  FILE *f = fopen(path, "r");
  if (f == NULL) return cs_error_at(err, CS_ERR_IO, path, 0, 0, "cannot open: %s", strerror(errno));
  struct hostlist hl = {NULL, 0, 0};
  char *buf = NULL;
  size_t cap = 0;
  long line = 0;
  int state = 0; /* 0 before the table, 1 inside, 2 after */
  char table_who[128] = "";
  char algos[16][32], protos[32][32];
  int nalgos = 0, nprotos = 0;
  enum cs_status st = CS_OK;
  while (read_line(f, &buf, &cap) >= 0) {
    line++;
    char *s = buf;
    if (strip_launcher_tag(&s) != 0) continue;
    char *info;
    char who[128];
    split_debug(s, &hl, &info, who, sizeof who);
    /* rank lines teach the host names that split "-1vm:3219:3219 [0] NCCL INFO" */
    char *text = trim(s);
    if (text[0] == '#') {
      char tmp[512];
      copy_str(tmp, sizeof tmp, text + 1);
      char *tok[32];
      int n = split_ws(tmp, tok, 32);
      for (int i = 0; i + 1 < n && st == CS_OK; i++)
        if (strcmp(tok[0], "Rank") == 0 && strcmp(tok[i], "on") == 0 &&
            hostlist_add(&hl, tok[i + 1]) != 0)
          st = cs_error_set(err, CS_ERR_NOMEM, "out of memory reading %s", path);
      if (st != CS_OK) break;
    }
    if (info == NULL) continue;
    char *msg = trim(info);

    /* "AllReduce: 8 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}" */
    char cname[32], aname[32], pname[32];
    double bytes;
    if (sscanf(msg, "%31[A-Za-z]: %lf Bytes -> Algo %31s proto %31s", cname, &bytes, aname,
               pname) == 4) {
      enum cs_coll c;
      enum cs_algo a;
      enum cs_proto p;
      if (cs_coll_parse(cname, &c) == 0 && nccl_algo(aname, &a) == 0 &&
          nccl_proto(pname, &p) == 0) {
        int seen = 0;
        for (int i = 0; i < t->n_choices; i++)
          if (t->choice[i].coll == c && t->choice[i].bytes == bytes) seen = 1;
        if (!seen && t->n_choices < CS_NCCL_TUNING_MAX_CHOICES) {
          t->choice[t->n_choices].coll = c;
          t->choice[t->n_choices].bytes = bytes;
          t->choice[t->n_choices].algo = a;
          t->choice[t->n_choices].proto = p;
          t->n_choices++;
        }
      }
      continue;
    }
    if (state == 2) continue;
    if (state == 1 && strcmp(who, table_who) != 0) continue; /* another rank's copy */
    char *label, *rest;
    if (!table_label(msg, &label, &rest)) {
      if (state == 1) state = 2;
      continue;
    }
    if (strcmp(label, "Algorithm") == 0) {
      if (state == 0) copy_str(table_who, sizeof table_who, who), state = 1;
      nalgos = header_names(rest, algos, 16);
      continue;
    }
    if (state != 1) continue;
    if (strcmp(label, "Protocol") == 0) {
      nprotos = header_names(rest, protos, 32);
      continue;
    }
    enum cs_coll c;
    if (cs_coll_parse(label, &c) != 0) continue; /* "Max NThreads" and the like */
    /* cells "lat/ bw", one per (algorithm, protocol), three protocols per algorithm */
    for (char *p = rest; *p; p++)
      if (*p == '|') *p = ' ';
    char *p = rest;
    for (int k = 0;; k++) {
      char *end;
      double lat = strtod(p, &end);
      if (end == p) break;
      p = end;
      while (*p == ' ')
        p++;
      if (*p != '/') break;
      p++;
      double bw = strtod(p, &end);
      if (end == p) break;
      p = end;
      if (k / 3 >= nalgos || nprotos == 0) continue;
      enum cs_algo a;
      enum cs_proto pr;
      if (nccl_algo(algos[k / 3], &a) != 0 || a >= CS_ALGO_COUNT) continue;
      if (nccl_proto(protos[k < nprotos ? k : k % 3], &pr) != 0 || pr >= CS_PROTO_COUNT) continue;
      t->lat_us[c][a][pr] = lat;
      t->bw_GBps[c][a][pr] = bw;
      t->present[c] = 1;
    }
  }
  if (st == CS_OK && (ferror(f) || !feof(f)))
    st = cs_error_at(err, CS_ERR_IO, path, line, 0, "read error: %s", strerror(errno));
  int any = 0;
  for (int c = 0; c < CS_COLL_COUNT; c++)
    any |= t->present[c];
  if (st == CS_OK && !any)
    st = cs_error_at(err, CS_ERR_PARSE, path, 0, 0,
                     "expected NCCL's tuning table (run with NCCL_DEBUG=INFO "
                     "NCCL_DEBUG_SUBSYS=TUNING), found none");
  free(buf);
  free(hl.h);
  fclose(f);
  return st;
}

double cs_nccltests_tuning_time_us(const struct cs_nccl_tuning *t, enum cs_coll coll, double bytes,
                                   enum cs_algo *a, enum cs_proto *p) {
  if (t == NULL || coll < 0 || coll >= CS_COLL_COUNT || !t->present[coll]) return -1.0;
  for (int i = 0; i < t->n_choices; i++) {
    if (t->choice[i].coll != coll || t->choice[i].bytes != bytes) continue;
    enum cs_algo ca = t->choice[i].algo;
    enum cs_proto cp = t->choice[i].proto;
    if (ca < CS_ALGO_COUNT && cp < CS_PROTO_COUNT && t->bw_GBps[coll][ca][cp] > 0) {
      if (a) *a = ca;
      if (p) *p = cp;
      return t->lat_us[coll][ca][cp] + bytes / (1000.0 * t->bw_GBps[coll][ca][cp]);
    }
  }
  double best = -1.0;
  for (int ai = 0; ai < CS_ALGO_COUNT; ai++)
    for (int pi = 0; pi < CS_PROTO_COUNT; pi++) {
      double bw = t->bw_GBps[coll][ai][pi];
      if (!(bw > 0)) continue;
      double time = t->lat_us[coll][ai][pi] + bytes / (1000.0 * bw);
      if (best < 0 || time < best) {
        best = time;
        if (a) *a = (enum cs_algo)ai;
        if (p) *p = (enum cs_proto)pi;
      }
    }
  return best;
}
