/* SQLite backend of the report store (store.h): one file, WAL journal so readers do not block
 * the writer, and a busy timeout so concurrent `vigil ingest` runs wait for each other
 * instead of failing. Statements are prepared once and kept (a few dozen distinct texts are
 * run per report, thousands of times in an ingest). */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

#define BUSY_TIMEOUT_MS 60000
#define CACHED_STATEMENTS 32

struct cached {
    char *sql;              /* NULL: free slot */
    sqlite3_stmt *st;
    int *param;             /* per SQL parameter position (1-based): k of its name $k */
    uint64_t used;          /* for least-recently-used eviction */
};

struct sqlite_store {
    sqlite3 *db;
    struct cached cache[CACHED_STATEMENTS];
    uint64_t clock;
};

static void drop(struct cached *c)
{
    sqlite3_finalize(c->st);
    free(c->sql);
    free(c->param);
    memset(c, 0, sizeof *c);
}

/* The prepared statement for sql, from the cache or new (then cached), with the k of each
 * parameter position's name $k (*param; looking names up per bind costs a scan of all names
 * per parameter); NULL with the error in err. */
static struct cached *statement(struct sqlite_store *s, const char *sql, char *err, size_t errlen)
{
    struct cached *victim = &s->cache[0];
    for (int i = 0; i < CACHED_STATEMENTS; i++) {
        struct cached *c = &s->cache[i];
        if (c->sql && strcmp(c->sql, sql) == 0) {
            c->used = ++s->clock;
            return c;
        }
        if (!c->sql || (victim->sql && c->used < victim->used))
            victim = c;
    }
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "SQLite: %s", sqlite3_errmsg(s->db));
        return NULL;
    }
    int n = sqlite3_bind_parameter_count(st);
    char *copy = strdup(sql);
    int *param = calloc((size_t)n + 1, sizeof *param);
    if (!copy || !param) {
        free(copy), free(param);
        sqlite3_finalize(st);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    for (int i = 1; i <= n; i++) {
        const char *name = sqlite3_bind_parameter_name(st, i);
        param[i] = name && name[0] == '$' ? atoi(name + 1) : 0;   /* 0: not ours, left NULL */
    }
    if (victim->sql)
        drop(victim);
    *victim = (struct cached){copy, st, param, ++s->clock};
    return victim;
}

/* Done with st: reset it (a statement left stepping would hold its read transaction). */
static void release(sqlite3_stmt *st)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

static void *sqlite_open(const char *target, char *err, size_t errlen)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(target, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "%s: cannot open SQLite database: %s", target,
                 db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
    char *msg = NULL;
    /* WAL is persistent in the file; setting it again is cheap. */
    if (sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON", NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, errlen, "%s: not a usable SQLite database: %s", target, msg ? msg : "?");
        sqlite3_free(msg);
        sqlite3_close(db);
        return NULL;
    }
    struct sqlite_store *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        sqlite3_close(db);
        return NULL;
    }
    s->db = db;
    return s;
}

static int sqlite_exec(void *handle, const char *sql, int nparams, const char *const *params,
                       vigil_store_row_fn fn, void *arg, char *err, size_t errlen)
{
    struct sqlite_store *s = handle;
    sqlite3 *db = s->db;
    struct cached *c = statement(s, sql, err, errlen);
    if (!c)
        return -1;
    sqlite3_stmt *st = c->st;
    for (int at = 1, n = sqlite3_bind_parameter_count(st); at <= n; at++) {
        int k = c->param[at];   /* $k: params[k - 1]; beyond nparams it stays NULL */
        if (k < 1 || k > nparams)
            continue;
        int rc = params[k - 1] ? sqlite3_bind_text(st, at, params[k - 1], -1, SQLITE_TRANSIENT)
                               : sqlite3_bind_null(st, at);
        if (rc != SQLITE_OK) {
            snprintf(err, errlen, "SQLite: binding $%d: %s", k, sqlite3_errmsg(db));
            release(st);
            return -1;
        }
    }
    int rc, stopped = 0;
    const char *cols[32];
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!fn || stopped)
            continue;
        int n = sqlite3_column_count(st);
        if (n > 32)
            n = 32;
        for (int c = 0; c < n; c++)
            cols[c] = (const char *)sqlite3_column_text(st, c);
        stopped = fn(arg, n, cols) != 0;
    }
    if (rc != SQLITE_DONE) {
        snprintf(err, errlen, "SQLite: %s", sqlite3_errmsg(db));
        release(st);
        return -1;
    }
    release(st);
    return 0;
}

static void sqlite_close(void *handle)
{
    struct sqlite_store *s = handle;
    for (int i = 0; i < CACHED_STATEMENTS; i++)
        if (s->cache[i].sql)
            drop(&s->cache[i]);
    sqlite3_close(s->db);
    free(s);
}

const struct vigil_store_backend vigil_store_sqlite = {
    .name = "sqlite",
    .open = sqlite_open,
    .exec = sqlite_exec,
    .close = sqlite_close,
    .begin_write = "BEGIN IMMEDIATE",   /* take the write lock first: no upgrade deadlocks */
    .schema_lock = NULL,
};
