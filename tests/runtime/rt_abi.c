/* Runtime test program that plays the part of vigil-cc's output: a hand-made module (site
 * table built with the sitefmt encoder, counters, state, descriptor) and dispatch checks of
 * exactly the shape in common/abi.h. Linked with libvigil.a (whole archive) or libvigil.so.
 * tests/runtime/run.sh runs each scenario and checks the run report.
 *
 *   rt_abi basic [N]  hot loop N times (default 1,000,000), rare site 5 times + once more from
 *                     an atexit handler (which must run before the report), heap; exit 3
 *   rt_abi threads    4 threads x (hot site, mutex, rwlock, spinlock, condvar), joined
 *   rt_abi fork       child runs the rare site twice and exits 5; parent exits 0
 *   rt_abi segv       null store after the rare site: dies of SIGSEGV
 *   rt_abi _exit      _exit(7) without exit handlers
 *   rt_abi flush      vigil_flush_report, then more work, then exit 0
 *   rt_abi lazy       dispatch check fires before the module's constructor ran; exit 0
 *   rt_abi probe-first a module whose first contact with the runtime is a probe (no dispatch
 *                     check, no constructor registered it): every kind of probe; exit 0
 *   rt_abi wait       rare site, then waits for a signal (run.sh sends SIGTERM)
 *   rt_abi services   prints what the tool services say (site lookup, stack, clock)
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "abi.h"
#include "sitefmt.h"
#include "vigil/tool.h"
#include "vigil/vigil.h"

enum { S_HOT_ENTRY, S_HOT_LOOP, S_RARE, S_LOAD, S_STORE, S_BRANCH, S_RET, S_CALL, NSITES };

/* The dispatch sites come first, so that a dispatch index is its site index here. */
enum { NDISPATCH = S_RARE + 1 };
static const uint32_t dispatch_sites[NDISPATCH] = {S_HOT_ENTRY, S_HOT_LOOP | VIGIL_DISPATCH_BACKEDGE, S_RARE};
/* Countdowns per thread (common/abi.h, ABI 7), as vigil-cc emits them in an executable's code:
 * the countdowns, then the value each was last set to. */
static __thread uint32_t counters[2 * NDISPATCH] __attribute__((tls_model("initial-exec")));
static uint32_t *thread_counters(void)
{
    return counters;
}
static struct __vigil_site_state state[NDISPATCH] __attribute__((aligned(8)));
static struct __vigil_module module = {
    .abi_version = VIGIL_ABI_VERSION, .nsites = NSITES, .state = state,
    .dispatch_sites = dispatch_sites, .ndispatch = NDISPATCH, .thread_counters = thread_counters,
};
/* A second module, registered lazily by its first dispatch check; countdowns shared by all
 * threads, as in code for a shared library. */
static const uint32_t dispatch_sites2[1] = {0};
static uint32_t counters2[2];
static struct __vigil_site_state state2[1] __attribute__((aligned(8)));
static struct __vigil_module module2 = {
    .abi_version = VIGIL_ABI_VERSION, .nsites = 1, .counters = counters2, .state = state2,
    .dispatch_sites = dispatch_sites2, .ndispatch = 1,
};

/* A third module, never registered by anyone: its probes are the runtime's first sight of it. */
enum { S3_ENTRY, S3_LOAD, S3_STORE, S3_BRANCH, S3_RET, S3_CALL, NSITES3 };
static const uint32_t dispatch_sites3[1] = {S3_ENTRY};
static uint32_t counters3[2];
static struct __vigil_site_state state3[1] __attribute__((aligned(8)));
static struct __vigil_module module3 = {
    .abi_version = VIGIL_ABI_VERSION, .nsites = NSITES3, .counters = counters3, .state = state3,
    .dispatch_sites = dispatch_sites3, .ndispatch = 1,
};

/* The encoded table of b becomes m's, with its identity. */
static void give_table(struct __vigil_module *m, struct vigil_sitefmt_builder *b, uint64_t tu_hash)
{
    size_t len;
    m->site_blob = vigil_sitefmt_finish(b, tu_hash, &len, NULL, NULL);
    m->tu_hash = tu_hash;
}

