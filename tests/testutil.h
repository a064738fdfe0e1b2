/* testutil.h — helpers the cmocka tests share: relative-tolerance comparison of doubles (cmocka
 * 1.1.5 has none), temporary file paths, and writing a string to a file. */
#ifndef CS_TESTUTIL_H
#define CS_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

/* Fails the test unless |actual - expected| <= rel * |expected| (or <= rel when expected == 0). */
#define assert_close(actual, expected, rel)                                                        \
  cs_test_assert_close((actual), (expected), (rel), #actual, __FILE__, __LINE__)
void cs_test_assert_close(double actual, double expected, double rel, const char *expr,
                          const char *file, int line);

/* Writes a path "CS_TEST_TMP/name" into buf and returns buf. */
const char *cs_test_tmp(const char *name, char *buf, size_t len);

/* Creates file path holding text; fails the test if it cannot. */
void cs_test_write_file(const char *path, const char *text);

/* The whole of file path as a NUL-terminated string (free it); fails the test if it cannot. */
char *cs_test_read_file(const char *path);

#endif
