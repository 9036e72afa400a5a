/* Probes of the instrumented copy: map (module, local site) to the process-wide id and hand
 * the event to the enabled tools that asked for it. Nobody listening: one branch. */
#include "internal.h"

#include <stddef.h>

#if defined(__clang__) && defined(__x86_64__)
#define PRESERVING __attribute__((preserve_most, noinline))
#else
#define PRESERVING __attribute__((noinline))
#endif

/* A probe can run for a module whose dispatch checks never fired (a burst begun elsewhere
 * flows into it), so the module may still need registering: out of line and preserve_most,
 * so that the access probes, which call nothing else, save no registers for it. */
static PRESERVING vigil_site_t register_and_id(struct __vigil_module *m, uint32_t site)
{
    return __vigil_ensure_registered(m) ? m->base_id + site : VIGIL_NO_SITE;
}

static inline __attribute__((always_inline)) vigil_site_t site_id(struct __vigil_module *m, uint32_t site)
{
    if (unlikely(__atomic_load_n(&m->registered, __ATOMIC_ACQUIRE) != 1))
        return register_and_id(m, site);
    return m->base_id + site;
}

static PRESERVING __attribute__((used)) void deliver_full_buffer(void)
{
    __vigil_deliver_accesses();
}

/* An access into this thread's buffer (internal.h), delivered when it is full. bits: is_store,
 * and the VIGIL_ACCESS_* flags of <vigil/tool.h> (an atomic probe's). */
static inline __attribute__((always_inline)) void buffer_access(struct __vigil_module *m, uint32_t site, const void *addr, uint64_t size,
                                 uint32_t bits)
{
    struct vigil_thread *th = &__vigil_thread;
    if (th->in_runtime)
        return;
    if (bits & VIGIL_ACCESS_FLAGS)
        th->access_flagged = 1;   /* before the entry: a delivery in between sees it too */
    uint32_t n = th->naccess;
    struct vigil_access *e = &th->access[n < VIGIL_ACCESS_BATCH ? n : 0];
    e->addr = addr;
    e->site = site_id(m, site);
    e->size_store = (uint32_t)(size < VIGIL_ACCESS_SIZE_MAX ? size : VIGIL_ACCESS_SIZE_MAX) << 1 | bits;
    th->naccess = n + 1;
    if (unlikely(n + 1 >= VIGIL_ACCESS_BATCH))
        deliver_full_buffer();
}

/* Enabled tools, for the frequent events (defined in tools.c). */
extern const struct vigil_tool *__vigil_enabled_tools[] HIDDEN;
extern unsigned __vigil_enabled_count HIDDEN;
extern uint32_t __vigil_tool_events_now[] HIDDEN;   /* the events each wants now (vigil_tool_events) */

#if defined(__clang__) && defined(__x86_64__)
/* x86-64: each probe is a stub that tests the event bit and returns, touching nothing but the
 * flags; only when a tool wants the event does it jump to the C body, which is preserve_most
 * like the stub's callers expect (common/abi.h, VIGIL_PROBE_CC). */
