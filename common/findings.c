/* Findings: the model, its JSON document (writer and reader generated from the field lists of
 * findings.h), SARIF, text, summaries and suppressions. See findings.h. */
#include "findings.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "textfmt.h"

/* ---- small helpers ---- */

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

/* Grow *items (of size `size` each) by one zeroed element, counted in *n; returns it, or NULL
 * when out of memory. With cap, *cap counts the allocated elements; without, the allocation
 * is the smallest power of two >= *n (growing at 1, 2, 4, ...). */
static void *grow(void **items, size_t *n, size_t *cap, size_t size)
{
    int full = cap ? *n >= *cap : (*n & (*n - 1)) == 0;
    if (full) {
        size_t want = cap ? (*cap ? *cap * 2 : 4) : (*n ? *n * 2 : 1);
        if (want < *n + 1 || want > SIZE_MAX / size)
            return NULL;
        void *p = realloc(*items, want * size);
        if (!p)
            return NULL;
        *items = p;
        if (cap)
            *cap = want;
    }
    char *slot = (char *)*items + *n * size;
    memset(slot, 0, size);
    (*n)++;
    return slot;
}

const char *vigil_severity_name(enum vigil_severity s)
{
    switch (s) {
    case VIGIL_ERROR: return "error";
    case VIGIL_WARNING: return "warning";
    default: return "note";
    }
}

int vigil_severity_parse(const char *name)
{
    if (strcmp(name, "error") == 0)
        return VIGIL_ERROR;
    if (strcmp(name, "warning") == 0)
        return VIGIL_WARNING;
    if (strcmp(name, "note") == 0)
        return VIGIL_NOTE;
    return -1;
}

/* ---- the schema: descriptors generated from the field lists ---- */

enum ftype { T_STRING, T_U32, T_U64, T_DOUBLE, T_HEX, T_BOOL, T_SEVERITY, T_VALUE, T_ARRAY };

struct schema;
struct fdesc {
    const char *key;
    enum ftype type;
    size_t offset;
    size_t count_offset;            /* ARRAY: offset of the size_t count */
    const struct schema *element;   /* ARRAY: what it holds */
    int required;
};
struct schema {
    const char *name;
    size_t size;
    const struct fdesc *fields;
    size_t nfields;
};

static const struct schema schema_frame, schema_location, schema_stack, schema_field, schema_finding,
    schema_document;

#define ELEMENT_none NULL
#define ELEMENT_frame &schema_frame
#define ELEMENT_location &schema_location
#define ELEMENT_stack &schema_stack
#define ELEMENT_field &schema_field
#define ELEMENT_finding &schema_finding

#define COUNT_ARRAY(S, m) offsetof(S, n##m)
#define COUNT_STRING(S, m) 0
#define COUNT_U32(S, m) 0
#define COUNT_U64(S, m) 0
#define COUNT_DOUBLE(S, m) 0
#define COUNT_HEX(S, m) 0
#define COUNT_BOOL(S, m) 0
#define COUNT_SEVERITY(S, m) 0
#define COUNT_VALUE(S, m) 0

