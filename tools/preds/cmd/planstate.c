/* Search state file of `vigil plan`: reader and writers (grammar in planstate.h and
 * docs/formats.md; lines, header and numbers in textfmt.h). */
#include "planstate.h"
#include "savefile.h"
#include "textfmt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_LINE 4096     /* the longest line: cause with a path of 1023 bytes, each escaped */
#define MAX_FILE ((size_t)256 << 20)

int vigil_siteset_init(struct vigil_siteset *s, const struct vigil_state_table *tables, size_t ntables)
{
    s->ntables = ntables;
    s->bits = calloc(ntables + 1, sizeof *s->bits);
    if (!s->bits)
        return -1;
    for (size_t t = 0; t < ntables; t++)
        if (!(s->bits[t] = calloc(tables[t].nsites / 8 + 1, 1))) {
            vigil_siteset_free(s);
            return -1;
        }
    return 0;
}

void vigil_siteset_free(struct vigil_siteset *s)
{
    for (size_t t = 0; s->bits && t < s->ntables; t++)
        free(s->bits[t]);
    free(s->bits);
    s->bits = NULL;
    s->ntables = 0;
}

int vigil_plan_state_init(struct vigil_plan_state *st, const struct vigil_state_table *tables, size_t ntables)
{
    memset(st, 0, sizeof *st);
    st->tables = tables;
    st->ntables = ntables;
    if (vigil_siteset_init(&st->monitored, tables, ntables) != 0 ||
        vigil_siteset_init(&st->explored_true, tables, ntables) != 0 ||
        vigil_siteset_init(&st->explored_false, tables, ntables) != 0 ||
        vigil_siteset_init(&st->last_plan, tables, ntables) != 0 ||
        !(st->origin = calloc(ntables + 1, sizeof *st->origin)))
        goto oom;
    for (size_t t = 0; t < ntables; t++)
        if (!(st->origin[t] = calloc((size_t)tables[t].nsites + 1, sizeof **st->origin)))
            goto oom;
    return 0;
oom:
    vigil_plan_state_free(st);
    return -1;
}

void vigil_plan_state_free(struct vigil_plan_state *st)
{
    vigil_siteset_free(&st->monitored);
    vigil_siteset_free(&st->explored_true);
    vigil_siteset_free(&st->explored_false);
    vigil_siteset_free(&st->last_plan);
    for (size_t t = 0; st->origin && t < st->ntables; t++)
        free(st->origin[t]);
    free(st->origin);
    st->origin = NULL;
}

/* ---- Parser ---- */

static const struct vigil_text_format state_format = {
    .magic = "vigil-plan-state", .min_version = VIGIL_PLAN_STATE_VERSION,
    .max_version = VIGIL_PLAN_STATE_VERSION, .what = "plan state file", .quote = '`',
};

/* A site: a tu_hash of one of the view's tables (16 lowercase hex digits, as the writer prints
 * it) and a local index below that table's nsites. 0, or -1 with the message written. */
static int parse_site(struct vigil_text_reader *rd, const struct vigil_plan_state *st, const char *hash_s,
                      const char *site_s, uint32_t *table, uint32_t *site)
{
    uint64_t hash, v;
    if (vigil_text_hex(hash_s, VIGIL_TEXT_HEX_LOWERCASE, 16, 16, &hash) != 0)
        return vigil_text_fail(rd, "expected a tu_hash (16 lowercase hex digits), got `%.40s`", hash_s);
    size_t t = 0;
    while (t < st->ntables && st->tables[t].tu_hash != hash)
        t++;
    if (t == st->ntables)
        return vigil_text_fail(rd, "tu_hash %s is not a site table of this binary (expected the state of this build)",
                               hash_s);
    if (vigil_text_decimal(site_s, UINT32_MAX, &v) != 0)
        return vigil_text_fail(rd, "expected a site index (a decimal number), got `%.40s`", site_s);
    if (v >= st->tables[t].nsites)
        return vigil_text_fail(rd, "site %" PRIu64 " out of range: table %s has %u sites", v, hash_s,
                               st->tables[t].nsites);
    *table = (uint32_t)t;
    *site = (uint32_t)v;
    return 0;
}

