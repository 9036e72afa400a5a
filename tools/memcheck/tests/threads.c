/* Threads: four workers allocate, fill, read and free blocks of their own and hand blocks to
 * each other through a locked slot; one worker reads a field nobody wrote. Blocks freed by one
 * thread and reused by another must not be reported. */
#include "common.h"

#include <pthread.h>

struct msg { int len; int seq; int prio; char body[20]; };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct msg *slot;

__attribute__((noinline)) static int urgent(const struct msg *m)
{
    return m->prio > 5;               // MC uninitialized-read
}

static void *worker(void *arg)
{
    long id = (long)arg, sum = 0;
    for (int i = 0; i < 2000; i++) {
        struct msg *m = malloc(sizeof *m);
        m->len = i;
        m->seq = (int)id;
        memset(m->body, 'a' + (int)id, sizeof m->body);
        if (id == 3 && i == 1000)
            mc_sink_int = urgent(m);  /* prio: never written */
        else
            m->prio = 1;
        sum += m->len + m->body[i % 20] + m->prio;
        pthread_mutex_lock(&lock);
        struct msg *old = slot;
        slot = m;
        pthread_mutex_unlock(&lock);
        if (old) {
            sum += old->seq + old->body[3];
            free(old);
        }
    }
    return (void *)sum;
}

int main(void)
{
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    long total = 0;
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        total += (long)r;
    }
    free(slot);
    printf("%d\n", total > 0);
    return 0;
}
