/* wfile.c — see wfile.h.
 *
 * Every temporary this module creates is entered in a fixed table of paths (no allocation, no
 * locks) so that the signal handler can remove it with unlink/rmdir alone. A slot's path is
 * written before its kind is published, with a signal fence between, so the handler never sees a
 * half-copied name.
 */
#define _GNU_SOURCE /* flock, getdents64 through syscall, nftw */
#include "wfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* ==== the table of live temporaries ========================================================= */

enum { SLOT_FREE = 0, SLOT_FILE = 1, SLOT_DIR = 2 };
#define NSLOTS 64
#define SLOT_PATH 4096 /* PATH_MAX on Linux */

static char slot_path[NSLOTS][SLOT_PATH];
static volatile sig_atomic_t slot_kind[NSLOTS];

/* Enters path in the table; returns the slot or -1 when the table is full or the path too long
 * (the temporary is then still removed on every ordinary path, only not on a signal). */
static int slot_add(const char *path, int kind) {
  size_t n = strlen(path);
  if (n >= SLOT_PATH) return -1;
  for (int i = 0; i < NSLOTS; i++)
    if (slot_kind[i] == SLOT_FREE) {
      memcpy(slot_path[i], path, n + 1);
      atomic_signal_fence(memory_order_seq_cst);
      slot_kind[i] = kind;
      return i;
    }
  return -1;
}

static void slot_del(int i) {
  if (i >= 0) slot_kind[i] = SLOT_FREE;
}

/* Empties directory dirfd/name and removes it, with system calls only (async-signal-safe);
 * depth bounds the recursion into subdirectories. */
static void sig_rmtree(int dirfd, const char *name, int depth) {
  int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    char buf[2048];
    for (int pass = 0; pass < 1000; pass++) {
      lseek(fd, 0, SEEK_SET);
      long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
      if (n <= 0) break;
      int removed = 0;
      for (long off = 0; off < n;) {
        const struct {
          uint64_t ino;
          int64_t off;
          unsigned short reclen;
          unsigned char type;
          char name[];
        } *de = (const void *)(buf + off);
        off += de->reclen;
        if (strcmp(de->name, ".") == 0 || strcmp(de->name, "..") == 0) continue;
        if (unlinkat(fd, de->name, 0) == 0) {
          removed++;
        } else if (depth > 0 && errno == EISDIR) {
          sig_rmtree(fd, de->name, depth - 1);
          removed++;
        }
      }
      if (removed == 0) {
        /* a file created after the last pass (by a writer the handler could not stop) makes
         * the directory non-empty again: look once more, a bounded number of times */
        if (unlinkat(dirfd, name, AT_REMOVEDIR) == 0 || errno != ENOTEMPTY || pass > 990) break;
      }
    }
    close(fd);
  }
  unlinkat(dirfd, name, AT_REMOVEDIR);
}

/* Blocks the three cleanup signals around a step that must not be cut in half; restores with
 * unblock(). */
static void block(sigset_t *old) {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  sigaddset(&s, SIGTERM);
  sigaddset(&s, SIGHUP);
  sigprocmask(SIG_BLOCK, &s, old);
}
static void unblock(const sigset_t *old) {
  sigprocmask(SIG_SETMASK, old, NULL);
}

/* The child writing into a temporary (cs_wfile_child), or 0. */
static volatile sig_atomic_t child_pid;

void cs_wfile_child(long pid) {
  child_pid = (sig_atomic_t)pid;
}

