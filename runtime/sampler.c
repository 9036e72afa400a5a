/* The dispatch slow paths (code shape in common/abi.h). Only reached when a check's countdown
 * hits zero or a burst runs out; the fast paths are inline in the emitted code. */
#include "internal.h"

#include <pthread.h>
#include <sched.h>

/* Dispatch checks left in this thread's burst, 0 = not in a burst. Written by this thread
 * only: the emitted code counts it down, __vigil_dispatch_enter / __vigil_burst_end set it. */
__thread uint32_t __vigil_burst_left __attribute__((tls_model("initial-exec")));

/* Full mode keeps a thread in the instrumented copy: a burst this long is re-armed at its end. */
#define FULL_BURST UINT32_MAX

/* True when the runtime pinned the function of dispatch site d to its instrumented copy. */
static inline int is_pinned(const struct __vigil_module *m, uint32_t d)
{
    return m->pred_enable && d < m->ndispatch &&
           (RELAXED_LOAD(&m->pred_enable[m->dispatch_sites[d] & VIGIL_DISPATCH_SITE]) & VIGIL_PRED_PINNED);
}

/* A refused module's checks stay cold: its countdown parked at the largest value. Only the
 * fields of its own ABI are read: before ABI 6 its counters were per site, before 7 shared. */
static void park_refused(struct __vigil_module *m, uint32_t d)
{
    uint32_t *counters = NULL, n = 0;
    if (m->abi_version == VIGIL_ABI_VERSION) {
        counters = __vigil_counters_here(m);
        n = m->ndispatch;
    } else if (m->abi_version < VIGIL_ABI_VERSION) {
        counters = m->counters;
        n = m->abi_version < 6 ? m->nsites : m->ndispatch;
    }
    if (counters && d < n)
        RELAXED_STORE(&counters[d], VIGIL_COUNTER_MAX);
}

/* Thread-local counters: at a thread's exit the executions its countdowns stand for go into the
 * sites' state (__vigil_counters_fold_thread), through a key destructor set on the thread's
 * first slow path. The key is made once, by the first thread to arm (not with pthread_once:
 * the runtime interposes it, and the tools would see the runtime's own call as the program's). */
static pthread_key_t counts_key;   /* written by make_counts_key, then read */
static int counts_key_state;       /* 0: not made, 1: being made, 2: made, 3: failed */

/* The armed threads, so that a report reads the countdowns of those still running. A thread
 * joins at arming and leaves at its exit fold; both take the lock, as does the report. */
static int counts_threads_lock;
static struct vigil_thread *counts_threads;   /* head; written under counts_threads_lock */

static inline void counts_lock(void)
{
    while (__atomic_exchange_n(&counts_threads_lock, 1, __ATOMIC_ACQUIRE))
        sched_yield();
}
static inline void counts_unlock(void)
{
    __atomic_store_n(&counts_threads_lock, 0, __ATOMIC_RELEASE);
}

static void fold_at_exit(void *unused)
{
    (void)unused;
    struct vigil_thread *th = &__vigil_thread;
    counts_lock();   /* a report reading this thread's countdowns finishes first */
    __vigil_counters_fold_thread();
    if (th->counts_prev)
        th->counts_prev->counts_next = th->counts_next;
    else
        counts_threads = th->counts_next;
    if (th->counts_next)
        th->counts_next->counts_prev = th->counts_prev;
    th->counts_next = th->counts_prev = NULL;
    counts_unlock();
}

/* Whether the key exists, made by the first caller (the others wait the few instructions). */
static int counts_key_made(void)
{
    int state = __atomic_load_n(&counts_key_state, __ATOMIC_ACQUIRE), expected = 0;
    if (state == 0 && __atomic_compare_exchange_n(&counts_key_state, &expected, 1, 0, __ATOMIC_ACQUIRE,
                                                  __ATOMIC_RELAXED)) {
        state = pthread_key_create(&counts_key, fold_at_exit) == 0 ? 2 : 3;
        __atomic_store_n(&counts_key_state, state, __ATOMIC_RELEASE);
    }
    while (state < 2)
        state = __atomic_load_n(&counts_key_state, __ATOMIC_ACQUIRE);
    return state == 2;
}

