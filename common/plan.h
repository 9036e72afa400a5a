/* Plan files of adaptive bug isolation (seed 002 procedure 1): which predicate sites to count,
 * for one build. Specified in tools/preds/DESIGN.md ("Plan file"). Written by `vigil plan`,
 * read by the runtime at start-up (VIGIL_PLAN=file), which enables the listed sites' counters and
 * pins their functions to the instrumented copy when the counters are there only (common/abi.h).
 *
 *   vigil-plan 1
 *   module <tu_hash 16 hex> <nsites>
 *   site <tu_hash> <local index>
 *   end
 */
#ifndef VIGIL_PLAN_H
#define VIGIL_PLAN_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define VIGIL_PLAN_VERSION 1

struct vigil_plan_module {
    uint64_t tu_hash;
    uint32_t nsites;
    uint32_t line;            /* line of its `module` line, for messages */
};

struct vigil_plan_site {
    uint32_t module;          /* index into modules */
    uint32_t index;           /* local index in that module's site table (< nsites) */
    uint32_t line;            /* line of its `site` line, for messages */
};

struct vigil_plan {
    size_t nmodules;
    struct vigil_plan_module *modules;   /* tu hashes unique */
    size_t nsites;
    struct vigil_plan_site *sites;       /* unique, in file order */
};

/* Parse from memory; name is used in messages. Strict (module lines before their sites, hex
 * exactly 16 digits, site index < the module's nsites, no duplicates). Returns 0, or -1 with
 * "NAME:LINE: what was expected" in err (nothing to free then). */
int vigil_plan_parse(const char *text, size_t len, const char *name, struct vigil_plan *p,
                     char *err, size_t errlen);
void vigil_plan_free(struct vigil_plan *p);
/* Write a plan; 0, or -1 on I/O error. */
int vigil_plan_write(FILE *f, const struct vigil_plan *p);

#endif
