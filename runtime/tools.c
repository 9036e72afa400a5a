/* Tools: found in the "vigil_tools" section, enabled by tools=a,b, started at init, finished
 * by the final report. Event delivery for the rare events and the services of tool.h. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_TOOLS 16

/* Every tool linked into the runtime: pointers placed by VIGIL_REGISTER_TOOL. The linker
 * defines the bounds; weak, so that a runtime without any tool still links. */
extern const struct vigil_tool *const __start_vigil_tools[] __attribute__((weak)) HIDDEN;
extern const struct vigil_tool *const __stop_vigil_tools[] __attribute__((weak)) HIDDEN;

/* The enabled tools, in the order of tools=. Written by __vigil_tools_start (init, before
 * __vigil_active_events is published), read by every delivery. */
const struct vigil_tool *__vigil_enabled_tools[MAX_TOOLS] HIDDEN;
unsigned __vigil_enabled_count HIDDEN;

/* See internal.h. The runtime itself reads the hidden alias: libvigil.so's code must not go
 * through the GOT (or a text relocation) for it. */
uint32_t __vigil_active_events;
extern uint32_t __vigil_events_here HIDDEN __attribute__((alias("__vigil_active_events")));
__thread struct vigil_thread __vigil_thread __attribute__((tls_model("initial-exec")));

static const struct vigil_tool *find_tool(const char *name, size_t len)
{
    if (!__start_vigil_tools)
        return NULL;
    for (const struct vigil_tool *const *t = __start_vigil_tools; t < __stop_vigil_tools; t++)
        if (*t && strlen((*t)->name) == len && memcmp((*t)->name, name, len) == 0)
            return *t;
    return NULL;
}

static void available_tools(char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    if (__start_vigil_tools)
        for (const struct vigil_tool *const *t = __start_vigil_tools; t < __stop_vigil_tools; t++)
            if (*t && n < len)
                n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", (*t)->name);
    if (!buf[0])
        snprintf(buf, len, "none");
}

static const struct vigil_option_set *options_of(const struct vigil_tool *t)
{
    return t->api_version >= 4 ? t->options : NULL;
}

static void emit_option_line(void *arg, const char *line)
{
    (void)arg;
    __vigil_message("%s", line);
}

/* help=1 lists the built-in tools and their options after the core's: the runtime is the one
 * place that knows which tools it carries (`vigil tools` shows this list). */
void __vigil_tools_help(void)
{
    if (!__start_vigil_tools)
        return;
    for (const struct vigil_tool *const *t = __start_vigil_tools; t < __stop_vigil_tools; t++) {
        if (!*t)
            continue;
        __vigil_message("tool %s: %s", (*t)->name, (*t)->description ? (*t)->description : "");
        if (options_of(*t))
            vigil_optset_help(options_of(*t), emit_option_line, NULL);
    }
}

/* Before init: the tool's option values are its defaults, then its "<tool>.<key>=value" items.
 * A bad value keeps the default, with one message as for the core's options. */
static void apply_tool_options(const struct vigil_tool *t)
{
    const struct vigil_option_set *set = options_of(t);
    if (!set || !t->option_values)
        return;
    vigil_optset_defaults(set, t->option_values);
    for (size_t i = 0; i < set->count; i++) {
        const char *value = __vigil_find_tool_option(t->name, set->table[i].name);
        char why[160], current[VIGIL_OPT_STRING_MAX];
        if (value && vigil_optset_set(set, t->option_values, set->table[i].name, value, why, sizeof why) != 0) {
            vigil_optset_format(set, t->option_values, i, current, sizeof current);
            __vigil_message("VIGIL_OPTIONS: ignoring \"%s.%s=%.80s\": %s; keeping %s.%s=%s", t->name,
                            set->table[i].name, value, why, t->name, set->table[i].name, current);
        }
    }
}

/* A misspelt tool option ("leak.stale_afer=5") would otherwise be ignored in silence. The
 * options of a tool that is not enabled are left alone: they may wait in the environment. */
