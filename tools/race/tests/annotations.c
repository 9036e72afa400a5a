// race-test: the API of <vigil/race.h>: a statistics counter marked benign is not reported
// (the unmarked one beside it is), and a hand-written spin lock announced with
// vigil_race_lock_acquired/released protects its data (its lock word, touched by atomics
// the tool cannot tell from plain accesses, is marked benign)
// expect-message: data race on unmarked_stat:
#include <pthread.h>
#include <stdio.h>
#include <vigil/race.h>

#pragma weak vigil_race_benign
#pragma weak vigil_race_lock_acquired
#pragma weak vigil_race_lock_released

long benign_stat;
long unmarked_stat;
int spin_word;
long protected_total;

static void spin_lock(int *w)
{
    while (__atomic_exchange_n(w, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(w, __ATOMIC_RELAXED))
            ;
    if (vigil_race_lock_acquired)
        vigil_race_lock_acquired(w);
}

static void spin_unlock(int *w)
{
    if (vigil_race_lock_released)
        vigil_race_lock_released(w);
    __atomic_store_n(w, 0, __ATOMIC_RELEASE);
}

static __attribute__((noinline)) void count_event(void)
{
    benign_stat++;
    unmarked_stat++; // RACE
}

static __attribute__((noinline)) void work(long k)
{
    count_event();
    spin_lock(&spin_word);
    protected_total += k;
    spin_unlock(&spin_word);
}

static void *worker(void *arg)
{
    for (int i = 0; i < 3; i++)
        work((long)arg);
    return NULL;
}

int main(void)
{
    if (vigil_race_benign) {
        vigil_race_benign(&benign_stat, sizeof benign_stat);
        vigil_race_benign(&spin_word, sizeof spin_word);
    }
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, (void *)(i + 1));
    count_event();   /* main takes no lock until the joins */
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("total %ld\n", protected_total);
    return 0;
}
