/* The report store: every SQL statement of vigil, identical for SQLite and PostgreSQL
 * (parameters $1..$n, ON CONFLICT DO NOTHING, RETURNING, temporary tables: both have them). */
#include "store.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sitefmt.h"

#define SCHEMA_VERSION "1"
#define ROWS_PER_INSERT 100

struct vigil_store {
    const struct vigil_store_backend *be;
    void *db;
    int batching;        /* vigil_store_batch_begin: runs share transactions */
    int open_tx;         /* a batch's transaction is open */
    size_t pending;      /* runs added in it, not yet committed */
};

/* One schema for both databases. Counts above 2^63-1 are clamped (BIGINT is signed). */
static const char *const schema[] = {
    "CREATE TABLE IF NOT EXISTS vigil_meta ("
    " key TEXT PRIMARY KEY,"
    " value TEXT NOT NULL)",
    /* one row per process; run_id is a hash of its run.txt, so re-ingesting is a no-op */
    "CREATE TABLE IF NOT EXISTS runs ("
    " run_id BIGINT PRIMARY KEY,"
    " report_path TEXT NOT NULL,"
    " program TEXT NOT NULL,"
    " pid BIGINT NOT NULL,"
    " start_unix_ns BIGINT NOT NULL,"
    " failed INTEGER NOT NULL,"             /* 1 failure, 0 success */
    " label_source TEXT NOT NULL,"          /* exit | signal | oracle */
    " exit_status INTEGER,"                 /* NULL when killed by a signal */
    " signal INTEGER,"                      /* NULL when it exited */
    " stack TEXT NOT NULL,"                 /* failing runs: hex pcs where it ended */
    " collect TEXT NOT NULL,"
    " binary_counts INTEGER NOT NULL)",
    /* site descriptions from the binaries' site tables, keyed by module identity */
    "CREATE TABLE IF NOT EXISTS sites ("
    " tu_hash TEXT NOT NULL,"
    " site_index INTEGER NOT NULL,"
    " kind INTEGER NOT NULL,"
    " function TEXT NOT NULL,"
    " file TEXT NOT NULL,"
    " line INTEGER NOT NULL,"
    " PRIMARY KEY (tu_hash, site_index))",
    /* predicate counts: c0,c1 (branch false,true) or c0,c1,c2 (return <0,==0,>0) */
    "CREATE TABLE IF NOT EXISTS observations ("
    " run_id BIGINT NOT NULL REFERENCES runs (run_id),"
    " tu_hash TEXT NOT NULL,"
    " site_index INTEGER NOT NULL,"
    " kind INTEGER NOT NULL,"
    " observed BIGINT NOT NULL,"
    " c0 BIGINT NOT NULL,"
    " c1 BIGINT NOT NULL,"
    " c2 BIGINT NOT NULL,"
    " PRIMARY KEY (run_id, tu_hash, site_index))",
    "CREATE INDEX IF NOT EXISTS observations_by_site ON observations (tu_hash, site_index)",
    /* where a run died of a fault signal (run.txt `crash`): the failure cause of backward
     * search; a table of its own so that older stores gain it without a migration */
    "CREATE TABLE IF NOT EXISTS crashes ("
    " run_id BIGINT PRIMARY KEY REFERENCES runs (run_id),"
    " signal INTEGER NOT NULL,"
    " path TEXT NOT NULL,"
    " file_offset BIGINT NOT NULL)",
    /* a site's column and the text of its source line (vigil rank shows the condition); a
     * table of its own so that older stores gain it without a migration */
    "CREATE TABLE IF NOT EXISTS site_source ("
    " tu_hash TEXT NOT NULL,"
    " site_index INTEGER NOT NULL,"
    " col INTEGER NOT NULL,"
    " source TEXT NOT NULL,"
    " PRIMARY KEY (tu_hash, site_index))",
    "INSERT INTO vigil_meta (key, value) VALUES ('schema_version', '" SCHEMA_VERSION "')"
    " ON CONFLICT (key) DO NOTHING",
};

