/* Spins at a fixed stack depth (default 20 frames below main) through a
 * fixed amount of work (UNITS blocks of 20,000 dependent multiply-adds,
 * about 35 us each), so that the sample handler's cost can be read at a
 * known depth: from the handler's own clock, and from the CPU time the same
 * work takes at two sampling periods.  (A fixed CPU time instead would hide
 * the handler, whose time counts as the thread's.)
 *
 *   deep [DEPTH [UNITS]]       defaults: 20 frames, 30000 units (~1 s) */
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;

__attribute__((noinline)) static void spin_at(int depth, long units)
{
    if (depth > 0) {
        spin_at(depth - 1, units);
        sink += 1; /* not a tail call */
        return;
    }
    double x = 1;
    for (long u = 0; u < units; u++)
        for (int i = 0; i < 20000; i++)
            x = x * 1.0000001 + 1e-9;
    sink = x;
}

int main(int argc, char **argv)
{
    int depth = argc > 1 ? atoi(argv[1]) : 20;
    long units = argc > 2 ? atol(argv[2]) : 30000;
    spin_at(depth, units);
    printf("ok\n");
    return 0;
}
