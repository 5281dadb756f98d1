/* pthreads whose start routine writes through a struct argument; each
 * worker burns CPU in a call chain so its samples have real stacks. */
#include <pthread.h>
#include <stdio.h>

struct job {
    int id;
    long n;
    double result;
};

__attribute__((noinline)) static double crunch(long n, int seed)
{
    double s = seed;
    for (long i = 0; i < n; i++)
        s += (double)(i % 13) * 1e-9 / (1.0 + (double)(i & 3));
    return s;
}

static void *worker(void *arg)
{
    struct job *job = arg;
    job->result = crunch(job->n, job->id);
    return NULL;
}

int main(void)
{
    enum { N = 3 };
    pthread_t threads[N];
    struct job jobs[N];
    for (int i = 0; i < N; i++) {
        jobs[i] = (struct job){i, 60000000L, 0.0};
        pthread_create(&threads[i], NULL, worker, &jobs[i]);
    }
    double total = crunch(20000000L, 9);
    for (int i = 0; i < N; i++) {
        pthread_join(threads[i], NULL);
        total += jobs[i].result;
    }
    printf("total %d\n", total > 0.0);
    return 0;
}
