/* Blamed parameters of library functions that have no IR (seed 002 §4.1.2:
 * runtime functions get hand-written blamed-parameter tables).
 *
 * The pass applies the table when it builds a caller's blame graph (the
 * written arguments receive the call's line and the blame of the sources),
 * and records the effects in the call's bindings; ppw-blame uses the same
 * table to charge samples taken inside these functions to the caller.
 *
 * To extend it, add a row: PPW_LIBCALL(name, written, sources, written_from,
 * sources_from).  `written` and `sources` are bit masks over the argument
 * numbers (bit k = argument k, from 0); `written_from` and `sources_from`
 * name the first variadic argument that is written or read, or -1.  See
 * docs/libcalls.md. */
#ifndef PPW_LIBCALLS_H
#define PPW_LIBCALLS_H

#include <stdint.h>
#include <string.h>

#include "ppw/gasp_events.h" /* PPW_ARG and OpenSHMEM's type lists */

/* OpenSHMEM, one row per typed variant (the type lists of
 * ppw/gasp_events.h): a put, p or atomic writes its remote destination
 * (the symmetric variable, named as on the calling PE) from its source; a
 * get writes its local destination; a wait completes the remote writes
 * into the variable it waits on, and a collective writes its destination.
 * The context forms (shmem_ctx_*) take the context first: one operand on. */
