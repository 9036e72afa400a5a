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
 * The allocator's own bookkeeping never makes an object reachable. glibc's malloc keeps its
 * main arena in the C library's writable data: the top chunk's address (main_arena.top) and the
 * bins' free chunks are chunk headers, 16 bytes below a block's start, so they fall inside the
 * block just before (the last block carved from the top chunk, when its size is not a multiple
 * of 16, holds main_arena.top in its last bytes). So in the C library's and the dynamic loader's
 * own data and TLS a word counts only when it is an object's start: what they keep for the
 * program (stdio buffers and FILEs, the environment setenv built, atexit and on_exit records,
 * the strings of tzset or setlocale) is held by its start, and a chunk header is never one
 * (a block starts 16 bytes past its header, and no chunk is smaller than 32). Every other
 * module's data, the stacks and the heap keep interior pointers.
 *
 * Reading: only ranges /proc/self/maps shows mapped and readable. While the process has one
 * thread nothing can unmap them under the scan, which reads them in place; with other threads
 * (which may free and unmap a block the scan is reading), through process_vm_readv on our own
 * pid, which fails cleanly on unmapped memory, a batch of objects per call. Large objects are
 * read only where they were ever touched: pages /proc/self/pagemap shows neither present nor
 * swapped were never written and hold zeros (a compressor's untouched buffers). */
#include "leak.h"
#include "maps.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
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

/* ---- what may be read: the readable mappings of /proc/self/maps, read at the scan's start ---- */
struct range { uintptr_t lo, hi; };
struct readable {
    struct range *r;             /* sorted, adjacent ones merged; mmap'd */
    size_t n, cap;
    size_t last;                 /* the range the previous lookup found */
};

/* Parse /proc/self/maps (open and read: no stdio, no malloc). 0, or -1 when it cannot be read. */
static int readable_load(struct readable *rd, char *buf, size_t bufsize)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    rd->cap = 4096;
    rd->r = heap_map(rd->cap * sizeof *rd->r);
    rd->n = rd->last = 0;
    size_t have = 0;
    int rc = rd->r ? 0 : -1;
    for (int eof = 0; rc == 0 && (!eof || have);) {
        if (!eof) {
            ssize_t got = read(fd, buf + have, bufsize - 1 - have);
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0)
                eof = 1;
            else
                have += (size_t)got;
        }
        char *nl = memchr(buf, '\n', have);
        if (!nl && !eof && have < bufsize - 1)
            continue;
        size_t len = nl ? (size_t)(nl - buf) : have;
        buf[len] = '\0';
        uintptr_t lo = 0, hi = 0;
        int keep = leak_maps_line(buf, &lo, &hi);
        if (keep && rd->n && rd->r[rd->n - 1].hi == lo) {
            rd->r[rd->n - 1].hi = hi;
        } else if (keep) {
            if (rd->n == rd->cap) {
                struct range *bigger = heap_map(2 * rd->cap * sizeof *bigger);
                if (!bigger) {
                    rc = -1;
                    break;
                }
                memcpy(bigger, rd->r, rd->n * sizeof *bigger);
                heap_unmap(rd->r, rd->cap * sizeof *bigger);
                rd->r = bigger;
                rd->cap *= 2;
            }
            rd->r[rd->n++] = (struct range){lo, hi};
        }
        size_t used = nl ? len + 1 : have;   /* a line longer than the buffer: its start only */
        memmove(buf, buf + used, have - used);
        have -= used;
    }
    close(fd);
    return rc;
}

/* The first readable range ending above lo, or NULL. */
static const struct range *readable_from(struct readable *rd, uintptr_t lo)
{
    if (rd->last < rd->n && rd->r[rd->last].lo <= lo && lo < rd->r[rd->last].hi)
        return &rd->r[rd->last];
    size_t a = 0, b = rd->n;
    while (a < b) {
        size_t mid = (a + b) / 2;
        if (rd->r[mid].hi <= lo)
            a = mid + 1;
        else
            b = mid;
    }
    if (a == rd->n)
        return NULL;
    rd->last = a;
    return &rd->r[a];
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
    int direct;                  /* read memory in place (one thread), else process_vm_readv */
    int starts_only;             /* roots of the C library or the loader: object starts only */
    pid_t pid;
    int pagemap;                 /* /proc/self/pagemap, or -1 */
    struct readable rd;
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

static void scan_words(struct mark_state *m, const uintptr_t *words, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uintptr_t w = words[i];
        if (!heap_maybe_contains(w))
            continue;
        struct heap_obj *o = m->starts_only ? heap_find_exact(w) : heap_find(w);
        if (o)
            mark(m, o, atomic_load_explicit(&o->site_flags, memory_order_relaxed));
    }
}

