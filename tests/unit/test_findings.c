/* Findings (common/findings.c): the JSON document round trip, malformed documents rejected with
 * NAME:LINE:COLUMN and what was expected, SARIF's required fields, suppression parsing and
 * matching, sorting, summaries and the text rendering. */
#include "check.h"
#include "findings.h"

#include <stdlib.h>
#include <string.h>

#define NAME "doc.json"

/* Output of fn(out, l) as a malloc'd string. */
static char *render(void (*fn)(FILE *, const struct vigil_findings *), const struct vigil_findings *l)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fn(f, l);
    fclose(f);
    return buf;
}

static void write_json_pretty(FILE *f, const struct vigil_findings *l) { vigil_findings_write_json(f, l, 1); }
static void write_json_compact(FILE *f, const struct vigil_findings *l) { vigil_findings_write_json(f, l, 0); }
static void write_sarif(FILE *f, const struct vigil_findings *l) { vigil_findings_write_sarif(f, l, "9.9"); }

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* Three findings: two of the leak tool, one of another; unusual strings and numbers. */
static void sample(struct vigil_findings *l)
{
    vigil_findings_init(l);
    vigil_findings_set_run(l, "vigil-out/prog.42", "/usr/bin/prog");
    struct vigil_finding *f = vigil_findings_append(l, "leak", "stale", VIGIL_WARNING,
                                                    "3 objects, 96 bytes, idle", 12.5);
    vigil_finding_add_location(f, "allocation", "allocated here", "cache_put", "/src/cache.c", 40, 7);
    struct vigil_stack *s = vigil_finding_add_stack(f, "allocation");
    vigil_stack_add_frame(s, 0x401000, "cache_put", "/src/cache.c", 40, 7, 0);
    vigil_stack_add_frame(s, 0xffffffffffffffffull, "main", "/src/main.c", 9, 0, 0);
    vigil_finding_add_number(f, "objects", 3, NULL, 1);
    vigil_finding_add_number(f, "bytes", 96, "bytes", 1);

    f = vigil_findings_append(l, "leak", "unreachable", VIGIL_ERROR,
                              "quote \" backslash \\ tab\t newline\n é \xe2\x82\xac \xf0\x9f\x98\x80 \x7f", 1e300);
    vigil_finding_add_location(f, "allocation", "", "make_record", "/src/a b/rec%.c", 11, 3);
    vigil_finding_add_location(f, "last-access", "most recent sampled access", "use", "rel/use.c", 20, 0);
    s = vigil_finding_add_stack(f, "allocation");
    vigil_stack_add_frame(s, 0x10, "helper", "/src/a b/rec%.c", 5, 1, 1);
    vigil_stack_add_frame(s, 0x20, "make_record", "/src/a b/rec%.c", 11, 3, 0);
    vigil_stack_add_frame(s, 0x30, "", "", 0, 0, 0);
    vigil_finding_add_number(f, "objects", 9, NULL, 1);
    vigil_finding_add_number(f, "bytes", 1440, "bytes", 1);
    vigil_finding_add_number(f, "ratio", 0.1, NULL, 0);
    vigil_finding_add_number(f, "negative", -2.5e-7, NULL, 0);
    vigil_finding_add_string(f, "kind_detail", "definite");

    f = vigil_findings_append(l, "race", "data-race", VIGIL_NOTE, "a note", 0);
    (void)f;
}

