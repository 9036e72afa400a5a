// leak-test: frameless_caller -- code built without frame pointers uses rbp as a general
// register; when it holds a stack address, the runtime's frame walk must not take the stack
// data there for a caller's return address (seen on /usr/bin/tr under LD_PRELOAD): the eight
// leaks of one call instruction are one group, not two (one with a bogus 0x7ff... frame).
// expect: found alloc_with_rbp unreachable objects=8
#include <stdint.h>
#include <stdlib.h>

static void *volatile sink;

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
        "mov $32, %%edi\n\t"
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
    return malloc(32);
#endif
}

/* Out of main, so that no register of main's keeps the last address. */
__attribute__((noinline)) static void leak_eight(void)
{
    volatile uintptr_t record[4];               /* a "frame record" made of stack addresses */
    record[0] = (uintptr_t)&record[2];          /* "saved frame pointer": above, in the stack */
    record[1] = (uintptr_t)&record[3];          /* "return address": a stack address */
    record[2] = record[3] = 0;
    for (int i = 0; i < 4; i++) {
        sink = alloc_with_rbp((uintptr_t)record);   /* leaked */
        sink = alloc_with_rbp(0);                   /* leaked, same call instruction */
    }
    sink = NULL;
}

int main(void)
{
    leak_eight();
    return 0;
}