/* F(p), S(p), F(p observed), S(p observed) per predicate, over the runs not excluded. A run
 * observed a site when its observed count is > 0; p was true when its count is > 0. NumF of
 * p: the failing runs that counted p's site, reached or not. A sampled run may see any site
 * (its report lists the observed ones only); a complete or planned run lists every site it
 * counted, with observed 0 when not reached. In a plan store each round counts other sites,
 * and the failing runs of rounds that did not count a site say nothing about it. */
static const char aggregate_sql[] =
    "WITH r AS (SELECT run_id, failed, collect FROM runs"
    "           WHERE run_id NOT IN (SELECT run_id FROM excluded_runs)),"
    " counted AS (SELECT o.tu_hash, o.site_index, SUM(r.failed) AS num_f"
    "       FROM observations o JOIN r ON r.run_id = o.run_id WHERE r.collect <> 'sampled'"
    "       GROUP BY o.tu_hash, o.site_index),"
    " o AS (SELECT o.tu_hash, o.site_index, o.kind, o.c0, o.c1, o.c2, r.failed"
    "       FROM observations o JOIN r ON r.run_id = o.run_id WHERE o.observed > 0),"
    " p AS (SELECT tu_hash, site_index, kind, 0 AS pred, c0 AS n, failed FROM o"
    "       UNION ALL SELECT tu_hash, site_index, kind, 1, c1, failed FROM o"
    "       UNION ALL SELECT tu_hash, site_index, kind, 2, c2, failed FROM o WHERE kind = 6)"
    " SELECT p.tu_hash, p.site_index, p.kind, p.pred,"
    "  SUM(CASE WHEN p.n > 0 AND p.failed = 1 THEN 1 ELSE 0 END),"
    "  SUM(CASE WHEN p.n > 0 AND p.failed = 0 THEN 1 ELSE 0 END),"
    "  SUM(p.failed), SUM(1 - p.failed),"
    "  s.function, s.file, s.line, ss.col, ss.source,"
    "  COALESCE(c.num_f, 0) + (SELECT COALESCE(SUM(failed), 0) FROM r WHERE collect = 'sampled')"
    " FROM p LEFT JOIN sites s ON s.tu_hash = p.tu_hash AND s.site_index = p.site_index"
    "  LEFT JOIN site_source ss ON ss.tu_hash = p.tu_hash AND ss.site_index = p.site_index"
    "  LEFT JOIN counted c ON c.tu_hash = p.tu_hash AND c.site_index = p.site_index"
    " GROUP BY p.tu_hash, p.site_index, p.kind, p.pred, s.function, s.file, s.line, ss.col, ss.source, c.num_f"
    " ORDER BY p.tu_hash, p.site_index, p.pred";

static const char totals_sql[] =
    "SELECT COALESCE(SUM(failed), 0), COALESCE(SUM(1 - failed), 0) FROM runs"
    " WHERE run_id NOT IN (SELECT run_id FROM excluded_runs)";

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int run(struct vigil_store *s, const char *sql, int nparams, const char *const *params,
               vigil_store_row_fn fn, void *arg, char *err, size_t errlen)
{
    return s->be->exec(s->db, sql, nparams, params, fn, arg, err, errlen);
}

static int run0(struct vigil_store *s, const char *sql, char *err, size_t errlen)
{
    return run(s, sql, 0, NULL, NULL, NULL, err, errlen);
}

static void rollback(struct vigil_store *s)
{
    char ignored[256];
    run0(s, "ROLLBACK", ignored, sizeof ignored);
}

static int is_postgres_url(const char *target)
{
    return strncmp(target, "postgresql://", 13) == 0 || strncmp(target, "postgres://", 11) == 0;
}

