// race-test: a race on a heap object allocated while threads run: the report names the
// object and its allocation site
// expect-message: allocated in make_session
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct session { long id; long requests; };

static __attribute__((noinline)) struct session *make_session(void)
{
    struct session *s = calloc(1, sizeof *s);
    s->id = 7;
    return s;
}

static __attribute__((noinline)) void serve(struct session *s)
{
    s->requests++; // RACE
}

static void *worker(void *arg)
{
    for (int i = 0; i < 3; i++)
        serve(arg);
    return NULL;
}

static void *idle(void *arg)
{
    return arg;
}

int main(void)
{
    pthread_t t[3];
    pthread_create(&t[2], NULL, idle, NULL);   /* threads run from here on */
    pthread_join(t[2], NULL);
    struct session *s = make_session();
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, s);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("session %ld\n", s->id);
    free(s);
    return 0;
}
