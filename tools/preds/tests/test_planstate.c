// unit-extra: tools/preds/cmd/planstate.c
/* Search state file of `vigil plan` (tools/preds/cmd/planstate.c): good files parse to the right
 * state and are written back byte for byte; each kind of bad input is rejected with
 * "name:line:" and what was expected; saving is atomic (a failed save keeps the old file). */
#include "check.h"
#include "../cmd/planstate.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define H0 "00000000000000aa"
#define H1 "1234567890abcdef"
static const struct vigil_state_table tables[] = {{0xaa, 10}, {0x1234567890abcdefull, 300}};
#define NT (sizeof tables / sizeof tables[0])

static const char good[] =
    "vigil-plan-state 1\n"
    "iteration 3\n"
    "cause 11 4a2f /usr/lib/my%20lib%25.so\n"
    "monitored " H0 " 0\n"
    "monitored " H0 " 9\n"
    "monitored " H1 " 299\n"
    "planned " H1 " 17\n"
    "explored " H0 " 9 1\n"
    "explored " H0 " 9 0\n"
    "explored " H1 " 299 0\n"
    "from " H0 " 4 " H1 " 299 2\n"
    "from " H1 " 17 " H0 " 9 1\n"
    "end\n";

static int parse(const char *text, struct vigil_plan_state *st, char *err, size_t errlen)
{
    /* exactly sized heap copy without a terminator: over-reads show under ASan */
    size_t len = strlen(text);
    char *copy = malloc(len ? len : 1);
    memcpy(copy, text, len);
    if (vigil_plan_state_init(st, tables, NT) != 0)
        abort();
    int rc = vigil_plan_state_parse(copy, len, "t.state", st, err, errlen);
    free(copy);
    return rc;
}

static char *write_text(const struct vigil_plan_state *st)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    CHECK(vigil_plan_state_write(f, st) == 0, "write failed");
    fclose(f);
    return out;
}

static size_t count(const struct vigil_siteset *s)
{
    size_t n = 0;
    for (uint32_t t = 0; t < NT; t++)
        for (uint32_t i = 0; i < tables[t].nsites; i++)
            n += vigil_siteset_has(s, t, i);
    return n;
}

static void test_good(void)
{
    struct vigil_plan_state st;
    char err[256] = "";
    CHECK(parse(good, &st, err, sizeof err) == 0, "good state rejected: %s", err);
    CHECK(st.iteration == 3, "iteration %u", st.iteration);
    CHECK(st.has_cause && st.cause.signal == 11 && st.cause.file_offset == 0x4a2f &&
          strcmp(st.cause.path, "/usr/lib/my lib%.so") == 0, "cause %d %llx `%s`", st.cause.signal,
          (unsigned long long)st.cause.file_offset, st.cause.path);
    CHECK(count(&st.monitored) == 3 && vigil_siteset_has(&st.monitored, 0, 0) && vigil_siteset_has(&st.monitored, 0, 9) &&
          vigil_siteset_has(&st.monitored, 1, 299), "monitored");
    CHECK(count(&st.last_plan) == 1 && vigil_siteset_has(&st.last_plan, 1, 17), "planned");
    CHECK(count(&st.explored_true) == 1 && vigil_siteset_has(&st.explored_true, 0, 9), "explored true");
    CHECK(count(&st.explored_false) == 2 && vigil_siteset_has(&st.explored_false, 0, 9) &&
          vigil_siteset_has(&st.explored_false, 1, 299), "explored false");
    const struct vigil_plan_origin *o = &st.origin[0][4], *o2 = &st.origin[1][17];
    CHECK(o->set == 1 && o->table == 1 && o->site == 299 && o->pred == 2, "from 0/4: %u %u %u %u", o->set,
          o->table, o->site, o->pred);
    CHECK(o2->set == 1 && o2->table == 0 && o2->site == 9 && o2->pred == 1, "from 1/17");
    CHECK(!st.origin[0][0].set && !st.origin[1][299].set, "origin set where there is no from line");
    char *out = write_text(&st);
    CHECK(strcmp(out, good) == 0, "round trip differs:\n%s", out);
    free(out);
    vigil_plan_state_free(&st);

    /* forward search: no cause; the first round's state; an empty set of tables */
    CHECK(parse("vigil-plan-state 1\niteration 0\nend\n", &st, err, sizeof err) == 0 && st.iteration == 0 &&
          !st.has_cause && count(&st.monitored) == 0, "minimal state: %s", err);
    vigil_plan_state_free(&st);
    CHECK(parse("vigil-plan-state 1\niteration 4294967294\nplanned " H0 " 3\nend\n", &st, err, sizeof err) == 0 &&
          st.iteration == 4294967294u && !st.has_cause, "largest iteration: %s", err);
    vigil_plan_state_free(&st);
    /* a state that the writer builds: empty cause path escapes to "%" */
    CHECK(vigil_plan_state_init(&st, tables, NT) == 0, "init");
    st.iteration = 7, st.has_cause = 1, st.cause.signal = 6, st.cause.file_offset = 0;
    vigil_siteset_add(&st.monitored, 1, 5);
    st.origin[1][5] = (struct vigil_plan_origin){1, 1, 0, 0};
    out = write_text(&st);
    CHECK(strstr(out, "cause 6 0 %\n") != NULL, "empty path written as `%s`", out);
    struct vigil_plan_state again;
    CHECK(parse(out, &again, err, sizeof err) == 0, "written state rejected: %s", err);
    CHECK(again.iteration == 7 && again.has_cause && again.cause.signal == 6 && again.cause.path[0] == 0 &&
          vigil_siteset_has(&again.monitored, 1, 5) && again.origin[1][5].set && again.origin[1][5].table == 1,
          "written state read back differently");
    free(out);
    vigil_plan_state_free(&again);
    vigil_plan_state_free(&st);
}

