/* A small JSON reader (racejson.h). Recursive descent, depth-limited. */
#include "racejson.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

struct rj_reader {
    const char *text, *p, *end;
    int depth;
    char *err;
    size_t errlen;
};

static void position(const struct rj_reader *r, const char *at, int *line, int *col)
{
    *line = 1, *col = 1;
    for (const char *q = r->text; q < at && q < r->end; q++) {
        if (*q == '\n')
            (*line)++, *col = 1;
        else
            (*col)++;
    }
}

static int fail(struct rj_reader *r, const char *what)
{
    int line, col;
    position(r, r->p, &line, &col);
    if (r->err && r->errlen)
        snprintf(r->err, r->errlen, "%d:%d: expected %s", line, col, what);
    return -1;
}

static void skip_ws(struct rj_reader *r)
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

static int read_string(struct rj_reader *r, char **out)
{
    if (r->p >= r->end || *r->p != '"')
        return fail(r, "a string");
    r->p++;
    size_t cap = 32, n = 0;
    char *s = malloc(cap);
    if (!s)
        return fail(r, "memory");
    while (r->p < r->end && *r->p != '"') {
        unsigned char c = (unsigned char)*r->p++;
        unsigned cp = c;
        if (c < 0x20) {
            free(s);
            r->p--;
            return fail(r, "no control character in a string");
        }
        if (c == '\\') {
            if (r->p >= r->end)
                break;
            char e = *r->p++;
            switch (e) {
            case '"': case '\\': case '/': cp = (unsigned)e; break;
            case 'b': cp = '\b'; break;
            case 'f': cp = '\f'; break;
            case 'n': cp = '\n'; break;
            case 'r': cp = '\r'; break;
            case 't': cp = '\t'; break;
            case 'u': {
                cp = 0;
                for (int i = 0; i < 4; i++) {
                    int h = r->p < r->end ? hexval(*r->p) : -1;
                    if (h < 0) {
                        free(s);
                        return fail(r, "four hex digits after \\u");
                    }
                    cp = cp << 4 | (unsigned)h;
                    r->p++;
                }
                break;
            }
            default:
                free(s);
                r->p--;
                return fail(r, "an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)");
            }
        }
        if (n + 5 > cap) {
            char *g = realloc(s, cap *= 2);
            if (!g) {
                free(s);
                return fail(r, "memory");
            }
            s = g;
        }
        if (c == '\\' && cp >= 0x80) {   /* \u escapes as UTF-8 (surrogates kept as they are) */
            if (cp < 0x800) {
                s[n++] = (char)(0xc0 | cp >> 6);
            } else {
                s[n++] = (char)(0xe0 | cp >> 12);
                s[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
            }
            s[n++] = (char)(0x80 | (cp & 0x3f));
        } else if (cp) {
            s[n++] = (char)cp;
        }
    }
    if (r->p >= r->end) {
        free(s);
        return fail(r, "the end of the string (\")");
    }
    r->p++;
    s[n] = 0;
    *out = s;
    return 0;
}

static int read_value(struct rj_reader *r, struct rj_value *v);

static int push(struct rj_reader *r, struct rj_value *v, size_t *cap, char *key)
{
    if (v->n == *cap) {
        size_t c = *cap ? *cap * 2 : 8;
        struct rj_value *items = realloc(v->items, c * sizeof *items);
        if (!items)
            return fail(r, "memory");
        v->items = items;
        if (v->type == RJ_OBJECT) {
            char **keys = realloc(v->keys, c * sizeof *keys);
            if (!keys)
                return fail(r, "memory");
            v->keys = keys;
        }
        *cap = c;
    }
    memset(&v->items[v->n], 0, sizeof v->items[0]);
    if (v->type == RJ_OBJECT)
        v->keys[v->n] = key;
    v->n++;
    return 0;
}

static int read_container(struct rj_reader *r, struct rj_value *v, int object)
{
    if (++r->depth > MAX_DEPTH)
        return fail(r, "less nesting");
    v->type = object ? RJ_OBJECT : RJ_ARRAY;
    r->p++;
    size_t cap = 0;
    skip_ws(r);
    if (r->p < r->end && *r->p == (object ? '}' : ']')) {
        r->p++;
        r->depth--;
        return 0;
    }
    for (;;) {
        char *key = NULL;
        skip_ws(r);
        if (object) {
            if (read_string(r, &key) != 0)
                return -1;
            skip_ws(r);
            if (r->p >= r->end || *r->p != ':') {
                free(key);
                return fail(r, "':' after a key");
            }
            r->p++;
        }
        if (push(r, v, &cap, key) != 0) {
            free(key);
            return -1;
        }
        if (read_value(r, &v->items[v->n - 1]) != 0)
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

static int read_value(struct rj_reader *r, struct rj_value *v)
{
    skip_ws(r);
    int line, col;
    position(r, r->p, &line, &col);
    v->line = line;
    if (r->p >= r->end)
        return fail(r, "a value");
    char c = *r->p;
    if (c == '{' || c == '[')
        return read_container(r, v, c == '{');
    if (c == '"') {
        v->type = RJ_STRING;
        return read_string(r, &v->string);
    }
    static const struct { const char *word; enum rj_type type; double value; } words[] = {
        {"true", RJ_BOOL, 1}, {"false", RJ_BOOL, 0}, {"null", RJ_NULL, 0}};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        size_t n = strlen(words[i].word);
        if ((size_t)(r->end - r->p) >= n && memcmp(r->p, words[i].word, n) == 0) {
            v->type = words[i].type;
            v->number = words[i].value;
            r->p += n;
            return 0;
        }
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        char buf[64];
        size_t n = 0;
        while (r->p + n < r->end && n < sizeof buf - 1 && strchr("+-0123456789.eE", r->p[n]))
            n++;
        memcpy(buf, r->p, n);
        buf[n] = 0;
        char *endp;
        v->number = strtod(buf, &endp);
        if (endp != buf + n || n == 0)
            return fail(r, "a number");
        v->type = RJ_NUMBER;
        r->p += n;
        return 0;
    }
    return fail(r, "a value (object, array, string, number, true, false or null)");
}

int rj_parse(const char *text, size_t len, struct rj_value *out, char *err, size_t errlen)
{
    struct rj_reader r = {text, text, text + len, 0, err, errlen};
    memset(out, 0, sizeof *out);
    if (read_value(&r, out) != 0) {
        rj_free(out);
        return -1;
    }
    skip_ws(&r);
    if (r.p != r.end) {
        fail(&r, "the end of the document");
        rj_free(out);
        return -1;
    }
    return 0;
}

void rj_free(struct rj_value *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++) {
        rj_free(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->string);
    memset(v, 0, sizeof *v);
}

const struct rj_value *rj_get(const struct rj_value *v, const char *key)
{
    if (!v || v->type != RJ_OBJECT)
        return NULL;
    for (size_t i = 0; i < v->n; i++)
        if (v->keys[i] && strcmp(v->keys[i], key) == 0)
            return &v->items[i];
    return NULL;
}
