/* Unit test of the options parser (common/options.c): defaults from the table, good and bad
 * VIGIL_OPTIONS input (one message per bad item naming the source, the item and what was
 * expected; the previous value stays), tool options passed over, formatting, help listing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "options.h"

struct messages {
    int n;
    char text[16][600];
};

static void collect(void *arg, const char *msg)
{
    struct messages *m = arg;
    if (m->n < 16)
        snprintf(m->text[m->n], sizeof m->text[0], "%s", msg);
    m->n++;
}

static int parse(struct vigil_options *o, const char *text, struct messages *m)
{
    memset(m, 0, sizeof *m);
    return vigil_options_parse(o, text, "VIGIL_OPTIONS", collect, m);
}

static void test_defaults(void)
{
    struct vigil_options o;
    vigil_options_defaults(&o);
#define VIGIL_OPTION(name, type, def, help) +1
    size_t rows = 0 
#include "options.inc"
        ;
#undef VIGIL_OPTION
    CHECK(vigil_option_count == rows, "table has %zu entries, options.inc %zu rows",
          vigil_option_count, rows);
    CHECK(strcmp(o.mode, "adaptive") == 0, "default mode %s", o.mode);
    CHECK(strcmp(o.out, "vigil-out") == 0, "default out %s", o.out);
    CHECK(o.tools[0] == '\0', "default tools \"%s\"", o.tools);
    CHECK(o.ninstr == 0 && o.decrement == 10 && o.interval == 10 && o.interval_growth == 10,
          "default schedule %u %u %u %u", o.ninstr, o.decrement, o.interval, o.interval_growth);
    CHECK(o.rate_floor == 0.001 && o.bursty_rate == 0.001, "default rates %g %g", o.rate_floor,
          o.bursty_rate);
    CHECK(o.report == 1 && o.summary == 0 && o.help == 0 && o.verbosity == 0, "default flags");
}

static void test_good_input(void)
{
    struct vigil_options o;
    struct messages m;
    vigil_options_defaults(&o);
    int errors = parse(&o, "mode=full:ninstr=5:rate_floor=1e-4:tools=count,leak:out=\"/tmp/a b\""
                           ":summary=yes:report=false:verbosity=2:bursty_rate=0.25:"
                           "interval=4294967295", &m);
    CHECK(errors == 0 && m.n == 0, "good input: %d errors, first: %s", errors, m.text[0]);
    CHECK(strcmp(o.mode, "full") == 0, "mode %s", o.mode);
    CHECK(o.ninstr == 5, "ninstr %u", o.ninstr);
    CHECK(o.rate_floor == 1e-4, "rate_floor %g", o.rate_floor);
    CHECK(strcmp(o.tools, "count,leak") == 0, "tools %s (',' is data)", o.tools);
    CHECK(strcmp(o.out, "/tmp/a b") == 0, "out %s (quoted)", o.out);

    /* White space separates items too, as in ASAN_OPTIONS. */
    struct vigil_options w;
    vigil_options_defaults(&w);
    errors = parse(&w, "mode=off ninstr=7\tout='/x y:z'  summary=1", &m);
    CHECK(errors == 0 && strcmp(w.mode, "off") == 0 && w.ninstr == 7 && w.summary == 1 &&
          strcmp(w.out, "/x y:z") == 0, "spaces: %d errors, mode %s ninstr %u out %s", errors,
          w.mode, w.ninstr, w.out);
    errors = parse(&w, "out=\"/open", &m);
    CHECK(errors == 1 && strcmp(w.out, "/x y:z") == 0, "unclosed quote rejected: %d", errors);
    CHECK(o.summary == 1 && o.report == 0 && o.verbosity == 2, "flags %d %d %u", o.summary,
          o.report, o.verbosity);
    CHECK(o.bursty_rate == 0.25 && o.interval == 4294967295u, "bursty_rate %g interval %u",
          o.bursty_rate, o.interval);

    /* Every boolean spelling; empty items; the last value wins; tool options pass. */
    static const char *const yes[] = {"1", "true", "yes"}, *const no[] = {"0", "false", "no"};
    char text[64];
    for (int i = 0; i < 3; i++) {
        snprintf(text, sizeof text, "summary=%s", yes[i]);
        parse(&o, text, &m);
        CHECK(o.summary == 1 && m.n == 0, "summary=%s gives %d", yes[i], o.summary);
        snprintf(text, sizeof text, "summary=%s", no[i]);
        parse(&o, text, &m);
        CHECK(o.summary == 0 && m.n == 0, "summary=%s gives %d", no[i], o.summary);
    }
    errors = parse(&o, "::mode=off::ninstr=7:ninstr=8:count.print=1:leak.stale_ms=100:", &m);
    CHECK(errors == 0 && strcmp(o.mode, "off") == 0 && o.ninstr == 8,
          "empty items, last wins, tool options: %d errors, mode %s, ninstr %u (%s)", errors,
          o.mode, o.ninstr, m.text[0]);
    errors = parse(&o, "tools=", &m);
    CHECK(errors == 0 && o.tools[0] == '\0', "empty string value accepted");
    errors = parse(&o, NULL, &m);
    CHECK(errors == 0, "NULL text is no options");
}

