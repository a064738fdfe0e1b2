/* test_wfile.c — the write rules of wfile.h, one test each: a new file gets 0666 & ~umask; a
 * replaced file keeps its mode and is a new inode; abort and every commit error leave the old file
 * byte for byte and no temporary; a symlink (and a chain, and a dangling one) is kept and its
 * target replaced; a FIFO and a full character device are written through and never replaced
 * (the device's ENOSPC reported with the path); a directory, a missing directory and a
 * non-directory parent are refused; a set of files appears at once, replaces only a directory
 * commscale wrote, and never deletes a user's directory; SIGTERM removes the temporaries and
 * still kills; a second append-mode writer is refused by the lock.
 *
 * Every test works in its own directory under the build tree; the full device is a private node
 * made with mknod there (root only; skipped otherwise), never the system's /dev/full. */
#define _GNU_SOURCE /* mknod's S_IFCHR with makedev */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "wfile.h"

/* A fresh directory for one test; its path is written into buf. */
static const char *fresh_dir(const char *name, char *buf, size_t len) {
  char base[512];
  cs_test_tmp("", base, sizeof base);
  snprintf(buf, len, "%swfile_%s_XXXXXX", base, name);
  assert_non_null(mkdtemp(buf));
  return buf;
}

static void join(char *out, size_t len, const char *dir, const char *name) {
  if (snprintf(out, len, "%s/%s", dir, name) >= (int)len) fail_msg("path too long: %s", dir);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL) return NULL;
  static char buf[65536];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

/* The number of entries in dir besides "." and "..". */
static int entries(const char *dir) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL)
    if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) n++;
  closedir(d);
  return n;
}

static void write_all(const char *path, const char *text) {
  struct cs_wfile *w;
  struct cs_error err = {0};
  assert_int_equal(cs_wfile_open(path, &w, &err), CS_OK);
  fputs(text, cs_wfile_fp(w));
  assert_int_equal(cs_wfile_commit(w, &err), CS_OK);
}

static void new_file_gets_umask_mode(void **state) {
  (void)state;
  char dir[600], p[700];
  fresh_dir("new", dir, sizeof dir);
  join(p, sizeof p, dir, "out.csv");
  mode_t old = umask(027);
  write_all(p, "a,b\n1,2\n");
  umask(old);
  struct stat sb;
  assert_int_equal(stat(p, &sb), 0);
  assert_int_equal(sb.st_mode & 0777, 0640);
  assert_string_equal(slurp(p), "a,b\n1,2\n");
  assert_int_equal(entries(dir), 1); /* no temporary left */
}

static void replaced_file_keeps_mode_new_inode(void **state) {
  (void)state;
  char dir[600], p[700];
  fresh_dir("repl", dir, sizeof dir);
  join(p, sizeof p, dir, "out.txt");
  cs_test_write_file(p, "old\n");
  assert_int_equal(chmod(p, 0604), 0);
  struct stat before, after;
  assert_int_equal(stat(p, &before), 0);
  struct cs_wfile *w;
  struct cs_error err = {0};
  assert_int_equal(cs_wfile_open(p, &w, &err), CS_OK);
  assert_int_equal(cs_wfile_through(w), 0);
  assert_string_equal(cs_wfile_path(w), p);
  fputs("new\n", cs_wfile_fp(w));
  assert_string_equal(slurp(p), "old\n"); /* nothing visible before the commit */
  assert_int_equal(cs_wfile_commit(w, &err), CS_OK);
  assert_int_equal(stat(p, &after), 0);
  assert_int_equal(after.st_mode & 07777, 0604);
  assert_true(after.st_ino != before.st_ino);
  assert_string_equal(slurp(p), "new\n");
  assert_int_equal(entries(dir), 1);
}

static void abort_keeps_old_file(void **state) {
  (void)state;
  char dir[600], p[700];
  fresh_dir("abort", dir, sizeof dir);
  join(p, sizeof p, dir, "keep.yaml");
  cs_test_write_file(p, "old contents\n");
  struct cs_wfile *w;
  struct cs_error err = {0};
  assert_int_equal(cs_wfile_open(p, &w, &err), CS_OK);
  fputs("half a new fi", cs_wfile_fp(w));
  cs_wfile_abort(w);
  cs_wfile_abort(NULL);
  assert_string_equal(slurp(p), "old contents\n");
  assert_int_equal(entries(dir), 1);
}

/* The rename fails (the target became a directory): the error names the path and the reason, the
 * temporary is gone. */
