/* smi.c — `nvidia-smi topo -m` to topology; see smi.h.
 *
 * The text is read line by line: the matrix header is the first line whose first token (after
 * terminal escapes) is GPU0; its leading GPU<i>/NIC<i> tokens name the columns. Each row starts
 * with its own name and gives one entry per column. Everything else in the text is ignored except
 * the GPU model and the NVLink link speed.
 */
#include "smi.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXC (CS_TOPO_MAX_GPUS + CS_TOPO_MAX_NICS)
#define SMI_NAME "nvidia-smi topo -m"

/* relation codes, nearest first; NV# is stored as NV_BASE + # */
enum { R_X, R_PIX, R_PXB, R_PHB, R_NODE, R_SYS, R_NV_BASE = 100 };

struct smi {
  int ncol, ngpu, nnic;
  int col_is_nic[MAXC], col_idx[MAXC];
  int rel[MAXC][MAXC];
  int have[MAXC];
};

/* Copies line into buf with terminal escapes (ESC [ ... letter) removed. */
static void strip_escapes(const char *line, size_t n, char *buf, size_t len) {
  size_t w = 0;
  for (size_t i = 0; i < n && w + 1 < len; i++) {
    if (line[i] == '\033' && i + 1 < n && line[i + 1] == '[') {
      i += 2;
      while (i < n && !isalpha((unsigned char)line[i]))
        i++;
      continue;
    }
    buf[w++] = line[i];
  }
  buf[w] = '\0';
}

/* Splits on blanks; returns the number of tokens (at most max). */
static int tokens(char *s, char **tok, int max) {
  int n = 0;
  char *save = NULL;
  for (char *p = strtok_r(s, " \t\r", &save); p && n < max; p = strtok_r(NULL, " \t\r", &save))
    tok[n++] = p;
  return n;
}

/* "GPU3" -> 3 with *nic = 0, "NIC1" -> 1 with *nic = 1, else -1. */
static int col_name(const char *s, int *nic) {
  int is_nic = strncmp(s, "NIC", 3) == 0;
  if (!is_nic && strncmp(s, "GPU", 3) != 0) return -1;
  const char *d = s + 3;
  if (!isdigit((unsigned char)*d)) return -1;
  char *e;
  long v = strtol(d, &e, 10);
  if (*e != '\0' || v < 0 || v >= MAXC) return -1;
  *nic = is_nic;
  return (int)v;
}

static int relation(const char *s) {
  if (strcmp(s, "X") == 0) return R_X;
  if (strcmp(s, "PIX") == 0) return R_PIX;
  if (strcmp(s, "PXB") == 0) return R_PXB;
  if (strcmp(s, "PHB") == 0) return R_PHB;
  if (strcmp(s, "NODE") == 0) return R_NODE;
  if (strcmp(s, "SYS") == 0) return R_SYS;
  if (strncmp(s, "NV", 2) == 0 && isdigit((unsigned char)s[2])) {
    char *e;
    long v = strtol(s + 2, &e, 10);
    if (*e == '\0' && v >= 1 && v <= CS_TOPO_MAX_LINKS) return R_NV_BASE + (int)v;
  }
  return -1;
}

/* The size of the contiguous equal blocks such that i, j share a block exactly when same(i, j);
 * 1 when the relation is not such a partition. */
static int block_size(const struct smi *m, const int *gcol, int same_max) {
  int n = m->ngpu, s = 0;
  for (int j = 0; j < n; j++) {
    int r = m->rel[gcol[0]][gcol[j]];
    if (r == R_X || (r >= R_PIX && r <= same_max))
      s++;
    else if (r >= R_NV_BASE)
      s++; /* NVLink hides the PCIe relation: assume the same block */
  }
  if (s < 1 || n % s != 0) return 1;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      int r = m->rel[gcol[i]][gcol[j]];
      if (r >= R_NV_BASE) continue;
      int same = r == R_X || (r >= R_PIX && r <= same_max);
      if (same != (i / s == j / s)) return 1;
    }
  return s;
}