struct vigil_store *vigil_store_open(const char *target, char *err, size_t errlen)
{
    struct vigil_store *s = calloc(1, sizeof *s);
    if (!s) {
        fail(err, errlen, "out of memory");
        return NULL;
    }
    s->be = is_postgres_url(target) ? &vigil_store_postgres : &vigil_store_sqlite;
    s->db = s->be->open(target, err, errlen);
    if (!s->db) {
        free(s);
        return NULL;
    }
    char why[512];
    if (run0(s, s->be->begin_write, why, sizeof why) != 0)
        goto bad;
    if (s->be->schema_lock && run0(s, s->be->schema_lock, why, sizeof why) != 0)
        goto bad_tx;
    for (size_t i = 0; i < sizeof schema / sizeof schema[0]; i++)
        if (run0(s, schema[i], why, sizeof why) != 0)
            goto bad_tx;
    if (run0(s, "COMMIT", why, sizeof why) != 0)
        goto bad_tx;
    return s;
bad_tx:
    rollback(s);
bad:
    fail(err, errlen, "%s: creating the schema: %s", target, why);
    vigil_store_close(s);
    return NULL;
}

void vigil_store_close(struct vigil_store *s)
{
    if (!s)
        return;
    s->be->close(s->db);
    free(s);
}

const char *vigil_store_backend_name(const struct vigil_store *s)
{
    return s->be->name;
}

/* ---- Ingest ---- */

static int has_row(void *arg, int ncols, const char *const *cols)
{
    *(int *)arg = 1;
    return 0;
}

int vigil_store_has_module(struct vigil_store *s, const char *tu_hash, char *err, size_t errlen)
{
    int found = 0;
    const char *params[1] = {tu_hash};
    if (run(s, "SELECT 1 FROM sites WHERE tu_hash = $1 LIMIT 1", 1, params, has_row, &found,
            err, errlen) != 0)
        return -1;
    return found;
}

static void fmt_i64(char *buf, uint64_t v)
{
    snprintf(buf, 24, "%" PRIu64, v > INT64_MAX ? (uint64_t)INT64_MAX : v);
}

/* A multi-row INSERT: "INSERT ... VALUES ($1,...,$k), ($k+1,...), ..." + suffix. */
static char *values_sql(const char *head, int ncols, int nrows, const char *suffix)
{
    size_t cap = strlen(head) + strlen(suffix) + (size_t)nrows * ncols * 10 + 64;
    char *sql = malloc(cap);
    if (!sql)
        return NULL;
    size_t at = (size_t)snprintf(sql, cap, "%s VALUES ", head);
    int k = 1;
    for (int r = 0; r < nrows; r++) {
        at += (size_t)snprintf(sql + at, cap - at, "%s(", r ? ", " : "");
        for (int c = 0; c < ncols; c++)
            at += (size_t)snprintf(sql + at, cap - at, "%s$%d", c ? ", " : "", k++);
        at += (size_t)snprintf(sql + at, cap - at, ")");
    }
    snprintf(sql + at, cap - at, "%s", suffix);
    return sql;
}

#define OBS_COLS 8
#define SITE_COLS 6

static int insert_observations(struct vigil_store *s, const char *run_id,
                               const struct vigil_store_run *run_in, char *err, size_t errlen)
{
    char text[ROWS_PER_INSERT * OBS_COLS][24];
    const char *params[ROWS_PER_INSERT * OBS_COLS];
    for (size_t start = 0; start < run_in->nobs; start += ROWS_PER_INSERT) {
        int nrows = (int)(run_in->nobs - start < ROWS_PER_INSERT ? run_in->nobs - start : ROWS_PER_INSERT);
        for (int r = 0; r < nrows; r++) {
            const struct vigil_store_observation *o = &run_in->obs[start + (size_t)r];
            const char **p = &params[r * OBS_COLS];
            char (*t)[24] = &text[r * OBS_COLS];
            p[0] = run_id;
            p[1] = o->tu_hash;
            snprintf(t[2], 24, "%u", o->site_index);
            snprintf(t[3], 24, "%u", o->kind);
            fmt_i64(t[4], o->observed);
            for (int k = 0; k < 3; k++)
                fmt_i64(t[5 + k], o->count[k]);
            for (int c = 2; c < OBS_COLS; c++)
                p[c] = t[c];
        }
        char *sql = values_sql("INSERT INTO observations (run_id, tu_hash, site_index, kind,"
                               " observed, c0, c1, c2)", OBS_COLS, nrows, "");
        if (!sql)
            return fail(err, errlen, "out of memory");
        int rc = run(s, sql, nrows * OBS_COLS, params, NULL, NULL, err, errlen);
        free(sql);
        if (rc != 0)
            return -1;
    }
    return 0;
}

