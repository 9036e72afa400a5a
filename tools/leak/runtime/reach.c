/* Reachability at exit: a conservative mark phase, as LeakSanitizer does, over the heap model.
 *
 * Roots: the writable PT_LOAD segments of every loaded object (dl_iterate_phdr: .data, .bss),
 * the objects the dynamic loader allocated (sites.c),
 * the calling thread's TLS blocks, its stack from the current frame up (the main thread's with
 * its argument and environment vectors, main_stack_top; its callee-saved
 * registers are spilled into that frame first), and the whole stack mapping of every other
 * thread seen starting (other threads keep running: their registers are not captured, and their
 * stack is read whole, dead frames included, which can only make objects look reachable).
 * Any aligned word that points into a live object (interior pointers count) marks it; marked
 * objects are scanned in turn. A second pass splits the unreachable objects, as LeakSanitizer
 * and Valgrind do: those another unreachable object points to are indirect leaks (the nodes of
 * a lost list), the others direct (its head), so a report leads to the pointer that was lost.
 *
 * Memory is read with process_vm_readv on our own pid, which fails cleanly on unmapped memory
 * (a racing free of a large block, an exited thread's stack) instead of faulting. */
#include "leak.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_THREADS 4096
#define CHUNK 65536
#define MAIN_STACK_GUESS (8u << 20)

/* Stacks of threads seen starting; a slot is in use while hi != 0. Written by the thread itself
 * (start, exit), read by the exit scan. */
struct thread_stack { _Atomic uintptr_t lo, hi; _Atomic(pthread_t) self; };
static struct thread_stack thread_stacks[MAX_THREADS];

extern void *__libc_stack_end __attribute__((weak));   /* glibc: main's frames end here */

/* The top of the main thread's stack, 0 when unknown. Above __libc_stack_end the kernel put
 * argc, argv[], envp[], the auxiliary vector and their strings: a program that sets argv[0] to
 * a copy on the heap (make) keeps it reachable only from there. The file name of AT_EXECFN is
 * the last string the kernel wrote, just below the top. */
static uintptr_t main_stack_top(void)
{
    if (!&__libc_stack_end || !__libc_stack_end)
        return 0;
    uintptr_t top = (uintptr_t)__libc_stack_end;
    const char *execfn = (const char *)getauxval(AT_EXECFN);
    if ((uintptr_t)execfn > top && (uintptr_t)execfn - top < MAIN_STACK_GUESS) {
        uintptr_t end = (uintptr_t)execfn + strlen(execfn) + 1;
        top = (end + sizeof(uintptr_t) - 1) & ~(uintptr_t)(sizeof(uintptr_t) - 1);
    }
    return top;
}

/* How far below its top the main thread's stack may reach: its size limit, when set and
 * larger than MAIN_STACK_GUESS (below the top's own address at most). */