static void test_round_trip(void)
{
    struct vigil_findings l, back;
    sample(&l);
    for (int pretty = 0; pretty < 2; pretty++) {
        char *text = render(pretty ? write_json_pretty : write_json_compact, &l);
        char err[512];
        int rc = vigil_findings_parse_json(text, strlen(text), NAME, &back, err, sizeof err);
        CHECK(rc == 0, "round trip parse (pretty %d): %s", pretty, err);
        if (rc != 0) {
            free(text);
            continue;
        }
        char *again = render(pretty ? write_json_pretty : write_json_compact, &back);
        CHECK(strcmp(text, again) == 0, "write(read(write(x))) differs from write(x):\n%s\n---\n%s", text, again);
        CHECK(back.nfindings == 3 && strcmp(back.run, "vigil-out/prog.42") == 0 &&
              strcmp(back.program, "/usr/bin/prog") == 0, "document members");
        const struct vigil_finding *f = &back.findings[1];
        CHECK(strcmp(f->message, l.findings[1].message) == 0, "message with escapes and UTF-8: \"%s\"", f->message);
        CHECK(f->severity == VIGIL_ERROR && f->score == 1e300, "severity %d score %g", f->severity, f->score);
        CHECK(f->nlocations == 2 && strcmp(f->locations[1].message, "most recent sampled access") == 0 &&
              f->locations[1].line == 20, "locations");
        CHECK(f->nstacks == 1 && f->stacks[0].nframes == 3 && f->stacks[0].frames[0].inlined == 1 &&
              f->stacks[0].frames[0].column == 1 && f->stacks[0].frames[2].file[0] == '\0', "stack frames");
        CHECK(back.findings[0].stacks[0].frames[1].pc == 0xffffffffffffffffull, "64-bit pc survives");
        const struct vigil_field *x = vigil_finding_field(f, "ratio");
        CHECK(x && x->value.is_number && x->value.number == 0.1, "number field 0.1");
        x = vigil_finding_field(f, "negative");
        CHECK(x && x->value.number == -2.5e-7, "negative number field");
        x = vigil_finding_field(f, "kind_detail");
        CHECK(x && !x->value.is_number && strcmp(x->value.string, "definite") == 0, "string field");
        x = vigil_finding_field(f, "bytes");
        CHECK(x && x->total && strcmp(x->unit, "bytes") == 0, "field unit and total");
        CHECK(back.findings[2].nlocations == 0 && back.findings[2].severity == VIGIL_NOTE, "empty finding");
        vigil_findings_free(&back);
        free(again);
        free(text);
    }
    /* set semantics of fields */
    vigil_finding_add_number(&l.findings[0], "objects", 4, NULL, 1);
    CHECK(l.findings[0].nfields == 2 && vigil_finding_field(&l.findings[0], "objects")->value.number == 4,
          "setting a field twice keeps one");
    /* optional members may be left out; strings come back "" */
    const char *minimal = "{\"format\":\"vigil-findings\",\"version\":1,\"findings\":[{\"tool\":\"t\",\"kind\":\"k\","
                          "\"severity\":\"note\",\"message\":\"m\",\"locations\":[{\"function\":\"f\",\"file\":\"x.c\","
                          "\"line\":1}]}]}";
    char err[512];
    int rc = vigil_findings_parse_json(minimal, strlen(minimal), NAME, &back, err, sizeof err);
    CHECK(rc == 0, "minimal document: %s", err);
    if (rc == 0) {
        CHECK(back.run && back.run[0] == '\0' && back.findings[0].locations[0].role &&
              back.findings[0].locations[0].role[0] == '\0' && back.findings[0].score == 0, "defaults");
        vigil_findings_free(&back);
    }
    /* moving lists */
    struct vigil_findings other;
    sample(&other);
    CHECK(vigil_findings_move(&l, &other) == 0 && l.nfindings == 6 && other.nfindings == 0, "move");
    vigil_findings_free(&other);
    vigil_findings_free(&l);
}

/* The document must be rejected, with NAME:LINE:COLUMN: and the expected words. */
static void rejects(const char *text, int line, const char *words)
{
    struct vigil_findings l;
    char err[512] = "";
    int rc = vigil_findings_parse_json(text, strlen(text), NAME, &l, err, sizeof err);
    CHECK(rc == -1, "accepted: %s", text);
    if (rc != -1) {
        vigil_findings_free(&l);
        return;
    }
    char prefix[64];
    snprintf(prefix, sizeof prefix, NAME ":%d:", line);
    CHECK(strncmp(err, prefix, strlen(prefix)) == 0 && strchr(err + strlen(prefix), ':'),
          "message \"%s\" does not start with %sCOLUMN:", err, prefix);
    CHECK(strstr(err, words) != NULL, "message \"%s\" does not say \"%s\"", err, words);
    CHECK(l.nfindings == 0 && l.findings == NULL && l.run == NULL, "list not left empty");
}