/* One bad item: exactly one message, naming the source and the item, and `expect` in it; the
 * value before the item stays. */
static void bad(const char *text, const char *expect, const char *field, const char *kept)
{
    struct vigil_options o;
    struct messages m;
    char before[VIGIL_OPT_STRING_MAX], after[VIGIL_OPT_STRING_MAX];
    vigil_options_defaults(&o);
    size_t index = vigil_option_count;
    for (size_t i = 0; field && i < vigil_option_count; i++)
        if (strcmp(vigil_option_table[i].name, field) == 0)
            index = i;
    vigil_options_format(&o, index, before, sizeof before);
    int errors = parse(&o, text, &m);
    vigil_options_format(&o, index, after, sizeof after);
    CHECK(errors == 1 && m.n == 1, "\"%.60s\": %d errors, %d messages", text, errors, m.n);
    CHECK(strstr(m.text[0], "VIGIL_OPTIONS") != NULL, "message names the source: %s", m.text[0]);
    char item[48];
    snprintf(item, sizeof item, "%.40s", text);
    CHECK(strstr(m.text[0], item) != NULL, "message names the item \"%s\": %s", item, m.text[0]);
    CHECK(strstr(m.text[0], expect) != NULL, "message says \"%s\": %s", expect, m.text[0]);
    CHECK(strchr(m.text[0], '\n') == NULL, "message is one line: %s", m.text[0]);
    if (field) {
        CHECK(strcmp(before, after) == 0, "\"%s\": %s changed from %s to %s", text, field, before,
              after);
        CHECK(strcmp(after, kept) == 0, "\"%s\": %s is %s, expected %s", text, field, after, kept);
    }
}

static void test_bad_input(void)
{
    bad("mode=fast", "{adaptive,bursty,full,off}", "mode", "adaptive");
    bad("mode=", "{adaptive,bursty,full,off}", "mode", "adaptive");
    bad("ninstr=abc", "integer", "ninstr", "0");
    bad("ninstr=-1", "integer", "ninstr", "0");
    bad("ninstr=4294967296", "integer", "ninstr", "0");
    bad("ninstr=5x", "integer", "ninstr", "0");
    bad("ninstr=", "integer", "ninstr", "0");
    bad("rate_floor=nan", "number", "rate_floor", "0.001");
    bad("rate_floor=inf", "number", "rate_floor", "0.001");
    bad("rate_floor=0x1p-3", "number", "rate_floor", "0.001");
    bad("rate_floor=1e999", "number", "rate_floor", "0.001");
    bad("rate_floor=0.1x", "number", "rate_floor", "0.001");
    bad("summary=maybe", "true/false", "summary", "0");
    bad("bogus=1", "unknown option \"bogus\"", NULL, NULL);
    bad("Mode=full", "unknown option", "mode", "adaptive");
    bad("justaword", "expected key=value", NULL, NULL);
    bad("=5", "expected key=value", NULL, NULL);

    char longval[400] = "out=";
    memset(longval + 4, 'x', 300);
    longval[304] = '\0';
    bad(longval, "at most 255 characters", "out", "vigil-out");

    /* Several bad items among good ones: each reported, the good ones applied. */
    struct vigil_options o;
    struct messages m;
    vigil_options_defaults(&o);
    int errors = parse(&o, "ninstr=x:mode=bursty:foo=1:decrement=3:rate_floor=y", &m);
    CHECK(errors == 3 && m.n == 3, "3 bad items among 5: %d errors", errors);
    CHECK(strcmp(o.mode, "bursty") == 0 && o.decrement == 3 && o.ninstr == 0,
          "good items applied around bad ones: %s %u %u", o.mode, o.decrement, o.ninstr);
    /* The value given earlier in the same text stays when a later item is bad. */
    errors = parse(&o, "ninstr=5:ninstr=x", &m);
    CHECK(errors == 1 && o.ninstr == 5 && strstr(m.text[0], "keeping ninstr=5"),
          "earlier value kept: %u (%s)", o.ninstr, m.text[0]);
}

static void test_set_and_format(void)
{
    struct vigil_options o;
    char why[128], buf[64];
    vigil_options_defaults(&o);
    CHECK(vigil_options_set(&o, "ninstr", "42", why, sizeof why) == 0 && o.ninstr == 42, "set ninstr");
    CHECK(vigil_options_set(&o, "nope", "1", why, sizeof why) == -1 && strstr(why, "nope"),
          "set unknown: %s", why);
    CHECK(vigil_options_set(&o, "ninstr", "z", why, sizeof why) == -1 && o.ninstr == 42,
          "set bad value keeps the value: %u (%s)", o.ninstr, why);
    for (size_t i = 0; i < vigil_option_count; i++) {
        const struct vigil_option_desc *d = &vigil_option_table[i];
        struct vigil_options fresh;
        vigil_options_defaults(&fresh);
        vigil_options_format(&fresh, i, buf, sizeof buf);
        /* Formatting a default and parsing it back gives the same text. */
        char again[64];
        CHECK(vigil_options_set(&fresh, d->name, buf, why, sizeof why) == 0, "%s=%s re-parses: %s",
              d->name, buf, why);
        vigil_options_format(&fresh, i, again, sizeof again);
        CHECK(strcmp(buf, again) == 0, "%s round trip %s -> %s", d->name, buf, again);
    }
    size_t floor_index = 0;
    for (size_t i = 0; i < vigil_option_count; i++)
        if (strcmp(vigil_option_table[i].name, "rate_floor") == 0)
            floor_index = i;
    vigil_options_format(&o, floor_index, buf, sizeof buf);
    CHECK(strcmp(buf, "0.001") == 0, "rate_floor formats as %s", buf);
}