static uintptr_t main_stack_size(uintptr_t top)
{
    struct rlimit limit;
    uintptr_t size = MAIN_STACK_GUESS;
    if (getrlimit(RLIMIT_STACK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur > size)
        size = (uintptr_t)limit.rlim_cur;
    return size < top ? size : top;
}

void leak_thread_started(void)
{
    pthread_attr_t attr;
    void *base;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return;
    int ok = pthread_attr_getstack(&attr, &base, &size) == 0;
    pthread_attr_destroy(&attr);
    if (!ok)
        return;
    for (int i = 0; i < MAX_THREADS; i++) {
        uintptr_t expected = 0;
        if (atomic_compare_exchange_strong(&thread_stacks[i].hi, &expected, (uintptr_t)base + size)) {
            atomic_store(&thread_stacks[i].lo, (uintptr_t)base);
            atomic_store(&thread_stacks[i].self, pthread_self());
            return;
        }
    }
}

void leak_thread_exited(void)
{
    pthread_t me = pthread_self();
    for (int i = 0; i < MAX_THREADS; i++)
        if (atomic_load(&thread_stacks[i].hi) && pthread_equal(atomic_load(&thread_stacks[i].self), me)) {
            atomic_store(&thread_stacks[i].lo, 0);
            atomic_store(&thread_stacks[i].hi, 0);
            return;
        }
}

/* ---- safe reads ---- */
static int direct_reads;   /* process_vm_readv refused (seccomp, old kernel): read in place */

static size_t safe_read(void *dst, uintptr_t src, size_t len)
{
    if (!direct_reads) {
        struct iovec local = { dst, len }, remote = { (void *)src, len };
        ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
        if (n >= 0)
            return (size_t)n;
        if (errno != ENOSYS && errno != EPERM)
            return 0;
        direct_reads = 1;
    }
    memcpy(dst, (const void *)src, len);
    return len;
}

/* ---- mark stack (mmap'd, grows by remapping into a bigger one) ---- */
struct mark_state {
    struct heap_obj **stack;
    size_t len, cap;
    unsigned char *buf;          /* CHUNK bytes of copied memory */
    struct leak_reach_stats *st;
    int overflow;                /* the mark stack could not grow: some marked objects went unscanned */
    uint32_t flag;               /* what a reached object gets: HEAP_FLAG_MARKED, or _INDIRECT */
    struct heap_obj *origin;     /* indirect pass: the object flooded from, never flagged itself */
};

static void push(struct mark_state *m, struct heap_obj *o)
{
    if (m->len == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 65536;
        struct heap_obj **bigger = heap_map(cap * sizeof *bigger);
        if (!bigger) {   /* o stays marked but unscanned: its children may look unreachable */
            m->overflow = 1;
            return;
        }
        if (m->stack) {
            memcpy(bigger, m->stack, m->len * sizeof *bigger);
            heap_unmap(m->stack, m->cap * sizeof *bigger);
        }
        m->stack = bigger;
        m->cap = cap;
    }
    m->stack[m->len++] = o;
}

/* Give o (its site_flags read as f) the pass's flag and queue it for scanning, unless it has
 * one already (or is the object the indirect pass floods from). */
static void mark(struct mark_state *m, struct heap_obj *o, uint32_t f)
{
    if ((f & (HEAP_FLAG_MARKED | HEAP_FLAG_INDIRECT)) || o == m->origin)
        return;
    atomic_store_explicit(&o->site_flags, f | m->flag, memory_order_relaxed);
    if (m->flag == HEAP_FLAG_MARKED)
        m->st->marked_objects++;
    else
        m->st->indirect_objects++;
    push(m, o);
}

static void consider(struct mark_state *m, uintptr_t word)
{
    if (!heap_maybe_contains(word))
        return;
    struct heap_obj *o = heap_find(word);
    if (o)
        mark(m, o, atomic_load_explicit(&o->site_flags, memory_order_relaxed));
}

/* Scan [lo, hi) for pointers, reading it through the bounce buffer. */
static uint64_t scan_range(struct mark_state *m, uintptr_t lo, uintptr_t hi)
{
    uint64_t scanned = 0;
    lo = (lo + sizeof(uintptr_t) - 1) & ~(uintptr_t)(sizeof(uintptr_t) - 1);
    while (lo + sizeof(uintptr_t) <= hi) {
        size_t want = hi - lo < CHUNK ? hi - lo : CHUNK;
        size_t got = safe_read(m->buf, lo, want);
        if (got == 0) {   /* unreadable: skip to the next page */
            lo = (lo + 4096) & ~(uintptr_t)4095;
            continue;
        }
        const uintptr_t *words = (const uintptr_t *)m->buf;
        for (size_t i = 0; i < got / sizeof(uintptr_t); i++)
            consider(m, words[i]);
        scanned += got;
        lo += got;
    }
    return scanned;
}

static void drain(struct mark_state *m)
{
    while (m->len) {
        struct heap_obj *o = m->stack[--m->len];
        uintptr_t a = atomic_load_explicit(&o->addr, memory_order_relaxed);
        uint64_t size = atomic_load_explicit(&o->size, memory_order_relaxed);
        if (a)
            m->st->heap_bytes_scanned += scan_range(m, a, a + size);
    }
}

static int scan_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct mark_state *m = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) {
            uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
            m->st->root_bytes += scan_range(m, lo, lo + ph->p_memsz);
        } else if (ph->p_type == PT_TLS && size >= offsetof(struct dl_phdr_info, dlpi_tls_data) + sizeof(void *) &&
                   info->dlpi_tls_data) {
            uintptr_t lo = (uintptr_t)info->dlpi_tls_data;
            m->st->root_bytes += scan_range(m, lo, lo + ph->p_memsz);
        }
    }
    return 0;
}