static int insert_sites(struct vigil_store *s, const struct vigil_store_run *run_in,
                        char *err, size_t errlen)
{
    char text[ROWS_PER_INSERT * SITE_COLS][24];
    const char *params[ROWS_PER_INSERT * SITE_COLS];
    for (size_t start = 0; start < run_in->nsites; start += ROWS_PER_INSERT) {
        int nrows = (int)(run_in->nsites - start < ROWS_PER_INSERT ? run_in->nsites - start : ROWS_PER_INSERT);
        for (int r = 0; r < nrows; r++) {
            const struct vigil_store_site *v = &run_in->sites[start + (size_t)r];
            const char **p = &params[r * SITE_COLS];
            char (*t)[24] = &text[r * SITE_COLS];
            snprintf(t[1], 24, "%u", v->site_index);
            snprintf(t[2], 24, "%u", v->kind);
            snprintf(t[5], 24, "%u", v->line);
            p[0] = v->tu_hash;
            p[1] = t[1];
            p[2] = t[2];
            p[3] = v->function;
            p[4] = v->file;
            p[5] = t[5];
        }
        char *sql = values_sql("INSERT INTO sites (tu_hash, site_index, kind, function, file, line)",
                               SITE_COLS, nrows, " ON CONFLICT (tu_hash, site_index) DO NOTHING");
        if (!sql)
            return fail(err, errlen, "out of memory");
        int rc = run(s, sql, nrows * SITE_COLS, params, NULL, NULL, err, errlen);
        free(sql);
        if (rc != 0)
            return -1;
        /* the same rows' columns and source text: (tu_hash, site_index, col, source) */
        for (int r = 0; r < nrows; r++) {
            const struct vigil_store_site *v = &run_in->sites[start + (size_t)r];
            const char **p = &params[r * 4];
            char (*t)[24] = &text[r * SITE_COLS];
            snprintf(t[2], 24, "%u", v->column);
            p[0] = v->tu_hash;
            p[1] = t[1];
            p[2] = t[2];
            p[3] = v->source;
        }
        sql = values_sql("INSERT INTO site_source (tu_hash, site_index, col, source)", 4, nrows,
                         " ON CONFLICT (tu_hash, site_index) DO NOTHING");
        if (!sql)
            return fail(err, errlen, "out of memory");
        rc = run(s, sql, nrows * 4, params, NULL, NULL, err, errlen);
        free(sql);
        if (rc != 0)
            return -1;
    }
    return 0;
}

void vigil_store_batch_begin(struct vigil_store *s)
{
    s->batching = 1;
}

size_t vigil_store_batch_pending(const struct vigil_store *s)
{
    return s->pending;
}

int vigil_store_batch_commit(struct vigil_store *s, char *err, size_t errlen)
{
    if (!s->open_tx)
        return 0;
    s->open_tx = 0;
    s->pending = 0;
    if (run0(s, "COMMIT", err, errlen) != 0) {
        rollback(s);
        return -1;
    }
    return 0;
}

