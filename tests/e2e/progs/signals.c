// Signal handlers: raise with a handler, SIGALRM from an interval timer, sigaction with SA_SIGINFO.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t usr1_count, alarm_count, info_code;

static void on_usr1(int sig) { (void)sig; usr1_count++; }
static void on_alarm(int sig) { (void)sig; alarm_count++; }
static void on_usr2(int sig, siginfo_t *info, void *context) { (void)sig; (void)context; info_code = info->si_code == SI_TKILL || info->si_code == SI_USER; }

int main(void) {
    signal(SIGUSR1, on_usr1);
    for (int i = 0; i < 5; i++) raise(SIGUSR1);
    printf("usr1=%d\n", (int)usr1_count);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_usr2;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR2, &sa, NULL);
    raise(SIGUSR2);
    printf("usr2 info=%d\n", (int)info_code);

    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGALRM);
    sigprocmask(SIG_BLOCK, &block, &old);
    signal(SIGALRM, on_alarm);
    struct itimerval timer = { { 0, 5000 }, { 0, 5000 } };
    setitimer(ITIMER_REAL, &timer, NULL);
    while (alarm_count < 3) sigsuspend(&old);
    struct itimerval stop = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &stop, NULL);
    printf("alarms>=3: %d\n", alarm_count >= 3);

    /* A signal arriving during a busy loop. */
    alarm_count = 0;
    sigprocmask(SIG_SETMASK, &old, NULL);
    struct itimerval once = { { 0, 0 }, { 0, 20000 } };
    setitimer(ITIMER_REAL, &once, NULL);
    volatile unsigned long spins = 0;
    while (!alarm_count) spins++;
    printf("alarm during loop: %d\n", (int)alarm_count);
    return 0;
}