#define PROBE_STUB(name, event)                                                        \
    __asm__(".text\n"                                                                  \
            ".globl " #name "\n"                                                        \
            ".type " #name ",@function\n"                                              \
            ".p2align 4\n" #name ":\n"                                                 \
            "    .cfi_startproc\n"                                                     \
            "    testl $" #event ", __vigil_events_here(%rip)\n"                      \
            "    jnz " #name "_body\n"                                                 \
            "    ret\n"                                                                \
            "    .cfi_endproc\n"                                                       \
            ".size " #name ", .-" #name "\n")
PROBE_STUB(__vigil_probe_load, 0x100);     /* VIGIL_EV_ACCESS */
PROBE_STUB(__vigil_probe_store, 0x100);    /* VIGIL_EV_ACCESS */
PROBE_STUB(__vigil_probe_branch, 0x200);   /* VIGIL_EV_BRANCH */
PROBE_STUB(__vigil_probe_return, 0x400);   /* VIGIL_EV_RETURN */
PROBE_STUB(__vigil_probe_call, 0x800);     /* VIGIL_EV_CALL */
PROBE_STUB(__vigil_probe_atomic_load, 0x100);    /* VIGIL_EV_ACCESS */
PROBE_STUB(__vigil_probe_atomic_store, 0x100);   /* VIGIL_EV_ACCESS */
PROBE_STUB(__vigil_sync_atomic, 0x10);           /* VIGIL_EV_SYNC */
_Static_assert(VIGIL_EV_ACCESS == 0x100 && VIGIL_EV_BRANCH == 0x200 && VIGIL_EV_RETURN == 0x400 &&
               VIGIL_EV_CALL == 0x800 && VIGIL_EV_SYNC == 0x10, "the probe stubs test these bits");
#define PROBE_BODY(name) HIDDEN __attribute__((preserve_most, used)) void name##_body
#else
#define PROBE_BODY(name) void name
#endif

#define FOR_TOOLS(ev, hook, ...)                                                      \
    do {                                                                              \
        struct vigil_thread *th = &__vigil_thread;                                    \
        if (th->in_runtime)                                                           \
            return;                                                                   \
        th->in_runtime = 1;                                                           \
        vigil_site_t id = site_id(m, site);                                           \
        unsigned n = RELAXED_LOAD(&__vigil_enabled_count);                            \
        for (unsigned i = 0; i < n; i++) {                                            \
            const struct vigil_tool *t = __vigil_enabled_tools[i];                    \
            if ((RELAXED_LOAD(&__vigil_tool_events_now[i]) & (ev)) && t->hook)        \
                t->hook(__VA_ARGS__);                                                 \
        }                                                                             \
        __vigil_leave_runtime(th, 0);                                                 \
    } while (0)

#if defined(__clang__) && defined(__x86_64__)
/* x86-64: the access bodies' common case in assembly (the event bit is tested first).
 * preserve_most made the C body save eight registers and set up a frame for a dozen
 * instructions of work (43 instructions per access); this one saves the three it uses (31).
 * A module not yet registered and a buffer that a signal handler's probe left full go to the C
 * body (access_slow_*), which handles every case. The entry is filled before the count is
 * raised, as in buffer_access: a signal handler's probe in between appends after it. */
static PRESERVING __attribute__((used)) void access_slow_load(struct __vigil_module *m, uint32_t site, const void *addr, uint64_t size)
{
    buffer_access(m, site, addr, size, 0);
}

static PRESERVING __attribute__((used)) void access_slow_store(struct __vigil_module *m, uint32_t site, const void *addr, uint64_t size)
{
    buffer_access(m, site, addr, size, 1);
}

/* One access body; the registers of its inputs are parameters, as the two conventions differ:
 *  - the runtime's probes (common/abi.h): rdi = module, esi = local site, rdx = address,
 *    rcx = size; the body `<probe>_body` is entered from the probe's stub, which tested the bit;
 *  - the entries behind the module stubs of code built for x86-64 ELF (compiler/emit.c):
 *    r11 = module, edi = local site, rsi = address and, for the entries without a size in their
 *    name, rdx = size. They test the event bit themselves: only a module stub of code for an
 *    executable built without guarded probes has tested it already (compiler/emit.c).
 * Only r11 and the flags change. The TLS block is addressed through r10, the entry through r9.
 * The slow path (`slow_call`) is a preserve_most call made with the three saves on the stack
 * (which leaves it 16-byte aligned), so every way out passes one restore. */
#define ACCESS_ENTRY(name, test_event, module_reg, site_reg, addr_reg, store_size, slow_call)                \
    __attribute__((naked, used)) void name(void)                                               \
    {                                                                                          \
        __asm__(test_event                                                                     \
                "    pushq %%rax\n"                                                            \
                "    pushq %%r10\n"                                                            \
                "    pushq %%r9\n"                                                             \
                "    movq __vigil_thread@gottpoff(%%rip), %%r10\n"                             \
                "    cmpl $0, %%fs:%c[in_runtime](%%r10)\n"                                    \
                "    jne 2f\n"                                                                 \
                "    cmpl $1, %c[registered](" module_reg ")\n"                                    \
                "    jne 3f\n"                                                                 \
                "    movl %%fs:%c[naccess](%%r10), %%eax\n"                                    \
                "    cmpl %[batch], %%eax\n"                                                   \
                "    jae 3f\n"                                                                 \
                "    movl %%eax, %%r9d\n"                                                      \
                "    shlq %[entry_shift], %%r9\n"                                              \
                "    addq %%r10, %%r9\n"                                                       \
                "    movq " addr_reg ", %%fs:%c[access]+%c[addr](%%r9)\n"                          \
                "    movl %c[base_id](" module_reg "), %%r11d\n"                                   \
                "    addl " site_reg ", %%r11d\n"                                                  \
                "    movl %%r11d, %%fs:%c[access]+%c[site](%%r9)\n"                            \
                store_size                                                                     \
                "    addl $1, %%eax\n"                                                         \
                "    movl %%eax, %%fs:%c[naccess](%%r10)\n"                                    \
                "    cmpl %[batch], %%eax\n"                                                   \
                "    jb 2f\n"                                                                  \
                "    call deliver_full_buffer\n"                                               \
                "    jmp 2f\n"                                                                 \
                "3:\n"                                                                         \
                slow_call                                                                      \
                "2:  popq %%r9\n"                                                              \
                "    popq %%r10\n"                                                             \
                "    popq %%rax\n"                                                             \
                "    ret\n"                                                                    \
                :                                                                              \
                : [event] "i"(VIGIL_EV_ACCESS),                                                \
                  [in_runtime] "i"(offsetof(struct vigil_thread, in_runtime)),                 \
                  [naccess] "i"(offsetof(struct vigil_thread, naccess)),                       \
                  [access] "i"(offsetof(struct vigil_thread, access)),                         \
                  [addr] "i"(offsetof(struct vigil_access, addr)),                             \
                  [site] "i"(offsetof(struct vigil_access, site)),                             \
                  [size_store] "i"(offsetof(struct vigil_access, size_store)),                 \
                  [registered] "i"(offsetof(struct __vigil_module, registered)),               \
                  [base_id] "i"(offsetof(struct __vigil_module, base_id)),                     \
                  [batch] "i"(VIGIL_ACCESS_BATCH), [entry_shift] "i"(4));                     \
    }
_Static_assert(sizeof(struct vigil_access) == 1 << 4, "ACCESS_ENTRY indexes the buffer by shifting");
_Static_assert(sizeof(((struct vigil_thread *)0)->in_runtime) == 4 && sizeof(((struct vigil_thread *)0)->naccess) == 4 &&
               sizeof(((struct __vigil_module *)0)->registered) == 4 && sizeof(((struct __vigil_module *)0)->base_id) == 4,
               "ACCESS_ENTRY compares and loads these as 32-bit");
_Static_assert(VIGIL_EV_ACCESS == 0x100, "the probe stubs and the module stubs of compiler/emit.c test this bit");

#define TEST_EVENT "    testl %[event], __vigil_events_here(%%rip)\n    jnz 0f\n    ret\n0:\n"
/* The size field from a size register, clamped as buffer_access does (r11 is spent by then). */
#define STORE_SIZE_FROM(reg, is_store)                                                         \
    "    movl $0x07ffffff, %%r11d\n"                                                           \
    "    cmpq %%r11, %%r" reg "x\n"                                                            \
    "    cmovbl %%e" reg "x, %%r11d\n"                                                         \
    "    leal " #is_store "(%%r11,%%r11), %%r11d\n"                                            \
    "    movl %%r11d, %%fs:%c[access]+%c[size_store](%%r9)\n"
/* A size known from the entry's name: the size field is a constant. */
#define STORE_SIZE_CONSTANT(bytes, is_store) \
    "    movl $" #bytes "*2+" #is_store ", %%fs:%c[access]+%c[size_store](%%r9)\n"
/* The C body's arguments, in its own registers, saved around the call: four more saves keep
 * the stack 16-byte aligned at the call. `size` puts the size into rcx (rdx still the size). */
#define SLOW_FROM_MODULE_STUB(slow, size)                                                      \
    "    pushq %%rdi\n    pushq %%rsi\n    pushq %%rdx\n    pushq %%rcx\n"                     \
    size                                                                                       \
    "    movq %%rsi, %%rdx\n    movl %%edi, %%esi\n    movq %%r11, %%rdi\n"                    \
    "    call " #slow "\n"                                                                     \
    "    popq %%rcx\n    popq %%rdx\n    popq %%rsi\n    popq %%rdi\n"

#define PROBE_ACCESS_BODY(name, slow, is_store)                                                \
    HIDDEN ACCESS_ENTRY(name##_body, "", "%%rdi", "%%esi", "%%rdx", STORE_SIZE_FROM("c", is_store), \
                        "    call " #slow "\n")
#define MODULE_ACCESS_VARIABLE(kind, slow, is_store)                                           \
    void __vigil_probe_##kind##_m(void);                                                       \
    ACCESS_ENTRY(__vigil_probe_##kind##_m, TEST_EVENT, "%%r11", "%%edi", "%%rsi",              \
                 STORE_SIZE_FROM("d", is_store), SLOW_FROM_MODULE_STUB(slow, "    movq %%rdx, %%rcx\n"))
#define MODULE_ACCESS_SIZED(kind, slow, is_store, bytes)                                       \
    void __vigil_probe_##kind##bytes##_m(void);                                                \
    ACCESS_ENTRY(__vigil_probe_##kind##bytes##_m, TEST_EVENT, "%%r11", "%%edi", "%%rsi",       \
                 STORE_SIZE_CONSTANT(bytes, is_store), SLOW_FROM_MODULE_STUB(slow, "    movl $" #bytes ", %%ecx\n"))
PROBE_ACCESS_BODY(__vigil_probe_load, access_slow_load, 0)
PROBE_ACCESS_BODY(__vigil_probe_store, access_slow_store, 1)
MODULE_ACCESS_VARIABLE(load, access_slow_load, 0)
MODULE_ACCESS_VARIABLE(store, access_slow_store, 1)
MODULE_ACCESS_SIZED(load, access_slow_load, 0, 1)
MODULE_ACCESS_SIZED(load, access_slow_load, 0, 2)
MODULE_ACCESS_SIZED(load, access_slow_load, 0, 4)
MODULE_ACCESS_SIZED(load, access_slow_load, 0, 8)
MODULE_ACCESS_SIZED(load, access_slow_load, 0, 16)
MODULE_ACCESS_SIZED(store, access_slow_store, 1, 1)
MODULE_ACCESS_SIZED(store, access_slow_store, 1, 2)
MODULE_ACCESS_SIZED(store, access_slow_store, 1, 4)
MODULE_ACCESS_SIZED(store, access_slow_store, 1, 8)
MODULE_ACCESS_SIZED(store, access_slow_store, 1, 16)
#else
PROBE_BODY(__vigil_probe_load)(struct __vigil_module *m, uint32_t site, const void *addr, uint64_t size)
{
    if (likely(__vigil_wants(VIGIL_EV_ACCESS)))
        buffer_access(m, site, addr, size, 0);
}

PROBE_BODY(__vigil_probe_store)(struct __vigil_module *m, uint32_t site, const void *addr, uint64_t size)
{
    if (likely(__vigil_wants(VIGIL_EV_ACCESS)))
        buffer_access(m, site, addr, size, 1);
}
#endif

/* Atomic instructions (common/abi.h): their accesses are marked, their synchronization goes to
 * the tools at once, whether a burst runs or not. */
#if defined(__clang__) && defined(__x86_64__)
_Static_assert(VIGIL_ACCESS_SIZE_MAX == 0x07ffffff, "STORE_SIZE_FROM clamps sizes to this");
#endif
PROBE_BODY(__vigil_probe_atomic_load)(struct __vigil_module *m, uint32_t site, const void *addr, uint64_t size)
{
    if (likely(__vigil_wants(VIGIL_EV_ACCESS)))
        buffer_access(m, site, addr, size, VIGIL_ACCESS_ATOMIC);
}

PROBE_BODY(__vigil_probe_atomic_store)(struct __vigil_module *m, uint32_t site, const void *addr, uint64_t size)
{
    if (likely(__vigil_wants(VIGIL_EV_ACCESS)))
        buffer_access(m, site, addr, size, VIGIL_ACCESS_ATOMIC | VIGIL_ACCESS_STORE);
}

PROBE_BODY(__vigil_sync_atomic)(const void *addr, uint32_t op)
{
    if (likely(!__vigil_wants(VIGIL_EV_SYNC)) || (op != VIGIL_SYNC_ATOMIC_RELEASE && op != VIGIL_SYNC_ATOMIC_ACQUIRE))
        return;
    __vigil_sync_event(addr, (enum vigil_sync_op)op);
}

PROBE_BODY(__vigil_probe_branch)(struct __vigil_module *m, uint32_t site, uint32_t taken)
{
    if (likely(!__vigil_wants(VIGIL_EV_BRANCH)))
        return;
    FOR_TOOLS(VIGIL_EV_BRANCH, on_branch, id, taken != 0);
}

PROBE_BODY(__vigil_probe_return)(struct __vigil_module *m, uint32_t site, int64_t value)
{
    if (likely(!__vigil_wants(VIGIL_EV_RETURN)))
        return;
    FOR_TOOLS(VIGIL_EV_RETURN, on_return, id, value);
}

PROBE_BODY(__vigil_probe_call)(struct __vigil_module *m, uint32_t site, const void *callee)
{
    if (likely(!__vigil_wants(VIGIL_EV_CALL)))
        return;
    FOR_TOOLS(VIGIL_EV_CALL, on_call, id, callee);
}

#if defined(__clang__) && defined(__x86_64__)
/* The entries behind the module stubs of branch, return and call probes of code built for
 * x86-64 ELF (compiler/emit.c): r11 = module, edi = local site, rsi = the value (taken, the
 * result, the callee). They test the event bit, then call the body with the runtime probe's
 * arguments (rdi = module, esi = site, rdx = value), saving the three registers that takes:
 * only r11 and the flags change, as preserve_most callers expect. The three saves leave the
 * stack 16-byte aligned at the call. */
#define EVENT_ENTRY(kind, event)                                                               \
    void __vigil_probe_##kind##_m(void);                                                       \
    __attribute__((naked, used)) void __vigil_probe_##kind##_m(void)                           \
    {                                                                                          \
        __asm__("    testl %[bit], __vigil_events_here(%%rip)\n"                               \
                "    jnz 0f\n"                                                                 \
                "    ret\n"                                                                    \
                "0:  pushq %%rdi\n    pushq %%rsi\n    pushq %%rdx\n"                          \
                "    movq %%rsi, %%rdx\n    movl %%edi, %%esi\n    movq %%r11, %%rdi\n"        \
                "    call __vigil_probe_" #kind "_body\n"                                      \
                "    popq %%rdx\n    popq %%rsi\n    popq %%rdi\n"                             \
                "    ret\n"                                                                    \
                :                                                                              \
                : [bit] "i"(event));                                                           \
    }
EVENT_ENTRY(branch, VIGIL_EV_BRANCH)
EVENT_ENTRY(return, VIGIL_EV_RETURN)
EVENT_ENTRY(call, VIGIL_EV_CALL)
#endif