/* One walk over the heap before the scan: every mark cleared, and the dynamic loader's objects
 * (sites.c, from_loader) marked as roots. */
static void start_marking(struct heap_obj *o, void *arg)
{
    const uint32_t flags = HEAP_FLAG_MARKED | HEAP_FLAG_INDIRECT;
    uint32_t f = atomic_fetch_and_explicit(&o->site_flags, ~flags, memory_order_relaxed) & ~flags;
    if (leak_site_get(f & HEAP_SITE_MASK)->from_loader)
        mark(arg, o, f);
}

/* Callee-saved registers a function pushes below its frame pointer (x86-64: rbx, r12-r15). */
#define SAVED_REGISTERS_BYTES (6 * sizeof(uintptr_t))

/* Scans from its own frame up: it must not be inlined into a caller whose locals hold program
 * pointers we do not want to count, and it spills callee-saved registers into its frame. In
 * the final report the scan starts at the runtime's report frame instead (with the registers
 * it saved): the report writer's and the tools' frames reuse the stack the program used before
 * (4 KB path buffers), and what it left there made leaked lists look reachable.
 * [stack_lo, top) is the thread's stack. The report may run on another one: a signal handler on
 * an alternate stack that calls exit or _exit (gnulib's c-stack, m4), or a coroutine's stack.
 * From there up to the thread's stack top would be most of the address space (a scan of hours):
 * that stack is read from the frame to its end (the alternate stack's, else what fits in
 * MAIN_STACK_GUESS), and the thread's own stack whole, as another thread's. */
static __attribute__((noinline)) void scan_current_stack(struct mark_state *m, uintptr_t stack_lo, uintptr_t top)
{
    volatile uintptr_t here = 0;
    __builtin_unwind_init();
    uintptr_t lo = (uintptr_t)&here, report = (uintptr_t)vigil_report_frame();
    if (report > lo + SAVED_REGISTERS_BYTES && report - lo < MAIN_STACK_GUESS)
        lo = report - SAVED_REGISTERS_BYTES;
    if (lo >= stack_lo && lo < top) {
        m->st->root_bytes += scan_range(m, lo, top);
        return;
    }
    uintptr_t end = lo + MAIN_STACK_GUESS;
    stack_t alt;
    if (sigaltstack(NULL, &alt) == 0 && (alt.ss_flags & SS_ONSTACK) && lo >= (uintptr_t)alt.ss_sp &&
        lo < (uintptr_t)alt.ss_sp + alt.ss_size)
        end = (uintptr_t)alt.ss_sp + alt.ss_size;
    m->st->root_bytes += scan_range(m, lo, end);
    m->st->root_bytes += scan_range(m, stack_lo, top);
}

static void collect_unmarked(struct heap_obj *o, void *arg)
{
    if (!(atomic_load_explicit(&o->site_flags, memory_order_relaxed) & HEAP_FLAG_MARKED))
        push(arg, o);
}

