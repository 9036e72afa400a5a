// leak-test: error_path -- a hot request loop frees its buffers, except on a rare error path
// expect: found make_request unreachable last=handle_error
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"

struct request { int id; int status; char payload[48]; };

static __attribute__((noinline)) struct request *make_request(int id)
{
    struct request *q = malloc(sizeof *q);
    q->id = id;
    q->status = 0;
    memset(q->payload, id & 0xff, sizeof q->payload);
    return q;
}

/* Rarely executed: sampled at ~100% by the adaptive schedule. */
static __attribute__((noinline)) int handle_error(struct request *q)
{
    q->status = -1;
    snprintf(q->payload, sizeof q->payload, "error in request %d", q->id);
    return -1;   /* BUG: returns without freeing q */
}

static __attribute__((noinline)) int serve(int id)
{
    struct request *q = make_request(id);
    unsigned long sum = 0;
    for (size_t i = 0; i < sizeof q->payload; i++)
        sum += (unsigned char)q->payload[i];
    if (id % 5003 == 4999)
        return handle_error(q);
    leak_test_sink += sum;
    free(q);
    return 0;
}

int main(void)
{
    double end = seconds_now() + 1.5;
    int errors = 0, served = 0;
    while (seconds_now() < end)
        for (int k = 0; k < 1000; k++)
            errors += serve(served++) != 0;
    printf("served %d, errors %d\n", served > 0, errors > 0);
    return 0;
}
