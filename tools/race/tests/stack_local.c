// race-test: a local variable shared by address: main passes &local to a thread that updates
// it while main reads it, with no lock (the tool follows a thread's own stack only once
// another thread touched it there): racy
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void *poke(void *arg)
{
    int *p = arg;
    for (int i = 0; i < 3; i++) {
        *p += 1; // RACE
        usleep(1000);
    }
    return NULL;
}

int main(void)
{
    int local = 0;
    pthread_t t;
    pthread_create(&t, NULL, poke, &local);
    int seen = 0;
    for (int i = 0; i < 3; i++) {
        usleep(1000);
        seen += local; // RACE
    }
    pthread_join(t, NULL);
    printf("%d\n", seen >= 0);
    return 0;
}