/* Each member has the C type its TYPE says (checked when compiling). */
#define CTYPE_STRING char *
#define CTYPE_U32 uint32_t
#define CTYPE_U64 uint64_t
#define CTYPE_DOUBLE double
#define CTYPE_HEX uint64_t
#define CTYPE_BOOL int
#define CTYPE_SEVERITY enum vigil_severity
#define CTYPE_VALUE struct vigil_value
#define TYPECHECK(S, m, T)                                                                     \
    _Static_assert(__builtin_types_compatible_p(__typeof__(((S *)0)->m), CTYPE_##T),           \
                   #S "." #m " must be " #T);
#define TYPECHECK_ARRAY(S, m) /* a pointer and n##m: COUNT_ARRAY fails to compile without it */
#define CHECK_MEMBER(S, m, T, E, req) CHECK_##T(S, m, T)
#define CHECK_STRING TYPECHECK
#define CHECK_U32 TYPECHECK
#define CHECK_U64 TYPECHECK
#define CHECK_DOUBLE TYPECHECK
#define CHECK_HEX TYPECHECK
#define CHECK_BOOL TYPECHECK
#define CHECK_SEVERITY TYPECHECK
#define CHECK_VALUE TYPECHECK
#define CHECK_ARRAY(S, m, T) TYPECHECK_ARRAY(S, m)
VIGIL_FRAME_FIELDS(CHECK_MEMBER)
VIGIL_LOCATION_FIELDS(CHECK_MEMBER)
VIGIL_STACK_FIELDS(CHECK_MEMBER)
VIGIL_FIELD_FIELDS(CHECK_MEMBER)
VIGIL_FINDING_FIELDS(CHECK_MEMBER)
VIGIL_FINDINGS_FIELDS(CHECK_MEMBER)

#define DESC(S, m, T, E, req) {#m, T_##T, offsetof(S, m), COUNT_##T(S, m), ELEMENT_##E, req},
static const struct fdesc frame_fields[] = {VIGIL_FRAME_FIELDS(DESC)};
static const struct fdesc location_fields[] = {VIGIL_LOCATION_FIELDS(DESC)};
static const struct fdesc stack_fields[] = {VIGIL_STACK_FIELDS(DESC)};
static const struct fdesc field_fields[] = {VIGIL_FIELD_FIELDS(DESC)};
static const struct fdesc finding_fields[] = {VIGIL_FINDING_FIELDS(DESC)};
static const struct fdesc document_fields[] = {VIGIL_FINDINGS_FIELDS(DESC)};
#define SCHEMA(var, name, type, fields) \
    static const struct schema var = {name, sizeof(type), fields, sizeof fields / sizeof fields[0]};
SCHEMA(schema_frame, "frame", struct vigil_frame, frame_fields)
SCHEMA(schema_location, "location", struct vigil_location, location_fields)
SCHEMA(schema_stack, "stack", struct vigil_stack, stack_fields)
SCHEMA(schema_field, "field", struct vigil_field, field_fields)
SCHEMA(schema_finding, "finding", struct vigil_finding, finding_fields)
SCHEMA(schema_document, "document", struct vigil_findings, document_fields)

#define AT(obj, d) ((char *)(obj) + (d)->offset)
#define CAT(obj, d) ((const char *)(obj) + (d)->offset)

static void free_object(const struct schema *s, void *obj)
{
    for (size_t i = 0; i < s->nfields; i++) {
        const struct fdesc *d = &s->fields[i];
        switch (d->type) {
        case T_STRING:
            free(*(char **)AT(obj, d));
            *(char **)AT(obj, d) = NULL;
            break;
        case T_VALUE:
            free(((struct vigil_value *)AT(obj, d))->string);
            ((struct vigil_value *)AT(obj, d))->string = NULL;
            break;
        case T_ARRAY: {
            char **items = (char **)AT(obj, d);
            size_t *count = (size_t *)((char *)obj + d->count_offset);
            for (size_t k = 0; *items && k < *count; k++)
                free_object(d->element, *items + k * d->element->size);
            free(*items);
            *items = NULL;
            *count = 0;
            break;
        }
        default:
            break;
        }
    }
}

/* Strings never NULL: fill the members that were not set. 0, or -1 when out of memory. */
static int fill_strings(const struct schema *s, void *obj)
{
    for (size_t i = 0; i < s->nfields; i++) {
        const struct fdesc *d = &s->fields[i];
        char **p = d->type == T_STRING ? (char **)AT(obj, d)
                   : d->type == T_VALUE && !((struct vigil_value *)AT(obj, d))->is_number
                       ? &((struct vigil_value *)AT(obj, d))->string : NULL;
        if (p && !*p && !(*p = strdup("")))
            return -1;
    }
    return 0;
}

/* ---- building ---- */

void vigil_findings_init(struct vigil_findings *l)
{
    memset(l, 0, sizeof *l);
}

void vigil_findings_free(struct vigil_findings *l)
{
    free_object(&schema_document, l);
    vigil_findings_init(l);
}

int vigil_findings_set_run(struct vigil_findings *l, const char *run, const char *program)
{
    char *r = dup_or_empty(run), *p = dup_or_empty(program);
    if (!r || !p) {
        free(r), free(p);
        return -1;
    }
    free(l->run), free(l->program);
    l->run = r, l->program = p;
    return 0;
}

struct vigil_finding *vigil_findings_append(struct vigil_findings *l, const char *tool, const char *kind,
                                            enum vigil_severity severity, const char *message, double score)
{
    char *t = dup_or_empty(tool), *k = dup_or_empty(kind), *m = dup_or_empty(message);
    struct vigil_finding *f = t && k && m ? grow((void **)&l->findings, &l->nfindings, &l->cap, sizeof *f) : NULL;
    if (!f) {
        free(t), free(k), free(m);
        return NULL;
    }
    f->tool = t, f->kind = k, f->message = m;
    f->severity = severity == VIGIL_ERROR || severity == VIGIL_WARNING ? severity : VIGIL_NOTE;
    f->score = isfinite(score) ? score : 0;
    return f;
}

int vigil_findings_move(struct vigil_findings *into, struct vigil_findings *from)
{
    if (from->nfindings == 0)
        return 0;
    size_t need = into->nfindings + from->nfindings;
    if (need > into->cap) {
        struct vigil_finding *p = realloc(into->findings, need * sizeof *p);
        if (!p)
            return -1;
        into->findings = p;
        into->cap = need;
    }
    memcpy(into->findings + into->nfindings, from->findings, from->nfindings * sizeof *from->findings);
    into->nfindings = need;
    into->suppressed += from->suppressed;
    free(from->findings);
    from->findings = NULL;
    from->nfindings = from->cap = 0;
    from->suppressed = 0;
    return 0;
}

struct vigil_location *vigil_finding_add_location(struct vigil_finding *f, const char *role, const char *message,
                                                  const char *function, const char *file,
                                                  uint32_t line, uint32_t column)
{
    struct vigil_location v = {dup_or_empty(role), dup_or_empty(message), dup_or_empty(function),
                               dup_or_empty(file), line, column};
    struct vigil_location *l = v.role && v.message && v.function && v.file
                                   ? grow((void **)&f->locations, &f->nlocations, NULL, sizeof *l) : NULL;
    if (!l) {
        free_object(&schema_location, &v);
        return NULL;
    }
    *l = v;
    return l;
}

struct vigil_stack *vigil_finding_add_stack(struct vigil_finding *f, const char *label)
{
    char *s = dup_or_empty(label);
    struct vigil_stack *st = s ? grow((void **)&f->stacks, &f->nstacks, NULL, sizeof *st) : NULL;
    if (!st) {
        free(s);
        return NULL;
    }
    st->label = s;
    return st;
}

struct vigil_frame *vigil_stack_add_frame(struct vigil_stack *s, uint64_t pc, const char *function,
                                          const char *file, uint32_t line, uint32_t column, int inlined)
{
    struct vigil_frame v = {pc, dup_or_empty(function), dup_or_empty(file), line, column, inlined != 0};
    struct vigil_frame *fr = v.function && v.file ? grow((void **)&s->frames, &s->nframes, NULL, sizeof *fr) : NULL;
    if (!fr) {
        free(v.function), free(v.file);
        return NULL;
    }
    *fr = v;
    return fr;
}

const struct vigil_field *vigil_finding_field(const struct vigil_finding *f, const char *key)
{
    for (size_t i = 0; i < f->nfields; i++)
        if (strcmp(f->fields[i].key, key) == 0)
            return &f->fields[i];
    return NULL;
}

/* The field named key, reset for a new value (set semantics: one field per key). */
static struct vigil_field *field_slot(struct vigil_finding *f, const char *key)
{
    struct vigil_field *x = (struct vigil_field *)vigil_finding_field(f, key);
    if (x) {
        free(x->value.string), free(x->unit);
        x->value.string = x->unit = NULL;
        x->value.is_number = 0;
        x->total = 0;
        return x;
    }
    char *k = dup_or_empty(key);
    x = k ? grow((void **)&f->fields, &f->nfields, NULL, sizeof *x) : NULL;
    if (!x) {
        free(k);
        return NULL;
    }
    x->key = k;
    return x;
}

struct vigil_field *vigil_finding_add_number(struct vigil_finding *f, const char *key, double value,
                                             const char *unit, int total)
{
    char *u = dup_or_empty(unit);
    struct vigil_field *x = u ? field_slot(f, key) : NULL;
    if (!x) {
        free(u);
        return NULL;
    }
    x->value.is_number = 1;
    x->value.number = isfinite(value) ? value : 0;
    x->unit = u;
    x->total = total != 0;
    return x;
}

struct vigil_field *vigil_finding_add_string(struct vigil_finding *f, const char *key, const char *value)
{
    char *v = dup_or_empty(value), *u = strdup("");
    struct vigil_field *x = v && u ? field_slot(f, key) : NULL;
    if (!x) {
        free(v), free(u);
        return NULL;
    }
    x->value.string = v;
    x->unit = u;
    return x;
}

/* ---- sorting ---- */

static int worst_first(const void *x, const void *y)
{
    const struct vigil_finding *a = x, *b = y;
    if (a->score != b->score)
        return a->score < b->score ? 1 : -1;
    if (a->severity != b->severity)
        return a->severity < b->severity ? 1 : -1;
    int c = strcmp(a->tool, b->tool);
    if (!c)
        c = strcmp(a->kind, b->kind);
    if (!c)
        c = strcmp(a->message, b->message);
    return c;
}

void vigil_findings_sort(struct vigil_findings *l)
{
    if (l->nfindings > 1)
        qsort(l->findings, l->nfindings, sizeof *l->findings, worst_first);
}

/* ---- JSON writer: walks the descriptors ---- */

static void write_members(struct vigil_json *j, const struct schema *s, const void *obj);

static void write_object(struct vigil_json *j, const struct schema *s, const void *obj)
{
    vigil_json_object_begin(j);
    write_members(j, s, obj);
    vigil_json_object_end(j);
}

static void write_members(struct vigil_json *j, const struct schema *s, const void *obj)
{
    for (size_t i = 0; i < s->nfields; i++) {
        const struct fdesc *d = &s->fields[i];
        const char *p = CAT(obj, d);
        vigil_json_key(j, d->key);
        switch (d->type) {
        case T_STRING: {
            const char *str = *(char *const *)p;
            vigil_json_string(j, str ? str : "");
            break;
        }
        case T_U32: vigil_json_uint(j, *(const uint32_t *)p); break;
        case T_U64: vigil_json_uint(j, *(const uint64_t *)p); break;
        case T_DOUBLE: {
            double v = *(const double *)p;
            vigil_json_double(j, isfinite(v) ? v : 0);
            break;
        }
        case T_HEX: {
            char buf[24];
            snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)*(const uint64_t *)p);
            vigil_json_string(j, buf);
            break;
        }
        case T_BOOL: vigil_json_bool(j, *(const int *)p); break;
        case T_SEVERITY: vigil_json_string(j, vigil_severity_name(*(const enum vigil_severity *)p)); break;
        case T_VALUE: {
            const struct vigil_value *v = (const struct vigil_value *)p;
            if (v->is_number)
                vigil_json_double(j, isfinite(v->number) ? v->number : 0);
            else
                vigil_json_string(j, v->string ? v->string : "");
            break;
        }
        case T_ARRAY: {
            const char *items = *(char *const *)p;
            size_t n = *(const size_t *)((const char *)obj + d->count_offset);
            vigil_json_array_begin(j);
            for (size_t k = 0; k < n; k++)
                write_object(j, d->element, items + k * d->element->size);
            vigil_json_array_end(j);
            break;
        }
        }
    }
}

