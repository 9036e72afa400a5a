/* Plan file reader and writer (grammar in plan.h; lines, header and numbers in textfmt.h). */
#include "plan.h"
#include "textfmt.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE 256

static const struct vigil_text_format plan_format = {
    .magic = "vigil-plan", .min_version = VIGIL_PLAN_VERSION, .max_version = VIGIL_PLAN_VERSION,
    .what = "plan file", .quote = '`',
};

/* Exactly 16 lowercase hex digits, as run.txt and `vigil sites` print tu hashes. */
static int parse_hash(const char *s, uint64_t *out)
{
    return vigil_text_hex(s, VIGIL_TEXT_HEX_LOWERCASE, 16, 16, out);
}

static int parse_u32(const char *s, uint32_t *out)
{
    uint64_t v;
    if (vigil_text_decimal(s, UINT32_MAX, &v) != 0)
        return -1;
    *out = (uint32_t)v;
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

static int parse_line(struct vigil_text_reader *rd, struct vigil_plan *p, char *line, size_t *mcap,
                      size_t *scap, struct seen *seen)
{
    char *f[4];
    int n = vigil_text_split(rd, line, f, 4);
    if (n < 0)
        return -1;
    uint64_t hash;
    uint32_t v;
    if (strcmp(f[0], "module") == 0) {
        if (n != 3 || parse_hash(f[1], &hash) != 0 || parse_u32(f[2], &v) != 0)
            return vigil_text_fail(rd, "expected `module <tu_hash: 16 lowercase hex digits> <nsites>`");
        if (find_module(p, hash) >= 0)
            return vigil_text_fail(rd, "module %s listed twice", f[1]);
        if (vigil_text_grow((void **)&p->modules, mcap, p->nmodules, sizeof *p->modules) != 0 ||
            vigil_text_grow((void **)&seen->bits, &seen->cap, p->nmodules, sizeof *seen->bits) != 0)
            return vigil_text_fail(rd, "out of memory");
        seen->bits[p->nmodules] = NULL;
        p->modules[p->nmodules++] = (struct vigil_plan_module){hash, v, rd->line};
        return 0;
    }
    if (strcmp(f[0], "site") == 0) {
        if (n != 3 || parse_hash(f[1], &hash) != 0 || parse_u32(f[2], &v) != 0)
            return vigil_text_fail(rd, "expected `site <tu_hash> <local index>`");
        int m = find_module(p, hash);
        if (m < 0)
            return vigil_text_fail(rd, "site of module %s, which has no `module` line before it", f[1]);
        if (v >= p->modules[m].nsites)
            return vigil_text_fail(rd, "site %u out of range: module %s has %u sites", v, f[1],
                                   p->modules[m].nsites);
        if (!seen->bits[m] && !(seen->bits[m] = calloc(p->modules[m].nsites / 8 + 1, 1)))
            return vigil_text_fail(rd, "out of memory");
        if (seen->bits[m][v / 8] & (1u << (v % 8)))
            return vigil_text_fail(rd, "site %s %u listed twice", f[1], v);
        seen->bits[m][v / 8] |= (uint8_t)(1u << (v % 8));
        if (vigil_text_grow((void **)&p->sites, scap, p->nsites, sizeof *p->sites) != 0)
            return vigil_text_fail(rd, "out of memory");
        p->sites[p->nsites++] = (struct vigil_plan_site){(uint32_t)m, v, rd->line};
        return 0;
    }
    return vigil_text_fail(rd, "unknown key `%.40s` (expected module, site or end)", f[0]);
}

int vigil_plan_parse(const char *text, size_t len, const char *name, struct vigil_plan *p,
                     char *err, size_t errlen)
{
    struct vigil_text_reader rd;
    vigil_text_begin(&rd, &plan_format, text, len, name ? name : "plan", err, errlen);
    memset(p, 0, sizeof *p);
    struct seen seen = {NULL, 0};
    size_t mcap = 0, scap = 0;
    int got, rc = -1;
    char line[MAX_LINE];
    while ((got = vigil_text_next_line(&rd, line, sizeof line)) > 0)
        if (got == VIGIL_TEXT_LINE && parse_line(&rd, p, line, &mcap, &scap, &seen) != 0)
            goto out;
    rc = got;   /* VIGIL_TEXT_DONE (0) or -1 */
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
