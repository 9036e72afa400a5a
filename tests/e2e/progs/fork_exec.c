// fork (child and parent output, waitpid with exit codes) and exec of this program itself.
// e2e-reports: 5
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static long work(int n) { long s = 0; for (int i = 0; i < n; i++) s += (long)i * i % 7; return s; }

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--exec-child") == 0) {
        printf("exec child: argc=%d arg=%s work=%ld\n", argc, argv[2], work(1000));
        return 7;
    }
    printf("parent start\n");
    fflush(stdout);
    for (int i = 0; i < 3; i++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) { perror("fork"); return 1; }
        if (pid == 0) {
            printf("child %d work=%ld\n", i, work(10000 * (i + 1)));
            exit(10 + i);
        }
        int status;
        waitpid(pid, &status, 0);
        printf("parent: child %d exited=%d code=%d\n", i, WIFEXITED(status), WEXITSTATUS(status));
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        char *args[] = { argv[0], "--exec-child", "hello", NULL };
        execv(argv[0], args);
        perror("execv");
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    printf("parent: exec child code=%d\n", WEXITSTATUS(status));
    return 0;
}
