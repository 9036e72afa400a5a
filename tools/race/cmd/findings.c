/* The race tool's findings (cmd/cmdtool.h): race.json, one finding per pair of racing sites:
 *   kind       "data-race", severity error
 *   message    "data race on counter: write at f.c:12 (thread 2) vs read at f.c:20 (thread 3),
 *              no common lock"; an access of an atomic instruction is an "atomic read" or
 *              "atomic write" (two atomic accesses never race: one side is always plain)
 *   score      1e6 + the times the pair was seen (a race ranks with a leak of a megabyte)
 *   locations  [0] the first access (role "access"), [1] the second ("racing-access"), and for
 *              a heap object its allocation site ("allocation")
 *   stacks     a heap object's allocation stack
 *   fields     count (times seen), variable, address, thread and locks of each access,
 *              ordering ("happens-before and lockset", or "lockset only" when a thread had no
 *              clock slot or race.hb=0), pairs ("write-write, write-read": the kinds of access
 *              pairs seen between the two lines)
 * race.json keeps one race per pair of sites; the load and the store of one line (x++) are two
 * sites, so pairs between the same two source lines are merged into one finding here.
 * Variables are named from the binary's symbol table (globals and statics), locks too; heap
 * objects by their size, the offset and the allocating function. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfsyms.h"
#include "findings.h"
#include "racecmd.h"
#include "jsontree.h"
#include "textfmt.h"
#include "symbolize.h"

struct module {
    const char *path;
    uint64_t bias;
    int symtab_tried, symbolizer_tried;
    struct vigil_elfsyms *symtab;
    struct vigil_symbolizer *symbolizer;
};

/* Pairs of sites on the same two source lines (a load and a store of `x++` are two sites) make
 * one finding: its count is their sum, "pairs" names their kinds. */
struct group {
    char *key;                   /* the two places, in order */
    size_t finding;              /* index in the list */
    char kinds[48];              /* "write-write, write-read" */
};

struct ctx {
    const char *path;            /* race.json */
    struct module *modules;
    size_t nmodules;
    struct group *groups;
    size_t ngroups, cap;
};

static int damaged(const struct ctx *c, const struct vigil_jv *at, const char *what)
{
    fprintf(stderr, "vigil: race: %s:%d: expected %s\n", c->path, at ? at->line : 1, what);
    return -1;
}

static const char *str(const struct vigil_jv *o, const char *key)
{
    const struct vigil_jv *v = vigil_jv_get(o, key);
    return v && v->type == VIGIL_JV_STRING ? v->string : "";
}

static double num(const struct vigil_jv *o, const char *key)
{
    const struct vigil_jv *v = vigil_jv_get(o, key);
    return v && (v->type == VIGIL_JV_NUMBER || v->type == VIGIL_JV_BOOL) ? v->number : 0;
}

static int has(const struct vigil_jv *o, const char *key, enum vigil_jv_type type)
{
    const struct vigil_jv *v = vigil_jv_get(o, key);
    return v && v->type == type;
}

static uint64_t hexval(const struct vigil_jv *o, const char *key)
{
    return strtoull(str(o, key), NULL, 16);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* "at f.c:12", or "in work" without line information. */
static void place(const struct vigil_jv *access, char *buf, size_t len)
{
    const char *file = str(access, "file");
    if (file[0] && num(access, "line") > 0)
        snprintf(buf, len, "at %s:%u", base_name(file), (unsigned)num(access, "line"));
    else
        snprintf(buf, len, "in %s", str(access, "function")[0] ? str(access, "function") : "an unknown function");
}

static struct module *module_at(struct ctx *c, const struct vigil_jv *o)
{
    const struct vigil_jv *m = vigil_jv_get(o, "module");
    if (!m || m->type != VIGIL_JV_NUMBER || m->number < 0 || (size_t)m->number >= c->nmodules)
        return NULL;
    return &c->modules[(size_t)m->number];
}

/* "counter", "slots+4", or NULL when the module's symbol table does not name it. */
static int name_global(struct ctx *c, struct module *m, uint64_t offset, char *buf, size_t len)
{
    if (!m)
        return -1;
    if (!m->symtab_tried) {
        m->symtab_tried = 1;
        m->symtab = vigil_elfsyms_open(m->path, VIGIL_ELFSYMS_DATA);
    }
    uint64_t off;
    const char *name = vigil_elfsyms_at(m->symtab, offset, &off);
    if (!name)
        return -1;
    if (off)
        snprintf(buf, len, "%s+%llu", name, (unsigned long long)off);
    else
        snprintf(buf, len, "%s", name);
    return 0;
}

static void describe_locks(struct ctx *c, const struct vigil_jv *access, char *buf, size_t len)
{
    const struct vigil_jv *locks = vigil_jv_get(access, "locks");
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; locks && locks->type == VIGIL_JV_ARRAY && i < locks->n && used < len; i++) {
        const struct vigil_jv *l = &locks->items[i];
        char name[200];
        uint64_t addr = hexval(l, "address");
        if (name_global(c, module_at(c, l), hexval(l, "offset"), name, sizeof name) == 0)
            used += (size_t)snprintf(buf + used, len - used, "%s%s (0x%llx)", used ? ", " : "", name,
                                     (unsigned long long)addr);
        else
            used += (size_t)snprintf(buf + used, len - used, "%s0x%llx", used ? ", " : "", (unsigned long long)addr);
    }
    if (!buf[0])
        snprintf(buf, len, num(access, "locks_unknown") ? "more than 4 locks" : "none");
}