enum cs_status cs_topo_import_smi(const char *text, const char *name, double link_bw, double nic_bw,
                                  struct cs_topology *t, struct cs_error *err) {
  struct smi *m = calloc(1, sizeof *m);
  if (m == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  memset(t, 0, sizeof *t);
  double smi_link = 0;
  char gpu[64] = "";
  int in_matrix = 0, header_line = 0, rows = 0;
  long lineno = 0;
  enum cs_status st = CS_OK;
  const char *p = text;
  while (*p && st == CS_OK) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    char buf[1024], work[1024];
    strip_escapes(p, n, buf, sizeof buf);
    p = e ? e + 1 : p + n;
    lineno++;
    memcpy(work, buf, sizeof buf);
    char *tok[MAXC + 8];
    int nt = tokens(work, tok, MAXC + 8);
    /* the GPU model, from the nvidia-smi table: "|   0  NVIDIA H200   On  |" */
    char *nv = strstr(buf, "NVIDIA ");
    if (gpu[0] == '\0' && buf[0] == '|' && nv) {
      char *q = nv + 7, *end = strstr(q, "  ");
      size_t l = end ? (size_t)(end - q) : strlen(q);
      /* printable ASCII only: the name goes into a YAML string of the dump */
      size_t ok = 0;
      while (ok < l && q[ok] >= 0x20 && q[ok] < 0x7f)
        ok++;
      if (l > 0 && l < sizeof gpu && ok == l) {
        memcpy(gpu, q, l);
        gpu[l] = '\0';
      }
    }
    /* NVLink speed, from `nvidia-smi nvlink -s`: "Link 0: 26.562 GB/s" */
    if (smi_link == 0 && nt >= 4 && strcmp(tok[0], "Link") == 0 && strcmp(tok[3], "GB/s") == 0) {
      char *x;
      double v = strtod(tok[2], &x);
      /* one NVLink moves at most tens of GB/s (NVLink5: 50); 1000 bounds what a real line says */
      if (*x == '\0' && v > 0 && v <= 1000) smi_link = v * 1e9;
    }
    if (nt == 0) {
      if (in_matrix) in_matrix = 2; /* a blank line ends the matrix */
      continue;
    }
    int is_nic;
    if (!in_matrix && col_name(tok[0], &is_nic) == 0 && !is_nic) {
      /* the header: leading GPU<i>/NIC<i> names */
      for (int i = 0; i < nt; i++) {
        int idx = col_name(tok[i], &is_nic);
        if (idx < 0) break;
        if (m->ncol == MAXC) {
          st = cs_error_at(err, CS_ERR_RANGE, SMI_NAME, lineno, 0, "more than %d columns", MAXC);
          break;
        }
        int want = is_nic ? m->nnic : m->ngpu;
        if (idx != want) {
          st = cs_error_at(err, CS_ERR_PARSE, SMI_NAME, lineno, 0, "expected column %s%d, found %s",
                           is_nic ? "NIC" : "GPU", want, tok[i]);
          break;
        }
        m->col_is_nic[m->ncol] = is_nic;
        m->col_idx[m->ncol++] = idx;
        if (is_nic)
          m->nnic++;
        else
          m->ngpu++;
      }
      in_matrix = 1;
      header_line = (int)lineno;
      continue;
    }
    if (in_matrix != 1) continue;
    int idx = col_name(tok[0], &is_nic);
    if (idx < 0) {
      in_matrix = 2;
      continue;
    }
    int row = -1;
    for (int c = 0; c < m->ncol; c++)
      if (m->col_is_nic[c] == is_nic && m->col_idx[c] == idx) row = c;
    if (row < 0 || m->have[row]) {
      st = cs_error_at(err, CS_ERR_PARSE, SMI_NAME, lineno, 0, "unexpected row %s", tok[0]);
      break;
    }
    if (nt < m->ncol + 1) {
      st = cs_error_at(err, CS_ERR_PARSE, SMI_NAME, lineno, 0, "row %s has %d entries, expected %d",
                       tok[0], nt - 1, m->ncol);
      break;
    }
    for (int c = 0; c < m->ncol; c++) {
      int r = relation(tok[c + 1]);
      if (r < 0 || (r == R_X) != (c == row)) {
        st = cs_error_at(err, CS_ERR_PARSE, SMI_NAME, lineno, 0,
                         "row %s, column %d: expected X on the diagonal and NV#, PIX, PXB, PHB, "
                         "NODE or SYS elsewhere, got \"%s\"",
                         tok[0], c, tok[c + 1]);
        break;
      }
      m->rel[row][c] = r;
    }
    m->have[row] = 1;
    rows++;
  }
  if (st == CS_OK && m->ngpu == 0)
    st = cs_error_set(err, CS_ERR_PARSE,
                      "%s: no GPU matrix found (expected a header line starting with GPU0)",
                      SMI_NAME);
  if (st == CS_OK && rows != m->ncol)
    st = cs_error_at(err, CS_ERR_PARSE, SMI_NAME, header_line, 0,
                     "the matrix has %d columns but %d rows", m->ncol, rows);
  if (st == CS_OK && m->ngpu > CS_TOPO_MAX_GPUS)
    st = cs_error_set(err, CS_ERR_RANGE, "%s: %d GPUs, more than the %d a node may hold", SMI_NAME,
                      m->ngpu, CS_TOPO_MAX_GPUS);
  if (st == CS_OK && m->nnic > CS_TOPO_MAX_NICS)
    st = cs_error_set(err, CS_ERR_RANGE, "%s: %d NICs, more than %d", SMI_NAME, m->nnic,
                      CS_TOPO_MAX_NICS);
  for (int i = 0; st == CS_OK && i < m->ncol; i++)
    for (int j = 0; st == CS_OK && j < m->ncol; j++)
      if (m->rel[i][j] != m->rel[j][i])
        st = cs_error_set(err, CS_ERR_RANGE, "%s: entries %d,%d and %d,%d differ", SMI_NAME, i, j,
                          j, i);
  if (st != CS_OK) {
    free(m);
    return st;
  }

  int gcol[CS_TOPO_MAX_GPUS], ncol_nic[CS_TOPO_MAX_NICS];
  for (int c = 0; c < m->ncol; c++) {
    if (m->col_is_nic[c])
      ncol_nic[m->col_idx[c]] = c;
    else
      gcol[m->col_idx[c]] = c;
  }
  struct cs_topo_node *nd = &t->node;
  int G = m->ngpu;
  t->version = CS_TOPO_VERSION;
  snprintf(t->name, sizeof t->name, "%s", name ? name : "imported");
  snprintf(t->description, sizeof t->description, "imported from nvidia-smi topo -m: %d GPUs%s", G,
           m->nnic ? " with NICs" : "");
  nd->gpus = G;
  snprintf(nd->gpu, sizeof nd->gpu, "%s", gpu);
  int any_nv = 0, all_same = G > 2, k0 = -1, every_gpu_nv = 1;
  for (int i = 0; i < G; i++) {
    int mine = 0;
    for (int j = 0; j < G; j++) {
      int r = m->rel[gcol[i]][gcol[j]];
      int links = r >= R_NV_BASE ? r - R_NV_BASE : 0;
      nd->links[i][j] = links;
      mine += links;
      if (i != j) {
        if (k0 < 0) k0 = links;
        if (links == 0 || links != k0) all_same = 0;
      }
    }
    any_nv |= mine > 0;
    every_gpu_nv &= mine > 0;
  }
  nd->link_bw = smi_link > 0 ? smi_link : link_bw > 0 ? link_bw : 25e9;
  nd->pcie_bw = 16e9;
  nd->gpus_per_switch = block_size(m, gcol, R_PXB);
  nd->gpus_per_socket = block_size(m, gcol, R_NODE);
  if (nd->gpus_per_socket % nd->gpus_per_switch != 0) nd->gpus_per_switch = 1;
  nd->switch_uplink = nd->socket_bw = nd->pcie_bw;
  nd->nvlink_domain = G;
  if (all_same && any_nv) {
    nd->fabric = CS_TOPO_NVSWITCH;
    nd->nvlink_bw = k0 * nd->link_bw;
    if (nd->nvlink_bw > 1e14) { /* what a topology file may hold (topology.c) */
      st = cs_error_set(err, CS_ERR_RANGE,
                        "%s: %d NVLinks of %g GB/s give %g GB/s per GPU, more than 100000 GB/s",
                        SMI_NAME, k0, nd->link_bw / 1e9, nd->nvlink_bw / 1e9);
      free(m);
      return st;
    }
    nd->efficiency = cs_topo_defaults()->fabric_efficiency[nd->fabric];
    memset(nd->links, 0, sizeof nd->links);
  } else {
    nd->fabric = any_nv && every_gpu_nv ? CS_TOPO_NVLINK_MESH : CS_TOPO_PCIE;
    nd->has_links = any_nv;
    nd->efficiency = cs_topo_defaults()->fabric_efficiency[nd->fabric];
    if (!any_nv) nd->link_bw = 0;
  }
  struct cs_topo_net *net = &t->net;
  net->transport = CS_TOPO_INFINIBAND;
  net->latency = cs_topo_defaults()->transport[CS_TOPO_INFINIBAND].latency;
  net->switch_latency = cs_topo_defaults()->transport[CS_TOPO_INFINIBAND].switch_latency;
  net->efficiency = cs_topo_defaults()->transport[CS_TOPO_INFINIBAND].efficiency;
  if (nic_bw > 0 && m->nnic > 0) {
    net->nics = m->nnic;
    net->nic_bw = nic_bw;
    for (int i = 0; i < G; i++) {
      int best = 0, bestr = 1 << 20;
      for (int k = 0; k < m->nnic; k++) {
        int r = m->rel[gcol[i]][ncol_nic[k]];
        if (r < bestr) {
          bestr = r;
          best = k;
        }
      }
      nd->nic_of_gpu[i] = best;
    }
  }
  free(m);
  return CS_OK;
}
