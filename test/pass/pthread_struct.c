/* pthread_create with a struct argument: the argument binds to the start
 * routine's parameter, and each field to the same field under it. */
#include <pthread.h>
#include <stdio.h>

struct job { int id; double result; const double *data; int n; };

static void *worker(void *arg)
{
    struct job *j = arg;
    double s = 0;
    for (int i = 0; i < j->n; i++)
        s += j->data[i];
    j->result = s * j->id;
    return NULL;
}

int main(void)
{
    double data[100];
    struct job jobs[2];
    pthread_t threads[2];
    for (int i = 0; i < 100; i++)
        data[i] = i;
    for (int t = 0; t < 2; t++) {
        jobs[t].id = t + 1;
        jobs[t].data = data;
        jobs[t].n = 100;
        pthread_create(&threads[t], NULL, worker, &jobs[t]);
    }
    for (int t = 0; t < 2; t++)
        pthread_join(threads[t], NULL);
    printf("%g %g\n", jobs[0].result, jobs[1].result);
    return 0;
}
