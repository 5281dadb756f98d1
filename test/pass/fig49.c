/* Seed 002 Figure 4.9 / Table 4.1: the statements sit on lines 1-5 as in
 * the figure; the declarations on line 1000 and the return on 2000. */
int fig49(int N)
{
#line 1000
    int a, b, c, i;
#line 1
    a = 8;
    b = a * a;
    for (i = 0; i < N; i++)
        b = b + i;
    c = a + b;
#line 2000
    return c;
}

int main(void)
{
    return fig49(4) == 78 ? 0 : 1;
}
