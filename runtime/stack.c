/* Stack capture by walking frame pointers. Code built without frame pointers leaves garbage
 * in the frame register, so every step is checked: the next frame must lie above the current
 * one, within this thread's stack, aligned, and not absurdly far; the walk stops otherwise.
 * Reads stay inside the stack bounds, so a bad chain ends the walk, never the program. */
#include "internal.h"

#include <pthread.h>
#include <sys/resource.h>

/* The main thread's bounds without pthread_getattr_np, which reads /proc/self/maps through
 * stdio and sscanf: more 64 KB windows of libc code made resident by the first allocation of
 * every process (docs/leaks.md, "Resident memory"). The walk starts at a frame of the caller's
 * and only goes up, so the top is what matters: main's frames all lie below __libc_stack_end;
 * the bottom only has to lie below every frame the thread will ever start a walk from. */
static int main_stack_bounds(uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t top = (uintptr_t)__vigil_main_stack_end(), here = (uintptr_t)__builtin_frame_address(0);
    struct rlimit limit;
    if (!top || getrlimit(RLIMIT_STACK, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
        return 0;
    uintptr_t size = limit.rlim_cur > (8u << 20) ? (uintptr_t)limit.rlim_cur : (8u << 20);
    uintptr_t bottom = top > size ? top - size : 0;
    if (here < bottom)
        return 0;   /* below the limit: not on that stack after all */
    *lo = bottom;
    *hi = top;
    return 1;
}

/* Find this thread's stack bounds, once (pthread_getattr_np may allocate: our guard is held by
 * every caller, so that allocation is not reported). Cold: the walk runs on every allocation,
 * and its code is cache lines the program's own code loses. */
static __attribute__((cold, noinline)) void find_stack_bounds(struct vigil_thread *th)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    th->stack_hi = 1;   /* "tried": a failure is not retried on every allocation */
    if (!main_stack_bounds(&th->stack_lo, &th->stack_hi) && pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstack(&attr, &addr, &size) == 0 && size) {
            th->stack_lo = (uintptr_t)addr;
            th->stack_hi = (uintptr_t)addr + size;
        }
        pthread_attr_destroy(&attr);
    }
}

static inline int stack_bounds(uintptr_t *lo, uintptr_t *hi)
{
    struct vigil_thread *th = &__vigil_thread;
    if (unlikely(!th->stack_hi))
        find_stack_bounds(th);
    *lo = th->stack_lo;
    *hi = th->stack_hi;
    return *hi > *lo + 16;
}

uint32_t __vigil_walk_stack(void *frame, uintptr_t *pcs, uint32_t max)
{
    uintptr_t lo, hi;
    uint32_t depth = 0;
    if (!frame || !stack_bounds(&lo, &hi))
        return 0;
    uintptr_t fp = (uintptr_t)frame;
    int entry_frame = 0;   /* the record just read was a transfer entry's own */
    while (depth < max) {
        if (fp < lo || fp > hi - 2 * sizeof(uintptr_t) || (fp & (sizeof(uintptr_t) - 1)))
            break;
        const uintptr_t *record = (const uintptr_t *)fp;   /* [saved frame pointer, return address] */
        uintptr_t pc = record[1], next = record[0];
        if (pc < 4096 || (pc >= lo && pc < hi))
            break;   /* no code there: a record of a function built without frame pointers */
        if (__vigil_in_transfer_entry(pc)) {
            /* f -> transfer entry -> <f>.vigil.xfer -> <f>.vigil.instr: the program made one
             * call of f, not three. The thunk's return address came just before; the entry's
             * own frame (it always makes one) comes next and holds f's call of the entry,
             * which <f>.vigil.instr's frame already stands for. */
            depth -= depth > 0;
            entry_frame = 1;
        } else if (entry_frame) {
            entry_frame = 0;
        } else {
            pcs[depth++] = pc;
        }
        if (next <= fp || next - fp > (64u << 20))
            break;
        fp = next;
    }
    return depth;
}