/* Read [lo, hi) (word-aligned, inside one readable mapping) and scan it. */
static uint64_t scan_mapped(struct mark_state *m, uintptr_t lo, uintptr_t hi)
{
    if (m->direct) {
        scan_words(m, (const uintptr_t *)lo, (hi - lo) / sizeof(uintptr_t));
        return hi - lo;
    }
    uint64_t scanned = 0;
    while (lo + sizeof(uintptr_t) <= hi) {
        size_t want = hi - lo < CHUNK ? hi - lo : CHUNK;
        struct iovec local = {m->buf, want}, remote = {(void *)lo, want};
        ssize_t got = process_vm_readv(m->pid, &local, 1, &remote, 1, 0);
        if (got <= 0) {   /* unmapped since the maps were read: skip to the next page */
            lo = (lo + 4096) & ~(uintptr_t)4095;
            continue;
        }
        scan_words(m, (const uintptr_t *)m->buf, (size_t)got / sizeof(uintptr_t));
        scanned += (uint64_t)got;
        lo += (uintptr_t)got & ~(uintptr_t)(sizeof(uintptr_t) - 1);
    }
    return scanned;
}

/* Scan [lo, hi) for pointers: its readable parts. */
static uint64_t scan_range(struct mark_state *m, uintptr_t lo, uintptr_t hi)
{
    uint64_t scanned = 0;
    lo = (lo + sizeof(uintptr_t) - 1) & ~(uintptr_t)(sizeof(uintptr_t) - 1);
    hi &= ~(uintptr_t)(sizeof(uintptr_t) - 1);
    while (lo < hi) {
        const struct range *r = readable_from(&m->rd, lo);
        if (!r || r->lo >= hi)
            break;
        uintptr_t a = lo > r->lo ? lo : r->lo, b = hi < r->hi ? hi : r->hi;
        scanned += scan_mapped(m, a, b);
        lo = b;
    }
    return scanned;
}

/* A large heap object: only its pages the program ever touched (pagemap: present or swapped).
 * An anonymous page never written reads as zeros and holds no pointer. */
#define TOUCHED_MIN (64u << 10)
#define PAGEMAP_BATCH 512
static uint64_t scan_touched(struct mark_state *m, uintptr_t lo, uintptr_t hi)
{
    uint64_t scanned = 0;
    uintptr_t first = lo >> 12, last = (hi - 1) >> 12;
    uint64_t entries[PAGEMAP_BATCH];
    for (uintptr_t pn = first; pn <= last;) {
        size_t n = last - pn + 1 < PAGEMAP_BATCH ? last - pn + 1 : PAGEMAP_BATCH;
        ssize_t got = pread(m->pagemap, entries, n * sizeof entries[0], (off_t)(pn * sizeof entries[0]));
        if (got < (ssize_t)sizeof entries[0]) {   /* no answer: read the rest whole */
            uintptr_t from = pn << 12 > lo ? pn << 12 : lo;
            return scanned + scan_range(m, from, hi);
        }
        n = (size_t)got / sizeof entries[0];
        for (size_t i = 0; i < n;) {
            size_t j = i;
            int touched = (entries[i] >> 62) != 0;   /* bit 63 present, bit 62 swapped */
            while (j < n && ((entries[j] >> 62) != 0) == touched)
                j++;
            uintptr_t a = (pn + i) << 12, b = (pn + j) << 12;
            if (a < lo)
                a = lo;
            if (b > hi)
                b = hi;
            if (touched)
                scanned += scan_range(m, a, b);
            else
                m->st->untouched_bytes += b - a;
            i = j;
        }
        pn += n;
    }
    return scanned;
}

static void scan_object(struct mark_state *m, uintptr_t a, uint64_t size)
{
    if (size >= TOUCHED_MIN && m->pagemap >= 0)
        m->st->heap_bytes_scanned += scan_touched(m, a, a + size);
    else
        m->st->heap_bytes_scanned += scan_range(m, a, a + size);
}

