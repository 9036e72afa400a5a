/* Run report: escaping, a round trip through an emulated writer, and every malformed case.
 * Each rejected report must name the file and the offending line. */
#include "check.h"
#include "runreport.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME "rep/run.txt"

/* ---- escaping ---- */

static void check_escape_round_trip(const char *s, const char *expected)
{
    char out[256];
    size_t n = vigil_escape(s, out, sizeof out);
    CHECK(n == strlen(expected) && strcmp(out, expected) == 0, "escape(\"%s\") = \"%s\", want \"%s\"",
          s, out, expected);
    CHECK(!strpbrk(out, " \n\t"), "escaped \"%s\" contains whitespace", out);
    CHECK(vigil_unescape(out) == 0 && strcmp(out, s) == 0, "unescape(escape(\"%s\")) = \"%s\"", s,
          out);
}

static void test_escape(void)
{
    check_escape_round_trip("", "%");
    check_escape_round_trip("plain", "plain");
    check_escape_round_trip("a b", "a%20b");
    check_escape_round_trip("100%", "100%25");
    check_escape_round_trip("%", "%25");
    check_escape_round_trip("line\nnext\ttab", "line%0Anext%09tab");
    check_escape_round_trip("\xc3\xa9\x7f", "%C3%A9%7F");

    /* snprintf-like truncation: returns the needed length, always terminates. */
    char small[4];
    size_t n = vigil_escape("a b c", small, sizeof small);
    CHECK(n == 9, "needed length for \"a b c\" = %zu, want 9", n);
    CHECK(strlen(small) == 3 && memcmp(small, "a%2", 3) == 0, "truncated escape = \"%s\"", small);
    CHECK(vigil_escape("xyz", NULL, 0) == 3, "escape into a zero-length buffer must only measure");

    const char *bad[] = {"%4", "%G0", "a%", "%%", "%00", "a b", "x\x01", "\xff", "%zz"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char buf[16];
        snprintf(buf, sizeof buf, "%s", bad[i]);
        CHECK(vigil_unescape(buf) == -1, "unescape(\"%s\") must fail", bad[i]);
    }
    char lower[] = "%2f%2F";
    CHECK(vigil_unescape(lower) == 0 && strcmp(lower, "//") == 0, "lower-case hex accepted");
}

/* ---- emulated writer ---- */

struct text {
    char buf[8192];
    size_t len;
};

__attribute__((format(printf, 2, 3)))
static void put(struct text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    t->len += (size_t)vsnprintf(t->buf + t->len, sizeof t->buf - t->len, fmt, ap);
    va_end(ap);
}

static const char *esc(const char *s)
{
    static char rings[4][512];
    static int next;
    char *out = rings[next++ & 3];
    vigil_escape(s, out, 512);
    return out;
}

/* Writes a complete report the way the runtime does (docs/formats.md). */
static void write_report(struct text *t, const char *status_line)
{
    const char *argv[] = {"./my prog", "", "100% sure", "tab\there"};
    t->len = 0;
    put(t, "vigil-run %d\n", VIGIL_RUN_FORMAT_VERSION);
    put(t, "program %s\n", esc("/tmp/dir with space/my prog"));
    for (int i = 0; i < 4; i++)
        put(t, "arg %d %s\n", i, esc(argv[i]));
    put(t, "pid 4242\nppid 1\n%s\nstart_unix_ns 1700000000123456789\nduration_ns 5000000\n", status_line);
    put(t, "option mode %s\n", esc("adaptive"));
    put(t, "option out %s\n", esc("/tmp/out dir"));
    put(t, "option tools %s\n", esc(""));
    put(t, "tools %s\n", esc(""));
    put(t, "module 0 00000000deadbeef 10 0 %s\n", esc("/tmp/dir with space/my prog"));
    put(t, "module 1 FFFFFFFFFFFFFFFF 3 10 %s\n", esc("/usr/lib/libx.so"));
    put(t, "site 0 0 entry 1000 10 0.1\n");
    put(t, "site 0 7 backedge 18446744073709551615 1 0.001\n");
    put(t, "site 1 2 entry 1 1 1\n");
    put(t, "end\n");
}

static void write_good_report(struct text *t)
{
    write_report(t, "exit 3");
}

