/* See jsontree.h. */
#include "jsontree.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct reader {
    const char *text, *p, *end;
    int depth;
    char *err;
    size_t errlen;
    int failed;
};

static int fail(struct reader *r, const char *what)
{
    if (r->failed)
        return -1;
    r->failed = 1;
    int line = 1, col = 1;
    for (const char *q = r->text; q < r->p && q < r->end; q++) {
        if (*q == '\n')
            line++, col = 1;
        else
            col++;
    }
    if (r->err && r->errlen)
        snprintf(r->err, r->errlen, "%d:%d: expected %s", line, col, what);
    return -1;
}

static int line_of(const struct reader *r)
{
    int line = 1;
    for (const char *q = r->text; q < r->p; q++)
        line += *q == '\n';
    return line;
}

static void skip_ws(struct reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int hex4(struct reader *r, unsigned *out)
{
    if (r->end - r->p < 4)
        return fail(r, "4 hex digits after \\u");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(r->p[i]);
        if (h < 0)
            return fail(r, "4 hex digits after \\u");
        v = v << 4 | (unsigned)h;
    }
    r->p += 4;
    *out = v;
    return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

static int read_string(struct reader *r, char **out)
{
    if (r->p >= r->end || *r->p != '"')
        return fail(r, "a string");
    r->p++;
    /* The decoded text is never longer than the source. */
    const char *q = r->p;
    while (q < r->end && *q != '"')
        q += *q == '\\' ? 2 : 1;
    if (q >= r->end)
        return fail(r, "the end of a string");
    char *s = malloc((size_t)(q - r->p) + 1), *o = s;
    if (!s)
        return fail(r, "less data (out of memory)");
    while (*r->p != '"') {
        unsigned char c = (unsigned char)*r->p;
        if (c < 0x20) {
            free(s);
            return fail(r, "no control character in a string");
        }
        if (c != '\\') {
            *o++ = (char)c;
            r->p++;
            continue;
        }
        r->p++;
        char e = *r->p++;
        switch (e) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            unsigned cp;
            if (hex4(r, &cp) != 0) {
                free(s);
                return -1;
            }
            if (cp >= 0xd800 && cp < 0xdc00 && r->end - r->p >= 6 && r->p[0] == '\\' && r->p[1] == 'u') {
                const char *back = r->p;
                unsigned lo;
                r->p += 2;
                if (hex4(r, &lo) != 0) {
                    free(s);
                    return -1;
                }
                if (lo >= 0xdc00 && lo < 0xe000)
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                else
                    r->p = back;   /* a lone high surrogate, then another escape */
            }
            if (cp >= 0xd800 && cp < 0xe000)
                cp = 0xfffd;   /* a lone surrogate */
            /* "\uXXXX" is 6 source bytes, at most 4 decoded ones; a pair, 12 for 4. */
            o += put_utf8(o, cp);
            break;
        }
        default:
            r->p--;
            free(s);
            return fail(r, "an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
        }
    }
    r->p++;
    *o = '\0';
    *out = s;
    return 0;
}

static int read_number(struct reader *r, double *out)
{
    const char *s = r->p;
    if (r->p < r->end && *r->p == '-')
        r->p++;
    if (r->p >= r->end || *r->p < '0' || *r->p > '9')
        return fail(r, "a digit");
    if (*r->p == '0')
        r->p++;
    else
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
            r->p++;
    if (r->p < r->end && *r->p == '.') {
        r->p++;
        if (r->p >= r->end || *r->p < '0' || *r->p > '9')
            return fail(r, "a digit after '.'");
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
            r->p++;
    }
    if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
        r->p++;
        if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
            r->p++;
        if (r->p >= r->end || *r->p < '0' || *r->p > '9')
            return fail(r, "a digit in the exponent");
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
            r->p++;
    }
    char buf[64];
    size_t n = (size_t)(r->p - s);
    if (n >= sizeof buf) {
        r->p = s;
        return fail(r, "a number of at most 63 characters");
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    *out = strtod(buf, NULL);
    return 0;
}

static int read_literal(struct reader *r, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
        return fail(r, "a value");
    r->p += n;
    return 0;
}

