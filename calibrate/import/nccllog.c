/* nccllog.c — the log-reading pieces shared by the nccl-tests importers and the tuning reader; see
 * nccllog.h.
 *
 * Text logs are read line by line through one normaliser that (1) drops the "[1,0]<stdout>:" tag
 * of mpirun --tag-output (and the "0: " label of srun --label), and (2) splits off NCCL's debug
 * output "HOST:PID:TID [DEV] NCCL INFO ..." wherever it starts, even in the middle of a data row.
 */
#include "nccllog.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char cs_nccllog_known_colls[] =
    "all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv";

/* ---------------------------------------------------------------------------------------------
 * Small string helpers
 */

void cs_nccllog_copy(char *dst, size_t len, const char *src) {
  snprintf(dst, len, "%s", src ? src : "");
}

char *cs_nccllog_trim(char *s) {
  while (isspace((unsigned char)*s))
    s++;
  size_t n = strlen(s);
  while (n > 0 && isspace((unsigned char)s[n - 1]))
    s[--n] = '\0';
  return s;
}

/* Splits s in place at whitespace into at most max tokens; returns the count. */
/* Splits s in place at white space into at most max tokens; with quotes, white space inside
 * '...' or "..." does not split. Returns the count. */
static int split(char *s, char **tok, int max, int quotes) {
  int n = 0;
  char *p = s;
  while (*p) {
    while (isspace((unsigned char)*p))
      p++;
    if (*p == '\0') break;
    if (n == max) break;
    tok[n++] = p;
    char quote = 0;
    while (*p && (quote || !isspace((unsigned char)*p))) {
      if (quote && *p == quote)
        quote = 0;
      else if (quotes && !quote && (*p == '"' || *p == '\''))
        quote = *p;
      p++;
    }
    if (*p) *p++ = '\0';
  }
  return n;
}

int cs_nccllog_split_ws(char *s, char **tok, int max) {
  return split(s, tok, max, 0);
}

int cs_nccllog_split_words(char *s, char **tok, int max) {
  return split(s, tok, max, 1);
}

/* Parses a whole token as a double; 0 on success. Accepts "nan"/"inf" (the caller checks). */
int cs_nccllog_double(const char *s, double *out) {
  if (s == NULL || *s == '\0') return -1;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end != '\0') return -1;
  *out = v;
  return 0;
}

/* Parses a whole token as a long integer; 0 on success. */
int cs_nccllog_long(const char *s, long *out) {
  if (s == NULL || *s == '\0') return -1;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (end == s || *end != '\0' || errno == ERANGE) return -1;
  *out = v;
  return 0;
}

/* A message size: a whole, non-negative number of bytes up to 2^50 (what the CSV reader takes). */
int cs_nccllog_size(const char *s, double *out) {
  double v;
  if (cs_nccllog_double(s, &v) != 0 || !isfinite(v) || v < 0 || v != floor(v) || v > 0x1p50)
    return -1;
  *out = v;
  return 0;
}

static int is_host_char(char c) {
  return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
}

/* Adds item to the comma-separated provenance list under key unless it is already there. Items
 * that no longer fit in the value are dropped. */