static void test_round_trip(void)
{
    struct text t;
    write_good_report(&t);
    struct vigil_run_report r;
    char err[256] = "";
    int rc = vigil_run_report_parse(t.buf, t.len, NAME, &r, err, sizeof err);
    CHECK(rc == 0, "good report rejected: %s", err);
    if (rc)
        return;
    CHECK(r.version == VIGIL_RUN_FORMAT_VERSION, "version %u", r.version);
    CHECK(strcmp(r.program, "/tmp/dir with space/my prog") == 0, "program \"%s\"", r.program);
    CHECK(r.argc == 4, "argc %d", r.argc);
    if (r.argc == 4) {
        CHECK(strcmp(r.argv[0], "./my prog") == 0, "argv[0] \"%s\"", r.argv[0]);
        CHECK(strcmp(r.argv[1], "") == 0, "argv[1] \"%s\"", r.argv[1]);
        CHECK(strcmp(r.argv[2], "100% sure") == 0, "argv[2] \"%s\"", r.argv[2]);
        CHECK(strcmp(r.argv[3], "tab\there") == 0, "argv[3] \"%s\"", r.argv[3]);
        CHECK(r.argv[4] == NULL, "argv is NULL-terminated");
    }
    CHECK(r.pid == 4242 && r.ppid == 1, "pid %lld ppid %lld", (long long)r.pid, (long long)r.ppid);
    CHECK(r.exited == 1 && r.exit_status == 3, "exited %d status %d", r.exited, r.exit_status);
    CHECK(r.start_unix_ns == 1700000000123456789ull, "start %llu",
          (unsigned long long)r.start_unix_ns);
    CHECK(r.duration_ns == 5000000, "duration %llu", (unsigned long long)r.duration_ns);
    CHECK(r.noptions == 3, "noptions %zu", r.noptions);
    if (r.noptions == 3) {
        CHECK(strcmp(r.option_names[1], "out") == 0 && strcmp(r.option_values[1], "/tmp/out dir") == 0,
              "option 1 %s=%s", r.option_names[1], r.option_values[1]);
        CHECK(strcmp(r.option_values[2], "") == 0, "empty option value \"%s\"", r.option_values[2]);
    }
    CHECK(r.tools && strcmp(r.tools, "") == 0, "tools \"%s\"", r.tools);
    CHECK(r.nmodules == 2, "nmodules %zu", r.nmodules);
    if (r.nmodules == 2) {
        CHECK(r.modules[0].tu_hash == 0xdeadbeefull && r.modules[0].nsites == 10 &&
              r.modules[0].base_id == 0, "module 0 fields");
        CHECK(r.modules[1].tu_hash == UINT64_MAX && r.modules[1].base_id == 10 &&
              strcmp(r.modules[1].path, "/usr/lib/libx.so") == 0, "module 1 fields");
    }
    CHECK(r.nsites == 3, "nsites %zu", r.nsites);
    if (r.nsites == 3) {
        CHECK(r.sites[0].module == 0 && r.sites[0].index == 0 && r.sites[0].kind == 1 &&
              r.sites[0].execs == 1000 && r.sites[0].bursts == 10 && r.sites[0].rate == 0.1,
              "site 0 fields");
        CHECK(r.sites[1].kind == 2 && r.sites[1].execs == UINT64_MAX && r.sites[1].rate == 0.001,
              "site 1 fields");
        CHECK(r.sites[2].module == 1 && r.sites[2].index == 2 && r.sites[2].rate == 1.0,
              "site 2 fields");
    }
    CHECK(r.bursts_total == 12, "bursts_total %llu", (unsigned long long)r.bursts_total);
    vigil_run_report_free(&r);
    CHECK(r.program == NULL && r.nsites == 0, "free leaves an empty report");

    /* written while the program ran: no status yet; version 2 has no such line */
    write_report(&t, "running");
    rc = vigil_run_report_parse(t.buf, t.len, NAME, &r, err, sizeof err);
    CHECK(rc == 0 && r.running && !r.exited, "running report: rc %d running %d %s", rc, r.running, err);
    if (rc == 0)
        vigil_run_report_free(&r);
    t.buf[strlen("vigil-run ")] = '2';
    rc = vigil_run_report_parse(t.buf, t.len, NAME, &r, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "version 3"), "running line in version 2 accepted: %s", err);

    /* a signal instead of an exit status */
    write_report(&t, "signal 9");
    rc = vigil_run_report_parse(t.buf, t.len, NAME, &r, err, sizeof err);
    CHECK(rc == 0 && !r.exited && r.signal == 9, "signal report: rc %d %s", rc, err);
    vigil_run_report_free(&r);
}

