/* A program shared by the tools' fork tests (tools/memcheck/tests/run.sh, tools/leak/tests/run.sh);
 * its labelled overread is memcheck's. */
/* Fork while other threads allocate: two workers malloc and free blocks in a tight loop (of
 * under and over 256 bytes, now and then one over 1 MiB: every lock of the heap map, its
 * shards' and its large list's, is taken often), while the main thread forks again and
 * again. Each child, the only thread of its process, reads a byte of each of 200
 * blocks allocated before the worker started (8 MB over some 120 regions of 64 KiB: nearly
 * every shard of the heap map, whose lookups lock them), allocates and frees a few blocks, and
 * exits. A lock a worker held at the fork stays taken in the child unless the child frees
 * it: the child then spins at its first use of that shard. The three threads share one CPU,
 * so that the workers are preempted wherever they are (with CPUs of their own, or with one
 * worker, a fork seldom came while a worker held a lock: only when the machine was busy);
 * without the child's reset, 15-30% of the children hung.
 *
 * The parent waits for each child up to a deadline (then kills it, says so and stops), so a
 * hang shows in the output even without an outer timeout. The last child also reads past the
 * end of a block: its own report has that one error. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FORKS 150
#define POOL 200
#define POOL_BLOCK 40000
#define CHILD_DEADLINE_MS 5000

static volatile int stop;
static volatile long sink;
static char *pool[POOL];   /* by main before the workers start; read by the children only */

static void *worker(void *arg)
{
    (void)arg;
    unsigned long i = 0;
    while (!stop) {
        size_t size = 16 + (i * 7919) % 500;   /* small: the fill takes little of the loop */
        if (i % 4096 == 0)
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
    long s = 0;
    for (int i = 0; i < POOL; i++)
        s += pool[i][(i * 193) % POOL_BLOCK];
    char *blocks[16];
    for (int i = 0; i < 16; i++) {
        blocks[i] = malloc(100 + (size_t)i * 700);
        memset(blocks[i], i, 100);
        s += blocks[i][i];
    }
    char *big = malloc((3u << 20) + 100);
    if (!big)
        return 2;
    memset(big, 1, 4096);
    s += big[4095];
    free(big);
    for (int i = 0; i < 16; i++)
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
    int cpu = sched_getcpu();
    if (cpu >= 0) {   /* the workers and the children inherit it */
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        sched_setaffinity(0, sizeof one, &one);
    }
    for (int i = 0; i < POOL; i++)
        if (!(pool[i] = calloc(1, POOL_BLOCK)))   /* not read here: no check caches them */
            return 1;
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, worker, NULL) != 0)
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
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < POOL; i++)
        free(pool[i]);
    printf("forks %d: %d children exited 0, %d hung, %d failed\n", FORKS, ok, hung, failed);
    return hung || failed ? 3 : 0;
}
