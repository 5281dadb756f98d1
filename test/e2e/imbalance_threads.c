/* Thread imbalance (ctest e2e.imbalance_threads): the main thread and one
 * pthread each update their own array, held by the jobs array of main; the
 * pthread does RATIO times the work of the main thread (argv[1], default 3;
 * 1 is the balanced control).  Each thread measures the CPU time its work
 * took, printed on stderr ("cpu MAIN_NS PTHREAD_NS"): on a loaded VM equal
 * work can take unequal CPU time, and CPU time is what is sampled. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { N = 4096 };

struct job {
    double *a;
    long reps;
    long long cpu_ns;
};

static long long thread_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void *work(void *arg)
{
    struct job *job = arg;
    long long start = thread_cpu_ns();
    for (long r = 0; r < job->reps; r++)
        for (long i = 0; i < N; i++)
            job->a[i] = job->a[i] * 0.999 + (double)((i ^ r) & 15) / (1.0 + (double)(i & 7));
    job->cpu_ns = thread_cpu_ns() - start;
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
    fprintf(stderr, "cpu %lld %lld\n", jobs[0].cpu_ns, jobs[1].cpu_ns);
    free(jobs[0].a);
    free(jobs[1].a);
    return 0;
}