struct lines {
    int n;
    char all[8192];
};

static void emit(void *arg, const char *line)
{
    struct lines *l = arg;
    l->n++;
    CHECK(strchr(line, '\n') == NULL, "help line has no newline: %s", line);
    strncat(l->all, line, sizeof l->all - strlen(l->all) - 2);
    strcat(l->all, "\n");
}

static void test_help(void)
{
    struct lines l = {0};
    vigil_options_help(emit, &l);
    CHECK(l.n == (int)vigil_option_count + 2, "help: %d lines for %zu options", l.n,
          vigil_option_count);
    for (size_t i = 0; i < vigil_option_count; i++) {
        const struct vigil_option_desc *d = &vigil_option_table[i];
        char row[512];
        snprintf(row, sizeof row, "\n  %-16s ", d->name);
        const char *at = strstr(l.all, row);
        CHECK(at != NULL, "help lists %s", d->name);
        if (at) {
            const char *end = strchr(at + 1, '\n');
            char line[1024];
            snprintf(line, sizeof line, "%.*s", (int)(end - at - 1), at + 1);
            CHECK(strstr(line, d->help) != NULL, "help of %s has its meaning", d->name);
            CHECK(strstr(line, d->def[0] ? d->def : "\"\"") != NULL, "help of %s has its default",
                  d->name);
        }
    }
    CHECK(strstr(l.all, "  mode                 enum    adaptive") != NULL, "mode row: type and default");
}

/* vigil_parse_decimal agrees with strtod to the bit, on its fast path (at most 2^53 in the
 * digits, a power of ten up to 22) and beyond it, and refuses what strtod would half-read. */
static void test_parse_decimal(void)
{
    static const char *const good[] = {
        "0.001", "1e-3", "0", "0.0", "12", "+7", "-2.5", "1.", ".5", "100000000000000000000000",
        "9007199254740993", "0.1", "0.3", "1e22", "1e23", "4.35", "123456789012345678901234567890",
        "2.2250738585072014e-308", "1.7976931348623157e308", "0.000000000000000000000001", "5E+2",
        "3.14159265358979323846", "0.0000001", "1e-22", "1e-23"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        double got = -1, want = strtod(good[i], NULL);
        int rc = vigil_parse_decimal(good[i], &got);
        CHECK(rc == 0 && memcmp(&got, &want, sizeof got) == 0, "%s: rc %d, %.17g, strtod %.17g",
              good[i], rc, got, want);
    }
    static const char *const bad[] = {"", ".", "-", "+", "1e", "1e+", "e5", "1.2.3", "0x10",
                                      "nan", "inf", "1e999", "1 ", " 1", "--1", "1e-999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double got = 42;
        CHECK(vigil_parse_decimal(bad[i], &got) == -1 && got == 42, "\"%s\" accepted as %g", bad[i], got);
    }
    /* Random decimals of up to 17 digits, point anywhere, exponents -30..30. */
    uint64_t state = 0x9e3779b97f4a7c15u;
    int mismatches = 0;
    for (int i = 0; i < 200000; i++) {
        char text[64];
        state = state * 6364136223846793005u + 1442695040888963407u;
        int ndigits = 1 + (int)((state >> 33) % 17), point = (int)((state >> 40) % (unsigned)(ndigits + 1));
        int exponent = (int)((state >> 48) % 61) - 30, n = 0;
        uint64_t r = state;
        for (int d = 0; d < ndigits; d++) {
            if (d == point)
                text[n++] = '.';
            r = r * 6364136223846793005u + 1;
            text[n++] = (char)('0' + (r >> 60) % 10);
        }
        snprintf(text + n, sizeof text - (size_t)n, "e%d", exponent);
        double got, want = strtod(text, NULL);
        if (vigil_parse_decimal(text, &got) != 0 || memcmp(&got, &want, sizeof got) != 0) {
            if (mismatches++ < 3)
                CHECK(0, "%s: %.17g, strtod %.17g", text, got, want);
        }
    }
    CHECK(mismatches == 0, "%d of 200000 random decimals differ from strtod", mismatches);
}

int main(void)
{
    test_defaults();
    test_good_input();
    test_bad_input();
    test_set_and_format();
    test_help();
    test_parse_decimal();
    return CHECK_DONE("test_options");
}
