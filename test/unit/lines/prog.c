/* lines fixture: a static function inlined at -O2 (square_plus), itself
 * inlining a header's static inline function (clamp, util.h), inside a
 * noinline function (compute); and main.  The line numbers matter:
 * test_lines.sh checks the inlined chain by them. */
#include <stdio.h>
#include <stdlib.h>

#include "util.h"

static int square_plus(int x)
{
    int y = x * x;
    return y + clamp(x, 300);
}

__attribute__((noinline)) int compute(const int *v, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s = s * 31 + square_plus(v[i]);
    return s;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    int *v = malloc((size_t)n * sizeof *v);
    if (!v)
        return 1;
    for (int i = 0; i < n; i++)
        v[i] = i * 7 % 1000;
    printf("%d\n", compute(v, n));
    free(v);
    return 0;
}