int cs_wfile_spawn(long *pid, const char *path, const posix_spawn_file_actions_t *fa,
                   char *const argv[]) {
  extern char **environ;
  sigset_t old;
  block(&old);
  posix_spawnattr_t attr;
  int rc = posix_spawnattr_init(&attr);
  if (rc == 0) {
    rc = posix_spawnattr_setsigmask(&attr, &old);
    if (rc == 0) rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    pid_t p = 0;
    if (rc == 0)
      rc = strchr(path, '/') ? posix_spawn(&p, path, fa, &attr, argv, environ)
                             : posix_spawnp(&p, path, fa, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    if (rc == 0) {
      *pid = p;
      child_pid = (sig_atomic_t)p;
    }
  }
  unblock(&old);
  return rc;
}

static void on_signal(int sig) {
  int saved = errno;
  /* a child still writing into a temporary (gnuplot into the report's folder) would recreate
   * its output after the folder is emptied: stop it first (kill and waitpid are
   * async-signal-safe) */
  pid_t child = (pid_t)child_pid;
  if (child > 0) {
    kill(child, SIGKILL);
    while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {
    }
    child_pid = 0;
  }
  for (int i = 0; i < NSLOTS; i++) {
    if (slot_kind[i] == SLOT_FILE)
      unlink(slot_path[i]);
    else if (slot_kind[i] == SLOT_DIR)
      sig_rmtree(AT_FDCWD, slot_path[i], 4);
    slot_kind[i] = SLOT_FREE;
  }
  errno = saved;
  /* SA_RESETHAND restored the default action and SA_NODEFER lets it act now */
  raise(sig);
}

void cs_wfile_install_signal_cleanup(void) {
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESETHAND | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; k++)
    sigaddset(&sa.sa_mask, sigs[k]);
  for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; k++) {
    struct sigaction old;
    if (sigaction(sigs[k], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue; /* nohup */
    sigaction(sigs[k], &sa, NULL);
  }
}

/* ==== resolving the target ================================================================== */

/* What a path names once its symlinks are followed. */
enum target_kind { T_NEW, T_REGULAR, T_DIR, T_THROUGH, T_STDOUT };

static char *dupstr(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static int is_stdout_name(const char *p) {
  return strcmp(p, "/dev/stdout") == 0 || strcmp(p, "/dev/fd/1") == 0 ||
         strcmp(p, "/proc/self/fd/1") == 0;
}

/* Follows path's symlinks to the final target (which may not exist yet) and classifies it.
 * *final receives a malloc'd copy of the target's path. A name under /proc or /dev/fd (the
 * kernel's magic links: /dev/stdout, /dev/fd/N) is written through as the user named it. Returns 0
 * or an errno value. */
static int resolve(const char *path, char **final, enum target_kind *kind) {
  *final = NULL;
  if (path[0] == '\0') return ENOENT;
  if (is_stdout_name(path)) {
    *kind = T_STDOUT;
    return (*final = dupstr(path)) ? 0 : ENOMEM;
  }
  char *cur = dupstr(path);
  if (cur == NULL) return ENOMEM;
  for (int hops = 0;; hops++) {
    if (strncmp(cur, "/proc/", 6) == 0 || strncmp(cur, "/dev/fd/", 8) == 0) {
      free(cur);
      *kind = T_THROUGH;
      return (*final = dupstr(path)) ? 0 : ENOMEM;
    }
    struct stat sb;
    if (lstat(cur, &sb) != 0) {
      int e = errno;
      if (e != ENOENT) {
        free(cur);
        return e;
      }
      *kind = T_NEW;
      *final = cur;
      return 0;
    }
    if (!S_ISLNK(sb.st_mode)) {
      *kind = S_ISREG(sb.st_mode) ? T_REGULAR : S_ISDIR(sb.st_mode) ? T_DIR : T_THROUGH;
      *final = cur;
      return 0;
    }
    if (hops >= 40) { /* the kernel's own limit (Linux MAXSYMLINKS) */
      free(cur);
      return ELOOP;
    }
    char link[SLOT_PATH];
    ssize_t n = readlink(cur, link, sizeof link - 1);
    if (n < 0 || (size_t)n >= sizeof link - 1) {
      int e = n < 0 ? errno : ENAMETOOLONG;
      free(cur);
      return e;
    }
    link[n] = '\0';
    char *next;
    const char *slash = strrchr(cur, '/');
    if (link[0] == '/' || slash == NULL) {
      next = dupstr(link);
    } else { /* relative to the directory holding the link */
      size_t dl = (size_t)(slash - cur) + 1;
      next = malloc(dl + (size_t)n + 1);
      if (next) {
        memcpy(next, cur, dl);
        memcpy(next + dl, link, (size_t)n + 1);
      }
    }
    free(cur);
    if (next == NULL) return ENOMEM;
    cur = next;
  }
}

/* malloc'd "path" + suffix. */
static char *cat2(const char *path, const char *suffix) {
  size_t a = strlen(path), b = strlen(suffix);
  char *s = malloc(a + b + 1);
  if (s) {
    memcpy(s, path, a);
    memcpy(s + a, suffix, b + 1);
  }
  return s;
}

static mode_t current_umask(void) {
  mode_t m = umask(022);
  umask(m);
  return m;
}

/* ==== one file ============================================================================== */

struct cs_wfile {
  FILE *fp;
  int fd;       /* under fp when fp is our own stream, else -1 */
  int werr;     /* the first errno a write or close of fd met, 0 while none */
  char *path;   /* as the user named it */
  char *target; /* the final target of the rename, NULL when written through */
  char *tmp;    /* the temporary, NULL when written through */
  int slot;     /* in the signal table, or -1 */
  int is_stdout;
};

static void wfile_free(struct cs_wfile *w) {
  free(w->path);
  free(w->target);
  free(w->tmp);
  free(w);
}

/* fp is a stream over fd whose write and close remember the first errno (a stdio stream forgets
 * why a write failed once its buffer has been dropped, and the message must say why). */
static ssize_t ck_write(void *cookie, const char *buf, size_t n) {
  struct cs_wfile *w = cookie;
  size_t done = 0;
  while (done < n) {
    ssize_t r = write(w->fd, buf + done, n - done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (w->werr == 0) w->werr = r < 0 ? errno : EIO;
      return done > 0 ? (ssize_t)done : -1;
    }
    done += (size_t)r;
  }
  return (ssize_t)done;
}

static int ck_close(void *cookie) {
  struct cs_wfile *w = cookie;
  int r = close(w->fd);
  if (r != 0 && w->werr == 0) w->werr = errno;
  w->fd = -1;
  return r;
}

/* Wraps fd (owned from now on, closed on failure) in w->fp; returns 0 or an errno value. */
static int wrap(struct cs_wfile *w, int fd) {
  static const cookie_io_functions_t io = {
      .read = NULL, .write = ck_write, .seek = NULL, .close = ck_close};
  w->fd = fd;
  w->fp = fopencookie(w, "w", io);
  if (w->fp) return 0;
  int e = errno;
  close(fd);
  w->fd = -1;
  return e;
}

static const char *shown(const char *path) {
  return path == NULL || strcmp(path, "-") == 0 ? "standard output" : path;
}

enum cs_status cs_wfile_open(const char *path, struct cs_wfile **out, struct cs_error *err) {
  *out = NULL;
  struct cs_wfile *w = calloc(1, sizeof *w);
  if (w == NULL || (w->path = dupstr(path ? path : "-")) == NULL) {
    free(w);
    return cs_error_set(err, CS_ERR_NOMEM, "%s: out of memory", shown(path));
  }
  w->slot = -1;
  w->fd = -1;
  if (strcmp(w->path, "-") == 0) {
    w->fp = stdout;
    w->is_stdout = 1;
    *out = w;
    return CS_OK;
  }
  enum target_kind kind;
  char *final;
  int e = resolve(path, &final, &kind);
  if (e != 0) {
    wfile_free(w);
    return cs_error_set(err, CS_ERR_IO, "%s: cannot create: %s", path, strerror(e));
  }
  if (kind == T_DIR) {
    free(final);
    wfile_free(w);
    return cs_error_set(err, CS_ERR_IO, "%s: cannot create: %s", path, strerror(EISDIR));
  }
  if (kind == T_STDOUT || kind == T_THROUGH) {
    free(final);
    if (kind == T_STDOUT) {
      w->fp = stdout;
      w->is_stdout = 1;
    } else {
      int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
      e = fd < 0 ? errno : wrap(w, fd);
    }
    if (e != 0) {
      wfile_free(w);
      return cs_error_set(err, CS_ERR_IO, "%s: cannot create: %s", path, strerror(e));
    }
    *out = w;
    return CS_OK;
  }
  w->target = final;
  w->tmp = cat2(final, ".tmpXXXXXX");
  if (w->tmp == NULL) {
    wfile_free(w);
    return cs_error_set(err, CS_ERR_NOMEM, "%s: out of memory", path);
  }
  sigset_t old;
  block(&old);
  int fd = mkstemp(w->tmp);
  e = errno;
  if (fd >= 0) w->slot = slot_add(w->tmp, SLOT_FILE);
  unblock(&old);
  if (fd < 0) {
    wfile_free(w);
    return cs_error_set(err, CS_ERR_IO, "%s: cannot create: %s", path, strerror(e));
  }
  /* the replaced file's permission bits (and owner, where we may set it); a new file gets what
   * open(O_CREAT, 0666) would have given it */
  struct stat sb;
  if (kind == T_REGULAR && stat(final, &sb) == 0) {
    if (fchown(fd, sb.st_uid, sb.st_gid) != 0) { /* not ours to give: keep the creator's */
    }
    (void)fchmod(fd, sb.st_mode & 07777);
  } else {
    (void)fchmod(fd, 0666 & ~current_umask());
  }
  if ((e = wrap(w, fd)) != 0) {
    cs_wfile_abort(w);
    return cs_error_set(err, CS_ERR_IO, "%s: cannot create: %s", path, strerror(e));
  }
  *out = w;
  return CS_OK;
}

FILE *cs_wfile_fp(struct cs_wfile *w) {
  return w->fp;
}

const char *cs_wfile_path(const struct cs_wfile *w) {
  return w->path;
}

int cs_wfile_through(const struct cs_wfile *w) {
  return w->tmp == NULL;
}

enum cs_status cs_wfile_commit(struct cs_wfile *w, struct cs_error *err) {
  if (w == NULL) return CS_OK;
  /* after a failed write stdio keeps the unwritten bytes, so fflush tries again and tells why */
  int e = 0;
  errno = 0;
  if (fflush(w->fp) != 0)
    e = errno ? errno : EIO;
  else if (ferror(w->fp))
    e = EIO;
  if (w->werr) e = w->werr;
  if (w->is_stdout) {
    enum cs_status st = CS_OK;
    if (e) st = cs_error_set(err, CS_ERR_IO, "%s: cannot write: %s", shown(w->path), strerror(e));
    wfile_free(w);
    return st;
  }
  if (w->tmp && e == 0 && fsync(w->fd) != 0) e = errno;
  if (fclose(w->fp) != 0 && e == 0) e = w->werr ? w->werr : EIO;
  w->fp = NULL;
  if (w->tmp) {
    if (e == 0 && rename(w->tmp, w->target) != 0) e = errno;
    if (e) unlink(w->tmp);
    slot_del(w->slot);
  }
  enum cs_status st = CS_OK;
  if (e) st = cs_error_set(err, CS_ERR_IO, "%s: cannot write: %s", w->path, strerror(e));
  wfile_free(w);
  return st;
}

void cs_wfile_abort(struct cs_wfile *w) {
  if (w == NULL) return;
  if (w->is_stdout)
    fflush(stdout);
  else if (w->fp)
    fclose(w->fp);
  if (w->tmp) {
    unlink(w->tmp);
    slot_del(w->slot);
  }
  wfile_free(w);
}

/* ==== a set of files ======================================================================== */

struct cs_wdir {
  char *path;   /* as the user named it */
  char *target; /* the directory's final path (symlinks followed) */
  char *tmp;
  int slot;
};

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)ftw;
  if (flag == FTW_DP)
    rmdir(p);
  else
    unlink(p);
  return 0;
}

