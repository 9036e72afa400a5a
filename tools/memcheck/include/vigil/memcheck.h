/* The memory checker's interface between vigil-cc's code and libvigil (tools/memcheck): the
 * calls its compiler part places in the instrumented copy, which its runtime part defines.
 * Only code built by vigil-cc calls them; they are a private ABI, versioned with the tool. */
#ifndef VIGIL_MEMCHECK_H
#define VIGIL_MEMCHECK_H
#include <stdint.h>

struct __vigil_module;   /* common/abi.h */

/* info of __vigil_memcheck_access: the access's size in bytes (at most VIGIL_MC_SIZE_MAX: a
 * larger one is cut there), whether it is a store, whether its value is used so that its
 * bytes are checked for the fill (a load only), how it is used, and which of its first 8
 * bytes the program uses (0: all). */
#define VIGIL_MC_SIZE_MAX 0xffffu
#define VIGIL_MC_STORE (1u << 16)
#define VIGIL_MC_UNINIT (1u << 17)
#define VIGIL_MC_USE_SHIFT 18            /* 3 bits: enum vigil_mc_use */
#define VIGIL_MC_USE_MASK (7u << VIGIL_MC_USE_SHIFT)
#define VIGIL_MC_ONCE (1u << 21)         /* check-once: the table's once[k] stops the byte check */
#define VIGIL_MC_BYTES_SHIFT 24          /* 8 bits: bit i set = byte i used */
enum vigil_mc_use { VIGIL_MC_USE_BRANCH = 1, VIGIL_MC_USE_ADDRESS, VIGIL_MC_USE_CALL, VIGIL_MC_USE_RETURN,
                    VIGIL_MC_USE_OTHER };

/* A module's checks, made by the compiler part (constant but once[]): check k is at the
 * module's local site checks[k].site and is described by checks[k].info; once[k] is its
 * check-once flag, set by the runtime when the load read initialized bytes. */
struct vigil_mc_check {
    uint32_t site, info;
};
struct vigil_mc_table {
    const struct __vigil_module *module;
    uint8_t *once;                       /* n flags */
    uint32_t n, reserved;
    struct vigil_mc_check checks[];
};

/* Tested by the compiled code before each of the calls below: 1 while the tool runs. */
extern uint32_t __vigil_memcheck_on;

/* A sampled access of check k at addr (its size in its info), made through a pointer derived
 * from base (the address before the access's own offsets: its heap block, if any, is the one
 * the access must stay in). */
void __vigil_memcheck_access(const struct vigil_mc_table *t, uint32_t k, const void *addr, const void *base);
/* The value a load of check k read at addr (its bounds checked there, by a check without
 * VIGIL_MC_UNINIT), where the program uses it: a load whose uses are not in its own block
 * (the load may run where its value is not used) has its bytes checked at each use instead.
 * value: the loaded bytes (at most 8), little-endian. */
void __vigil_memcheck_value(const struct vigil_mc_table *t, uint32_t k, const void *addr, uint64_t value);
/* The same for an access whose size is known at run time only (memcpy, memset). */
void __vigil_memcheck_range(const struct vigil_mc_table *t, uint32_t k, const void *addr, const void *base,
                            uint64_t size);
/* A bound the compiled code checks inline failed; called only then. what: VIGIL_MC_ARRAY, an
 * index of a statically sized array out of [0, bound); VIGIL_MC_GLOBAL or VIGIL_MC_STACK, an
 * access whose last byte is at offset index of a global or stack object of bound bytes (or
 * before its start: index is then the offset, negative, as a two's complement). */
enum vigil_mc_bound { VIGIL_MC_ARRAY, VIGIL_MC_GLOBAL, VIGIL_MC_STACK };
/* Or'ed into what for VIGIL_MC_ARRAY: the array lies in a global / stack object the compiler
 * saw (neither: memory a pointer leads to), for memcheck.exclude_kinds. */
#define VIGIL_MC_IN_GLOBAL 0x10u
#define VIGIL_MC_IN_STACK 0x20u
#define VIGIL_MC_BOUND_MASK 0x0fu
void __vigil_memcheck_index(struct __vigil_module *m, uint32_t site, uint64_t index, uint64_t bound, uint32_t what);

#endif
