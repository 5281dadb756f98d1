/* pthread workers writing through their argument: the work structs'
 * results (and so jobs) carry the time. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct job {
    long n;
    double result;
};

static void *worker(void *arg)
{
    struct job *job = arg;
    double acc = 0;
    for (long i = 0; i < job->n; i++)
        acc += (double)(i % 7) / (1.0 + (double)(i & 1023));
    job->result = acc;
    return NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 150000000L;
    struct job jobs[2] = {{n, 0}, {n, 0}};
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&threads[i], NULL, worker, &jobs[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], NULL);
    printf("%.3f\n", jobs[0].result + jobs[1].result);
    return 0;
}
