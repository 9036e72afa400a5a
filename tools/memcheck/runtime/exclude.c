/* What the user excludes from the memory checker (exclude.h). No allocation: the runtime part
 * calls the maps reader from a check. */
#include "exclude.h"

#include <stdio.h>
#include <string.h>

/* A number at *p (0x hex or decimal): 0 with *v, *p past it; -1 when there is none or it
 * overflows. */
static int number(const char **p, uint64_t *v)
{
    const char *s = *p;
    unsigned base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        base = 16, s += 2;
    uint64_t x = 0;
    const char *start = s;
    for (;; s++) {
        unsigned d;
        if (*s >= '0' && *s <= '9')
            d = (unsigned)(*s - '0');
        else if (base == 16 && *s >= 'a' && *s <= 'f')
            d = (unsigned)(*s - 'a' + 10);
        else if (base == 16 && *s >= 'A' && *s <= 'F')
            d = (unsigned)(*s - 'A' + 10);
        else
            break;
        if (x > (UINT64_MAX - d) / base)
            return -1;
        x = x * base + d;
    }
    if (s == start)
        return -1;
    *v = x;
    *p = s;
    return 0;
}

int mc_ranges_parse(const char *text, struct mc_range *out, size_t *n, char *err, size_t errlen)
{
    *n = 0;
    const char *p = text;
    for (unsigned item = 1; *p; item++) {
        const char *start = p;
        size_t len = strcspn(p, ",");
        uint64_t lo, hi;
        const char *q = p;
        if (number(&q, &lo) != 0 || *q != '-' || (q++, number(&q, &hi) != 0) || q != p + len) {
            snprintf(err, errlen, "range %u \"%.*s\": expected LO-HI, two addresses in hex (0x50000-0x60000) or decimal",
                     item, (int)(len < 64 ? len : 64), start);
            return -1;
        }
        if (lo >= hi) {
            snprintf(err, errlen, "range %u \"%.*s\": expected LO below HI (HI is the first address past the range)",
                     item, (int)(len < 64 ? len : 64), start);
            return -1;
        }
        if (*n == MC_RANGES_MAX) {
            snprintf(err, errlen, "more than %d ranges", MC_RANGES_MAX);
            return -1;
        }
        out[(*n)++] = (struct mc_range){(uintptr_t)lo, (uintptr_t)hi};
        p += len;
        if (*p == ',' && !*++p) {
            snprintf(err, errlen, "a range expected after the last ','");
            return -1;
        }
    }
    return 0;
}

int mc_kinds_parse(const char *text, unsigned *kinds, char *err, size_t errlen)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {{"stack", MC_MEM_STACK}, {"heap", MC_MEM_HEAP}, {"globals", MC_MEM_GLOBALS}, {"shared", MC_MEM_SHARED}};
    *kinds = 0;
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, ",");
        unsigned bit = 0;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i].name) == len && !strncmp(p, names[i].name, len))
                bit = names[i].bit;
        if (!bit) {
            snprintf(err, errlen, "\"%.*s\": expected stack, heap, globals or shared (comma-separated)",
                     (int)(len < 64 ? len : 64), p);
            return -1;
        }
        *kinds |= bit;
        p += len;
        if (*p == ',' && !*++p) {
            snprintf(err, errlen, "a kind expected after the last ','");
            return -1;
        }
    }
    return 0;
}

void mc_maps_begin(struct mc_maps_reader *r, struct mc_range *out, uint8_t *shared, size_t max)
{
    r->len = 0;
    r->out = out;
    r->shared = shared;
    r->n = 0;
    r->max = max;
    r->dropped = 0;
}

/* One line "lo-hi perms offset dev inode path": a shared mapping is kept. */
static void maps_line(struct mc_maps_reader *r)
{
    r->line[r->len] = 0;
    const char *p = r->line;
    uint64_t lo, hi;
    char hex[64];
    /* the fields are hex without 0x */
    if (strlen(p) < 3)
        return;
    size_t a = strspn(p, "0123456789abcdef");
    if (!a || a > 16 || p[a] != '-')
        return;
    snprintf(hex, sizeof hex, "0x%.*s", (int)a, p);
    const char *h = hex;
    if (number(&h, &lo) != 0)
        return;
    p += a + 1;
    size_t b = strspn(p, "0123456789abcdef");
    if (!b || b > 16 || p[b] != ' ')
        return;
    snprintf(hex, sizeof hex, "0x%.*s", (int)b, p);
    h = hex;
    if (number(&h, &hi) != 0 || lo >= hi)
        return;
    p += b + 1;
    if (strlen(p) < 4)
        return;
    int shared = p[3] == 's';
    if (!shared && !r->shared)
        return;
    if (r->n == r->max) {
        r->dropped++;
        return;
    }
    if (r->shared)
        r->shared[r->n] = (uint8_t)shared;
    r->out[r->n++] = (struct mc_range){(uintptr_t)lo, (uintptr_t)hi};
}

void mc_maps_feed(struct mc_maps_reader *r, const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\n') {
            maps_line(r);
            r->len = 0;
        } else if (r->len < sizeof r->line - 1) {
            r->line[r->len++] = text[i];
        }
    }
}

void mc_maps_end(struct mc_maps_reader *r)
{
    if (r->len)
        maps_line(r);
    r->len = 0;
}