struct bad_case {
    const char *text;
    const char *expect;     /* substring of the message, which must start "t.state:<line>:" */
    unsigned line;
};

static const struct bad_case bad[] = {
    {"", "empty file", 1},
    {"vigil-plan 1\nend\n", "expected `vigil-plan-state 1`", 1},
    {"vigil-plan-state 2\niteration 1\nend\n", "version 2", 1},
    {"vigil-plan-state 1\niteration 1\n", "missing `end`", 3},
    {"vigil-plan-state 1\niteration 1\nmonitored " H0 " 1\n", "missing `end`", 4},
    {"vigil-plan-state 1\niteration 1\nmonitored " H0 " 1", "no newline", 3},
    {"vigil-plan-state 1\niteration 1\nend\nmonitored " H0 " 1\n", "after `end`", 4},
    {"vigil-plan-state 1\nend\n", "expected an `iteration <n>` line", 2},
    {"vigil-plan-state 1\nmonitored " H0 " 1\niteration 1\nend\n", "right after the header", 2},
    {"vigil-plan-state 1\niteration 5x\nend\n", "expected `iteration <n>`", 2},
    {"vigil-plan-state 1\niteration -1\nend\n", "expected `iteration <n>`", 2},
    {"vigil-plan-state 1\niteration 4294967295\nend\n", "expected `iteration <n>`", 2},
    {"vigil-plan-state 1\niteration 99999999999999999999\nend\n", "expected `iteration <n>`", 2},
    {"vigil-plan-state 1\niteration 05\nend\n", "expected `iteration <n>`", 2},
    {"vigil-plan-state 1\niteration\nend\n", "expected `iteration <n>`", 2},
    {"vigil-plan-state 1\niteration 1 2\nend\n", "expected `iteration <n>`", 2},
    {"vigil-plan-state 1\niteration 1\niteration 2\nend\n", "second `iteration`", 3},
    {"vigil-plan-state 1\niteration 1\nmonitored " H0 " 3 junk\nend\n", "expected `monitored <tu_hash> <site>`", 3},
    {"vigil-plan-state 1\niteration 1\nmonitored " H0 "\nend\n", "expected `monitored <tu_hash> <site>`", 3},
    {"vigil-plan-state 1\niteration 1\nplanned " H0 " 3x\nend\n", "expected a site index", 3},
    {"vigil-plan-state 1\niteration 1\nplanned " H0 " -3\nend\n", "expected a site index", 3},
    {"vigil-plan-state 1\niteration 1\nplanned " H0 " 4294967296\nend\n", "expected a site index", 3},
    {"vigil-plan-state 1\niteration 1\nplanned " H0 " 10\nend\n", "out of range: table " H0 " has 10 sites", 3},
    {"vigil-plan-state 1\niteration 1\nplanned 00000000000000ab 1\nend\n", "not a site table of this binary", 3},
    {"vigil-plan-state 1\niteration 1\nplanned 00000000000000AA 1\nend\n", "16 lowercase hex", 3},
    {"vigil-plan-state 1\niteration 1\nplanned aa 1\nend\n", "16 lowercase hex", 3},
    {"vigil-plan-state 1\niteration 1\nmonitored " H0 " 1\nmonitored " H0 " 1\nend\n", "listed twice", 4},
    {"vigil-plan-state 1\niteration 1\nexplored " H0 " 1\nend\n", "expected `explored <tu_hash> <site> 0|1`", 3},
    {"vigil-plan-state 1\niteration 1\nexplored " H0 " 1 2\nend\n", "0 (false) or 1 (true)", 3},
    {"vigil-plan-state 1\niteration 1\nexplored " H0 " 1 1\nexplored " H0 " 1 1\nend\n", "listed twice", 4},
    {"vigil-plan-state 1\niteration 1\nfrom " H0 " 1 " H1 " 2\nend\n", "expected `from <tu_hash> <site>", 3},
    {"vigil-plan-state 1\niteration 1\nfrom " H0 " 1 " H1 " 2 3\nend\n", "predicate 0, 1 or 2", 3},
    {"vigil-plan-state 1\niteration 1\nfrom " H0 " 1 " H1 " 300 0\nend\n", "out of range", 3},
    {"vigil-plan-state 1\niteration 1\nfrom " H0 " 1 " H1 " 2 0\nfrom " H0 " 1 " H1 " 3 0\nend\n", "second `from`", 4},
    {"vigil-plan-state 1\niteration 1\ncause 11 4a2f\nend\n", "expected `cause <signal>", 3},
    {"vigil-plan-state 1\niteration 1\ncause 11 4a2f /a b\nend\n", "expected `cause <signal>", 3},
    {"vigil-plan-state 1\niteration 1\ncause -11 4a2f /a\nend\n", "signal number", 3},
    {"vigil-plan-state 1\niteration 1\ncause 11 0x4a2f /a\nend\n", "file offset", 3},
    {"vigil-plan-state 1\niteration 1\ncause 11 10000000000000000 /a\nend\n", "file offset", 3},
    {"vigil-plan-state 1\niteration 1\ncause 11 1 /a%zz\nend\n", "escape", 3},
    {"vigil-plan-state 1\niteration 1\ncause 11 1 /a\ncause 11 1 /a\nend\n", "second `cause`", 4},
    {"vigil-plan-state 1\niteration 1\nvisited " H0 " 1\nend\n", "unknown key `visited`", 3},
    {"vigil-plan-state 1\niteration 1\nmonitored  " H0 " 1\nend\n", "malformed line", 3},
    {"vigil-plan-state 1\niteration 1 \nend\n", "malformed line", 2},
    {"vigil-plan-state 1\niteration 1\n\nend\n", "malformed line", 3},
    {"vigil-plan-state 1\r\niteration 1\nend\n", "carriage return", 1},
};