/* Removes dir and everything under it, never following a symlink. */
static void rmtree(const char *dir) {
  nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* 0 when dir may be replaced: it is empty or holds CS_WDIR_MARKER; else an errno-like code. */
static int replaceable(const char *dir) {
  DIR *d = opendir(dir);
  if (d == NULL) return errno;
  int others = 0, marker = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
    if (strcmp(de->d_name, CS_WDIR_MARKER) == 0)
      marker = 1;
    else
      others = 1;
  }
  closedir(d);
  return marker || !others ? 0 : EEXIST;
}

static void wdir_free(struct cs_wdir *d) {
  free(d->path);
  free(d->target);
  free(d->tmp);
  free(d);
}

enum cs_status cs_wdir_open(const char *dir, struct cs_wdir **out, struct cs_error *err) {
  *out = NULL;
  struct cs_wdir *d = calloc(1, sizeof *d);
  if (d == NULL || (d->path = dupstr(dir)) == NULL) {
    free(d);
    return cs_error_set(err, CS_ERR_NOMEM, "%s: out of memory", dir);
  }
  d->slot = -1;
  enum target_kind kind;
  int e = resolve(dir, &d->target, &kind);
  if (e == 0 && kind != T_NEW && kind != T_DIR) e = ENOTDIR;
  if (e != 0) {
    wdir_free(d);
    return cs_error_set(err, CS_ERR_IO, "%s: cannot create: %s", dir, strerror(e));
  }
  if (kind == T_DIR && (e = replaceable(d->target)) != 0) {
    wdir_free(d);
    if (e == EEXIST)
      return cs_error_set(err, CS_ERR_IO,
                          "%s: exists and was not written by commscale (no %s in it); name a new "
                          "or empty directory",
                          dir, CS_WDIR_MARKER);
    return cs_error_set(err, CS_ERR_IO, "%s: cannot read: %s", dir, strerror(e));
  }
  /* strip trailing slashes so that the temporary lands beside the directory, not in it */
  size_t n = strlen(d->target);
  while (n > 1 && d->target[n - 1] == '/')
    d->target[--n] = '\0';
  if ((d->tmp = cat2(d->target, ".tmpXXXXXX")) == NULL) {
    wdir_free(d);
    return cs_error_set(err, CS_ERR_NOMEM, "%s: out of memory", dir);
  }
  sigset_t old;
  block(&old);
  char *made = mkdtemp(d->tmp);
  e = errno;
  if (made) d->slot = slot_add(d->tmp, SLOT_DIR);
  unblock(&old);
  if (made == NULL) {
    wdir_free(d);
    return cs_error_set(err, CS_ERR_IO, "%s: cannot create: %s", dir, strerror(e));
  }
  (void)chmod(d->tmp, 0777 & ~current_umask());
  /* the marker that lets the next run replace this directory */
  char *mk = malloc(strlen(d->tmp) + sizeof CS_WDIR_MARKER + 1);
  FILE *f = NULL;
  if (mk) {
    sprintf(mk, "%s/%s", d->tmp, CS_WDIR_MARKER);
    f = fopen(mk, "w");
  }
  e = errno;
  free(mk);
  if (f == NULL ||
      fputs("written by commscale: the next run with this directory as its output "
            "replaces it as a whole\n",
            f) < 0 ||
      fclose(f) != 0) {
    cs_wdir_abort(d);
    return cs_error_set(err, CS_ERR_IO, "%s: cannot write: %s", dir, strerror(e ? e : EIO));
  }
  *out = d;
  return CS_OK;
}