/* The allocation stack, symbolized; the first frame with a source file in *site. */
static int add_stack(struct ctx *c, struct vigil_finding *f, const struct vigil_jv *stack, struct vigil_frame *site,
                     char *function, size_t flen)
{
    struct vigil_stack *s = NULL;
    for (size_t i = 0; stack && stack->type == VIGIL_JV_ARRAY && i < stack->n; i++) {
        const struct vigil_jv *fr = &stack->items[i];
        struct module *m = module_at(c, fr);
        struct vigil_source_location loc;
        memset(&loc, 0, sizeof loc);
        if (m && !m->symbolizer_tried) {
            char err[300];
            m->symbolizer_tried = 1;
            m->symbolizer = vigil_symbolizer_open(m->path, err, sizeof err);
        }
        if (m && m->symbolizer)
            vigil_symbolize(m->symbolizer, hexval(fr, "offset") - 1, &loc);   /* -1: the call, not the return */
        if (!s && !(s = vigil_finding_add_stack(f, "allocation")))
            return -1;
        if (!vigil_stack_add_frame(s, hexval(fr, "pc"), loc.function, loc.file, (uint32_t)loc.line,
                                   (uint32_t)loc.column, 0))
            return -1;
        if (!site->file && loc.file[0]) {
            site->file = strdup(loc.file);
            site->function = strdup(loc.function);
            site->line = (uint32_t)loc.line;
            site->column = (uint32_t)loc.column;
        }
        if (!function[0] && loc.function[0] && strcmp(loc.function, "malloc") && strcmp(loc.function, "calloc") &&
            strcmp(loc.function, "realloc"))
            snprintf(function, flen, "%s", loc.function);
    }
    return 0;
}

/* "read", "write", or "atomic read" / "atomic write" for an atomic instruction's access. */
static const char *access_words(const struct vigil_jv *access, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s", num(access, "atomic") ? "atomic " : "", str(access, "access"));
    return buf;
}

