// Not in the labelled set (run.sh checks it on its own): a daemon asked for its leaks while it
// runs. It builds a cache it keeps (reachable, touched every 100 ms), loses a list of 50 nodes
// (unreachable) and a table it keeps but never reads again (stale after leak.stale_after), then
// waits, as a server does, in nanosleep, until the file named by argv[1] exists. SIGUSR2 from
// outside must write a complete report into its directory while it waits; it then exits 0.
// With a second argument "busy" it spends the wait computing instead, half of it in the C
// library (memset of a buffer it allocated first), where a signal cannot be answered at once
// (malloc's locks may be held there): the report must still come, though the program neither
// allocates nor frees any more.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct node { struct node *next; char pad[40]; };
static char *volatile cache[16];
static char *volatile table;
static volatile unsigned long checksum;

static __attribute__((noinline)) void lose_list(int n)
{
    struct node *head = NULL;
    for (int i = 0; i < n; i++) {
        struct node *nd = malloc(sizeof *nd);
        memset(nd->pad, i, sizeof nd->pad);
        nd->next = head;
        head = nd;
    }
    head = NULL;
}

static __attribute__((noinline)) void fill_table(void)
{
    table = malloc(4096);
    memset(table, 7, 4096);
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3)
        return 2;
    for (int i = 0; i < 16; i++)
        cache[i] = calloc(1, 64);
    lose_list(50);
    fill_table();
    printf("ready\n");
    fflush(stdout);
    unsigned long sum = 0;
    if (argc == 3 && strcmp(argv[2], "busy") == 0) {
        char *buf = malloc(1 << 20);
        void *(*volatile fill)(void *, int, size_t) = memset;   /* a call into the C library */
        time_t end = time(NULL) + 60;
        for (long round = 0; time(NULL) < end && access(argv[1], F_OK) != 0; round++) {
            for (int i = 0; i < 16; i++)
                sum += cache[i][round % 64]++;
            for (int k = 0; k < 20; k++) {   /* half in memset, half in its own loop */
                fill(buf, (int)(round + k), 1 << 16);
                for (int i = 0; i < 1 << 16; i += 16)
                    sum += (unsigned char)buf[i] * (unsigned)i;
            }
        }
        free(buf);
        checksum = sum;
        printf("done\n");
        return 0;
    }
    for (int tick = 0; tick < 600 && access(argv[1], F_OK) != 0; tick++) {
        for (int i = 0; i < 16; i++)
            sum += cache[i][tick % 64]++;
        nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    }
    checksum = sum;
    printf("done\n");
    return 0;
}
