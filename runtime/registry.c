/* The module registry: one node per registered translation unit, in registration order.
 * Base ids are handed out in that order. The lock is taken only to register; readers walk
 * the list without it (nodes are appended with release stores and never freed). */
#include "internal.h"

#include <dlfcn.h>
#include <link.h>
#include <sched.h>
#include <string.h>

extern void *__libc_malloc(size_t);

/* Registration lock: a spin flag, not a pthread mutex (our own pthread_mutex_lock would
 * report it to tools). Taken by __vigil_ensure_registered only. */
static int registry_lock;
/* Head and tail of the node list; written under registry_lock. */
static struct vigil_module_node *head, *tail;
/* Next process-wide site id to hand out; written under registry_lock. */
static uint32_t next_base_id;

static void lock(void)
{
    while (__atomic_exchange_n(&registry_lock, 1, __ATOMIC_ACQUIRE))
        sched_yield();
}

static void unlock(void)
{
    __atomic_store_n(&registry_lock, 0, __ATOMIC_RELEASE);
}

struct vigil_module_node *__vigil_modules(void)
{
    return __atomic_load_n(&head, __ATOMIC_ACQUIRE);
}

/* dl_iterate_phdr callback: the loaded object whose segments hold `want->addr`. */
struct object_search {
    uintptr_t addr;
    const char *name;   /* NULL until found; "" for the main program */
};

static int find_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct object_search *want = data;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && want->addr - start < ph->p_memsz) {
            want->name = info->dlpi_name ? info->dlpi_name : "";
            return 1;
        }
    }
    return 0;
}

/* The file of the object that holds m. Not dladdr: that also looks for the nearest symbol,
 * a walk of the whole symbol table (about 20,000 instructions per module in lua, 650,000 at
 * the start of every run). */
static const char *module_path(const struct __vigil_module *m, int *in_main_program)
{
    struct object_search want = {(uintptr_t)m, NULL};
    dl_iterate_phdr(find_object, &want);
    /* The main program's object has an empty name: it keeps the /proc/self/exe path. */
    *in_main_program = !(want.name && want.name[0]);
    const char *path = *in_main_program ? __vigil_proc.exe : want.name;
    size_t len = strlen(path);
    char *copy = __libc_malloc(len + 1);
    if (!copy)
        return "?";
    memcpy(copy, path, len + 1);
    return copy;
}

/* Rejection is remembered in m->registered (2) so that the message is printed once and the
 * module's checks are switched off. */
#define REGISTERED 1
#define REFUSED 2

/* mode=off samples nothing, not even a site's first execution: the module's counters (those of
 * the registering thread, when they are thread-local: other threads' first checks take the
 * slow path once) start at
 * their countdown, not at 0, so that no check takes its fired path. Each function's first
 * call used to go through that path into __vigil_dispatch_enter once; with the path split off
 * into .text.unlikely (vigil-cc's VIGIL_CC_SPLIT_COLD), the code of every function called
 * came into memory twice over: lua's resident text went from 0.6 to 1.3 MB. A counter that is
 * no longer 0 (the check whose call of __vigil_dispatch_enter registers this module) goes
 * the usual way. */
