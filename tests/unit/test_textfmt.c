/* The scaffolding of the line-oriented formats (common/textfmt.h): messages, the line loop and
 * its checks, the header, numbers, field splitting, array growth and file loading. The readers
 * built on it (run report, feedback, plan) have their own tests; these pin the shared piece. */
#include "check.h"
#include "textfmt.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct vigil_text_format one_version = {
    .magic = "demo", .min_version = 1, .max_version = 1, .what = "demo file", .quote = '`',
};
static const struct vigil_text_format two_versions = {
    .magic = "demo", .min_version = 2, .max_version = 3, .what = "demo file", .quote = '"',
    .torn_on_last_line = 1,
};

/* Read every line of text; returns the first negative or the final DONE, counting lines. */
static int read_all(const struct vigil_text_format *f, const char *text, size_t bufsize,
                    char *err, size_t errlen, unsigned *lines, struct vigil_text_reader *out)
{
    /* exactly sized heap copy without a terminator: over-reads show under ASan */
    size_t len = strlen(text);
    char *copy = malloc(len ? len : 1);
    memcpy(copy, text, len);
    char buf[64];
    struct vigil_text_reader r;
    vigil_text_begin(&r, f, copy, len, "t.txt", err, errlen);
    int got;
    *lines = 0;
    while ((got = vigil_text_next_line(&r, buf, bufsize < sizeof buf ? bufsize : sizeof buf)) > 0)
        ++*lines;
    free(copy);
    if (out)
        *out = r;
    return got;
}

static void test_fail(void)
{
    char err[64] = "";
    struct vigil_text_reader r;
    vigil_text_begin(&r, &one_version, "", 0, "a.txt", err, sizeof err);
    r.line = 7;
    CHECK(vigil_text_fail(&r, "bad %s %d", "thing", 42) == -1, "fail returns -1");
    CHECK(strcmp(err, "a.txt:7: bad thing 42") == 0, "message \"%s\"", err);
    r.line = 0;
    vigil_text_fail(&r, "early");
    CHECK(strcmp(err, "a.txt:1: early") == 0, "before the first line: \"%s\"", err);

    char small[8];
    memset(small, 'x', sizeof small);
    vigil_text_begin(&r, &one_version, "", 0, "long-name.txt", small, sizeof small);
    vigil_text_fail(&r, "message");
    CHECK(memchr(small, '\0', sizeof small) != NULL, "truncated message is terminated");
    vigil_text_begin(&r, &one_version, "", 0, "a.txt", NULL, 0);
    CHECK(vigil_text_fail(&r, "no buffer") == -1, "no error buffer is fine");
}

static void test_lines(void)
{
    char err[256] = "", buf[32];
    struct vigil_text_reader r;
    static const char text[] = "demo 1\nkey a b\nend\n";
    vigil_text_begin(&r, &one_version, text, sizeof text - 1, "t.txt", err, sizeof err);
    int got = vigil_text_next_line(&r, buf, sizeof buf);
    CHECK(got == VIGIL_TEXT_LINE && strcmp(buf, "key a b") == 0 && r.line == 2 && r.version == 1,
          "first line after the header: got %d \"%s\" line %u version %u", got, buf, r.line,
          r.version);
    got = vigil_text_next_line(&r, buf, sizeof buf);
    CHECK(got == VIGIL_TEXT_END && strcmp(buf, "end") == 0 && r.line == 3, "end line: %d", got);
    got = vigil_text_next_line(&r, buf, sizeof buf);
    CHECK(got == VIGIL_TEXT_DONE, "after end: %d %s", got, err);

    unsigned lines;
    CHECK(read_all(&two_versions, "demo 3\nx\nend\n", 64, err, sizeof err, &lines, &r) == 0 &&
          lines == 2 && r.version == 3, "version range 2..3 takes 3: %s", err);
    CHECK(read_all(&two_versions, "demo 2\nend\n", 64, err, sizeof err, &lines, &r) == 0 &&
          r.version == 2, "version range 2..3 takes 2: %s", err);

    /* a line of exactly size - 1 bytes fits, one more does not */
    CHECK(read_all(&one_version, "demo 1\n12345678\nend\n", 9, err, sizeof err, &lines, NULL) == 0,
          "8-byte line in a 9-byte buffer: %s", err);
    CHECK(read_all(&one_version, "demo 1\n123456789\nend\n", 9, err, sizeof err, &lines, NULL) == -1 &&
          strcmp(err, "t.txt:2: line longer than 8 bytes") == 0, "9-byte line: %s", err);
}

