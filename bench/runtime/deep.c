/* Spins at a fixed stack depth (default 20 frames below main) so that the
 * sample handler's cost can be read at a known depth. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile double sink;

__attribute__((noinline)) static void spin_at(int depth, double seconds)
{
    if (depth > 0) {
        spin_at(depth - 1, seconds);
        sink += 1; /* not a tail call */
        return;
    }
    struct timespec ts;
    double x = 1, now;
    do {
        for (int i = 0; i < 20000; i++)
            x = x * 1.0000001 + 1e-9;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        now = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    } while (now < seconds);
    sink = x;
}

int main(int argc, char **argv)
{
    int depth = argc > 1 ? atoi(argv[1]) : 20;
    double seconds = argc > 2 ? atof(argv[2]) : 2.0;
    spin_at(depth, seconds);
    printf("ok\n");
    return 0;
}