void vigil_findings_write_json(FILE *out, const struct vigil_findings *l, int pretty)
{
    struct vigil_json j;
    vigil_json_init(&j, out, pretty);
    vigil_json_object_begin(&j);
    vigil_json_key(&j, "format");
    vigil_json_string(&j, VIGIL_FINDINGS_FORMAT);
    vigil_json_key(&j, "version");
    vigil_json_uint(&j, VIGIL_FINDINGS_VERSION);
    write_members(&j, &schema_document, l);
    vigil_json_object_end(&j);
    vigil_json_finish(&j);
}

/* ---- JSON reader: a recursive descent over the same descriptors ---- */

struct reader {
    const char *start, *p, *end;
    const char *name;
    char *err;
    size_t errlen;
    int failed;
    char path[256];             /* where in the document: findings[2].stacks[0].label */
    size_t pathlen;
};

__attribute__((format(printf, 2, 3)))
static int fail_at(struct reader *r, const char *fmt, ...)
{
    if (r->failed)
        return -1;
    r->failed = 1;
    int line = 1, col = 1;
    for (const char *q = r->start; q < r->p && q < r->end; q++) {
        if (*q == '\n')
            line++, col = 1;
        else
            col++;
    }
    char what[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(r->err, r->errlen, "%s:%d:%d: %s%s%s", r->name, line, col, r->path,
             r->pathlen ? ": " : "", what);
    return -1;
}

static size_t path_push(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static size_t path_push(struct reader *r, const char *fmt, ...)
{
    size_t old = r->pathlen;
    if (old < sizeof r->path - 1) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(r->path + old, sizeof r->path - old, fmt, ap);
        va_end(ap);
        r->pathlen = n < 0 ? old : old + (size_t)n >= sizeof r->path ? sizeof r->path - 1 : old + (size_t)n;
    }
    return old;
}

static void path_pop(struct reader *r, size_t old)
{
    r->pathlen = old;
    r->path[old] = '\0';
}

static void skip_ws(struct reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

/* What is at p, for messages. */
static const char *token_name(const struct reader *r)
{
    if (r->p >= r->end)
        return "the end of the text";
    switch (*r->p) {
    case '{': return "an object";
    case '[': return "an array";
    case '"': return "a string";
    case 't': case 'f': return "a boolean";
    case 'n': return "null";
    case '}': return "'}'";
    case ']': return "']'";
    case ',': return "','";
    case ':': return "':'";
    default: return *r->p == '-' || isdigit((unsigned char)*r->p) ? "a number" : "an unexpected character";
    }
}

static int expect_char(struct reader *r, char c, const char *what)
{
    skip_ws(r);
    if (r->p < r->end && *r->p == c) {
        r->p++;
        return 0;
    }
    return fail_at(r, "expected %s, found %s", what, token_name(r));
}

static int hex4(const char *s, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

static int put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xC0 | cp >> 6); o[1] = (char)(0x80 | (cp & 63)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12); o[1] = (char)(0x80 | ((cp >> 6) & 63)); o[2] = (char)(0x80 | (cp & 63));
        return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18); o[1] = (char)(0x80 | ((cp >> 12) & 63));
    o[2] = (char)(0x80 | ((cp >> 6) & 63)); o[3] = (char)(0x80 | (cp & 63));
    return 4;
}

/* Length of the valid UTF-8 sequence at s (at most avail bytes), 0 if invalid. */
static int utf8_length(const unsigned char *s, size_t avail)
{
    unsigned c = s[0];
    int n;
    uint32_t cp, min;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) n = 2, cp = c & 0x1f, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef) n = 3, cp = c & 0x0f, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4) n = 4, cp = c & 0x07, min = 0x10000;
    else return 0;
    if ((size_t)n > avail) return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

/* A JSON string into *out (malloc'd, valid UTF-8, no NUL inside). */
static int read_string(struct reader *r, char **out)
{
    *out = NULL;
    skip_ws(r);
    if (r->p >= r->end || *r->p != '"')
        return fail_at(r, "expected a string, found %s", token_name(r));
    r->p++;
    const char *q = r->p;
    while (q < r->end && *q != '"')
        q += *q == '\\' && q + 1 < r->end ? 2 : 1;
    char *s = malloc((size_t)(q - r->p) + 1), *o = s;
    if (!s)
        return fail_at(r, "out of memory");
    while (r->p < r->end && *r->p != '"') {
        unsigned char c = (unsigned char)*r->p;
        if (c < 0x20) {
            free(s);
            return fail_at(r, "control character 0x%02x in a string (expected it escaped)", c);
        }
        if (c != '\\') {
            int n = utf8_length((const unsigned char *)r->p, (size_t)(r->end - r->p));
            if (!n) {
                free(s);
                return fail_at(r, "invalid UTF-8 in a string");
            }
            memcpy(o, r->p, (size_t)n);
            o += n, r->p += n;
            continue;
        }
        if (r->p + 1 >= r->end)
            break;
        char e = r->p[1];
        r->p += 2;
        switch (e) {
        case '"': case '\\': case '/': *o++ = e; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (r->end - r->p < 4 || hex4(r->p, &cp) != 0) {
                free(s);
                return fail_at(r, "expected four hex digits after \\u");
            }
            r->p += 4;
            if (cp >= 0xDC00 && cp < 0xE000) {
                free(s);
                return fail_at(r, "unpaired low surrogate \\u%04x", cp);
            }
            if (cp >= 0xD800 && cp < 0xDC00) {
                if (r->end - r->p < 6 || r->p[0] != '\\' || r->p[1] != 'u' || hex4(r->p + 2, &lo) != 0 ||
                    lo < 0xDC00 || lo >= 0xE000) {
                    free(s);
                    return fail_at(r, "expected a low surrogate \\uDC00-\\uDFFF after \\u%04x", cp);
                }
                r->p += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            if (cp == 0) {
                free(s);
                return fail_at(r, "\\u0000 in a string (NUL is not allowed)");
            }
            o += put_utf8(o, cp);   /* an escape's encoding is never longer than its text */
            break;
        }
        default:
            free(s);
            r->p--;
            return fail_at(r, "unknown escape \\%c", e);
        }
    }
    if (r->p >= r->end) {
        free(s);
        return fail_at(r, "unterminated string (expected '\"')");
    }
    r->p++;
    *o = '\0';
    *out = s;
    return 0;
}

