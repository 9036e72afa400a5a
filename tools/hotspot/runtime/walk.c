/* The hot-spot walker (seed 003; tools/hotspot/README.md, "The walk").
 *
 * Entries. vigil-cc's compiler part (tools/hotspot/compiler/entries.c) puts a 5-byte nop at the
 * entry of the functions it may hook and lists them in each module's
 * __patchable_function_entries section. At init and at each thread start the loaded modules
 * are read (dl_iterate_phdr; the section found in the file, its relocated contents read in
 * memory through the PT_LOAD that holds it), each module's entries sorted, each entry's end
 * taken from its function's symbol (.symtab) so that a return address is named only by the
 * function that holds it, and "main" noted.
 *
 * Hooks. A hook makes an entry's nop `call stub`, the stub a `jmp *` to the entry trampoline,
 * mapped within 2 GiB of its module (a shared library may lie farther than a rel32 from the
 * runtime). The 5 bytes are written with one aligned 8-byte store (patchbytes.h), the page made
 * writable around it and every thread's instruction stream serialized after it
 * (membarrier SYNC_CORE where the kernel has it): a thread that fetches the entry meanwhile
 * runs either the whole nop or the whole call, so no int3 and no SIGTRAP handler are needed.
 * An entry across two words (after endbr64) is written in three steps behind a 2-byte jump
 * over the rest (patchbytes.h, hs_entry_steps).
 * Removing a hook writes the nop back the same way. Hooks are made and removed by the walk's
 * step only (one thread at a time: a trylock).
 *
 * The entry trampoline saves the argument registers and calls on_entry with the return
 * address's slot: the call is counted with its caller (the return address), and while the
 * level has calls left to measure, the return address is replaced by the exit trampoline's and
 * kept on the thread's shadow stack (shadow.h) with the time (CLOCK_MONOTONIC) and the TSC.
 * The exit trampoline keeps the return value registers, pops the entry (one whose frame ended
 * without returning, a longjmp, is dropped), adds the call's time to the level and jumps to the
 * real return address. A recursive call of a measured function is counted, not measured (the
 * outermost call's time includes it); a tail call from a measured function is not measured.
 *
 * The walk. After each sample the signal handler calls hs_walk_step: at most every 5 ms, one
 * thread (trylock) chooses the hot spots once hotspot.walk_samples samples exist (the
 * innermost hookable function of each sampled stack, self samples over walk_share percent, or
 * the top one) and hooks them; a level that measured walk_calls calls (or saw none for
 * walk_timeout_ms) moves up: its callers, named from their return addresses, are counted per
 * function, the top one (not itself) is hooked as the next level and the old hook removed. A
 * walk ends at main, where the callers have no patchable entry (a thread's start routine, a
 * callback from libc, code not built by vigil-cc), when the top caller's share is under
 * walk_min_share percent, when its caller is another walk's, or after HS_WALK_LEVELS levels. */

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <linux/membarrier.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "elfsection.h"
#include "hsint.h"
#include "json.h"
#include "loadmap.h"
#include "patchbytes.h"
#include "shadow.h"
#include "walk.h"

#define HS_MODULES 64
#define HS_HOOKS 64
#define HS_LEVELS 512
#define HS_WALKS 16
#define HS_WALK_LEVELS 32
#define HS_CALLERS 16
#define HS_SCRATCH 4096
#define HS_ALIASES_PER_ENTRY 4     /* <name>.vigil.instr, .vigil.xfer, .vigil.b, .cold */
#define STEP_NS 5000000ull

/* Another part of a function that has an entry (its outlined instrumented copy, a cold part). */
struct hs_alias {
    uintptr_t lo, hi, entry;
};

struct hs_module {
    uintptr_t lo, hi;             /* its executable segments' span */
    uintptr_t bias;
    uintptr_t *entries;           /* sorted runtime addresses (mapped) */
    uint32_t *sizes;              /* the function's size from .symtab (0: unknown) */
    uint64_t *hashes;             /* its name's hash (0: unknown) */
    struct hs_alias *aliases;     /* sorted by address; at most HS_ALIASES_PER_ENTRY * n */
    uint32_t naliases;
    uint32_t n;
    uintptr_t main_entry;         /* "main"'s entry, or 0 */
    uintptr_t stub;               /* the jump to the entry trampoline, within 2 GiB; 0: none */
    char path[256];
};
/* Written by hs_walk_init and hs_walk_thread_start (under modules_lock), each module published
 * by the release store of nmodules; read by the step and the report. */
static struct hs_module modules[HS_MODULES];
static uint32_t nmodules;
static int modules_lock;

struct hs_caller {
    uintptr_t site;               /* return address (0: free slot) */
    uint64_t count;
};

/* One function measured as one level of a walk. Claimed by the step; its counters are
 * updated by the hooks of every thread (atomics). Never reused. */
struct hs_level {
    uintptr_t entry;
    uint32_t walk, depth;
    uint64_t start_ns, end_ns;    /* hooked, unhooked (0: still hooked) */
    uint64_t calls;               /* entries seen while hooked */
    uint64_t claimed;             /* calls that claimed a measurement */
    uint64_t measured, wall_ns, cycles, wall_max_ns;
    uint64_t recursive, tail, unmeasured;
    struct hs_caller callers[HS_CALLERS];
    uint64_t callers_other;
};
static struct hs_level levels[HS_LEVELS];
static uint32_t nlevels;          /* claimed by the step */

struct hs_walk {
    uintptr_t hot;                /* the hot spot's entry */
    uint64_t hot_samples, total_samples;
    uint32_t level[HS_WALK_LEVELS], nlevel;
    int active;
    char end[160];
};
static struct hs_walk walks[HS_WALKS];   /* written by the step, read by the report */
static uint32_t nwalks;

struct hs_hook {
    uintptr_t entry;              /* 0: free; published after level */
    struct hs_level *level;
};
static struct hs_hook hooks[HS_HOOKS];   /* written by the step, read by the trampolines */
static uint32_t hooks_used;              /* high-water mark of hooks[] in use */

