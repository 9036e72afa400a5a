/* Plan file reader and writer (grammar in plan.h). */
#include "plan.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE 256

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

static int parse_u32(const char *s, uint32_t *out)
{
    if (!*s || (s[0] == '0' && s[1]))
        return -1;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || (v = v * 10 + (uint64_t)(*s - '0')) > UINT32_MAX)
            return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

/* Exactly 16 lowercase hex digits, as run.txt and `vigil sites` print tu hashes. */
static int parse_hash(const char *s, uint64_t *out)
{
    if (strlen(s) != 16)
        return -1;
    uint64_t v = 0;
    for (; *s; s++) {
        unsigned d;
        if (*s >= '0' && *s <= '9') d = (unsigned)(*s - '0');
        else if (*s >= 'a' && *s <= 'f') d = (unsigned)(*s - 'a' + 10);
        else return -1;
        v = v << 4 | d;
    }
    *out = v;
    return 0;
}

static int grow(void **items, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 16;
    void *m = realloc(*items, ncap * size);
    if (!m)
        return -1;
    *items = m;
    *cap = ncap;
    return 0;
}

static int find_module(const struct vigil_plan *p, uint64_t hash)
{
    for (size_t i = 0; i < p->nmodules; i++)
        if (p->modules[i].tu_hash == hash)
            return (int)i;
    return -1;
}

/* Sites are checked for duplicates with a per-module bitmap, built lazily. */
struct seen {
    uint8_t **bits;    /* per module, nsites bits */
    size_t cap;
};

static int parse_line(struct parser *ps, struct vigil_plan *p, char *line, size_t *mcap,
                      size_t *scap, struct seen *seen)
{
    char *f[4];
    int n = 0;
    for (char *s = line;; ) {
        if (n == 4)
            return fail(ps, "too many fields");
        f[n++] = s;
        char *sp = strchr(s, ' ');
        if (!sp)
            break;
        *sp = '\0';
        s = sp + 1;
    }
    for (int i = 0; i < n; i++)
        if (!*f[i])
            return fail(ps, "malformed line (fields are separated by single spaces)");
    uint64_t hash;
    uint32_t v;
    if (strcmp(f[0], "module") == 0) {
        if (n != 3 || parse_hash(f[1], &hash) != 0 || parse_u32(f[2], &v) != 0)
            return fail(ps, "expected `module <tu_hash: 16 lowercase hex digits> <nsites>`");
        if (find_module(p, hash) >= 0)
            return fail(ps, "module %s listed twice", f[1]);
        if (grow((void **)&p->modules, p->nmodules, mcap, sizeof *p->modules) != 0 ||
            grow((void **)&seen->bits, p->nmodules, &seen->cap, sizeof *seen->bits) != 0)
            return fail(ps, "out of memory");
        seen->bits[p->nmodules] = NULL;
        p->modules[p->nmodules++] = (struct vigil_plan_module){hash, v, ps->line};
        return 0;
    }
    if (strcmp(f[0], "site") == 0) {
        if (n != 3 || parse_hash(f[1], &hash) != 0 || parse_u32(f[2], &v) != 0)
            return fail(ps, "expected `site <tu_hash> <local index>`");
        int m = find_module(p, hash);
        if (m < 0)
            return fail(ps, "site of module %s, which has no `module` line before it", f[1]);
        if (v >= p->modules[m].nsites)
            return fail(ps, "site %u out of range: module %s has %u sites", v, f[1], p->modules[m].nsites);
        if (!seen->bits[m] && !(seen->bits[m] = calloc(p->modules[m].nsites / 8 + 1, 1)))
            return fail(ps, "out of memory");
        if (seen->bits[m][v / 8] & (1u << (v % 8)))
            return fail(ps, "site %s %u listed twice", f[1], v);
        seen->bits[m][v / 8] |= (uint8_t)(1u << (v % 8));
        if (grow((void **)&p->sites, p->nsites, scap, sizeof *p->sites) != 0)
            return fail(ps, "out of memory");
        p->sites[p->nsites++] = (struct vigil_plan_site){(uint32_t)m, v, ps->line};
        return 0;
    }
    return fail(ps, "unknown key `%.40s` (expected module, site or end)", f[0]);
}

int vigil_plan_parse(const char *text, size_t len, const char *name, struct vigil_plan *p,
                     char *err, size_t errlen)
{
    struct parser ps = {.name = name ? name : "plan", .err = err, .errlen = errlen};
    memset(p, 0, sizeof *p);
    struct seen seen = {NULL, 0};
    size_t mcap = 0, scap = 0, pos = 0;
    int ended = 0, rc = -1;
    char line[MAX_LINE];
    while (pos < len) {
        ps.line++;
        const char *nl = memchr(text + pos, '\n', len - pos);
        if (!nl) {
            fail(&ps, "last line has no newline (torn file?)");
            goto out;
        }
        size_t n = (size_t)(nl - (text + pos));
        if (n >= sizeof line) {
            fail(&ps, "line longer than %d bytes", MAX_LINE - 1);
            goto out;
        }
        memcpy(line, text + pos, n);
        line[n] = '\0';
        pos += n + 1;
        if (strlen(line) != n || memchr(line, '\r', n)) {
            fail(&ps, "NUL or carriage return in line");
            goto out;
        }
        if (ended) {
            fail(&ps, "text after `end`");
            goto out;
        }
        if (ps.line == 1) {
            uint32_t version;
            if (strncmp(line, "vigil-plan ", 11) != 0 || parse_u32(line + 11, &version) != 0) {
                fail(&ps, "expected `vigil-plan %d` (not a plan file)", VIGIL_PLAN_VERSION);
                goto out;
            }
            if (version != VIGIL_PLAN_VERSION) {
                fail(&ps, "plan version %u, this vigil reads version %d", version, VIGIL_PLAN_VERSION);
                goto out;
            }
            continue;
        }
        if (strcmp(line, "end") == 0) {
            ended = 1;
            continue;
        }
        if (parse_line(&ps, p, line, &mcap, &scap, &seen) != 0)
            goto out;
    }
    if (ps.line == 0) {
        ps.line = 1;
        fail(&ps, "empty file, expected `vigil-plan %d`", VIGIL_PLAN_VERSION);
    } else if (!ended) {
        ps.line++;
        fail(&ps, "missing `end` (torn file)");
    } else {
        rc = 0;
    }
out:
    for (size_t i = 0; i < p->nmodules; i++)
        free(seen.bits[i]);
    free(seen.bits);
    if (rc != 0)
        vigil_plan_free(p);
    return rc;
}

void vigil_plan_free(struct vigil_plan *p)
{
    free(p->modules);
    free(p->sites);
    memset(p, 0, sizeof *p);
}

int vigil_plan_write(FILE *f, const struct vigil_plan *p)
{
    fprintf(f, "vigil-plan %d\n", VIGIL_PLAN_VERSION);
    for (size_t i = 0; i < p->nmodules; i++)
        fprintf(f, "module %016" PRIx64 " %u\n", p->modules[i].tu_hash, p->modules[i].nsites);
    for (size_t i = 0; i < p->nsites; i++)
        fprintf(f, "site %016" PRIx64 " %u\n", p->modules[p->sites[i].module].tu_hash, p->sites[i].index);
    fputs("end\n", f);
    return ferror(f) ? -1 : 0;
}
