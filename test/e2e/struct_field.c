/* A struct whose hot field is updated through a pointer parameter: the
 * time goes to sim.energy (through update's written-pointer parameter s),
 * not to the cold fields or the loop counters. */
#include <stdio.h>
#include <stdlib.h>

struct sim {
    double energy[4096];
    double mass[4096];
    long steps;
};

__attribute__((noinline)) static void update(struct sim *s, int n, double dt)
{
    for (int i = 0; i < n; i++)
        s->energy[i] = s->energy[i] * (1.0 - dt) + dt * (double)(i % 17) / (1.0 + s->energy[i]);
    s->steps++;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 60000;
    static struct sim sim;
    for (int i = 0; i < 4096; i++)
        sim.mass[i] = 1.0 + i;
    for (int r = 0; r < reps; r++)
        update(&sim, 4096, 1e-3);
    printf("%ld %.3f\n", sim.steps, sim.energy[17] + sim.mass[3]);
    return 0;
}