/* A hook event for the trace: a measured call (complete event). */
struct hs_event {
    uint64_t start_ns, dur_ns;
    uint32_t level, pad;
};
struct hs_wrec {
    int32_t tid;
    uint32_t n, cap;              /* events written (release), room */
    uint64_t lost;
    struct hs_event *ev;
};
static struct hs_wrec wrecs[HS_MAX_RECS];
static uint32_t nwrecs;

struct hs_wself {
    struct hs_shadow sh;
    uintptr_t lo, hi;             /* the thread's stack (0, 0: unknown) */
    struct hs_wrec *rec;
};
static __thread struct hs_wself wself;

static struct hs_walk_options wo;        /* written by init */
static int step_lock;                    /* the step's trylock */
static uint64_t last_step_ns;            /* under step_lock */
static int chosen;                       /* hot spots chosen (under step_lock) */
static volatile int walking;             /* the walk runs (toggled by the walk signal, under step_lock) */
static int toggle_pending;               /* the walk signal came (atomic): the next step toggles */
static volatile int ended_walk;          /* set by hs_walk_end: no more steps */
static int report_wanted;                /* set by the step when walks stopped or all ended (atomic);
                                            taken by hs_walk_report_wanted */
static __thread int in_step;             /* this thread holds step_lock (a handler interrupted it) */
static int sync_core;                    /* membarrier SYNC_CORE registered */
static long page_size;
static char instructions_why[160];       /* why instructions are not measured */
/* Counters, atomics: hooks made, removed, refused (and the last reason); shadow-stack entries
 * dropped (their frame ended without returning: longjmp). */
static uint64_t n_hooked, n_unhooked, n_refused, n_dropped;
static char refused_why[200];

extern char __vigil_hs_entry_tramp[], __vigil_hs_exit_tramp[];

/* ---- trampolines ---- */

__asm__(".text\n"
        ".p2align 4\n"
        ".globl __vigil_hs_entry_tramp\n"
        ".hidden __vigil_hs_entry_tramp\n"
        ".type __vigil_hs_entry_tramp,@function\n"
        "__vigil_hs_entry_tramp:\n"
        "  pushq %rbp\n"
        "  movq %rsp, %rbp\n"
        "  pushq %rax\n  pushq %rdi\n  pushq %rsi\n  pushq %rdx\n  pushq %rcx\n"
        "  pushq %r8\n  pushq %r9\n  pushq %r10\n  pushq %r11\n"
        "  subq $128, %rsp\n"
        "  movdqu %xmm0, 0(%rsp)\n  movdqu %xmm1, 16(%rsp)\n  movdqu %xmm2, 32(%rsp)\n  movdqu %xmm3, 48(%rsp)\n"
        "  movdqu %xmm4, 64(%rsp)\n  movdqu %xmm5, 80(%rsp)\n  movdqu %xmm6, 96(%rsp)\n  movdqu %xmm7, 112(%rsp)\n"
        "  movq 8(%rbp), %rdi\n"        /* the entry + 5 */
        "  leaq 16(%rbp), %rsi\n"       /* the slot of the function's return address */
        "  call hs_on_entry\n"
        "  movdqu 0(%rsp), %xmm0\n  movdqu 16(%rsp), %xmm1\n  movdqu 32(%rsp), %xmm2\n  movdqu 48(%rsp), %xmm3\n"
        "  movdqu 64(%rsp), %xmm4\n  movdqu 80(%rsp), %xmm5\n  movdqu 96(%rsp), %xmm6\n  movdqu 112(%rsp), %xmm7\n"
        "  addq $128, %rsp\n"
        "  popq %r11\n  popq %r10\n  popq %r9\n  popq %r8\n  popq %rcx\n  popq %rdx\n  popq %rsi\n  popq %rdi\n  popq %rax\n"
        "  popq %rbp\n"
        "  ret\n"
        ".size __vigil_hs_entry_tramp, .-__vigil_hs_entry_tramp\n"
        ".p2align 4\n"
        ".globl __vigil_hs_exit_tramp\n"
        ".hidden __vigil_hs_exit_tramp\n"
        ".type __vigil_hs_exit_tramp,@function\n"
        "__vigil_hs_exit_tramp:\n"
        "  pushq %rax\n  pushq %rdx\n"
        "  subq $32, %rsp\n"
        "  movdqu %xmm0, 0(%rsp)\n  movdqu %xmm1, 16(%rsp)\n"
        "  leaq 48(%rsp), %rdi\n"       /* the stack pointer after the function's ret */
        "  call hs_on_exit\n"
        "  movq %rax, %r11\n"
        "  movdqu 0(%rsp), %xmm0\n  movdqu 16(%rsp), %xmm1\n"
        "  addq $32, %rsp\n"
        "  popq %rdx\n  popq %rax\n"
        "  jmp *%r11\n"
        ".size __vigil_hs_exit_tramp, .-__vigil_hs_exit_tramp\n");

static uint64_t now_ns(void)
{
    return hs_mono_ns();
}

static struct hs_level *hook_of(uintptr_t entry)
{
    uint32_t n = __atomic_load_n(&hooks_used, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++)
        if (__atomic_load_n(&hooks[i].entry, __ATOMIC_ACQUIRE) == entry)
            return __atomic_load_n(&hooks[i].level, __ATOMIC_ACQUIRE);
    return NULL;
}

