// leak-test: garbage_frames -- in code built with -fomit-frame-pointer, rbp is a general
// register, and the "frame record" it points at may hold a code address that no call returns
// to (a function pointer kept on the stack). The frame walk must check that a return address
// follows a call instruction in an executable segment and stop there: no frame in decoy, the
// eight leaks of one call instruction one group.
// cflags: -O2 -g -fomit-frame-pointer
// expect: found alloc_with_rbp unreachable objects=8
// expect: noframe decoy
// expect: noframe ?
#include <stdint.h>
#include <stdlib.h>

static void *volatile sink;
static volatile int calls;

/* Its address stands where a return address would be. */
__attribute__((noinline)) static void decoy(void)
{
    calls++;
}
static void (*volatile decoy_ref)(void) = decoy;

/* malloc called with rbp = rbp_value, as frameless code may leave it. */
__attribute__((noinline)) static void *alloc_with_rbp(uintptr_t rbp_value)
{
#if defined(__x86_64__)
    void *p;
    __asm__ volatile(
        "mov %%rsp, %%r12\n\t"
        "sub $128, %%rsp\n\t"       /* past the red zone: the compiler sees no call here */
        "and $-16, %%rsp\n\t"       /* aligned for the call */
        "mov %%rbp, %%r13\n\t"
        "mov %1, %%rbp\n\t"
        "mov $48, %%edi\n\t"
        "call malloc@PLT\n\t"
        "mov %%r13, %%rbp\n\t"
        "mov %%r12, %%rsp\n\t"
        "mov %%rax, %0\n\t"
        : "=r"(p)
        : "r"(rbp_value)
        : "rax", "rdi", "rsi", "rdx", "rcx", "r8", "r9", "r10", "r11", "r12", "r13", "memory", "cc");
    return p;
#else
    (void)rbp_value;
    return malloc(48);
#endif
}

/* Out of main, so that no register of main's keeps the last address. */
__attribute__((noinline)) static void leak_eight(void)
{
    volatile uintptr_t record[6];
    /* [saved frame pointer, "return address"]: a function's first byte, then a byte inside
     * it, then the stack's own address, each chained to the next record above */
    record[0] = (uintptr_t)&record[2];
    record[1] = (uintptr_t)decoy_ref;
    record[2] = (uintptr_t)&record[4];
    record[3] = (uintptr_t)decoy_ref + 1;
    record[4] = 0;
    record[5] = (uintptr_t)&record[5];
    for (int i = 0; i < 4; i++) {
        sink = alloc_with_rbp((uintptr_t)record);       /* leaked */
        sink = alloc_with_rbp((uintptr_t)&record[2]);   /* leaked, same call instruction */
    }
    sink = NULL;
    decoy_ref();
}

int main(void)
{
    leak_eight();
    return calls != 1;
}