static void warn_unread_tool_options(void)
{
    size_t cursor = 0;
    for (const char *item; (item = __vigil_unread_tool_option(&cursor));) {
        size_t len = strcspn(item, ".");
        const struct vigil_tool *t = find_tool(item, len);
        int enabled = 0;
        for (unsigned i = 0; t && i < __vigil_enabled_count; i++)
            enabled |= __vigil_enabled_tools[i] == t;
        if (!t) {
            char avail[256];
            available_tools(avail, sizeof avail);
            __vigil_message("tools: \"%.80s\" ignored: no tool named \"%.*s\" (available: %s)", item,
                            (int)(len > 40 ? 40 : len), item, avail);
        } else if (enabled) {
            char keys[256];
            __vigil_tool_keys_asked(t->name, keys, sizeof keys);
            __vigil_message("tools: \"%.80s\" ignored: %s has no option \"%.*s\" (its options: %s)",
                            item, t->name, (int)strcspn(item + len + 1, "="), item + len + 1,
                            keys[0] ? keys : "none");
        }
    }
}

/* Written by tools' init (vigil_want_burst_length), like alloc_stack_depth; 0: no tool asked. */
static uint32_t burst_length_wanted;

void vigil_want_burst_length(uint32_t checks)
{
    if (checks > burst_length_wanted)
        burst_length_wanted = checks;
}

uint32_t __vigil_tools_burst_length(void)
{
    return burst_length_wanted;
}

unsigned __vigil_tools_enabled(void)
{
    return __vigil_enabled_count;
}

int __vigil_tools_need_bursts(void)
{
    for (unsigned i = 0; i < __vigil_enabled_count; i++) {
        const struct vigil_tool *t = __vigil_enabled_tools[i];
        if (t->api_version < 9 || t->bursts != VIGIL_BURSTS_UNUSED)
            return 1;
    }
    return 0;
}

static void (*on_module_of(const struct vigil_tool *t))(const struct vigil_module_info *)
{
    return t->api_version >= 4 ? t->on_module : NULL;
}

/* A tool built for an earlier version has no on_sync field (and no business with the bit). */
static void (*on_sync_of(const struct vigil_tool *t))(const void *, enum vigil_sync_op)
{
    return t->api_version >= 5 ? t->on_sync : NULL;
}

static uint32_t events_of(const struct vigil_tool *t)
{
    return t->api_version >= 5 ? t->events : t->events & ~(uint32_t)VIGIL_EV_SYNC;
}

/* The events each enabled tool wants now (vigil_tool_events; events_of at first), by its index
 * in __vigil_enabled_tools: what deliveries check. Written under events_lock, read relaxed. The
 * tool whose init is running, and what it asked for there, until it is enabled. events_frozen:
 * the final report stopped the events, no tool may start them again. */
uint32_t __vigil_tool_events_now[MAX_TOOLS] HIDDEN;
static uint32_t events_lock;
static const struct vigil_tool *initializing;
static uint32_t initializing_events;
static int events_frozen;

static void events_lock_take(void)
{
    while (__atomic_exchange_n(&events_lock, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&events_lock, __ATOMIC_RELAXED))
            __builtin_ia32_pause();
}