#define DOC(findings) "{\"format\":\"vigil-findings\",\"version\":1,\"findings\":[" findings "]}"
#define FINDING(extra) "{\"tool\":\"t\",\"kind\":\"k\",\"severity\":\"error\",\"message\":\"m\"" extra "}"

static void test_malformed(void)
{
    rejects("", 1, "expected a findings document");
    rejects("[]", 1, "expected a findings document");
    rejects("{\"version\":1,\"format\":\"vigil-findings\",\"findings\":[]}", 1, "as the first member");
    rejects("{\"format\":\"vigil-leak\",\"version\":1,\"findings\":[]}", 1, "expected \"format\": \"vigil-findings\"");
    rejects("{\"format\":\"vigil-findings\",\"version\":2,\"findings\":[]}", 1, "version 2 is not supported");
    rejects("{\"format\":\"vigil-findings\",\"findings\":[]}", 1, "missing \"version\"");
    rejects("{\"format\":\"vigil-findings\",\"version\":1}", 1, "missing \"findings\"");
    rejects("{\"format\":\"vigil-findings\",\n\"version\":1,\n\"findings\":[\n{\"tool\":\"t\"}]}", 4,
            "findings[0]: missing \"kind\" in a finding");
    rejects(DOC(FINDING(",\"colour\":1")), 1, "unknown key \"colour\" in a finding");
    rejects(DOC(FINDING(",\"kind\":\"x\"")), 1, "duplicate key \"kind\"");
    rejects(DOC("{\"tool\":\"t\",\"kind\":\"k\",\"severity\":\"fatal\",\"message\":\"m\"}"), 1,
            "findings[0].severity: expected \"error\", \"warning\" or \"note\"");
    rejects(DOC(FINDING(",\"locations\":[{\"function\":\"f\",\"file\":\"a.c\",\"line\":\"12\"}]")), 1,
            "findings[0].locations[0].line: expected a non-negative integer, found a string");
    rejects(DOC(FINDING(",\"locations\":[{\"function\":\"f\",\"file\":\"a.c\",\"line\":-1}]")), 1, "negative");
    rejects(DOC(FINDING(",\"locations\":[{\"function\":\"f\",\"file\":\"a.c\",\"line\":1.5}]")), 1,
            "expected a non-negative integer, found 1.5");
    rejects(DOC(FINDING(",\"locations\":[{\"function\":\"f\",\"file\":\"a.c\",\"line\":4294967296}]")), 1,
            "too large");
    rejects(DOC(FINDING(",\"stacks\":[{\"frames\":[{\"pc\":\"12\",\"function\":\"\",\"file\":\"\",\"line\":0}]}]")),
            1, "findings[0].stacks[0].frames[0].pc: expected a hexadecimal string");
    rejects(DOC(FINDING(",\"stacks\":[{\"frames\":[{\"function\":\"\",\"file\":\"\",\"line\":0,\"inlined\":1}]}]")),
            1, "expected true or false");
    rejects(DOC(FINDING(",\"score\":1e999")), 1, "out of range");
    rejects(DOC(FINDING(",\"score\":01")), 1, "expected ',' or '}'");
    rejects(DOC(FINDING(",\"fields\":[{\"key\":\"a\",\"value\":1},{\"key\":\"a\",\"value\":\"x\"}]")), 1,
            "duplicate field key \"a\"");
    rejects(DOC(FINDING(",\"fields\":[{\"key\":\"a\",\"value\":null}]")), 1, "expected a string or a number");
    rejects(DOC(FINDING(",\"message\":\"x\"")), 1, "duplicate key \"message\"");
    rejects(DOC("{\"tool\":\"t\",\"kind\":\"k\",\"severity\":\"error\",\"message\":\"a\\u0000b\"}"), 1, "NUL");
    rejects(DOC("{\"tool\":\"t\",\"kind\":\"k\",\"severity\":\"error\",\"message\":\"\\ud800\"}"), 1, "surrogate");
    rejects(DOC("{\"tool\":\"t\",\"kind\":\"k\",\"severity\":\"error\",\"message\":\"\xff\"}"), 1, "invalid UTF-8");
    rejects(DOC("{\"tool\":\"t\",\"kind\":\"k\",\"severity\":\"error\",\"message\":\"a\nb\"}"), 1, "control character");
    rejects(DOC("{\"tool\":\"t\",\"kind\":\"k\",\"severity\":\"error\",\"message\":\"\\q\"}"), 1, "unknown escape");
    rejects(DOC(FINDING("")) " x", 1, "expected the end of the text");
    rejects("{\"format\":\"vigil-findings\",\"version\":1,\"findings\":[" FINDING(""), 1, "expected ',' or ']'");
    rejects("{\"format\":\"vigil-findings\",\"version\":1,\"findings\":[{\"tool\":\"t", 1, "unterminated string");
    /* the column points at the offending value */
    struct vigil_findings l;
    char err[512];
    const char *text = "{\"format\":\"vigil-findings\",\"version\":1,\n  \"findings\": 7}";
    vigil_findings_parse_json(text, strlen(text), NAME, &l, err, sizeof err);
    CHECK(strncmp(err, NAME ":2:15: findings: expected an array", 34) == 0, "position: %s", err);
}