static void commit_error_named_and_cleaned(void **state) {
  (void)state;
  char dir[600], p[700], inner[800];
  fresh_dir("commiterr", dir, sizeof dir);
  join(p, sizeof p, dir, "t.csv");
  cs_test_write_file(p, "old\n");
  struct cs_wfile *w;
  struct cs_error err = {0};
  assert_int_equal(cs_wfile_open(p, &w, &err), CS_OK);
  fputs("new\n", cs_wfile_fp(w));
  assert_int_equal(unlink(p), 0);
  assert_int_equal(mkdir(p, 0755), 0);
  join(inner, sizeof inner, p, "x");
  cs_test_write_file(inner, "x");
  assert_int_equal(cs_wfile_commit(w, &err), CS_ERR_IO);
  char want[900];
  snprintf(want, sizeof want, "%s: cannot write: ", p);
  assert_memory_equal(err.msg, want, strlen(want));
  assert_int_equal(entries(dir), 1);
}

static void symlinks_kept_targets_replaced(void **state) {
  (void)state;
  char dir[600], sub[700], target[800], link1[700], link2[700], dangling[700], newt[800];
  fresh_dir("link", dir, sizeof dir);
  join(sub, sizeof sub, dir, "sub");
  assert_int_equal(mkdir(sub, 0755), 0);
  join(target, sizeof target, sub, "cal.yaml");
  cs_test_write_file(target, "old\n");
  join(link1, sizeof link1, dir, "link1.yaml");
  join(link2, sizeof link2, dir, "link2.yaml");
  assert_int_equal(symlink("sub/cal.yaml", link1), 0); /* relative */
  assert_int_equal(symlink(link1, link2), 0);          /* absolute, a chain */
  write_all(link2, "new\n");
  struct stat sb;
  assert_int_equal(lstat(link1, &sb), 0);
  assert_true(S_ISLNK(sb.st_mode));
  assert_int_equal(lstat(link2, &sb), 0);
  assert_true(S_ISLNK(sb.st_mode));
  assert_string_equal(slurp(target), "new\n");
  assert_int_equal(entries(sub), 1); /* the temporary was beside the target, and is gone */
  assert_int_equal(entries(dir), 3);
  /* a dangling link: the file it names is created, the link kept */
  join(dangling, sizeof dangling, dir, "dangling.csv");
  assert_int_equal(symlink("sub/later.csv", dangling), 0);
  write_all(dangling, "made\n");
  assert_int_equal(lstat(dangling, &sb), 0);
  assert_true(S_ISLNK(sb.st_mode));
  join(newt, sizeof newt, sub, "later.csv");
  assert_string_equal(slurp(newt), "made\n");
  /* a loop is an error, not a hang */
  char loop[700];
  join(loop, sizeof loop, dir, "loop");
  assert_int_equal(symlink("loop", loop), 0);
  struct cs_wfile *w = NULL;
  struct cs_error err = {0};
  assert_int_equal(cs_wfile_open(loop, &w, &err), CS_ERR_IO);
  assert_null(w);
  assert_non_null(strstr(err.msg, "cannot create"));
}

static void fifo_written_through(void **state) {
  (void)state;
  char dir[600], fifo[700], got[700];
  fresh_dir("fifo", dir, sizeof dir);
  join(fifo, sizeof fifo, dir, "pipe");
  join(got, sizeof got, dir, "got");
  assert_int_equal(mkfifo(fifo, 0600), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) { /* the reader: copies the FIFO into a file */
    FILE *in = fopen(fifo, "r"), *out = fopen(got, "w");
    if (!in || !out) _exit(3);
    int c;
    while ((c = fgetc(in)) != EOF)
      fputc(c, out);
    _exit(fclose(out) == 0 ? 0 : 4);
  }
  struct cs_wfile *w;
  struct cs_error err = {0};
  assert_int_equal(cs_wfile_open(fifo, &w, &err), CS_OK);
  assert_int_equal(cs_wfile_through(w), 1);
  fputs("through the pipe\n", cs_wfile_fp(w));
  assert_int_equal(cs_wfile_commit(w, &err), CS_OK);
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_string_equal(slurp(got), "through the pipe\n");
  struct stat sb;
  assert_int_equal(lstat(fifo, &sb), 0);
  assert_true(S_ISFIFO(sb.st_mode));
  assert_int_equal(entries(dir), 2);
}

