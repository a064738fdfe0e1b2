/* nccl_tuning.c — reading NCCL's tuning table and per-size choices from its debug log; see
 * nccl_tuning.h. Lines go through the same normaliser as the nccl-tests importer (nccllog.c).
 */
#include "nccl_tuning.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "input.h"
#include "nccllog.h"

/* Our algorithm for one of NCCL's names; -1 for those not kept (CollNetChain, NVLSTree) or
 * unknown. NCCL before 2.19 printed indexes in its choice lines, hence the numbers. */
static int nccl_algo(const char *name, enum cs_algo *a) {
  static const char *const by_index[] = {
      "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
  long idx;
  if (cs_nccllog_long(name, &idx) == 0) {
    if (idx < 0 || idx >= (long)(sizeof by_index / sizeof by_index[0])) return -1;
    name = by_index[idx];
  }
  if (strcasecmp(name, "CollNetChain") == 0 || strcasecmp(name, "NVLSTree") == 0) return -1;
  return cs_algo_parse(name, a);
}

/* The index of our algorithm in NCCL's order (NCCL 2.28.3 src/include/plugin/nccl_tuner.h:26-32,
 * NCCL_ALGO_TREE 0 .. NCCL_ALGO_PAT 6): ties in time go
 * to the lower index, as topoGetAlgoInfo's strict < does. */
static int nccl_order(int a) {
  switch (a) {
  case CS_ALGO_TREE:
    return 0;
  case CS_ALGO_RING:
    return 1;
  case CS_ALGO_COLLNET:
    return 2;
  case CS_ALGO_NVLS:
    return 4;
  case CS_ALGO_PAT:
    return 6;
  default:
    return 7;
  }
}

static int nccl_proto(const char *name, enum cs_proto *p) {
  static const char *const by_index[] = {"LL", "LL128", "Simple"};
  long idx;
  if (cs_nccllog_long(name, &idx) == 0) {
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
  *label = cs_nccllog_trim(s);
  *rest = bar + 1;
  return 1;
}

/* Names of the header cells "| Tree | Ring |" in order. */
static int header_names(char *rest, char names[][32], int max) {
  int n = 0;
  for (char *p = rest; *p; p++)
    if (*p == '|') *p = ' ';
  char *tok[64];
  int k = cs_nccllog_split_ws(rest, tok, 64);
  for (int i = 0; i < k && n < max; i++)
    cs_nccllog_copy(names[n++], 32, tok[i]);
  return n;
}

/* The communicator's ranks, nodes and channels from NCCL's INIT lines, the first seen. */
static void comm_shape(struct cs_nccl_tuning *t, const char *msg) {
  int x;
  if (!t->ranks) cs_nccllog_comm_shape(msg, &t->ranks, &t->nodes);
  if (!t->channels && sscanf(msg, "%d coll channels,", &x) == 1 && x > 0) t->channels = x;
}

enum cs_status cs_nccltests_read_tuning(const char *path, struct cs_nccl_tuning *t,
                                        struct cs_error *err) {
  memset(t, 0, sizeof *t);
  FILE *f = cs_input_open(path, err);
  if (f == NULL) return err ? err->status : CS_ERR_IO;
  struct cs_nccllog_hosts hl = {NULL, 0, 0};
  struct cs_lines in = {.f = f, .path = path};
  long line = 0;
  int state = 0; /* 0 before the table, 1 inside, 2 after */
  char table_who[128] = "";
  char algos[16][32], protos[32][32];
  int nalgos = 0, nprotos = 0;
  enum cs_status st = CS_OK;
  while (cs_lines_next(&in, err) >= 0) {
    line++;
    char *s = in.buf;
    if (cs_nccllog_strip_tag(&s) != 0) continue;
    char *info;
    char who[128];
    cs_nccllog_split_debug(s, &hl, &info, who, sizeof who);
    /* rank lines teach the host names that split "-1vm:3219:3219 [0] NCCL INFO" */
    char *text = cs_nccllog_trim(s);
    if (text[0] == '#') {
      char tmp[512];
      cs_nccllog_copy(tmp, sizeof tmp, text + 1);
      char *tok[32];
      int n = cs_nccllog_split_ws(tmp, tok, 32);
      for (int i = 0; i + 1 < n && st == CS_OK; i++)
        if (strcmp(tok[0], "Rank") == 0 && strcmp(tok[i], "on") == 0 &&
            cs_nccllog_hosts_add(&hl, tok[i + 1]) != 0)
          st = cs_error_set(err, CS_ERR_NOMEM, "out of memory reading %s", path);
      if (st != CS_OK) break;
    }
    if (info == NULL) continue;
    char *msg = cs_nccllog_trim(info);
    comm_shape(t, msg);

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
      if (state == 0) cs_nccllog_copy(table_who, sizeof table_who, who), state = 1;
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
  if (st == CS_OK) st = in.st;
  int any = 0;
  for (int c = 0; c < CS_COLL_COUNT; c++)
    any |= t->present[c];
  if (st == CS_OK && !any)
    st = cs_error_at(err, CS_ERR_PARSE, path, 0, 0,
                     "expected NCCL's tuning table (run with NCCL_DEBUG=INFO "
                     "NCCL_DEBUG_SUBSYS=TUNING), found none");
  free(in.buf);
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

double cs_nccl_tuning_pick(const struct cs_nccl_tuning *t, enum cs_coll coll, double bytes,
                           enum cs_algo algo, enum cs_proto proto, enum cs_algo *a,
                           enum cs_proto *p) {
  if (t == NULL || coll < 0 || coll >= CS_COLL_COUNT || !t->present[coll] || !(bytes >= 0))
    return -1.0;
  double best = -1.0;
  int ba = -1;
  for (int ai = 0; ai < CS_ALGO_COUNT; ai++)
    for (int pi = 0; pi < CS_PROTO_COUNT; pi++) {
      if ((algo != CS_ALGO_AUTO && ai != (int)algo) || (proto != CS_PROTO_AUTO && pi != (int)proto))
        continue;
      double bw = t->bw_GBps[coll][ai][pi];
      if (!(bw > 0)) continue; /* tuning.cc:588: bandwidth 0 = disabled */
      double lat = t->lat_us[coll][ai][pi];
      if (ai == CS_ALGO_TREE && coll == CS_COLL_ALL_REDUCE)
        bw *= cs_nccl_tree_correction((enum cs_proto)pi, bytes);
      if (ai == CS_ALGO_RING && pi == CS_PROTO_SIMPLE && coll == CS_COLL_ALL_REDUCE &&
          t->nodes > 1 && t->channels > 0 && bytes / ((double)t->channels * t->ranks) >= 64)
        lat *= 1.4; /* tuning.cc:593-596, the ring's plateau */
      /* NCCL computes in float; strict < keeps the first of equal times, in NCCL's order of
       * algorithms (Tree, Ring, CollNetDirect, .., NVLS, .., PAT), enqueue.cc:1814-1821 */
      double time = (float)(lat + bytes / (1000.0 * bw));
      int before = best >= 0 && time == best && nccl_order(ai) < nccl_order(ba);
      if (best < 0 || time < best || before) {
        best = time;
        ba = ai;
        if (a) *a = (enum cs_algo)ai;
        if (p) *p = (enum cs_proto)pi;
      }
    }
  return best;
}