/* One run's statements: a transaction of its own, or a savepoint in the batch's. */
static int run_begin(struct vigil_store *s, char *err, size_t errlen)
{
    if (!s->batching)
        return run0(s, s->be->begin_write, err, errlen);
    if (!s->open_tx) {
        if (run0(s, s->be->begin_write, err, errlen) != 0)
            return -1;
        s->open_tx = 1;
    }
    return run0(s, "SAVEPOINT vigil_run", err, errlen);
}

static int run_commit(struct vigil_store *s, char *err, size_t errlen)
{
    if (!s->batching)
        return run0(s, "COMMIT", err, errlen);
    if (run0(s, "RELEASE SAVEPOINT vigil_run", err, errlen) != 0)
        return -1;
    s->pending++;
    return 0;
}

static void run_rollback(struct vigil_store *s)
{
    if (!s->batching) {
        rollback(s);
        return;
    }
    char ignored[256];
    run0(s, "ROLLBACK TO SAVEPOINT vigil_run", ignored, sizeof ignored);
    run0(s, "RELEASE SAVEPOINT vigil_run", ignored, sizeof ignored);
}

int vigil_store_add_run(struct vigil_store *s, const struct vigil_store_run *r, char *err, size_t errlen)
{
    char run_id[24], pid[24], start[24], failed[4], exit_status[16], signal[16], binary[4];
    snprintf(run_id, sizeof run_id, "%" PRIu64, r->run_id & INT64_MAX);
    snprintf(pid, sizeof pid, "%lld", (long long)r->pid);
    fmt_i64(start, r->start_unix_ns);
    snprintf(failed, sizeof failed, "%d", r->failed ? 1 : 0);
    snprintf(exit_status, sizeof exit_status, "%d", r->exit_status);
    snprintf(signal, sizeof signal, "%d", r->signal);
    snprintf(binary, sizeof binary, "%d", r->binary ? 1 : 0);
    const char *params[] = {
        run_id, r->report_path, r->program, pid, start, failed, r->label_source,
        r->exited ? exit_status : NULL, r->exited ? NULL : signal, r->stack, r->collect, binary,
    };
    if (run_begin(s, err, errlen) != 0)
        return -1;
    int added = 0;
    if (run(s, "INSERT INTO runs (run_id, report_path, program, pid, start_unix_ns, failed,"
               " label_source, exit_status, signal, stack, collect, binary_counts)"
               " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
               " ON CONFLICT (run_id) DO NOTHING RETURNING run_id",
            (int)(sizeof params / sizeof params[0]), params, has_row, &added, err, errlen) != 0)
        goto bad;
    if (!added) {   /* already ingested (maybe by a concurrent ingest): change nothing */
        run_rollback(s);
        return 0;
    }
    if (insert_sites(s, r, err, errlen) != 0 || insert_observations(s, run_id, r, err, errlen) != 0)
        goto bad;
    if (r->crash_path) {
        char crash_signal[16], offset[24];
        snprintf(crash_signal, sizeof crash_signal, "%d", r->crash_signal);
        fmt_i64(offset, r->crash_file_offset);
        const char *cp[] = {run_id, crash_signal, r->crash_path, offset};
        if (run(s, "INSERT INTO crashes (run_id, signal, path, file_offset) VALUES ($1, $2, $3, $4)", 4, cp,
                NULL, NULL, err, errlen) != 0)
            goto bad;
    }
    if (run_commit(s, err, errlen) != 0)
        goto bad;
    return 1;
bad:
    run_rollback(s);
    return -1;
}

/* ---- Aggregation ---- */

int vigil_store_read_begin(struct vigil_store *s, char *err, size_t errlen)
{
    if (run0(s, "BEGIN", err, errlen) != 0)
        return -1;
    if (run0(s, "CREATE TEMPORARY TABLE IF NOT EXISTS excluded_runs (run_id BIGINT PRIMARY KEY)",
             err, errlen) != 0 ||
        run0(s, "DELETE FROM excluded_runs", err, errlen) != 0) {
        rollback(s);
        return -1;
    }
    return 0;
}

