/* Shared by the files of statistical debugging's runtime part. */
#ifndef VIGIL_PREDS_H
#define VIGIL_PREDS_H
#include <vigil/tool.h>

#include <stddef.h>
#include <stdint.h>

extern struct vigil_tool preds_tool;

enum preds_collect { PREDS_SAMPLED, PREDS_ALL, PREDS_PLAN };

/* counters.c: from init, the collection mode in force (preds.collect, or plan when VIGIL_PLAN
 * is set); all and plan switch on the emitted counters as modules register. */
enum preds_collect preds_counters_start(const char *collect, int binary);
void preds_on_module(const struct vigil_module_info *m);
/* From fini: with verbose, the plan's modules that never registered. */
void preds_counters_fini(int verbose);

/* One monitored site of the emitted counters: its id, kind ("branch": count[0] false,
 * count[1] true; "return": < 0, == 0, > 0) and counts (flags in binary mode). */
struct preds_site {
    vigil_site_t site;
    const char *kind;
    uint64_t count[3];
};
/* Every monitored site, ids increasing per module, reached or not, until fn returns non-zero. */
size_t preds_counted_sites_each(int (*fn)(const struct preds_site *s, void *arg), void *arg);

#endif