/* monitored|planned <tu_hash> <site>, explored <tu_hash> <site> 0|1 */
static int set_line(struct vigil_text_reader *rd, struct vigil_plan_state *st, char **f, int n)
{
    int explored = strcmp(f[0], "explored") == 0;
    uint64_t pred = 0;
    if (n != (explored ? 4 : 3))
        return vigil_text_fail(rd, explored ? "expected `explored <tu_hash> <site> 0|1`"
                                            : "expected `%s <tu_hash> <site>`", f[0]);
    uint32_t t, i;
    if (parse_site(rd, st, f[1], f[2], &t, &i) != 0)
        return -1;
    if (explored && vigil_text_decimal(f[3], 1, &pred) != 0)
        return vigil_text_fail(rd, "expected the explored predicate 0 (false) or 1 (true), got `%.40s`", f[3]);
    struct vigil_siteset *s = !explored ? (f[0][0] == 'm' ? &st->monitored : &st->last_plan)
                              : pred ? &st->explored_true : &st->explored_false;
    if (vigil_siteset_has(s, t, i))
        return vigil_text_fail(rd, "`%s %s %s%s%s` listed twice", f[0], f[1], f[2], explored ? " " : "",
                               explored ? f[3] : "");
    vigil_siteset_add(s, t, i);
    return 0;
}

/* from <tu_hash> <site> <tu_hash> <site> <pred> */
static int from_line(struct vigil_text_reader *rd, struct vigil_plan_state *st, char **f, int n)
{
    if (n != 6)
        return vigil_text_fail(rd, "expected `from <tu_hash> <site> <tu_hash> <site> <pred>`");
    uint32_t t, i, ot, oi;
    uint64_t pred;
    if (parse_site(rd, st, f[1], f[2], &t, &i) != 0 || parse_site(rd, st, f[3], f[4], &ot, &oi) != 0)
        return -1;
    if (vigil_text_decimal(f[5], 2, &pred) != 0)
        return vigil_text_fail(rd, "expected the predicate 0, 1 or 2, got `%.40s`", f[5]);
    if (st->origin[t][i].set)
        return vigil_text_fail(rd, "second `from` line for site %s %s", f[1], f[2]);
    st->origin[t][i] = (struct vigil_plan_origin){1, ot, oi, (uint32_t)pred};
    return 0;
}

/* cause <signal> <file offset hex> <path percent-escaped> */
static int cause_line(struct vigil_text_reader *rd, struct vigil_plan_state *st, char **f, int n)
{
    uint64_t sig, off;
    if (n != 4)
        return vigil_text_fail(rd, "expected `cause <signal> <file offset hex> <path, percent-escaped>`");
    if (st->has_cause)
        return vigil_text_fail(rd, "second `cause` line (a state follows one cause)");
    if (vigil_text_decimal(f[1], INT32_MAX, &sig) != 0)
        return vigil_text_fail(rd, "expected a signal number (decimal), got `%.40s`", f[1]);
    if (vigil_text_hex(f[2], VIGIL_TEXT_HEX_LOWERCASE, 1, 16, &off) != 0)
        return vigil_text_fail(rd, "expected a file offset (1 to 16 lowercase hex digits), got `%.40s`", f[2]);
    if (vigil_unescape(f[3]) != 0)
        return vigil_text_fail(rd, "malformed %%XX escape in the cause path");
    if (strlen(f[3]) >= sizeof st->cause.path)
        return vigil_text_fail(rd, "cause path longer than %zu bytes", sizeof st->cause.path - 1);
    st->cause.signal = (int)sig;
    st->cause.file_offset = off;
    strcpy(st->cause.path, f[3]);
    st->has_cause = 1;
    return 0;
}