static void full_device_reported_never_replaced(void **state) {
  (void)state;
  char dir[600], dev[700];
  fresh_dir("full", dir, sizeof dir);
  join(dev, sizeof dev, dir, "full");
  if (mknod(dev, S_IFCHR | 0666, makedev(1, 7)) != 0) {
    print_message("skipped: mknod of a private full device needs root (%s)\n", strerror(errno));
    skip();
  }
  struct cs_wfile *w;
  struct cs_error err = {0};
  assert_int_equal(cs_wfile_open(dev, &w, &err), CS_OK);
  assert_int_equal(cs_wfile_through(w), 1);
  for (int i = 0; i < 2000; i++)
    fputs("0123456789abcdef0123456789abcdef\n", cs_wfile_fp(w));
  assert_int_equal(cs_wfile_commit(w, &err), CS_ERR_IO);
  char want[900];
  snprintf(want, sizeof want, "%s: cannot write: %s", dev, strerror(ENOSPC));
  assert_string_equal(err.msg, want);
  struct stat sb;
  assert_int_equal(lstat(dev, &sb), 0);
  assert_true(S_ISCHR(sb.st_mode));
  assert_int_equal(entries(dir), 1);
  /* the same through a symlink to the device */
  char link[700];
  join(link, sizeof link, dir, "link");
  assert_int_equal(symlink("full", link), 0);
  assert_int_equal(cs_wfile_open(link, &w, &err), CS_OK);
  assert_int_equal(cs_wfile_through(w), 1);
  fputs("x\n", cs_wfile_fp(w));
  assert_int_equal(cs_wfile_commit(w, &err), CS_ERR_IO);
  assert_int_equal(lstat(dev, &sb), 0);
  assert_true(S_ISCHR(sb.st_mode));
}

static void bad_targets_refused(void **state) {
  (void)state;
  char dir[600], p[700], file[700];
  fresh_dir("bad", dir, sizeof dir);
  struct cs_wfile *w = NULL;
  struct cs_error err = {0};
  /* a directory */
  assert_int_equal(cs_wfile_open(dir, &w, &err), CS_ERR_IO);
  assert_null(w);
  char want[900];
  snprintf(want, sizeof want, "%s: cannot create: %s", dir, strerror(EISDIR));
  assert_string_equal(err.msg, want);
  /* an empty name */
  assert_int_equal(cs_wfile_open("", &w, &err), CS_ERR_IO);
  assert_null(w);
  /* a directory that does not exist */
  join(p, sizeof p, dir, "nodir/x.csv");
  assert_int_equal(cs_wfile_open(p, &w, &err), CS_ERR_IO);
  snprintf(want, sizeof want, "%s: cannot create: %s", p, strerror(ENOENT));
  assert_string_equal(err.msg, want);
  /* a file as a directory */
  join(file, sizeof file, dir, "afile");
  cs_test_write_file(file, "x");
  join(p, sizeof p, dir, "afile/x.csv");
  assert_int_equal(cs_wfile_open(p, &w, &err), CS_ERR_IO);
  snprintf(want, sizeof want, "%s: cannot create: %s", p, strerror(ENOTDIR));
  assert_string_equal(err.msg, want);
  /* an unwritable directory (root writes anyway: then only the ordinary rules are checked) */
  char ro[700];
  join(ro, sizeof ro, dir, "ro");
  assert_int_equal(mkdir(ro, 0555), 0);
  join(p, sizeof p, ro, "x.csv");
  if (geteuid() != 0) {
    assert_int_equal(cs_wfile_open(p, &w, &err), CS_ERR_IO);
    snprintf(want, sizeof want, "%s: cannot create: %s", p, strerror(EACCES));
    assert_string_equal(err.msg, want);
  }
  assert_int_equal(entries(dir), 2);
}

static void stdout_written_through(void **state) {
  (void)state;
  const char *names[] = {NULL, "-", "/dev/stdout"};
  for (int i = 0; i < 3; i++) {
    struct cs_wfile *w;
    struct cs_error err = {0};
    assert_int_equal(cs_wfile_open(names[i], &w, &err), CS_OK);
    assert_ptr_equal(cs_wfile_fp(w), stdout);
    assert_int_equal(cs_wfile_through(w), 1);
    assert_int_equal(cs_wfile_commit(w, &err), CS_OK);
  }
}

