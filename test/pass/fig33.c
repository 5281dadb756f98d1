/* Seed 002 Figure 3.3 / Table 3.1: foo at lines 5-17, as in the figure. */
/* (this line keeps foo at line 5, as in the figure) */
#define N 10

int foo(int *x, int increment)
{
    int i, temp;
    int med=increment;
    for(i=0; i<N ;i++){
        temp = i+3;
        if(temp%2 == 0)
            x[i] = med + 1;
        else
            x[i] = med - 1;
    }
    return temp;
}

int main(void)
{
    int data[N];
    int r = foo(data, 4);
    return r + data[3] - 16;
}
