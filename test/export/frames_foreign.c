/* Code without a blame graph for frames.c: built with plain clang, -g. */
double foreign_sum(const double *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += v[i] * v[i];
    return s;
}

/* No DWARF (nodebug): the frame is its symbol alone, a name with the
 * folded format's separators in it. */
__attribute__((nodebug)) double odd_sum(const double *v, int n) __asm__("odd;sum name#1%");
__attribute__((nodebug)) double odd_sum(const double *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += v[i] * 3.0 - v[i];
    return s;
}