static void arm_thread_fold(struct vigil_thread *th)
{
    th->counts_fold_armed = 1;
    if (!counts_key_made() || pthread_setspecific(counts_key, (void *)1) != 0)
        return;   /* not listed: nothing would take it off the list at its exit */
    counts_lock();
    th->counts_prev = NULL;
    th->counts_next = counts_threads;
    if (counts_threads)
        counts_threads->counts_prev = th;
    counts_threads = th;
    counts_unlock();
}

int __vigil_counters_others_begin(void)
{
    for (int tries = 0; tries < 1000; tries++) {   /* bounded: the holder may be this thread */
        if (!__atomic_exchange_n(&counts_threads_lock, 1, __ATOMIC_ACQUIRE))
            return 1;
        sched_yield();
    }
    return 0;
}

void __vigil_counters_others_end(void)
{
    counts_unlock();
}

/* Another thread's copy of m's countdowns: static TLS keeps the same distance between a
 * module's countdowns and the runtime's per-thread state in every thread. */
uint64_t __vigil_counters_pending_others(const struct __vigil_module *m, uint32_t d)
{
    if (!m->thread_counters)
        return 0;
    struct vigil_thread *self = &__vigil_thread;
    ptrdiff_t distance = (char *)m->thread_counters() - (char *)self;
    uint64_t pending = 0;
    for (struct vigil_thread *th = counts_threads; th; th = th->counts_next) {
        if (th == self)
            continue;
        const uint32_t *counters = (const uint32_t *)((char *)th + distance);
        pending += vigil_schedule_pending(RELAXED_LOAD(&counters[m->ndispatch + d]), RELAXED_LOAD(&counters[d]));
    }
    return pending;
}

void __vigil_counters_after_fork(void)
{
    struct vigil_thread *th = &__vigil_thread;
    counts_threads_lock = 0;
    counts_threads = th->counts_fold_armed && counts_key_state == 2 ? th : NULL;
    th->counts_next = th->counts_prev = NULL;
}

uint32_t __vigil_dispatch_enter(struct __vigil_module *m, uint32_t d)
{
    if (unlikely(!__vigil_ensure_registered(m)) || unlikely(d >= m->ndispatch)) {
        park_refused(m, d);
        return 0;
    }
    uint32_t *counters = __vigil_counters_here(m), *started = counters + m->ndispatch;
    if (m->thread_counters) {
        struct vigil_thread *th = &__vigil_thread;
        if (unlikely(!th->counts_fold_armed))
            arm_thread_fold(th);
    }
    if (is_pinned(m, d)) {
        RELAXED_STORE(&counters[d], 0);   /* pinned (common/abi.h): every entry comes here */
        RELAXED_STORE(&started[d], 0);
        return 1;
    }
    const struct vigil_schedule *s = &__vigil_sched;
    struct __vigil_site_state *st = &m->state[d];
    uint32_t ncheck0 = vigil_schedule_reset(s, st, RELAXED_LOAD(&started[d]));
    RELAXED_STORE(&counters[d], ncheck0);
    RELAXED_STORE(&started[d], ncheck0);
    if (s->mode == VIGIL_MODE_OFF)
        return 0;
    __atomic_fetch_add(&st->bursts, 1, __ATOMIC_RELAXED);
    __vigil_burst_left = s->mode == VIGIL_MODE_FULL ? FULL_BURST : s->ninstr;
    return 1;
}

void __vigil_counters_fold_thread(void)
{
    for (struct vigil_module_node *n = __vigil_modules(); n; n = __atomic_load_n(&n->next, __ATOMIC_ACQUIRE)) {
        struct __vigil_module *m = n->m;
        if (RELAXED_LOAD(&n->unloaded) || !m->thread_counters)
            continue;
        uint32_t *counters = m->thread_counters(), *started = counters + m->ndispatch;
        for (uint32_t d = 0; d < m->ndispatch; d++) {
            uint32_t pending = vigil_schedule_pending(started[d], counters[d]);
            if (pending)
                __atomic_fetch_add(&m->state[d].check_execs, pending, __ATOMIC_RELAXED);
            started[d] = counters[d];   /* counted: a second fold adds nothing */
        }
    }
}