static void dir_set_atomic_and_safe(void **state) {
  (void)state;
  char dir[600], out[700], f[900], user[700];
  fresh_dir("wdir", dir, sizeof dir);
  join(out, sizeof out, dir, "report");
  struct cs_wdir *d;
  struct cs_error err = {0};
  /* a new directory appears only at the commit */
  assert_int_equal(cs_wdir_open(out, &d, &err), CS_OK);
  assert_string_equal(cs_wdir_path(d), out);
  join(f, sizeof f, cs_wdir_tmp(d), "report.md");
  write_all(f, "first\n");
  assert_int_equal(access(out, F_OK), -1);
  assert_int_equal(cs_wdir_commit(d, &err), CS_OK);
  join(f, sizeof f, out, "report.md");
  assert_string_equal(slurp(f), "first\n");
  assert_int_equal(entries(out), 2); /* report.md and the marker */
  /* a second run replaces it as a whole: a file of the first run does not survive */
  assert_int_equal(cs_wdir_open(out, &d, &err), CS_OK);
  join(f, sizeof f, cs_wdir_tmp(d), "other.txt");
  write_all(f, "second\n");
  assert_int_equal(cs_wdir_commit(d, &err), CS_OK);
  assert_int_equal(entries(out), 2);
  join(f, sizeof f, out, "other.txt");
  assert_string_equal(slurp(f), "second\n");
  assert_int_equal(entries(dir), 1);
  /* an aborted run leaves the old set */
  assert_int_equal(cs_wdir_open(out, &d, &err), CS_OK);
  join(f, sizeof f, cs_wdir_tmp(d), "other.txt");
  write_all(f, "third\n");
  cs_wdir_abort(d);
  cs_wdir_abort(NULL);
  join(f, sizeof f, out, "other.txt");
  assert_string_equal(slurp(f), "second\n");
  assert_int_equal(entries(dir), 1);
  /* a user's directory is never replaced */
  join(user, sizeof user, dir, "home");
  assert_int_equal(mkdir(user, 0755), 0);
  join(f, sizeof f, user, "thesis.tex");
  cs_test_write_file(f, "precious");
  assert_int_equal(cs_wdir_open(user, &d, &err), CS_ERR_IO);
  assert_non_null(strstr(err.msg, "was not written by commscale"));
  assert_string_equal(slurp(f), "precious");
  /* nor a file */
  assert_int_equal(cs_wdir_open(f, &d, &err), CS_ERR_IO);
  assert_non_null(strstr(err.msg, strerror(ENOTDIR)));
  assert_int_equal(entries(dir), 2);
}

/* Forks a child that installs the signal cleanup, runs prepare(arg, msg) (which leaves its
 * temporaries behind and fills the msglen bytes of msg; a non-zero return is the child's exit
 * status) and then waits for a signal. Returns the child's pid once msg has come back through a
 * pipe: from then on the child only waits. */
static pid_t child_until_ready(int (*prepare)(void *arg, void *msg), void *arg, void *msg,
                               size_t msglen) {
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    cs_wfile_install_signal_cleanup();
    int rc = prepare(arg, msg);
    if (rc != 0) _exit(rc);
    if (write(fds[1], msg, msglen) != (ssize_t)msglen) _exit(2);
    for (;;)
      pause();
  }
  close(fds[1]);
  assert_int_equal(read(fds[0], msg, msglen), (ssize_t)msglen);
  close(fds[0]);
  return pid;
}

/* Sends SIGTERM to the child and asserts that it died of it. */
static void sigterm_kills(pid_t pid) {
  assert_int_equal(kill(pid, SIGTERM), 0);
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFSIGNALED(status));
  assert_int_equal(WTERMSIG(status), SIGTERM);
}

/* The child of sigterm_removes_temporaries: arg = {file path, set path}; opens both, writes a
 * file into the set's temporary and half a line into the file's. */
static int open_file_and_set(void *arg, void *msg) {
  char **paths = arg;
  struct cs_wfile *w;
  struct cs_wdir *d;
  if (cs_wfile_open(paths[0], &w, NULL) != CS_OK || cs_wdir_open(paths[1], &d, NULL) != CS_OK)
    return 3;
  char f[900];
  snprintf(f, sizeof f, "%s/sub", cs_wdir_tmp(d));
  mkdir(f, 0755);
  snprintf(f, sizeof f, "%s/sub/a.dat", cs_wdir_tmp(d));
  FILE *x = fopen(f, "w");
  if (x == NULL) return 4;
  fputs("data", x);
  fclose(x);
  fputs("half", cs_wfile_fp(w));
  fflush(cs_wfile_fp(w));
  *(char *)msg = 'r';
  return 0;
}

/* A child writes a file and a directory set, then is killed with SIGTERM before committing: it
 * dies of SIGTERM, the old file is intact and no temporary is left. */
