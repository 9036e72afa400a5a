// leak-test: lost_list -- a list whose only pointer, to its head, is overwritten: the head is the
// direct leak, the nodes are indirect (held only by leaked objects); a ring of two records that
// nothing points to: one stays direct (the first visited), the other is indirect
// expect: found make_head unreachable objects=1 indirect=0
// expect: found add_node unreachable objects=100 indirect=100
// expect: found make_ring unreachable objects=2 indirect=1
#include <stdio.h>
#include <stdlib.h>
#include "common.h"

struct node { struct node *next; long value; };
struct head { struct node *first; long count; };

static struct head *list;
static struct node *ring;

static __attribute__((noinline)) struct head *make_head(void)
{
    return calloc(1, sizeof(struct head));
}

static __attribute__((noinline)) void add_node(struct head *h, long value)
{
    struct node *n = malloc(sizeof *n);
    n->value = value;
    n->next = h->first;
    h->first = n;
    h->count++;
}

static __attribute__((noinline)) void make_ring(void)
{
    struct node *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    a->next = b, b->next = a;
    a->value = 1, b->value = 2;
    ring = a;
}

static __attribute__((noinline)) long sum(const struct head *h)
{
    long s = 0;
    for (const struct node *n = h->first; n; n = n->next)
        s += n->value;
    return s;
}

/* Called through a volatile pointer: main keeps no copy of what it loses. */
static __attribute__((noinline)) long lose_all(void)
{
    long total = sum(list) + ring->value + ring->next->value;
    list = NULL;   /* the head is lost, and with it every node */
    ring = NULL;
    return total;
}
static long (*volatile lose)(void) = lose_all;

int main(void)
{
    list = make_head();
    for (long i = 0; i < 100; i++)
        add_node(list, i);
    make_ring();
    long total = lose();
    double end = seconds_now() + 0.3;
    while (seconds_now() < end)
        busy_work(1000);
    printf("total %ld\n", total);
    return 0;
}