/* With other threads: small objects read a batch per process_vm_readv call. */
#define BATCH 64
#define BATCH_OBJECT_MAX 4096
static void drain_batched(struct mark_state *m)
{
    while (m->len) {
        struct iovec local[BATCH], remote[BATCH];
        size_t k = 0, used = 0;
        while (m->len && k < BATCH) {
            struct heap_obj *o = m->stack[m->len - 1];
            uintptr_t a = atomic_load_explicit(&o->addr, memory_order_relaxed);
            uint64_t size = atomic_load_explicit(&o->size, memory_order_relaxed) & ~(uint64_t)(sizeof(uintptr_t) - 1);
            if (size > BATCH_OBJECT_MAX) {
                if (k)
                    break;   /* the batch first */
                m->len--;
                if (a)
                    scan_object(m, a, size);
                continue;
            }
            if (used + size > CHUNK)
                break;
            m->len--;
            const struct range *r = a && size ? readable_from(&m->rd, a) : NULL;
            if (!r || r->lo > a || r->hi < a + size)
                continue;   /* freed and gone, or never readable */
            local[k] = (struct iovec){m->buf + used, size};
            remote[k] = (struct iovec){(void *)a, size};
            k++;
            used += size;
        }
        if (!k)
            continue;
        ssize_t got = process_vm_readv(m->pid, local, k, remote, k, 0);
        size_t done = got > 0 ? (size_t)got : 0;
        for (size_t i = 0; i < k; i++) {
            size_t len = local[i].iov_len;
            if (done >= len) {   /* copied whole */
                scan_words(m, local[i].iov_base, len / sizeof(uintptr_t));
                m->st->heap_bytes_scanned += len;
                done -= len;
            } else {             /* the read stopped in or before it: this one and the rest alone */
                done = 0;
                m->st->heap_bytes_scanned += scan_mapped(m, (uintptr_t)remote[i].iov_base,
                                                         (uintptr_t)remote[i].iov_base + len);
            }
        }
    }
}

static void drain(struct mark_state *m)
{
    if (!m->direct) {
        drain_batched(m);
        return;
    }
    while (m->len) {
        struct heap_obj *o = m->stack[--m->len];
        uintptr_t a = atomic_load_explicit(&o->addr, memory_order_relaxed);
        uint64_t size = atomic_load_explicit(&o->size, memory_order_relaxed);
        if (a)
            scan_object(m, a, size);
    }
}

/* The C library (the object holding __libc_malloc) and the dynamic loader (AT_BASE). */
extern void *__libc_malloc(size_t);
static int allocator_module(const struct dl_phdr_info *info)
{
    uintptr_t base = (uintptr_t)getauxval(AT_BASE), probe = (uintptr_t)&__libc_malloc;
    if (base && info->dlpi_addr == base)
        return 1;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && probe >= lo && probe < lo + ph->p_memsz)
            return 1;
    }
    return 0;
}

static int scan_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct mark_state *m = arg;
    m->starts_only = allocator_module(info);
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
    m->starts_only = 0;
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
#define INTERRUPTED_REGISTERS_MAX 32   /* room for the interrupted code's general registers */

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
    /* A report a signal asked for: the interrupted code's registers, then its stack from its red
     * zone up, not the signal frame's saved vector registers below it. */
    uintptr_t interrupted[INTERRUPTED_REGISTERS_MAX];
    size_t nregs = vigil_report_registers(interrupted, INTERRUPTED_REGISTERS_MAX);
    scan_words(m, interrupted, nregs);
    uintptr_t saved = nregs ? 0 : SAVED_REGISTERS_BYTES;
    if (report > lo + saved && report - lo < MAIN_STACK_GUESS)
        lo = report - saved;
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
    if (readable_load(&m.rd, (char *)m.buf, CHUNK) != 0) {
        st->error = "cannot read /proc/self/maps";
        heap_unmap(m.buf, CHUNK);
        heap_unmap(m.rd.r, m.rd.cap * sizeof *m.rd.r);
        return;
    }
    /* One thread: nothing unmaps memory under the scan. Else process_vm_readv, when the kernel
     * lets us (seccomp may refuse it: then in place too). */
    m.pid = getpid();
    m.direct = heap_one_thread();
    if (!m.direct) {
        uintptr_t probe = 0, copy = 0;
        struct iovec local = {&copy, sizeof copy}, remote = {&probe, sizeof probe};
        if (process_vm_readv(m.pid, &local, 1, &remote, 1, 0) < 0 && (errno == ENOSYS || errno == EPERM))
            m.direct = 1;
    }
    m.pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (m.pagemap >= 0) {   /* it must see a page just written as present (sandboxes may not) */
        uint64_t entry = 0;
        m.buf[0] = 1;
        if (pread(m.pagemap, &entry, sizeof entry, (off_t)(((uintptr_t)m.buf >> 12) * sizeof entry)) != sizeof entry ||
            !(entry >> 63)) {
            close(m.pagemap);
            m.pagemap = -1;
        }
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
    st->method = m.direct ? "direct" : "process_vm_readv";
    /* An incomplete mark would turn reachable objects into definite leaks: no verdict instead. */
    if (m.overflow)
        st->error = "no memory for the mark stack (mmap failed): reachability left out";
    st->done = !m.overflow;
    if (st->done)
        split_indirect(&m);
    st->duration_ms = leak_now_ms() - st->scan_start_ms;
    heap_unmap(m.buf, CHUNK);
    heap_unmap(m.stack, m.cap * sizeof *m.stack);
    heap_unmap(m.rd.r, m.rd.cap * sizeof *m.rd.r);
    if (m.pagemap >= 0)
        close(m.pagemap);
}