static void count_caller(struct hs_level *l, uintptr_t site)
{
    for (int i = 0; i < HS_CALLERS; i++) {
        uintptr_t s = __atomic_load_n(&l->callers[i].site, __ATOMIC_ACQUIRE);
        if (s == 0) {
            uintptr_t zero = 0;
            if (__atomic_compare_exchange_n(&l->callers[i].site, &zero, site, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                s = site;
            else
                s = zero;
        }
        if (s == site) {
            __atomic_add_fetch(&l->callers[i].count, 1, __ATOMIC_RELAXED);
            return;
        }
    }
    __atomic_add_fetch(&l->callers_other, 1, __ATOMIC_RELAXED);
}

__attribute__((used)) static void hs_on_entry(uintptr_t after, uintptr_t *slot)
{
    int saved = errno;
    struct hs_level *l = hook_of(after - HS_ENTRY_BYTES);
    if (!l) {   /* the hook was removed while this call was on its way */
        errno = saved;
        return;
    }
    struct hs_wself *w = &wself;
    uintptr_t ret = *slot, at = (uintptr_t)slot;
    int tail = ret == (uintptr_t)__vigil_hs_exit_tramp;
    /* A tail call from a measured function: its slot holds the exit trampoline; the caller is
     * the one that function returns to. */
    uintptr_t caller = ret;
    if (tail) {
        caller = 0;
        for (uint32_t i = w->sh.n; i-- > 0;)
            if (w->sh.e[i].slot == at) {
                caller = w->sh.e[i].ret;
                break;
            }
    }
    __atomic_add_fetch(&l->calls, 1, __ATOMIC_RELAXED);
    if (caller)
        count_caller(l, caller);
    uint64_t dropped = w->sh.dropped;
    hs_shadow_prune(&w->sh, tail ? at - 1 : at, w->lo, w->hi);
    if (w->sh.dropped != dropped)
        __atomic_add_fetch(&n_dropped, w->sh.dropped - dropped, __ATOMIC_RELAXED);
    if (tail) {
        __atomic_add_fetch(&l->tail, 1, __ATOMIC_RELAXED);
    } else if (hs_shadow_holds(&w->sh, l)) {
        __atomic_add_fetch(&l->recursive, 1, __ATOMIC_RELAXED);
    } else if (__atomic_fetch_add(&l->claimed, 1, __ATOMIC_RELAXED) < wo.calls) {
        struct hs_shadow_entry e = {ret, at, l, now_ns(), __rdtsc()};
        if (hs_shadow_push(&w->sh, &e) == 0)
            *slot = (uintptr_t)__vigil_hs_exit_tramp;
        else
            __atomic_add_fetch(&l->unmeasured, 1, __ATOMIC_RELAXED);
    }
    errno = saved;
}

__attribute__((used)) static uintptr_t hs_on_exit(uintptr_t sp)
{
    uint64_t tsc = __rdtsc(), t = now_ns();
    int saved = errno;
    struct hs_wself *w = &wself;
    struct hs_shadow_entry e;
    uint64_t dropped = w->sh.dropped;
    if (hs_shadow_pop(&w->sh, sp - sizeof(uintptr_t), &e) != 0) {
        /* Only a replaced return address leads here, and its entry is kept until its frame is
         * shown dead: this cannot happen unless the stack was corrupted. */
        static const char msg[] = "vigil: hotspot: a measured function returned without its shadow-stack entry; "
                                  "cannot continue\n";
        ssize_t unused = write(2, msg, sizeof msg - 1);
        (void)unused;
        abort();
    }
    struct hs_level *l = e.what;
    if (w->sh.dropped != dropped)
        __atomic_add_fetch(&n_dropped, w->sh.dropped - dropped, __ATOMIC_RELAXED);
    uint64_t dt = t - e.t0_ns;
    __atomic_add_fetch(&l->measured, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&l->wall_ns, dt, __ATOMIC_RELAXED);
    __atomic_add_fetch(&l->cycles, tsc - e.tsc0, __ATOMIC_RELAXED);
    uint64_t max = __atomic_load_n(&l->wall_max_ns, __ATOMIC_RELAXED);
    while (dt > max && !__atomic_compare_exchange_n(&l->wall_max_ns, &max, dt, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
    struct hs_wrec *r = w->rec;
    if (r) {
        if (r->n < r->cap) {
            r->ev[r->n] = (struct hs_event){e.t0_ns, dt, (uint32_t)(l - levels), 0};
            __atomic_store_n(&r->n, r->n + 1, __ATOMIC_RELEASE);
        } else {
            r->lost++;
        }
    }
    errno = saved;
    return e.ret;
}

uintptr_t hs_walk_real_return(uintptr_t ret, uintptr_t slot)
{
    if (ret != (uintptr_t)__vigil_hs_exit_tramp)
        return ret;
    const struct hs_shadow *sh = &wself.sh;
    for (uint32_t i = sh->n; i-- > 0;)
        if (sh->e[i].slot == slot)
            return sh->e[i].ret;
    return ret;
}

/* ---- modules ---- */

static int cmp_addr(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

static long find_entry(const struct hs_module *m, uintptr_t addr)
{
    uint32_t lo = 0, hi = m->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (m->entries[mid] <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (long)lo - 1;   /* the last entry <= addr, or -1 */
}

static uint64_t name_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static int cmp_alias(const void *a, const void *b)
{
    const struct hs_alias *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* From the file's symbol table: each entry's function size and "main"; and the other parts of
 * those functions (vigil-cc's outlined instrumented copy "<name>.vigil.instr", the compiler's
 * "<name>.cold" part: any "<name>.<suffix>"), so that a return address in them names the function.
 * Without a symbol table sizes stay 0. */
static void read_symbols(struct hs_module *m, int fd, uint64_t file_size)
{
    uint64_t sym_off, sym_size, str_off, str_size;
    char err[160];
    if (vigil_elf_find_section(vigil_read_fd, &fd, file_size, ".symtab", &sym_off, &sym_size, err, sizeof err) != 0 ||
        vigil_elf_find_section(vigil_read_fd, &fd, file_size, ".strtab", &str_off, &str_size, err, sizeof err) != 0)
        return;
    void *map = mmap(NULL, (size_t)file_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED)
        return;
    const Elf64_Sym *syms = (const Elf64_Sym *)((const char *)map + sym_off);
    const char *strs = (const char *)map + str_off;
    size_t nsyms = (size_t)(sym_size / sizeof(Elf64_Sym));
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < nsyms; i++) {
            const Elf64_Sym *sy = &syms[i];
            if (ELF64_ST_TYPE(sy->st_info) != STT_FUNC || !sy->st_value || sy->st_name >= str_size)
                continue;
            const char *name = strs + sy->st_name;
            size_t len = strnlen(name, (size_t)(str_size - sy->st_name));
            uintptr_t a = m->bias + sy->st_value;
            if (pass == 0) {
                static const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
                uintptr_t skip = sy->st_size > 4 && a >= m->lo && a + 4 <= m->hi &&
                                 memcmp((const void *)a, endbr64, 4) == 0 ? 4 : 0;   /* -fcf-protection */
                long e = find_entry(m, a + skip);
                if (e < 0 || m->entries[e] != a + skip || memchr(name, '.', len))
                    continue;
                a += skip;
                if (sy->st_size && sy->st_size < UINT32_MAX)
                    m->sizes[e] = (uint32_t)(sy->st_size - skip);
                m->hashes[e] = name_hash(name, len);
                if (len == 4 && memcmp(name, "main", 4) == 0)
                    m->main_entry = a;
                continue;
            }
            const char *dot = memchr(name, '.', len);
            if (!dot || dot == name || !sy->st_size || m->naliases >= HS_ALIASES_PER_ENTRY * m->n)
                continue;
            uint64_t h = name_hash(name, (size_t)(dot - name));
            for (uint32_t e = 0; e < m->n; e++)
                if (m->hashes[e] == h && m->entries[e] != a) {
                    m->aliases[m->naliases++] = (struct hs_alias){a, a + sy->st_size, m->entries[e]};
                    break;
                }
        }
    }
    qsort(m->aliases, m->naliases, sizeof *m->aliases, cmp_alias);
    munmap(map, (size_t)file_size);
}

/* A page within 2 GiB of the module holding the jump to the entry trampoline. */
static uintptr_t make_stub(uintptr_t lo, uintptr_t hi)
{
    const intptr_t reach = (intptr_t)1 << 31;
    for (int k = 1; k <= 256; k++) {
        for (int side = 0; side < 2; side++) {
            uintptr_t want = side ? ((hi + ((uintptr_t)k << 22)) & ~(uintptr_t)(page_size - 1))
                                  : ((lo - ((uintptr_t)k << 22)) & ~(uintptr_t)(page_size - 1));
            void *p = mmap((void *)want, (size_t)page_size, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
            if (p == MAP_FAILED)
                continue;
            uintptr_t s = (uintptr_t)p;
            if ((intptr_t)(s - lo) >= reach || (intptr_t)(lo - s) >= reach || (intptr_t)(hi - s) >= reach ||
                (intptr_t)(s - hi) >= reach) {
                munmap(p, (size_t)page_size);
                continue;
            }
            unsigned char *c = p;
            c[0] = 0xff;   /* jmp *0(%rip) */
            c[1] = 0x25;
            memset(c + 2, 0, 4);
            uintptr_t target = (uintptr_t)__vigil_hs_entry_tramp;
            memcpy(c + 6, &target, 8);
            if (mprotect(p, (size_t)page_size, PROT_READ | PROT_EXEC) != 0) {
                munmap(p, (size_t)page_size);
                return 0;
            }
            return s;
        }
    }
    return 0;
}

struct scan {
    int first;
};

static int add_module(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    struct scan *sc = ctx;
    int is_exe = sc->first;
    sc->first = 0;
    const char *name = info->dlpi_name;
    char exe[256];
    if (is_exe && (!name || !*name)) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0)
            return 0;
        exe[n] = 0;
        name = exe;
    }
    if (!name || !*name || strstr(name, "linux-vdso"))
        return 0;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type == PT_LOAD && (p->p_flags & PF_X)) {
            uintptr_t a = info->dlpi_addr + p->p_vaddr;
            if (a < lo)
                lo = a;
            if (a + p->p_memsz > hi)
                hi = a + p->p_memsz;
        }
    }
    if (hi == 0)
        return 0;
    for (uint32_t i = 0; i < nmodules; i++)
        if (modules[i].lo == lo && modules[i].bias == info->dlpi_addr)
            return 0;   /* known */
    if (nmodules >= HS_MODULES)
        return 1;
    struct hs_module *m = &modules[nmodules];
    memset(m, 0, sizeof *m);
    m->lo = lo;
    m->hi = hi;
    m->bias = info->dlpi_addr;
    snprintf(m->path, sizeof m->path, "%s", name);
    int fd = open(name, O_RDONLY | O_CLOEXEC);
    struct stat st;
    uint64_t off, bytes;
    char err[160];
    if (fd >= 0 && fstat(fd, &st) == 0 &&
        vigil_elf_find_section(vigil_read_fd, &fd, (uint64_t)st.st_size, "__patchable_function_entries", &off, &bytes,
                               err, sizeof err) == 0 && bytes >= 8) {
        /* Its contents in memory, relocated: the PT_LOAD that holds its file offset. */
        const uintptr_t *in = NULL;
        for (int i = 0; i < info->dlpi_phnum; i++) {
            const ElfW(Phdr) *p = &info->dlpi_phdr[i];
            if (p->p_type == PT_LOAD && off >= p->p_offset && off + bytes <= p->p_offset + p->p_filesz)
                in = (const uintptr_t *)(info->dlpi_addr + p->p_vaddr + (off - p->p_offset));
        }
        size_t n = (size_t)(bytes / 8);
        size_t need = n * (sizeof(uintptr_t) + sizeof(uint64_t) + HS_ALIASES_PER_ENTRY * sizeof(struct hs_alias) + sizeof(uint32_t));
        void *mem = in ? mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : MAP_FAILED;
        if (mem != MAP_FAILED) {
            m->entries = mem;
            m->hashes = (uint64_t *)(m->entries + n);
            m->aliases = (struct hs_alias *)(m->hashes + n);
            m->sizes = (uint32_t *)(m->aliases + HS_ALIASES_PER_ENTRY * n);
            for (size_t i = 0; i < n; i++)
                if (in[i] >= lo && in[i] < hi)
                    m->entries[m->n++] = in[i];
            qsort(m->entries, m->n, sizeof *m->entries, cmp_addr);
            read_symbols(m, fd, (uint64_t)st.st_size);
            if (m->n)
                m->stub = make_stub(lo, hi);
        }
    }
    if (fd >= 0)
        close(fd);
    __atomic_store_n(&nmodules, nmodules + 1, __ATOMIC_RELEASE);
    return 0;
}

static void scan_modules(void)
{
    if (__atomic_exchange_n(&modules_lock, 1, __ATOMIC_ACQUIRE))
        return;   /* another thread is at it */
    struct scan sc = {1};
    dl_iterate_phdr(add_module, &sc);
    __atomic_store_n(&modules_lock, 0, __ATOMIC_RELEASE);
}

static const struct hs_module *module_of(uintptr_t addr)
{
    uint32_t n = __atomic_load_n(&nmodules, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++)
        if (addr >= modules[i].lo && addr < modules[i].hi)
            return &modules[i];
    return NULL;
}

/* The entry of the hookable function that holds addr (a PC or a return address), or 0. */
static uintptr_t function_of(uintptr_t addr, const struct hs_module **mp)
{
    const struct hs_module *m = module_of(addr);
    if (!m || !m->n)
        return 0;
    if (mp)
        *mp = m;
    long e = find_entry(m, addr);
    /* Without a size (no .symtab), the nearest entry below is taken. */
    if (e >= 0 && (!m->sizes[e] || addr < m->entries[e] + m->sizes[e]))
        return m->entries[e];
    uint32_t lo = 0, hi = m->naliases;   /* another part of a function with an entry */
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (m->aliases[mid].lo <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && addr < m->aliases[lo - 1].hi)
        return m->aliases[lo - 1].entry;
    return 0;
}

/* ---- patching ---- */

static void refuse(uintptr_t entry, const char *why)
{
    __atomic_add_fetch(&n_refused, 1, __ATOMIC_RELAXED);
    snprintf(refused_why, sizeof refused_why, "entry %#lx: %s", (unsigned long)entry, why);
}

/* Make the text page of at writable for a moment and store word there; every thread then
 * serializes (membarrier SYNC_CORE). */
static int store_word(uintptr_t entry, uintptr_t at, uint64_t word)
{
    void *page = (void *)(at & ~(uintptr_t)(page_size - 1));
    if (mprotect(page, (size_t)page_size, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
        refuse(entry, "mprotect: the text cannot be made writable");
        return -1;
    }
    __atomic_store_n((uint64_t *)at, word, __ATOMIC_SEQ_CST);
    mprotect(page, (size_t)page_size, PROT_READ | PROT_EXEC);
    if (sync_core)
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0);
    return 0;
}

/* The entry's 5 bytes made bytes: the aligned 8-byte words they touch, each stored whole. */
static int store_bytes(uintptr_t entry, const uint8_t *bytes)
{
    for (uintptr_t at = entry & ~(uintptr_t)7; at < entry + HS_ENTRY_BYTES; at += 8) {
        uint64_t word = __atomic_load_n((uint64_t *)at, __ATOMIC_RELAXED), old = word;
        uint8_t *w = (uint8_t *)&word;
        for (uintptr_t k = 0; k < 8; k++)
            if (at + k >= entry && at + k < entry + HS_ENTRY_BYTES)
                w[k] = bytes[at + k - entry];
        if (word != old && store_word(entry, at, word) != 0)
            return -1;
    }
    return 0;
}

static int write_entry(uintptr_t entry, uintptr_t stub, int call)
{
    enum hs_entry_kind k = hs_entry_kind((const uint8_t *)entry, entry, stub);
    if (k != (call ? HS_ENTRY_NOP : HS_ENTRY_CALL)) {
        refuse(entry, call ? "not the expected nop" : "not our call");
        return -1;
    }
    uint8_t want[HS_ENTRY_BYTES], cur[HS_ENTRY_BYTES], steps[3][HS_ENTRY_BYTES];
    if (hs_entry_bytes(entry, stub, call, want) != 0) {
        refuse(entry, "the stub is out of a call's reach");
        return -1;
    }
    uintptr_t at = hs_entry_word(entry);
    if (at) {   /* one word: one store */
        uint64_t word;
        hs_entry_patch(__atomic_load_n((uint64_t *)at, __ATOMIC_RELAXED), entry, stub, call, &word);
        return store_word(entry, at, word);
    }
    memcpy(cur, (const void *)entry, HS_ENTRY_BYTES);
    if (hs_entry_steps(entry, cur, want, steps) != 0) {
        refuse(entry, "its first 2 bytes cross an 8-byte boundary");
        return -1;
    }
    for (int i = 0; i < 3; i++)
        if (store_bytes(entry, steps[i]) != 0)
            return -1;   /* (a failed mprotect fails the first step: nothing was written) */
    return 0;
}

static int hook(struct hs_level *l)
{
    const struct hs_module *m = module_of(l->entry);
    if (!m || !m->stub) {
        refuse(l->entry, "no stub near its module");
        return -1;
    }
    uint32_t slot = HS_HOOKS;
    for (uint32_t i = 0; i < HS_HOOKS; i++)
        if (!hooks[i].entry) {
            slot = i;
            break;
        }
    if (slot == HS_HOOKS) {
        refuse(l->entry, "too many hooks");
        return -1;
    }
    __atomic_store_n(&hooks[slot].level, l, __ATOMIC_RELEASE);
    __atomic_store_n(&hooks[slot].entry, l->entry, __ATOMIC_RELEASE);
    if (slot + 1 > hooks_used)
        __atomic_store_n(&hooks_used, slot + 1, __ATOMIC_RELEASE);
    if (write_entry(l->entry, m->stub, 1) != 0) {
        __atomic_store_n(&hooks[slot].entry, 0, __ATOMIC_RELEASE);
        return -1;
    }
    l->start_ns = now_ns();
    __atomic_add_fetch(&n_hooked, 1, __ATOMIC_RELAXED);
    return 0;
}

/* Remove l's hook (the nop back; calls already on their way find no hook and are ignored). */
static void unhook(struct hs_level *l)
{
    for (uint32_t i = 0; i < HS_HOOKS; i++) {
        if (hooks[i].entry != l->entry || hooks[i].level != l)
            continue;
        const struct hs_module *m = module_of(l->entry);
        if (m)
            write_entry(l->entry, m->stub, 0);
        __atomic_store_n(&hooks[i].entry, 0, __ATOMIC_RELEASE);
        l->end_ns = now_ns();
        __atomic_add_fetch(&n_unhooked, 1, __ATOMIC_RELAXED);
        return;
    }
}

/* ---- the walk ---- */

static struct hs_level *new_level(uintptr_t entry, uint32_t walk, uint32_t depth)
{
    if (nlevels >= HS_LEVELS)
        return NULL;
    struct hs_level *l = &levels[nlevels];
    memset(l, 0, sizeof *l);
    l->entry = entry;
    l->walk = walk;
    l->depth = depth;
    __atomic_store_n(&nlevels, nlevels + 1, __ATOMIC_RELEASE);
    return l;
}

struct tally {
    uintptr_t key;
    uint64_t count;
};

static void tally_add(struct tally *t, uint32_t cap, uintptr_t key, uint64_t n)
{
    uint32_t h = (uint32_t)((key >> 4) * 2654435761u) & (cap - 1);
    for (uint32_t k = 0; k < cap; k++, h = (h + 1) & (cap - 1)) {
        if (t[h].key == key || t[h].key == 0) {
            t[h].key = key;
            t[h].count += n;
            return;
        }
    }
}

static struct tally scratch[HS_SCRATCH];   /* the step's (under step_lock) */

static void choose(void)
{
    memset(scratch, 0, sizeof scratch);
    uint64_t total = 0;
    uint32_t n = hs_table_size(&hs.table);
    for (uint32_t id = 0; id < n; id++) {
        const uintptr_t *pcs;
        uint64_t count;
        uint32_t d = hs_table_get(&hs.table, id, &pcs, &count);
        if (!d)
            continue;
        total += count;
        for (uint32_t k = 0; k < d; k++) {
            uintptr_t f = function_of(k ? pcs[k] - 1 : pcs[k], NULL);
            if (f) {   /* the innermost hookable function */
                tally_add(scratch, HS_SCRATCH, f, count);
                break;
            }
        }
    }
    if (!total)
        return;
    chosen = 1;
    for (uint32_t picked = 0; picked < wo.spots && nwalks < HS_WALKS; picked++) {
        struct tally *best = NULL;
        for (uint32_t i = 0; i < HS_SCRATCH; i++)
            if (scratch[i].key && scratch[i].count && (!best || scratch[i].count > best->count))
                best = &scratch[i];
        if (!best || (picked > 0 && best->count * 100 < (uint64_t)wo.share * total))
            break;   /* the top one always; others over the share */
        struct hs_walk *w = &walks[nwalks];
        memset(w, 0, sizeof *w);
        w->hot = best->key;
        w->hot_samples = best->count;
        w->total_samples = total;
        best->count = 0;
        struct hs_level *l = new_level(w->hot, nwalks, 0);
        if (!l)
            break;
        w->level[w->nlevel++] = (uint32_t)(l - levels);
        if (hook(l) != 0) {
            snprintf(w->end, sizeof w->end, "could not be hooked: %s", refused_why);
        } else {
            w->active = 1;
        }
        __atomic_store_n(&nwalks, nwalks + 1, __ATOMIC_RELEASE);
    }
}

static void end_walk(struct hs_walk *w, struct hs_level *l, const char *why)
{
    unhook(l);
    w->active = 0;
    if (!__atomic_load_n(&l->calls, __ATOMIC_RELAXED))
        snprintf(w->end, sizeof w->end, "%s; its last function was not called once it was hooked (it was "
                 "entered before: a thread's start routine, or a long loop)", why);
    else
        snprintf(w->end, sizeof w->end, "%s", why);
}

static int hooked_elsewhere(uintptr_t entry, const struct hs_walk *self_walk, uint32_t *which)
{
    for (uint32_t i = 0; i < nwalks; i++) {
        const struct hs_walk *w = &walks[i];
        if (w == self_walk || !w->active)
            continue;
        if (levels[w->level[w->nlevel - 1]].entry == entry) {
            *which = i;
            return 1;
        }
    }
    return 0;
}

static void advance(struct hs_walk *w, uint64_t now)
{
    struct hs_level *l = &levels[w->level[w->nlevel - 1]];
    /* claimed: calls that were measured, or are being measured, or were left by a longjmp */
    uint64_t claimed = __atomic_load_n(&l->claimed, __ATOMIC_RELAXED);
    uint64_t calls = __atomic_load_n(&l->calls, __ATOMIC_RELAXED);
    int timed_out = now > l->start_ns && now - l->start_ns >= (uint64_t)wo.timeout_ms * 1000000u;
    if (claimed < wo.calls && !timed_out)
        return;
    if (!calls) {
        end_walk(w, l, "walk_timeout_ms passed");
        return;
    }
    const struct hs_module *m = module_of(l->entry);
    if (m && m->main_entry == l->entry) {
        end_walk(w, l, "main");
        return;
    }
    struct tally t[64];
    memset(t, 0, sizeof t);
    uint64_t total = __atomic_load_n(&l->callers_other, __ATOMIC_RELAXED);
    for (int i = 0; i < HS_CALLERS; i++) {
        uintptr_t site = __atomic_load_n(&l->callers[i].site, __ATOMIC_ACQUIRE);
        uint64_t c = __atomic_load_n(&l->callers[i].count, __ATOMIC_RELAXED);
        if (!site)
            continue;
        uintptr_t f = function_of(site - 1, NULL);
        if (f == l->entry)
            continue;   /* recursion */
        total += c;
        if (f)
            tally_add(t, 64, f, c);
    }
    struct tally *best = NULL;
    for (int i = 0; i < 64; i++)
        if (t[i].key && (!best || t[i].count > best->count))
            best = &t[i];
    if (!best) {
        end_walk(w, l, total ? "called from code without patchable entries (a thread's start routine, libc, code "
                               "not built by vigil-cc)" : "called only by itself");
        return;
    }
    if (best->count * 100 < (uint64_t)wo.min_share * total) {
        end_walk(w, l, "the top caller's share is under walk_min_share");
        return;
    }
    uint32_t other;
    if (hooked_elsewhere(best->key, w, &other)) {
        char why[64];
        snprintf(why, sizeof why, "its caller is walk %u's", other + 1);
        end_walk(w, l, why);
        return;
    }
    for (uint32_t i = 0; i < w->nlevel; i++)
        if (levels[w->level[i]].entry == best->key) {
            end_walk(w, l, "its caller is already in the chain (mutual recursion)");
            return;
        }
    if (w->nlevel >= HS_WALK_LEVELS) {
        end_walk(w, l, "the chain has HS_WALK_LEVELS levels");
        return;
    }
    struct hs_level *up = new_level(best->key, (uint32_t)(w - walks), w->nlevel);
    if (!up) {
        end_walk(w, l, "no room for more levels");
        return;
    }
    unhook(l);
    w->level[w->nlevel++] = (uint32_t)(up - levels);
    const struct hs_module *um = module_of(best->key);
    if (um && um->main_entry == best->key) {   /* called once: named, not hooked */
        w->active = 0;
        snprintf(w->end, sizeof w->end, "main");
        return;
    }
    if (hook(up) != 0) {
        w->active = 0;
        snprintf(w->end, sizeof w->end, "its caller could not be hooked: %s", refused_why);
    }
}

static void end_active(const char *why);

void hs_walk_step(void)
{
    if (!wo.spots || ended_walk)
        return;
    int toggle = __atomic_load_n(&toggle_pending, __ATOMIC_ACQUIRE);
    uint64_t now = now_ns();
    if (!toggle && (!walking || now - __atomic_load_n(&last_step_ns, __ATOMIC_RELAXED) < STEP_NS))
        return;
    if (__atomic_exchange_n(&step_lock, 1, __ATOMIC_ACQUIRE))
        return;
    in_step = 1;
    if (__atomic_exchange_n(&toggle_pending, 0, __ATOMIC_ACQ_REL)) {
        if (walking) {
            walking = 0;
            end_active("stopped by the walk signal");
            __atomic_store_n(&report_wanted, 1, __ATOMIC_RELEASE);
        } else {
            chosen = 0;   /* hot spots chosen anew from the samples at the next step */
            walking = 1;
        }
    }
    if (!walking) {
        in_step = 0;
        __atomic_store_n(&step_lock, 0, __ATOMIC_RELEASE);
        return;
    }
    last_step_ns = now;
    if (!chosen && __atomic_load_n(&hs.samples, __ATOMIC_RELAXED) >= wo.min_samples)
        choose();
    int was_active = 0, active = 0;
    for (uint32_t i = 0; i < nwalks; i++)
        if (walks[i].active) {
            was_active = 1;
            advance(&walks[i], now);
            active |= walks[i].active;
        }
    if (was_active && !active)   /* the last walk ended: its results, while the program runs */
        __atomic_store_n(&report_wanted, 1, __ATOMIC_RELEASE);
    in_step = 0;
    __atomic_store_n(&step_lock, 0, __ATOMIC_RELEASE);
}

int hs_walk_report_wanted(void)
{
    return __atomic_load_n(&report_wanted, __ATOMIC_RELAXED) && __atomic_exchange_n(&report_wanted, 0, __ATOMIC_ACQ_REL);
}

static void end_active(const char *why)
{
    for (uint32_t i = 0; i < nwalks; i++)
        if (walks[i].active)
            end_walk(&walks[i], &levels[walks[i].level[walks[i].nlevel - 1]], why);
}

/* From fini or a fork child (not a signal handler): waits for a step running on another thread. */
static void stop_all(const char *why)
{
    while (__atomic_exchange_n(&step_lock, 1, __ATOMIC_ACQUIRE))
        sched_yield();
    end_active(why);
    __atomic_store_n(&step_lock, 0, __ATOMIC_RELEASE);
}

/* The walk signal: a request the next step carries out (the handler may have interrupted a step
 * on this very thread, which holds step_lock). */
void hs_walk_toggle(void)
{
    __atomic_store_n(&toggle_pending, 1, __ATOMIC_RELEASE);
    hs_walk_step();
}

void hs_walk_end(void)
{
    walking = 0;
    ended_walk = 1;
    stop_all("the program ended");
}

void hs_walk_fork_child(void)
{
    step_lock = 0;
    stop_all("the program forked (this is the child)");
    nwrecs = 0;
    memset(&wself.rec, 0, sizeof wself.rec);
    hs_walk_thread_start_stack(wself.lo, wself.hi);
}

void hs_walk_thread_start_stack(uintptr_t lo, uintptr_t hi)
{
    wself.lo = lo;
    wself.hi = hi;
    if (!wo.spots)
        return;
    scan_modules();
    if (!wself.rec && wo.trace) {
        uint32_t i = __atomic_fetch_add(&nwrecs, 1, __ATOMIC_RELAXED);
        if (i < HS_MAX_RECS) {
            struct hs_wrec *r = &wrecs[i];
            void *m = mmap(NULL, (size_t)wo.trace * sizeof(struct hs_event), PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            r->tid = (int32_t)syscall(SYS_gettid);
            r->n = 0;
            r->lost = 0;
            r->ev = m == MAP_FAILED ? NULL : m;
            r->cap = m == MAP_FAILED ? 0 : wo.trace;
            wself.rec = r;
        }
    }
}

void hs_walk_init(const struct hs_walk_options *o)
{
    wo = *o;
    page_size = sysconf(_SC_PAGESIZE);
    if (!wo.spots)
        return;
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0)
        sync_core = 1;
    /* Instructions per call would need a hardware counter read at entry and exit. */
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_INSTRUCTIONS;
    a.exclude_kernel = 1;
    a.disabled = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        snprintf(instructions_why, sizeof instructions_why, "unavailable: no hardware instruction counter "
                 "(perf_event_open: %s)", strerror(errno));
    } else {
        close(fd);
        snprintf(instructions_why, sizeof instructions_why, "not measured: the walker reads no hardware counter");
    }
    walking = 1;
}

/* ---- the report ---- */

static void frame(struct vigil_json *j, const struct vigil_loadmap *ms, uintptr_t pc)
{
    int m = vigil_loadmap_find(ms, pc, NULL);
    char buf[24];
    vigil_json_array_begin(j);
    vigil_json_int(j, m);
    snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)(m >= 0 ? pc - ms->o[m].bias : pc));
    vigil_json_string(j, buf);
    vigil_json_array_end(j);
}