void vigil_store_read_end(struct vigil_store *s)
{
    rollback(s);   /* the session only wrote its temporary exclusions */
}

struct pred_list {
    struct vigil_store_pred *items;
    size_t n, cap;
    int bad;
};

static uint64_t to_u64(const char *s)
{
    return s ? strtoull(s, NULL, 10) : 0;
}

static int add_pred(void *arg, int ncols, const char *const *cols)
{
    struct pred_list *l = arg;
    if (ncols != 14) {
        l->bad = 1;
        return 1;
    }
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 256;
        void *m = realloc(l->items, ncap * sizeof *l->items);
        if (!m) {
            l->bad = 1;
            return 1;
        }
        l->items = m;
        l->cap = ncap;
    }
    struct vigil_store_pred *p = &l->items[l->n++];
    memset(p, 0, sizeof *p);
    snprintf(p->tu_hash, sizeof p->tu_hash, "%s", cols[0] ? cols[0] : "");
    p->site_index = (uint32_t)to_u64(cols[1]);
    p->kind = (uint32_t)to_u64(cols[2]);
    p->pred = (uint32_t)to_u64(cols[3]);
    p->counts.f = to_u64(cols[4]);
    p->counts.s = to_u64(cols[5]);
    p->counts.f_obs = to_u64(cols[6]);
    p->counts.s_obs = to_u64(cols[7]);
    snprintf(p->function, sizeof p->function, "%s", cols[8] ? cols[8] : "");
    snprintf(p->file, sizeof p->file, "%s", cols[9] ? cols[9] : "");
    p->line = (uint32_t)to_u64(cols[10]);
    p->column = (uint32_t)to_u64(cols[11]);
    snprintf(p->source, sizeof p->source, "%s", cols[12] ? cols[12] : "");
    p->num_f = to_u64(cols[13]);
    return 0;
}

static int get_totals(void *arg, int ncols, const char *const *cols)
{
    struct vigil_store_totals *t = arg;
    if (ncols == 2) {
        t->num_f = to_u64(cols[0]);
        t->num_s = to_u64(cols[1]);
    }
    return 0;
}

int vigil_store_totals(struct vigil_store *s, struct vigil_store_totals *totals, char *err, size_t errlen)
{
    memset(totals, 0, sizeof *totals);
    return run(s, totals_sql, 0, NULL, get_totals, totals, err, errlen);
}

int vigil_store_aggregate(struct vigil_store *s, struct vigil_store_pred **preds, size_t *npreds,
                          struct vigil_store_totals *totals, char *err, size_t errlen)
{
    struct pred_list l = {0};
    memset(totals, 0, sizeof *totals);
    if (run(s, totals_sql, 0, NULL, get_totals, totals, err, errlen) != 0 ||
        run(s, aggregate_sql, 0, NULL, add_pred, &l, err, errlen) != 0) {
        free(l.items);
        return -1;
    }
    if (l.bad) {
        free(l.items);
        return fail(err, errlen, "out of memory or unexpected result shape");
    }
    *preds = l.items;
    *npreds = l.n;
    return 0;
}

int vigil_store_exclude_true(struct vigil_store *s, const struct vigil_store_pred *p,
                             char *err, size_t errlen)
{
    /* the count column is chosen from a fixed list, never from input text */
    static const char *const sql[3] = {
        "INSERT INTO excluded_runs SELECT DISTINCT run_id FROM observations"
        " WHERE tu_hash = $1 AND site_index = $2 AND c0 > 0 ON CONFLICT (run_id) DO NOTHING",
        "INSERT INTO excluded_runs SELECT DISTINCT run_id FROM observations"
        " WHERE tu_hash = $1 AND site_index = $2 AND c1 > 0 ON CONFLICT (run_id) DO NOTHING",
        "INSERT INTO excluded_runs SELECT DISTINCT run_id FROM observations"
        " WHERE tu_hash = $1 AND site_index = $2 AND c2 > 0 ON CONFLICT (run_id) DO NOTHING",
    };
    if (p->pred > 2)
        return fail(err, errlen, "predicate %u out of range", p->pred);
    char index[16];
    snprintf(index, sizeof index, "%u", p->site_index);
    const char *params[2] = {p->tu_hash, index};
    return run(s, sql[p->pred], 2, params, NULL, NULL, err, errlen);
}

