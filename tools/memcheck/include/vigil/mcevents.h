/* The memory checker's event log (tools/memcheck): memcheck.events.zst in a run's report
 * directory, written by the runtime part (every error occurrence it saw, not only the first of
 * each site and kind) and read by the command part (`vigil memcheck-events`, `vigil report`).
 *
 * The file is zstd-compressed; once decompressed it is a header then records, all fields
 * little-endian, no padding:
 *   header  "vigilmce" (8 bytes), u32 version (1), u32 record size (40), u64 events dropped
 *           (the pool was full), u64 events written (the number of records that follow)
 *   record  u64 ns (vigil_now_ns at the error), u64 addr (the access), u64 block (the heap
 *           block's start, 0 when none), u32 block size (saturated at 2^32-1), u32 site
 *           (process-wide site id, as memcheck.txt's error lines name them), u32 thread
 *           (1, 2, ... in the order threads logged their first event), u16 size (the access's
 *           bytes, saturated), u8 kind (enum vigil_mc_kind), u8 flags (VIGIL_MCEV_*)
 * Records are grouped per thread (each thread fills chunks of its own), not sorted by time. */
#ifndef VIGIL_MCEVENTS_H
#define VIGIL_MCEVENTS_H
#include <stdint.h>

#define VIGIL_MCEV_FILE "memcheck.events.zst"
#define VIGIL_MCEV_MAGIC "vigilmce"
#define VIGIL_MCEV_VERSION 1
#define VIGIL_MCEV_HEADER_SIZE 32
#define VIGIL_MCEV_RECORD_SIZE 40

/* The kinds of error, as memcheck.json names them. */
enum vigil_mc_kind { VIGIL_MCK_OVERFLOW, VIGIL_MCK_UNDERFLOW, VIGIL_MCK_USE_AFTER_FREE, VIGIL_MCK_UNINIT,
                     VIGIL_MCK_INDEX, VIGIL_MCK_OBJECT, VIGIL_MCK_KINDS };
#define VIGIL_MC_KIND_NAMES                                                                           \
    {"heap-buffer-overflow", "heap-buffer-underflow", "use-after-free", "uninitialized-read",        \
     "index-out-of-bounds", "object-out-of-bounds"}

#define VIGIL_MCEV_STORE 0x01u           /* a write */
#define VIGIL_MCEV_USE_SHIFT 1           /* 3 bits: enum vigil_mc_use (memcheck.h), uninitialized reads */
#define VIGIL_MCEV_USE_MASK (7u << VIGIL_MCEV_USE_SHIFT)
#define VIGIL_MCEV_BLOCK 0x10u           /* block and block size are known */
#define VIGIL_MCEV_FLAGS 0x1fu           /* the others are 0 */

struct vigil_mcev {                      /* a record, decoded */
    uint64_t ns, addr, block;
    uint32_t block_size, site, thread;
    uint16_t size;
    uint8_t kind, flags;
};

#endif