void vigil_tool_events(const struct vigil_tool *tool, uint32_t events)
{
    if (!tool)
        return;
    events_lock_take();
    events &= events_of(tool);
    if (tool == initializing) {
        initializing_events = events;
    } else if (!events_frozen) {
        uint32_t all = 0;
        for (unsigned i = 0; i < __vigil_enabled_count; i++) {
            if (__vigil_enabled_tools[i] == tool)
                RELAXED_STORE(&__vigil_tool_events_now[i], events);
            all |= __vigil_tool_events_now[i];
        }
        __atomic_store_n(&__vigil_events_here, all, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&events_lock, 0, __ATOMIC_RELEASE);
}

void __vigil_tools_module(const struct vigil_module_info *m)
{
    for (unsigned i = 0; i < __vigil_enabled_count; i++)
        if (on_module_of(__vigil_enabled_tools[i]))
            on_module_of(__vigil_enabled_tools[i])(m);
}

/* A tool that starts after modules registered hears of them now. */
static int announce_module(const struct vigil_module_info *m, void *tool)
{
    on_module_of(tool)(m);
    return 0;
}

void __vigil_tools_start(void)
{
    const char *list = __vigil_opts.tools;
    uint32_t events = 0;
    struct vigil_thread *th = &__vigil_thread;
    th->in_runtime = 1;   /* what tools allocate in init is theirs, not the program's */
    while (*list) {
        size_t len = strcspn(list, ",");
        if (len) {
            const struct vigil_tool *t = find_tool(list, len);
            int duplicate = 0;
            for (unsigned i = 0; i < __vigil_enabled_count; i++)
                duplicate |= __vigil_enabled_tools[i] == t;
            if (!t) {
                char avail[256];
                available_tools(avail, sizeof avail);
                __vigil_message("tools: unknown tool \"%.*s\" ignored (available: %s)", (int)len,
                                list, avail);
            } else if (t->api_version < 1 || t->api_version > VIGIL_TOOL_API_VERSION) {
                __vigil_message("tools: %s is built for tool API %u, not %u: disabled", t->name,
                                t->api_version, VIGIL_TOOL_API_VERSION);
            } else if (!duplicate && __vigil_enabled_count == MAX_TOOLS) {
                __vigil_message("tools: more than %d tools: %s disabled", MAX_TOOLS, t->name);
            } else if (!duplicate) {
                apply_tool_options(t);
                initializing = t;
                initializing_events = events_of(t);
                int failed = t->init && t->init() != 0;
                initializing = NULL;
                if (failed) {
                    __vigil_message("tools: %s failed to start: disabled", t->name);
                } else {
                    __vigil_tool_events_now[__vigil_enabled_count] = initializing_events;
                    __vigil_enabled_tools[__vigil_enabled_count] = t;
                    RELAXED_STORE(&__vigil_enabled_count, __vigil_enabled_count + 1);
                    events |= initializing_events;
                    if (on_module_of(t))
                        vigil_modules_each(announce_module, (void *)t);
                }
            }
        }
        list += len;
        if (*list == ',')
            list++;
    }
    events_lock_take();
    __atomic_store_n(&__vigil_events_here, events, __ATOMIC_RELEASE);
    __atomic_store_n(&events_lock, 0, __ATOMIC_RELEASE);
    __vigil_leave_runtime(th, 0);   /* a SIGTERM during the tools' init is acted on now */
    warn_unread_tool_options();
}

void __vigil_tools_fini(void)
{
    __vigil_deliver_accesses();
    /* The buffer keeps the addresses it held: a leak scan would read them as pointers from
     * this thread's TLS, and the last objects accessed would look reachable. */
    memset(__vigil_thread.access, 0, sizeof __vigil_thread.access);
    /* Events stop first: a tool writing its report must not receive events meanwhile. */
    events_lock_take();
    events_frozen = 1;
    __atomic_store_n(&__vigil_events_here, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&events_lock, 0, __ATOMIC_RELEASE);
    for (unsigned i = 0; i < __vigil_enabled_count; i++)
        if (__vigil_enabled_tools[i]->fini)
            __vigil_enabled_tools[i]->fini();
}

/* A report while the program runs (report.c): each tool's flush hook, events going on. */
void __vigil_tools_flush(void)
{
    for (unsigned i = 0; i < __vigil_enabled_count; i++) {
        const struct vigil_tool *t = __vigil_enabled_tools[i];
        if (t->api_version >= 7 && t->flush)
            t->flush();
    }
}

/* What each enabled tool said it found (vigil_tool_summary): written by the tools' fini, on
 * the thread writing the final report; read by __vigil_tools_summary_line after them. */
static char tool_summary[MAX_TOOLS][200];

void vigil_tool_summary(const struct vigil_tool *tool, const char *fmt, ...)
{
    for (unsigned i = 0; i < __vigil_enabled_count; i++)
        if (__vigil_enabled_tools[i] == tool) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(tool_summary[i], sizeof tool_summary[i], fmt, ap);
            va_end(ap);
        }
}

