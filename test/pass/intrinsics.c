/* SSE2 through clang's emmintrin.h, whose wrappers (_mm_add_pd...) are
 * static, always_inline and __nodebug__: the unit has debug info, the
 * wrappers have none, and ppw must not ask for -g because of them. */
#include <emmintrin.h>
#include <stdio.h>

double sum_pairs(const double *a, int n)
{
    __m128d acc = _mm_setzero_pd();
    for (int i = 0; i + 1 < n; i += 2)
        acc = _mm_add_pd(acc, _mm_loadu_pd(a + i));
    double out[2];
    _mm_storeu_pd(out, acc);
    return out[0] + out[1];
}

int main(void)
{
    double a[4] = {1, 2, 3, 4};
    printf("%g\n", sum_pairs(a, 4));
    return 0;
}
