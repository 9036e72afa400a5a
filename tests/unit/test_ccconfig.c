/* vigil-cc's configuration file parser (common/ccconfig.c): sections, src:/fun: globs,
 * comments, matching, the writer's round trip, and each bad line rejected with NAME:LINE. */
#include "ccconfig.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

static int parse(const char *text, struct vigil_ccconfig *c, char *err, size_t errlen)
{
    size_t len = strlen(text);
    char *copy = malloc(len ? len : 1);   /* exactly sized: over-reads show under ASan */
    memcpy(copy, text, len);
    int rc = vigil_ccconfig_parse(copy, len, "v.conf", c, err, errlen);
    free(copy);
    return rc;
}

static void test_good(void)
{
    static const char text[] =
        "# made by hand\n"
        "\n"
        "  [skip]  \r\n"
        "fun:hot_*\n"
        "src:*/gen/*.c\n"
        "[memcheck.tested]\n"
        "fun: tested_one \n"
        "   # indented comment\n"
        "[skip]\n"
        "fun:again";
    struct vigil_ccconfig c;
    char err[256] = "";
    CHECK(parse(text, &c, err, sizeof err) == 0, "rejected: %s", err);
    CHECK(c.nsections == 2, "sections %zu", c.nsections);
    CHECK(c.nsections == 2 && !strcmp(c.sections[0].name, "skip") && c.sections[0].line == 3 &&
          !strcmp(c.sections[1].name, "memcheck.tested"), "section names and lines");
    CHECK(c.nentries == 4, "entries %zu", c.nentries);
    CHECK(c.nentries == 4 && c.entries[3].section == 0 && c.entries[3].line == 10 &&
          !strcmp(c.entries[2].glob, "tested_one"), "entries trimmed, repeated section merged");
    CHECK(vigil_ccconfig_match(&c, "skip", "hot_loop", NULL), "fun glob");
    CHECK(vigil_ccconfig_match(&c, "skip", "again", "x.c"), "entry of the repeated section");
    CHECK(!vigil_ccconfig_match(&c, "skip", "cold", "src/main.c"), "no match");
    CHECK(vigil_ccconfig_match(&c, "skip", "cold", "/home/u/p/gen/parse.c"), "src glob across '/'");
    CHECK(!vigil_ccconfig_match(&c, "tested", "tested_one", NULL), "another section's entries");
    CHECK(vigil_ccconfig_match(&c, "memcheck.tested", "tested_one", NULL), "tool section");
    CHECK(!vigil_ccconfig_match(&c, "absent", "hot_x", "a.c"), "absent section");
    CHECK(vigil_ccconfig_has(&c, "memcheck.tested") && !vigil_ccconfig_has(&c, "tested"), "has");

    char *out = NULL;
    size_t outlen = 0;
    FILE *f = open_memstream(&out, &outlen);
    CHECK(vigil_ccconfig_write(f, &c) == 0, "write");
    fclose(f);
    struct vigil_ccconfig again;
    CHECK(vigil_ccconfig_parse(out, outlen, "w", &again, err, sizeof err) == 0, "rewritten rejected: %s", err);
    CHECK(again.nsections == c.nsections && again.nentries == c.nentries, "round trip counts");
    /* the writer groups each section's entries: in that order, the same entries */
    for (size_t k = 0, j = 0; k < c.nsections; k++)
        for (size_t i = 0; i < c.nentries; i++)
            if (c.entries[i].section == k && j < again.nentries) {
                CHECK(!strcmp(c.entries[i].glob, again.entries[j].glob) && c.entries[i].kind == again.entries[j].kind &&
                      again.entries[j].section == k, "entry %zu", i);
                j++;
            }
    vigil_ccconfig_free(&again);
    free(out);
    vigil_ccconfig_free(&c);

    /* src: matches the base name too */
    CHECK(parse("[tested]\nsrc:lgc.c\n", &c, err, sizeof err) == 0, "%s", err);
    CHECK(vigil_ccconfig_match(&c, "tested", "f", "/a/b/lgc.c") && !vigil_ccconfig_match(&c, "tested", "lgc.c", NULL),
          "base name; fun is not src");
    vigil_ccconfig_free(&c);
    CHECK(parse("", &c, err, sizeof err) == 0 && c.nsections == 0, "empty file");
    vigil_ccconfig_free(&c);
}

static void bad(const char *text, const char *want)
{
    struct vigil_ccconfig c;
    char err[256] = "";
    int rc = parse(text, &c, err, sizeof err);
    CHECK(rc == -1 && !strncmp(err, want, strlen(want)), "\"%s\": got %d \"%s\", wanted \"%s...\"", text, rc, err, want);
    if (rc == 0) vigil_ccconfig_free(&c);
}

static void test_bad(void)
{
    bad("fun:main\n", "v.conf:1: expected a [section] header before");
    bad("[skip]\nfunc:main\n", "v.conf:2: expected a [section] header, src:GLOB, fun:GLOB");
    bad("[skip]\n\n\nfun:\n", "v.conf:4: expected a glob after");
    bad("[skip\n", "v.conf:1: expected a section header [NAME]");
    bad("[]\n", "v.conf:1: expected a section header");
    bad("[sk ip]\n", "v.conf:1: expected a section header");
    bad("[skip] fun:x\n", "v.conf:1: expected a section header");
    bad("[skip]\nfun:a[bc\n", "v.conf:2: expected a glob with every '['");
    bad("[skip]\nfun:a\\\n", "v.conf:2: expected a glob with every '['");
    bad("[skip]\nfun:f=init\n", "v.conf:2: expected a glob without '='");
    bad("[skip]\ntype:foo\n", "v.conf:2: expected a [section] header");
    bad("[skip]\nFun:foo\n", "v.conf:2: expected a [section] header");
    static const char nul[] = "[skip]\nfun:a\0b\n";
    struct vigil_ccconfig c;
    char err[256] = "";
    CHECK(vigil_ccconfig_parse(nul, sizeof nul - 1, "n.conf", &c, err, sizeof err) == -1 &&
          !strcmp(err, "n.conf:2: expected text, not a NUL byte"), "NUL: %s", err);
    CHECK(vigil_ccconfig_load("/nonexistent/v.conf", &c, NULL, NULL, err, sizeof err) == -1 &&
          strstr(err, "/nonexistent/v.conf: cannot open"), "missing file: %s", err);
}

int main(void)
{
    test_good();
    test_bad();
    return CHECK_DONE("ccconfig");
}