/* The text of a JSON number at p (strict grammar); sets *is_int for "-?digits". */
static int number_token(struct reader *r, const char **tok, size_t *len, int *is_int)
{
    skip_ws(r);
    const char *q = r->p;
    *is_int = 1;
    if (q < r->end && *q == '-')
        q++;
    if (q >= r->end || !isdigit((unsigned char)*q))
        return fail_at(r, "expected a number, found %s", token_name(r));
    if (*q == '0')
        q++;
    else
        while (q < r->end && isdigit((unsigned char)*q))
            q++;
    if (q < r->end && *q == '.') {
        *is_int = 0;
        q++;
        if (q >= r->end || !isdigit((unsigned char)*q))
            return fail_at(r, "expected a digit after '.'");
        while (q < r->end && isdigit((unsigned char)*q))
            q++;
    }
    if (q < r->end && (*q == 'e' || *q == 'E')) {
        *is_int = 0;
        q++;
        if (q < r->end && (*q == '+' || *q == '-'))
            q++;
        if (q >= r->end || !isdigit((unsigned char)*q))
            return fail_at(r, "expected a digit in the exponent");
        while (q < r->end && isdigit((unsigned char)*q))
            q++;
    }
    *tok = r->p;
    *len = (size_t)(q - r->p);
    return 0;
}

static int read_uint(struct reader *r, uint64_t max, uint64_t *out)
{
    const char *tok;
    size_t len;
    int is_int;
    skip_ws(r);
    if (r->p < r->end && *r->p == '-')
        return fail_at(r, "expected a non-negative integer, found a negative number");
    if (r->p >= r->end || !isdigit((unsigned char)*r->p))
        return fail_at(r, "expected a non-negative integer, found %s", token_name(r));
    if (number_token(r, &tok, &len, &is_int) != 0)
        return -1;
    if (!is_int)
        return fail_at(r, "expected a non-negative integer, found %.*s", (int)(len > 40 ? 40 : len), tok);
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned digit = (unsigned)(tok[i] - '0');
        if (v > (max - digit) / 10)
            return fail_at(r, "integer %.*s too large (at most %llu)", (int)(len > 40 ? 40 : len), tok,
                           (unsigned long long)max);
        v = v * 10 + digit;
    }
    r->p += len;
    *out = v;
    return 0;
}

static int read_double(struct reader *r, double *out)
{
    const char *tok;
    size_t len;
    int is_int;
    if (number_token(r, &tok, &len, &is_int) != 0)
        return -1;
    char buf[64];
    if (len >= sizeof buf)
        return fail_at(r, "number too long (at most %zu characters)", sizeof buf - 1);
    memcpy(buf, tok, len);
    buf[len] = '\0';
    double v = strtod(buf, NULL);
    if (!isfinite(v))
        return fail_at(r, "number %s out of range", buf);
    r->p += len;
    *out = v;
    return 0;
}

static int read_literal(struct reader *r, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(r->end - r->p) >= n && memcmp(r->p, word, n) == 0 &&
        (r->p + n == r->end || !isalnum((unsigned char)r->p[n]))) {
        r->p += n;
        return 0;
    }
    return -1;
}

static int read_object(struct reader *r, const struct schema *s, void *obj);

static int read_member(struct reader *r, const struct fdesc *d, void *obj)
{
    char *p = AT(obj, d);
    skip_ws(r);
    switch (d->type) {
    case T_STRING:
        return read_string(r, (char **)p);
    case T_U32: {
        uint64_t v;
        if (read_uint(r, UINT32_MAX, &v) != 0)
            return -1;
        *(uint32_t *)p = (uint32_t)v;
        return 0;
    }
    case T_U64:
        return read_uint(r, UINT64_MAX, (uint64_t *)p);
    case T_DOUBLE:
        return read_double(r, (double *)p);
    case T_HEX: {
        const char *at = r->p;
        char *s;
        if (read_string(r, &s) != 0)
            return -1;
        size_t n = strlen(s);
        int ok = n > 2 && n <= 18 && s[0] == '0' && s[1] == 'x' && strspn(s + 2, "0123456789abcdefABCDEF") == n - 2;
        if (ok)
            *(uint64_t *)p = strtoull(s + 2, NULL, 16);
        free(s);
        if (!ok) {
            r->p = at;
            return fail_at(r, "expected a hexadecimal string \"0x...\" (at most 16 digits)");
        }
        return 0;
    }
    case T_BOOL:
        if (read_literal(r, "true") == 0)
            *(int *)p = 1;
        else if (read_literal(r, "false") == 0)
            *(int *)p = 0;
        else
            return fail_at(r, "expected true or false, found %s", token_name(r));
        return 0;
    case T_SEVERITY: {
        const char *at = r->p;
        char *s;
        if (read_string(r, &s) != 0)
            return -1;
        int sev = vigil_severity_parse(s);
        free(s);
        if (sev < 0) {
            r->p = at;
            return fail_at(r, "expected \"error\", \"warning\" or \"note\"");
        }
        *(enum vigil_severity *)p = (enum vigil_severity)sev;
        return 0;
    }
    case T_VALUE: {
        struct vigil_value *v = (struct vigil_value *)p;
        if (r->p < r->end && *r->p == '"') {
            v->is_number = 0;
            return read_string(r, &v->string);
        }
        if (r->p < r->end && (*r->p == '-' || isdigit((unsigned char)*r->p))) {
            v->is_number = 1;
            return read_double(r, &v->number);
        }
        return fail_at(r, "expected a string or a number, found %s", token_name(r));
    }
    case T_ARRAY: {
        char **items = (char **)p;
        size_t *count = (size_t *)((char *)obj + d->count_offset);
        if (expect_char(r, '[', "an array") != 0)
            return -1;
        skip_ws(r);
        if (r->p < r->end && *r->p == ']') {
            r->p++;
            return 0;
        }
        for (;;) {
            void *item = grow((void **)items, count, NULL, d->element->size);
            if (!item)
                return fail_at(r, "out of memory");
            size_t old = path_push(r, "[%zu]", *count - 1);
            if (read_object(r, d->element, item) != 0)
                return -1;
            path_pop(r, old);
            skip_ws(r);
            if (r->p < r->end && *r->p == ',') {
                r->p++;
                continue;
            }
            return expect_char(r, ']', "',' or ']'");
        }
    }
    }
    return fail_at(r, "internal error: unknown member type");
}