static void test_bad(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct vigil_plan_state st;
        char err[256] = "", prefix[32];
        int rc = parse(bad[i].text, &st, err, sizeof err);
        CHECK(rc == -1, "bad case %zu accepted", i);
        snprintf(prefix, sizeof prefix, "t.state:%u: ", bad[i].line);
        CHECK(strncmp(err, prefix, strlen(prefix)) == 0, "bad case %zu: message `%s` does not start `%s`", i, err,
              prefix);
        CHECK(strstr(err, bad[i].expect) != NULL, "bad case %zu: message `%s` lacks `%s`", i, err, bad[i].expect);
        vigil_plan_state_free(&st);
    }
    /* a line longer than the reader's buffer is rejected, not split into two lines */
    struct vigil_plan_state st;
    char err[256] = "";
    size_t n = 5000;
    char *longline = malloc(n + 200);
    strcpy(longline, "vigil-plan-state 1\niteration 1\ncause 11 1 /");
    size_t at = strlen(longline);
    memset(longline + at, 'a', n);
    strcpy(longline + at + n, "\nmonitored " H0 " 1\nend\n");
    CHECK(parse(longline, &st, err, sizeof err) == -1 && strstr(err, "t.state:3: line longer") != NULL,
          "long line: %s", err);
    vigil_plan_state_free(&st);
    free(longline);
    /* a cause path longer than the state holds */
    char cause[1200] = "vigil-plan-state 1\niteration 1\ncause 11 1 /";
    memset(cause + strlen(cause), 'b', 1030);
    strcat(cause, "\nend\n");
    CHECK(parse(cause, &st, err, sizeof err) == -1 && strstr(err, "t.state:3: cause path longer") != NULL,
          "long cause path: %s", err);
    vigil_plan_state_free(&st);
    /* NUL inside a line */
    static const char with_nul[] = "vigil-plan-state 1\niteration 1\0\nend\n";
    CHECK(vigil_plan_state_init(&st, tables, NT) == 0, "init");
    CHECK(vigil_plan_state_parse(with_nul, sizeof with_nul - 1, "t.state", &st, err, sizeof err) == -1 &&
          strstr(err, "t.state:2: NUL") != NULL, "NUL accepted or wrong message: %s", err);
    vigil_plan_state_free(&st);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 16);
    fread(buf, 1, (1 << 16) - 1, f);
    fclose(f);
    return buf;
}