static const struct {
    const struct vigil_text_format *format;
    const char *text;
    const char *expect;     /* the message after "t.txt:LINE: " must contain it */
    unsigned line;
} bad[] = {
    {&one_version, "", "empty file; expected the header `demo 1`", 1},
    {&one_version, "demo 1\n", "missing `end`: the demo file is torn", 2},
    {&two_versions, "demo 2\nx\n", "missing \"end\"", 2},          /* names the last line */
    {&one_version, "demo 1\nend", "no newline", 2},
    {&one_version, "demo 1", "no newline", 1},
    {&one_version, "demo 1\nend\nx\n", "text after `end`", 3},
    {&two_versions, "demo 2\nend\n\n", "text after \"end\"", 3},
    {&one_version, "demo 1\nend\nx", "no newline", 3},
    {&one_version, "demo 1\r\nend\n", "carriage return", 1},
    {&one_version, "demo 1\nx\ry\nend\n", "carriage return", 2},
    {&one_version, "other 1\nend\n", "expected `demo 1`, the header line; this is not a demo file", 1},
    {&one_version, "demos 1\nend\n", "not a demo file", 1},
    {&one_version, "demo\nend\n", "not a demo file", 1},
    {&one_version, "end\n", "not a demo file (got `end`)", 1},
    {&one_version, "demo 01\nend\n", "format version as a decimal number", 1},
    {&one_version, "demo  1\nend\n", "format version as a decimal number", 1},
    {&one_version, "demo 2\nend\n", "demo file version 2 is not supported; this vigil reads version 1", 1},
    {&two_versions, "demo 1\nend\n", "version 1 is not supported; this vigil reads versions 2..3", 1},
    {&two_versions, "demo 4\nend\n", "version 4", 1},
    {&two_versions, "demo 99999999999\nend\n", "format version", 1},
};

static void test_bad_lines(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[256] = "", prefix[32];
        unsigned lines;
        CHECK(read_all(bad[i].format, bad[i].text, 64, err, sizeof err, &lines, NULL) == -1,
              "bad case %zu accepted", i);
        snprintf(prefix, sizeof prefix, "t.txt:%u: ", bad[i].line);
        CHECK(strncmp(err, prefix, strlen(prefix)) == 0, "bad case %zu: `%s` does not start `%s`", i,
              err, prefix);
        CHECK(strstr(err, bad[i].expect) != NULL, "bad case %zu: `%s` lacks `%s`", i, err,
              bad[i].expect);
    }
    /* a NUL inside a line, which strlen-based code would not see */
    static const char with_nul[] = "demo 1\nab\0c\nend\n";
    char err[256] = "", buf[32];
    struct vigil_text_reader r;
    vigil_text_begin(&r, &one_version, with_nul, sizeof with_nul - 1, "t.txt", err, sizeof err);
    int got;
    while ((got = vigil_text_next_line(&r, buf, sizeof buf)) > 0)
        ;
    CHECK(got == -1 && strstr(err, "t.txt:2: NUL") == err, "NUL: %s", err);
}

