/* Fork while another thread allocates: a worker mallocs and frees blocks of every size in a
 * tight loop (small ones, ones of a few KiB, now and then one over 1 MiB: every lock of the
 * heap map, its shards' and its large list's, is taken often), while the main thread forks
 * again and again. Each child, the only thread of its process, allocates blocks over many
 * 64 KiB regions (so over nearly every shard of the heap map), reads and frees them, and exits.
 * A lock the worker held at the fork stays taken in the child unless the child resets it:
 * the child then spins at its first allocation on that shard (without the reset, some 5% of
 * the children did). The parent waits for each child up to a deadline (then kills it, says so
 * and stops), so a hang shows in the output even without an outer timeout. The last child
 * also reads past the end of a block: its own report has that one error. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FORKS 120
#define CHILD_BLOCKS 192
#define CHILD_DEADLINE_MS 10000

static volatile int stop;
static volatile long sink;

__attribute__((noinline)) static long sum(const char *p, size_t n)
{
    long s = 0;
    for (size_t i = 0; i < n; i += 512)
        s += p[i];
    return s;
}

static void *worker(void *arg)
{
    (void)arg;
    unsigned long i = 0;
    while (!stop) {
        size_t size = 16 + (i * 7919) % 6000;
        if (i % 512 == 0)
            size = (2u << 20) + 4096;   /* the large list */
        char *p = malloc(size);
        p[0] = (char)i;
        p[size - 1] = (char)i;
        sink += p[0] + p[size - 1];
        free(p);
        i++;
    }
    return NULL;
}

__attribute__((noinline)) static int past_end(const char *p, size_t n)
{
    return p[n];                      // MC heap-buffer-overflow
}

static int child(int last)
{
    static char *blocks[CHILD_BLOCKS];
    long s = 0;
    for (int i = 0; i < CHILD_BLOCKS; i++) {
        size_t size = 40000 + (size_t)i * 64;   /* together about 8 MiB: some 120 regions */
        blocks[i] = malloc(size);
        if (!blocks[i])
            return 2;
        memset(blocks[i], i, size);
        s += sum(blocks[i], size);
    }
    char *big = malloc((3u << 20) + 100);
    if (!big)
        return 2;
    memset(big, 1, 4096);
    s += sum(big, 4096);
    free(big);
    for (int i = 0; i < CHILD_BLOCKS; i++)
        free(blocks[i]);
    char *small = malloc(24);
    memset(small, 3, 24);
    if (last)
        s += past_end(small, 24);
    free(small);
    sink = s;
    return 0;
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 1;
    int ok = 0, hung = 0, failed = 0;
    for (int k = 0; k < FORKS; k++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) {
            failed++;
            continue;
        }
        if (pid == 0)
            _exit(child(k == FORKS - 1));
        int status = 0;
        long deadline = now_ms() + CHILD_DEADLINE_MS;
        pid_t got;
        while ((got = waitpid(pid, &status, WNOHANG)) == 0 && now_ms() < deadline)
            usleep(1000);
        if (got == 0) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            hung++;
            printf("child %d hung\n", k);
            break;   /* one is enough to fail */
        } else if (got == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            ok++;
        } else {
            failed++;
        }
    }
    stop = 1;
    pthread_join(t, NULL);
    printf("forks %d: %d children exited 0, %d hung, %d failed\n", FORKS, ok, hung, failed);
    return hung || failed ? 3 : 0;
}