const char *cs_wdir_tmp(const struct cs_wdir *d) {
  return d->tmp;
}

const char *cs_wdir_path(const struct cs_wdir *d) {
  return d->path;
}

enum cs_status cs_wdir_commit(struct cs_wdir *d, struct cs_error *err) {
  if (d == NULL) return CS_OK;
  sigset_t old;
  block(&old);
  int e = 0;
  char *aside = NULL;
  struct stat sb;
  /* Another run may commit into the same directory between the steps below (it finds no target
   * while this one has moved it aside): then this run's rename fails on the other's whole
   * output, which is set aside in turn and replaced, the later writer winning as with a file
   * rename; an old directory that cannot be put back is removed, never left beside. */
  for (int attempt = 0;; attempt++) {
    e = 0;
    if (lstat(d->target, &sb) == 0) { /* checked again: another run may have made it meanwhile */
      if (!S_ISDIR(sb.st_mode))
        e = ENOTDIR;
      else if ((e = replaceable(d->target)) == 0) {
        aside = cat2(d->target, ".oldXXXXXX");
        if (aside == NULL)
          e = ENOMEM;
        else if (mkdtemp(aside) == NULL || rename(d->target, aside) != 0) {
          e = errno;
          rmdir(aside);
          free(aside);
          aside = NULL;
          /* another run moved the target aside between the lstat and the rename: look again */
          if (e == ENOENT && attempt < 8) continue;
        }
      }
    } else if (errno != ENOENT) {
      e = errno;
    }
    if (e == 0 && rename(d->tmp, d->target) != 0) {
      e = errno;
      if (aside && rename(aside, d->target) != 0) rmtree(aside); /* put the old one back */
      free(aside);
      aside = NULL;
      if ((e == ENOTEMPTY || e == EEXIST) && attempt < 8) continue;
    } else if (e == 0 && aside) {
      rmtree(aside);
    }
    break;
  }
  if (e) rmtree(d->tmp);
  slot_del(d->slot);
  unblock(&old);
  free(aside);
  enum cs_status st = CS_OK;
  if (e == EEXIST)
    st = cs_error_set(err, CS_ERR_IO,
                      "%s: cannot write: it was replaced meanwhile by a directory "
                      "commscale did not write",
                      d->path);
  else if (e)
    st = cs_error_set(err, CS_ERR_IO, "%s: cannot write: %s", d->path, strerror(e));
  wdir_free(d);
  return st;
}