static void num(struct vigil_json *j, const char *key, uint64_t v)
{
    vigil_json_key(j, key);
    vigil_json_uint(j, v);
}

/* While the program runs (a report written by the flush hook), the walks are read under
 * step_lock, so that no level is half added; not when this thread holds it (the report's
 * signal interrupted a step here) nor after a long wait (a step never takes long: it would be
 * a thread stopped inside one). */
static int report_lock(void)
{
    if (in_step)
        return 0;
    for (int tries = 0; tries < 2000; tries++) {
        if (!__atomic_exchange_n(&step_lock, 1, __ATOMIC_ACQUIRE))
            return 1;
        sched_yield();
    }
    return 0;
}

static void report_walks(struct vigil_json *j, const struct vigil_loadmap *ms);

void hs_walk_report(struct vigil_json *j, const struct vigil_loadmap *ms)
{
    int locked = report_lock();
    report_walks(j, ms);
    if (locked)
        __atomic_store_n(&step_lock, 0, __ATOMIC_RELEASE);
}

static void report_walks(struct vigil_json *j, const struct vigil_loadmap *ms)
{
    vigil_json_key(j, "walk");
    vigil_json_object_begin(j);
    num(j, "spots", wo.spots);
    num(j, "share", wo.share);
    num(j, "calls", wo.calls);
    num(j, "min_share", wo.min_share);
    vigil_json_key(j, "instructions");
    vigil_json_string(j, wo.spots ? instructions_why : "");
    num(j, "hooked", n_hooked);
    num(j, "unhooked", n_unhooked);
    num(j, "refused", n_refused);
    vigil_json_key(j, "refused_why");
    vigil_json_string(j, refused_why);
    uint32_t nm = __atomic_load_n(&nmodules, __ATOMIC_ACQUIRE);
    uint64_t entries = 0;
    for (uint32_t i = 0; i < nm; i++)
        entries += modules[i].n;
    num(j, "entries", entries);
    num(j, "dropped", __atomic_load_n(&n_dropped, __ATOMIC_RELAXED));
    vigil_json_key(j, "walks");
    vigil_json_array_begin(j);
    uint32_t nw = __atomic_load_n(&nwalks, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < nw; i++) {
        const struct hs_walk *w = &walks[i];
        vigil_json_object_begin(j);
        vigil_json_key(j, "hot");
        frame(j, ms, w->hot);
        num(j, "hot_samples", w->hot_samples);
        num(j, "total_samples", w->total_samples);
        vigil_json_key(j, "end");
        vigil_json_string(j, w->active ? "still walking" : w->end);
        vigil_json_key(j, "levels");
        vigil_json_array_begin(j);
        for (uint32_t k = 0; k < w->nlevel; k++) {
            const struct hs_level *l = &levels[w->level[k]];
            vigil_json_object_begin(j);
            num(j, "id", w->level[k]);
            vigil_json_key(j, "function");
            frame(j, ms, l->entry);
            num(j, "calls", l->calls);
            num(j, "measured", l->measured);
            num(j, "wall_ns", l->wall_ns);
            num(j, "wall_max_ns", l->wall_max_ns);
            num(j, "cycles", l->cycles);
            num(j, "recursive", l->recursive);
            num(j, "tail", l->tail);
            num(j, "unmeasured", l->unmeasured);
            num(j, "hooked_us", l->start_ns > hs.start_ns ? (l->start_ns - hs.start_ns) / 1000u : 0);
            num(j, "unhooked_us", l->end_ns > hs.start_ns ? (l->end_ns - hs.start_ns) / 1000u : 0);
            vigil_json_key(j, "callers");
            vigil_json_array_begin(j);
            for (int c = 0; c < HS_CALLERS; c++) {
                if (!l->callers[c].site)
                    continue;
                vigil_json_array_begin(j);
                frame(j, ms, l->callers[c].site);
                vigil_json_uint(j, l->callers[c].count);
                vigil_json_array_end(j);
            }
            vigil_json_array_end(j);
            num(j, "callers_other", l->callers_other);
            vigil_json_object_end(j);
        }
        vigil_json_array_end(j);
        vigil_json_object_end(j);
    }
    vigil_json_array_end(j);
    vigil_json_key(j, "trace");
    vigil_json_array_begin(j);
    uint32_t nr = __atomic_load_n(&nwrecs, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < nr && i < HS_MAX_RECS; i++) {
        const struct hs_wrec *r = &wrecs[i];
        uint32_t n = __atomic_load_n(&r->n, __ATOMIC_ACQUIRE);
        if (!n)
            continue;
        vigil_json_object_begin(j);
        num(j, "tid", (uint64_t)r->tid);
        num(j, "lost", r->lost);
        vigil_json_key(j, "events");
        vigil_json_array_begin(j);
        for (uint32_t k = 0; k < n; k++) {
            vigil_json_array_begin(j);
            vigil_json_uint(j, r->ev[k].start_ns > hs.start_ns ? r->ev[k].start_ns - hs.start_ns : 0);
            vigil_json_uint(j, r->ev[k].dur_ns);
            vigil_json_uint(j, r->ev[k].level);
            vigil_json_array_end(j);
        }
        vigil_json_array_end(j);
        vigil_json_object_end(j);
    }
    vigil_json_array_end(j);
    vigil_json_object_end(j);
}
