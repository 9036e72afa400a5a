/* The report store of statistical debugging: feedback reports ingested into SQL (SQLite file
 * or PostgreSQL), aggregated into F(p), S(p), F(p observed), S(p observed) and NumF.
 * All SQL lives in store.c and is the same for both databases; a backend (store_sqlite.c,
 * store_pg.c) only runs statements with text parameters ($1, $2, ...) and text results.
 * Schema and semantics: tools/preds/DESIGN.md ("Report store"). */
#ifndef VIGIL_CMD_STORE_H
#define VIGIL_CMD_STORE_H
#include <stddef.h>
#include <stdint.h>

#include "scores.h"

#define VIGIL_STORE_DEFAULT "vigil.db"

/* Called per result row; columns are text (NULL for SQL NULL). Non-zero stops the query. */
typedef int (*vigil_store_row_fn)(void *arg, int ncols, const char *const *cols);

struct vigil_store_backend {
    const char *name;                 /* "sqlite", "postgresql" */
    /* Open (creating a SQLite file if needed); NULL with a reason in err. */
    void *(*open)(const char *target, char *err, size_t errlen);
    /* Run one statement with nparams text parameters; rows go to fn (may be NULL). */
    int (*exec)(void *db, const char *sql, int nparams, const char *const *params,
                vigil_store_row_fn fn, void *arg, char *err, size_t errlen);
    void (*close)(void *db);
    const char *begin_write;          /* starts a transaction that will write */
    const char *schema_lock;          /* serializes concurrent schema creation, or NULL */
};

extern const struct vigil_store_backend vigil_store_sqlite, vigil_store_postgres;

struct vigil_store;

/* target: "postgresql://..." or "postgres://..." (libpq URL), else a SQLite file path.
 * Creates the schema if missing. NULL with "what went wrong" in err. */
struct vigil_store *vigil_store_open(const char *target, char *err, size_t errlen);
void vigil_store_close(struct vigil_store *s);
const char *vigil_store_backend_name(const struct vigil_store *s);

/* One run, ready to insert: everything is parsed and checked before the transaction. */
#define VIGIL_STORE_SOURCE_MAX 128

struct vigil_store_observation {
    char tu_hash[17];                 /* module identity, 16 hex digits */
    uint32_t site_index;              /* local index in that module's site table */
    uint32_t kind;                    /* VIGIL_SITE_BRANCH / VIGIL_SITE_RETURN */
    uint64_t observed, count[3];
};

struct vigil_store_site {
    char tu_hash[17];
    uint32_t site_index, kind, line, column;
    const char *function, *file;
    char source[VIGIL_STORE_SOURCE_MAX];   /* the text of its source line, trimmed; "" if unread */
};

struct vigil_store_run {
    uint64_t run_id;                  /* 63-bit hash of run.txt: the idempotency key */
    const char *report_path, *program;
    int64_t pid;
    uint64_t start_unix_ns;
    int failed;
    const char *label_source;         /* "exit", "signal" or "oracle" */
    int exited, exit_status, signal;
    const char *stack;                /* hex pcs separated by spaces ("" for none) */
    const char *crash_path;           /* a fault signal struck here (run.txt crash), or NULL */
    uint64_t crash_file_offset;
    int crash_signal;
    const char *collect;
    int binary;
    size_t nobs;
    const struct vigil_store_observation *obs;
    size_t nsites;                    /* descriptions of the sites of its modules */
    const struct vigil_store_site *sites;
};

/* Insert one run in one transaction. Returns 1 (added), 0 (already in the store: nothing
 * changed), -1 (error in err; nothing was written). */
int vigil_store_add_run(struct vigil_store *s, const struct vigil_store_run *run,
                        char *err, size_t errlen);
/* 1 when the store already describes the sites of this module, 0 when not, -1 on error. */
/* Batches: after vigil_store_batch_begin, each added run is a savepoint in a transaction
 * that vigil_store_batch_commit ends (a run that fails or is already present still changes
 * nothing); without it, each run commits on its own. Commit returns 0, or -1 when the batch
 * was lost (its runs are not in the store). pending: runs added since the last commit. */
void vigil_store_batch_begin(struct vigil_store *s);
int vigil_store_batch_commit(struct vigil_store *s, char *err, size_t errlen);
size_t vigil_store_batch_pending(const struct vigil_store *s);
int vigil_store_has_module(struct vigil_store *s, const char *tu_hash, char *err, size_t errlen);

/* ---- Aggregation ---- */

struct vigil_store_pred {
    char tu_hash[17];
    uint32_t site_index, kind, pred;  /* pred: branch 0 false, 1 true; return 0 <0, 1 ==0, 2 >0 */
    struct vigil_pred_counts counts;
    uint64_t num_f;                   /* NumF of p: failing runs that counted its site (see aggregate_sql) */
    char function[128], file[512];    /* "" when the site table was not available */
    uint32_t line, column;            /* column 0: unknown (also stores from before columns) */
    char source[VIGIL_STORE_SOURCE_MAX];   /* its source line's text, "" when unknown */
};

struct vigil_store_totals {
    uint64_t num_f, num_s;            /* failing / successful runs (not excluded) */
};

/* A read session: one snapshot for several queries, with a private set of excluded runs
 * (for iterative elimination). */
int vigil_store_read_begin(struct vigil_store *s, char *err, size_t errlen);
void vigil_store_read_end(struct vigil_store *s);
/* Every predicate of every observed site, counted over the runs not excluded; malloc'd. */
int vigil_store_aggregate(struct vigil_store *s, struct vigil_store_pred **preds, size_t *npreds,
                          struct vigil_store_totals *totals, char *err, size_t errlen);
/* Failing and successful runs not excluded (inside a read session). */
int vigil_store_totals(struct vigil_store *s, struct vigil_store_totals *totals, char *err, size_t errlen);
/* Exclude every run in which predicate p was true (inside a read session). */
int vigil_store_exclude_true(struct vigil_store *s, const struct vigil_store_pred *p,
                             char *err, size_t errlen);

/* Failure causes of backward search: failing runs grouped by where a fault struck (the mapped
 * file and the offset of the faulting instruction in it), most runs first; malloc'd. */
struct vigil_store_cause {
    char path[1024];
    uint64_t file_offset;
    int signal;
    uint64_t runs;
};
int vigil_store_crash_causes(struct vigil_store *s, struct vigil_store_cause **causes, size_t *ncauses,
                             char *err, size_t errlen);
/* Exclude every failing run that did not crash in `path` at one of the n offsets (one cause:
 * the places of one source position, inside a read session): the search for one cause scores
 * its failures against the successful runs only. */
int vigil_store_exclude_other_failures(struct vigil_store *s, const char *path, const uint64_t *offsets, size_t n,
                                       char *err, size_t errlen);

/* A name for predicate pred of a site kind: "true", "false", "< 0", "== 0", "> 0". */
const char *vigil_pred_name(uint32_t kind, uint32_t pred);

#endif
