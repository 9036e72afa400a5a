/* count: the template tool. It opts into every event, counts each kind, and writes count.txt
 * into the run report at exit. It uses nothing but include/vigil/tool.h, so it is also the
 * test of the tool interface.
 *
 * count.txt: one line per event kind, "<kind> <count>", in the order below, then
 * "alloc_bytes <n>", the frees and allocations of reallocs, the deepest allocation stack
 * received, and the bytes the loads and stores covered; then one line per synchronization
 * event kind (tool API 5: atomic release and acquire, semaphores, barriers, pthread_once,
 * condition-variable signals and wakes). Its options are in
 * tools/count/options.inc. A tool is a folder: this one's runtime part is this file, its
 * command part cmd/tool.c, its tests tests/run.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vigil/tool.h"

#define VIGIL_OPTSET_TOOL count
#define VIGIL_OPTSET_ROWS "tools/count/options.inc"
#include "optset.h"

static struct count_options opts;   /* written by the runtime before init */

enum { C_ALLOC, C_FREE, C_LOCK, C_UNLOCK, C_THREAD_START, C_THREAD_EXIT, C_THREAD_JOIN,
       C_FORK_CHILD, C_LOAD, C_STORE, C_BRANCH, C_RETURN, C_CALL, C_ALLOC_BYTES,
       C_REALLOC_FREE, C_REALLOC_ALLOC, C_MAX_DEPTH, C_LOAD_BYTES, C_STORE_BYTES,
       C_SYNC, C_N = C_SYNC + VIGIL_SYNC_OPS };   /* C_SYNC + op: one per enum vigil_sync_op */

static const char *const names[C_N] = {
    "alloc", "free", "lock", "unlock", "thread_start", "thread_exit", "thread_join",
    "fork_child", "load", "store", "branch", "return", "call", "alloc_bytes",
    "realloc_free", "realloc_alloc", "max_depth", "load_bytes", "store_bytes",
    [C_SYNC + VIGIL_SYNC_ATOMIC_RELEASE] = "atomic_release", [C_SYNC + VIGIL_SYNC_ATOMIC_ACQUIRE] = "atomic_acquire",
    [C_SYNC + VIGIL_SYNC_SEM_POST] = "sem_post", [C_SYNC + VIGIL_SYNC_SEM_WAIT] = "sem_wait",
    [C_SYNC + VIGIL_SYNC_BARRIER_ARRIVE] = "barrier_arrive", [C_SYNC + VIGIL_SYNC_BARRIER_DEPART] = "barrier_depart",
    [C_SYNC + VIGIL_SYNC_ONCE_DONE] = "once_done", [C_SYNC + VIGIL_SYNC_ONCE_PASS] = "once_pass",
    [C_SYNC + VIGIL_SYNC_COND_SIGNAL] = "cond_signal", [C_SYNC + VIGIL_SYNC_COND_WAKE] = "cond_wake",
};
_Static_assert(VIGIL_SYNC_OPS == 10, "a name for every synchronization event");

/* Event counts: bumped by every thread's hooks (relaxed atomics), read by fini. */
static uint64_t counts[C_N];

static void bump(int what, uint64_t n)
{
    __atomic_fetch_add(&counts[what], n, __ATOMIC_RELAXED);
}

