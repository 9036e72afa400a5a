/* Plan file parser: a good plan parses and round-trips; each kind of bad input is rejected
 * with "name:line:" and a reason. */
#include "check.h"
#include "plan.h"

#include <stdlib.h>
#include <string.h>

static const char good[] =
    "vigil-plan 1\n"
    "module 8c29a94fe98c8b21 12\n"
    "module 00000000000000ff 3\n"
    "site 8c29a94fe98c8b21 5\n"
    "site 00000000000000ff 2\n"
    "site 8c29a94fe98c8b21 11\n"
    "end\n";

static int parse(const char *text, struct vigil_plan *p, char *err, size_t errlen)
{
    size_t len = strlen(text);
    char *copy = malloc(len ? len : 1);   /* exactly sized: over-reads show under ASan */
    memcpy(copy, text, len);
    int rc = vigil_plan_parse(copy, len, "p.vplan", p, err, errlen);
    free(copy);
    return rc;
}

static void test_good(void)
{
    struct vigil_plan p;
    char err[256] = "";
    CHECK(parse(good, &p, err, sizeof err) == 0, "good plan rejected: %s", err);
    CHECK(p.nmodules == 2 && p.modules[0].tu_hash == 0x8c29a94fe98c8b21ull &&
          p.modules[0].nsites == 12 && p.modules[1].tu_hash == 0xff, "modules");
    CHECK(p.nsites == 3 && p.sites[0].module == 0 && p.sites[0].index == 5 &&
          p.sites[1].module == 1 && p.sites[1].index == 2 && p.sites[2].index == 11, "sites");
    char *out = NULL;
    size_t outlen = 0;
    FILE *f = open_memstream(&out, &outlen);
    CHECK(vigil_plan_write(f, &p) == 0, "write");
    fclose(f);
    CHECK(outlen == strlen(good) && memcmp(out, good, outlen) == 0, "round trip differs:\n%s", out);
    free(out);
    vigil_plan_free(&p);
    CHECK(parse("vigil-plan 1\nend\n", &p, err, sizeof err) == 0 && p.nsites == 0, "empty plan: %s", err);
}

static const struct { const char *text, *expect; unsigned line; } bad[] = {
    {"", "empty file", 1},
    {"vigil-plan 2\nend\n", "version 2", 1},
    {"vigil-feedback 1\nend\n", "not a plan file", 1},
    {"vigil-plan 1\n", "missing `end`", 2},
    {"vigil-plan 1\nend", "no newline", 2},
    {"vigil-plan 1\nend\nend\n", "after `end`", 3},
    {"vigil-plan 1\nsite 8c29a94fe98c8b21 1\nend\n", "no `module` line", 2},
    {"vigil-plan 1\nmodule 8c29a94fe98c8b2 3\nend\n", "16 lowercase hex", 2},
    {"vigil-plan 1\nmodule 8C29A94FE98C8B21 3\nend\n", "16 lowercase hex", 2},
    {"vigil-plan 1\nmodule 8c29a94fe98c8b21 x\nend\n", "16 lowercase hex", 2},
    {"vigil-plan 1\nmodule 8c29a94fe98c8b21 3\nmodule 8c29a94fe98c8b21 3\nend\n", "listed twice", 3},
    {"vigil-plan 1\nmodule 8c29a94fe98c8b21 3\nsite 8c29a94fe98c8b21 3\nend\n", "out of range", 3},
    {"vigil-plan 1\nmodule 8c29a94fe98c8b21 3\nsite 8c29a94fe98c8b21 1\nsite 8c29a94fe98c8b21 1\nend\n",
     "listed twice", 4},
    {"vigil-plan 1\nmodule 8c29a94fe98c8b21 3\nsite 8c29a94fe98c8b21 01\nend\n", "expected `site", 3},
    {"vigil-plan 1\nmodule 8c29a94fe98c8b21 3\nsite 8c29a94fe98c8b21 4294967296\nend\n", "expected `site", 3},
    {"vigil-plan 1\nmodule 8c29a94fe98c8b21 3 4\nend\n", "expected `module", 2},
    {"vigil-plan 1\nmodule  8c29a94fe98c8b21 3\nend\n", "malformed", 2},
    {"vigil-plan 1\nwatch 8c29a94fe98c8b21\nend\n", "unknown key `watch`", 2},
    {"vigil-plan 1\nend\r\n", "carriage return", 2},
};

static void test_bad(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct vigil_plan p;
        char err[256] = "", prefix[32];
        CHECK(parse(bad[i].text, &p, err, sizeof err) == -1, "bad case %zu accepted", i);
        snprintf(prefix, sizeof prefix, "p.vplan:%u: ", bad[i].line);
        CHECK(strncmp(err, prefix, strlen(prefix)) == 0, "bad case %zu: `%s` does not start `%s`", i, err, prefix);
        CHECK(strstr(err, bad[i].expect) != NULL, "bad case %zu: `%s` lacks `%s`", i, err, bad[i].expect);
        CHECK(p.sites == NULL && p.modules == NULL, "bad case %zu left memory", i);
    }
    /* many modules: the parser's arrays grow past their first size */
    size_t cap = 64 * 64;
    char *many = malloc(cap);
    size_t at = (size_t)snprintf(many, cap, "vigil-plan 1\n");
    for (int m = 0; m < 40; m++)
        at += (size_t)snprintf(many + at, cap - at, "module %016x 2\n", m + 1);
    for (int m = 0; m < 40; m++)
        at += (size_t)snprintf(many + at, cap - at, "site %016x 1\n", m + 1);
    snprintf(many + at, cap - at, "end\n");
    struct vigil_plan p;
    char err[256] = "";
    CHECK(parse(many, &p, err, sizeof err) == 0 && p.nmodules == 40 && p.nsites == 40 &&
          p.sites[39].module == 39, "40 modules: %s", err);
    vigil_plan_free(&p);
    free(many);
}

int main(void)
{
    test_good();
    test_bad();
    return CHECK_DONE("plan");
}
