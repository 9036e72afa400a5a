/* SQLite backend of the report store (store.h): one file, WAL journal so readers do not block
 * the writer, and a busy timeout so concurrent `vigil ingest` runs wait for each other
 * instead of failing. */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "store.h"

#define BUSY_TIMEOUT_MS 60000

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
    return db;
}

static int sqlite_exec(void *handle, const char *sql, int nparams, const char *const *params,
                       vigil_store_row_fn fn, void *arg, char *err, size_t errlen)
{
    sqlite3 *db = handle;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "SQLite: %s", sqlite3_errmsg(db));
        return -1;
    }
    for (int i = 0; i < nparams; i++) {
        char name[16];
        snprintf(name, sizeof name, "$%d", i + 1);
        int at = sqlite3_bind_parameter_index(st, name);
        if (at == 0)
            continue;   /* a parameter the statement does not use */
        int rc = params[i] ? sqlite3_bind_text(st, at, params[i], -1, SQLITE_TRANSIENT)
                           : sqlite3_bind_null(st, at);
        if (rc != SQLITE_OK) {
            snprintf(err, errlen, "SQLite: binding $%d: %s", i + 1, sqlite3_errmsg(db));
            sqlite3_finalize(st);
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
        sqlite3_finalize(st);
        return -1;
    }
    sqlite3_finalize(st);
    return 0;
}

static void sqlite_close(void *db)
{
    sqlite3_close(db);
}

const struct vigil_store_backend vigil_store_sqlite = {
    .name = "sqlite",
    .open = sqlite_open,
    .exec = sqlite_exec,
    .close = sqlite_close,
    .begin_write = "BEGIN IMMEDIATE",   /* take the write lock first: no upgrade deadlocks */
    .schema_lock = NULL,
};