static void test_decimal(void)
{
    static const struct { const char *text; uint64_t max; int ok; uint64_t value; } cases[] = {
        {"0", 10, 1, 0}, {"7", 10, 1, 7}, {"10", 10, 1, 10}, {"11", 10, 0, 0},
        {"255", 255, 1, 255}, {"256", 255, 0, 0}, {"5", 0, 0, 0}, {"0", 0, 1, 0},
        {"18446744073709551615", UINT64_MAX, 1, UINT64_MAX},
        {"18446744073709551616", UINT64_MAX, 0, 0}, {"99999999999999999999", UINT64_MAX, 0, 0},
        {"4294967295", UINT32_MAX, 1, UINT32_MAX}, {"4294967296", UINT32_MAX, 0, 0},
        {"", 10, 0, 0}, {"01", 10, 0, 0}, {"00", 10, 0, 0}, {"-1", 10, 0, 0}, {"+1", 10, 0, 0},
        {" 1", 10, 0, 0}, {"1 ", 10, 0, 0}, {"1e3", 10000, 0, 0}, {"0x1", 10, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t v = 12345;
        int rc = vigil_text_decimal(cases[i].text, cases[i].max, &v);
        CHECK(cases[i].ok ? rc == 0 && v == cases[i].value : rc == -1 && v == 12345,
              "decimal \"%s\" max %llu: rc %d value %llu", cases[i].text,
              (unsigned long long)cases[i].max, rc, (unsigned long long)v);
    }
    char err[128] = "";
    struct vigil_text_reader r;
    vigil_text_begin(&r, &one_version, "", 0, "t.txt", err, sizeof err);
    r.line = 4;
    uint64_t v;
    CHECK(vigil_text_expect_decimal(&r, "12", 99, "the count", &v) == 0 && v == 12, "expect 12");
    CHECK(vigil_text_expect_decimal(&r, "x", 99, "the count", &v) == -1 &&
          strcmp(err, "t.txt:4: expected the count (a decimal number 0..99), got `x`") == 0,
          "expect_decimal message: %s", err);
}

static void test_hex(void)
{
    static const struct {
        const char *text;
        unsigned flags;
        size_t min, max;
        int ok;
        uint64_t value;
    } cases[] = {
        {"0x1", VIGIL_TEXT_HEX_0X, 1, 16, 1, 1},
        {"0x7f00DEADbeef", VIGIL_TEXT_HEX_0X, 1, 16, 1, 0x7f00deadbeefull},
        {"0xffffffffffffffff", VIGIL_TEXT_HEX_0X, 1, 16, 1, UINT64_MAX},
        {"0x1ffffffffffffffff", VIGIL_TEXT_HEX_0X, 1, 16, 0, 0},
        {"0x", VIGIL_TEXT_HEX_0X, 1, 16, 0, 0},
        {"1", VIGIL_TEXT_HEX_0X, 1, 16, 0, 0},
        {"0X1", VIGIL_TEXT_HEX_0X, 1, 16, 0, 0},
        {"0xg", VIGIL_TEXT_HEX_0X, 1, 16, 0, 0},
        {"0x-1", VIGIL_TEXT_HEX_0X, 1, 16, 0, 0},
        {"8c29a94fe98c8b21", VIGIL_TEXT_HEX_LOWERCASE, 16, 16, 1, 0x8c29a94fe98c8b21ull},
        {"8C29A94FE98C8B21", VIGIL_TEXT_HEX_LOWERCASE, 16, 16, 0, 0},
        {"8C29A94FE98C8B21", 0, 16, 16, 1, 0x8c29a94fe98c8b21ull},
        {"8c29a94fe98c8b2", 0, 16, 16, 0, 0},
        {"8c29a94fe98c8b211", 0, 16, 16, 0, 0},
        {"0x8c29a94fe98c8b", 0, 16, 16, 0, 0},
        {"", 0, 0, 16, 1, 0},
        {"ff", 0, 1, 17, 0, 0},      /* more than 16 digits cannot fit: refused outright */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t v = 12345;
        int rc = vigil_text_hex(cases[i].text, cases[i].flags, cases[i].min, cases[i].max, &v);
        CHECK(cases[i].ok ? rc == 0 && v == cases[i].value : rc == -1 && v == 12345,
              "hex \"%s\" flags %u: rc %d value %llx", cases[i].text, cases[i].flags, rc,
              (unsigned long long)v);
    }
    CHECK(vigil_text_hex_digit('0') == 0 && vigil_text_hex_digit('9') == 9 &&
          vigil_text_hex_digit('a') == 10 && vigil_text_hex_digit('F') == 15, "hex digits");
    CHECK(vigil_text_hex_digit('g') == -1 && vigil_text_hex_digit('/') == -1 &&
          vigil_text_hex_digit(':') == -1 && vigil_text_hex_digit('@') == -1 &&
          vigil_text_hex_digit('G') == -1 && vigil_text_hex_digit('`') == -1 &&
          vigil_text_hex_digit('\0') == -1, "non-digits");
}

static void test_split(void)
{
    char err[256] = "";
    struct vigil_text_reader r;
    vigil_text_begin(&r, &one_version, "", 0, "t.txt", err, sizeof err);
    r.line = 5;
    char *f[3];
    char line[32];
    strcpy(line, "site 12 branch");
    CHECK(vigil_text_split(&r, line, f, 3) == 3 && strcmp(f[0], "site") == 0 &&
          strcmp(f[1], "12") == 0 && strcmp(f[2], "branch") == 0, "three fields");
    strcpy(line, "end");
    CHECK(vigil_text_split(&r, line, f, 3) == 1 && strcmp(f[0], "end") == 0, "key alone");
    strcpy(line, "a b c d");
    CHECK(vigil_text_split(&r, line, f, 3) == -1 &&
          strcmp(err, "t.txt:5: malformed line: more than 3 fields (the key included)") == 0,
          "too many: %s", err);
    static const char *const empty_field[] = {"", " a", "a  b", "a b ", " ", "a "};
    for (size_t i = 0; i < sizeof empty_field / sizeof empty_field[0]; i++) {
        err[0] = '\0';
        strcpy(line, empty_field[i]);
        CHECK(vigil_text_split(&r, line, f, 3) == -1 && strstr(err, "t.txt:5: malformed line") == err &&
              strstr(err, "single spaces") && strstr(err, "key"),
              "\"%s\": %s", empty_field[i], err);
    }
}

static void test_grow(void)
{
    int *items = NULL;
    size_t cap = 0;
    int ok = 1;
    for (int n = 0; n < 1000 && ok; n++) {
        ok = vigil_text_grow((void **)&items, &cap, (size_t)n, sizeof *items) == 0 && (size_t)n < cap;
        if (ok)
            items[n] = n;
    }
    CHECK(ok, "grow to 1000 elements (cap %zu)", cap);
    int kept = 1;
    for (int n = 0; n < 1000 && ok; n++)
        kept &= items[n] == n;
    CHECK(kept, "growth keeps the elements");
    size_t before = cap;
    CHECK(vigil_text_grow((void **)&items, &cap, 3, sizeof *items) == 0 && cap == before,
          "no growth when there is room");
    CHECK(vigil_text_grow((void **)&items, &cap, cap * 5, sizeof *items) == 0 && cap > before * 5,
          "a far index grows far enough (cap %zu)", cap);
    void *old = items;
    size_t oldcap = cap;
    CHECK(vigil_text_grow((void **)&items, &cap, SIZE_MAX / 2, sizeof *items) == -1 &&
          items == old && cap == oldcap, "an impossible size fails and changes nothing");
    free(items);
}

static void write_file(const char *path, size_t n, char fill)
{
    FILE *f = fopen(path, "wb");
    for (size_t i = 0; i < n && f; i++)
        fputc(fill, f);
    if (f)
        fclose(f);
}

static void test_load(void)
{
    char dir[] = "/tmp/vigil-test-textfmt-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char path[256], err[512];
    char *text;
    size_t len;
    snprintf(path, sizeof path, "%s/missing.txt", dir);
    CHECK(vigil_text_load_file(path, 100, &text, &len, err, sizeof err) == -1 &&
          strstr(err, path) == err && strstr(err, "cannot open") && text == NULL,
          "missing file: %s", err);

    snprintf(path, sizeof path, "%s/f.txt", dir);
    write_file(path, 0, 'a');
    CHECK(vigil_text_load_file(path, 100, &text, &len, err, sizeof err) == 0 && len == 0 &&
          text && text[0] == '\0', "empty file: %s", err);
    free(text);
    write_file(path, 100, 'a');
    CHECK(vigil_text_load_file(path, 100, &text, &len, err, sizeof err) == 0 && len == 100 &&
          text[0] == 'a' && text[99] == 'a' && text[100] == '\0', "exactly the cap: %s", err);
    free(text);
    write_file(path, 101, 'a');
    CHECK(vigil_text_load_file(path, 100, &text, &len, err, sizeof err) == -2 &&
          strstr(err, path) == err && strstr(err, "larger than 100 bytes") && text == NULL,
          "one byte over the cap: %s", err);
    /* past the first read chunk (64 KiB): the buffer grows and keeps every byte */
    size_t big = 200000;
    write_file(path, big, 'b');
    int rc = vigil_text_load_file(path, 1 << 20, &text, &len, err, sizeof err);
    CHECK(rc == 0 && len == big && text[big - 1] == 'b' && text[big] == '\0' &&
          strspn(text, "b") == big, "200000 bytes: rc %d len %zu %s", rc, len, err);
    if (rc == 0)
        free(text);
    unlink(path);
    /* a directory opens but does not read */
    CHECK(vigil_text_load_file(dir, 100, &text, &len, err, sizeof err) == -2 &&
          strstr(err, dir) == err && strstr(err, "read error") && text == NULL,
          "directory: %s", err);
    rmdir(dir);
}

int main(void)
{
    test_fail();
    test_lines();
    test_bad_lines();
    test_decimal();
    test_hex();
    test_split();
    test_grow();
    test_load();
    return CHECK_DONE("textfmt");
}