#define PPW_SHMEM_LC_RMA(X, P, S, name, ctype)                                             \
    X(shmem_##name##_put, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2), -1, -1)                    \
    X(shmem_##name##_put_nbi, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2), -1, -1)                \
    X(shmem_##name##_iput, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(4), -1, -1)                   \
    X(shmem_##name##_p, PPW_ARG(0), PPW_ARG(1), -1, -1)                                   \
    X(shmem_##name##_get, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2), -1, -1)                    \
    X(shmem_##name##_get_nbi, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2), -1, -1)                \
    X(shmem_##name##_iget, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(4), -1, -1)
#define PPW_SHMEM_LC_CTX_RMA(X, P, S, name, ctype)                                         \
    X(shmem_ctx_##name##_put, PPW_ARG(1), PPW_ARG(2) | PPW_ARG(3), -1, -1)                \
    X(shmem_ctx_##name##_put_nbi, PPW_ARG(1), PPW_ARG(2) | PPW_ARG(3), -1, -1)            \
    X(shmem_ctx_##name##_iput, PPW_ARG(1), PPW_ARG(2) | PPW_ARG(5), -1, -1)               \
    X(shmem_ctx_##name##_p, PPW_ARG(1), PPW_ARG(2), -1, -1)                               \
    X(shmem_ctx_##name##_get, PPW_ARG(1), PPW_ARG(2) | PPW_ARG(3), -1, -1)                \
    X(shmem_ctx_##name##_get_nbi, PPW_ARG(1), PPW_ARG(2) | PPW_ARG(3), -1, -1)            \
    X(shmem_ctx_##name##_iget, PPW_ARG(1), PPW_ARG(2) | PPW_ARG(5), -1, -1)
#define PPW_SHMEM_LC_SIZED(X, kind)                                                        \
    X(shmem_put##kind, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2), -1, -1)                       \
    X(shmem_put##kind##_nbi, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2), -1, -1)                 \
    X(shmem_get##kind, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2), -1, -1)                       \
    X(shmem_get##kind##_nbi, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2), -1, -1)                 \
    X(shmem_ctx_put##kind, PPW_ARG(1), PPW_ARG(2) | PPW_ARG(3), -1, -1)                   \
    X(shmem_ctx_put##kind##_nbi, PPW_ARG(1), PPW_ARG(2) | PPW_ARG(3), -1, -1)             \
    X(shmem_ctx_get##kind, PPW_ARG(1), PPW_ARG(2) | PPW_ARG(3), -1, -1)                   \
    X(shmem_ctx_get##kind##_nbi, PPW_ARG(1), PPW_ARG(2) | PPW_ARG(3), -1, -1)
#define PPW_SHMEM_LC_STRIDED(X, bits)                                                      \
    X(shmem_iput##bits, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(4), -1, -1)                      \
    X(shmem_iget##bits, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(4), -1, -1)                      \
    X(shmem_ctx_iput##bits, PPW_ARG(1), PPW_ARG(2) | PPW_ARG(5), -1, -1)                  \
    X(shmem_ctx_iget##bits, PPW_ARG(1), PPW_ARG(2) | PPW_ARG(5), -1, -1)
/* Atomics: (dest, value, pe), (dest, pe), (dest, cond, value, pe). */
#define PPW_SHMEM_LC_AMO(X, P, S, name, ctype)                                             \
    X(shmem_##name##_atomic_fetch_add, PPW_ARG(0), PPW_ARG(0) | PPW_ARG(1), -1, -1)       \
    X(shmem_##name##_atomic_add, PPW_ARG(0), PPW_ARG(0) | PPW_ARG(1), -1, -1)             \
    X(shmem_##name##_atomic_fetch_inc, PPW_ARG(0), PPW_ARG(0), -1, -1)                    \
    X(shmem_##name##_atomic_inc, PPW_ARG(0), PPW_ARG(0), -1, -1)                          \
    X(shmem_##name##_atomic_compare_swap, PPW_ARG(0), PPW_ARG(0) | PPW_ARG(1) | PPW_ARG(2), -1, -1) \
    PPW_SHMEM_LC_EXTENDED_AMO(X, P, S, name, ctype)
#define PPW_SHMEM_LC_EXTENDED_AMO(X, P, S, name, ctype)                                    \
    X(shmem_##name##_atomic_set, PPW_ARG(0), PPW_ARG(1), -1, -1)                          \
    X(shmem_##name##_atomic_swap, PPW_ARG(0), PPW_ARG(1), -1, -1)
#define PPW_SHMEM_LC_CTX_AMO(X, P, S, name, ctype)                                         \
    X(shmem_ctx_##name##_atomic_fetch_add, PPW_ARG(1), PPW_ARG(1) | PPW_ARG(2), -1, -1)   \
    X(shmem_ctx_##name##_atomic_add, PPW_ARG(1), PPW_ARG(1) | PPW_ARG(2), -1, -1)         \
    X(shmem_ctx_##name##_atomic_fetch_inc, PPW_ARG(1), PPW_ARG(1), -1, -1)                \
    X(shmem_ctx_##name##_atomic_inc, PPW_ARG(1), PPW_ARG(1), -1, -1)                      \
    X(shmem_ctx_##name##_atomic_compare_swap, PPW_ARG(1),                                 \
      PPW_ARG(1) | PPW_ARG(2) | PPW_ARG(3), -1, -1)                                       \
    PPW_SHMEM_LC_CTX_EXTENDED_AMO(X, P, S, name, ctype)
#define PPW_SHMEM_LC_CTX_EXTENDED_AMO(X, P, S, name, ctype)                                \
    X(shmem_ctx_##name##_atomic_set, PPW_ARG(1), PPW_ARG(2), -1, -1)                      \
    X(shmem_ctx_##name##_atomic_swap, PPW_ARG(1), PPW_ARG(2), -1, -1)
#define PPW_SHMEM_LC_BITWISE(X, P, S, name, ctype)                                         \
    X(shmem_##name##_atomic_and, PPW_ARG(0), PPW_ARG(0) | PPW_ARG(1), -1, -1)             \
    X(shmem_##name##_atomic_or, PPW_ARG(0), PPW_ARG(0) | PPW_ARG(1), -1, -1)              \
    X(shmem_##name##_atomic_xor, PPW_ARG(0), PPW_ARG(0) | PPW_ARG(1), -1, -1)             \
    X(shmem_##name##_atomic_fetch_and, PPW_ARG(0), PPW_ARG(0) | PPW_ARG(1), -1, -1)       \
    X(shmem_##name##_atomic_fetch_or, PPW_ARG(0), PPW_ARG(0) | PPW_ARG(1), -1, -1)        \
    X(shmem_##name##_atomic_fetch_xor, PPW_ARG(0), PPW_ARG(0) | PPW_ARG(1), -1, -1)
#define PPW_SHMEM_LC_CTX_BITWISE(X, P, S, name, ctype)                                     \
    X(shmem_ctx_##name##_atomic_and, PPW_ARG(1), PPW_ARG(1) | PPW_ARG(2), -1, -1)         \
    X(shmem_ctx_##name##_atomic_or, PPW_ARG(1), PPW_ARG(1) | PPW_ARG(2), -1, -1)          \
    X(shmem_ctx_##name##_atomic_xor, PPW_ARG(1), PPW_ARG(1) | PPW_ARG(2), -1, -1)         \
    X(shmem_ctx_##name##_atomic_fetch_and, PPW_ARG(1), PPW_ARG(1) | PPW_ARG(2), -1, -1)   \
    X(shmem_ctx_##name##_atomic_fetch_or, PPW_ARG(1), PPW_ARG(1) | PPW_ARG(2), -1, -1)    \
    X(shmem_ctx_##name##_atomic_fetch_xor, PPW_ARG(1), PPW_ARG(1) | PPW_ARG(2), -1, -1)
#define PPW_SHMEM_LC_OLD_AMO(X, P, S, name, ctype)                                         \
    X(shmem_##name##_fadd, PPW_ARG(0), PPW_ARG(0) | PPW_ARG(1), -1, -1)                   \
    X(shmem_##name##_add, PPW_ARG(0), PPW_ARG(0) | PPW_ARG(1), -1, -1)                    \
    X(shmem_##name##_finc, PPW_ARG(0), PPW_ARG(0), -1, -1)                                \
    X(shmem_##name##_inc, PPW_ARG(0), PPW_ARG(0), -1, -1)                                 \
    X(shmem_##name##_cswap, PPW_ARG(0), PPW_ARG(0) | PPW_ARG(1) | PPW_ARG(2), -1, -1)     \
    PPW_SHMEM_LC_OLD_EXTENDED(X, P, S, name, ctype)
#define PPW_SHMEM_LC_OLD_EXTENDED(X, P, S, name, ctype)                                    \
    X(shmem_##name##_set, PPW_ARG(0), PPW_ARG(1), -1, -1)                                 \
    X(shmem_##name##_swap, PPW_ARG(0), PPW_ARG(1), -1, -1)
#define PPW_SHMEM_LC_WAIT(X, P, S, name, ctype)                                            \
    X(shmem_##name##_wait_until, PPW_ARG(0), 0, -1, -1)                                   \
    X(shmem_##name##_wait, PPW_ARG(0), 0, -1, -1)
#define PPW_SHMEM_LC_COLLECTIVES(X, bits)                                                  \
    X(shmem_broadcast##bits, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2), -1, -1)                 \
    X(shmem_collect##bits, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2), -1, -1)                   \
    X(shmem_fcollect##bits, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2), -1, -1)                  \
    X(shmem_alltoall##bits, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2), -1, -1)                  \
    X(shmem_alltoalls##bits, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(4), -1, -1)
#define PPW_SHMEM_LC_REDUCE_OP(X, name, op)                                                \
    X(shmem_##name##_##op##_to_all, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2), -1, -1)
#define PPW_SHMEM_LC_REAL_REDUCE(X, P, S, name, ctype)                                     \
    PPW_SHMEM_LC_REDUCE_OP(X, name, max) PPW_SHMEM_LC_REDUCE_OP(X, name, min)             \
    PPW_SHMEM_LC_REDUCE_OP(X, name, sum) PPW_SHMEM_LC_REDUCE_OP(X, name, prod)
#define PPW_SHMEM_LC_INT_REDUCE(X, P, S, name, ctype)                                      \
    PPW_SHMEM_LC_REDUCE_OP(X, name, and) PPW_SHMEM_LC_REDUCE_OP(X, name, or)              \
    PPW_SHMEM_LC_REDUCE_OP(X, name, xor) PPW_SHMEM_LC_REAL_REDUCE(X, P, S, name, ctype)

#define PPW_SHMEM_LIBCALLS(X)                                                              \
    PPW_SHMEM_RMA_TYPES(PPW_SHMEM_LC_RMA, X, , 0)                                         \
    PPW_SHMEM_RMA_TYPES(PPW_SHMEM_LC_CTX_RMA, X, , 1)                                     \
    PPW_SHMEM_LC_SIZED(X, mem) PPW_SHMEM_LC_SIZED(X, 8) PPW_SHMEM_LC_SIZED(X, 16)         \
    PPW_SHMEM_LC_SIZED(X, 32) PPW_SHMEM_LC_SIZED(X, 64) PPW_SHMEM_LC_SIZED(X, 128)        \
    PPW_SHMEM_LC_STRIDED(X, 8) PPW_SHMEM_LC_STRIDED(X, 16) PPW_SHMEM_LC_STRIDED(X, 32)    \
    PPW_SHMEM_LC_STRIDED(X, 64) PPW_SHMEM_LC_STRIDED(X, 128)                              \
    PPW_SHMEM_AMO_TYPES(PPW_SHMEM_LC_AMO, X, , 0)                                         \
    PPW_SHMEM_AMO_TYPES(PPW_SHMEM_LC_CTX_AMO, X, , 1)                                     \
    PPW_SHMEM_FLOAT_TYPES(PPW_SHMEM_LC_EXTENDED_AMO, X, , 0)                              \
    PPW_SHMEM_FLOAT_TYPES(PPW_SHMEM_LC_CTX_EXTENDED_AMO, X, , 1)                          \
    PPW_SHMEM_BITWISE_TYPES(PPW_SHMEM_LC_BITWISE, X, , 0)                                 \
    PPW_SHMEM_BITWISE_TYPES(PPW_SHMEM_LC_CTX_BITWISE, X, , 1)                             \
    PPW_SHMEM_OLD_AMO_TYPES(PPW_SHMEM_LC_OLD_AMO, X, , 0)                                 \
    PPW_SHMEM_FLOAT_TYPES(PPW_SHMEM_LC_OLD_EXTENDED, X, , 0)                              \
    PPW_SHMEM_SYNC_TYPES(PPW_SHMEM_LC_WAIT, X, , 0)                                       \
    X(shmem_wait_until, PPW_ARG(0), 0, -1, -1)                                            \
    X(shmem_wait, PPW_ARG(0), 0, -1, -1)                                                  \
    X(shmem_set_lock, PPW_ARG(0), 0, -1, -1)                                              \
    X(shmem_test_lock, PPW_ARG(0), 0, -1, -1)                                             \
    X(shmem_clear_lock, PPW_ARG(0), 0, -1, -1)                                            \
    PPW_SHMEM_LC_COLLECTIVES(X, 32) PPW_SHMEM_LC_COLLECTIVES(X, 64)                       \
    PPW_SHMEM_INT_REDUCE_TYPES(PPW_SHMEM_LC_INT_REDUCE, X, , 0)                           \
    PPW_SHMEM_REAL_REDUCE_TYPES(PPW_SHMEM_LC_REAL_REDUCE, X, , 0)                         \
    PPW_SHMEM_LC_REDUCE_OP(X, complexf, sum) PPW_SHMEM_LC_REDUCE_OP(X, complexf, prod)     \
    PPW_SHMEM_LC_REDUCE_OP(X, complexd, sum) PPW_SHMEM_LC_REDUCE_OP(X, complexd, prod)

#define PPW_LIBCALLS(X)                                                                      \
    /* memory and strings */                                                              \
    X(memcpy, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2), -1, -1)                                \
    X(memmove, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2), -1, -1)                               \
    X(memset, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2), -1, -1)                                \
    X(__memcpy_chk, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2), -1, -1)                          \
    X(__memmove_chk, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2), -1, -1)                         \
    X(__memset_chk, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2), -1, -1)                          \
    X(bzero, PPW_ARG(0), PPW_ARG(1), -1, -1)                                              \
    X(strcpy, PPW_ARG(0), PPW_ARG(1), -1, -1)                                             \
    X(strncpy, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2), -1, -1)                               \
    X(stpcpy, PPW_ARG(0), PPW_ARG(1), -1, -1)                                             \
    X(strcat, PPW_ARG(0), PPW_ARG(0) | PPW_ARG(1), -1, -1)                                \
    X(strncat, PPW_ARG(0), PPW_ARG(0) | PPW_ARG(1) | PPW_ARG(2), -1, -1)                  \
    X(__strcpy_chk, PPW_ARG(0), PPW_ARG(1), -1, -1)                                       \
    X(sprintf, PPW_ARG(0), PPW_ARG(1), -1, 2)                                             \
    X(snprintf, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2), -1, 3)                               \
    X(vsprintf, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2), -1, -1)                              \
    X(vsnprintf, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2) | PPW_ARG(3), -1, -1)                \
    X(__sprintf_chk, PPW_ARG(0), PPW_ARG(3), -1, 4)                                       \
    X(__snprintf_chk, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(4), -1, 5)                         \
    /* stdio and POSIX reads */                                                           \
    X(fread, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2) | PPW_ARG(3), -1, -1)                    \
    X(fread_unlocked, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2) | PPW_ARG(3), -1, -1)           \
    X(__fread_chk, PPW_ARG(0), PPW_ARG(2) | PPW_ARG(3) | PPW_ARG(4), -1, -1)              \
    X(fgets, PPW_ARG(0), PPW_ARG(1) | PPW_ARG(2), -1, -1)                                 \
    X(__fgets_chk, PPW_ARG(0), PPW_ARG(2) | PPW_ARG(3), -1, -1)                           \
    X(getline, PPW_ARG(0) | PPW_ARG(1), PPW_ARG(2), -1, -1)                               \
    X(getdelim, PPW_ARG(0) | PPW_ARG(1), PPW_ARG(2) | PPW_ARG(3), -1, -1)                 \
    X(scanf, 0, PPW_ARG(0), 1, -1)                                                        \
    X(fscanf, 0, PPW_ARG(0) | PPW_ARG(1), 2, -1)                                          \
    X(sscanf, 0, PPW_ARG(0) | PPW_ARG(1), 2, -1)                                          \
    X(__isoc99_scanf, 0, PPW_ARG(0), 1, -1)                                               \
    X(__isoc99_fscanf, 0, PPW_ARG(0) | PPW_ARG(1), 2, -1)                                 \
    X(__isoc99_sscanf, 0, PPW_ARG(0) | PPW_ARG(1), 2, -1)                                 \
    X(__isoc23_scanf, 0, PPW_ARG(0), 1, -1)                                               \
    X(__isoc23_fscanf, 0, PPW_ARG(0) | PPW_ARG(1), 2, -1)                                 \
    X(__isoc23_sscanf, 0, PPW_ARG(0) | PPW_ARG(1), 2, -1)                                 \
    X(read, PPW_ARG(1), PPW_ARG(0) | PPW_ARG(2), -1, -1)                                  \
    X(pread, PPW_ARG(1), PPW_ARG(0) | PPW_ARG(2) | PPW_ARG(3), -1, -1)                    \
    X(recv, PPW_ARG(1), PPW_ARG(0) | PPW_ARG(2), -1, -1)                                  \
    /* threads */                                                                         \
    X(pthread_create, PPW_ARG(0), 0, -1, -1)                                              \
    X(pthread_join, PPW_ARG(1), PPW_ARG(0), -1, -1)                                       \
    /* MPI: receive buffers, collective outputs, requests and statuses */                 \
    X(MPI_Recv, PPW_ARG(0) | PPW_ARG(6), PPW_ARG(1) | PPW_ARG(3), -1, -1)                 \
    X(MPI_Irecv, PPW_ARG(0) | PPW_ARG(6), PPW_ARG(1) | PPW_ARG(3), -1, -1)                \
    X(MPI_Sendrecv, PPW_ARG(5) | PPW_ARG(11), PPW_ARG(0) | PPW_ARG(1) | PPW_ARG(8), -1, -1) \
    X(MPI_Sendrecv_replace, PPW_ARG(0) | PPW_ARG(8), PPW_ARG(0) | PPW_ARG(1), -1, -1)     \
    X(MPI_Bcast, PPW_ARG(0), PPW_ARG(0) | PPW_ARG(1), -1, -1)                             \
    X(MPI_Ibcast, PPW_ARG(0) | PPW_ARG(5), PPW_ARG(0) | PPW_ARG(1), -1, -1)               \
    X(MPI_Reduce, PPW_ARG(1), PPW_ARG(0) | PPW_ARG(2), -1, -1)                            \
    X(MPI_Allreduce, PPW_ARG(1), PPW_ARG(0) | PPW_ARG(2), -1, -1)                         \
    X(MPI_Ireduce, PPW_ARG(1) | PPW_ARG(7), PPW_ARG(0) | PPW_ARG(2), -1, -1)              \
    X(MPI_Iallreduce, PPW_ARG(1) | PPW_ARG(6), PPW_ARG(0) | PPW_ARG(2), -1, -1)           \
    X(MPI_Scan, PPW_ARG(1), PPW_ARG(0) | PPW_ARG(2), -1, -1)                              \
    X(MPI_Exscan, PPW_ARG(1), PPW_ARG(0) | PPW_ARG(2), -1, -1)                            \
    X(MPI_Reduce_scatter, PPW_ARG(1), PPW_ARG(0) | PPW_ARG(2), -1, -1)                    \
    X(MPI_Reduce_scatter_block, PPW_ARG(1), PPW_ARG(0) | PPW_ARG(2), -1, -1)              \
    X(MPI_Gather, PPW_ARG(3), PPW_ARG(0) | PPW_ARG(1), -1, -1)                            \
    X(MPI_Gatherv, PPW_ARG(3), PPW_ARG(0) | PPW_ARG(1), -1, -1)                           \
    X(MPI_Allgather, PPW_ARG(3), PPW_ARG(0) | PPW_ARG(1), -1, -1)                         \
    X(MPI_Allgatherv, PPW_ARG(3), PPW_ARG(0) | PPW_ARG(1), -1, -1)                        \
    X(MPI_Scatter, PPW_ARG(3), PPW_ARG(0) | PPW_ARG(1), -1, -1)                           \
    X(MPI_Scatterv, PPW_ARG(4), PPW_ARG(0) | PPW_ARG(1), -1, -1)                          \
    X(MPI_Alltoall, PPW_ARG(3), PPW_ARG(0) | PPW_ARG(1), -1, -1)                          \
    X(MPI_Alltoallv, PPW_ARG(4), PPW_ARG(0) | PPW_ARG(1), -1, -1)                         \
    /* one-sided: a get writes its origin buffer from the target window, a */             \
    /* put or accumulate the target window (the handle's memory) from its origin */       \
    X(MPI_Get, PPW_ARG(0), PPW_ARG(3) | PPW_ARG(7), -1, -1)                               \
    X(MPI_Rget, PPW_ARG(0) | PPW_ARG(8), PPW_ARG(3) | PPW_ARG(7), -1, -1)                 \
    X(MPI_Put, PPW_ARG(7), PPW_ARG(0) | PPW_ARG(1), -1, -1)                               \
    X(MPI_Rput, PPW_ARG(7) | PPW_ARG(8), PPW_ARG(0) | PPW_ARG(1), -1, -1)                 \
    X(MPI_Accumulate, PPW_ARG(8), PPW_ARG(0) | PPW_ARG(1) | PPW_ARG(8), -1, -1)           \
    X(MPI_Raccumulate, PPW_ARG(8) | PPW_ARG(9), PPW_ARG(0) | PPW_ARG(1) | PPW_ARG(8), -1, -1) \
    X(MPI_Get_accumulate, PPW_ARG(3) | PPW_ARG(11), PPW_ARG(0) | PPW_ARG(6) | PPW_ARG(11), -1, -1) \
    X(MPI_Rget_accumulate, PPW_ARG(3) | PPW_ARG(11) | PPW_ARG(12),                        \
      PPW_ARG(0) | PPW_ARG(6) | PPW_ARG(11), -1, -1)                                      \
    X(MPI_Fetch_and_op, PPW_ARG(1) | PPW_ARG(6), PPW_ARG(0) | PPW_ARG(3) | PPW_ARG(6), -1, -1) \
    X(MPI_Compare_and_swap, PPW_ARG(2) | PPW_ARG(6),                                      \
      PPW_ARG(0) | PPW_ARG(1) | PPW_ARG(4) | PPW_ARG(6), -1, -1)                          \
    /* synchronization completes the transfers into the window (its memory) */            \
    X(MPI_Win_fence, PPW_ARG(1), 0, -1, -1)                                               \
    X(MPI_Win_lock, PPW_ARG(3), 0, -1, -1)                                                \
    X(MPI_Win_lock_all, PPW_ARG(1), 0, -1, -1)                                            \
    X(MPI_Win_unlock, PPW_ARG(1), 0, -1, -1)                                              \
    X(MPI_Win_unlock_all, PPW_ARG(0), 0, -1, -1)                                          \
    X(MPI_Win_flush, PPW_ARG(1), 0, -1, -1)                                               \
    X(MPI_Win_flush_local, PPW_ARG(1), 0, -1, -1)                                         \
    X(MPI_Win_flush_all, PPW_ARG(0), 0, -1, -1)                                           \
    X(MPI_Win_flush_local_all, PPW_ARG(0), 0, -1, -1)                                     \
    X(MPI_Win_post, PPW_ARG(2), 0, -1, -1)                                                \
    X(MPI_Win_start, PPW_ARG(2), 0, -1, -1)                                               \
    X(MPI_Win_complete, PPW_ARG(0), 0, -1, -1)                                            \
    X(MPI_Win_wait, PPW_ARG(0), 0, -1, -1)                                                \
    X(MPI_Win_create, PPW_ARG(5), PPW_ARG(0) | PPW_ARG(1), -1, -1)                        \
    X(MPI_Win_allocate, PPW_ARG(4) | PPW_ARG(5), PPW_ARG(0), -1, -1)                      \
    X(MPI_Win_allocate_shared, PPW_ARG(4) | PPW_ARG(5), PPW_ARG(0), -1, -1)               \
    X(MPI_Wait, PPW_ARG(0) | PPW_ARG(1), PPW_ARG(0), -1, -1)                              \
    X(MPI_Waitall, PPW_ARG(1) | PPW_ARG(2), PPW_ARG(1), -1, -1)                           \
    X(MPI_Waitany, PPW_ARG(1) | PPW_ARG(2) | PPW_ARG(3), PPW_ARG(1), -1, -1)              \
    X(MPI_Test, PPW_ARG(0) | PPW_ARG(1) | PPW_ARG(2), PPW_ARG(0), -1, -1)                 \
    X(MPI_Comm_rank, PPW_ARG(1), PPW_ARG(0), -1, -1)                                      \
    X(MPI_Comm_size, PPW_ARG(1), PPW_ARG(0), -1, -1)                                      \
    PPW_SHMEM_LIBCALLS(X)

struct ppw_libcall {
    const char *name;
    uint32_t written;  /* bit k: argument k is written through */
    uint32_t sources;  /* bit k: the written data is computed from argument k */
    int written_from;  /* first variadic argument written through, or -1 */
    int sources_from;  /* first variadic argument read, or -1 */
};

#define PPW_LIBCALL_ROW(name, written, sources, written_from, sources_from) \
    {#name, written, sources, written_from, sources_from},

static const struct ppw_libcall ppw_libcall_table[] = {PPW_LIBCALLS(PPW_LIBCALL_ROW)};

static inline const struct ppw_libcall *ppw_libcall_find(const char *name)
{
    if (!name)
        return 0;
    for (unsigned i = 0; i < sizeof ppw_libcall_table / sizeof ppw_libcall_table[0]; i++)
        if (!strcmp(ppw_libcall_table[i].name, name))
            return &ppw_libcall_table[i];
    return 0;
}

static inline int ppw_libcall_writes(const struct ppw_libcall *call, unsigned arg)
{
    if (arg < 32 && (call->written & (1u << arg)))
        return 1;
    return call->written_from >= 0 && arg >= (unsigned)call->written_from;
}

static inline int ppw_libcall_reads(const struct ppw_libcall *call, unsigned arg)
{
    if (arg < 32 && (call->sources & (1u << arg)))
        return 1;
    return call->sources_from >= 0 && arg >= (unsigned)call->sources_from;
}

#endif
