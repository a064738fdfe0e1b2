/* test_yamlcfg.c — the YAML reader and schema tables: values with units, defaults, --set, and a
 * table of hostile inputs each rejected with its line and column. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "yamlcfg.h"

struct nic {
  int rails;
  double speed;
  double lat;
  int sharp;
  char name[16];
  int transport;
  double os;
};
static const char *const transports[] = {"infiniband", "roce", "tcp", NULL};
static const struct cs_cfg_field fields[] = {
    {"rails", CS_CFG_INT, offsetof(struct nic, rails), 0, 0, 1, 64, "1", NULL, "NICs per node"},
    {"speed", CS_CFG_QTY, offsetof(struct nic, speed), 0, CS_UNIT_BANDWIDTH, 1e6, 1e15, NULL, NULL,
     "per NIC"},
    {"latency", CS_CFG_QTY, offsetof(struct nic, lat), 0, CS_UNIT_TIME, 0, 1, "2us", NULL,
     "per hop"},
    {"sharp", CS_CFG_BOOL, offsetof(struct nic, sharp), 0, 0, 0, 1, "false", NULL,
     "in-network reduction"},
    {"name", CS_CFG_STRING, offsetof(struct nic, name), 16, 0, 0, 0, "\"\"", NULL, "label"},
    {"transport", CS_CFG_ENUM, offsetof(struct nic, transport), 0, 0, 0, 0, "infiniband",
     transports, "kind"},
    {"oversubscription", CS_CFG_DOUBLE, offsetof(struct nic, os), 0, 0, 1, 64, "1", NULL, "ratio"},
};
#define NF (sizeof fields / sizeof fields[0])

static enum cs_status read_text(const char *text, struct nic *n, struct cs_error *err) {
  struct cs_yaml *d = NULL;
  enum cs_status st = cs_yaml_load_string(text, "t.yaml", &d, err);
  if (st == CS_OK) st = cs_cfg_read(d, cs_yaml_root(d), fields, NF, n, NULL, err);
  cs_yaml_free(d);
  return st;
}

static void good(void **state) {
  (void)state;
  struct nic n;
  memset(&n, 0, sizeof n);
  struct cs_error err = {0};
  assert_int_equal(read_text("speed: 400Gbps\nrails: 8\ntransport: RoCE\nsharp: true\n", &n, &err),
                   CS_OK);
  assert_int_equal(n.rails, 8);
  assert_close(n.speed, 50e9, 1e-12);
  assert_close(n.lat, 2e-6, 1e-12); /* default */
  assert_int_equal(n.sharp, 1);
  assert_int_equal(n.transport, 1);
  assert_close(n.os, 1, 0);
  assert_int_equal(cs_cfg_assign(fields, NF, &n, "latency=1.2us", &err), CS_OK);
  assert_close(n.lat, 1.2e-6, 1e-12);
  assert_int_equal(cs_cfg_assign(fields, NF, &n, "name=a: b", &err), CS_OK);
  assert_string_equal(n.name, "a: b");
  assert_int_equal(cs_cfg_assign(fields, NF, &n, "nope=1", &err), CS_ERR_USAGE);
  assert_int_equal(cs_cfg_assign(fields, NF, &n, "speed=400", &err), CS_ERR_USAGE);
  assert_non_null(strstr(err.msg, "no unit"));
}

static void bad(void **state) {
  (void)state;
  static const struct {
    const char *text;
    const char *where;
    const char *what;
  } cases[] = {
      {"speed: 400Gbps\nrailz: 8\n", "t.yaml:2:1:", "unknown key \"railz\""},
      {"speed: 400\n", "t.yaml:1:8:", "no unit"},
      {"speed: 400Gbps\nrails: 100\n", "t.yaml:2:8:", "from 1 to 64"},
      {"speed: 400Gbps\nrails: eight\n", "t.yaml:2:8:", "expected an integer"},
      {"rails: 8\n", "t.yaml:1:1:", "missing required key \"speed\""},
      {"speed: 400Gbps\nspeed: 200Gbps\n", "t.yaml:2:1:", "duplicate key"},
      {"speed: &a 400Gbps\nname: *a\n", "t.yaml:", "aliases"},
      {"speed: [400Gbps\n", "t.yaml:", "YAML syntax"},
      {"speed: 400Gbps\ntransport: carrier-pigeon\n",
       "t.yaml:2:12:", "expected one of infiniband, roce, tcp"},
      {"speed: 400Gbps\noversubscription: .nan\n", "t.yaml:2:19:", "finite number"},
      {"speed: 400Gbps\nname: this-name-is-far-too-long\n", "t.yaml:2:7:", "longer than 15"},
      {"speed: 400Gbps\nsharp: maybe\n", "t.yaml:2:8:", "true or false"},
      {"- a\n- b\n", "t.yaml:1:1:", "expected a mapping"},
      {"", "t.yaml:1:1:", "empty document"},
      {"speed: {a: 1}\n", "t.yaml:1:8:", "found a collection"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct nic n;
    struct cs_error err = {0};
    assert_int_not_equal(read_text(cases[i].text, &n, &err), CS_OK);
    if (!strstr(err.msg, cases[i].where) || !strstr(err.msg, cases[i].what))
      fail_msg("case %zu: \"%s\" lacks \"%s\" or \"%s\"", i, err.msg, cases[i].where,
               cases[i].what);
  }
}

static void deep(void **state) {
  (void)state;
  char text[1024] = "";
  for (int i = 0; i < 100; i++)
    strcat(text, "[");
  struct cs_yaml *d = NULL;
  struct cs_error err = {0};
  assert_int_not_equal(cs_yaml_load_string(text, "deep.yaml", &d, &err), CS_OK);
  assert_null(d);
  /* 100,000 brackets (unterminated, so the whole text is never valid YAML): refused at the
   * first bracket past the cap, not after the whole document was scanned (27 s before) */
  size_t n = 100000;
  char *big = malloc(n + 1);
  assert_non_null(big);
  memset(big, '[', n);
  big[n] = '\0';
  assert_int_equal(cs_yaml_load_string(big, "deep.yaml", &d, &err), CS_ERR_PARSE);
  assert_string_equal(err.msg, "deep.yaml:1:65: nesting deeper than 64 levels");
  assert_null(d);
  free(big);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(good), cmocka_unit_test(bad),
                                     cmocka_unit_test(deep)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