static int read_value(struct reader *r, struct vigil_jv *v);

/* Append an empty member to an array or object; NULL when out of memory. */
static struct vigil_jv *grow(struct reader *r, struct vigil_jv *v, size_t *cap, int keyed)
{
    if (v->n == *cap) {
        size_t c = *cap ? *cap * 2 : 4;
        struct vigil_jv *items = realloc(v->items, c * sizeof *items);
        if (!items) {
            fail(r, "less data (out of memory)");
            return NULL;
        }
        v->items = items;
        if (keyed) {
            char **keys = realloc(v->keys, c * sizeof *keys);
            if (!keys) {
                fail(r, "less data (out of memory)");
                return NULL;
            }
            v->keys = keys;
        }
        *cap = c;
    }
    struct vigil_jv *m = &v->items[v->n];
    memset(m, 0, sizeof *m);
    if (keyed)
        v->keys[v->n] = NULL;
    v->n++;
    return m;
}

static int read_container(struct reader *r, struct vigil_jv *v, int object)
{
    if (++r->depth > VIGIL_JV_MAX_DEPTH)
        return fail(r, "at most 64 levels of nesting");
    r->p++;
    size_t cap = 0;
    skip_ws(r);
    if (r->p < r->end && *r->p == (object ? '}' : ']')) {
        r->p++;
        r->depth--;
        return 0;
    }
    for (;;) {
        skip_ws(r);
        char *key = NULL;
        if (object) {
            if (read_string(r, &key) != 0)
                return -1;
            skip_ws(r);
            if (r->p >= r->end || *r->p != ':') {
                free(key);
                return fail(r, "':' after a key");
            }
            r->p++;
            skip_ws(r);
        }
        struct vigil_jv *m = grow(r, v, &cap, object);
        if (!m) {
            free(key);
            return -1;
        }
        if (object)
            v->keys[v->n - 1] = key;
        if (read_value(r, m) != 0)
            return -1;
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == (object ? '}' : ']')) {
            r->p++;
            r->depth--;
            return 0;
        }
        return fail(r, object ? "',' or '}'" : "',' or ']'");
    }
}

static int read_value(struct reader *r, struct vigil_jv *v)
{
    skip_ws(r);
    memset(v, 0, sizeof *v);
    v->line = line_of(r);
    if (r->p >= r->end)
        return fail(r, "a value");
    switch (*r->p) {
    case '{':
        v->type = VIGIL_JV_OBJECT;
        return read_container(r, v, 1);
    case '[':
        v->type = VIGIL_JV_ARRAY;
        return read_container(r, v, 0);
    case '"':
        v->type = VIGIL_JV_STRING;
        return read_string(r, &v->string);
    case 't':
        v->type = VIGIL_JV_BOOL;
        v->number = 1;
        return read_literal(r, "true");
    case 'f':
        v->type = VIGIL_JV_BOOL;
        return read_literal(r, "false");
    case 'n':
        v->type = VIGIL_JV_NULL;
        return read_literal(r, "null");
    default:
        v->type = VIGIL_JV_NUMBER;
        return read_number(r, &v->number);
    }
}

int vigil_jv_parse(const char *text, size_t len, struct vigil_jv *out, char *err, size_t errlen)
{
    struct reader r = {text, text, text + len, 0, err, errlen, 0};
    memset(out, 0, sizeof *out);
    if (read_value(&r, out) == 0) {
        skip_ws(&r);
        if (r.p == r.end)
            return 0;
        fail(&r, "the end of the document");
    }
    vigil_jv_free(out);
    memset(out, 0, sizeof *out);
    return -1;
}

void vigil_jv_free(struct vigil_jv *v)
{
    if (!v)
        return;
    free(v->string);
    for (size_t i = 0; i < v->n; i++) {
        vigil_jv_free(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    memset(v, 0, sizeof *v);
}

const struct vigil_jv *vigil_jv_get(const struct vigil_jv *v, const char *key)
{
    if (!v || v->type != VIGIL_JV_OBJECT)
        return NULL;
    for (size_t i = v->n; i-- > 0;)
        if (v->keys[i] && strcmp(v->keys[i], key) == 0)
            return &v->items[i];
    return NULL;
}