static int add_race(struct ctx *c, const struct vigil_jv *r, size_t index, struct vigil_findings *out)
{
    char what[64];
    const struct vigil_jv *acc = vigil_jv_get(r, "accesses");
    if (!acc || acc->type != VIGIL_JV_ARRAY || acc->n != 2 || acc->items[0].type != VIGIL_JV_OBJECT ||
        acc->items[1].type != VIGIL_JV_OBJECT) {
        snprintf(what, sizeof what, "races[%zu].accesses: an array of two accesses", index);
        return damaged(c, acc ? acc : r, what);
    }
    for (int k = 0; k < 2; k++)
        if (!has(&acc->items[k], "access", VIGIL_JV_STRING) || !has(&acc->items[k], "line", VIGIL_JV_NUMBER) ||
            !has(&acc->items[k], "thread", VIGIL_JV_NUMBER)) {
            snprintf(what, sizeof what, "races[%zu].accesses[%d]: \"access\", \"line\" and \"thread\"", index, k);
            return damaged(c, &acc->items[k], what);
        }
    if (!has(r, "count", VIGIL_JV_NUMBER) || !has(r, "object", VIGIL_JV_OBJECT)) {
        snprintf(what, sizeof what, "races[%zu]: \"count\" and \"object\"", index);
        return damaged(c, r, what);
    }
    const struct vigil_jv *a = &acc->items[0], *b = &acc->items[1], *obj = vigil_jv_get(r, "object");
    uint64_t count = (uint64_t)num(r, "count"), addr = hexval(r, "address");
    int hb = num(r, "hb") != 0;

    /* the same two lines as a pair already added: counted there */
    char pa[600], pb[600], key[1300];
    snprintf(pa, sizeof pa, "%s:%u:%s", str(a, "file"), (unsigned)num(a, "line"), str(a, "function"));
    snprintf(pb, sizeof pb, "%s:%u:%s", str(b, "file"), (unsigned)num(b, "line"), str(b, "function"));
    int swap = strcmp(pa, pb) > 0;
    snprintf(key, sizeof key, "%s|%s", swap ? pb : pa, swap ? pa : pb);
    int writes = (strcmp(str(a, "access"), "write") == 0) + (strcmp(str(b, "access"), "write") == 0);
    const char *pair_kind = writes == 2 ? "write-write" : "write-read";
    for (size_t g = 0; g < c->ngroups; g++) {
        if (strcmp(c->groups[g].key, key) != 0)
            continue;
        struct vigil_finding *f = &out->findings[c->groups[g].finding];
        f->score += (double)count;
        struct vigil_field *cf = (struct vigil_field *)vigil_finding_field(f, "count");
        if (cf)
            cf->value.number += (double)count;
        struct group *gr = &c->groups[g];
        if (!strstr(gr->kinds, pair_kind)) {
            size_t used = strlen(gr->kinds);
            snprintf(gr->kinds + used, sizeof gr->kinds - used, ", %s", pair_kind);
            struct vigil_field *kf = (struct vigil_field *)vigil_finding_field(f, "pairs");
            char *copy = strdup(gr->kinds);
            if (!kf || !copy) {
                free(copy);
                return -1;
            }
            free(kf->value.string);
            kf->value.string = copy;
        }
        return 0;
    }
    if (c->ngroups == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        struct group *g = realloc(c->groups, cap * sizeof *g);
        if (!g)
            return -1;
        c->groups = g;
        c->cap = cap;
    }
    struct group *gr = &c->groups[c->ngroups];
    if (!(gr->key = strdup(key)))
        return -1;
    gr->finding = out->nfindings;
    snprintf(gr->kinds, sizeof gr->kinds, "%s", pair_kind);
    c->ngroups++;

    /* the variable */
    char variable[400], alloc_function[256] = "";
    const char *kind = str(obj, "kind");
    int heap = strcmp(kind, "heap") == 0;
    if (strcmp(kind, "global") == 0) {
        char name[300];
        if (name_global(c, module_at(c, obj), hexval(obj, "offset"), name, sizeof name) == 0)
            snprintf(variable, sizeof variable, "%s", name);
        else
            snprintf(variable, sizeof variable, "a global at 0x%llx", (unsigned long long)addr);
    } else if (!heap) {
        snprintf(variable, sizeof variable, "0x%llx (not a global, nor a heap object allocated while threads ran)",
                 (unsigned long long)addr);
    }
    char locks_a[600], locks_b[600];
    describe_locks(c, a, locks_a, sizeof locks_a);
    describe_locks(c, b, locks_b, sizeof locks_b);

    /* the finding; the message needs the allocating function, which the stack gives */
    struct vigil_finding *f = vigil_findings_append(out, "race", "data-race", VIGIL_ERROR, "", 1e6 + (double)count);
    if (!f)
        return -1;
    struct vigil_frame site = {0};
    if (heap && add_stack(c, f, vigil_jv_get(obj, "stack"), &site, alloc_function, sizeof alloc_function) != 0)
        return -1;
    if (heap) {
        size_t n = (size_t)snprintf(variable, sizeof variable, "a heap object (%llu bytes, offset %llu",
                                    (unsigned long long)num(obj, "size"), (unsigned long long)num(obj, "offset"));
        if (alloc_function[0] && n < sizeof variable)
            snprintf(variable + n, sizeof variable - n, ", allocated in %s)", alloc_function);
        else if (n < sizeof variable)
            snprintf(variable + n, sizeof variable - n, ")");
    }
    char message[1200], place_a[300], place_b[300], words_a[32], words_b[32];
    place(a, place_a, sizeof place_a);
    place(b, place_b, sizeof place_b);
    access_words(a, words_a, sizeof words_a);
    access_words(b, words_b, sizeof words_b);
    snprintf(message, sizeof message, "data race on %s: %s %s (thread %u) vs %s %s (thread %u), no common lock%s",
             variable, words_a, place_a, (unsigned)num(a, "thread"), words_b, place_b,
             (unsigned)num(b, "thread"), hb ? "" : " (lockset only: a thread had no clock)");
    free(f->message);
    f->message = strdup(message);
    if (!f->message)
        return -1;
    const struct vigil_jv *sides[2] = {a, b};
    const char *roles[2] = {"access", "racing-access"};
    for (int k = 0; k < 2; k++) {
        char msg[800];
        snprintf(msg, sizeof msg, "%s by thread %u, holding %s", k ? words_b : words_a,
                 (unsigned)num(sides[k], "thread"), k ? locks_b : locks_a);
        if (!vigil_finding_add_location(f, roles[k], msg, str(sides[k], "function"), str(sides[k], "file"),
                                        (uint32_t)num(sides[k], "line"), (uint32_t)num(sides[k], "column")))
            return -1;
    }
    if (site.file && !vigil_finding_add_location(f, "allocation", "the object was allocated here", site.function,
                                                 site.file, site.line, site.column))
        return -1;
    free(site.file);
    free(site.function);
    char address[32];
    snprintf(address, sizeof address, "0x%llx", (unsigned long long)addr);
    if (!vigil_finding_add_number(f, "count", (double)count, "", 0) ||
        !vigil_finding_add_string(f, "variable", variable) ||
        !vigil_finding_add_string(f, "address", address) ||
        !vigil_finding_add_number(f, "thread_first", num(a, "thread"), "", 0) ||
        !vigil_finding_add_string(f, "locks_first", locks_a) ||
        !vigil_finding_add_number(f, "thread_second", num(b, "thread"), "", 0) ||
        !vigil_finding_add_string(f, "locks_second", locks_b) ||
        !vigil_finding_add_string(f, "ordering", hb ? "happens-before and lockset" : "lockset only") ||
        !vigil_finding_add_string(f, "pairs", gr->kinds))
        return -1;
    return 0;
}

