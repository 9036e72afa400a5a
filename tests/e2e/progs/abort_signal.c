// A program killed by a signal (abort): the exit status must say SIGABRT for every build.
#include <stdio.h>
#include <stdlib.h>

static int check(int value) {
    if (value > 3) {
        printf("about to abort at %d\n", value);
        fflush(stdout);
        abort();
    }
    return value;
}

int main(void) {
    int sum = 0;
    for (int i = 0; i < 10; i++) sum += check(i);
    printf("not reached %d\n", sum);
    return 0;
}
