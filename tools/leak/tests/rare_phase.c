// leak-test: rare_phase -- objects read only in a phase that recurs every 0.8 s (stale_after 0.5)
// decision: not reported while the idle time stays under gap_factor (2) x the longest gap seen
// expect: absent make_setting
#include <stdio.h>
#include <stdlib.h>
#include "common.h"

#define N 32
struct setting { int key; int value; };
static struct setting *settings[N];

static __attribute__((noinline)) struct setting *make_setting(int key)
{
    struct setting *s = malloc(sizeof *s);
    s->key = key;
    s->value = key * 3;
    return s;
}

/* The rare phase: a periodic reload that reads every setting. */
static __attribute__((noinline)) int reload(void)
{
    int sum = 0;
    for (int i = 0; i < N; i++)
        sum += settings[i]->value;
    return sum;
}

int main(void)
{
    for (int i = 0; i < N; i++)
        settings[i] = make_setting(i);
    double start = seconds_now(), next_phase = start + 0.1;
    long total = 0;
    while (seconds_now() < start + 2.4) {
        if (seconds_now() >= next_phase) {
            total += reload();
            next_phase += 0.8;
        }
        busy_work(2000);
    }
    printf("total %d\n", total > 0);
    return 0;
}