int race_findings(const char *rundir, struct vigil_findings *out)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/race.json", rundir);
    if (access(path, F_OK) != 0 && errno == ENOENT)
        return 0;   /* the run did not use the race tool */
    struct ctx c = {path, NULL, 0, NULL, 0, 0};
    size_t len;
    char *text;
    char lerr[4400];
    if (vigil_text_load_file(path, SIZE_MAX, &text, &len, lerr, sizeof lerr) != 0) {
        fprintf(stderr, "vigil: race: %s\n", lerr);
        return -1;
    }
    struct vigil_jv root;
    char err[300];
    int rc = 0;
    if (vigil_jv_parse(text, len, &root, err, sizeof err) != 0) {
        fprintf(stderr, "vigil: race: %s:%s\n", path, err);
        free(text);
        return -1;
    }
    free(text);
    const struct vigil_jv *races = vigil_jv_get(&root, "races"), *modules = vigil_jv_get(&root, "modules");
    if (strcmp(str(&root, "format"), "vigil-race") != 0 || num(&root, "version") != 1) {
        rc = damaged(&c, &root, "\"format\": \"vigil-race\" and \"version\": 1");
    } else if (!races || races->type != VIGIL_JV_ARRAY || !modules || modules->type != VIGIL_JV_ARRAY) {
        rc = damaged(&c, &root, "\"races\" and \"modules\" arrays");
    } else {
        c.nmodules = modules->n;
        c.modules = calloc(c.nmodules ? c.nmodules : 1, sizeof *c.modules);
        if (!c.modules)
            rc = -1;
        for (size_t i = 0; rc == 0 && i < c.nmodules; i++) {
            c.modules[i].path = str(&modules->items[i], "path");
            c.modules[i].bias = hexval(&modules->items[i], "bias");
        }
        for (size_t i = 0; rc == 0 && i < races->n; i++) {
            if (races->items[i].type != VIGIL_JV_OBJECT) {
                rc = damaged(&c, &races->items[i], "a race object");
                break;
            }
            if (add_race(&c, &races->items[i], i, out) != 0) {
                if (errno == ENOMEM)
                    fprintf(stderr, "vigil: race: %s: out of memory\n", path);
                rc = -1;
            }
        }
        for (size_t i = 0; i < c.ngroups; i++)
            free(c.groups[i].key);
        free(c.groups);
        for (size_t i = 0; i < c.nmodules; i++) {
            vigil_elfsyms_close(c.modules[i].symtab);
            if (c.modules[i].symbolizer)
                vigil_symbolizer_close(c.modules[i].symbolizer);
        }
        free(c.modules);
    }
    vigil_jv_free(&root);
    return rc;
}