/* After the mark: flood from each unmarked object that no earlier flood reached, flagging what
 * it reaches (itself excepted) indirect. An object a later flood reaches becomes indirect too,
 * whichever came first; of a cycle that nothing else holds, the first one visited stays direct.
 * The candidates are gathered first: a flood reads memory, which must not happen under the
 * model's shard locks that heap_foreach holds. Out of memory, some indirect objects stay direct. */
static void split_indirect(struct mark_state *m)
{
    struct mark_state candidates = { .st = m->st };
    heap_foreach(collect_unmarked, &candidates);
    m->flag = HEAP_FLAG_INDIRECT;
    for (size_t i = 0; i < candidates.len; i++) {
        struct heap_obj *o = candidates.stack[i];
        if (atomic_load_explicit(&o->site_flags, memory_order_relaxed) & HEAP_FLAG_INDIRECT)
            continue;
        m->origin = o;
        push(m, o);
        drain(m);
    }
    m->origin = NULL;
    if (candidates.stack)
        heap_unmap(candidates.stack, candidates.cap * sizeof *candidates.stack);
}

void leak_reach_run(struct leak_reach_stats *st)
{
    memset(st, 0, sizeof *st);
    struct mark_state m = { .st = st, .flag = HEAP_FLAG_MARKED };
    m.buf = heap_map(CHUNK);
    if (!m.buf) {
        st->error = "no memory for the scan buffer (mmap failed)";
        return;
    }
    heap_foreach(start_marking, &m);
    /* Every object in the model now was there before the roots are read: a candidate. The
     * snapshot takes the unmarked objects allocated up to scan_start_ms, the same
     * millisecond included (a short run's last leaks); later ones (a racing insert that read
     * the flag just before it was set) are left out. */
    heap_mark_new_objects();
    st->scan_start_ms = leak_now_ms();
    dl_iterate_phdr(scan_module, &m);
    drain(&m);

    /* This thread: from here up to its stack top. */
    int is_main = getpid() == gettid();
    uintptr_t my_top = 0, my_lo = 0;
    pthread_t me = pthread_self();
    for (int i = 0; i < MAX_THREADS; i++)
        if (atomic_load(&thread_stacks[i].hi) && pthread_equal(atomic_load(&thread_stacks[i].self), me)) {
            my_top = atomic_load(&thread_stacks[i].hi);
            my_lo = atomic_load(&thread_stacks[i].lo);
        }
    if (!my_top && is_main) {
        my_top = main_stack_top();
        my_lo = my_top - main_stack_size(my_top);
    }
    if (my_top)
        scan_current_stack(&m, my_lo, my_top);
    st->threads = 1;
    drain(&m);

    /* The main thread, when another thread is exiting: its whole stack, as far as it is mapped. */
    uintptr_t main_top = is_main ? 0 : main_stack_top();
    if (main_top) {
        uintptr_t top = main_top;
        st->root_bytes += scan_range(&m, top - MAIN_STACK_GUESS, top);
        st->threads++;
        drain(&m);
    }
    for (int i = 0; i < MAX_THREADS; i++) {
        uintptr_t hi = atomic_load(&thread_stacks[i].hi), lo = atomic_load(&thread_stacks[i].lo);
        if (!hi || !lo || pthread_equal(atomic_load(&thread_stacks[i].self), me))
            continue;
        st->root_bytes += scan_range(&m, lo, hi);
        st->threads++;
        drain(&m);
    }
    st->method = direct_reads ? "direct" : "process_vm_readv";
    /* An incomplete mark would turn reachable objects into definite leaks: no verdict instead. */
    if (m.overflow)
        st->error = "no memory for the mark stack (mmap failed): reachability left out";
    st->done = !m.overflow;
    if (st->done)
        split_indirect(&m);
    st->duration_ms = leak_now_ms() - st->scan_start_ms;
    heap_unmap(m.buf, CHUNK);
    heap_unmap(m.stack, m.cap * sizeof *m.stack);
}
