/* Threads that block every signal (runtime.sigblock): one works and checks
 * that its mask stayed what it set; another is still blocked in a sleep,
 * all signals blocked, when main returns.  The program must finish, with
 * the same output. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "spin.h"

__attribute__((noinline)) static double work(double seconds)
{
    return spin_for(CLOCK_THREAD_CPUTIME_ID, seconds);
}

static int same_mask(const sigset_t *a, const sigset_t *b)
{
    for (int sig = 1; sig < SIGRTMAX; sig++)
        if (sigismember(a, sig) != sigismember(b, sig))
            return 0;
    return 1;
}

static void *blocked_worker(void *arg)
{
    sigset_t all, set, now;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_sigmask(SIG_BLOCK, NULL, &set);
    double x = work(0.3);
    pthread_sigmask(SIG_BLOCK, NULL, &now);
    *(int *)arg = same_mask(&set, &now) && sigismember(&now, SIGRTMIN + 4) && x > 0;
    return NULL;
}

static void *blocked_sleeper(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    work(0.05);
    for (;;)
        sleep(100);
    return NULL;
}

int main(void)
{
    int kept = 0;
    pthread_t worker, sleeper;
    pthread_create(&sleeper, NULL, blocked_sleeper, NULL);
    pthread_detach(sleeper);
    pthread_create(&worker, NULL, blocked_worker, &kept);
    double x = work(0.3);
    pthread_join(worker, NULL);
    printf("mask kept: %s\n", kept ? "yes" : "no");
    printf("main %d\n", x > 0);
    return 0;
}