enum cs_status cs_nccllog_meta_add(struct cs_meas_set *set, const char *key, const char *item,
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

/* NCCL's INIT line "comm 0x.. rank R nRanks N nNodes M ...": its ranks and nodes. */
int cs_nccllog_comm_shape(const char *msg, int *ranks, int *nodes) {
  const char *nr = strncmp(msg, "comm ", 5) == 0 ? strstr(msg, " nRanks ") : NULL;
  int x, y;
  if (!nr || sscanf(nr, " nRanks %d nNodes %d", &x, &y) != 2 || !(x > 0 && y > 0 && y <= x))
    return 0;
  *ranks = x, *nodes = y;
  return 1;
}

/* NCCL's version code (22803 for 2.28.3, 2708 for 2.7.8) as "2.28.3". */
void cs_nccllog_version_string(long code, char *buf, size_t len) {
  if (code >= 10000)
    snprintf(buf, len, "%ld.%ld.%ld", code / 10000, (code / 100) % 100, code % 100);
  else
    snprintf(buf, len, "%ld.%ld.%ld", code / 1000, (code / 100) % 10, code % 100);
}

/* ---------------------------------------------------------------------------------------------
 * NCCL_* settings and what they mean for a row
 */

void cs_nccllog_settings_put(struct cs_nccllog_settings *st, const char *name, const char *value) {
  for (int i = 0; i < st->n; i++)
    if (strcmp(st->s[i].name, name) == 0) {
      cs_nccllog_copy(st->s[i].value, sizeof st->s[i].value, value);
      return;
    }
  if (st->n == CS_NCCLLOG_MAX_SETTINGS) return;
  cs_nccllog_copy(st->s[st->n].name, sizeof st->s[st->n].name, name);
  cs_nccllog_copy(st->s[st->n].value, sizeof st->s[st->n].value, value);
  st->n++;
}

/* Finds an assignment NCCL_NAME=VALUE in one command-line token: at its start, or after '=' or
 * ',' as in "--env=NCCL_X=1" or "--export=ALL,NCCL_X=1". Surrounding quotes are removed. Returns
 * 1 when found. */
int cs_nccllog_assignment(const char *tok, char *name, size_t nlen, char *value, size_t vlen) {
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
  return strcmp(((const struct cs_nccllog_setting *)a)->name,
                ((const struct cs_nccllog_setting *)b)->name);
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
int cs_nccllog_settings_apply(const struct cs_nccllog_settings *st, enum cs_algo *algo,
                              enum cs_proto *proto, char *cfg, size_t cfglen) {
  struct cs_nccllog_setting tmp[CS_NCCLLOG_MAX_SETTINGS];
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
    const struct cs_nccllog_setting *s = &st->s[i];
    if (strncmp(s->name, "NCCL_DEBUG", 10) == 0 &&
        (!verbose || strcmp(s->name, "NCCL_DEBUG_FILE") == 0))
      continue;
    /* which node a process counts as: the rows' nodes column, not a setting of the system */
    if (strcmp(s->name, "NCCL_HOSTID") == 0) continue;
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

/* Adds host unless present. Returns 0, or -1 when out of memory: the list splits debug prefixes
 * glued to data rows, so reading on without it could misread rows. */
int cs_nccllog_hosts_add(struct cs_nccllog_hosts *hl, const char *host) {
  for (size_t i = 0; i < hl->n; i++)
    if (strcmp(hl->h[i], host) == 0) return 0;
  if (hl->n == hl->cap) {
    size_t nc = hl->cap ? hl->cap * 2 : 16;
    char(*p)[64] = realloc(hl->h, nc * sizeof *p);
    if (p == NULL) return -1;
    hl->h = p;
    hl->cap = nc;
  }
  cs_nccllog_copy(hl->h[hl->n++], sizeof hl->h[0], host);
  return 0;
}

/* Strips an mpirun --tag-output prefix "[J,R]<stdout>:" or an srun --label prefix "R: " from
 * *line. Returns the rank it names, or 0 when there is none. */
long cs_nccllog_strip_tag(char **line) {
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
static size_t debug_prefix_start(const char *line, size_t mark, const struct cs_nccllog_hosts *hl) {
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
void cs_nccllog_split_debug(char *line, const struct cs_nccllog_hosts *hl, char **info, char *who,
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

/* The collective named by a token such as "./build/all_reduce_perf": the part after the last
 * '/' when it ends in "_perf" (or "_perf_mpi"). Returns 1 when the token is such a name. */
int cs_nccllog_perf_name(const char *tok, char *out, size_t len) {
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

/* Checks a printed bus bandwidth against the recomputed one, where rounding left a figure. */
int cs_nccllog_busbw_agrees(double printed, double derived) {
  if (printed <= 0) return 1;
  return fabs(printed - derived) <= 0.006 + 0.005 * printed;
}