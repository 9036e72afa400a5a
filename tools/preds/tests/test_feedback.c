// unit-extra: tools/preds/cmd/feedback.c
/* Feedback report parser: good reports parse to the right values and survive a write/parse
 * round trip; each kind of bad input is rejected with "name:line:" and a reason. */
#include "check.h"
#include "../cmd/feedback.h"
#include "sitefmt.h"

#include <stdlib.h>
#include <string.h>

static const char good[] =
    "vigil-feedback 1\n"
    "pid 4242\n"
    "collect sampled\n"
    "binary 0\n"
    "site 3 branch 7 2 5\n"
    "site 9 return 6 1 0 5\n"
    "site 12 case 4 3 1\n"
    "site 4000000000 branch 1 1 0\n"
    "label failure\n"
    "stack 0x401136 0x7f00deadbeef\n"
    "end\n";

static int parse(const char *text, struct vigil_feedback *fb, char *err, size_t errlen)
{
    /* exactly sized heap copy without a terminator: over-reads show under ASan */
    size_t len = strlen(text);
    char *copy = malloc(len ? len : 1);
    memcpy(copy, text, len);
    int rc = vigil_feedback_parse(copy, len, "t.txt", fb, err, errlen);
    free(copy);
    return rc;
}

static void test_good(void)
{
    struct vigil_feedback fb;
    char err[256] = "";
    CHECK(parse(good, &fb, err, sizeof err) == 0, "good report rejected: %s", err);
    CHECK(fb.version == 1 && fb.pid == 4242, "version %u pid %lld", fb.version, (long long)fb.pid);
    CHECK(fb.collect == VIGIL_COLLECT_SAMPLED && fb.binary == 0, "collect %d binary %d",
          fb.collect, fb.binary);
    CHECK(fb.nsites == 4, "nsites %zu", fb.nsites);
    if (fb.nsites == 4) {
        CHECK(fb.sites[0].id == 3 && fb.sites[0].kind == VIGIL_SITE_BRANCH &&
              fb.sites[0].observed == 7 && fb.sites[0].count[0] == 2 && fb.sites[0].count[1] == 5,
              "site 0 fields");
        CHECK(fb.sites[1].kind == VIGIL_SITE_RETURN && fb.sites[1].count[0] == 1 &&
              fb.sites[1].count[1] == 0 && fb.sites[1].count[2] == 5, "site 1 fields");
        CHECK(fb.sites[2].kind == VIGIL_SITE_CASE && fb.sites[2].observed == 4 && fb.sites[2].count[0] == 3 &&
              fb.sites[2].count[1] == 1, "case site fields");
        CHECK(fb.sites[3].id == 4000000000u, "large id %u", fb.sites[3].id);
    }
    CHECK(fb.label == VIGIL_LABEL_FAILURE, "label %d", fb.label);
    CHECK(fb.stack_depth == 2 && fb.stack[0] == 0x401136 && fb.stack[1] == 0x7f00deadbeefull,
          "stack %u %llx", fb.stack_depth, (unsigned long long)fb.stack[0]);

    /* round trip through the writer gives the same text */
    char *out = NULL;
    size_t outlen = 0;
    FILE *f = open_memstream(&out, &outlen);
    CHECK(vigil_feedback_write(f, &fb) == 0, "write failed");
    fclose(f);
    CHECK(outlen == strlen(good) && memcmp(out, good, outlen) == 0, "round trip differs:\n%s", out);
    free(out);
    vigil_feedback_free(&fb);

    /* label-only file, as `vigil run --label-by` writes it */
    f = open_memstream(&out, &outlen);
    uint64_t pcs[1] = {0x1234};
    vigil_feedback_write_label(f, VIGIL_LABEL_SUCCESS, pcs, 1);
    fclose(f);
    CHECK(parse(out, &fb, err, sizeof err) == 0, "label file rejected: %s", err);
    CHECK(fb.label == VIGIL_LABEL_SUCCESS && fb.nsites == 0 && fb.pid == -1 &&
          fb.collect == VIGIL_COLLECT_NONE && fb.stack_depth == 1 && fb.stack[0] == 0x1234,
          "label file fields");
    vigil_feedback_free(&fb);
    free(out);

    /* binary reports: flags and observed flag */
    CHECK(parse("vigil-feedback 1\ncollect sampled\nbinary 1\nsite 1 return 1 1 0 1\n"
                "site 2 branch 0 0 0\nend\n", &fb, err, sizeof err) == 0,
          "binary report rejected: %s", err);
    vigil_feedback_free(&fb);
}

struct bad_case {
    const char *text;
    const char *expect;     /* substring of the message, which must start "t.txt:<line>:" */
    unsigned line;
};