static void build_tables(void)
{
    struct vigil_sitefmt_builder *b = vigil_sitefmt_builder_new("rt_abi.c");
    vigil_sitefmt_add(b, VIGIL_SITE_ENTRY, "hot", "rt_abi.c", 10, 1, 0);
    vigil_sitefmt_add(b, VIGIL_SITE_BACKEDGE, "hot", "rt_abi.c", 11, 5, 0);
    vigil_sitefmt_add(b, VIGIL_SITE_ENTRY, "rare", "rt_abi.c", 20, 1, 0);
    vigil_sitefmt_add(b, VIGIL_SITE_LOAD, "hot", "rt_abi.c", 12, 9, 4);
    vigil_sitefmt_add(b, VIGIL_SITE_STORE, "hot", "rt_abi.c", 12, 3, 4);
    vigil_sitefmt_add(b, VIGIL_SITE_BRANCH, "hot", "rt_abi.c", 13, 7, 0);
    vigil_sitefmt_add(b, VIGIL_SITE_RETURN, "hot", "rt_abi.c", 14, 7, 0);
    vigil_sitefmt_add(b, VIGIL_SITE_CALL, "hot", "rt_abi.c", 15, 7, 0);
    give_table(&module, b, 0x1122334455667788ull);
    b = vigil_sitefmt_builder_new("rt_lazy.c");
    vigil_sitefmt_add(b, VIGIL_SITE_ENTRY, "lazy", "rt_lazy.c", 1, 1, 0);
    give_table(&module2, b, 0xabcdefull);
    b = vigil_sitefmt_builder_new("rt_probe_first.c");
    vigil_sitefmt_add(b, VIGIL_SITE_ENTRY, "first", "rt_probe_first.c", 1, 1, 0);
    vigil_sitefmt_add(b, VIGIL_SITE_LOAD, "first", "rt_probe_first.c", 2, 1, 4);
    vigil_sitefmt_add(b, VIGIL_SITE_STORE, "first", "rt_probe_first.c", 3, 1, 4);
    vigil_sitefmt_add(b, VIGIL_SITE_BRANCH, "first", "rt_probe_first.c", 4, 1, 0);
    vigil_sitefmt_add(b, VIGIL_SITE_RETURN, "first", "rt_probe_first.c", 5, 1, 0);
    vigil_sitefmt_add(b, VIGIL_SITE_CALL, "first", "rt_probe_first.c", 6, 1, 0);
    give_table(&module3, b, 0x5eedull);
}

/* The dispatch check of common/abi.h; returns 1 when the code after it runs instrumented. */
static int dispatch(struct __vigil_module *m, uint32_t s)
{
    if (__vigil_burst_left != 0) {
        __atomic_store_n(&m->state[s].instr_execs,
                         __atomic_load_n(&m->state[s].instr_execs, __ATOMIC_RELAXED) + 1,
                         __ATOMIC_RELAXED);
        uint32_t b = __vigil_burst_left;
        if (b > 1) {
            __vigil_burst_left = b - 1;
            return 1;
        }
        return (int)__vigil_burst_end(m, s);
    }
    uint32_t *counter = (m->thread_counters ? m->thread_counters() : m->counters) + s;
    uint32_t c = __atomic_load_n(counter, __ATOMIC_RELAXED);
    if (c == 0)
        return (int)__vigil_dispatch_enter(m, s);
    __atomic_store_n(counter, c - 1, __ATOMIC_RELAXED);
    return 0;
}

static volatile int sink;

static void hot(int iterations)
{
    int instrumented = dispatch(&module, S_HOT_ENTRY);
    for (int i = 0; i < iterations; i++) {
        if (instrumented) {
            __vigil_probe_load(&module, S_LOAD, (const void *)&sink, 4);
            __vigil_probe_store(&module, S_STORE, (const void *)&sink, 4);
            __vigil_probe_branch(&module, S_BRANCH, i & 1);
            __vigil_probe_return(&module, S_RET, i);
            __vigil_probe_call(&module, S_CALL, (const void *)hot);
        }
        sink += i;
        instrumented = dispatch(&module, S_HOT_LOOP);
    }
}

static void rare(void)
{
    dispatch(&module, S_RARE);
}

__attribute__((constructor)) static void module_constructor(void)
{
    build_tables();
    if (!getenv("RT_LAZY"))
        __vigil_register_module(&module);
}

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t spin;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ready;

static void *worker(void *arg)
{
    (void)arg;
    hot(100000);
    pthread_mutex_lock(&mutex);                 /* lock + unlock */
    pthread_mutex_unlock(&mutex);
    pthread_rwlock_rdlock(&rwlock);             /* lock + unlock */
    pthread_rwlock_unlock(&rwlock);
    pthread_spin_lock(&spin);                   /* lock + unlock */
    pthread_spin_unlock(&spin);
    pthread_mutex_lock(&mutex);                 /* lock, (unlock + lock) per wait, unlock */
    while (!ready)
        pthread_cond_wait(&cond, &mutex);
    pthread_mutex_unlock(&mutex);
    void *p = malloc(10);
    free(p);
    return NULL;
}