/* The names of the schema's members, for "expected one of" messages. */
static void member_names(const struct schema *s, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < s->nfields && used < len; i++) {
        int n = snprintf(buf + used, len - used, "%s\"%s\"", i ? ", " : "", s->fields[i].key);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

static int read_object(struct reader *r, const struct schema *s, void *obj)
{
    const int top = s == &schema_document;
    unsigned long long seen = 0;   /* bit i: fields[i] read */
    int have_format = 0, have_version = 0;
    _Static_assert(sizeof seen * 8 >= 16, "members per object");
    if (expect_char(r, '{', top ? "a findings document (a JSON object)" : "an object") != 0)
        return -1;
    skip_ws(r);
    int first = 1;
    if (r->p < r->end && *r->p == '}') {
        r->p++;
    } else {
        for (;;) {
            skip_ws(r);
            const char *key_at = r->p;
            char *key;
            if (read_string(r, &key) != 0)
                return -1;
            if (top && first && strcmp(key, "format") != 0) {
                free(key);
                r->p = key_at;
                return fail_at(r, "expected \"format\": \"" VIGIL_FINDINGS_FORMAT "\" as the first member");
            }
            first = 0;
            if (expect_char(r, ':', "':' after a key") != 0) {
                free(key);
                return -1;
            }
            skip_ws(r);
            if (top && (strcmp(key, "format") == 0 || strcmp(key, "version") == 0)) {
                int is_format = key[0] == 'f';
                free(key);
                if (is_format ? have_format : have_version) {
                    r->p = key_at;
                    return fail_at(r, "duplicate key \"%s\"", is_format ? "format" : "version");
                }
                const char *at = r->p;
                if (is_format) {
                    char *f;
                    if (read_string(r, &f) != 0)
                        return -1;
                    int ok = strcmp(f, VIGIL_FINDINGS_FORMAT) == 0;
                    free(f);
                    if (!ok) {
                        r->p = at;
                        return fail_at(r, "expected \"format\": \"" VIGIL_FINDINGS_FORMAT "\"");
                    }
                    have_format = 1;
                } else {
                    uint64_t v;
                    if (read_uint(r, UINT32_MAX, &v) != 0)
                        return -1;
                    if (v != VIGIL_FINDINGS_VERSION) {
                        r->p = at;
                        return fail_at(r, "version %llu is not supported (expected %d)", (unsigned long long)v,
                                       VIGIL_FINDINGS_VERSION);
                    }
                    have_version = 1;
                }
            } else {
                size_t i = 0;
                while (i < s->nfields && strcmp(s->fields[i].key, key) != 0)
                    i++;
                if (i == s->nfields) {
                    char names[256];
                    member_names(s, names, sizeof names);
                    r->p = key_at;
                    int rc = fail_at(r, "unknown key \"%.60s\" in a %s (expected %s%s)", key, s->name,
                                     top ? "\"format\", \"version\", " : "", names);
                    free(key);
                    return rc;
                }
                free(key);
                if (seen & (1ull << i)) {
                    r->p = key_at;
                    return fail_at(r, "duplicate key \"%s\"", s->fields[i].key);
                }
                seen |= 1ull << i;
                size_t old = path_push(r, "%s%s", r->pathlen ? "." : "", s->fields[i].key);
                if (read_member(r, &s->fields[i], obj) != 0)
                    return -1;
                path_pop(r, old);
            }
            skip_ws(r);
            if (r->p < r->end && *r->p == ',') {
                r->p++;
                continue;
            }
            if (expect_char(r, '}', "',' or '}'") != 0)
                return -1;
            break;
        }
    }
    const char *close = r->p - 1;
    if (top && (!have_format || !have_version)) {
        r->p = close;
        return fail_at(r, "missing \"%s\"", !have_format ? "format" : "version");
    }
    for (size_t i = 0; i < s->nfields; i++)
        if (s->fields[i].required && !(seen & (1ull << i))) {
            r->p = close;
            return fail_at(r, "missing \"%s\" in a %s", s->fields[i].key, s->name);
        }
    if (s == &schema_finding) {   /* one value per tool field */
        const struct vigil_finding *f = obj;
        for (size_t i = 0; i < f->nfields; i++)
            for (size_t k = 0; k < i; k++)
                if (f->fields[i].key && f->fields[k].key && strcmp(f->fields[i].key, f->fields[k].key) == 0) {
                    r->p = close;
                    return fail_at(r, "fields[%zu]: duplicate field key \"%.60s\"", i, f->fields[i].key);
                }
    }
    if (fill_strings(s, obj) != 0)
        return fail_at(r, "out of memory");
    return 0;
}

int vigil_findings_parse_json(const char *text, size_t len, const char *name, struct vigil_findings *l,
                              char *err, size_t errlen)
{
    vigil_findings_init(l);
    struct reader r = {text, text, text + len, name, err, errlen, 0, "", 0};
    if (errlen)
        err[0] = '\0';
    if (read_object(&r, &schema_document, l) == 0) {
        skip_ws(&r);
        if (r.p == r.end) {
            l->cap = l->nfindings;
            return 0;
        }
        fail_at(&r, "expected the end of the text after the document, found %s", token_name(&r));
    }
    vigil_findings_free(l);
    return -1;
}

/* A whole file, NUL-terminated; NULL with "PATH: reason" in err. */
static char *read_file(const char *path, size_t *len, char *err, size_t errlen)
{
    char *text;
    return vigil_text_load_file(path, SIZE_MAX, &text, len, err, errlen) == 0 ? text : NULL;
}

int vigil_findings_load_json(const char *path, struct vigil_findings *l, char *err, size_t errlen)
{
    size_t len;
    vigil_findings_init(l);
    char *text = read_file(path, &len, err, errlen);
    if (!text)
        return -1;
    int rc = vigil_findings_parse_json(text, len, path, l, err, errlen);
    free(text);
    return rc;
}

/* ---- SARIF 2.1.0 ---- */

/* A path as a URI reference: absolute paths get file://, bytes outside the unreserved set and
 * '/' are percent-encoded. */
static void write_uri(struct vigil_json *j, const char *path)
{
    size_t n = strlen(path);
    char *uri = malloc(n * 3 + 8), *o = uri;
    if (!uri) {
        vigil_json_string(j, path);
        return;
    }
    if (path[0] == '/')
        o += sprintf(o, "file://");
    for (const unsigned char *s = (const unsigned char *)path; *s; s++) {
        if (isalnum(*s) || strchr("-._~/", *s))
            *o++ = (char)*s;
        else
            o += sprintf(o, "%%%02X", *s);
    }
    *o = '\0';
    vigil_json_string(j, uri);
    free(uri);
}

static void sarif_text(struct vigil_json *j, const char *key, const char *text)
{
    vigil_json_key(j, key);
    vigil_json_object_begin(j);
    vigil_json_key(j, "text");
    vigil_json_string(j, text);
    vigil_json_object_end(j);
}

/* A SARIF location object: physical (file, region) and logical (function) parts. */
static void sarif_location(struct vigil_json *j, const char *function, const char *file, uint32_t line,
                           uint32_t column, const char *message, long id)
{
    vigil_json_object_begin(j);
    if (id >= 0) {
        vigil_json_key(j, "id");
        vigil_json_int(j, id);
    }
    if (file[0]) {
        vigil_json_key(j, "physicalLocation");
        vigil_json_object_begin(j);
        vigil_json_key(j, "artifactLocation");
        vigil_json_object_begin(j);
        vigil_json_key(j, "uri");
        write_uri(j, file);
        vigil_json_object_end(j);
        if (line) {
            vigil_json_key(j, "region");
            vigil_json_object_begin(j);
            vigil_json_key(j, "startLine");
            vigil_json_uint(j, line);
            if (column) {
                vigil_json_key(j, "startColumn");
                vigil_json_uint(j, column);
            }
            vigil_json_object_end(j);
        }
        vigil_json_object_end(j);
    }
    if (function[0]) {
        vigil_json_key(j, "logicalLocations");
        vigil_json_array_begin(j);
        vigil_json_object_begin(j);
        vigil_json_key(j, "name");
        vigil_json_string(j, function);
        vigil_json_key(j, "kind");
        vigil_json_string(j, "function");
        vigil_json_object_end(j);
        vigil_json_array_end(j);
    }
    if (message && message[0])
        sarif_text(j, "message", message);
    vigil_json_object_end(j);
}

static const char *sarif_level(enum vigil_severity s)
{
    return s == VIGIL_ERROR ? "error" : s == VIGIL_WARNING ? "warning" : "note";
}

/* Index of the first finding with f's tool and kind: the rules are the distinct pairs. */
static size_t first_of_rule(const struct vigil_findings *l, size_t i)
{
    for (size_t k = 0; k < i; k++)
        if (!strcmp(l->findings[k].tool, l->findings[i].tool) && !strcmp(l->findings[k].kind, l->findings[i].kind))
            return k;
    return i;
}

static void write_rule_id(struct vigil_json *j, const struct vigil_finding *f)
{
    size_t n = strlen(f->tool) + strlen(f->kind) + 2;
    char *id = malloc(n);
    if (id)
        snprintf(id, n, "%s/%s", f->tool, f->kind);
    vigil_json_string(j, id ? id : f->kind);
    free(id);
}

void vigil_findings_write_sarif(FILE *out, const struct vigil_findings *l, const char *driver_version)
{
    struct vigil_json j;
    vigil_json_init(&j, out, 1);
    vigil_json_object_begin(&j);
    vigil_json_key(&j, "$schema");
    vigil_json_string(&j, "https://json.schemastore.org/sarif-2.1.0.json");
    vigil_json_key(&j, "version");
    vigil_json_string(&j, "2.1.0");
    vigil_json_key(&j, "runs");
    vigil_json_array_begin(&j);
    vigil_json_object_begin(&j);
    vigil_json_key(&j, "tool");
    vigil_json_object_begin(&j);
    vigil_json_key(&j, "driver");
    vigil_json_object_begin(&j);
    vigil_json_key(&j, "name");
    vigil_json_string(&j, "vigil");
    if (driver_version) {
        vigil_json_key(&j, "version");
        vigil_json_string(&j, driver_version);
    }
    vigil_json_key(&j, "rules");
    vigil_json_array_begin(&j);
    size_t *rule_of = calloc(l->nfindings ? l->nfindings : 1, sizeof *rule_of);
    size_t nrules = 0;
    for (size_t i = 0; i < l->nfindings; i++) {
        size_t first = first_of_rule(l, i);
        if (first != i) {
            if (rule_of)
                rule_of[i] = rule_of[first];
            continue;
        }
        if (rule_of)
            rule_of[i] = nrules;
        nrules++;
        const struct vigil_finding *f = &l->findings[i];
        vigil_json_object_begin(&j);
        vigil_json_key(&j, "id");
        write_rule_id(&j, f);
        vigil_json_key(&j, "name");
        vigil_json_string(&j, f->kind);
        char text[256];
        snprintf(text, sizeof text, "%s findings of the vigil %s tool", f->kind, f->tool);
        sarif_text(&j, "shortDescription", text);
        vigil_json_key(&j, "defaultConfiguration");
        vigil_json_object_begin(&j);
        vigil_json_key(&j, "level");
        vigil_json_string(&j, sarif_level(f->severity));
        vigil_json_object_end(&j);
        vigil_json_object_end(&j);
    }
    vigil_json_array_end(&j);
    vigil_json_object_end(&j);   /* driver */
    vigil_json_object_end(&j);   /* tool */
    if (l->run && l->run[0]) {
        vigil_json_key(&j, "properties");
        vigil_json_object_begin(&j);
        vigil_json_key(&j, "run");
        vigil_json_string(&j, l->run);
        vigil_json_key(&j, "program");
        vigil_json_string(&j, l->program ? l->program : "");
        vigil_json_key(&j, "suppressed");
        vigil_json_uint(&j, l->suppressed);
        vigil_json_object_end(&j);
    }
    vigil_json_key(&j, "results");
    vigil_json_array_begin(&j);
    for (size_t i = 0; i < l->nfindings; i++) {
        const struct vigil_finding *f = &l->findings[i];
        vigil_json_object_begin(&j);
        vigil_json_key(&j, "ruleId");
        write_rule_id(&j, f);
        if (rule_of) {
            vigil_json_key(&j, "ruleIndex");
            vigil_json_uint(&j, rule_of[i]);
        }
        vigil_json_key(&j, "level");
        vigil_json_string(&j, sarif_level(f->severity));
        sarif_text(&j, "message", f->message);
        vigil_json_key(&j, "locations");
        vigil_json_array_begin(&j);
        if (f->nlocations) {
            const struct vigil_location *v = &f->locations[0];
            sarif_location(&j, v->function, v->file, v->line, v->column, NULL, -1);
        }
        vigil_json_array_end(&j);
        if (f->nlocations > 1) {
            vigil_json_key(&j, "relatedLocations");
            vigil_json_array_begin(&j);
            for (size_t k = 1; k < f->nlocations; k++) {
                const struct vigil_location *v = &f->locations[k];
                sarif_location(&j, v->function, v->file, v->line, v->column,
                               v->message[0] ? v->message : v->role, (long)k);
            }
            vigil_json_array_end(&j);
        }
        if (f->nstacks) {
            vigil_json_key(&j, "codeFlows");
            vigil_json_array_begin(&j);
            for (size_t s = 0; s < f->nstacks; s++) {
                const struct vigil_stack *st = &f->stacks[s];
                vigil_json_object_begin(&j);
                if (st->label[0])
                    sarif_text(&j, "message", st->label);
                vigil_json_key(&j, "threadFlows");
                vigil_json_array_begin(&j);
                vigil_json_object_begin(&j);
                vigil_json_key(&j, "locations");
                vigil_json_array_begin(&j);
                /* A thread flow runs outermost call first; a stack is innermost first. */
                for (size_t k = st->nframes; k-- > 0;) {
                    const struct vigil_frame *fr = &st->frames[k];
                    char msg[300];
                    snprintf(msg, sizeof msg, "%s%s", fr->function[0] ? fr->function : "?",
                             fr->inlined ? " (inlined)" : "");
                    vigil_json_object_begin(&j);
                    vigil_json_key(&j, "location");
                    sarif_location(&j, fr->function, fr->file, fr->line, fr->column, msg, -1);
                    vigil_json_key(&j, "nestingLevel");
                    vigil_json_uint(&j, st->nframes - 1 - k);
                    if (fr->pc) {
                        char pc[24];
                        snprintf(pc, sizeof pc, "0x%llx", (unsigned long long)fr->pc);
                        vigil_json_key(&j, "properties");
                        vigil_json_object_begin(&j);
                        vigil_json_key(&j, "pc");
                        vigil_json_string(&j, pc);
                        vigil_json_object_end(&j);
                    }
                    vigil_json_object_end(&j);
                }
                vigil_json_array_end(&j);
                vigil_json_object_end(&j);
                vigil_json_array_end(&j);
                vigil_json_object_end(&j);
            }
            vigil_json_array_end(&j);
        }
        vigil_json_key(&j, "properties");
        vigil_json_object_begin(&j);
        vigil_json_key(&j, "score");
        vigil_json_double(&j, f->score);
        vigil_json_key(&j, "fields");
        vigil_json_object_begin(&j);
        for (size_t k = 0; k < f->nfields; k++) {
            vigil_json_key(&j, f->fields[k].key);
            if (f->fields[k].value.is_number)
                vigil_json_double(&j, f->fields[k].value.number);
            else
                vigil_json_string(&j, f->fields[k].value.string);
        }
        vigil_json_object_end(&j);
        vigil_json_object_end(&j);
        vigil_json_object_end(&j);
    }
    vigil_json_array_end(&j);
    vigil_json_object_end(&j);   /* run */
    vigil_json_array_end(&j);
    vigil_json_object_end(&j);
    vigil_json_finish(&j);
    free(rule_of);
}

/* ---- text ---- */

void vigil_format_bytes(double b, char *buf, size_t len)
{
    if (b >= 1024.0 * 1024 * 1024)
        snprintf(buf, len, "%.1f GiB", b / (1024.0 * 1024 * 1024));
    else if (b >= 1024.0 * 1024)
        snprintf(buf, len, "%.1f MiB", b / (1024.0 * 1024));
    else if (b >= 1024.0)
        snprintf(buf, len, "%.1f KiB", b / 1024.0);
    else
        snprintf(buf, len, "%.0f byte%s", b, b == 1 ? "" : "s");
}

static void format_number(double v, char *buf, size_t len)
{
    if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%.6g", v);
}

static void text_place(FILE *out, const char *function, const char *file, uint32_t line, uint32_t column,
                       uint64_t pc)
{
    fprintf(out, "%s  ", function[0] ? function : "?");
    if (file[0]) {
        fputs(file, out);
        if (line)
            fprintf(out, ":%u", line);
        if (line && column)
            fprintf(out, ":%u", column);
    } else if (pc) {
        fprintf(out, "(pc 0x%llx, no line information)", (unsigned long long)pc);
    } else {
        fputs("(no line information)", out);
    }
}

void vigil_findings_write_text(FILE *out, const struct vigil_findings *l)
{
    for (size_t i = 0; i < l->nfindings; i++) {
        const struct vigil_finding *f = &l->findings[i];
        char score[32];
        format_number(f->score, score, sizeof score);
        fprintf(out, "\n#%zu %s/%s [%s] score %s\n    %s\n", i + 1, f->tool, f->kind,
                vigil_severity_name(f->severity), score, f->message);
        if (f->nlocations) {
            const struct vigil_location *v = &f->locations[0];
            fputs("    at ", out);
            text_place(out, v->function, v->file, v->line, v->column, 0);
            fputc('\n', out);
        }
        for (size_t s = 0; s < f->nstacks; s++) {
            const struct vigil_stack *st = &f->stacks[s];
            fprintf(out, "    %s stack:\n", st->label[0] ? st->label : "call");
            for (size_t k = 0; k < st->nframes; k++) {
                const struct vigil_frame *fr = &st->frames[k];
                fprintf(out, "      #%zu ", k);
                text_place(out, fr->function, fr->file, fr->line, fr->column, fr->pc);
                fputs(fr->inlined ? "  (inlined)\n" : "\n", out);
            }
        }
        for (size_t k = 1; k < f->nlocations; k++) {
            const struct vigil_location *v = &f->locations[k];
            fprintf(out, "    %s: ", v->message[0] ? v->message : v->role[0] ? v->role : "related");
            text_place(out, v->function, v->file, v->line, v->column, 0);
            fputc('\n', out);
        }
        size_t col = 0;
        for (size_t k = 0; k < f->nfields; k++) {
            const struct vigil_field *x = &f->fields[k];
            char value[128];
            if (x->value.is_number)
                format_number(x->value.number, value, sizeof value);
            else
                snprintf(value, sizeof value, "%s", x->value.string);
            size_t w = strlen(x->key) + strlen(value) + 1;
            if (col == 0 || col + w + 1 > 96) {
                fputs(col ? "\n    " : "    ", out);
                col = 4;
            } else {
                fputc(' ', out);
                col++;
            }
            fprintf(out, "%s=%s", x->key, value);
            col += w;
        }
        if (col)
            fputc('\n', out);
    }
}

/* Append printf output to buf at *used (truncating). */
__attribute__((format(printf, 4, 5)))
static void append(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
    if (*used >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *used, len - *used, fmt, ap);
    va_end(ap);
    if (n > 0)
        *used = *used + (size_t)n < len ? *used + (size_t)n : len - 1;
}

void vigil_findings_tool_summary(const struct vigil_findings *l, const char *tool, char *buf, size_t len)
{
    size_t used = 0, count = 0;
    if (len)
        buf[0] = '\0';
    for (size_t i = 0; i < l->nfindings; i++)
        count += strcmp(l->findings[i].tool, tool) == 0;
    if (!count || !len)
        return;
    append(buf, len, &used, "%zu finding%s", count, count == 1 ? "" : "s");
    /* Totals of the fields marked total, in the order they first appear. */
    for (size_t i = 0; i < l->nfindings; i++) {
        const struct vigil_finding *f = &l->findings[i];
        if (strcmp(f->tool, tool) != 0)
            continue;
        for (size_t k = 0; k < f->nfields; k++) {
            const struct vigil_field *x = &f->fields[k];
            if (!x->total || !x->value.is_number)
                continue;
            int earlier = 0;   /* already summed when first seen */
            for (size_t p = 0; p < i && !earlier; p++)
                earlier = strcmp(l->findings[p].tool, tool) == 0 && vigil_finding_field(&l->findings[p], x->key) &&
                          vigil_finding_field(&l->findings[p], x->key)->total;
            if (earlier)
                continue;
            double sum = 0;
            for (size_t p = i; p < l->nfindings; p++) {
                const struct vigil_field *y = strcmp(l->findings[p].tool, tool) == 0
                                                  ? vigil_finding_field(&l->findings[p], x->key) : NULL;
                if (y && y->total && y->value.is_number)
                    sum += y->value.number;
            }
            char text[64];
            if (strcmp(x->unit, "bytes") == 0) {
                vigil_format_bytes(sum, text, sizeof text);
                append(buf, len, &used, ", %s", text);
            } else if (strcmp(x->unit, "ms") == 0) {
                append(buf, len, &used, ", %.3g s %s", sum / 1000, x->key);
            } else {
                format_number(sum, text, sizeof text);
                append(buf, len, &used, ", %s %s", text, x->unit[0] ? x->unit : x->key);
            }
        }
    }
}

void vigil_findings_summary(const struct vigil_findings *l, int per_tool_only, char *buf, size_t len)
{
    size_t used = 0;
    if (!len)
        return;
    buf[0] = '\0';
    if (!per_tool_only) {
        if (!l->nfindings) {
            append(buf, len, &used, "no findings");
            return;
        }
        append(buf, len, &used, "%zu finding%s (", l->nfindings, l->nfindings == 1 ? "" : "s");
    }
    /* Tools in alphabetical order. */
    const char *prev = NULL;
    for (;;) {
        const char *next = NULL;
        for (size_t i = 0; i < l->nfindings; i++) {
            const char *t = l->findings[i].tool;
            if ((!prev || strcmp(t, prev) > 0) && (!next || strcmp(t, next) < 0))
                next = t;
        }
        if (!next)
            break;
        char part[512];
        vigil_findings_tool_summary(l, next, part, sizeof part);
        append(buf, len, &used, "%s%s: %s", prev ? "; " : "", next, part);
        prev = next;
    }
    if (!per_tool_only)
        append(buf, len, &used, ")");
}

/* ---- suppressions ---- */

void vigil_suppressions_free(struct vigil_suppressions *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->items[i].tool), free(s->items[i].pattern);
    free(s->items);
    free(s->name);
    memset(s, 0, sizeof *s);
}