/* A burst ends at check d. A pinned function stays in its instrumented copy all the same (a
 * burst begun elsewhere may end inside it): leaving would run its checking copy, which has no
 * predicate counters, until its next check. */
uint32_t __vigil_burst_end(struct __vigil_module *m, uint32_t d)
{
    __vigil_deliver_accesses();
    if (__vigil_sched.mode == VIGIL_MODE_FULL) {
        __vigil_burst_left = FULL_BURST;
        return 1;
    }
    __vigil_burst_left = 0;
    return is_pinned(m, d);
}

#if defined(__x86_64__)
/* x86-64 entries for emitted code (common/abi.h): every general-purpose register but rax and
 * r11 is kept (the caller-saved ones are saved here around the C code they call), so the
 * caller's argument registers stay where they are, a leaf stays a leaf, and values live across
 * the call need no callee-saved register. The caller has stepped over its red zone; the stack
 * is aligned here because a call from inline asm may come at any alignment. `call` moves the
 * inputs (rax, r11) into C arguments and makes the call. */
#define VIGIL_X86_KEEPING_ENTRY(entry, call)                                       \
    __asm__(".text\n"                                                              \
            ".globl " #entry "\n"                                                   \
            ".type " #entry ",@function\n"                                          \
            ".p2align 4\n" #entry ":\n"                                            \
            "    .cfi_startproc\n"                                                 \
            "    pushq %rbp\n"                                                     \
            "    .cfi_def_cfa_offset 16\n"                                         \
            "    .cfi_offset %rbp, -16\n"                                          \
            "    movq %rsp, %rbp\n"                                                \
            "    .cfi_def_cfa_register %rbp\n"                                     \
            "    pushq %rdi\n"                                                     \
            "    pushq %rsi\n"                                                     \
            "    pushq %rdx\n"                                                     \
            "    pushq %rcx\n"                                                     \
            "    pushq %r8\n"                                                      \
            "    pushq %r9\n"                                                      \
            "    pushq %r10\n"                                                     \
            "    andq $-16, %rsp\n"                                                \
            call                                                                   \
            "    movq -56(%rbp), %r10\n"                                           \
            "    movq -48(%rbp), %r9\n"                                            \
            "    movq -40(%rbp), %r8\n"                                            \
            "    movq -32(%rbp), %rcx\n"                                           \
            "    movq -24(%rbp), %rdx\n"                                           \
            "    movq -16(%rbp), %rsi\n"                                           \
            "    movq -8(%rbp), %rdi\n"                                            \
            "    movq %rbp, %rsp\n"                                                \
            "    popq %rbp\n"                                                      \
            "    .cfi_def_cfa %rsp, 8\n"                                           \
            "    ret\n"                                                            \
            ".globl " #entry "_end\n"                                               \
            ".hidden " #entry "_end\n"                                              \
            #entry "_end:\n"                                                        \
            "    .cfi_endproc\n"                                                   \
            ".size " #entry ", .-" #entry "\n")
/* The slow paths: module in r11, site in eax, the answer in eax. */
#define VIGIL_X86_SLOW_CALL(target) "    movq %r11, %rdi\n    movl %eax, %esi\n    call " #target "\n"
VIGIL_X86_KEEPING_ENTRY(__vigil_dispatch_enter_x86, VIGIL_X86_SLOW_CALL(__vigil_dispatch_enter));
VIGIL_X86_KEEPING_ENTRY(__vigil_burst_end_x86, VIGIL_X86_SLOW_CALL(__vigil_burst_end));
/* A transfer into an outlined instrumented copy (compiler/transfer.c): r11 is the function to
 * call, rax its one argument (the transfer frame); no answer. */
VIGIL_X86_KEEPING_ENTRY(__vigil_call_keeping_registers_x86, "    movq %rax, %rdi\n    call *%r11\n");
#endif
