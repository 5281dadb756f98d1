/* Awkward C for the pass: it must neither crash nor change results. */
#include <complex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct flags { unsigned ready : 1; unsigned count : 7; int value; };
union number { int i; float f; unsigned char bytes[4]; };
struct pair { double first, second; };
struct node { int value; struct node *next; };

static jmp_buf escape;
static _Atomic int hits;

static struct pair make_pair(double a, double b)
{
    struct pair p = {a, b};
    return p;
}

static int sum_varargs(int count, ...)
{
    va_list args;
    va_start(args, count);
    int total = 0;
    for (int i = 0; i < count; i++)
        total += va_arg(args, int);
    va_end(args);
    return total;
}

static int apply(int (*op)(int), int value) { return op(value); }
static int twice(int v) { return v * 2; }

static int vla_sum(int n)
{
    int values[n];
    for (int i = 0; i < n; i++)
        values[i] = i * i;
    int total = 0;
    for (int i = 0; i < n; i++)
        total += values[i];
    return total;
}

static int list_length(struct node *head)
{
    int length = 0;
    for (struct node *p = head; p; p = p->next)
        length++;
    return length;
}

static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static int classify(int v)
{
    switch (v % 4) {
    case 0: return 10;
    case 1: v += 3; /* fall through */
    case 2: return v;
    default: break;
    }
    if (v > 100)
        goto big;
    return -v;
big:
    return 100;
}

static void bail(int code) { longjmp(escape, code); }

static int spin_until(int limit)
{
    int i = 0;
    for (;;) {
        if (++i >= limit)
            break;
    }
    return i;
}

int main(void)
{
    struct flags f = {0};
    f.ready = 1;
    f.count = 5;
    f.value = f.count * 3;
    union number num;
    num.f = 1.5f;
    struct pair p = make_pair(1.25, 2.5);
    struct pair copy = p;
    copy.second += p.first;
    struct node nodes[3] = {{1, &nodes[1]}, {2, &nodes[2]}, {3, NULL}};
    double complex z = 1.0 + 2.0 * I;
    z = z * z;
    char text[32];
    strcpy(text, "ppw");
    strcat(text, "-torture");
    int caught = setjmp(escape);
    if (!caught)
        bail(7);
    atomic_fetch_add(&hits, 3);
    int *heap = malloc(4 * sizeof *heap);
    memset(heap, 0, 4 * sizeof *heap);
    heap[2] = apply(twice, 21);
    printf("%u %u %d %02x %.2f %d %d %d %d %.1f %.1f %s %d %d %d %d\n", f.ready, f.count, f.value,
           num.bytes[3], copy.second, sum_varargs(3, 1, 2, 3), vla_sum(5), list_length(nodes),
           fib(10), creal(z), cimag(z), text, caught, atomic_load(&hits), heap[2],
           classify(5) + classify(8) + classify(203) + spin_until(50));
    free(heap);
    return 3;
}