static void test_sarif(void)
{
    struct vigil_findings l;
    sample(&l);
    char *s = render(write_sarif, &l);
    CHECK(strstr(s, "\"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\"") != NULL, "$schema");
    CHECK(strstr(s, "\"version\": \"2.1.0\"") != NULL, "version 2.1.0");
    CHECK(strstr(s, "\"driver\": {\n          \"name\": \"vigil\"") != NULL, "driver name vigil:\n%s", s);
    CHECK(count_of(s, "\"id\": \"leak/stale\"") == 1 && count_of(s, "\"id\": \"leak/unreachable\"") == 1 &&
          count_of(s, "\"id\": \"race/data-race\"") == 1, "one rule per tool/kind");
    CHECK(count_of(s, "\"ruleId\": ") == 3, "a result per finding");
    CHECK(strstr(s, "\"ruleId\": \"leak/unreachable\",\n          \"ruleIndex\": 1,\n          \"level\": \"error\"") != NULL,
          "ruleId, ruleIndex, level");
    CHECK(strstr(s, "\"level\": \"warning\"") && strstr(s, "\"level\": \"note\""), "levels");
    CHECK(strstr(s, "\"message\": {\n            \"text\": \"3 objects, 96 bytes, idle\"") != NULL, "message.text");
    CHECK(strstr(s, "\"uri\": \"file:///src/a%20b/rec%25.c\"") != NULL, "absolute path as a file URI");
    CHECK(strstr(s, "\"uri\": \"rel/use.c\"") != NULL, "relative path stays relative");
    CHECK(strstr(s, "\"startLine\": 11,\n                  \"startColumn\": 3") != NULL, "region");
    CHECK(strstr(s, "\"relatedLocations\"") && strstr(s, "\"text\": \"most recent sampled access\""), "related");
    CHECK(strstr(s, "\"codeFlows\"") && strstr(s, "\"threadFlows\"") && strstr(s, "\"nestingLevel\": 2"), "codeFlows");
    CHECK(strstr(s, "\"text\": \"helper (inlined)\"") != NULL, "inlined frame marked");
    free(s);
    /* no findings: still a valid run with empty results */
    struct vigil_findings none;
    vigil_findings_init(&none);
    s = render(write_sarif, &none);
    CHECK(strstr(s, "\"results\": []") && strstr(s, "\"rules\": []"), "empty SARIF: %s", s);
    free(s);
    vigil_findings_free(&l);
}

