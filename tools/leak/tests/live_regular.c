// leak-test: live_regular -- long-lived objects read all the time by a hot loop: not leaks
// expect: absent make_account
#include <stdio.h>
#include <stdlib.h>
#include "common.h"

#define N 64
struct account { long balance; long ops; };
static struct account *accounts[N];   /* live to the end, never freed */

static __attribute__((noinline)) struct account *make_account(long balance)
{
    struct account *a = malloc(sizeof *a);
    a->balance = balance;
    a->ops = 0;
    return a;
}

static __attribute__((noinline)) long audit(void)
{
    long total = 0;
    for (int i = 0; i < N; i++)
        total += accounts[i]->balance;
    return total;
}

int main(void)
{
    for (int i = 0; i < N; i++)
        accounts[i] = make_account(i * 10);
    double end = seconds_now() + 2.0;
    long total = 0;
    while (seconds_now() < end) {
        total += audit();
        busy_work(200);
    }
    printf("total %d\n", total > 0);
    return 0;
}