static const struct bad_case bad[] = {
    {"", "empty file", 1},
    {"vigil-run 1\nend\n", "expected `vigil-feedback 1`", 1},
    {"vigil-feedback 2\nend\n", "version 2", 1},
    {"vigil-feedback 01\nend\n", "expected `vigil-feedback 1`", 1},
    {"vigil-feedback 1\n", "missing `end`", 2},
    {"vigil-feedback 1\nend", "no newline", 2},
    {"vigil-feedback 1\nend\npid 3\n", "after `end`", 3},
    {"vigil-feedback 1\nsite 1 branch 1 0 1\nend\n", "before `collect`", 2},
    {"vigil-feedback 1\ncollect sampled\nbinary 0\nsite 1 branch 2 0 1\nend\n", "does not match", 4},
    {"vigil-feedback 1\ncollect sampled\nbinary 0\nsite 1 branch 1 1\nend\n", "needs <observed> and 2", 4},
    {"vigil-feedback 1\ncollect sampled\nbinary 0\nsite 1 return 1 0 1\nend\n", "needs <observed> and 3", 4},
    {"vigil-feedback 1\ncollect sampled\nbinary 0\nsite 1 load 1 1\nend\n", "branch|case|return", 4},
    {"vigil-feedback 1\ncollect sampled\nbinary 0\nsite x branch 1 0 1\nend\n", "site id", 4},
    {"vigil-feedback 1\ncollect sampled\nbinary 0\nsite 4294967295 branch 1 0 1\nend\n", "site id", 4},
    {"vigil-feedback 1\ncollect sampled\nbinary 0\nsite 1 branch 1 -1 2\nend\n", "predicate count 0", 4},
    {"vigil-feedback 1\ncollect sampled\nbinary 0\nsite 1 branch 18446744073709551615 18446744073709551615 1\nend\n",
     "overflow", 4},
    {"vigil-feedback 1\ncollect sampled\nbinary 0\nsite 1 branch 99999999999999999999 0 1\nend\n", "observed", 4},
    {"vigil-feedback 1\ncollect sampled\nbinary 1\nsite 1 branch 1 0 2\nend\n", "expected 0 or 1", 4},
    {"vigil-feedback 1\ncollect sampled\nbinary 1\nsite 1 branch 0 0 1\nend\n", "does not match", 4},
    {"vigil-feedback 1\ncollect sampled\nbinary 0\nsite 5 branch 1 0 1\nsite 5 branch 1 0 1\nend\n", "out of order", 5},
    {"vigil-feedback 1\ncollect sampled\nbinary 0\nsite 5 branch 1 0 1\nsite 4 branch 1 0 1\nend\n", "out of order", 5},
    {"vigil-feedback 1\ncollect often\nend\n", "sampled|all|plan", 2},
    {"vigil-feedback 1\ncollect sampled\ncollect all\nend\n", "one `collect", 3},
    {"vigil-feedback 1\nbinary 2\nend\n", "binary 0|1", 2},
    {"vigil-feedback 1\npid -3\nend\n", "pid", 2},
    {"vigil-feedback 1\nlabel maybe\nend\n", "success|failure", 2},
    {"vigil-feedback 1\nlabel success\nlabel failure\nend\n", "one `label", 3},
    {"vigil-feedback 1\nstack\nend\n", "at least one pc", 2},
    {"vigil-feedback 1\nstack 401136\nend\n", "expected a pc", 2},
    {"vigil-feedback 1\nstack 0x12345678901234567\nend\n", "expected a pc", 2},
    {"vigil-feedback 1\nstack 0x1\nstack 0x2\nend\n", "second `stack`", 3},
    {"vigil-feedback 1\ncolour blue\nend\n", "unknown key `colour`", 2},
    {"vigil-feedback 1\npid  3\nend\n", "malformed line", 2},
    {"vigil-feedback 1\npid 3 \nend\n", "malformed line", 2},
    {"vigil-feedback 1\r\nend\n", "carriage return", 1},
    {"vigil-feedback 1\npid 3\r\nend\n", "carriage return", 2},
};

static void test_bad(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct vigil_feedback fb;
        char err[256] = "", prefix[32];
        int rc = parse(bad[i].text, &fb, err, sizeof err);
        CHECK(rc == -1, "bad case %zu accepted", i);
        snprintf(prefix, sizeof prefix, "t.txt:%u: ", bad[i].line);
        CHECK(strncmp(err, prefix, strlen(prefix)) == 0, "bad case %zu: message `%s` does not start `%s`",
              i, err, prefix);
        CHECK(strstr(err, bad[i].expect) != NULL, "bad case %zu: message `%s` lacks `%s`", i, err,
              bad[i].expect);
        CHECK(fb.sites == NULL && fb.nsites == 0, "bad case %zu left sites allocated", i);
    }
    /* NUL inside a line, and a line that is too long */
    struct vigil_feedback fb;
    char err[256] = "";
    static const char with_nul[] = "vigil-feedback 1\npid 1\0\nend\n";
    CHECK(vigil_feedback_parse(with_nul, sizeof with_nul - 1, "t.txt", &fb, err, sizeof err) == -1 &&
          strstr(err, "t.txt:2: NUL") != NULL, "NUL accepted or wrong message: %s", err);
    size_t n = 10000;
    char *longline = malloc(n + 64);
    strcpy(longline, "vigil-feedback 1\nstack ");
    size_t at = strlen(longline);
    memset(longline + at, '1', n);
    strcpy(longline + at + n, "\nend\n");
    CHECK(parse(longline, &fb, err, sizeof err) == -1 && strstr(err, "t.txt:2: line longer") != NULL,
          "long line: %s", err);
    free(longline);
    /* a stack of 65 frames is one too many */
    char deep[2048] = "vigil-feedback 1\nstack";
    for (int i = 0; i < VIGIL_FEEDBACK_MAX_STACK + 1; i++)
        strcat(deep, " 0x1");
    strcat(deep, "\nend\n");
    CHECK(parse(deep, &fb, err, sizeof err) == -1 && strstr(err, "deeper than") != NULL, "deep: %s", err);
    /* a missing file names the path */
    CHECK(vigil_feedback_load("/nonexistent/preds.txt", &fb, err, sizeof err) == -1 &&
          strstr(err, "/nonexistent/preds.txt") != NULL, "load missing: %s", err);
}

int main(void)
{
    test_good();
    test_bad();
    return CHECK_DONE("feedback");
}
