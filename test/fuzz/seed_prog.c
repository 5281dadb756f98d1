/* The program whose real run seeds the fuzz targets (run_fuzz.sh): built
 * with ppw-cc, it makes every kind of record a run holds -- samples with
 * deep and spawned stacks, pthread and OpenMP spawn contexts (parallel and
 * task), GASP lock events and a user region with a description in both
 * the profile and the trace -- and a static section with fields, globals
 * and call-site bindings. */
#include <pthread.h>
#include <stdio.h>

#include "ppw/ppw.h"

struct grid {
    double *cells;
    long n;
    double total;
};

static double weights[4096];
static pthread_mutex_t total_lock = PTHREAD_MUTEX_INITIALIZER;

static double relax(double *cells, long n, int sweeps)
{
    double change = 0;
    for (int s = 0; s < sweeps; s++)
        for (long i = 1; i < n - 1; i++) {
            double next = (cells[i - 1] + cells[i + 1]) * 0.5 * weights[i % 4096];
            change += next - cells[i];
            cells[i] = next;
        }
    return change;
}

static void *worker(void *arg)
{
    struct grid *g = arg;
    double change = relax(g->cells, g->n, 40);
    pthread_mutex_lock(&total_lock);
    g->total += change;
    pthread_mutex_unlock(&total_lock);
    return NULL;
}

int main(void)
{
    static double cells[2][20000];
    struct grid grids[2] = {{cells[0], 20000, 0}, {cells[1], 20000, 0}};
    for (int i = 0; i < 4096; i++)
        weights[i] = 1.0 - i * 1e-6;
    for (long i = 0; i < 20000; i++)
        cells[0][i] = cells[1][i] = (double)(i % 7);
    unsigned phase = ppw_create_event("phase", "phase %d");

    ppw_event_start(phase, 1);
    pthread_t threads[2];
    for (int t = 0; t < 2; t++)
        pthread_create(&threads[t], NULL, worker, &grids[t]);
    for (int t = 0; t < 2; t++)
        pthread_join(threads[t], NULL);
    ppw_event_end(phase, 1);

    ppw_event_start(phase, 2);
    double sum = 0;
#pragma omp parallel for reduction(+ : sum)
    for (long i = 0; i < 2000000; i++)
        sum += weights[i % 4096] * (double)(i & 15);
#pragma omp parallel
#pragma omp single
    for (int k = 0; k < 8; k++) {
#pragma omp task firstprivate(k) shared(cells)
        relax(cells[k & 1], 20000, 10);
    }
    ppw_event_end(phase, 2);

    printf("%d %d\n", grids[0].total != 0, sum > 0);
    return 0;
}
