/* Thread imbalance (ctest e2e.imbalance_threads): the main thread and one
 * pthread each update their own array, held by the jobs array of main; the
 * pthread does RATIO times the work of the main thread (argv[1], default 3;
 * 1 is the balanced control). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 4096 };

struct job {
    double *a;
    long reps;
};

static void *work(void *arg)
{
    struct job *job = arg;
    for (long r = 0; r < job->reps; r++)
        for (long i = 0; i < N; i++)
            job->a[i] = job->a[i] * 0.999 + (double)((i ^ r) & 15) / (1.0 + (double)(i & 7));
    return NULL;
}

int main(int argc, char **argv)
{
    long ratio = argc > 1 ? atol(argv[1]) : 3;
    long reps = argc > 2 ? atol(argv[2]) : 60000;
    struct job jobs[2];
    for (int k = 0; k < 2; k++) {
        jobs[k].a = calloc(N, sizeof(double));
        if (!jobs[k].a)
            return 1;
    }
    jobs[0].reps = reps;
    jobs[1].reps = reps * ratio;
    pthread_t heavy;
    pthread_create(&heavy, NULL, work, &jobs[1]);
    work(&jobs[0]);
    pthread_join(heavy, NULL);
    printf("%.3f\n", jobs[0].a[1] + jobs[1].a[1]);
    free(jobs[0].a);
    free(jobs[1].a);
    return 0;
}
