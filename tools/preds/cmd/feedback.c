/* Feedback report reader and writers (grammar in feedback.h and docs/formats.md; lines,
 * header and numbers in textfmt.h). */
#include "feedback.h"
#include "sitefmt.h"
#include "textfmt.h"

#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS (VIGIL_FEEDBACK_MAX_STACK + 2)   /* the longest line: stack with every frame */
#define MAX_LINE 4096
#define MAX_FILE ((size_t)256 << 20)

unsigned vigil_feedback_npreds(uint32_t kind)
{
    return kind == VIGIL_SITE_BRANCH || kind == VIGIL_SITE_CASE ? 2 : kind == VIGIL_SITE_RETURN ? 3 : 0;
}

static const char *const collect_names[] = {
    [VIGIL_COLLECT_NONE] = "none", [VIGIL_COLLECT_SAMPLED] = "sampled",
    [VIGIL_COLLECT_ALL] = "all", [VIGIL_COLLECT_PLAN] = "plan",
};
static const char *const label_names[] = {
    [VIGIL_LABEL_NONE] = "none", [VIGIL_LABEL_SUCCESS] = "success", [VIGIL_LABEL_FAILURE] = "failure",
};

const char *vigil_collect_name(enum vigil_collect c)
{
    return (unsigned)c <= VIGIL_COLLECT_PLAN ? collect_names[c] : "?";
}

const char *vigil_label_name(enum vigil_label l)
{
    return (unsigned)l <= VIGIL_LABEL_FAILURE ? label_names[l] : "?";
}

/* ---- Parser ---- */

static const struct vigil_text_format feedback_format = {
    .magic = "vigil-feedback", .min_version = VIGIL_FEEDBACK_VERSION,
    .max_version = VIGIL_FEEDBACK_VERSION, .what = "feedback report", .quote = '`',
};

static int site_line(struct vigil_text_reader *rd, struct vigil_feedback *fb, size_t *cap, char **f, int n)
{
    if (fb->collect == VIGIL_COLLECT_NONE || fb->binary < 0)
        return vigil_text_fail(rd, "site line before `collect` and `binary`");
    uint32_t kind;
    if (n >= 3 && strcmp(f[2], "branch") == 0) kind = VIGIL_SITE_BRANCH;
    else if (n >= 3 && strcmp(f[2], "return") == 0) kind = VIGIL_SITE_RETURN;
    else if (n >= 3 && strcmp(f[2], "case") == 0) kind = VIGIL_SITE_CASE;
    else return vigil_text_fail(rd, "expected `site <id> branch|case|return <observed> <counts...>`");
    unsigned npreds = vigil_feedback_npreds(kind);
    if (n != 4 + (int)npreds)
        return vigil_text_fail(rd, "%s site needs <observed> and %u counts, got %d fields", f[2],
                               npreds, n - 3);
    uint64_t id;
    struct vigil_feedback_site s = {.kind = kind};
    if (vigil_text_decimal(f[1], UINT32_MAX - 1, &id) != 0)
        return vigil_text_fail(rd, "expected a site id (decimal, < 2^32-1), got `%s`", f[1]);
    s.id = (uint32_t)id;
    if (vigil_text_decimal(f[3], UINT64_MAX, &s.observed) != 0)
        return vigil_text_fail(rd, "expected the observed count (decimal), got `%s`", f[3]);
    uint64_t sum = 0;
    int any = 0;
    for (unsigned i = 0; i < npreds; i++) {
        if (vigil_text_decimal(f[4 + i], UINT64_MAX, &s.count[i]) != 0)
            return vigil_text_fail(rd, "expected predicate count %u (decimal), got `%s`", i, f[4 + i]);
        if (fb->binary && s.count[i] > 1)
            return vigil_text_fail(rd, "binary report: predicate flag %u is %llu, expected 0 or 1", i,
                        (unsigned long long)s.count[i]);
        if (sum > UINT64_MAX - s.count[i])
            return vigil_text_fail(rd, "predicate counts overflow");
        sum += s.count[i];
        any |= s.count[i] != 0;
    }
    if (fb->binary ? s.observed != (uint64_t)any : s.observed != sum)
        return vigil_text_fail(rd, "observed %llu does not match the predicate counts (%s)",
                    (unsigned long long)s.observed,
                    fb->binary ? "binary: 1 when any flag is set, else 0" : "expected their sum");
    if (fb->nsites && fb->sites[fb->nsites - 1].id >= s.id)
        return vigil_text_fail(rd, "site %u out of order (ids must increase)", s.id);
    if (vigil_text_grow((void **)&fb->sites, cap, fb->nsites, sizeof *fb->sites) != 0)
        return vigil_text_fail(rd, "out of memory");
    fb->sites[fb->nsites++] = s;
    return 0;
}

static int stack_line(struct vigil_text_reader *rd, struct vigil_feedback *fb, char **f, int n)
{
    if (fb->stack_depth)
        return vigil_text_fail(rd, "second `stack` line");
    if (n < 2)
        return vigil_text_fail(rd, "expected `stack <pc> ...` with at least one pc");
    for (int i = 1; i < n; i++) {
        if (fb->stack_depth == VIGIL_FEEDBACK_MAX_STACK)
            return vigil_text_fail(rd, "stack deeper than %d frames", VIGIL_FEEDBACK_MAX_STACK);
        if (vigil_text_hex(f[i], VIGIL_TEXT_HEX_0X, 1, 16, &fb->stack[fb->stack_depth++]) != 0)
            return vigil_text_fail(rd, "expected a pc like 0x4011d6, got `%s`", f[i]);
    }
    return 0;
}