/* Version 2 adds the crash line; version 1 must not carry one. */
static void test_crash_line(void)
{
    struct text good, t;
    write_good_report(&good);
    const char *body = strchr(good.buf, '\n') + 1;
    const char *end = strstr(good.buf, "\nend\n");
    const char *crash = "crash 11 0x55a92420b822 0x5822 /tmp/dir%20x/prog";
    t.len = 0;
    put(&t, "vigil-run 2\n%.*s\n%s\nend\n", (int)(end - body), body, crash);
    struct vigil_run_report r;
    char err[256] = "";
    int rc = vigil_run_report_parse(t.buf, t.len, NAME, &r, err, sizeof err);
    CHECK(rc == 0, "version 2 report with a crash line rejected: %s", err);
    if (rc == 0) {
        CHECK(r.version == 2 && r.has_crash && r.crash_signal == 11, "crash %d signal %d",
              r.has_crash, r.crash_signal);
        CHECK(r.crash_pc == 0x55a92420b822ull && r.crash_file_offset == 0x5822,
              "crash pc %llx offset %llx", (unsigned long long)r.crash_pc,
              (unsigned long long)r.crash_file_offset);
        CHECK(strcmp(r.crash_path, "/tmp/dir x/prog") == 0, "crash path \"%s\"", r.crash_path);
        vigil_run_report_free(&r);
    }
    t.len = 0;
    put(&t, "vigil-run 1\n%.*s\n%s\nend\n", (int)(end - body), body, crash);
    rc = vigil_run_report_parse(t.buf, t.len, NAME, &r, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "version 1"), "crash line in version 1 accepted: %s", err);
    t.len = 0;
    put(&t, "vigil-run 2\n%.*s\ncrash 11 55a9 0x1 /p\nend\n", (int)(end - body), body);
    rc = vigil_run_report_parse(t.buf, t.len, NAME, &r, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "faulting PC"), "crash pc without 0x accepted: %s", err);
}

/* ---- malformed reports ---- */

/* Replace line `lineno` (1-based) of the good report with `repl` (NULL: delete it), parse, and
 * expect an error that names NAME:expect_line and contains `want`. */
static void expect_error_edit(int lineno, const char *repl, int expect_line, const char *want)
{
    struct text good, t;
    write_good_report(&good);
    t.len = 0;
    const char *s = good.buf;
    for (int i = 1; *s; i++) {
        const char *nl = strchr(s, '\n');
        size_t n = (size_t)(nl - s) + 1;
        if (i != lineno)
            put(&t, "%.*s", (int)n, s);
        else if (repl)
            put(&t, "%s\n", repl);
        s += n;
    }
    struct vigil_run_report r;
    char err[256] = "", where[64];
    int rc = vigil_run_report_parse(t.buf, t.len, NAME, &r, err, sizeof err);
    snprintf(where, sizeof where, "%s:%d: ", NAME, expect_line);
    CHECK(rc == -1, "edit of line %d (\"%s\") accepted", lineno, repl ? repl : "(deleted)");
    CHECK(strncmp(err, where, strlen(where)) == 0, "error \"%s\" does not start with \"%s\"", err,
          where);
    CHECK(strstr(err, want) != NULL, "error \"%s\" does not mention \"%s\"", err, want);
    CHECK(r.program == NULL && r.sites == NULL && r.modules == NULL, "rejected report not empty");
}

static void expect_error_text(const char *text, size_t len, int expect_line, const char *want)
{
    struct vigil_run_report r;
    char err[256] = "", where[64];
    int rc = vigil_run_report_parse(text, len, NAME, &r, err, sizeof err);
    snprintf(where, sizeof where, "%s:%d: ", NAME, expect_line);
    CHECK(rc == -1, "text \"%.30s\" accepted", text);
    CHECK(strncmp(err, where, strlen(where)) == 0, "error \"%s\" does not start with \"%s\"", err,
          where);
    CHECK(strstr(err, want) != NULL, "error \"%s\" does not mention \"%s\"", err, want);
}

