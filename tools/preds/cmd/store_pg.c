/* PostgreSQL backend of the report store (store.h), through libpq: for a fleet of machines
 * sending reports to one server. Concurrent ingests are safe: each run is one transaction,
 * the run_id primary key makes a duplicate a no-op, and schema creation is serialized with
 * a transaction-scoped advisory lock. */
#include <postgresql/libpq-fe.h>   /* Debian: no -I needed, its siblings are included by "" */
#include <stdio.h>
#include <string.h>

#include "store.h"

static void *pg_open(const char *target, char *err, size_t errlen)
{
    PGconn *conn = PQconnectdb(target);
    if (!conn || PQstatus(conn) != CONNECTION_OK) {
        const char *why = conn ? PQerrorMessage(conn) : "out of memory";
        size_t n = strlen(why);
        while (n && (why[n - 1] == '\n' || why[n - 1] == ' '))
            n--;
        snprintf(err, errlen, "PostgreSQL: cannot connect: %.*s", (int)n, why);
        PQfinish(conn);
        return NULL;
    }
    /* quiet "relation already exists, skipping" notices of CREATE ... IF NOT EXISTS */
    PGresult *res = PQexec(conn, "SET client_min_messages TO warning");
    PQclear(res);
    return conn;
}

static int pg_exec(void *handle, const char *sql, int nparams, const char *const *params,
                   vigil_store_row_fn fn, void *arg, char *err, size_t errlen)
{
    PGconn *conn = handle;
    PGresult *res = PQexecParams(conn, sql, nparams, NULL, params, NULL, NULL, 0);
    ExecStatusType st = PQresultStatus(res);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        const char *why = PQerrorMessage(conn);
        size_t n = strlen(why);
        while (n && (why[n - 1] == '\n' || why[n - 1] == ' '))
            n--;
        snprintf(err, errlen, "PostgreSQL: %.*s", (int)n, why);
        PQclear(res);
        return -1;
    }
    if (fn && st == PGRES_TUPLES_OK) {
        int nrows = PQntuples(res), ncols = PQnfields(res);
        if (ncols > 32)
            ncols = 32;
        const char *cols[32];
        for (int r = 0; r < nrows; r++) {
            for (int c = 0; c < ncols; c++)
                cols[c] = PQgetisnull(res, r, c) ? NULL : PQgetvalue(res, r, c);
            if (fn(arg, ncols, cols) != 0)
                break;
        }
    }
    PQclear(res);
    return 0;
}

static void pg_close(void *conn)
{
    PQfinish(conn);
}

const struct vigil_store_backend vigil_store_postgres = {
    .name = "postgresql",
    .open = pg_open,
    .exec = pg_exec,
    .close = pg_close,
    .begin_write = "BEGIN",
    .schema_lock = "SELECT pg_advisory_xact_lock(7355608)",
};
