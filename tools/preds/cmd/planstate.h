/* The search state of `vigil plan` (adaptive bug isolation, seed 002 procedure 1): what the
 * forward or backward search has monitored and explored so far, kept between rounds in a text
 * file beside the plan (`--state FILE`, default BINARY.state). Specified in docs/formats.md
 * ("Plan search state"). Read and written only by `vigil plan` (tools/preds/cmd/plan.c).
 *
 *   vigil-plan-state 1
 *   iteration <n>                                   exactly once, before every other line
 *   cause <signal> <file offset hex> <path>         backward search only; path percent-escaped
 *   monitored <tu_hash> <site>
 *   planned <tu_hash> <site>                        the last plan's sites
 *   explored <tu_hash> <site> 0|1                   the predicate false (0) or true (1)
 *   from <tu_hash> <site> <tu_hash> <site> <pred>   the predicate whose vicinity planned a site
 *   end
 *
 * A state belongs to one build: every tu_hash must be a site table of the binary and every site
 * below that table's nsites. The parser sees the binary through a small view (tu_hash and nsites
 * per table), so it is pure and fuzzed (tools/preds/tests/fuzz/fuzz_planstate.c). */
#ifndef VIGIL_PLANSTATE_H
#define VIGIL_PLANSTATE_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "store.h"

#define VIGIL_PLAN_STATE_VERSION 1

/* What the state file is checked against: the binary's site tables, in table order. */
struct vigil_state_table {
    uint64_t tu_hash;
    uint32_t nsites;
};

/* A set of (table, site): one bitmap per table, nsites / 8 + 1 bytes each. */
struct vigil_siteset {
    uint8_t **bits;
    size_t ntables;
};

static inline int vigil_siteset_has(const struct vigil_siteset *s, uint32_t t, uint32_t i)
{
    return s->bits[t][i / 8] >> (i % 8) & 1;
}
static inline void vigil_siteset_add(struct vigil_siteset *s, uint32_t t, uint32_t i)
{
    s->bits[t][i / 8] |= (uint8_t)(1u << (i % 8));
}
/* Empty set over the tables; 0, or -1 when out of memory (nothing to free then). */
int vigil_siteset_init(struct vigil_siteset *s, const struct vigil_state_table *tables, size_t ntables);
void vigil_siteset_free(struct vigil_siteset *s);

/* The predicate whose exploration planned a site (forward search): a gate found there is
 * explored with that predicate's score. */
struct vigil_plan_origin {
    uint32_t set, table, site, pred;   /* set 0: none (the initial set) */
};

struct vigil_plan_state {
    const struct vigil_state_table *tables;   /* the view it was made for (not owned) */
    size_t ntables;
    unsigned iteration;             /* rounds planned so far (< UINT32_MAX) */
    int has_cause;                  /* backward search: the failure cause it follows */
    struct vigil_store_cause cause; /* path, file_offset and signal; runs is not kept */
    struct vigil_siteset monitored, explored_true, explored_false, last_plan;
    struct vigil_plan_origin **origin;   /* per table, per site */
};

/* An empty state (iteration 0, no cause, empty sets) over the tables; 0, or -1 when out of
 * memory (nothing to free then). */
int vigil_plan_state_init(struct vigil_plan_state *st, const struct vigil_state_table *tables, size_t ntables);
void vigil_plan_state_free(struct vigil_plan_state *st);

/* Parse a state file from memory into st (fresh from vigil_plan_state_init); name is used in
 * messages. Strict: every line must match the grammar, a site listed at most once per key,
 * numbers plain decimal without sign, tu hashes 16 lowercase hex digits of the view's tables.
 * Returns 0, or -1 with "NAME:LINE: what was expected" in err (st is then partly filled). */
int vigil_plan_state_parse(const char *text, size_t len, const char *name, struct vigil_plan_state *st,
                           char *err, size_t errlen);
/* Write the state (the format above); 0, or -1 on I/O error. */
int vigil_plan_state_write(FILE *f, const struct vigil_plan_state *st);

/* Read a state file: 1 read, 0 there is none (no such file), -1 with "PATH..." in err. */
int vigil_plan_state_load(const char *path, struct vigil_plan_state *st, char *err, size_t errlen);
/* Write a state file atomically: to a temporary file beside it, renamed into place; on any
 * failure the old file is left as it was. 0, or -1 with "PATH: reason" in err. */
int vigil_plan_state_save(const char *path, const struct vigil_plan_state *st, char *err, size_t errlen);

#endif
