// leak-test: big_holder -- the exit scan reads large objects only in the pages the program
// touched (pagemap). A 4 MiB table, kept, touched in two pages only: the only pointers to 20
// records sit in one of them, 3 MiB in, so the records stay reachable. Another 4 MiB table held
// the only pointers to 10 other records and was freed: those are lost.
// expect: absent held_record
// expect: found lost_record unreachable objects=10
#include <stdlib.h>
#include <string.h>
#include "common.h"

#define TABLE (4u << 20)
static char **volatile table;

static __attribute__((noinline)) char *held_record(int i)
{
    char *r = malloc(48);
    memset(r, i, 48);
    return r;
}

static __attribute__((noinline)) char *lost_record(int i)
{
    char *r = malloc(48);
    memset(r, i, 48);
    return r;
}

int main(void)
{
    table = malloc(TABLE);                       /* untouched but for two pages */
    table[0] = NULL;
    char **slots = (char **)((char *)table + (3u << 20));
    for (int i = 0; i < 20; i++)
        slots[i] = held_record(i);
    char **gone = malloc(TABLE);
    for (int i = 0; i < 10; i++)
        gone[1000 + i] = lost_record(i);
    free(gone);
    return 0;
}
