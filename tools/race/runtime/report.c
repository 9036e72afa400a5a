/* Race pairs and race.json, the race tool's part of the run report (format in
 * tools/race/README.md, "Report"). A race is kept once per pair of sites (which access came
 * first does not matter) in a fixed table that threads fill by compare-and-swap, and counted
 * every time it is seen. Heap objects are looked up when a pair is first seen (the object may
 * be gone at exit); modules, globals and locks' symbols at exit: race.json gives addresses as
 * module + link-time address, and `vigil report` names them from the binary's symbol table. */
#include "raceint.h"

#include "json.h"
#include "loadmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EMPTY_KEY (~0ull)

struct pair {
    uint64_t key;                /* EMPTY_KEY: free */
    uint32_t ready;              /* the rest is written (release) */
    uint32_t pad;
    uint64_t count;
    uintptr_t addr;
    struct race_side first, second;
    int heap;                    /* object found in the heap map */
    struct vigil_heap_object obj;
};
static struct pair *pairs;       /* pair_mask + 1 entries, mapped by init */
static size_t pair_mask;        /* entries - 1, by init */
static uint32_t npairs;          /* pairs kept */

#define MAX_BENIGN 256
static struct { uintptr_t lo, hi; } benign[MAX_BENIGN];   /* written under benign_lock before nbenign counts it */
static uint32_t nbenign, benign_lock;   /* ranges in benign (atomic); spin lock of their writers */

int race_report_init(void)
{
    size_t cap = 16;
    while (cap < 2 * (size_t)race_cfg.max_reports)
        cap <<= 1;
    pairs = race_map(cap * sizeof *pairs);
    if (!pairs)
        return -1;
    pair_mask = cap - 1;
    for (size_t i = 0; i < cap; i++)
        pairs[i].key = EMPTY_KEY;
    return 0;
}

void race_report_clear(void)
{
    for (size_t i = 0; i <= pair_mask; i++)
        pairs[i] = (struct pair){.key = EMPTY_KEY};
    npairs = 0;
}

void race_benign_add(uintptr_t addr, size_t size)
{
    race_spin_lock(&benign_lock);
    uint32_t n = __atomic_load_n(&nbenign, __ATOMIC_RELAXED);
    if (n < MAX_BENIGN) {
        benign[n].lo = addr;
        benign[n].hi = addr + size;
        __atomic_store_n(&nbenign, n + 1, __ATOMIC_RELEASE);
    }
    race_spin_unlock(&benign_lock);
}

int race_benign(uintptr_t addr)
{
    uint32_t n = __atomic_load_n(&nbenign, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++)
        if (addr >= benign[i].lo && addr < benign[i].hi)
            return 1;
    return 0;
}

static uint64_t pair_key(uint32_t a, uint32_t b)
{
    if (a > b) {
        uint32_t t = a;
        a = b;
        b = t;
    }
    uint64_t k = (uint64_t)a << 32 | b;
    return k == EMPTY_KEY ? EMPTY_KEY - 1 : k;
}

