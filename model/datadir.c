/* datadir.c — bundled data files by name; see datadir.h. */
#define _GNU_SOURCE /* dladdr */
#include "datadir.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef CS_SOURCE_DIR
#define CS_SOURCE_DIR "."
#endif

/* The installed data folder relative to the installed library's folder ("../share/commscale"
 * for <prefix>/lib and <prefix>/share/commscale), set by the build from the install layout. */
#ifndef CS_LIB_TO_DATA
#define CS_LIB_TO_DATA "../share/commscale"
#endif

#define NDIRS 4

static int is_file(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

static const char anchor; /* an address inside whatever object this code is linked into */

int cs_datadir_library(const char *kind, char *out, size_t len) {
  Dl_info info;
  if (dladdr(&anchor, &info) == 0 || info.dli_fname == NULL) return 0;
  const char *f = info.dli_fname, *slash = strrchr(f, '/');
  if (slash == NULL || strstr(slash, ".so") == NULL) return 0; /* not a shared library */
  int n = snprintf(out, len, "%.*s/%s/%s", (int)(slash - f), f, CS_LIB_TO_DATA, kind);
  return n > 0 && (size_t)n < len;
}

/* The candidate folders in search order; empty strings for those that do not apply. */
static void search_dirs(const char *kind, const char *src_subdir, const char *exe_path,
                        char dirs[NDIRS][1024]) {
  const char *env = getenv("COMMSCALE_DATA_DIR");
  dirs[0][0] = dirs[1][0] = dirs[2][0] = '\0';
  if (env && *env && snprintf(dirs[0], sizeof dirs[0], "%s/%s", env, kind) >= (int)sizeof dirs[0])
    dirs[0][0] = '\0';
  if (exe_path && *exe_path) {
    const char *slash = strrchr(exe_path, '/');
    if (slash && snprintf(dirs[1], sizeof dirs[1], "%.*s/../share/commscale/%s",
                          (int)(slash - exe_path), exe_path, kind) >= (int)sizeof dirs[1])
      dirs[1][0] = '\0';
  }
  if (!cs_datadir_library(kind, dirs[2], sizeof dirs[2])) dirs[2][0] = '\0';
  if (snprintf(dirs[3], sizeof dirs[3], "%s/%s", CS_SOURCE_DIR, src_subdir) >= (int)sizeof dirs[3])
    dirs[3][0] = '\0';
}

enum cs_status cs_datadir_find(const char *kind, const char *src_subdir, const char *name,
                               const char *exe_path, char *out, size_t len, struct cs_error *err) {
  if (strchr(name, '/') || ends_with(name, ".yaml") || ends_with(name, ".yml")) {
    if (strlen(name) >= len) return cs_error_set(err, CS_ERR_RANGE, "path too long: %s", name);
    snprintf(out, len, "%s", name);
    return CS_OK;
  }
  char dirs[NDIRS][1024];
  search_dirs(kind, src_subdir, exe_path, dirs);
  char tried[2048] = "";
  size_t used = 0;
  for (int i = 0; i < NDIRS; i++) {
    if (dirs[i][0] == '\0') continue;
    char path[4096];
    int w = snprintf(path, sizeof path, "%s/%s.yaml", dirs[i], name);
    if (w > 0 && (size_t)w < sizeof path && is_file(path)) {
      if (strlen(path) >= len) return cs_error_set(err, CS_ERR_RANGE, "path too long: %s", path);
      snprintf(out, len, "%s", path);
      return CS_OK;
    }
    int k = snprintf(tried + used, sizeof tried - used, "%s%s", used ? ", " : "", dirs[i]);
    if (k > 0 && (size_t)k < sizeof tried - used) used += (size_t)k;
  }
  char hint[256] = "";
  char **names = NULL;
  size_t nn = 0;
  if (cs_datadir_list(kind, src_subdir, exe_path, &names, &nn, NULL) == CS_OK) {
    cs_datadir_suggest((const char *const *)names, nn, name, hint, sizeof hint);
    cs_datadir_list_free(names, nn);
  }
  return cs_error_set(err, CS_ERR_IO, "no %s file named \"%s\"%s (searched %s)", kind, name, hint,
                      tried);
}

/* Levenshtein distance of a and b, capped: 3 means "3 or more". */
static int distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 63 || lb > 63) return 3;
  int row[64];
  for (size_t j = 0; j <= lb; j++)
    row[j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= lb; j++) {
      int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      diag = up;
      row[j] = best;
    }
  }
  return row[lb] < 3 ? row[lb] : 3;
}

void cs_datadir_suggest(const char *const *names, size_t n, const char *name, char *buf,
                        size_t len) {
  if (len == 0) return;
  buf[0] = '\0';
  size_t used = 0, k = 0, nl = strlen(name);
  /* names that start with name first, then those one edit away, then two */
  for (int pass = 0; pass < 3 && k < 3; pass++)
    for (size_t i = 0; i < n && k < 3; i++) {
      int prefix = nl >= 2 && strncmp(names[i], name, nl) == 0;
      if (pass == 0 ? !prefix : prefix || distance(names[i], name) != pass) continue;
      int w = snprintf(buf + used, len - used, "%s\"%s\"", k ? ", " : " (did you mean ", names[i]);
      if (w < 0 || (size_t)w + 2 >= len - used) {
        buf[0] = '\0';
        return;
      }
      used += (size_t)w, k++;
    }
  if (k) snprintf(buf + used, len - used, "?)");
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

void cs_datadir_list_free(char **names, size_t n) {
  if (names == NULL) return;
  for (size_t i = 0; i < n; i++)
    free(names[i]);
  free(names);
}

enum cs_status cs_datadir_list(const char *kind, const char *src_subdir, const char *exe_path,
                               char ***names, size_t *n, struct cs_error *err) {
  char dirs[NDIRS][1024];
  search_dirs(kind, src_subdir, exe_path, dirs);
  char **v = NULL;
  size_t cnt = 0, cap = 0;
  for (int i = 0; i < NDIRS; i++) {
    if (dirs[i][0] == '\0') continue;
    DIR *d = opendir(dirs[i]);
    if (d == NULL) continue;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.' || !ends_with(e->d_name, ".yaml")) continue;
      if (cnt == cap) {
        size_t nc = cap ? 2 * cap : 32;
        char **nv = realloc(v, nc * sizeof *nv);
        if (nv == NULL) {
          closedir(d);
          cs_datadir_list_free(v, cnt);
          return cs_error_set(err, CS_ERR_NOMEM, "out of memory listing %s", kind);
        }
        v = nv;
        cap = nc;
      }
      size_t len = strlen(e->d_name) - 5;
      char *s = malloc(len + 1);
      if (s == NULL) {
        closedir(d);
        cs_datadir_list_free(v, cnt);
        return cs_error_set(err, CS_ERR_NOMEM, "out of memory listing %s", kind);
      }
      memcpy(s, e->d_name, len);
      s[len] = '\0';
      v[cnt++] = s;
    }
    closedir(d);
  }
  if (cnt > 1) qsort(v, cnt, sizeof *v, cmp_str);
  size_t k = 0;
  for (size_t i = 0; i < cnt; i++) {
    if (k > 0 && strcmp(v[k - 1], v[i]) == 0)
      free(v[i]);
    else
      v[k++] = v[i];
  }
  *names = v;
  *n = k;
  return CS_OK;
}