void __vigil_tools_summary_line(void)
{
    char line[1024];
    size_t n = 0;
    for (unsigned i = 0; i < __vigil_enabled_count && n < sizeof line; i++)
        if (tool_summary[i][0])
            n += (size_t)snprintf(line + n, sizeof line - n, "%s%s: %s", n ? "; " : "SUMMARY: vigil: ",
                                  __vigil_enabled_tools[i]->name, tool_summary[i]);
    if (!n)
        return;
    if (n > sizeof line - 2)
        n = sizeof line - 2;
    line[n++] = '\n';
    ssize_t w = write(2, line, n);
    (void)w;
}

void __vigil_tools_names(char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < __vigil_enabled_count && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "," : "", __vigil_enabled_tools[i]->name);
}

#define DELIVER(ev, hook, ...)                                                  \
    for (unsigned i = 0; i < __vigil_enabled_count; i++) {                      \
        const struct vigil_tool *t = __vigil_enabled_tools[i];                  \
        if ((RELAXED_LOAD(&__vigil_tool_events_now[i]) & (ev)) && t->hook)      \
            t->hook(__VA_ARGS__);                                               \
    }

void __vigil_deliver_buffered(void)
{
    struct vigil_thread *th = &__vigil_thread;
    uint32_t n = th->naccess;
    if (n == 0)
        return;
    int was = th->in_runtime;
    th->in_runtime = 1;
    th->naccess = 0;
    uint32_t flagged = th->access_flagged;
    th->access_flagged = 0;
    if (n > VIGIL_ACCESS_BATCH)   /* a signal handler's probe raced the buffer's owner */
        n = VIGIL_ACCESS_BATCH;
    /* Tools outside, events inside (not DELIVER per event): the inner loop is the hook alone,
     * three times fewer instructions per access on lua with tools=leak. */
    for (unsigned i = 0; i < __vigil_enabled_count; i++) {
        const struct vigil_tool *t = __vigil_enabled_tools[i];
        if (!(RELAXED_LOAD(&__vigil_tool_events_now[i]) & VIGIL_EV_ACCESS))
            continue;
        if (t->api_version >= 3 && t->on_accesses) {
            if (flagged && t->api_version < 5) {
                /* built before the flags existed: their size_store is size << 1 | is_store */
                struct vigil_access plain[VIGIL_ACCESS_BATCH];
                for (uint32_t k = 0; k < n; k++) {
                    plain[k] = th->access[k];
                    plain[k].size_store &= ~VIGIL_ACCESS_FLAGS;
                }
                t->on_accesses(plain, n);
                continue;
            }
            t->on_accesses(th->access, n);
            continue;
        }
        if (!t->on_access)
            continue;
        for (uint32_t k = 0; k < n; k++) {
            const struct vigil_access *e = &th->access[k];
            t->on_access(e->addr, VIGIL_ACCESS_SIZE(e), (int)VIGIL_ACCESS_IS_STORE(e), e->site);
        }
    }
    __vigil_leave_runtime(th, was);
}

/* Written by tools' init (vigil_want_alloc_stack), on the thread that starts the runtime and
 * before any event is delivered; 0: no tool asked. */
static uint32_t alloc_stack_depth;

void vigil_want_alloc_stack(uint32_t depth)
{
    if (depth > VIGIL_MAX_STACK)
        depth = VIGIL_MAX_STACK;
    if (depth > alloc_stack_depth)
        alloc_stack_depth = depth;
}

int vigil_alloc_is_realloc(void)
{
    return __vigil_thread.in_realloc;
}

vigil_site_t vigil_site_of(const void *module, uint32_t index)
{
    const struct __vigil_module *m = module;
    if (!m || !__atomic_load_n(&m->registered, __ATOMIC_ACQUIRE) || index >= m->nsites)
        return VIGIL_NO_SITE;
    return m->base_id + index;
}