static int parse_line(struct vigil_text_reader *rd, struct vigil_feedback *fb, size_t *cap, char *line)
{
    char *f[MAX_FIELDS];
    int n = vigil_text_split(rd, line, f, MAX_FIELDS);
    if (n < 0)
        return -1;
    uint64_t v;
    if (strcmp(f[0], "site") == 0)
        return site_line(rd, fb, cap, f, n);
    if (strcmp(f[0], "stack") == 0)
        return stack_line(rd, fb, f, n);
    if (strcmp(f[0], "pid") == 0) {
        if (fb->pid >= 0 || n != 2 || vigil_text_decimal(f[1], INT64_MAX, &v) != 0)
            return vigil_text_fail(rd, "expected one `pid <decimal>` line");
        fb->pid = (int64_t)v;
        return 0;
    }
    if (strcmp(f[0], "collect") == 0) {
        if (fb->collect != VIGIL_COLLECT_NONE || n != 2)
            return vigil_text_fail(rd, "expected one `collect sampled|all|plan` line");
        for (int c = VIGIL_COLLECT_SAMPLED; c <= VIGIL_COLLECT_PLAN; c++)
            if (strcmp(f[1], collect_names[c]) == 0)
                fb->collect = (enum vigil_collect)c;
        if (fb->collect == VIGIL_COLLECT_NONE)
            return vigil_text_fail(rd, "expected `collect sampled|all|plan`, got `%s`", f[1]);
        return 0;
    }
    if (strcmp(f[0], "binary") == 0) {
        if (fb->binary >= 0 || n != 2 || (strcmp(f[1], "0") != 0 && strcmp(f[1], "1") != 0))
            return vigil_text_fail(rd, "expected one `binary 0|1` line");
        fb->binary = f[1][0] - '0';
        return 0;
    }
    if (strcmp(f[0], "label") == 0) {
        if (fb->label != VIGIL_LABEL_NONE || n != 2)
            return vigil_text_fail(rd, "expected one `label success|failure` line");
        if (strcmp(f[1], "success") == 0) fb->label = VIGIL_LABEL_SUCCESS;
        else if (strcmp(f[1], "failure") == 0) fb->label = VIGIL_LABEL_FAILURE;
        else return vigil_text_fail(rd, "expected `label success|failure`, got `%s`", f[1]);
        return 0;
    }
    return vigil_text_fail(rd, "unknown key `%.40s` (expected pid, collect, binary, site, label, "
                           "stack or end)", f[0]);
}

int vigil_feedback_parse(const char *text, size_t len, const char *name,
                         struct vigil_feedback *fb, char *err, size_t errlen)
{
    struct vigil_text_reader rd;
    vigil_text_begin(&rd, &feedback_format, text, len, name ? name : "feedback", err, errlen);
    memset(fb, 0, sizeof *fb);
    fb->pid = -1;
    fb->binary = -1;
    size_t cap = 0;
    char line[MAX_LINE];
    int got;
    while ((got = vigil_text_next_line(&rd, line, sizeof line)) > 0)
        if (got == VIGIL_TEXT_LINE && parse_line(&rd, fb, &cap, line) != 0)
            break;
    if (got != VIGIL_TEXT_DONE) {
        vigil_feedback_free(fb);
        return -1;
    }
    fb->version = rd.version;
    return 0;
}

int vigil_feedback_load(const char *path, struct vigil_feedback *fb, char *err, size_t errlen)
{
    memset(fb, 0, sizeof *fb);
    char *text;
    size_t len;
    if (vigil_text_load_file(path, MAX_FILE, &text, &len, err, errlen) != 0)
        return -1;
    int rc = vigil_feedback_parse(text, len, path, fb, err, errlen);
    free(text);
    return rc;
}

void vigil_feedback_free(struct vigil_feedback *fb)
{
    free(fb->sites);
    fb->sites = NULL;
    fb->nsites = 0;
}

/* ---- Writers ---- */

static void write_tail(FILE *f, enum vigil_label label, const uint64_t *stack, uint32_t depth)
{
    if (label != VIGIL_LABEL_NONE)
        fprintf(f, "label %s\n", vigil_label_name(label));
    if (depth) {
        fputs("stack", f);
        for (uint32_t i = 0; i < depth && i < VIGIL_FEEDBACK_MAX_STACK; i++)
            fprintf(f, " 0x%llx", (unsigned long long)stack[i]);
        fputc('\n', f);
    }
    fputs("end\n", f);
}

int vigil_feedback_write(FILE *f, const struct vigil_feedback *fb)
{
    fprintf(f, "vigil-feedback %d\n", VIGIL_FEEDBACK_VERSION);
    if (fb->pid >= 0)
        fprintf(f, "pid %lld\n", (long long)fb->pid);
    if (fb->collect != VIGIL_COLLECT_NONE)
        fprintf(f, "collect %s\n", vigil_collect_name(fb->collect));
    if (fb->binary >= 0)
        fprintf(f, "binary %d\n", fb->binary ? 1 : 0);
    for (size_t i = 0; i < fb->nsites; i++) {
        const struct vigil_feedback_site *s = &fb->sites[i];
        fprintf(f, "site %u %s %llu", s->id, vigil_site_kind_name((enum vigil_site_kind)s->kind),
                (unsigned long long)s->observed);
        for (unsigned k = 0; k < vigil_feedback_npreds(s->kind); k++)
            fprintf(f, " %llu", (unsigned long long)s->count[k]);
        fputc('\n', f);
    }
    write_tail(f, fb->label, fb->stack, fb->stack_depth);
    return ferror(f) ? -1 : 0;
}

int vigil_feedback_write_label(FILE *f, enum vigil_label label, const uint64_t *stack, uint32_t depth)
{
    fprintf(f, "vigil-feedback %d\n", VIGIL_FEEDBACK_VERSION);
    write_tail(f, label, stack, depth);
    return ferror(f) ? -1 : 0;
}
