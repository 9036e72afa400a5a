/* Feedback report reader and writers (grammar in feedback.h and docs/formats.md). */
#include "feedback.h"
#include "sitefmt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS (VIGIL_FEEDBACK_MAX_STACK + 2)   /* the longest line: stack with every frame */
#define MAX_LINE 4096
#define MAX_FILE (256u << 20)

unsigned vigil_feedback_npreds(uint32_t kind)
{
    return kind == VIGIL_SITE_BRANCH ? 2 : kind == VIGIL_SITE_RETURN ? 3 : 0;
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

struct parser {
    const char *name;
    unsigned line;
    char *err;
    size_t errlen;
};

static int fail(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct parser *p, const char *fmt, ...)
{
    if (p->err && p->errlen) {
        int n = snprintf(p->err, p->errlen, "%s:%u: ", p->name, p->line);
        if (n >= 0 && (size_t)n < p->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}

/* Decimal without sign, leading zeros only for "0", no overflow. */
static int parse_u64(const char *s, uint64_t *out)
{
    if (!*s || (s[0] == '0' && s[1]))
        return -1;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* "0x" followed by 1..16 lowercase or uppercase hex digits. */
static int parse_hex(const char *s, uint64_t *out)
{
    if (s[0] != '0' || s[1] != 'x' || !s[2] || strlen(s + 2) > 16)
        return -1;
    uint64_t v = 0;
    for (s += 2; *s; s++) {
        unsigned d;
        if (*s >= '0' && *s <= '9') d = (unsigned)(*s - '0');
        else if (*s >= 'a' && *s <= 'f') d = (unsigned)(*s - 'a' + 10);
        else if (*s >= 'A' && *s <= 'F') d = (unsigned)(*s - 'A' + 10);
        else return -1;
        v = v << 4 | d;
    }
    *out = v;
    return 0;
}

/* Split line (modified in place) at single spaces; empty fields are an error. */
static int split(char *line, char **fields, int max)
{
    int n = 0;
    char *s = line;
    for (;;) {
        if (n == max)
            return -1;
        fields[n++] = s;
        char *sp = strchr(s, ' ');
        if (!sp)
            break;
        *sp = '\0';
        s = sp + 1;
    }
    for (int i = 0; i < n; i++)
        if (!*fields[i])
            return -1;
    return n;
}

static int site_line(struct parser *p, struct vigil_feedback *fb, size_t *cap, char **f, int n)
{
    if (fb->collect == VIGIL_COLLECT_NONE || fb->binary < 0)
        return fail(p, "site line before `collect` and `binary`");
    uint32_t kind;
    if (n >= 3 && strcmp(f[2], "branch") == 0) kind = VIGIL_SITE_BRANCH;
    else if (n >= 3 && strcmp(f[2], "return") == 0) kind = VIGIL_SITE_RETURN;
    else return fail(p, "expected `site <id> branch|return <observed> <counts...>`");
    unsigned npreds = vigil_feedback_npreds(kind);
    if (n != 4 + (int)npreds)
        return fail(p, "%s site needs <observed> and %u counts, got %d fields", f[2], npreds, n - 3);
    uint64_t id;
    struct vigil_feedback_site s = {.kind = kind};
    if (parse_u64(f[1], &id) != 0 || id >= UINT32_MAX)
        return fail(p, "expected a site id (decimal, < 2^32-1), got `%s`", f[1]);
    s.id = (uint32_t)id;
    if (parse_u64(f[3], &s.observed) != 0)
        return fail(p, "expected the observed count (decimal), got `%s`", f[3]);
    uint64_t sum = 0;
    int any = 0;
    for (unsigned i = 0; i < npreds; i++) {
        if (parse_u64(f[4 + i], &s.count[i]) != 0)
            return fail(p, "expected predicate count %u (decimal), got `%s`", i, f[4 + i]);
        if (fb->binary && s.count[i] > 1)
            return fail(p, "binary report: predicate flag %u is %llu, expected 0 or 1", i,
                        (unsigned long long)s.count[i]);
        if (sum > UINT64_MAX - s.count[i])
            return fail(p, "predicate counts overflow");
        sum += s.count[i];
        any |= s.count[i] != 0;
    }
    if (fb->binary ? s.observed != (uint64_t)any : s.observed != sum)
        return fail(p, "observed %llu does not match the predicate counts (%s)",
                    (unsigned long long)s.observed,
                    fb->binary ? "binary: 1 when any flag is set, else 0" : "expected their sum");
    if (fb->nsites && fb->sites[fb->nsites - 1].id >= s.id)
        return fail(p, "site %u out of order (ids must increase)", s.id);
    if (fb->nsites == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        void *m = realloc(fb->sites, ncap * sizeof *fb->sites);
        if (!m)
            return fail(p, "out of memory");
        fb->sites = m;
        *cap = ncap;
    }
    fb->sites[fb->nsites++] = s;
    return 0;
}

static int stack_line(struct parser *p, struct vigil_feedback *fb, char **f, int n)
{
    if (fb->stack_depth)
        return fail(p, "second `stack` line");
    if (n < 2)
        return fail(p, "expected `stack <pc> ...` with at least one pc");
    for (int i = 1; i < n; i++) {
        if (fb->stack_depth == VIGIL_FEEDBACK_MAX_STACK)
            return fail(p, "stack deeper than %d frames", VIGIL_FEEDBACK_MAX_STACK);
        if (parse_hex(f[i], &fb->stack[fb->stack_depth++]) != 0)
            return fail(p, "expected a pc like 0x4011d6, got `%s`", f[i]);
    }
    return 0;
}

static int parse_line(struct parser *p, struct vigil_feedback *fb, size_t *cap, char *line)
{
    char *f[MAX_FIELDS];
    int n = split(line, f, MAX_FIELDS);
    if (n < 0)
        return fail(p, "malformed line (fields are separated by single spaces, at most %d)", MAX_FIELDS);
    uint64_t v;
    if (strcmp(f[0], "site") == 0)
        return site_line(p, fb, cap, f, n);
    if (strcmp(f[0], "stack") == 0)
        return stack_line(p, fb, f, n);
    if (strcmp(f[0], "pid") == 0) {
        if (fb->pid >= 0 || n != 2 || parse_u64(f[1], &v) != 0 || v > INT64_MAX)
            return fail(p, "expected one `pid <decimal>` line");
        fb->pid = (int64_t)v;
        return 0;
    }
    if (strcmp(f[0], "collect") == 0) {
        if (fb->collect != VIGIL_COLLECT_NONE || n != 2)
            return fail(p, "expected one `collect sampled|all|plan` line");
        for (int c = VIGIL_COLLECT_SAMPLED; c <= VIGIL_COLLECT_PLAN; c++)
            if (strcmp(f[1], collect_names[c]) == 0)
                fb->collect = (enum vigil_collect)c;
        if (fb->collect == VIGIL_COLLECT_NONE)
            return fail(p, "expected `collect sampled|all|plan`, got `%s`", f[1]);
        return 0;
    }
    if (strcmp(f[0], "binary") == 0) {
        if (fb->binary >= 0 || n != 2 || (strcmp(f[1], "0") != 0 && strcmp(f[1], "1") != 0))
            return fail(p, "expected one `binary 0|1` line");
        fb->binary = f[1][0] - '0';
        return 0;
    }
    if (strcmp(f[0], "label") == 0) {
        if (fb->label != VIGIL_LABEL_NONE || n != 2)
            return fail(p, "expected one `label success|failure` line");
        if (strcmp(f[1], "success") == 0) fb->label = VIGIL_LABEL_SUCCESS;
        else if (strcmp(f[1], "failure") == 0) fb->label = VIGIL_LABEL_FAILURE;
        else return fail(p, "expected `label success|failure`, got `%s`", f[1]);
        return 0;
    }
    return fail(p, "unknown key `%.40s` (expected pid, collect, binary, site, label, stack or end)", f[0]);
}

int vigil_feedback_parse(const char *text, size_t len, const char *name,
                         struct vigil_feedback *fb, char *err, size_t errlen)
{
    struct parser p = {.name = name ? name : "feedback", .line = 0, .err = err, .errlen = errlen};
    memset(fb, 0, sizeof *fb);
    fb->pid = -1;
    fb->binary = -1;
    size_t cap = 0, pos = 0;
    char line[MAX_LINE];
    int ended = 0;
    while (pos < len) {
        p.line++;
        const char *nl = memchr(text + pos, '\n', len - pos);
        if (!nl) {
            fail(&p, "last line has no newline (torn report?)");
            goto bad;
        }
        size_t n = (size_t)(nl - (text + pos));
        if (n >= sizeof line) {
            fail(&p, "line longer than %d bytes", MAX_LINE - 1);
            goto bad;
        }
        memcpy(line, text + pos, n);
        line[n] = '\0';
        pos += n + 1;
        if (strlen(line) != n || memchr(line, '\r', n)) {
            fail(&p, "NUL or carriage return in line");
            goto bad;
        }
        if (ended) {
            fail(&p, "text after `end`");
            goto bad;
        }
        if (p.line == 1) {
            uint64_t version;
            if (strncmp(line, "vigil-feedback ", 15) != 0 || parse_u64(line + 15, &version) != 0) {
                fail(&p, "expected `vigil-feedback %d` (not a feedback report)", VIGIL_FEEDBACK_VERSION);
                goto bad;
            }
            if (version != VIGIL_FEEDBACK_VERSION) {
                fail(&p, "feedback report version %llu, this vigil reads version %d",
                     (unsigned long long)version, VIGIL_FEEDBACK_VERSION);
                goto bad;
            }
            fb->version = (uint32_t)version;
            continue;
        }
        if (strcmp(line, "end") == 0) {
            ended = 1;
            continue;
        }
        if (parse_line(&p, fb, &cap, line) != 0)
            goto bad;
    }
    if (p.line == 0) {
        p.line = 1;
        fail(&p, "empty file, expected `vigil-feedback %d`", VIGIL_FEEDBACK_VERSION);
        goto bad;
    }
    if (!ended) {
        p.line++;
        fail(&p, "missing `end` (torn report)");
        goto bad;
    }
    return 0;
bad:
    vigil_feedback_free(fb);
    return -1;
}

int vigil_feedback_load(const char *path, struct vigil_feedback *fb, char *err, size_t errlen)
{
    memset(fb, 0, sizeof *fb);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    int rc = -1;
    while (buf) {
        if (len == cap) {
            if (cap >= MAX_FILE) {
                snprintf(err, errlen, "%s: larger than %u MiB", path, MAX_FILE >> 20);
                goto out;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb)
                break;
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto out;
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: read error", path);
        goto out;
    }
    rc = vigil_feedback_parse(buf, len, path, fb, err, errlen);
out:
    free(buf);
    fclose(f);
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