__attribute__((noinline)) static void capture_in_callee(struct vigil_stack *st)
{
    vigil_capture_stack(st, VIGIL_MAX_STACK);
    __asm__ volatile("" ::: "memory");   /* not a tail call */
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "basic";
    if (strcmp(what, "basic") == 0) {
        atexit(rare);
        hot(argc > 2 ? atoi(argv[2]) : 1000000);
        for (int i = 0; i < 5; i++)
            rare();
        void *volatile p = malloc(100);   /* volatile: -O1 would drop the malloc-realloc-free */
        p = realloc(p, 200);
        free(p);
        char *s = strdup("x");
        free(s);
        void *q = calloc(3, 4);
        free(q);
        return 3;
    }
    if (strcmp(what, "threads") == 0) {
        pthread_spin_init(&spin, 0);
        pthread_t t[4];
        for (int i = 0; i < 4; i++)
            pthread_create(&t[i], NULL, worker, NULL);
        usleep(100000);
        pthread_mutex_lock(&mutex);
        ready = 1;
        pthread_cond_broadcast(&cond);
        pthread_mutex_unlock(&mutex);
        for (int i = 0; i < 4; i++)
            pthread_join(t[i], NULL);
        return 0;
    }
    if (strcmp(what, "fork") == 0) {
        hot(1000);
        pid_t pid = fork();
        if (pid == 0) {
            rare();
            rare();
            exit(5);
        }
        int status;
        waitpid(pid, &status, 0);
        return WIFEXITED(status) && WEXITSTATUS(status) == 5 ? 0 : 1;
    }
    if (strcmp(what, "segv") == 0) {
        rare();
        *(volatile int *)(uintptr_t)sink = 1;   /* sink is 0: a null store */
        return 0;
    }
    if (strcmp(what, "_exit") == 0) {
        rare();
        _exit(7);
    }
    if (strcmp(what, "flush") == 0) {
        rare();
        int r = vigil_flush_report();
        printf("flush %d\n", r);
        fflush(stdout);
        rare();
        return 0;
    }
    if (strcmp(what, "lazy") == 0) {
        dispatch(&module2, 0);
        dispatch(&module2, 0);
        rare();   /* module: registered lazily too when RT_LAZY is set */
        return 0;
    }
    if (strcmp(what, "probe-first") == 0) {
        rare();
        for (int i = 0; i < 3; i++) {
            __vigil_probe_load(&module3, S3_LOAD, (const void *)&sink, 4);
            __vigil_probe_store(&module3, S3_STORE, (const void *)&sink, 4);
            __vigil_probe_branch(&module3, S3_BRANCH, i & 1);
            __vigil_probe_return(&module3, S3_RET, i);
            __vigil_probe_call(&module3, S3_CALL, (const void *)rare);
        }
        printf("registered %d\n", __atomic_load_n(&module3.registered, __ATOMIC_ACQUIRE));
        return 0;
    }
    if (strcmp(what, "services") == 0) {
        rare();
        struct vigil_site_info info;
        for (uint32_t id = module.base_id; id < module.base_id + NSITES + 1; id++) {
            int r = vigil_site_lookup(id, &info);
            printf("site %u: %d %s %s %s:%u:%u\n", id - module.base_id, r, info.kind,
                   info.function, info.file, info.line, info.column);
        }
        struct vigil_stack st;
        capture_in_callee(&st);
        /* Innermost first: the return address into capture_in_callee, then into main. */
        int ok = st.depth >= 3 && st.pc[0] - (uintptr_t)capture_in_callee < 256 &&
                 st.pc[1] - (uintptr_t)main < 8192;
        printf("stack %d\n", ok);
        uint64_t t0 = vigil_now_ns();
        usleep(20000);
        uint64_t t1 = vigil_now_ns();
        printf("clock %d\n", t1 > t0 && t1 - t0 >= 20000000u && t1 - t0 < 2000000000u);
        return 0;
    }
    if (strcmp(what, "wait") == 0) {
        rare();
        printf("waiting\n");
        fflush(stdout);
        for (;;)
            pause();
    }
    fprintf(stderr, "unknown scenario %s\n", what);
    return 2;
}
