/* The memory checker's errors and memcheck.json, its part of the run report. An error is kept
 * once per (site, kind) in a fixed table that threads fill by compare-and-swap, with the
 * first occurrence's access stack, and counted every time it is seen.
 *
 * memcheck.json is a "vigil-findings" document (docs/formats.md, "Findings"), one finding
 * per kept error, written here because the runtime knows each access's site: its locations
 * are final. Its stacks are not symbolized yet: a frame gives its object's path as "file",
 * line 0, no function, and "pc" the link-time address of the call (return address - 1); the
 * command's part (tools/memcheck/cmd/) names them from the binary's debug information. */
#include "mcint.h"

#include "json.h"
#include "loadmap.h"
#include <vigil/memcheck.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define EMPTY_KEY 0              /* keys are (site << 8 | kind) + 1: the mapped zeros are free */
#define MAX_MODULES 256

static const char *const kind_names[MC_KINDS] = VIGIL_MC_KIND_NAMES;
static const char *const use_names[] = {
    [0] = "used", [VIGIL_MC_USE_BRANCH] = "used in a branch", [VIGIL_MC_USE_ADDRESS] = "used as an address",
    [VIGIL_MC_USE_CALL] = "passed to a call", [VIGIL_MC_USE_RETURN] = "returned", [VIGIL_MC_USE_OTHER] = "used",
};

struct kept {
    uint64_t key;                /* EMPTY_KEY: free */
    uint32_t ready;              /* the rest is written (release) */
    uint64_t count;
    struct mc_error e;
    struct vigil_stack stack;    /* the first occurrence's access */
};
static struct kept *kept;        /* mask + 1 entries, mapped by init */
static size_t mask;              /* entries - 1, by init */
static uint32_t nkept;           /* entries in use (atomic) */
static uint64_t dropped;         /* errors past max_reports (atomic) */

void *mc_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int mc_report_init(void)
{
    size_t cap = 16;
    while (cap < 2 * (size_t)mc_cfg.max_reports)
        cap <<= 1;
    kept = mc_map(cap * sizeof *kept);
    if (!kept)
        return -1;
    mask = cap - 1;
    return 0;
}