int vigil_plan_state_parse(const char *text, size_t len, const char *name, struct vigil_plan_state *st,
                           char *err, size_t errlen)
{
    struct vigil_text_reader rd;
    vigil_text_begin(&rd, &state_format, text, len, name ? name : "state", err, errlen);
    char line[MAX_LINE];
    char *f[6];
    int got, has_iteration = 0;
    while ((got = vigil_text_next_line(&rd, line, sizeof line)) > 0) {
        if (got == VIGIL_TEXT_END) {
            if (!has_iteration)
                return vigil_text_fail(&rd, "expected an `iteration <n>` line before `end`");
            continue;
        }
        int n = vigil_text_split(&rd, line, f, 6);
        if (n < 0)
            return -1;
        if (strcmp(f[0], "iteration") == 0) {
            uint64_t v;
            if (has_iteration)
                return vigil_text_fail(&rd, "second `iteration` line");
            if (n != 2 || vigil_text_decimal(f[1], UINT32_MAX - 1, &v) != 0)
                return vigil_text_fail(&rd, "expected `iteration <n>` (a decimal number 0..%u)", UINT32_MAX - 1);
            st->iteration = (unsigned)v;
            has_iteration = 1;
            continue;
        }
        if (!has_iteration)
            return vigil_text_fail(&rd, "expected `iteration <n>` right after the header, got `%.40s`", f[0]);
        int rc;
        if (strcmp(f[0], "monitored") == 0 || strcmp(f[0], "planned") == 0 || strcmp(f[0], "explored") == 0)
            rc = set_line(&rd, st, f, n);
        else if (strcmp(f[0], "from") == 0)
            rc = from_line(&rd, st, f, n);
        else if (strcmp(f[0], "cause") == 0)
            rc = cause_line(&rd, st, f, n);
        else
            rc = vigil_text_fail(&rd, "unknown key `%.40s` (expected iteration, cause, monitored, planned, "
                                      "explored, from or end)", f[0]);
        if (rc != 0)
            return -1;
    }
    return got;   /* VIGIL_TEXT_DONE (0) or -1 */
}

/* ---- Writers ---- */

static void write_set(FILE *f, const struct vigil_plan_state *st, const struct vigil_siteset *s, const char *key,
                      const char *suffix)
{
    for (size_t t = 0; t < st->ntables; t++)
        for (uint32_t i = 0; i < st->tables[t].nsites; i++)
            if (vigil_siteset_has(s, (uint32_t)t, i))
                fprintf(f, "%s %016" PRIx64 " %u%s\n", key, st->tables[t].tu_hash, i, suffix);
}

int vigil_plan_state_write(FILE *f, const struct vigil_plan_state *st)
{
    fprintf(f, "vigil-plan-state %d\niteration %u\n", VIGIL_PLAN_STATE_VERSION, st->iteration);
    if (st->has_cause) {
        char path[3 * sizeof st->cause.path + 2];
        vigil_escape(st->cause.path, path, sizeof path);
        fprintf(f, "cause %d %" PRIx64 " %s\n", st->cause.signal, st->cause.file_offset, path);
    }
    write_set(f, st, &st->monitored, "monitored", "");
    write_set(f, st, &st->last_plan, "planned", "");
    write_set(f, st, &st->explored_true, "explored", " 1");
    write_set(f, st, &st->explored_false, "explored", " 0");
    for (size_t t = 0; t < st->ntables; t++)
        for (uint32_t i = 0; i < st->tables[t].nsites; i++) {
            const struct vigil_plan_origin *o = &st->origin[t][i];
            if (o->set)
                fprintf(f, "from %016" PRIx64 " %u %016" PRIx64 " %u %u\n", st->tables[t].tu_hash, i,
                        st->tables[o->table].tu_hash, o->site, o->pred);
        }
    fputs("end\n", f);
    return ferror(f) ? -1 : 0;
}

int vigil_plan_state_load(const char *path, struct vigil_plan_state *st, char *err, size_t errlen)
{
    char *text;
    size_t len;
    int rc = vigil_text_load_file(path, MAX_FILE, &text, &len, err, errlen);
    if (rc == -1 && errno == ENOENT)
        return 0;
    if (rc != 0)
        return -1;
    rc = vigil_plan_state_parse(text, len, path, st, err, errlen) == 0 ? 1 : -1;
    free(text);
    return rc;
}

static int write_state(FILE *f, void *st)
{
    return vigil_plan_state_write(f, st);
}

int vigil_plan_state_save(const char *path, const struct vigil_plan_state *st, char *err, size_t errlen)
{
    return vigil_save_file(path, write_state, (void *)st, err, errlen);
}
