/* Every kind of frame 'ppw-blame export --to folded' writes, for the
 * export.folded round trip (check_export.sh): a function of the blame
 * graphs whose every instruction has line 0 (the '#line 0' below: DWARF
 * line 0, as optimised code often has), and calls into frames_foreign.c,
 * built without the plugin: a function with DWARF but no blame graph
 * (FUNCTION@@FILE:LINE:COL) and one without DWARF whose symbol holds the
 * separators ';' and ' ' and the escape and comment bytes '%' and '#'.
 * Each phase runs about a third of the time. */
#include <stdio.h>
#include <stdlib.h>

double foreign_sum(const double *v, int n);
double odd_sum(const double *v, int n) __asm__("odd;sum name#1%");

enum { N = 100000 };

#line 0
static __attribute__((noinline)) double zeroline(double *v, int n, int reps) { double acc = 0; for (int r = 0; r < reps; r++) for (int i = 0; i < n; i++) { v[i] = v[i] * 0.5 + r; acc += v[i]; } return acc; }
#line 21 "frames.c"

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 1000;
    double *v = calloc(N, sizeof *v);
    if (!v)
        return 1;
    double total = zeroline(v, N, reps);
    for (int r = 0; r < reps; r++)
        total += foreign_sum(v, N);
    for (int r = 0; r < reps; r++)
        total += odd_sum(v, N);
    printf("%g\n", total);
    free(v);
    return 0;
}