static int valid_tool_name(const char *s, size_t n)
{
    if (n == 1 && s[0] == '*')
        return 1;
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-')
            return 0;
    return 1;
}

int vigil_suppressions_parse(const char *text, size_t len, const char *name, struct vigil_suppressions *s,
                             char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    if (errlen)
        err[0] = '\0';
    s->name = dup_or_empty(name);
    if (!s->name) {
        snprintf(err, errlen, "%s: out of memory", name);
        return -1;
    }
    int lineno = 0;
    for (size_t pos = 0; pos < len;) {
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - line) : len - pos;
        pos += n + (nl != NULL);
        lineno++;
        if (memchr(line, '\0', n)) {
            snprintf(err, errlen, "%s:%d: a NUL byte (expected a text line TOOL:PATTERN)", name, lineno);
            goto fail;
        }
        while (n && isspace((unsigned char)*line))
            line++, n--;
        while (n && isspace((unsigned char)line[n - 1]))
            n--;
        if (n == 0 || line[0] == '#')
            continue;
        const char *colon = memchr(line, ':', n);
        if (!colon) {
            snprintf(err, errlen, "%s:%d: expected TOOL:PATTERN or *:PATTERN, got \"%.*s\"", name, lineno,
                     (int)(n > 60 ? 60 : n), line);
            goto fail;
        }
        size_t tn = (size_t)(colon - line);
        while (tn && isspace((unsigned char)line[tn - 1]))
            tn--;
        const char *pat = colon + 1;
        size_t pn = n - (size_t)(pat - line);
        while (pn && isspace((unsigned char)*pat))
            pat++, pn--;
        if (!valid_tool_name(line, tn)) {
            snprintf(err, errlen, "%s:%d: expected a tool name (letters, digits, '_', '-') or '*' before ':', "
                     "got \"%.*s\"", name, lineno, (int)(tn > 60 ? 60 : tn), line);
            goto fail;
        }
        if (pn == 0) {
            snprintf(err, errlen, "%s:%d: expected a pattern after \"%.*s:\"", name, lineno, (int)tn, line);
            goto fail;
        }
        struct vigil_suppression *x = grow((void **)&s->items, &s->n, NULL, sizeof *x);
        if (!x || !(x->tool = strndup(line, tn)) || !(x->pattern = strndup(pat, pn))) {
            snprintf(err, errlen, "%s: out of memory", name);
            goto fail;
        }
        x->line = lineno;
    }
    return 0;