static void test_malformed(void)
{
    /* Line numbers of the good report: 1 header, 2 program, 3-6 arg, 7 pid, 8 ppid, 9 exit,
     * 10 start, 11 duration, 12-14 option, 15 tools, 16-17 module, 18-20 site, 21 end. */
    expect_error_edit(1, NULL, 1, "header");                       /* missing header */
    expect_error_edit(1, "vigil-run 4", 1, "version 4");           /* wrong version */
    expect_error_edit(1, "vigil-run x", 1, "format version");
    expect_error_edit(1, "vigil-runs 1", 1, "header");
    expect_error_edit(7, "pid 12x", 7, "process id");              /* bad numbers */
    expect_error_edit(7, "pid -1", 7, "process id");
    expect_error_edit(7, "pid 007", 7, "process id");
    expect_error_edit(10, "start_unix_ns 18446744073709551616", 10, "start time");
    expect_error_edit(9, "exit 256", 9, "exit status");
    expect_error_edit(9, "signal 0", 9, "signal");
    expect_error_edit(18, "site 0 0 entry 1000 10 1.5", 18, "rate");
    expect_error_edit(18, "site 0 0 entry 1000 10 nan", 18, "rate");
    expect_error_edit(18, "site 0 0 entry 1000 10 0x1p-2", 18, "rate");
    expect_error_edit(18, "site 0 0 entry 1e3 10 0.5", 18, "execution count");
    expect_error_edit(16, "module 0 deadbeef 10 0 /x", 16, "tu_hash");
    expect_error_edit(16, "module 0 00000000deadbeeg 10 0 /x", 16, "tu_hash");
    expect_error_edit(16, "module 0 00000000deadbeef 10 4294967295 /x", 16, "32-bit");
    expect_error_edit(2, NULL, 20, "\"program\"");                 /* missing fields, at end */
    expect_error_edit(7, NULL, 20, "\"pid\"");
    expect_error_edit(9, NULL, 20, "\"exit\", \"signal\" or \"running\"");
    expect_error_edit(15, NULL, 20, "\"tools\"");
    expect_error_edit(11, NULL, 20, "\"duration_ns\"");
    expect_error_edit(7, "pid", 7, "expected 1 field");            /* field counts */
    expect_error_edit(7, "pid 1 2", 7, "expected 1 field");
    expect_error_edit(7, "pid  1", 7, "single spaces");
    expect_error_edit(7, "pid 1 ", 7, "single spaces");
    expect_error_edit(7, "", 7, "key");
    expect_error_edit(21, NULL, 20, "torn");                       /* truncated: no end */
    expect_error_edit(2, "program a%2", 2, "percent-escaped");     /* bad escapes */
    expect_error_edit(3, "arg 0 %ZZ", 3, "percent-escaped");
    expect_error_edit(12, "option mode %00", 12, "percent-escaped");
    expect_error_edit(7, "color blue", 7, "unknown key");          /* unknown key */
    expect_error_edit(8, "pid 5", 8, "twice");                     /* duplicates */
    expect_error_edit(9, "exit 0\nsignal 11", 10, "another ending line");
    expect_error_edit(9, "running\nexit 0", 10, "another ending line");
    expect_error_edit(9, "running 1", 9, "expected 0 fields");
    expect_error_edit(13, "option mode full", 13, "twice");
    expect_error_edit(19, "site 0 0 backedge 1 1 1", 19, "twice");
    expect_error_edit(4, "arg 2 x", 4, "argument index 1");        /* ordering and ranges */
    expect_error_edit(17, "module 2 0000000000000001 3 10 /x", 17, "module index 1");
    expect_error_edit(18, "site 2 0 entry 1 1 1", 18, "module 2");
    expect_error_edit(18, "site 0 10 entry 1 1 1", 18, "out of range");
    expect_error_edit(18, "site 0 0 loop 1 1 1", 18, "site kind");
    expect_error_edit(21, "end\nend", 22, "after \"end\"");

    static const char no_newline[] = "vigil-run 1\nprogram x";
    expect_error_text(no_newline, sizeof no_newline - 1, 2, "truncated");
    expect_error_text("", 0, 1, "empty file");
    static const char nul[] = "vigil-run 1\npro\0gram x\n";
    expect_error_text(nul, sizeof nul - 1, 2, "NUL");
}

static void test_load(void)
{
    char dir[] = "/tmp/vigil-test-runreport-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char path[256], err[512];
    snprintf(path, sizeof path, "%s/%s", dir, VIGIL_RUN_FILE);
    struct text t;
    write_good_report(&t);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "create %s", path);
    if (!f)
        return;
    fwrite(t.buf, 1, t.len - 4, f);   /* torn: without "end\n" */
    fclose(f);
    struct vigil_run_report r;
    CHECK(vigil_run_report_load(dir, &r, err, sizeof err) == -1, "torn file accepted");
    char where[300];
    snprintf(where, sizeof where, "%s:20: ", path);
    CHECK(strncmp(err, where, strlen(where)) == 0, "torn load error \"%s\", want prefix \"%s\"",
          err, where);

    f = fopen(path, "w");
    fwrite(t.buf, 1, t.len, f);
    fclose(f);
    CHECK(vigil_run_report_load(dir, &r, err, sizeof err) == 0, "load directory: %s", err);
    CHECK(r.nsites == 3, "loaded nsites %zu", r.nsites);
    vigil_run_report_free(&r);
    CHECK(vigil_run_report_load(path, &r, err, sizeof err) == 0, "load run.txt path: %s", err);
    vigil_run_report_free(&r);
    unlink(path);
    CHECK(vigil_run_report_load(dir, &r, err, sizeof err) == -1 && strstr(err, path) == err,
          "missing file error \"%s\" names the file", err);
    rmdir(dir);
}

int main(void)
{
    test_escape();
    test_round_trip();
    test_crash_line();
    test_malformed();
    test_load();
    return CHECK_DONE("test_runreport");
}