struct cause_list {
    struct vigil_store_cause *items;
    size_t n;
    int bad;
};

static int add_cause(void *arg, int ncols, const char *const *cols)
{
    struct cause_list *l = arg;
    if (ncols < 4 || !cols[0] || !cols[1] || !cols[2] || !cols[3])
        return 0;
    void *grown = realloc(l->items, (l->n + 1) * sizeof *l->items);
    if (!grown) {
        l->bad = 1;
        return 1;
    }
    l->items = grown;
    struct vigil_store_cause *c = &l->items[l->n++];
    snprintf(c->path, sizeof c->path, "%s", cols[0]);
    c->file_offset = to_u64(cols[1]);
    c->signal = atoi(cols[2]);
    c->runs = to_u64(cols[3]);
    return 0;
}

int vigil_store_crash_causes(struct vigil_store *s, struct vigil_store_cause **causes, size_t *ncauses,
                             char *err, size_t errlen)
{
    struct cause_list l = {0};
    *causes = NULL;
    *ncauses = 0;
    if (run(s, "SELECT c.path, c.file_offset, MIN(c.signal), COUNT(*) FROM crashes c JOIN runs r"
               " ON r.run_id = c.run_id WHERE r.failed = 1 GROUP BY c.path, c.file_offset"
               " ORDER BY COUNT(*) DESC, c.path, c.file_offset", 0, NULL, add_cause, &l, err, errlen) != 0 || l.bad) {
        free(l.items);
        return l.bad ? fail(err, errlen, "out of memory") : -1;
    }
    *causes = l.items;
    *ncauses = l.n;
    return 0;
}

int vigil_store_exclude_other_failures(struct vigil_store *s, const char *path, const uint64_t *offsets, size_t n,
                                       char *err, size_t errlen)
{
    /* the offsets are numbers formatted here, so they go into the text; the path is a parameter */
    size_t cap = 160 + 24 * (n + 1);
    char *sql = malloc(cap);
    if (!sql)
        return fail(err, errlen, "out of memory");
    size_t len = (size_t)snprintf(sql, cap, "INSERT INTO excluded_runs SELECT run_id FROM runs WHERE failed = 1 AND "
                                  "run_id NOT IN (SELECT run_id FROM crashes WHERE path = $1 AND file_offset IN (");
    for (size_t i = 0; i < n; i++) {
        char offset[24];
        fmt_i64(offset, offsets[i]);
        len += (size_t)snprintf(sql + len, cap - len, "%s%s", i ? ", " : "", offset);
    }
    snprintf(sql + len, cap - len, "%s)) ON CONFLICT (run_id) DO NOTHING", n ? "" : "NULL");
    const char *params[1] = {path};
    int rc = run(s, sql, 1, params, NULL, NULL, err, errlen);
    free(sql);
    return rc;
}

const char *vigil_pred_name(uint32_t kind, uint32_t pred)
{
    static const char *const branch[] = {"false", "true"};
    static const char *const ret[] = {"< 0", "== 0", "> 0"};
    static const char *const cases[] = {"not taken", "taken"};
    if (kind == VIGIL_SITE_BRANCH && pred < 2)
        return branch[pred];
    if (kind == VIGIL_SITE_CASE && pred < 2)
        return cases[pred];
    if (kind == VIGIL_SITE_RETURN && pred < 3)
        return ret[pred];
    return "?";
}