fail:
    vigil_suppressions_free(s);
    return -1;
}

int vigil_suppressions_load(const char *path, struct vigil_suppressions *s, char *err, size_t errlen)
{
    size_t len;
    memset(s, 0, sizeof *s);
    char *text = read_file(path, &len, err, errlen);
    if (!text)
        return -1;
    int rc = vigil_suppressions_parse(text, len, path, s, err, errlen);
    free(text);
    return rc;
}

static int pattern_matches(const char *pat, const char *s, int is_file)
{
    if (!s[0])
        return 0;
    if (fnmatch(pat, s, 0) == 0)
        return 1;
    const char *base = is_file ? strrchr(s, '/') : NULL;
    return base && fnmatch(pat, base + 1, 0) == 0;
}

static int finding_matches(const char *pat, const struct vigil_finding *f)
{
    for (size_t s = 0; s < f->nstacks; s++)
        for (size_t k = 0; k < f->stacks[s].nframes; k++) {
            const struct vigil_frame *fr = &f->stacks[s].frames[k];
            if (pattern_matches(pat, fr->function, 0) || pattern_matches(pat, fr->file, 1))
                return 1;
        }
    for (size_t k = 0; k < f->nlocations; k++)
        if (pattern_matches(pat, f->locations[k].function, 0) || pattern_matches(pat, f->locations[k].file, 1))
            return 1;
    return 0;
}

const struct vigil_suppression *vigil_suppression_match(const struct vigil_suppressions *s,
                                                        const struct vigil_finding *f)
{
    for (size_t i = 0; i < s->n; i++) {
        const struct vigil_suppression *x = &s->items[i];
        if ((strcmp(x->tool, "*") == 0 || strcmp(x->tool, f->tool) == 0) && finding_matches(x->pattern, f))
            return x;
    }
    return NULL;
}

size_t vigil_findings_suppress(struct vigil_findings *l, struct vigil_suppressions *s)
{
    size_t kept = 0, removed = 0;
    for (size_t i = 0; i < l->nfindings; i++) {
        const struct vigil_suppression *x = vigil_suppression_match(s, &l->findings[i]);
        if (x) {
            s->items[x - s->items].hits++;
            free_object(&schema_finding, &l->findings[i]);
            removed++;
        } else {
            l->findings[kept++] = l->findings[i];
        }
    }
    l->nfindings = kept;
    l->suppressed += removed;
    return removed;
}
