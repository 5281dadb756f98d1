/* The user-event API (ppw/ppw.h) and ppw_control: a named region with a
 * printf-style description, and a stretch of work with measurement off. */
#include <stdio.h>
#include <time.h>

#include "spin.h"
#include "ppw/ppw.h"

static double spin(double seconds)
{
    return spin_for(CLOCK_THREAD_CPUTIME_ID, seconds);
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
