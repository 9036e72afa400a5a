// exit() with a non-zero code from deep inside calls, after output to stdout and stderr.
#include <stdio.h>
#include <stdlib.h>

static void fail_deep(int level) {
    if (level == 0) {
        fprintf(stderr, "error: giving up\n");
        exit(42);
    }
    fail_deep(level - 1);
}

int main(int argc, char **argv) {
    (void)argv;
    printf("working\n");
    if (argc > 5) return 3;
    fail_deep(10);
    return 0;
}