static void test_suppressions(void)
{
    struct vigil_suppressions s;
    char err[512];
    const char *text = "# comment\n\n  leak : cache_*  \r\n*:*/vendor/*\nrace:main.c\nleak:rec%.c\n";
    int rc = vigil_suppressions_parse(text, strlen(text), "supp.txt", &s, err, sizeof err);
    CHECK(rc == 0 && s.n == 4, "parse: rc %d n %zu %s", rc, s.n, err);
    if (rc == 0) {
        CHECK(strcmp(s.items[0].tool, "leak") == 0 && strcmp(s.items[0].pattern, "cache_*") == 0 &&
              s.items[0].line == 3, "trimmed item: \"%s\" \"%s\" line %d", s.items[0].tool, s.items[0].pattern,
              s.items[0].line);
        CHECK(strcmp(s.items[1].tool, "*") == 0 && s.items[1].line == 4, "any tool");
    }
    struct vigil_findings l;
    sample(&l);
    if (rc == 0) {
        CHECK(vigil_suppression_match(&s, &l.findings[0]) == &s.items[0], "function glob matches a frame");
        CHECK(vigil_suppression_match(&s, &l.findings[1]) == &s.items[3], "file basename matches");
        CHECK(vigil_suppression_match(&s, &l.findings[2]) == NULL, "a finding without frames matches nothing");
        size_t removed = vigil_findings_suppress(&l, &s);
        CHECK(removed == 2 && l.nfindings == 1 && l.suppressed == 2 && strcmp(l.findings[0].tool, "race") == 0,
              "suppress: removed %zu left %zu", removed, l.nfindings);
        CHECK(s.items[0].hits == 1 && s.items[3].hits == 1 && s.items[1].hits == 0, "hit counts");
        vigil_suppressions_free(&s);
    }
    vigil_findings_free(&l);

    /* tool mismatch, full-path globs, locations */
    sample(&l);
    const char *t2 = "race:cache_put\nleak:/src/a?b/*\n";
    rc = vigil_suppressions_parse(t2, strlen(t2), "s2", &s, err, sizeof err);
    CHECK(rc == 0, "%s", err);
    if (rc == 0) {
        CHECK(vigil_suppression_match(&s, &l.findings[0]) == NULL, "another tool's suppression does not apply");
        CHECK(vigil_suppression_match(&s, &l.findings[1]) == &s.items[1], "glob on a full path");
        vigil_suppressions_free(&s);
    }
    const char *t3 = "leak:use\n";   /* only a related location's function */
    rc = vigil_suppressions_parse(t3, strlen(t3), "s3", &s, err, sizeof err);
    CHECK(rc == 0 && vigil_suppression_match(&s, &l.findings[1]) != NULL, "a location's function matches");
    if (rc == 0)
        vigil_suppressions_free(&s);
    vigil_findings_free(&l);

    struct { const char *text; const char *words; } bad[] = {
        {"leak:x\n# ok\nno colon here\n", "bad:3: expected TOOL:PATTERN or *:PATTERN, got \"no colon here\""},
        {"le ak:x\n", "bad:1: expected a tool name"},
        {":x\n", "bad:1: expected a tool name"},
        {"leak:\n", "bad:1: expected a pattern after \"leak:\""},
        {"leak:   \n", "bad:1: expected a pattern"},
        {"\n\nleak:a\0b\n", "bad:3: a NUL byte"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t len = strlen(bad[i].text);
        if (i == 5)
            len = 12;
        rc = vigil_suppressions_parse(bad[i].text, len, "bad", &s, err, sizeof err);
        CHECK(rc == -1 && strstr(err, bad[i].words), "bad suppression %zu: rc %d \"%s\"", i, rc, err);
        CHECK(s.n == 0 && s.items == NULL, "left empty");
    }
    rc = vigil_suppressions_parse("", 0, "empty", &s, err, sizeof err);
    CHECK(rc == 0 && s.n == 0, "an empty file is valid");
    vigil_suppressions_free(&s);
}

static void test_sort_and_text(void)
{
    struct vigil_findings l;
    vigil_findings_init(&l);
    vigil_findings_append(&l, "a", "low", VIGIL_ERROR, "low score", 1);
    vigil_findings_append(&l, "a", "note", VIGIL_NOTE, "tie note", 5);
    vigil_findings_append(&l, "a", "high", VIGIL_WARNING, "high", 100);
    vigil_findings_append(&l, "a", "err", VIGIL_ERROR, "tie error", 5);
    vigil_findings_append(&l, "a", "warn", VIGIL_WARNING, "tie warning", 5);
    vigil_findings_sort(&l);
    const char *want[] = {"high", "tie error", "tie warning", "tie note", "low score"};
    for (size_t i = 0; i < 5; i++)
        CHECK(strcmp(l.findings[i].message, want[i]) == 0, "sorted[%zu] = %s, want %s", i, l.findings[i].message,
              want[i]);
    vigil_findings_free(&l);

    sample(&l);
    vigil_findings_sort(&l);
    CHECK(strcmp(l.findings[0].kind, "unreachable") == 0, "worst first");
    char buf[512];
    vigil_findings_summary(&l, 0, buf, sizeof buf);
    CHECK(strcmp(buf, "3 findings (leak: 2 findings, 12 objects, 1.5 KiB; race: 1 finding)") == 0, "summary: %s", buf);
    vigil_findings_summary(&l, 1, buf, sizeof buf);
    CHECK(strcmp(buf, "leak: 2 findings, 12 objects, 1.5 KiB; race: 1 finding") == 0, "per tool: %s", buf);
    vigil_findings_tool_summary(&l, "nobody", buf, sizeof buf);
    CHECK(buf[0] == '\0', "no findings of a tool: \"%s\"", buf);
    char small[12];
    vigil_findings_summary(&l, 0, small, sizeof small);
    CHECK(strlen(small) == sizeof small - 1, "summary truncates: \"%s\"", small);
    char *t = render(vigil_findings_write_text, &l);
    CHECK(strstr(t, "#1 leak/unreachable [error] score 1") != NULL, "text header:\n%s", t);
    CHECK(strstr(t, "    at make_record  /src/a b/rec%.c:11:3\n") != NULL, "text location");
    CHECK(strstr(t, "    allocation stack:\n      #0 helper  /src/a b/rec%.c:5:1  (inlined)\n") != NULL, "frames");
    CHECK(strstr(t, "      #2 ?  (pc 0x30, no line information)\n") != NULL, "unknown frame");
    CHECK(strstr(t, "    most recent sampled access: use  rel/use.c:20\n") != NULL, "related location");
    CHECK(strstr(t, "objects=9 bytes=1440 ratio=0.1") != NULL, "fields");
    CHECK(strstr(t, "#3 race/data-race [note] score 0\n    a note\n") != NULL, "bare finding");
    free(t);
    vigil_findings_free(&l);
    vigil_findings_init(&l);
    vigil_findings_summary(&l, 0, buf, sizeof buf);
    CHECK(strcmp(buf, "no findings") == 0, "empty summary: %s", buf);
    vigil_format_bytes(1, buf, sizeof buf);
    CHECK(strcmp(buf, "1 byte") == 0, "%s", buf);
    vigil_format_bytes(3.5 * 1024 * 1024, buf, sizeof buf);
    CHECK(strcmp(buf, "3.5 MiB") == 0, "%s", buf);
}

int main(void)
{
    test_round_trip();
    test_malformed();
    test_sarif();
    test_suppressions();
    test_sort_and_text();
    return CHECK_DONE("findings");
}
