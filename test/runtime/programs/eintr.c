/* Blocking calls that a signal handler interrupts with EINTR whatever
 * SA_RESTART says (nanosleep, clock_nanosleep, poll, usleep, sem_timedwait) and the futex
 * waits of pthread_cond_wait, sem_wait and a contended mutex, in threads
 * that also burn CPU time, so sampling signals arrive all the time
 * (runtime.eintr: none of them may see EINTR under ppw).  Each thread burns
 * enough (40 ms of CPU time or more) for the test to tell that it was
 * sampled. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 3000

/* EINTR seen by: nanosleep, clock_nanosleep, sem_wait, sem_timedwait, mutex, poll, usleep */
static volatile int eintr[7];
static sem_t ping, pong;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int turn;
static double shared;

/* Writes its result: a call whose result was unused (or the same in every
 * round) was otherwise removed or hoisted out of the loop by clang -O2, and
 * the sleeper and the semaphore threads burned nothing. */
static volatile double burned;
__attribute__((noinline)) static double burn(int n)
{
    double x = 1;
    for (int i = 0; i < n; i++)
        x = x * 1.0000001 + 1e-9;
    burned = x;
    return x;
}

static void *sleeper(void *arg)
{
    (void)arg;
    struct timespec nap = {0, 20000};
    for (int i = 0; i < ROUNDS; i++) {
        burn(20000);
        if (nanosleep(&nap, NULL) != 0 && errno == EINTR)
            eintr[0]++;
        if (clock_nanosleep(CLOCK_MONOTONIC, 0, &nap, NULL) == EINTR)
            eintr[1]++;
        if (i % 8 == 0 && poll(NULL, 0, 1) < 0 && errno == EINTR)
            eintr[5]++;
        if (usleep(20) != 0 && errno == EINTR)
            eintr[6]++;
    }
    return NULL;
}

static void *sem_partner(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        while (sem_wait(&ping) != 0)
            if (errno == EINTR)
                eintr[2]++;
        burn(5000);
        sem_post(&pong);
    }
    return NULL;
}

static void *sem_driver(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        burn(5000);
        sem_post(&ping);
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += 10;
        while (sem_timedwait(&pong, &deadline) != 0)
            if (errno == EINTR)
                eintr[3]++;
    }
    return NULL;
}

/* Two threads alternate through a condition variable. */
static void *cond_player(void *arg)
{
    int me = (int)(long)arg;
    for (int i = 0; i < ROUNDS; i++) {
        pthread_mutex_lock(&lock);
        while (turn != me)
            pthread_cond_wait(&cond, &lock);
        shared += burn(5000);
        turn = !me;
        pthread_cond_broadcast(&cond);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

/* Contention: both threads burn CPU time while holding the mutex. */
static pthread_mutex_t contended = PTHREAD_MUTEX_INITIALIZER;
static void *contender(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        if (pthread_mutex_lock(&contended) != 0)
            eintr[4]++;
        shared += burn(9000);
        pthread_mutex_unlock(&contended);
    }
    return NULL;
}

int main(void)
{
    sem_init(&ping, 0, 0);
    sem_init(&pong, 0, 0);
    void *(*fns[])(void *) = {sleeper,     sem_partner, sem_driver, cond_player,
                              cond_player, contender,   contender};
    enum { N = sizeof(fns) / sizeof(fns[0]) };
    pthread_t t[N];
    for (long i = 0; i < N; i++)
        pthread_create(&t[i], NULL, fns[i], (void *)(long)(i == 4));
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    printf("EINTR seen by nanosleep %d, clock_nanosleep %d, sem_wait %d, sem_timedwait %d,"
           " pthread_mutex_lock %d, poll %d, usleep %d\n",
           eintr[0], eintr[1], eintr[2], eintr[3], eintr[4], eintr[5], eintr[6]);
    printf("done %d\n", shared > 0);
    return 0;
}