enum vigil_alloc_kind vigil_alloc_kind(void)
{
    return __vigil_thread.in_realloc ? VIGIL_ALLOC_REALLOC : (enum vigil_alloc_kind)__vigil_thread.alloc_kind;
}

void __vigil_deliver_alloc(void *p, size_t size, void *frame)
{
    __vigil_deliver_accesses();   /* this thread's accesses come before its allocation */
    struct vigil_stack where;
    where.depth = __vigil_walk_stack(frame, where.pc, alloc_stack_depth ? alloc_stack_depth : VIGIL_MAX_STACK, 1);
    __vigil_thread.hook_frame = frame;
    if (likely(__vigil_enabled_count == 1)) {   /* one tool, the usual case: no loop */
        const struct vigil_tool *t = __vigil_enabled_tools[0];
        if ((RELAXED_LOAD(&__vigil_tool_events_now[0]) & VIGIL_EV_ALLOC) && t->on_alloc)
            t->on_alloc(p, size, &where);
    } else {
        DELIVER(VIGIL_EV_ALLOC, on_alloc, p, size, &where);
    }
    __vigil_thread.hook_frame = NULL;
}

static __attribute__((noinline)) void deliver_free_each(void *p)
{
    DELIVER(VIGIL_EV_FREE, on_free, p);
}

void __vigil_deliver_free(void *p)
{
    __vigil_deliver_accesses();   /* before the object goes: its address may come back */
    if (likely(__vigil_enabled_count == 1)) {   /* one tool, the usual case: a jump to its hook */
        const struct vigil_tool *t = __vigil_enabled_tools[0];
        if ((RELAXED_LOAD(&__vigil_tool_events_now[0]) & VIGIL_EV_FREE) && t->on_free)
            t->on_free(p);
        return;
    }
    deliver_free_each(p);
}

void __vigil_deliver_lock(const void *lock, enum vigil_lock_op op)
{
    /* The accesses made before a lock operation reach the tools before it (tool.h). */
    if (__atomic_load_n(&__vigil_events_here, __ATOMIC_RELAXED) & VIGIL_EV_LOCK)
        __vigil_deliver_accesses();
    DELIVER(VIGIL_EV_LOCK, on_lock, lock, op);
}

void __vigil_deliver_thread(enum vigil_thread_op op, uint64_t id)
{
    __vigil_deliver_accesses();
    DELIVER(VIGIL_EV_THREAD, on_thread, op, id);
}

void __vigil_deliver_sync(const void *object, enum vigil_sync_op op)
{
    __vigil_deliver_accesses();   /* the accesses before it reach the tools first (tool.h) */
    for (unsigned i = 0; i < __vigil_enabled_count; i++) {
        const struct vigil_tool *t = __vigil_enabled_tools[i];
        if ((RELAXED_LOAD(&__vigil_tool_events_now[i]) & VIGIL_EV_SYNC) && on_sync_of(t))
            on_sync_of(t)(object, op);
    }
}

/* ---- services of tool.h ---- */

void vigil_tool_deliver_accesses(void)
{
    if (!__vigil_thread.in_runtime)
        __vigil_deliver_accesses();
}

const char *vigil_tool_option(const struct vigil_tool *tool, const char *key)
{
    if (!tool || !tool->name || !key)
        return NULL;
    return __vigil_find_tool_option(tool->name, key);
}

unsigned vigil_verbosity(void)
{
    return __vigil_opts.verbosity;
}

void vigil_tool_message(const struct vigil_tool *tool, const char *fmt, ...)
{
    char text[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    __vigil_message("%s: %s", tool && tool->name ? tool->name : "?", text);
}

void vigil_capture_stack(struct vigil_stack *out, uint32_t max_depth)
{
    if (max_depth > VIGIL_MAX_STACK)
        max_depth = VIGIL_MAX_STACK;
    /* Inside an event: start at the hook's frame, skipping the tool's and the runtime's. */
    void *frame = __vigil_thread.hook_frame;
    out->depth = __vigil_walk_stack(frame ? frame : __builtin_frame_address(0), out->pc, max_depth, 0);
}
