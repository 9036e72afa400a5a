// leak-test: altstack_exit -- the program ends in a signal handler that runs on an alternate
// stack in .bss and calls _exit, as gnulib's c-stack does (m4): the exit scan must read that
// stack and the thread's own, not everything between them (a scan of hours before), and still
// find the buffers the program lost (19 or 20 of them: the thread's stack is read whole, so
// the dead frame of the last lose_buffer may still hold one)
// expect: found lose_buffer unreachable
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common.h"

static char alternate_stack[64 * 1024];
static char *kept;

static __attribute__((noinline)) void lose_buffer(int i)
{
    kept = malloc(64);
    memset(kept, i, 64);   /* the previous buffer is lost */
}

static void on_usr1(int sig)
{
    (void)sig;
    static const char msg[] = "handler: exiting\n";
    ssize_t ignored = write(1, msg, sizeof msg - 1);
    (void)ignored;
    _exit(0);
}

int main(void)
{
    for (int i = 0; i < 21; i++)
        lose_buffer(i);
    busy_work(100000);
    stack_t ss = { .ss_sp = alternate_stack, .ss_size = sizeof alternate_stack };
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_ONSTACK;
    if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0)
        return 2;
    raise(SIGUSR1);
    return 3;
}
