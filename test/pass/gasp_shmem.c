/* OpenSHMEM calls whose operands sit at every kind of position the GASP
 * table knows: a context first (shmem_ctx_*), strided forms, an atomic
 * with a condition, a collective with strides, a reduction, a wait, a
 * non-blocking get of bytes, and p and g of doubles (operands not
 * forwarded, results not widened).  The prototypes are OpenSHMEM 1.4's
 * (Open MPI's shmem.h), declared here so that the test needs no SHMEM
 * library: gasp_shmem_lib.c defines them, doing nothing.  Prints the
 * addresses the events must carry; check_gasp.sh shmem compares. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct shmem_ctx *shmem_ctx_t;
void shmem_ctx_int_iput(shmem_ctx_t ctx, int *dest, const int *source, ptrdiff_t dst,
                        ptrdiff_t sst, size_t nelems, int pe);
long shmem_ctx_long_atomic_compare_swap(shmem_ctx_t ctx, long *dest, long cond, long value,
                                        int pe);
void shmem_alltoalls64(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                       size_t nelems, int PE_start, int logPE_stride, int PE_size, long *pSync);
double shmem_double_g(const double *addr, int pe);
void shmem_ctx_double_p(shmem_ctx_t ctx, double *addr, double value, int pe);
void shmem_long_wait_until(long *ivar, int cmp, long value);
void shmem_int_sum_to_all(int *dest, const int *source, int nreduce, int PE_start,
                          int logPE_stride, int PE_size, int *pWrk, long *pSync);
void shmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe);

static int ints[16], more[16], work[16];
static long longs[16], sync_array[16];
static double doubles[4];
static char bytes[32];

static void show(const char *name, const void *p)
{
    printf("%s %#llx\n", name, (unsigned long long)(uintptr_t)p);
}

int main(void)
{
    shmem_ctx_int_iput(NULL, ints, more, 2, 3, 7, 3);
    shmem_ctx_long_atomic_compare_swap(NULL, &longs[1], 5, 6, 2);
    shmem_alltoalls64(longs, &longs[8], 1, 1, 9, 0, 0, 4, sync_array);
    double got = shmem_double_g(&doubles[1], 1);
    shmem_ctx_double_p(NULL, &doubles[2], 2.5 + got, 3);
    shmem_long_wait_until(&longs[3], 0, 0);
    shmem_int_sum_to_all(ints, more, 5, 0, 0, 4, work, sync_array);
    shmem_getmem_nbi(bytes, &bytes[16], 11, 2);
    show("ints", ints);
    show("long1", &longs[1]);
    show("double1", &doubles[1]);
    show("double2", &doubles[2]);
    show("long3", &longs[3]);
    show("byte16", &bytes[16]);
    return 0;
}
