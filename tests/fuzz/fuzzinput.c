/* fuzzinput.c — see fuzzinput.h. */
#define _GNU_SOURCE
#include "fuzzinput.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

char *cs_fuzz_string(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) abort();
  if (size) memcpy(s, data, size);
  s[size] = '\0';
  return s;
}

const char *cs_fuzz_path(const uint8_t *data, size_t size) {
  static int fd = -1;
  static char path[64];
  if (fd < 0) {
    fd = memfd_create("cs-fuzz", 0);
    if (fd < 0) abort();
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  }
  if (ftruncate(fd, 0) != 0) abort();
  size_t done = 0;
  while (done < size) {
    ssize_t w = pwrite(fd, data + done, size - done, (off_t)done);
    if (w <= 0) abort();
    done += (size_t)w;
  }
  return path;
}

static char out_dir[128];
static char out_path[256];

static void remove_out(void) {
  if (out_path[0]) unlink(out_path);
  rmdir(out_dir);
}

/* A stream whose writes are accepted and dropped: no device file is opened. */
static ssize_t discard_write(void *cookie, const char *buf, size_t size) {
  (void)cookie, (void)buf;
  return (ssize_t)size;
}

FILE *cs_fuzz_sink(void) {
  static FILE *sink;
  cookie_io_functions_t io = {NULL, discard_write, NULL, NULL};
  if (!sink && !(sink = fopencookie(NULL, "w", io))) abort();
  return sink;
}

const char *cs_fuzz_out(const char *name) {
  if (!out_dir[0]) {
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(out_dir, sizeof out_dir, "%s/cs-fuzz-%ld", base, (long)getpid());
    if (mkdir(out_dir, 0700) != 0 && access(out_dir, W_OK) != 0) abort();
    atexit(remove_out);
  }
  snprintf(out_path, sizeof out_path, "%s/%s", out_dir, name);
  return out_path;
}
