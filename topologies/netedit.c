/* netedit.c — editing a loaded topology's network; see netedit.h. */
#include "netedit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

double cs_netedit_gbps_per_gpu(const struct cs_topology *t) {
  if (t->net.nics <= 0 || t->node.gpus <= 0) return 0;
  return t->net.nics * t->net.nic_bw * 8 / 1e9 / t->node.gpus;
}

void cs_netedit_set_gbps_per_gpu(struct cs_topology *t, double gbps) {
  if (t->net.nics <= 0) return;
  t->net.nic_bw = gbps * 1e9 / 8 * t->node.gpus / t->net.nics;
}

void cs_netedit_init(struct cs_netedit *e) {
  memset(e, 0, sizeof *e);
  e->sharp = e->nvls = e->transport = -1;
}

enum cs_status cs_netedit_parse_oversub(const struct cs_topology *t, const char *text,
                                        struct cs_netedit *e, struct cs_error *err) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", text);
  char *save = NULL;
  for (char *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(it, '=');
    if (!eq) return cs_error_set(err, CS_ERR_USAGE, "\"%s\": expected LEVEL=RATIO", it);
    *eq = '\0';
    int lv = -1;
    for (int i = 0; i < t->net.nlevels; i++)
      if (strcasecmp(t->net.level[i].name, it) == 0) lv = i;
    if (lv < 0) {
      char *end;
      long v = strtol(it, &end, 10);
      if (*end || v < 0 || v >= t->net.nlevels)
        return cs_error_set(err, CS_ERR_USAGE, "\"%s\": no such switch level on %s (it has %d)", it,
                            t->name, t->net.nlevels);
      lv = (int)v;
    }
    char *val = eq + 1, *colon = strchr(val, ':'), *end;
    double a = strtod(val, &end), b = 1;
    if (colon && end == colon) b = strtod(colon + 1, &end);
    if (*end || !(a > 0) || !(b > 0) || a / b < 1)
      return cs_error_set(err, CS_ERR_USAGE, "\"%s\": expected a ratio >= 1 such as 2:1 or 4", val);
    e->oversub[lv] = a / b;
  }
  return CS_OK;
}

enum cs_status cs_netedit_apply(struct cs_topology *t, const struct cs_netedit *e,
                                struct cs_error *err) {
  int any = e->rails || e->sharp >= 0 || e->transport >= 0 || e->latency > 0;
  for (int i = 0; i < CS_TOPO_MAX_LEVELS; i++)
    any |= e->oversub[i] > 0;
  if (!any) return CS_OK;
  if (t->net.nics <= 0)
    return cs_error_set(err, CS_ERR_USAGE, "%s has no network to edit", t->name);
  if (e->rails) {
    if (e->rails < 1 || e->rails > CS_TOPO_MAX_NICS)
      return cs_error_set(err, CS_ERR_USAGE, "rails must be 1..%d, got %d", CS_TOPO_MAX_NICS,
                          e->rails);
    double per_gpu = cs_netedit_gbps_per_gpu(t);
    t->net.nics = e->rails;
    for (int g = 0; g < t->node.gpus; g++) /* spread evenly, as the loader's default */
      t->node.nic_of_gpu[g] = (int)((long)g * e->rails / t->node.gpus);
    cs_netedit_set_gbps_per_gpu(t, per_gpu);
  }
  for (int i = 0; i < CS_TOPO_MAX_LEVELS; i++) {
    if (!(e->oversub[i] > 0)) continue;
    if (i >= t->net.nlevels)
      return cs_error_set(err, CS_ERR_USAGE, "%s has no switch level %d", t->name, i);
    if (e->oversub[i] < 1)
      return cs_error_set(err, CS_ERR_USAGE, "oversubscription must be >= 1, got %g",
                          e->oversub[i]);
    t->net.level[i].oversub = e->oversub[i];
  }
  if (e->sharp >= 0) t->net.sharp = e->sharp != 0;
  if (e->nvls >= 0) t->node.nvls = e->nvls != 0;
  if (e->transport >= 0) {
    if (e->transport >= CS_TOPO_TRANSPORTS)
      return cs_error_set(err, CS_ERR_USAGE, "no such transport (%d)", e->transport);
    const struct cs_topo_defaults *def = cs_topo_defaults();
    t->net.transport = e->transport;
    t->net.latency = def->transport[e->transport].latency;
    t->net.switch_latency = def->transport[e->transport].switch_latency;
    t->net.efficiency = def->transport[e->transport].efficiency;
  }
  if (e->latency > 0) t->net.latency = e->latency;
  return CS_OK;
}
