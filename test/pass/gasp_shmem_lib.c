/* Do-nothing OpenSHMEM entries for gasp_shmem.c (compiled without the
 * plugin): the calls exist, the events around them are what is tested. */
#include <stddef.h>

typedef struct shmem_ctx *shmem_ctx_t;

void shmem_ctx_int_iput(shmem_ctx_t ctx, int *dest, const int *source, ptrdiff_t dst,
                        ptrdiff_t sst, size_t nelems, int pe)
{
    (void)ctx, (void)dest, (void)source, (void)dst, (void)sst, (void)nelems, (void)pe;
}
long shmem_ctx_long_atomic_compare_swap(shmem_ctx_t ctx, long *dest, long cond, long value,
                                        int pe)
{
    (void)ctx, (void)dest, (void)value, (void)pe;
    return cond;
}
void shmem_alltoalls64(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                       size_t nelems, int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    (void)dest, (void)source, (void)dst, (void)sst, (void)nelems, (void)PE_start;
    (void)logPE_stride, (void)PE_size, (void)pSync;
}
double shmem_double_g(const double *addr, int pe)
{
    (void)addr;
    return pe;
}
void shmem_ctx_double_p(shmem_ctx_t ctx, double *addr, double value, int pe)
{
    (void)ctx, (void)addr, (void)value, (void)pe;
}
void shmem_long_wait_until(long *ivar, int cmp, long value)
{
    (void)ivar, (void)cmp, (void)value;
}
void shmem_int_sum_to_all(int *dest, const int *source, int nreduce, int PE_start,
                          int logPE_stride, int PE_size, int *pWrk, long *pSync)
{
    (void)dest, (void)source, (void)nreduce, (void)PE_start, (void)logPE_stride, (void)PE_size;
    (void)pWrk, (void)pSync;
}
void shmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe)
{
    (void)dest, (void)source, (void)nelems, (void)pe;
}
