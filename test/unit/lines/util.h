/* lines fixture: a header function inlined into prog.c's square_plus. */
static inline int clamp(int x, int hi)
{
    if (x > hi)
        return hi;
    return x;
}
