// Not in the labelled set (its name is in run.sh's list of programs with their own checks):
// run.sh builds it at -O0 and -O2 and runs it as `allocator_top MODE SIZE`.
// glibc keeps the address of its top chunk (main_arena.top) in the C library's data, which the
// exit scan reads as roots. That address is a chunk header, 16 bytes below where the next block
// would start: inside the last block carved from the top chunk when its size is not a multiple
// of 16 (17, 24, 100, 104), as the bins' free chunks are inside the blocks before them.
//   leak SIZE   the last block allocated, SIZE bytes, is lost: one unreachable object.
//   keep SIZE   the same block kept in a global (free SIZE: freed): nothing reported.
//   bins SIZE   16 blocks of SIZE bytes lost, each followed by one freed: the freed chunks past
//               the thread cache go to the arena's bins, whose heads (in the C library's data)
//               are their headers, inside the lost blocks: all 16 unreachable.
//   libc SIZE   what the C library holds for the program, reachable only from its own data
//               (setenv's environment, a FILE left open and its buffer, stdout's buffer, a
//               setvbuf buffer, an on_exit argument, 40 atexit handlers, tzset's strings),
//               then a SIZE-byte block kept: nothing reported.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char *volatile kept;
static int handlers_run;

static void on_exit_handler(int status, void *arg)
{
    (void)status;
    handlers_run += ((char *)arg)[0] == 'a';   /* arg stays allocated: libc holds it */
}
static void atexit_handler(void) { handlers_run++; }

static __attribute__((noinline)) char *last_block(size_t n)
{
    char *p = malloc(n);
    memset(p, 'x', n);
    return p;
}

static __attribute__((noinline)) void leak_block(size_t n)
{
    char *p = last_block(n);
    if (p[n / 2] != 'x')
        puts("?");
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    size_t n = strtoul(argv[2], NULL, 0);
    printf("%s %zu\n", argv[1], n);   /* stdout's buffer first: the block below is the last one */
    if (strcmp(argv[1], "libc") == 0) {
        char name[32];
        for (int i = 0; i < 20; i++) {
            snprintf(name, sizeof name, "VIGIL_TEST_VAR_%d", i);
            setenv(name, "some value", 1);
        }
        FILE *f = fopen("/dev/null", "w");   /* never closed: glibc's list of files holds it */
        if (f)
            fprintf(f, "buffered %d\n", 1);
        static FILE *g;
        g = tmpfile();
        if (g) {
            char *buf = malloc(8192);         /* the program's own buffer, held by the FILE only */
            setvbuf(g, buf, _IOFBF, 8192);
            fputs("held by the FILE\n", g);
        }
        char *arg = malloc(24);               /* in the static exit list: held by its entry */
        strcpy(arg, "arg");
        on_exit(on_exit_handler, arg);
        for (int i = 0; i < 40; i++)           /* past the 32 static slots: a block libc allocates */
            atexit(atexit_handler);
        setenv("TZ", "Europe/Paris", 1);
        tzset();
        time_t t = 0;
        struct tm *tm = localtime(&t);
        printf("%d\n", tm ? tm->tm_year : 0);
        fflush(stdout);
        kept = last_block(n);
    } else if (strcmp(argv[1], "bins") == 0) {
        char *freed[16];
        for (int i = 0; i < 16; i++) {
            leak_block(n);
            freed[i] = malloc(n);
        }
        for (int i = 0; i < 16; i++)
            free(freed[i]);
    } else if (strcmp(argv[1], "keep") == 0) {
        kept = last_block(n);
    } else if (strcmp(argv[1], "free") == 0) {
        free(last_block(n));
    } else {
        leak_block(n);
    }
    return 0;
}
