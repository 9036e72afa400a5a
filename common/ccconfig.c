/* vigil-cc's configuration file: parser, matcher, writer (ccconfig.h). */
#include "ccconfig.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *name, unsigned line, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(err, errlen, "%s:%u: %s", name, line, what);
    return -1;
}

static int blank(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r';
}

static int section_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
           ch == '.' || ch == '-';
}

/* A glob fnmatch takes as its author meant it: every '[' closed. */
static int balanced_glob(const char *g, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (g[i] == '\\') {
            if (++i == n) return 0;   /* a trailing backslash escapes nothing */
        } else if (g[i] == '[') {
            size_t j = i + 1;
            if (j < n && (g[j] == '!' || g[j] == '^')) j++;
            if (j < n && g[j] == ']') j++;   /* a leading ']' is a member */
            while (j < n && g[j] != ']') j++;
            if (j == n) return 0;
            i = j;
        }
    }
    return 1;
}

static size_t find_section(const struct vigil_ccconfig *c, const char *name)
{
    for (size_t i = 0; i < c->nsections; i++)
        if (!strcmp(c->sections[i].name, name)) return i;
    return (size_t)-1;
}

int vigil_ccconfig_parse(const char *text, size_t len, const char *name, struct vigil_ccconfig *c,
                         char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        unsigned at = 1;
        for (const char *p = text; p < nul; p++) at += *p == '\n';
        return fail(err, errlen, name, at, "expected text, not a NUL byte");
    }
    /* Strings are copied into one buffer no longer than the text (each is a piece of a line
     * plus its terminator, which stands where the line's newline or a prefix was). */
    c->storage = malloc(len + 1);
    size_t lines = 1;
    for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
    c->entries = calloc(lines, sizeof *c->entries);
    c->sections = calloc(lines, sizeof *c->sections);
    if (!c->storage || !c->entries || !c->sections) {
        vigil_ccconfig_free(c);
        snprintf(err, errlen, "%s: out of memory", name);
        return -1;
    }
    size_t used = 0, current = (size_t)-1;
    unsigned line = 0;
    for (size_t pos = 0; pos < len;) {
        line++;
        const char *end = memchr(text + pos, '\n', len - pos);
        size_t n = end ? (size_t)(end - (text + pos)) : len - pos;
        const char *s = text + pos;
        pos += n + (end != NULL);
        while (n && blank(*s)) s++, n--;
        while (n && blank(s[n - 1])) n--;
        if (n == 0 || s[0] == '#') continue;
        if (s[0] == '[') {
            size_t k = 1;
            while (k < n && section_char(s[k])) k++;
            if (k == 1 || k >= n || s[k] != ']' || k + 1 != n) {
                vigil_ccconfig_free(c);
                return fail(err, errlen, name, line,
                            "expected a section header [NAME] (NAME of letters, digits, '_', '.', '-'), got \"%.*s\"",
                            (int)(n > 60 ? 60 : n), s);
            }
            char *copy = c->storage + used;
            memcpy(copy, s + 1, k - 1);
            copy[k - 1] = '\0';
            current = find_section(c, copy);
            if (current == (size_t)-1) {
                used += k;
                current = c->nsections++;
                c->sections[current] = (struct vigil_ccconfig_section){.name = copy, .line = line};
            }
            continue;
        }
        enum vigil_ccconfig_kind kind;
        if (n >= 4 && !memcmp(s, "src:", 4))
            kind = VIGIL_CCCONFIG_SRC;
        else if (n >= 4 && !memcmp(s, "fun:", 4))
            kind = VIGIL_CCCONFIG_FUN;
        else {
            vigil_ccconfig_free(c);
            return fail(err, errlen, name, line,
                        "expected a [section] header, src:GLOB, fun:GLOB or a # comment, got \"%.*s\"",
                        (int)(n > 60 ? 60 : n), s);
        }
        const char *g = s + 4;
        size_t gn = n - 4;
        while (gn && blank(*g)) g++, gn--;
        if (gn == 0) {
            vigil_ccconfig_free(c);
            return fail(err, errlen, name, line, "expected a glob after \"%.4s\"", s);
        }
        if (memchr(g, '=', gn)) {
            vigil_ccconfig_free(c);
            return fail(err, errlen, name, line,
                        "expected a glob without '=' (clang's =CATEGORY suffix has no meaning here)");
        }
        if (!balanced_glob(g, gn)) {
            vigil_ccconfig_free(c);
            return fail(err, errlen, name, line, "expected a glob with every '[' closed by ']' and no trailing '\\'");
        }
        if (current == (size_t)-1) {
            vigil_ccconfig_free(c);
            return fail(err, errlen, name, line, "expected a [section] header before the first %.4s line", s);
        }
        char *copy = c->storage + used;
        memcpy(copy, g, gn);
        copy[gn] = '\0';
        used += gn + 1;
        c->entries[c->nentries++] = (struct vigil_ccconfig_entry){.kind = kind, .glob = copy, .section = current, .line = line};
    }
    return 0;
}

int vigil_ccconfig_load(const char *path, struct vigil_ccconfig *c, char **text_out, size_t *len_out,
                        char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 4096;
            char *grown = realloc(text, cap);
            if (!grown) {
                free(text);
                fclose(f);
                snprintf(err, errlen, "%s: out of memory", path);
                return -1;
            }
            text = grown;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(text);
        snprintf(err, errlen, "%s: cannot read", path);
        return -1;
    }
    int rc = vigil_ccconfig_parse(text ? text : "", len, path, c, err, errlen);
    if (rc == 0 && text_out) {
        *text_out = text;
        *len_out = len;
    } else {
        free(text);
    }
    return rc;
}

void vigil_ccconfig_free(struct vigil_ccconfig *c)
{
    free(c->storage);
    free(c->entries);
    free(c->sections);
    memset(c, 0, sizeof *c);
}

int vigil_ccconfig_has(const struct vigil_ccconfig *c, const char *section)
{
    return c && find_section(c, section) != (size_t)-1;
}

int vigil_ccconfig_match(const struct vigil_ccconfig *c, const char *section, const char *function,
                         const char *file)
{
    if (!c) return 0;
    size_t k = find_section(c, section);
    if (k == (size_t)-1) return 0;
    const char *base = file ? strrchr(file, '/') : NULL;
    base = base ? base + 1 : file;
    for (size_t i = 0; i < c->nentries; i++) {
        const struct vigil_ccconfig_entry *e = &c->entries[i];
        if (e->section != k) continue;
        if (e->kind == VIGIL_CCCONFIG_FUN) {
            if (function && *function && !fnmatch(e->glob, function, 0)) return 1;
        } else if (file && *file && (!fnmatch(e->glob, file, 0) || !fnmatch(e->glob, base, 0))) {
            return 1;
        }
    }
    return 0;
}

int vigil_ccconfig_write(FILE *f, const struct vigil_ccconfig *c)
{
    for (size_t k = 0; k < c->nsections; k++) {
        fprintf(f, "%s[%s]\n", k ? "\n" : "", c->sections[k].name);
        for (size_t i = 0; i < c->nentries; i++)
            if (c->entries[i].section == k)
                fprintf(f, "%s:%s\n", c->entries[i].kind == VIGIL_CCCONFIG_SRC ? "src" : "fun", c->entries[i].glob);
    }
    return ferror(f) ? -1 : 0;
}