static void prime_counters(struct __vigil_module *m)
{
    uint32_t start = vigil_schedule_prime(&__vigil_sched);
    uint32_t *counters = __vigil_counters_here(m);
    if (!start || !counters || !m->state)
        return;
    for (uint32_t d = 0; d < m->ndispatch; d++) {
        uint32_t untouched = 0;
        if (__atomic_compare_exchange_n(&counters[d], &untouched, start, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            RELAXED_STORE(&counters[m->ndispatch + d], start);
            vigil_schedule_primed(&__vigil_sched, &m->state[d]);
        }
    }
}

static int register_locked(struct __vigil_module *m)
{
    if (m->registered)
        return m->registered == REGISTERED;
    if (m->abi_version != VIGIL_ABI_VERSION) {
        __vigil_message("module %p built for ABI version %u, this runtime has version %u: "
                        "not monitored (rebuild it with this vigil-cc)", (void *)m,
                        m->abi_version, VIGIL_ABI_VERSION);
        __atomic_store_n(&m->registered, REFUSED, __ATOMIC_RELEASE);
        return 0;
    }
    for (uint32_t d = 0; d < m->ndispatch; d++) {   /* dispatch sites: in range, in site order */
        uint32_t site = m->dispatch_sites[d] & VIGIL_DISPATCH_SITE;
        if (site >= m->nsites || (d > 0 && site <= (m->dispatch_sites[d - 1] & VIGIL_DISPATCH_SITE))) {
            __vigil_message("module %p: dispatch site %u of %u is malformed: not monitored", (void *)m, d,
                            m->ndispatch);
            __atomic_store_n(&m->registered, REFUSED, __ATOMIC_RELEASE);
            return 0;
        }
    }
    struct vigil_module_node *n = __libc_malloc(sizeof *n);   /* the runtime's own memory */
    if (!n) {
        __vigil_message("out of memory registering a module: not monitored");
        __atomic_store_n(&m->registered, REFUSED, __ATOMIC_RELEASE);
        return 0;
    }
    memset(n, 0, sizeof *n);
    n->m = m;
    n->path = module_path(m, &n->in_main_program);
    m->base_id = next_base_id;
    n->tu_hash = m->tu_hash;
    n->nsites = m->nsites;
    n->base_id = m->base_id;
    next_base_id += m->nsites;
    if (tail)
        __atomic_store_n(&tail->next, n, __ATOMIC_RELEASE);
    else
        __atomic_store_n(&head, n, __ATOMIC_RELEASE);
    tail = n;
    prime_counters(m);         /* before a tool's pins, which park their counters at 0 */
    __vigil_module_info_init(n);
    __vigil_tools_module(&n->info);
    __atomic_store_n(&m->registered, REGISTERED, __ATOMIC_RELEASE);
    if (__vigil_opts.verbosity >= 2)
        __vigil_message("module %s: %u sites, ids %u..%u", n->path, m->nsites, m->base_id,
                        m->base_id + m->nsites - 1);
    return 1;
}

enum { TABLE_UNOPENED, TABLE_OPENING, TABLE_OK, TABLE_BAD };

const struct vigil_sitefmt_table *__vigil_module_table(struct vigil_module_node *n)
{
    int state = __atomic_load_n(&n->table_state, __ATOMIC_ACQUIRE);
    if (state == TABLE_UNOPENED &&
        __atomic_compare_exchange_n(&n->table_state, &state, TABLE_OPENING, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        struct __vigil_module *m = n->m;
        char err[200];
        state = TABLE_BAD;
        if (!m->site_blob) {   /* the table stayed in the file (vigil-cc for ELF) */
            /* /proc/self/exe is the running program even when its file was replaced since. */
            const char *file = n->in_main_program ? "/proc/self/exe" : n->path;
            if (__vigil_site_table_from_file(file, n->tu_hash, n->nsites, &n->table, err, sizeof err) == 0)
                state = TABLE_OK;
            else if (err[0])
                __vigil_message("%s: cannot read its site tables (%s): its sites are unnamed", n->path, err);
        } else {
            size_t len = 0;
            if (memcmp(m->site_blob, VIGIL_SITEFMT_MAGIC, 8) == 0) {
                const struct vigil_sitefmt_header *h = (const void *)m->site_blob;
                len = h->total_size;
            }
            if (vigil_sitefmt_open_lazy(m->site_blob, len, &n->table, err, sizeof err) != 0)
                __vigil_message("%s: a site table is unreadable (%s): its sites are unnamed", n->path, err);
            else if (n->table.nsites != m->nsites)
                __vigil_message("%s: a module with %u sites has a site table of %u sites: its sites are unnamed",
                                n->path, m->nsites, n->table.nsites);
            else
                state = TABLE_OK;
        }
        __atomic_store_n(&n->table_state, state, __ATOMIC_RELEASE);
    }
    /* Another thread opens it (or this one, interrupted by a signal: do not wait for ever). */
    for (int spins = 0; state == TABLE_OPENING && spins < 100000; spins++)
        state = __atomic_load_n(&n->table_state, __ATOMIC_ACQUIRE);
    return state == TABLE_OK ? &n->table : NULL;
}

int __vigil_ensure_registered(struct __vigil_module *m)
{
    uint32_t state = __atomic_load_n(&m->registered, __ATOMIC_ACQUIRE);
    if (likely(state == REGISTERED))
        return 1;
    if (state == REFUSED)
        return 0;
    __vigil_ensure_init();
    lock();
    int ok = register_locked(m);
    unlock();
    return ok;
}

void __vigil_register_module(struct __vigil_module *m)
{
    __vigil_ensure_registered(m);
}

void __vigil_registry_after_fork(void)
{
    /* Another thread may have held the lock at fork: the child has only this thread. */
    __atomic_store_n(&registry_lock, 0, __ATOMIC_RELAXED);
}

void __vigil_modules_check_unloaded(void)
{
    Dl_info info;
    for (struct vigil_module_node *n = __vigil_modules(); n; n = __atomic_load_n(&n->next, __ATOMIC_ACQUIRE))
        if (!n->unloaded && !dladdr(n->m, &info))
            RELAXED_STORE(&n->unloaded, 1);
}

int vigil_site_lookup(vigil_site_t site, struct vigil_site_info *info)
{
    for (struct vigil_module_node *n = __vigil_modules(); n; n = __atomic_load_n(&n->next, __ATOMIC_ACQUIRE)) {
        if (RELAXED_LOAD(&n->unloaded) || site < n->base_id || site - n->base_id >= n->nsites)
            continue;
        const struct vigil_sitefmt_table *t = __vigil_module_table(n);
        if (!t)
            break;
        struct vigil_site_view v;
        vigil_sitefmt_get(t, site - n->base_id, &v);
        info->kind = vigil_site_kind_name(v.kind);
        info->function = vigil_site_source_function(&v);   /* the inlined one, if inlined */
        info->file = v.file;
        info->line = v.line;
        info->column = v.column;
        return 0;
    }
    info->kind = info->function = info->file = "?";
    info->line = info->column = 0;
    return -1;
}