void mc_report(const struct mc_error *error)
{
    struct mc_error copy = *error, *e = &copy;
    e->site = vigil_site_of(e->module, e->local_site);
    mc_event(e);
    uint64_t key = ((uint64_t)e->site << 8 | (uint64_t)e->kind) + 1;
    for (size_t n = 0, i = (size_t)(key * 0x9e3779b97f4a7c15ull >> 20) & mask; n <= mask; n++, i = (i + 1) & mask) {
        struct kept *k = &kept[i];
        uint64_t cur = __atomic_load_n(&k->key, __ATOMIC_ACQUIRE);
        if (cur == key) {
            __atomic_fetch_add(&k->count, 1, __ATOMIC_RELAXED);
            return;
        }
        if (cur != EMPTY_KEY)
            continue;
        if (__atomic_load_n(&nkept, __ATOMIC_RELAXED) >= mc_cfg.max_reports) {
            __atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
            return;
        }
        if (!__atomic_compare_exchange_n(&k->key, &cur, key, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            if (cur == key) {
                __atomic_fetch_add(&k->count, 1, __ATOMIC_RELAXED);
                return;
            }
            continue;
        }
        __atomic_fetch_add(&nkept, 1, __ATOMIC_RELAXED);
        k->e = *e;
        vigil_capture_stack(&k->stack, VIGIL_MAX_STACK);
        /* from the instrumented code that called the check on */
        for (uint32_t i = 0; i < k->stack.depth; i++)
            if (k->stack.pc[i] == e->caller) {
                memmove(k->stack.pc, k->stack.pc + i, (k->stack.depth - i) * sizeof k->stack.pc[0]);
                k->stack.depth -= i;
                break;
            }
        __atomic_fetch_add(&k->count, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&k->ready, 1, __ATOMIC_RELEASE);
        return;
    }
}

/* ---- memcheck.json ---- */

static void str(struct vigil_json *j, const char *key, const char *v)
{
    vigil_json_key(j, key);
    vigil_json_string(j, v);
}

static void num(struct vigil_json *j, const char *key, uint64_t v)
{
    vigil_json_key(j, key);
    vigil_json_uint(j, v);
}

static void hex(struct vigil_json *j, const char *key, uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
    str(j, key, buf);
}

static void field_num(struct vigil_json *j, const char *key, uint64_t v, const char *unit)
{
    vigil_json_object_begin(j);
    str(j, "key", key);
    vigil_json_key(j, "value");
    vigil_json_uint(j, v);
    if (unit)
        str(j, "unit", unit);
    vigil_json_object_end(j);
}

static void field_str(struct vigil_json *j, const char *key, const char *v)
{
    vigil_json_object_begin(j);
    str(j, "key", key);
    str(j, "value", v);
    vigil_json_object_end(j);
}

/* Return addresses as unsymbolized frames (see the top of this file). */
static void write_stack(struct vigil_json *j, const struct vigil_loadmap *ms, const char *label,
                        const uintptr_t *pcs, unsigned depth)
{
    vigil_json_object_begin(j);
    str(j, "label", label);
    vigil_json_key(j, "frames");
    vigil_json_array_begin(j);
    for (unsigned i = 0; i < depth; i++) {
        uintptr_t pc = pcs[i] - 1;
        int m = vigil_loadmap_find(ms, pc, NULL);
        vigil_json_object_begin(j);
        hex(j, "pc", m >= 0 ? pc - ms->o[m].bias : pc);
        str(j, "function", "");
        str(j, "file", m >= 0 ? ms->o[m].path : "");
        num(j, "line", 0);
        vigil_json_object_end(j);
    }
    vigil_json_array_end(j);
    vigil_json_object_end(j);
}

static void describe(const struct kept *k, char *buf, size_t len)
{
    const struct mc_error *e = &k->e;
    const char *what = e->is_store ? "write" : "read";
    size_t off = e->addr - e->obj.start;
    switch (e->kind) {
    case MC_OVERFLOW:
        snprintf(buf, len, "%u-byte %s at offset %zu of a %zu-byte heap block, %zu bytes past its end", e->size, what,
                 off, e->obj.size, (size_t)(e->addr - (e->obj.start + e->obj.size)) * (e->addr >= e->obj.start + e->obj.size));
        break;
    case MC_UNDERFLOW:
        snprintf(buf, len, "%u-byte %s %zu bytes before the start of a %zu-byte heap block", e->size, what,
                 (size_t)(e->obj.start - e->addr), e->obj.size);   /* off would be negative */
        break;
    case MC_USE_AFTER_FREE:
        snprintf(buf, len, "%u-byte %s at offset %zu of a freed %zu-byte heap block", e->size, what, off, e->obj.size);
        break;
    case MC_UNINIT:
        snprintf(buf, len, "uninitialized value %s: %u-byte read at offset %zu of a %zu-byte heap block (byte %zu never written)",
                 use_names[e->use < sizeof use_names / sizeof use_names[0] ? e->use : 0], e->size, off,
                 e->obj.size, e->uninit_offset);
        break;
    case MC_INDEX:
        snprintf(buf, len, "index %lld out of bounds of an array of %llu elements", (long long)e->index,
                 (unsigned long long)e->bound);
        break;
    case MC_OBJECT:
        snprintf(buf, len, "access at offset %lld of a %llu-byte %s object", (long long)e->index,
                 (unsigned long long)e->bound, e->stack_object ? "stack" : "global");
        break;
    default:
        snprintf(buf, len, "?");
    }
}

static void write_finding(struct vigil_json *j, const struct vigil_loadmap *ms, const struct kept *k)
{
    const struct mc_error *e = &k->e;
    char msg[256];
    describe(k, msg, sizeof msg);
    uint64_t count = __atomic_load_n(&k->count, __ATOMIC_RELAXED);
    vigil_json_object_begin(j);
    str(j, "tool", "memcheck");
    str(j, "kind", kind_names[e->kind]);
    str(j, "severity", "error");
    str(j, "message", msg);
    vigil_json_key(j, "score");
    vigil_json_double(j, 1e6 + (double)count);   /* an error ranks with a leak of a megabyte */
    struct vigil_site_info info;
    int known = vigil_site_lookup(e->site, &info) == 0;
    vigil_json_key(j, "locations");
    vigil_json_array_begin(j);
    vigil_json_object_begin(j);
    str(j, "role", "access");
    str(j, "message", e->kind == MC_INDEX ? "index" : e->kind == MC_OBJECT ? "access" : e->is_store ? "write" : "read");
    str(j, "function", known ? info.function : "?");
    str(j, "file", known ? info.file : "");
    num(j, "line", known ? info.line : 0);
    num(j, "column", known ? info.column : 0);
    vigil_json_object_end(j);
    vigil_json_array_end(j);
    vigil_json_key(j, "stacks");
    vigil_json_array_begin(j);
    write_stack(j, ms, "access", k->stack.pc, k->stack.depth);
    const uintptr_t *pcs;
    unsigned depth = e->have_obj ? vigil_heapmap_stack(mc_heap, e->obj.stack, &pcs) : 0;
    if (depth)
        write_stack(j, ms, "allocation", pcs, depth);
    depth = e->free_stack ? vigil_heapmap_stack(mc_heap, e->free_stack, &pcs) : 0;
    if (depth)
        write_stack(j, ms, "free", pcs, depth);
    vigil_json_array_end(j);
    vigil_json_key(j, "fields");
    vigil_json_array_begin(j);
    field_num(j, "count", count, "times");
    field_num(j, "site", e->site, NULL);   /* the event log's and memcheck.txt's site id */
    if (e->kind != MC_INDEX && e->kind != MC_OBJECT) {
        field_str(j, "access", e->is_store ? "write" : "read");
        field_num(j, "size", e->size, "bytes");
    }
    if (e->have_obj) {
        field_num(j, "block_size", e->obj.size, "bytes");
        if (e->kind != MC_OVERFLOW && e->kind != MC_UNDERFLOW)
            field_num(j, "offset", e->addr - e->obj.start, "bytes");
    }
    if (e->kind == MC_INDEX || e->kind == MC_OBJECT) {
        vigil_json_object_begin(j);
        str(j, "key", e->kind == MC_INDEX ? "index" : "offset");
        vigil_json_key(j, "value");
        vigil_json_int(j, (int64_t)e->index);
        vigil_json_object_end(j);
        field_num(j, e->kind == MC_INDEX ? "length" : "object_size", e->bound, e->kind == MC_INDEX ? NULL : "bytes");
    }
    vigil_json_array_end(j);
    vigil_json_object_end(j);
}

/* memcheck.txt: the run's settings and counts, then one line per kept error (its count, kind
 * and place): the summary log, for people and scripts. */
static void write_summary(struct kept **list, size_t n, uint64_t total, const uint8_t pattern[8])
{
    FILE *f = vigil_report_open(&mc_tool, "memcheck.txt");
    if (!f)
        return;
    fprintf(f, "pattern 0x%02x%02x%02x%02x%02x%02x%02x%02x\n", pattern[0], pattern[1], pattern[2], pattern[3],
            pattern[4], pattern[5], pattern[6], pattern[7]);
    fprintf(f, "fill_max %u\nerrors %llu\nkept %zu\ndropped %llu\nblocks_lost %llu\n", mc_cfg.fill_max,
            (unsigned long long)total, n, (unsigned long long)__atomic_load_n(&dropped, __ATOMIC_RELAXED),
            (unsigned long long)vigil_heapmap_lost(mc_heap));
    fprintf(f, "accesses_checked %llu\nin_heap_blocks %llu\nuninit_checks %llu\nfast_path %llu\n",
            (unsigned long long)__atomic_load_n(&mc_counts.accesses, __ATOMIC_RELAXED),
            (unsigned long long)__atomic_load_n(&mc_counts.in_blocks, __ATOMIC_RELAXED),
            (unsigned long long)__atomic_load_n(&mc_counts.uninit_checks, __ATOMIC_RELAXED),
            (unsigned long long)__atomic_load_n(&mc_counts.fast, __ATOMIC_RELAXED));
    fprintf(f, "excluded_range %llu\nexcluded_stack %llu\nexcluded_heap %llu\nexcluded_globals %llu\nexcluded_shared %llu\n",
            (unsigned long long)__atomic_load_n(&mc_counts.excluded_range, __ATOMIC_RELAXED),
            (unsigned long long)__atomic_load_n(&mc_counts.excluded[0], __ATOMIC_RELAXED),
            (unsigned long long)__atomic_load_n(&mc_counts.excluded[1], __ATOMIC_RELAXED),
            (unsigned long long)__atomic_load_n(&mc_counts.excluded[2], __ATOMIC_RELAXED),
            (unsigned long long)__atomic_load_n(&mc_counts.excluded[3], __ATOMIC_RELAXED));
    if (mc_cfg.events)
        fprintf(f, "events %llu\nevents_dropped %llu\nevents_file %s\n", (unsigned long long)mc_events_logged(),
                (unsigned long long)mc_events_dropped(), VIGIL_MCEV_FILE);
    for (size_t i = 0; i < n; i++) {
        struct vigil_site_info info;
        vigil_site_lookup(list[i]->e.site, &info);
        fprintf(f, "error %llu %s %u %s %s:%u:%u\n", (unsigned long long)list[i]->count, kind_names[list[i]->e.kind],
                (unsigned)list[i]->e.site, info.function, info.file[0] ? info.file : "?", info.line, info.column);
    }
    fclose(f);
}

static int by_count(const void *a, const void *b)
{
    uint64_t x = (*(const struct kept *const *)a)->count, y = (*(const struct kept *const *)b)->count;
    return x < y ? 1 : x > y ? -1 : 0;
}

void mc_write_report(const uint8_t pattern[8], int final)
{
    size_t n = 0;
    struct kept **list = calloc(mask + 1, sizeof *list);
    struct vigil_loadmap ms = {.o = calloc(MAX_MODULES, sizeof *ms.o), .cap = MAX_MODULES};
    if (!list || !ms.o) {
        vigil_tool_message(&mc_tool, "out of memory writing memcheck.json");
        free(list);
        free(ms.o);
        return;
    }
    uint64_t total = 0;
    for (size_t i = 0; i <= mask; i++)
        if (kept[i].key != EMPTY_KEY && __atomic_load_n(&kept[i].ready, __ATOMIC_ACQUIRE)) {
            list[n++] = &kept[i];
            total += kept[i].count;
        }
    qsort(list, n, sizeof *list, by_count);
    vigil_loadmap_read(&ms);
    FILE *f = vigil_report_open(&mc_tool, "memcheck.json");
    if (f) {
        struct vigil_json j;
        vigil_json_init(&j, f, 1);
        vigil_json_object_begin(&j);
        str(&j, "format", "vigil-findings");
        num(&j, "version", 1);
        vigil_json_key(&j, "findings");
        vigil_json_array_begin(&j);
        for (size_t i = 0; i < n; i++)
            write_finding(&j, &ms, list[i]);
        vigil_json_array_end(&j);
        vigil_json_object_end(&j);
        vigil_json_finish(&j);
        fclose(f);
    }
    write_summary(list, n, total, pattern);
    if (n && final)
        vigil_tool_summary(&mc_tool, "%zu error%s", n, n == 1 ? "" : "s");
    if (mc_cfg.print && final)
        for (size_t i = 0; i < n; i++) {
            char msg[256];
            struct vigil_site_info info;
            describe(list[i], msg, sizeof msg);
            vigil_site_lookup(list[i]->e.site, &info);
            vigil_tool_message(&mc_tool, "%s: %s at %s %s:%u", kind_names[list[i]->e.kind], msg, info.function,
                               info.file, info.line);
        }
    free(list);
    free(ms.o);
}
