/* The parent forks; the child works in child_work, the parent in parent_work (about 0.25 s of
 * CPU each). Each process's profile holds its own work only. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long child_work(unsigned long n)
{
    unsigned long x = 1;
    for (unsigned long i = 0; i < n; i++)
        x = x * 6364136223846793005ul + i;
    return x;
}

__attribute__((noinline)) static unsigned long parent_work(unsigned long n)
{
    unsigned long x = 5;
    for (unsigned long i = 0; i < n; i++)
        x = (x ^ i) * 2862933555777941757ul;
    return x;
}

int main(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        sink += child_work(250000000);
        return 0;
    }
    sink += parent_work(250000000);
    int status;
    waitpid(pid, &status, 0);
    printf("forks: child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}