void cs_wdir_abort(struct cs_wdir *d) {
  if (d == NULL) return;
  rmtree(d->tmp);
  slot_del(d->slot);
  wdir_free(d);
}

int cs_wfile_track(const char *path) {
  return slot_add(path, SLOT_FILE);
}

void cs_wfile_untrack(int handle) {
  if (handle >= 0 && handle < NSLOTS) slot_del(handle);
}

/* ==== append-mode measurement files ========================================================= */

enum cs_status cs_wfile_lock_append(FILE *f, const char *path, struct cs_error *err) {
  if (flock(fileno(f), LOCK_EX | LOCK_NB) == 0) return CS_OK;
  int e = errno;
  if (e == EWOULDBLOCK) return cs_error_set(err, CS_ERR_IO, "%s: another run is writing it", path);
  if (e == ENOLCK || e == EOPNOTSUPP || e == EINVAL) return CS_OK; /* no locks here: go on */
  return cs_error_set(err, CS_ERR_IO, "%s: cannot lock: %s", path, strerror(e));
}

FILE *cs_wfile_open_append(const char *path, int truncate, struct cs_error *err) {
  FILE *f = fopen(path, "a");
  if (f == NULL) {
    cs_error_set(err, CS_ERR_IO, "%s: cannot append: %s", path, strerror(errno));
    return NULL;
  }
  if (cs_wfile_lock_append(f, path, err) != CS_OK) {
    fclose(f);
    return NULL;
  }
  struct stat sb;
  if (truncate && fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) &&
      ftruncate(fileno(f), 0) != 0) {
    cs_error_set(err, CS_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    fclose(f);
    return NULL;
  }
  return f;
}