static void test_files(void)
{
    char dir[] = "/tmp/vigil-planstate-XXXXXX", path[128], err[512] = "";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof path, "%s/prog.state", dir);
    struct vigil_plan_state st, back;
    CHECK(vigil_plan_state_init(&back, tables, NT) == 0, "init");
    CHECK(vigil_plan_state_load(path, &back, err, sizeof err) == 0, "no file yet should read as no state: %s", err);
    vigil_plan_state_free(&back);

    /* save then load gives the same state */
    CHECK(parse(good, &st, err, sizeof err) == 0, "good: %s", err);
    CHECK(vigil_plan_state_save(path, &st, err, sizeof err) == 0, "save: %s", err);
    char *text = slurp(path);
    CHECK(text && strcmp(text, good) == 0, "saved file differs: %s", text ? text : "(none)");
    free(text);
    CHECK(check_dir_entries(dir) == 1, "temporary file left beside the state (%d entries)", check_dir_entries(dir));
    CHECK(vigil_plan_state_init(&back, tables, NT) == 0, "init");
    CHECK(vigil_plan_state_load(path, &back, err, sizeof err) == 1, "load: %s", err);
    CHECK(back.iteration == st.iteration && back.cause.file_offset == st.cause.file_offset &&
          strcmp(back.cause.path, st.cause.path) == 0 && count(&back.monitored) == count(&st.monitored) &&
          back.origin[0][4].set && back.origin[0][4].site == 299, "loaded state differs");
    vigil_plan_state_free(&back);

    /* a save that fails keeps the old state: common/savefile.c, tests/unit/test_savefile.c */
    /* a directory that does not exist: a message naming the path */
    CHECK(vigil_plan_state_save("/nonexistent-vigil/prog.state", &st, err, sizeof err) == -1 &&
          strstr(err, "/nonexistent-vigil/prog.state") != NULL, "save into a missing directory: %s", err);
    /* a malformed file on disk names it */
    FILE *f = fopen(path, "w");
    fputs("vigil-plan-state 1\niteration 2\n", f);
    fclose(f);
    CHECK(vigil_plan_state_init(&back, tables, NT) == 0, "init");
    CHECK(vigil_plan_state_load(path, &back, err, sizeof err) == -1 && strncmp(err, path, strlen(path)) == 0 &&
          strstr(err, ":3: missing `end`") != NULL, "torn file: %s", err);
    vigil_plan_state_free(&back);
    vigil_plan_state_free(&st);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    test_good();
    test_bad();
    test_files();
    return CHECK_DONE("planstate");
}