void race_report(uintptr_t addr, const struct race_side *first, const struct race_side *second)
{
    RACE_COUNT(races, 1);
    uint64_t key = pair_key(first->site, second->site);
    for (size_t i = 0, h = (size_t)race_hash64(key);; i++) {
        struct pair *p = &pairs[(h + i) & pair_mask];
        uint64_t k = __atomic_load_n(&p->key, __ATOMIC_ACQUIRE);
        if (k == EMPTY_KEY) {
            if (__atomic_load_n(&npairs, __ATOMIC_RELAXED) >= race_cfg.max_reports) {
                RACE_COUNT(pairs_dropped, 1);
                return;
            }
            if (!__atomic_compare_exchange_n(&p->key, &k, key, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                if (k != key)
                    continue;
            } else {
                __atomic_add_fetch(&npairs, 1, __ATOMIC_RELAXED);
                p->addr = addr;
                p->first = *first;
                p->second = *second;
                p->heap = race_cfg.heap && vigil_heapmap_find(race_heap, addr, &p->obj) == 0;
                __atomic_store_n(&p->ready, 1, __ATOMIC_RELEASE);
            }
        } else if (k != key) {
            if (i > pair_mask)
                return;
            continue;
        }
        __atomic_add_fetch(&p->count, 1, __ATOMIC_RELAXED);
        return;
    }
}

/* ---- race.json ---- */

#define MAX_MODULES 256

static void hex(struct vigil_json *j, const char *key, uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
    vigil_json_key(j, key);
    vigil_json_string(j, buf);
}

static void num(struct vigil_json *j, const char *key, uint64_t v)
{
    vigil_json_key(j, key);
    vigil_json_uint(j, v);
}

static void boolean(struct vigil_json *j, const char *key, int v)
{
    vigil_json_key(j, key);
    vigil_json_bool(j, v);
}

/* A data address: "module" and "offset" (link-time address) when a module holds it. */
static void place(struct vigil_json *j, const struct vigil_loadmap *ms, uintptr_t addr)
{
    int m = vigil_loadmap_find(ms, addr, NULL);
    vigil_json_key(j, "module");
    vigil_json_int(j, m);
    if (m >= 0)
        hex(j, "offset", addr - ms->o[m].bias);
}

static void write_side(struct vigil_json *j, const struct vigil_loadmap *ms, const struct race_side *s)
{
    struct vigil_site_info info;
    int known = vigil_site_lookup(s->site, &info) == 0;
    vigil_json_object_begin(j);
    num(j, "site", s->site);
    vigil_json_key(j, "kind");
    vigil_json_string(j, known ? info.kind : "?");
    vigil_json_key(j, "access");
    vigil_json_string(j, s->write ? "write" : "read");
    boolean(j, "atomic", s->atomic);
    vigil_json_key(j, "function");
    vigil_json_string(j, known ? info.function : "?");
    vigil_json_key(j, "file");
    vigil_json_string(j, known ? info.file : "");
    num(j, "line", known ? info.line : 0);
    num(j, "column", known ? info.column : 0);
    num(j, "thread", s->tid);
    boolean(j, "clock", s->slot < RACE_SLOTS);
    vigil_json_key(j, "locks");
    vigil_json_array_begin(j);
    uint16_t ids[RACE_LS_MAX];
    unsigned n = race_ls_ids(s->held, ids);
    for (unsigned i = 0; i < n; i++) {
        uintptr_t a = race_lock_address(ids[i]);
        vigil_json_object_begin(j);
        hex(j, "address", a);
        place(j, ms, a);
        vigil_json_object_end(j);
    }
    vigil_json_array_end(j);
    boolean(j, "locks_unknown", s->held == RACE_LS_ALL);
    vigil_json_object_end(j);
}

static void write_object(struct vigil_json *j, const struct vigil_loadmap *ms, const struct pair *p)
{
    vigil_json_key(j, "object");
    vigil_json_object_begin(j);
    int exec = 0, m = vigil_loadmap_find(ms, p->addr, &exec);
    if (p->heap) {
        vigil_json_key(j, "kind");
        vigil_json_string(j, "heap");
        hex(j, "start", p->obj.start);
        num(j, "size", p->obj.size);
        num(j, "offset", p->addr - p->obj.start);
        vigil_json_key(j, "stack");
        vigil_json_array_begin(j);
        const uintptr_t *pcs;
        unsigned depth = vigil_heapmap_stack(race_heap, p->obj.stack, &pcs);
        for (unsigned i = 0; i < depth; i++) {
            vigil_json_object_begin(j);
            hex(j, "pc", pcs[i]);
            place(j, ms, pcs[i]);
            vigil_json_object_end(j);
        }
        vigil_json_array_end(j);
    } else if (m >= 0) {
        vigil_json_key(j, "kind");
        vigil_json_string(j, "global");
        num(j, "module", (uint64_t)m);
        hex(j, "offset", p->addr - ms->o[m].bias);
    } else {
        vigil_json_key(j, "kind");
        vigil_json_string(j, "unknown");   /* the heap before threads, mmap, a stack */
    }
    vigil_json_object_end(j);
}

static int by_count(const void *x, const void *y)
{
    const struct pair *a = *(const struct pair *const *)x, *b = *(const struct pair *const *)y;
    uint64_t ca = __atomic_load_n(&a->count, __ATOMIC_RELAXED), cb = __atomic_load_n(&b->count, __ATOMIC_RELAXED);
    if (ca != cb)
        return ca < cb ? 1 : -1;
    return a->key < b->key ? -1 : a->key > b->key;
}

static void print_pair(const struct pair *p)
{
    struct vigil_site_info a, b;
    vigil_site_lookup(p->first.site, &a);
    vigil_site_lookup(p->second.site, &b);
    vigil_tool_message(&race_tool, "%s%s at %s:%u (thread %u) vs %s%s at %s:%u (thread %u) on %#lx, seen %llu times",
                       p->first.atomic ? "atomic " : "", p->first.write ? "write" : "read", a.file, a.line, p->first.tid,
                       p->second.atomic ? "atomic " : "", p->second.write ? "write" : "read", b.file, b.line, p->second.tid,
                       (unsigned long)p->addr, (unsigned long long)p->count);
}

void race_report_write(void)
{
    size_t n = 0;
    struct pair **list = calloc(pair_mask + 1, sizeof *list);
    struct vigil_loadmap ms = {calloc(MAX_MODULES, sizeof(struct vigil_loaded_object)), 0, MAX_MODULES};
    if (!list || !ms.o) {
        free(list);
        free(ms.o);
        vigil_tool_message(&race_tool, "out of memory: no race.json");
        return;
    }
    for (size_t i = 0; i <= pair_mask; i++)
        if (__atomic_load_n(&pairs[i].ready, __ATOMIC_ACQUIRE))
            list[n++] = &pairs[i];
    qsort(list, n, sizeof *list, by_count);
    vigil_loadmap_read(&ms);

    FILE *f = vigil_report_open(&race_tool, "race.json");
    if (f) {
        struct vigil_json j;
        vigil_json_init(&j, f, 1);
        vigil_json_object_begin(&j);
        vigil_json_key(&j, "format");
        vigil_json_string(&j, "vigil-race");
        num(&j, "version", 1);
        vigil_json_key(&j, "options");
        vigil_json_object_begin(&j);
        num(&j, "granule", 1u << race_cfg.granule_shift);
        num(&j, "history", race_cfg.history);
        num(&j, "table", race_cfg.table_bits);
        num(&j, "max_reports", race_cfg.max_reports);
        boolean(&j, "hb", race_cfg.hb);
        boolean(&j, "hb_locks", race_cfg.hb_locks);
        boolean(&j, "hb_sync", race_cfg.hb_sync);
        boolean(&j, "heap", race_cfg.heap);
        num(&j, "slots", RACE_SLOTS);
#ifdef VIGIL_TOOL_ACCESSES_BEFORE_LOCKS
        boolean(&j, "exact_windows", 1);
#else
        boolean(&j, "exact_windows", 0);
#endif
        vigil_json_object_end(&j);
        vigil_json_key(&j, "stats");
        vigil_json_object_begin(&j);
#define STAT(name) num(&j, #name, __atomic_load_n(&race_stats.name, __ATOMIC_RELAXED))
        STAT(accesses);
        STAT(checked);
        STAT(stack_skipped);
        STAT(evicted);
        STAT(stale_skipped);
        STAT(cells);
        STAT(races);
        STAT(pairs_dropped);
        STAT(benign);
        STAT(threads);
        STAT(noslot_threads);
        STAT(max_live);
        STAT(locks);
        STAT(locks_untracked);
        num(&j, "heap_objects_lost", race_heap ? vigil_heapmap_lost(race_heap) : 0);
        STAT(resets);
        STAT(atomic_accesses);
        STAT(sync_events);
        STAT(sync_objects);
        STAT(sync_untracked);
        STAT(filtered);
#undef STAT
        num(&j, "pairs", n);
        vigil_json_object_end(&j);
        vigil_json_key(&j, "modules");
        vigil_json_array_begin(&j);
        for (unsigned i = 0; i < ms.n; i++) {
            vigil_json_object_begin(&j);
            vigil_json_key(&j, "path");
            vigil_json_string(&j, ms.o[i].path);
            hex(&j, "bias", ms.o[i].bias);
            vigil_json_object_end(&j);
        }
        vigil_json_array_end(&j);
        vigil_json_key(&j, "races");
        vigil_json_array_begin(&j);
        for (size_t i = 0; i < n; i++) {
            const struct pair *p = list[i];
            vigil_json_object_begin(&j);
            num(&j, "count", __atomic_load_n(&p->count, __ATOMIC_RELAXED));
            hex(&j, "address", p->addr);
            boolean(&j, "hb", race_cfg.hb && p->first.slot < RACE_SLOTS && p->second.slot < RACE_SLOTS);
            write_object(&j, &ms, p);
            vigil_json_key(&j, "accesses");
            vigil_json_array_begin(&j);
            write_side(&j, &ms, &p->first);
            write_side(&j, &ms, &p->second);
            vigil_json_array_end(&j);
            vigil_json_object_end(&j);
        }
        vigil_json_array_end(&j);
        vigil_json_object_end(&j);
        vigil_json_finish(&j);
        fclose(f);
    }
    if (race_cfg.print)
        for (size_t i = 0; i < n; i++)
            print_pair(list[i]);
    free(list);
    free(ms.o);
}
