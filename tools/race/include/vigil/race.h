/* The race tool's API for programs built with vigil-cc (installed as <vigil/race.h>). Every
 * function does nothing when the race tool is not enabled (tools=race). To keep a program
 * runnable without vigil, declare the functions weak and test for NULL:
 *
 *     #include <vigil/race.h>
 *     #pragma weak vigil_race_benign
 *     ...
 *     if (vigil_race_benign)
 *         vigil_race_benign(&stats.hits, sizeof stats.hits);
 */
#ifndef VIGIL_RACE_API_H
#define VIGIL_RACE_API_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
/* A known, accepted race on [addr, addr + size): never reported (a statistics counter bumped
 * without a lock, the word a hand-written lock spins on). Up to 256 ranges; they stay marked
 * when the memory is freed. */
void vigil_race_benign(const volatile void *addr, size_t size);
/* A lock of the program's own (spin lock, lock-free hand-off, a library's lock vigil does not
 * see) was taken or is about to be released by the calling thread: the tool treats it as a
 * mutex at that address (held locks protect accesses; release -> acquire orders them). Call
 * _acquired right after taking it and _released right before letting it go. */
void vigil_race_lock_acquired(const volatile void *lock);
/* Taken for reading (a read-held lock protects reads only, as a rwlock's). */
void vigil_race_lock_acquired_shared(const volatile void *lock);
void vigil_race_lock_released(const volatile void *lock);
#ifdef __cplusplus
}
#endif
#endif