static void on_alloc(void *ptr, size_t size, const struct vigil_stack *where)
{
    (void)ptr;
    bump(C_ALLOC, 1);
    bump(C_ALLOC_BYTES, size);
    if (vigil_alloc_is_realloc())
        bump(C_REALLOC_ALLOC, 1);
    uint64_t seen = __atomic_load_n(&counts[C_MAX_DEPTH], __ATOMIC_RELAXED);
    while (where && where->depth > seen &&
           !__atomic_compare_exchange_n(&counts[C_MAX_DEPTH], &seen, where->depth, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static void on_free(void *ptr)
{
    (void)ptr;
    bump(C_FREE, 1);
    if (vigil_alloc_is_realloc())
        bump(C_REALLOC_FREE, 1);
}

static void on_lock(const void *lock, enum vigil_lock_op op)
{
    (void)lock;
    bump(op == VIGIL_LOCK_RELEASE ? C_UNLOCK : C_LOCK, 1);
}

static void on_thread(enum vigil_thread_op op, uint64_t id)
{
    (void)id;
    static const int kind[] = {[VIGIL_THREAD_START] = C_THREAD_START,
                               [VIGIL_THREAD_EXIT] = C_THREAD_EXIT,
                               [VIGIL_THREAD_JOIN] = C_THREAD_JOIN,
                               [VIGIL_THREAD_FORK_CHILD] = C_FORK_CHILD};
    if ((unsigned)op < sizeof kind / sizeof kind[0])
        bump(kind[op], 1);
}

static void on_sync(const void *object, enum vigil_sync_op op)
{
    (void)object;
    if ((unsigned)op < VIGIL_SYNC_OPS)
        bump(C_SYNC + (int)op, 1);
}

static void on_access(const void *addr, size_t size, int is_store, vigil_site_t site)
{
    (void)addr, (void)site;
    bump(is_store ? C_STORE : C_LOAD, 1);
    bump(is_store ? C_STORE_BYTES : C_LOAD_BYTES, size);
}

static void on_branch(vigil_site_t site, int taken)
{
    (void)site, (void)taken;
    bump(C_BRANCH, 1);
}

static void on_return(vigil_site_t site, int64_t value)
{
    (void)site, (void)value;
    bump(C_RETURN, 1);
}

static void on_call(vigil_site_t site, const void *callee)
{
    (void)site, (void)callee;
    bump(C_CALL, 1);
}

static int count_init(void);
static void count_fini(void);

static struct vigil_tool count_tool = {
    .api_version = VIGIL_TOOL_API_VERSION,
    .name = "count",
    .description = "counts every event kind (template tool); writes count.txt",
    .events = VIGIL_EV_ALLOC | VIGIL_EV_FREE | VIGIL_EV_LOCK | VIGIL_EV_THREAD | VIGIL_EV_SYNC |
              VIGIL_EV_ACCESS | VIGIL_EV_BRANCH | VIGIL_EV_RETURN | VIGIL_EV_CALL,
    .init = count_init,
    .fini = count_fini,
    .on_alloc = on_alloc,
    .on_free = on_free,
    .on_lock = on_lock,
    .on_thread = on_thread,
    .on_access = on_access,
    .on_branch = on_branch,
    .on_return = on_return,
    .on_call = on_call,
    .options = &count_option_set,
    .option_values = &opts,
    .on_sync = on_sync,
    .bursts = VIGIL_BURSTS_NEEDED,
};
VIGIL_REGISTER_TOOL(count_tool);

static int count_init(void)
{
    if (opts.depth > VIGIL_MAX_STACK)
        vigil_tool_message(&count_tool, "count.depth=%u: expected 0 to %d; not asking", opts.depth, VIGIL_MAX_STACK);
    else if (opts.depth)
        vigil_want_alloc_stack(opts.depth);
    return 0;
}

static void count_fini(void)
{
    uint64_t snap[C_N];
    for (int i = 0; i < C_N; i++)
        snap[i] = __atomic_load_n(&counts[i], __ATOMIC_RELAXED);
    FILE *f = vigil_report_open(&count_tool, "count.txt");
    if (f) {
        for (int i = 0; i < C_N; i++)
            fprintf(f, "%s %llu\n", names[i], (unsigned long long)snap[i]);
        fclose(f);
    }
    if (opts.print)
        vigil_tool_message(&count_tool, "alloc %llu, free %llu, lock %llu, unlock %llu, threads %llu, "
                           "loads %llu, stores %llu, branches %llu, returns %llu, calls %llu",
                           (unsigned long long)snap[C_ALLOC], (unsigned long long)snap[C_FREE],
                           (unsigned long long)snap[C_LOCK], (unsigned long long)snap[C_UNLOCK],
                           (unsigned long long)snap[C_THREAD_START],
                           (unsigned long long)snap[C_LOAD], (unsigned long long)snap[C_STORE],
                           (unsigned long long)snap[C_BRANCH], (unsigned long long)snap[C_RETURN],
                           (unsigned long long)snap[C_CALL]);
}
