/* The user-event API (ppw/ppw.h) and ppw_control: a named region with a
 * printf-style description, and a stretch of work with measurement off. */
#include <stdio.h>
#include <time.h>

#include "ppw/ppw.h"

static double spin(double seconds)
{
    struct timespec start, now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    double x = 1;
    do {
        for (int i = 0; i < 10000; i++)
            x = x * 1.0000001 + 1e-9;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    } while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) * 1e-9 < seconds);
    return x;
}

int main(void)
{
    unsigned solve = ppw_create_event("solve", "iteration %d of %s");
    double x = 0;
    for (int i = 0; i < 3; i++) {
        ppw_event_start(solve, i, "three");
        x += spin(0.02);
        ppw_event_end(solve, i, "three");
    }
    int before = ppw_control(0); /* no events, no samples */
    ppw_event_start(solve, 99, "hidden");
    x += spin(0.2);
    ppw_event_end(solve, 99, "hidden");
    ppw_control(before);
    printf("id %s, result %d\n", solve ? "given" : "none", x > 0);
    return 0;
}