static void sigterm_removes_temporaries(void **state) {
  (void)state;
  char dir[600], p[700], out[700];
  fresh_dir("sig", dir, sizeof dir);
  join(p, sizeof p, dir, "old.csv");
  join(out, sizeof out, dir, "set");
  cs_test_write_file(p, "old\n");
  char *paths[2] = {p, out}, ready;
  pid_t pid = child_until_ready(open_file_and_set, paths, &ready, 1);
  assert_int_equal(entries(dir), 3); /* old.csv and the two temporaries */
  sigterm_kills(pid);
  assert_string_equal(slurp(p), "old\n");
  assert_int_equal(entries(dir), 1);
}

/* The child of sigterm_stops_spawned_writer: arg = the set's path; starts a shell creating files
 * in the set's temporary as fast as it can, and returns its pid in msg once the first exists. */
static int spawn_writer(void *arg, void *msg) {
  struct cs_wdir *d;
  if (cs_wdir_open(arg, &d, NULL) != CS_OK) return 3;
  char *argv[] = {"sh", "-c", "i=0; while :; do i=$((i+1)); : >\"$0/f$i\" || exit 0; done",
                  (char *)cs_wdir_tmp(d), NULL};
  long w = 0;
  if (cs_wfile_spawn(&w, "sh", NULL, argv) != 0) return 4;
  char f[900];
  snprintf(f, sizeof f, "%s/f1", cs_wdir_tmp(d));
  while (access(f, F_OK) != 0)
    usleep(1000);
  *(pid_t *)msg = (pid_t)w;
  return 0;
}

/* A writer started with cs_wfile_spawn (a shell creating files in the temporary directory as
 * fast as it can, as gnuplot writes images into a report's) is stopped by the cleanup signal
 * before the directory is emptied: the run dies of SIGTERM, nothing is left beside, and the
 * writer is gone, not orphaned and still writing. */
static void sigterm_stops_spawned_writer(void **state) {
  (void)state;
  char dir[600], out[700];
  fresh_dir("spawn", dir, sizeof dir);
  join(out, sizeof out, dir, "set");
  pid_t writer = 0;
  pid_t pid = child_until_ready(spawn_writer, out, &writer, sizeof writer);
  assert_true(writer > 0);
  sigterm_kills(pid);
  assert_int_equal(entries(dir), 0);
  errno = 0;
  assert_int_equal(kill(writer, 0), -1); /* reaped by the handler */
  assert_int_equal(errno, ESRCH);
  usleep(50000);
  assert_int_equal(entries(dir), 0);
}

static void append_lock_refuses_second_writer(void **state) {
  (void)state;
  char dir[600], p[700];
  fresh_dir("lock", dir, sizeof dir);
  join(p, sizeof p, dir, "meas.csv");
  FILE *a = fopen(p, "a"), *b = fopen(p, "a");
  assert_non_null(a);
  assert_non_null(b);
  struct cs_error err = {0};
  assert_int_equal(cs_wfile_lock_append(a, p, &err), CS_OK);
  assert_int_equal(cs_wfile_lock_append(b, p, &err), CS_ERR_IO);
  char want[900];
  snprintf(want, sizeof want, "%s: another run is writing it", p);
  assert_string_equal(err.msg, want);
  fclose(a); /* the lock goes with the stream */
  assert_int_equal(cs_wfile_lock_append(b, p, &err), CS_OK);
  fclose(b);
  /* a fresh run empties the file only once it holds the lock: a second fresh run is refused and
   * the first one's rows stay */
  a = cs_wfile_open_append(p, 1, &err);
  assert_non_null(a);
  fputs("row 1\n", a);
  fflush(a);
  assert_null(cs_wfile_open_append(p, 1, &err));
  assert_string_equal(err.msg, want);
  assert_null(cs_wfile_open_append(p, 0, &err));
  assert_string_equal(slurp(p), "row 1\n");
  fclose(a);
  a = cs_wfile_open_append(p, 0, &err); /* a resumed run appends */
  assert_non_null(a);
  fputs("row 2\n", a);
  fclose(a);
  assert_string_equal(slurp(p), "row 1\nrow 2\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(new_file_gets_umask_mode),
      cmocka_unit_test(replaced_file_keeps_mode_new_inode),
      cmocka_unit_test(abort_keeps_old_file),
      cmocka_unit_test(commit_error_named_and_cleaned),
      cmocka_unit_test(symlinks_kept_targets_replaced),
      cmocka_unit_test(fifo_written_through),
      cmocka_unit_test(full_device_reported_never_replaced),
      cmocka_unit_test(bad_targets_refused),
      cmocka_unit_test(stdout_written_through),
      cmocka_unit_test(dir_set_atomic_and_safe),
      cmocka_unit_test(sigterm_removes_temporaries),
      cmocka_unit_test(sigterm_stops_spawned_writer),
      cmocka_unit_test(append_lock_refuses_second_writer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
