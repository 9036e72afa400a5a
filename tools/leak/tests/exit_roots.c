// leak-test: exit_roots -- what the exit scan must not take for roots, and what it must.
// A linked list allocated first (its head is the lowest heap object) and dropped as a whole:
// all 100 nodes unreachable, though the leak tool's own bookkeeping (the heap's bounds, its
// access slots, the runtime's access buffer) and the report writer's stack frames, which reuse
// the stack that built the list, hold copies of their addresses. Ten buffers leaked in the
// last moments before exit (the same millisecond as the scan): all ten found. argv[0] pointed
// at a heap copy (as make does): reachable from the argument vector, above main's frame.
// expect: found build_list unreachable objects=100
// expect: found last_moment unreachable objects=10
// expect: absent copy_name
#include <stdlib.h>
#include <string.h>
#include "common.h"

struct node { struct node *next; char pad[24]; };
static struct node *volatile list;
static char *volatile sink;

static __attribute__((noinline)) void build_list(int n)
{
    struct node *tail = NULL;
    for (int i = 0; i < n; i++) {     /* appended: the head is the first, lowest object */
        struct node *nd = malloc(sizeof *nd);
        nd->next = NULL;
        memset(nd->pad, i, sizeof nd->pad);
        if (tail)
            tail->next = nd;
        else
            list = nd;
        tail = nd;
    }
}

static __attribute__((noinline)) void last_moment(void)
{
    for (int i = 0; i < 10; i++) {
        sink = malloc(10);            /* each overwritten pointer leaks its predecessor */
        strcpy(sink, "leak");
    }
    sink = NULL;
}

static __attribute__((noinline)) char *copy_name(const char *s)
{
    char *p = malloc(strlen(s) + 1);
    return strcpy(p, s);
}

int main(int argc, char **argv)
{
    (void)argc;
    argv[0] = copy_name(argv[0]);
    build_list(100);
    for (struct node *n = list; n; n = n->next)   /* sampled accesses to every node */
        sink = n->pad;
    list = NULL;
    sink = NULL;
    last_moment();
    return 0;
}
