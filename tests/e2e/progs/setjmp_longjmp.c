// setjmp/longjmp out of nested calls and loops, and sigsetjmp/siglongjmp.
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>

static jmp_buf env;
static sigjmp_buf sigenv;
static volatile int depth_reached;

static void dive(int depth, int limit) {
    depth_reached = depth;
    for (int i = 0; i < 3; i++) {
        if (depth == limit && i == 1) longjmp(env, depth * 10 + i);
        if (i == 0 && depth < limit) dive(depth + 1, limit);
    }
}

static void on_usr1(int sig) { siglongjmp(sigenv, sig); }

int main(void) {
    volatile int rounds = 0;
    volatile long total = 0;
    for (int limit = 1; limit <= 20; limit++) {
        int r = setjmp(env);
        if (r == 0) {
            dive(0, limit);
            printf("not reached\n");
        } else {
            rounds++;
            total += r + depth_reached;
        }
    }
    printf("rounds=%d total=%ld\n", rounds, total);

    signal(SIGUSR1, on_usr1);
    volatile int caught = 0;
    for (int i = 0; i < 3; i++) {
        int s = sigsetjmp(sigenv, 1);
        if (s == 0) raise(SIGUSR1);
        else caught += s == SIGUSR1;
    }
    printf("caught=%d\n", caught);
    return 0;
}
