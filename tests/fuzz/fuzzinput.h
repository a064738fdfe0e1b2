/* fuzzinput.h — turning a libFuzzer input into what a parser takes: a NUL-terminated string or a
 * file path.
 *
 * Parsers that read a path get a memfd (an anonymous in-memory file) named through
 * /proc/self/fd, so each fuzzing process has its own file and nothing touches the disk. The memfd
 * is created once per process and rewritten for every input.
 */
#ifndef CS_FUZZINPUT_H
#define CS_FUZZINPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A malloc'd copy of data with a NUL appended; the caller frees it. Aborts on allocation failure
 * (a fuzzing harness has nothing better to do). */
char *cs_fuzz_string(const uint8_t *data, size_t size);

/* Writes data to this process's memfd and returns its path ("/proc/self/fd/N"), valid until the
 * next call. Aborts when the memfd cannot be created or written. */
const char *cs_fuzz_path(const uint8_t *data, size_t size);

/* Creates an empty directory of its own for this process (under /dev/shm when present, else /tmp)
 * once, and returns path NAME inside it for outputs that are written through rename. The
 * directory and the last such file are removed at exit. */
const char *cs_fuzz_out(const char *name);

/* A stream that discards what is written to it, opened once per process, for harnesses that run
 * a writer over what a reader accepted. Aborts when it cannot be opened. */
FILE *cs_fuzz_sink(void);

#endif
