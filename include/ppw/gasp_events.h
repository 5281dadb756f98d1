/* Which library calls the pass wraps in GASP START/END events, and what each
 * event means to the tool.  One table for the pass (which calls to wrap,
 * which operands to forward), the runtime (how many varargs to read, which
 * generic operation type) and ppw-blame (names).  See docs/gasp.md.
 *
 * PPW_GASP_CALLS(X): X(tag, callee, op, operand_mask, has_result)
 *   tag          a GASP_* event tag from ppw/gasp.h
 *   callee       the C function the pass wraps (several rows may share a tag)
 *   op           the PPW generic operation type (enum ppw_op)
 *   operand_mask bit i (i < 24) set: call operand i is forwarded, widened to
 *                64 bits (pointers as addresses, integers sign- or
 *                zero-extended as their C type says), in operand order;
 *                the top byte, PPW_ELEMENT_SIZE(n), makes the pass append
 *                the constant n after them: the size in bytes of one
 *                element of a typed variant (shmem_int_put: 4)
 *   has_result   1: the END event also carries the call's result, widened
 *
 * A START event therefore carries ppw_gasp_row_varargs(operand_mask) 64-bit
 * varargs and the END event that many plus has_result.  Rows that share a tag must agree
 * on both (test/runtime checks it), so the tool can read a tag's varargs
 * without knowing which callee produced it.  GASP_C_FUNC is not in the table:
 * it carries `const char *funcsig` on both events, as GASP specifies
 * (GASP_C_FUNC_GATED, which the pass emits, adds the enable switch). */
#ifndef PPW_GASP_EVENTS_H
#define PPW_GASP_EVENTS_H

#include "ppw/gasp.h"

#include <stddef.h>
#include <stdint.h>

/* PPW's generic operation types (PPW thesis Table 4-1), plus the C ones.
 * Append only: run files store an op by its number.  One-sided sync is
 * PPW's "explicit comm sync" for one-sided transfers (fences, flushes,
 * epochs), kept apart from two-sided waits, whose analysis differs. */
#define PPW_OPS(X)                                                                   \
    X(PPW_OP_FUNCTION, "function")                                                   \
    X(PPW_OP_USER_REGION, "user region")                                             \
    X(PPW_OP_INIT, "init")                                                           \
    X(PPW_OP_TERM, "termination")                                                    \
    X(PPW_OP_SPAWN, "spawn")                                                         \
    X(PPW_OP_JOIN, "join")                                                           \
    X(PPW_OP_GROUP_SYNC, "group sync")                                               \
    X(PPW_OP_GROUP_COMM, "group comm")                                               \
    X(PPW_OP_SEND, "send")                                                           \
    X(PPW_OP_RECV, "recv")                                                           \
    X(PPW_OP_SEND_NB, "non-blocking send")                                           \
    X(PPW_OP_RECV_NB, "non-blocking recv")                                           \
    X(PPW_OP_COMM_SYNC, "comm sync")                                                 \
    X(PPW_OP_LOCK_ACQUIRE, "lock acquire")                                           \
    X(PPW_OP_LOCK_RELEASE, "lock release")                                           \
    X(PPW_OP_WAIT_ON_VALUE, "wait on value")                                         \
    X(PPW_OP_SIGNAL_VALUE, "signal value")                                           \
    X(PPW_OP_MEM_ALLOC, "memory alloc")                                              \
    X(PPW_OP_MEM_FREE, "memory free")                                                \
    X(PPW_OP_PUT, "put")                                                             \
    X(PPW_OP_GET, "get")                                                             \
    X(PPW_OP_PUT_NB, "non-blocking put")                                             \
    X(PPW_OP_GET_NB, "non-blocking get")                                             \
    X(PPW_OP_ATOMIC, "atomic")                                                       \
    X(PPW_OP_ONE_SIDED_SYNC, "one-sided sync")                                       \
    X(PPW_OP_GLOBAL_ALLOC, "global memory alloc")                                    \
    X(PPW_OP_GLOBAL_FREE, "global memory free")

enum ppw_op {
#define PPW_OP_ENUM(name, text) name,
    PPW_OPS(PPW_OP_ENUM)
#undef PPW_OP_ENUM
        PPW_OP_COUNT
};

/* Operand masks, named for readability. */
#define PPW_ARG(i) (1u << (i))
/* The element size a typed row appends (at most 255 bytes), and the parts
 * of a mask. */
#define PPW_ELEMENT_SIZE(n) ((unsigned)(n) << 24)
#define PPW_OPERANDS_OF(mask) ((mask) & 0xffffffu)
#define PPW_ELEMENT_SIZE_OF(mask) ((mask) >> 24)

/* The 64-bit varargs a row's START event carries. */
static inline unsigned ppw_gasp_row_varargs(unsigned mask)
{
    return (unsigned)__builtin_popcount(PPW_OPERANDS_OF(mask)) + (PPW_ELEMENT_SIZE_OF(mask) != 0);
}

/* ---- OpenSHMEM ----------------------------------------------------------
 * OpenSHMEM 1.4 names a call once per element type (shmem_int_put,
 * shmem_double_put...), once per size (shmem_put32, shmem_putmem) and again
 * with a context first (shmem_ctx_int_put).  These generators write one
 * row per variant: PPW maps them to one generic operation with a size
 * (seed 000), so every variant of a call shares its tag, and the event
 * carries the element size.  Types follow the specification's tables;
 * variants a library lacks are never called, and so never matched.
 *
 * F(X, prefix, shift, name, ctype): prefix "shmem_" or "shmem_ctx_", and
 * shift 1 when a context is the first operand. */
#define PPW_SH2(s, a, b) (PPW_ARG((a) + (s)) | PPW_ARG((b) + (s)))
#define PPW_SH3(s, a, b, c) (PPW_SH2(s, a, b) | PPW_ARG((c) + (s)))

/* Standard RMA types (OpenSHMEM 1.4, Table 5). */
#define PPW_SHMEM_RMA_TYPES(F, X, P, S)                                                         \
    F(X, P, S, float, float) F(X, P, S, double, double) F(X, P, S, longdouble, long double)     \
    F(X, P, S, char, char) F(X, P, S, schar, signed char) F(X, P, S, short, short)              \
    F(X, P, S, int, int) F(X, P, S, long, long) F(X, P, S, longlong, long long)                 \
    F(X, P, S, uchar, unsigned char) F(X, P, S, ushort, unsigned short)                         \
    F(X, P, S, uint, unsigned int) F(X, P, S, ulong, unsigned long)                             \
    F(X, P, S, ulonglong, unsigned long long) F(X, P, S, int8, int8_t)                          \
    F(X, P, S, int16, int16_t) F(X, P, S, int32, int32_t) F(X, P, S, int64, int64_t)            \
    F(X, P, S, uint8, uint8_t) F(X, P, S, uint16, uint16_t) F(X, P, S, uint32, uint32_t)        \
    F(X, P, S, uint64, uint64_t) F(X, P, S, size, size_t) F(X, P, S, ptrdiff, ptrdiff_t)
/* Standard AMO types (Table 6), also the point-to-point sync types less
 * short and ushort. */
#define PPW_SHMEM_AMO_TYPES(F, X, P, S)                                                         \
    F(X, P, S, int, int) F(X, P, S, long, long) F(X, P, S, longlong, long long)                 \
    F(X, P, S, uint, unsigned int) F(X, P, S, ulong, unsigned long)                             \
    F(X, P, S, ulonglong, unsigned long long) F(X, P, S, int32, int32_t)                        \
    F(X, P, S, int64, int64_t) F(X, P, S, uint32, uint32_t) F(X, P, S, uint64, uint64_t)        \
    F(X, P, S, size, size_t) F(X, P, S, ptrdiff, ptrdiff_t)
/* Bitwise AMO types (and the signed ones Open MPI adds). */
#define PPW_SHMEM_BITWISE_TYPES(F, X, P, S)                                                     \
    F(X, P, S, int, int) F(X, P, S, long, long) F(X, P, S, longlong, long long)                 \
    F(X, P, S, uint, unsigned int) F(X, P, S, ulong, unsigned long)                             \
    F(X, P, S, ulonglong, unsigned long long) F(X, P, S, int32, int32_t)                        \
    F(X, P, S, int64, int64_t) F(X, P, S, uint32, uint32_t) F(X, P, S, uint64, uint64_t)
/* Integer reduction types, and the rest that max, min, sum and prod take. */
#define PPW_SHMEM_INT_REDUCE_TYPES(F, X, P, S)                                                  \
    F(X, P, S, short, short) F(X, P, S, int, int) F(X, P, S, long, long)                        \
    F(X, P, S, longlong, long long)
#define PPW_SHMEM_REAL_REDUCE_TYPES(F, X, P, S)                                                 \
    F(X, P, S, float, float) F(X, P, S, double, double) F(X, P, S, longdouble, long double)
/* (dest, src, nelems, pe) and (dest, src, dst, sst, nelems, pe): forward
 * the remote address, nelems and pe; p (dest, value, pe) and g (src, pe)
 * forward the remote address and pe. */
#define PPW_SHMEM_RMA_ROWS(X, P, S, name, ctype)                                                \
    X(GASP_SHMEM_PUT, P #name "_put", PPW_OP_PUT,                                              \
      PPW_SH3(S, 0, 2, 3) | PPW_ELEMENT_SIZE(sizeof(ctype)), 0)                                 \
    X(GASP_SHMEM_PUT, P #name "_iput", PPW_OP_PUT,                                             \
      PPW_SH3(S, 0, 4, 5) | PPW_ELEMENT_SIZE(sizeof(ctype)), 0)                                 \
    X(GASP_SHMEM_PUT_NBI, P #name "_put_nbi", PPW_OP_PUT_NB,                                   \
      PPW_SH3(S, 0, 2, 3) | PPW_ELEMENT_SIZE(sizeof(ctype)), 0)                                 \
    X(GASP_SHMEM_P, P #name "_p", PPW_OP_PUT, PPW_SH2(S, 0, 2) | PPW_ELEMENT_SIZE(sizeof(ctype)), \
      0)                                                                                        \
    X(GASP_SHMEM_GET, P #name "_get", PPW_OP_GET,                                              \
      PPW_SH3(S, 1, 2, 3) | PPW_ELEMENT_SIZE(sizeof(ctype)), 0)                                 \
    X(GASP_SHMEM_GET, P #name "_iget", PPW_OP_GET,                                             \
      PPW_SH3(S, 1, 4, 5) | PPW_ELEMENT_SIZE(sizeof(ctype)), 0)                                 \
    X(GASP_SHMEM_GET_NBI, P #name "_get_nbi", PPW_OP_GET_NB,                                   \
      PPW_SH3(S, 1, 2, 3) | PPW_ELEMENT_SIZE(sizeof(ctype)), 0)                                 \
    X(GASP_SHMEM_G, P #name "_g", PPW_OP_GET, PPW_SH2(S, 0, 1) | PPW_ELEMENT_SIZE(sizeof(ctype)), \
      0)
/* The sized forms: shmem_put32 moves 4-byte elements, putmem bytes. */
#define PPW_SHMEM_SIZED_ROWS(X, P, S, suffix, bytes)                                            \
    X(GASP_SHMEM_PUT, P "put" suffix, PPW_OP_PUT, PPW_SH3(S, 0, 2, 3) | PPW_ELEMENT_SIZE(bytes), \
      0)                                                                                        \
    X(GASP_SHMEM_PUT_NBI, P "put" suffix "_nbi", PPW_OP_PUT_NB,                                \
      PPW_SH3(S, 0, 2, 3) | PPW_ELEMENT_SIZE(bytes), 0)                                         \
    X(GASP_SHMEM_GET, P "get" suffix, PPW_OP_GET, PPW_SH3(S, 1, 2, 3) | PPW_ELEMENT_SIZE(bytes), \
      0)                                                                                        \
    X(GASP_SHMEM_GET_NBI, P "get" suffix "_nbi", PPW_OP_GET_NB,                                \
      PPW_SH3(S, 1, 2, 3) | PPW_ELEMENT_SIZE(bytes), 0)
#define PPW_SHMEM_STRIDED_ROWS(X, P, S, suffix, bytes)                                          \
    X(GASP_SHMEM_PUT, P "iput" suffix, PPW_OP_PUT, PPW_SH3(S, 0, 4, 5) | PPW_ELEMENT_SIZE(bytes), \
      0)                                                                                        \
    X(GASP_SHMEM_GET, P "iget" suffix, PPW_OP_GET, PPW_SH3(S, 1, 4, 5) | PPW_ELEMENT_SIZE(bytes), \
      0)
#define PPW_SHMEM_ALL_SIZES(X, P, S)                                                            \
    PPW_SHMEM_SIZED_ROWS(X, P, S, "mem", 1)                                                     \
    PPW_SHMEM_SIZED_ROWS(X, P, S, "8", 1) PPW_SHMEM_STRIDED_ROWS(X, P, S, "8", 1)               \
    PPW_SHMEM_SIZED_ROWS(X, P, S, "16", 2) PPW_SHMEM_STRIDED_ROWS(X, P, S, "16", 2)             \
    PPW_SHMEM_SIZED_ROWS(X, P, S, "32", 4) PPW_SHMEM_STRIDED_ROWS(X, P, S, "32", 4)             \
    PPW_SHMEM_SIZED_ROWS(X, P, S, "64", 8) PPW_SHMEM_STRIDED_ROWS(X, P, S, "64", 8)             \
    PPW_SHMEM_SIZED_ROWS(X, P, S, "128", 16) PPW_SHMEM_STRIDED_ROWS(X, P, S, "128", 16)
/* Atomics forward the remote address and pe: (dest, pe), (dest, value,
 * pe) or (dest, cond, value, pe).  Their results (floating point for some
 * types) are not forwarded. */
#define PPW_SHMEM_ATOMIC_ROW(X, P, S, name, ctype, op, pe)                                      \
    X(GASP_SHMEM_ATOMIC, P #name op, PPW_OP_ATOMIC,                                            \
      PPW_SH2(S, 0, pe) | PPW_ELEMENT_SIZE(sizeof(ctype)), 0)
#define PPW_SHMEM_AMO_ROWS(X, P, S, name, ctype)                                                \
    PPW_SHMEM_ATOMIC_ROW(X, P, S, name, ctype, "_atomic_fetch_add", 2)                          \
    PPW_SHMEM_ATOMIC_ROW(X, P, S, name, ctype, "_atomic_add", 2)                                \
    PPW_SHMEM_ATOMIC_ROW(X, P, S, name, ctype, "_atomic_fetch_inc", 1)                          \
    PPW_SHMEM_ATOMIC_ROW(X, P, S, name, ctype, "_atomic_inc", 1)                                \
    PPW_SHMEM_ATOMIC_ROW(X, P, S, name, ctype, "_atomic_compare_swap", 3)                       \
    PPW_SHMEM_EXTENDED_AMO_ROWS(X, P, S, name, ctype)
#define PPW_SHMEM_EXTENDED_AMO_ROWS(X, P, S, name, ctype)                                       \
    PPW_SHMEM_ATOMIC_ROW(X, P, S, name, ctype, "_atomic_fetch", 1)                              \
    PPW_SHMEM_ATOMIC_ROW(X, P, S, name, ctype, "_atomic_set", 2)                                \
    PPW_SHMEM_ATOMIC_ROW(X, P, S, name, ctype, "_atomic_swap", 2)
#define PPW_SHMEM_BITWISE_ROWS(X, P, S, name, ctype)                                            \
    PPW_SHMEM_ATOMIC_ROW(X, P, S, name, ctype, "_atomic_and", 2)                                \
    PPW_SHMEM_ATOMIC_ROW(X, P, S, name, ctype, "_atomic_or", 2)                                 \
    PPW_SHMEM_ATOMIC_ROW(X, P, S, name, ctype, "_atomic_xor", 2)                                \
    PPW_SHMEM_ATOMIC_ROW(X, P, S, name, ctype, "_atomic_fetch_and", 2)                          \
    PPW_SHMEM_ATOMIC_ROW(X, P, S, name, ctype, "_atomic_fetch_or", 2)                           \
    PPW_SHMEM_ATOMIC_ROW(X, P, S, name, ctype, "_atomic_fetch_xor", 2)
/* The OpenSHMEM 1.3 names, deprecated but still common. */
#define PPW_SHMEM_OLD_AMO_ROWS(X, P, S, name, ctype)                                            \
    PPW_SHMEM_ATOMIC_ROW(X, P, S, name, ctype, "_fadd", 2)                                      \
    PPW_SHMEM_ATOMIC_ROW(X, P, S, name, ctype, "_add", 2)                                       \
    PPW_SHMEM_ATOMIC_ROW(X, P, S, name, ctype, "_finc", 1)                                      \
    PPW_SHMEM_ATOMIC_ROW(X, P, S, name, ctype, "_inc", 1)                                       \
    PPW_SHMEM_ATOMIC_ROW(X, P, S, name, ctype, "_cswap", 3)                                     \
    PPW_SHMEM_OLD_EXTENDED_ROWS(X, P, S, name, ctype)
#define PPW_SHMEM_OLD_EXTENDED_ROWS(X, P, S, name, ctype)                                       \
    PPW_SHMEM_ATOMIC_ROW(X, P, S, name, ctype, "_fetch", 1)                                     \
    PPW_SHMEM_ATOMIC_ROW(X, P, S, name, ctype, "_set", 2)                                       \
    PPW_SHMEM_ATOMIC_ROW(X, P, S, name, ctype, "_swap", 2)
/* (ivar, cmp, value) and (ivar, value): forward the waited-on address. */
#define PPW_SHMEM_WAIT_ROWS(X, P, S, name, ctype)                                               \
    X(GASP_SHMEM_WAIT_UNTIL, P #name "_wait_until", PPW_OP_WAIT_ON_VALUE,                      \
      PPW_ARG(0) | PPW_ELEMENT_SIZE(sizeof(ctype)), 0)                                          \
    X(GASP_SHMEM_WAIT_UNTIL, P #name "_wait", PPW_OP_WAIT_ON_VALUE,                            \
      PPW_ARG(0) | PPW_ELEMENT_SIZE(sizeof(ctype)), 0)
/* (dest, src, nreduce, PE_start, logPE_stride, PE_size, pWrk, pSync):
 * forward nreduce. */
#define PPW_SHMEM_REDUCE_ROW(X, P, name, op, bytes)                                             \
    X(GASP_SHMEM_REDUCE, P #name "_" op "_to_all", PPW_OP_GROUP_COMM,                          \
      PPW_ARG(2) | PPW_ELEMENT_SIZE(bytes), 0)
#define PPW_SHMEM_INT_REDUCE_ROWS(X, P, S, name, ctype)                                         \
    PPW_SHMEM_REDUCE_ROW(X, P, name, "and", sizeof(ctype))                                      \
    PPW_SHMEM_REDUCE_ROW(X, P, name, "or", sizeof(ctype))                                       \
    PPW_SHMEM_REDUCE_ROW(X, P, name, "xor", sizeof(ctype))                                      \
    PPW_SHMEM_REAL_REDUCE_ROWS(X, P, S, name, ctype)
#define PPW_SHMEM_REAL_REDUCE_ROWS(X, P, S, name, ctype)                                        \
    PPW_SHMEM_REDUCE_ROW(X, P, name, "max", sizeof(ctype))                                      \
    PPW_SHMEM_REDUCE_ROW(X, P, name, "min", sizeof(ctype))                                      \
    PPW_SHMEM_REDUCE_ROW(X, P, name, "sum", sizeof(ctype))                                      \
    PPW_SHMEM_REDUCE_ROW(X, P, name, "prod", sizeof(ctype))
/* (dest, src, nelems, PE_root, PE_start, logPE_stride, PE_size, pSync):
 * nelems and the root; collect, fcollect and alltoall: nelems; alltoalls
 * (dest, src, dst, sst, nelems, ...): nelems. */
#define PPW_SHMEM_COLLECTIVE_ROWS(X, bits, bytes)                                               \
    X(GASP_SHMEM_BROADCAST, "shmem_broadcast" bits, PPW_OP_GROUP_COMM,                         \
      PPW_ARG(2) | PPW_ARG(3) | PPW_ELEMENT_SIZE(bytes), 0)                                     \
    X(GASP_SHMEM_COLLECT, "shmem_collect" bits, PPW_OP_GROUP_COMM,                             \
      PPW_ARG(2) | PPW_ELEMENT_SIZE(bytes), 0)                                                  \
    X(GASP_SHMEM_COLLECT, "shmem_fcollect" bits, PPW_OP_GROUP_COMM,                            \
      PPW_ARG(2) | PPW_ELEMENT_SIZE(bytes), 0)                                                  \
    X(GASP_SHMEM_ALLTOALL, "shmem_alltoall" bits, PPW_OP_GROUP_COMM,                           \
      PPW_ARG(2) | PPW_ELEMENT_SIZE(bytes), 0)                                                  \
    X(GASP_SHMEM_ALLTOALL, "shmem_alltoalls" bits, PPW_OP_GROUP_COMM,                          \
      PPW_ARG(4) | PPW_ELEMENT_SIZE(bytes), 0)
/* Point-to-point sync types: the AMO types and the shorts. */
#define PPW_SHMEM_SYNC_TYPES(F, X, P, S)                                                        \
    PPW_SHMEM_AMO_TYPES(F, X, P, S) F(X, P, S, short, short) F(X, P, S, ushort, unsigned short)
/* The deprecated AMO names' types, and those of their extended forms. */
#define PPW_SHMEM_OLD_AMO_TYPES(F, X, P, S)                                                     \
    F(X, P, S, int, int) F(X, P, S, long, long) F(X, P, S, longlong, long long)
#define PPW_SHMEM_FLOAT_TYPES(F, X, P, S) F(X, P, S, float, float) F(X, P, S, double, double)

/* clang-format off */
#define PPW_SHMEM_CALLS(X)                                                                      \
    X(GASP_SHMEM_INIT, "shmem_init", PPW_OP_INIT, 0, 0)                                         \
    X(GASP_SHMEM_INIT, "shmem_init_thread", PPW_OP_INIT, 0, 0)                                  \
    X(GASP_SHMEM_INIT, "start_pes", PPW_OP_INIT, 0, 0)                                          \
    X(GASP_SHMEM_FINALIZE, "shmem_finalize", PPW_OP_TERM, 0, 0)                                 \
    X(GASP_SHMEM_FINALIZE, "shmem_global_exit", PPW_OP_TERM, 0, 0)                              \
    PPW_SHMEM_RMA_TYPES(PPW_SHMEM_RMA_ROWS, X, "shmem_", 0)                                     \
    PPW_SHMEM_RMA_TYPES(PPW_SHMEM_RMA_ROWS, X, "shmem_ctx_", 1)                                 \
    PPW_SHMEM_ALL_SIZES(X, "shmem_", 0)                                                         \
    PPW_SHMEM_ALL_SIZES(X, "shmem_ctx_", 1)                                                     \
    PPW_SHMEM_AMO_TYPES(PPW_SHMEM_AMO_ROWS, X, "shmem_", 0)                                     \
    PPW_SHMEM_AMO_TYPES(PPW_SHMEM_AMO_ROWS, X, "shmem_ctx_", 1)                                 \
    PPW_SHMEM_FLOAT_TYPES(PPW_SHMEM_EXTENDED_AMO_ROWS, X, "shmem_", 0)                          \
    PPW_SHMEM_FLOAT_TYPES(PPW_SHMEM_EXTENDED_AMO_ROWS, X, "shmem_ctx_", 1)                      \
    PPW_SHMEM_BITWISE_TYPES(PPW_SHMEM_BITWISE_ROWS, X, "shmem_", 0)                             \
    PPW_SHMEM_BITWISE_TYPES(PPW_SHMEM_BITWISE_ROWS, X, "shmem_ctx_", 1)                         \
    PPW_SHMEM_OLD_AMO_TYPES(PPW_SHMEM_OLD_AMO_ROWS, X, "shmem_", 0)                             \
    PPW_SHMEM_FLOAT_TYPES(PPW_SHMEM_OLD_EXTENDED_ROWS, X, "shmem_", 0)                          \
    X(GASP_SHMEM_FENCE, "shmem_fence", PPW_OP_ONE_SIDED_SYNC, 0, 0)                             \
    X(GASP_SHMEM_FENCE, "shmem_ctx_fence", PPW_OP_ONE_SIDED_SYNC, 0, 0)                         \
    X(GASP_SHMEM_QUIET, "shmem_quiet", PPW_OP_ONE_SIDED_SYNC, 0, 0)                             \
    X(GASP_SHMEM_QUIET, "shmem_ctx_quiet", PPW_OP_ONE_SIDED_SYNC, 0, 0)                         \
    X(GASP_SHMEM_BARRIER, "shmem_barrier_all", PPW_OP_GROUP_SYNC, 0, 0)                         \
    X(GASP_SHMEM_BARRIER, "shmem_barrier", PPW_OP_GROUP_SYNC, 0, 0)                             \
    /* shmem_sync: the PEs meet, but, unlike a barrier, complete no transfer */               \
    X(GASP_SHMEM_SYNC, "shmem_sync_all", PPW_OP_GROUP_SYNC, 0, 0)                               \
    X(GASP_SHMEM_SYNC, "shmem_sync", PPW_OP_GROUP_SYNC, 0, 0)                                   \
    X(GASP_SHMEM_SET_LOCK, "shmem_set_lock", PPW_OP_LOCK_ACQUIRE, PPW_ARG(0), 0)                \
    X(GASP_SHMEM_TEST_LOCK, "shmem_test_lock", PPW_OP_LOCK_ACQUIRE, PPW_ARG(0), 1)              \
    X(GASP_SHMEM_CLEAR_LOCK, "shmem_clear_lock", PPW_OP_LOCK_RELEASE, PPW_ARG(0), 0)            \
    PPW_SHMEM_SYNC_TYPES(PPW_SHMEM_WAIT_ROWS, X, "shmem_", 0)                                   \
    X(GASP_SHMEM_WAIT_UNTIL, "shmem_wait_until", PPW_OP_WAIT_ON_VALUE,                          \
      PPW_ARG(0) | PPW_ELEMENT_SIZE(sizeof(long)), 0)                                           \
    X(GASP_SHMEM_WAIT_UNTIL, "shmem_wait", PPW_OP_WAIT_ON_VALUE,                                \
      PPW_ARG(0) | PPW_ELEMENT_SIZE(sizeof(long)), 0)                                           \
    PPW_SHMEM_COLLECTIVE_ROWS(X, "32", 4)                                                       \
    PPW_SHMEM_COLLECTIVE_ROWS(X, "64", 8)                                                       \
    PPW_SHMEM_INT_REDUCE_TYPES(PPW_SHMEM_INT_REDUCE_ROWS, X, "shmem_", 0)                       \
    PPW_SHMEM_REAL_REDUCE_TYPES(PPW_SHMEM_REAL_REDUCE_ROWS, X, "shmem_", 0)                     \
    PPW_SHMEM_REDUCE_ROW(X, "shmem_", complexf, "sum", 2 * sizeof(float))                       \
    PPW_SHMEM_REDUCE_ROW(X, "shmem_", complexf, "prod", 2 * sizeof(float))                      \
    PPW_SHMEM_REDUCE_ROW(X, "shmem_", complexd, "sum", 2 * sizeof(double))                      \
    PPW_SHMEM_REDUCE_ROW(X, "shmem_", complexd, "prod", 2 * sizeof(double))                     \
    /* allocation in the symmetric heap: (size), (alignment, size), */                          \
    /* (count, size), (ptr, size), (ptr) */                                                     \
    X(GASP_SHMEM_MALLOC, "shmem_malloc", PPW_OP_GLOBAL_ALLOC, PPW_ARG(0), 1)                    \
    X(GASP_SHMEM_MALLOC, "shmem_align", PPW_OP_GLOBAL_ALLOC, PPW_ARG(1), 1)                     \
    X(GASP_SHMEM_MALLOC, "shmalloc", PPW_OP_GLOBAL_ALLOC, PPW_ARG(0), 1)                        \
    X(GASP_SHMEM_MALLOC, "shmemalign", PPW_OP_GLOBAL_ALLOC, PPW_ARG(1), 1)                      \
    X(GASP_SHMEM_CALLOC, "shmem_calloc", PPW_OP_GLOBAL_ALLOC, PPW_ARG(0) | PPW_ARG(1), 1)       \
    X(GASP_SHMEM_REALLOC, "shmem_realloc", PPW_OP_GLOBAL_ALLOC, PPW_ARG(0) | PPW_ARG(1), 1)     \
    X(GASP_SHMEM_REALLOC, "shrealloc", PPW_OP_GLOBAL_ALLOC, PPW_ARG(0) | PPW_ARG(1), 1)         \
    X(GASP_SHMEM_FREE, "shmem_free", PPW_OP_GLOBAL_FREE, PPW_ARG(0), 0)                         \
    X(GASP_SHMEM_FREE, "shfree", PPW_OP_GLOBAL_FREE, PPW_ARG(0), 0)
/* clang-format on */

/* clang-format off */
#define PPW_GASP_CALLS(X)                                                                       \
    X(GASP_C_MALLOC, "malloc", PPW_OP_MEM_ALLOC, PPW_ARG(0), 1)                                 \
    X(GASP_C_CALLOC, "calloc", PPW_OP_MEM_ALLOC, PPW_ARG(0) | PPW_ARG(1), 1)                    \
    X(GASP_C_REALLOC, "realloc", PPW_OP_MEM_ALLOC, PPW_ARG(0) | PPW_ARG(1), 1)                  \
    X(GASP_C_FREE, "free", PPW_OP_MEM_FREE, PPW_ARG(0), 0)                                      \
    X(GASP_C_DLOPEN, "dlopen", PPW_OP_INIT, PPW_ARG(0) | PPW_ARG(1), 1)                         \
    X(GASP_C_DLCLOSE, "dlclose", PPW_OP_TERM, PPW_ARG(0), 1)                                    \
    X(GASP_PTHREAD_CREATE, "pthread_create", PPW_OP_SPAWN, PPW_ARG(2), 1)                       \
    X(GASP_PTHREAD_JOIN, "pthread_join", PPW_OP_JOIN, PPW_ARG(0), 1)                            \
    X(GASP_PTHREAD_MUTEX_LOCK, "pthread_mutex_lock", PPW_OP_LOCK_ACQUIRE, PPW_ARG(0), 1)        \
    X(GASP_PTHREAD_MUTEX_TRYLOCK, "pthread_mutex_trylock", PPW_OP_LOCK_ACQUIRE, PPW_ARG(0), 1)  \
    X(GASP_PTHREAD_MUTEX_UNLOCK, "pthread_mutex_unlock", PPW_OP_LOCK_RELEASE, PPW_ARG(0), 1)    \
    X(GASP_PTHREAD_BARRIER_WAIT, "pthread_barrier_wait", PPW_OP_GROUP_SYNC, PPW_ARG(0), 1)      \
    X(GASP_PTHREAD_COND_WAIT, "pthread_cond_wait", PPW_OP_WAIT_ON_VALUE,                        \
      PPW_ARG(0) | PPW_ARG(1), 1)                                                               \
    X(GASP_PTHREAD_COND_TIMEDWAIT, "pthread_cond_timedwait", PPW_OP_WAIT_ON_VALUE,              \
      PPW_ARG(0) | PPW_ARG(1), 1)                                                               \
    X(GASP_PTHREAD_COND_SIGNAL, "pthread_cond_signal", PPW_OP_SIGNAL_VALUE, PPW_ARG(0), 1)      \
    X(GASP_PTHREAD_COND_BROADCAST, "pthread_cond_broadcast", PPW_OP_SIGNAL_VALUE, PPW_ARG(0), 1) \
    X(GASP_PTHREAD_SPIN_LOCK, "pthread_spin_lock", PPW_OP_LOCK_ACQUIRE, PPW_ARG(0), 1)          \
    X(GASP_PTHREAD_SPIN_UNLOCK, "pthread_spin_unlock", PPW_OP_LOCK_RELEASE, PPW_ARG(0), 1)      \
    X(GASP_PTHREAD_RWLOCK_RDLOCK, "pthread_rwlock_rdlock", PPW_OP_LOCK_ACQUIRE, PPW_ARG(0), 1)  \
    X(GASP_PTHREAD_RWLOCK_WRLOCK, "pthread_rwlock_wrlock", PPW_OP_LOCK_ACQUIRE, PPW_ARG(0), 1)  \
    X(GASP_PTHREAD_RWLOCK_UNLOCK, "pthread_rwlock_unlock", PPW_OP_LOCK_RELEASE, PPW_ARG(0), 1)  \
    X(GASP_OMP_PARALLEL, "__kmpc_fork_call", PPW_OP_SPAWN, PPW_ARG(2), 0)                       \
    X(GASP_OMP_BARRIER, "__kmpc_barrier", PPW_OP_GROUP_SYNC, 0, 0)                              \
    X(GASP_OMP_CRITICAL, "__kmpc_critical", PPW_OP_LOCK_ACQUIRE, PPW_ARG(2), 0)                 \
    X(GASP_OMP_CRITICAL, "__kmpc_critical_with_hint", PPW_OP_LOCK_ACQUIRE, PPW_ARG(2), 0)       \
    X(GASP_OMP_CRITICAL_EXIT, "__kmpc_end_critical", PPW_OP_LOCK_RELEASE, PPW_ARG(2), 0)        \
    X(GASP_OMP_TASK_CREATE, "__kmpc_omp_task", PPW_OP_SPAWN, PPW_ARG(2), 1)                     \
    X(GASP_OMP_TASK_CREATE, "__kmpc_omp_task_with_deps", PPW_OP_SPAWN, PPW_ARG(2), 1)           \
    X(GASP_OMP_TASKLOOP, "__kmpc_taskloop", PPW_OP_SPAWN, PPW_ARG(2), 0)                        \
    X(GASP_OMP_TASKWAIT, "__kmpc_omp_taskwait", PPW_OP_JOIN, 0, 1)                              \
    X(GASP_OMP_TASKGROUP_END, "__kmpc_end_taskgroup", PPW_OP_JOIN, 0, 0)                        \
    X(GASP_OMP_SET_LOCK, "omp_set_lock", PPW_OP_LOCK_ACQUIRE, PPW_ARG(0), 0)                    \
    X(GASP_OMP_SET_LOCK, "omp_set_nest_lock", PPW_OP_LOCK_ACQUIRE, PPW_ARG(0), 0)               \
    X(GASP_OMP_UNSET_LOCK, "omp_unset_lock", PPW_OP_LOCK_RELEASE, PPW_ARG(0), 0)                \
    X(GASP_OMP_UNSET_LOCK, "omp_unset_nest_lock", PPW_OP_LOCK_RELEASE, PPW_ARG(0), 0)           \
    X(GASP_OMP_REDUCE, "__kmpc_reduce", PPW_OP_GROUP_COMM, 0, 1)                                \
    X(GASP_OMP_REDUCE, "__kmpc_reduce_nowait", PPW_OP_GROUP_COMM, 0, 1)                         \
    X(GASP_MPI_INIT, "MPI_Init", PPW_OP_INIT, 0, 1)                                             \
    X(GASP_MPI_INIT, "MPI_Init_thread", PPW_OP_INIT, 0, 1)                                      \
    X(GASP_MPI_FINALIZE, "MPI_Finalize", PPW_OP_TERM, 0, 1)                                     \
    /* (buf, count, type, peer, tag, comm): forward count, type, peer, tag, comm */             \
    X(GASP_MPI_SEND, "MPI_Send", PPW_OP_SEND, 0x3eu, 1)                                         \
    X(GASP_MPI_SEND, "MPI_Ssend", PPW_OP_SEND, 0x3eu, 1)                                        \
    X(GASP_MPI_SEND, "MPI_Bsend", PPW_OP_SEND, 0x3eu, 1)                                        \
    X(GASP_MPI_SEND, "MPI_Rsend", PPW_OP_SEND, 0x3eu, 1)                                        \
    X(GASP_MPI_RECV, "MPI_Recv", PPW_OP_RECV, 0x3eu, 1)                                         \
    X(GASP_MPI_ISEND, "MPI_Isend", PPW_OP_SEND_NB, 0x3eu, 1)                                    \
    X(GASP_MPI_IRECV, "MPI_Irecv", PPW_OP_RECV_NB, 0x3eu, 1)                                    \
    X(GASP_MPI_WAIT, "MPI_Wait", PPW_OP_COMM_SYNC, PPW_ARG(0), 1)                               \
    X(GASP_MPI_WAITALL, "MPI_Waitall", PPW_OP_COMM_SYNC, PPW_ARG(0), 1)                         \
    X(GASP_MPI_WAITANY, "MPI_Waitany", PPW_OP_COMM_SYNC, PPW_ARG(0), 1)                         \
    /* (sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, status) */       \
    X(GASP_MPI_SENDRECV, "MPI_Sendrecv", PPW_OP_SEND, 0x7deu, 1)                                \
    X(GASP_MPI_BARRIER, "MPI_Barrier", PPW_OP_GROUP_SYNC, PPW_ARG(0), 1)                        \
    /* (buf, count, type, root, comm) */                                                        \
    X(GASP_MPI_BCAST, "MPI_Bcast", PPW_OP_GROUP_COMM, 0x1eu, 1)                                 \
    /* (sbuf, rbuf, count, type, op, root, comm) */                                             \
    X(GASP_MPI_REDUCE, "MPI_Reduce", PPW_OP_GROUP_COMM, 0x6cu, 1)                               \
    /* (sbuf, rbuf, count, type, op, comm) */                                                   \
    X(GASP_MPI_ALLREDUCE, "MPI_Allreduce", PPW_OP_GROUP_COMM, 0x2cu, 1)                         \
    /* (sbuf, scount, stype, rbuf, rcount, rtype[, root], comm) */                              \
    X(GASP_MPI_GATHER, "MPI_Gather", PPW_OP_GROUP_COMM, 0xc6u, 1)                               \
    X(GASP_MPI_ALLGATHER, "MPI_Allgather", PPW_OP_GROUP_COMM, 0x46u, 1)                         \
    X(GASP_MPI_SCATTER, "MPI_Scatter", PPW_OP_GROUP_COMM, 0xc6u, 1)                             \
    X(GASP_MPI_ALLTOALL, "MPI_Alltoall", PPW_OP_GROUP_COMM, 0x46u, 1)                           \
    /* One-sided. (oaddr, ocount, otype, rank, disp, tcount, ttype, win[, req]) */              \
    /* forward ocount, otype, rank, disp, win */                                                \
    X(GASP_MPI_PUT, "MPI_Put", PPW_OP_PUT, 0x9eu, 1)                                            \
    X(GASP_MPI_RPUT, "MPI_Rput", PPW_OP_PUT_NB, 0x9eu, 1)                                       \
    X(GASP_MPI_GET, "MPI_Get", PPW_OP_GET, 0x9eu, 1)                                            \
    X(GASP_MPI_RGET, "MPI_Rget", PPW_OP_GET_NB, 0x9eu, 1)                                       \
    /* (oaddr, ocount, otype, rank, disp, tcount, ttype, op, win[, req]) */                     \
    X(GASP_MPI_ACCUMULATE, "MPI_Accumulate", PPW_OP_PUT, 0x11eu, 1)                             \
    X(GASP_MPI_RACCUMULATE, "MPI_Raccumulate", PPW_OP_PUT_NB, 0x11eu, 1)                        \
    /* (oaddr, ocount, otype, raddr, rcount, rtype, rank, disp, tcount, ttype, op, win */       \
    /* [, req]): forward ocount, otype, rcount, rtype, rank, disp, win */                       \
    X(GASP_MPI_GET_ACCUMULATE, "MPI_Get_accumulate", PPW_OP_ATOMIC, 0x8f6u, 1)                  \
    X(GASP_MPI_RGET_ACCUMULATE, "MPI_Rget_accumulate", PPW_OP_GET_NB, 0x8f6u, 1)                \
    /* (oaddr, raddr, type, rank, disp, op, win): type, rank, disp, win */                      \
    X(GASP_MPI_FETCH_AND_OP, "MPI_Fetch_and_op", PPW_OP_ATOMIC, 0x5cu, 1)                       \
    /* (oaddr, caddr, raddr, type, rank, disp, win): type, rank, disp, win */                   \
    X(GASP_MPI_COMPARE_AND_SWAP, "MPI_Compare_and_swap", PPW_OP_ATOMIC, 0x78u, 1)               \
    /* (assert, win) */                                                                         \
    X(GASP_MPI_WIN_FENCE, "MPI_Win_fence", PPW_OP_ONE_SIDED_SYNC, 0x3u, 1)                      \
    /* (lock_type, rank, assert, win): lock_type, rank, win */                                  \
    X(GASP_MPI_WIN_LOCK, "MPI_Win_lock", PPW_OP_LOCK_ACQUIRE, 0xbu, 1)                          \
    X(GASP_MPI_WIN_LOCK_ALL, "MPI_Win_lock_all", PPW_OP_LOCK_ACQUIRE, PPW_ARG(1), 1)            \
    /* (rank, win) */                                                                           \
    X(GASP_MPI_WIN_UNLOCK, "MPI_Win_unlock", PPW_OP_LOCK_RELEASE, 0x3u, 1)                      \
    X(GASP_MPI_WIN_UNLOCK_ALL, "MPI_Win_unlock_all", PPW_OP_LOCK_RELEASE, PPW_ARG(0), 1)        \
    X(GASP_MPI_WIN_FLUSH, "MPI_Win_flush", PPW_OP_ONE_SIDED_SYNC, 0x3u, 1)                      \
    X(GASP_MPI_WIN_FLUSH, "MPI_Win_flush_local", PPW_OP_ONE_SIDED_SYNC, 0x3u, 1)                \
    X(GASP_MPI_WIN_FLUSH_ALL, "MPI_Win_flush_all", PPW_OP_ONE_SIDED_SYNC, PPW_ARG(0), 1)        \
    X(GASP_MPI_WIN_FLUSH_ALL, "MPI_Win_flush_local_all", PPW_OP_ONE_SIDED_SYNC, PPW_ARG(0), 1)  \
    /* (group, assert, win): group, win */                                                      \
    X(GASP_MPI_WIN_POST, "MPI_Win_post", PPW_OP_ONE_SIDED_SYNC, 0x5u, 1)                        \
    X(GASP_MPI_WIN_START, "MPI_Win_start", PPW_OP_ONE_SIDED_SYNC, 0x5u, 1)                      \
    X(GASP_MPI_WIN_COMPLETE, "MPI_Win_complete", PPW_OP_ONE_SIDED_SYNC, PPW_ARG(0), 1)          \
    X(GASP_MPI_WIN_WAIT, "MPI_Win_wait", PPW_OP_ONE_SIDED_SYNC, PPW_ARG(0), 1)                  \
    /* (base, size, disp_unit, info, comm, &win): base, size, disp_unit, comm, &win */          \
    X(GASP_MPI_WIN_CREATE, "MPI_Win_create", PPW_OP_GLOBAL_ALLOC, 0x37u, 1)                     \
    /* (size, disp_unit, info, comm, &base, &win): size, disp_unit, comm, &base, &win */        \
    X(GASP_MPI_WIN_ALLOCATE, "MPI_Win_allocate", PPW_OP_GLOBAL_ALLOC, 0x3bu, 1)                 \
    X(GASP_MPI_WIN_ALLOCATE, "MPI_Win_allocate_shared", PPW_OP_GLOBAL_ALLOC, 0x3bu, 1)          \
    X(GASP_MPI_WIN_FREE, "MPI_Win_free", PPW_OP_GLOBAL_FREE, PPW_ARG(0), 1)                     \
    PPW_SHMEM_CALLS(X)
/* clang-format on */

/* Every tag, once, with its symbolic name (for --inst-only files and for
 * readers).  GASP_C_FUNC is first. */
#define PPW_GASP_TAGS(X)                                                                        \
    X(GASP_C_FUNC, "GASP_C_FUNC", PPW_OP_FUNCTION)                                              \
    X(GASP_C_FUNC_GATED, "GASP_C_FUNC_GATED", PPW_OP_FUNCTION)                                  \
    X(GASP_C_MALLOC, "GASP_C_MALLOC", PPW_OP_MEM_ALLOC)                                         \
    X(GASP_C_REALLOC, "GASP_C_REALLOC", PPW_OP_MEM_ALLOC)                                       \
    X(GASP_C_FREE, "GASP_C_FREE", PPW_OP_MEM_FREE)                                              \
    X(GASP_C_CALLOC, "GASP_C_CALLOC", PPW_OP_MEM_ALLOC)                                         \
    X(GASP_C_DLOPEN, "GASP_C_DLOPEN", PPW_OP_INIT)                                              \
    X(GASP_C_DLCLOSE, "GASP_C_DLCLOSE", PPW_OP_TERM)                                            \
    X(GASP_PTHREAD_CREATE, "GASP_PTHREAD_CREATE", PPW_OP_SPAWN)                                 \
    X(GASP_PTHREAD_JOIN, "GASP_PTHREAD_JOIN", PPW_OP_JOIN)                                      \
    X(GASP_PTHREAD_MUTEX_LOCK, "GASP_PTHREAD_MUTEX_LOCK", PPW_OP_LOCK_ACQUIRE)                  \
    X(GASP_PTHREAD_MUTEX_TRYLOCK, "GASP_PTHREAD_MUTEX_TRYLOCK", PPW_OP_LOCK_ACQUIRE)            \
    X(GASP_PTHREAD_MUTEX_UNLOCK, "GASP_PTHREAD_MUTEX_UNLOCK", PPW_OP_LOCK_RELEASE)              \
    X(GASP_PTHREAD_BARRIER_WAIT, "GASP_PTHREAD_BARRIER_WAIT", PPW_OP_GROUP_SYNC)                \
    X(GASP_PTHREAD_COND_WAIT, "GASP_PTHREAD_COND_WAIT", PPW_OP_WAIT_ON_VALUE)                   \
    X(GASP_PTHREAD_COND_TIMEDWAIT, "GASP_PTHREAD_COND_TIMEDWAIT", PPW_OP_WAIT_ON_VALUE)         \
    X(GASP_PTHREAD_COND_SIGNAL, "GASP_PTHREAD_COND_SIGNAL", PPW_OP_SIGNAL_VALUE)                \
    X(GASP_PTHREAD_COND_BROADCAST, "GASP_PTHREAD_COND_BROADCAST", PPW_OP_SIGNAL_VALUE)          \
    X(GASP_PTHREAD_SPIN_LOCK, "GASP_PTHREAD_SPIN_LOCK", PPW_OP_LOCK_ACQUIRE)                    \
    X(GASP_PTHREAD_SPIN_UNLOCK, "GASP_PTHREAD_SPIN_UNLOCK", PPW_OP_LOCK_RELEASE)                \
    X(GASP_PTHREAD_RWLOCK_RDLOCK, "GASP_PTHREAD_RWLOCK_RDLOCK", PPW_OP_LOCK_ACQUIRE)            \
    X(GASP_PTHREAD_RWLOCK_WRLOCK, "GASP_PTHREAD_RWLOCK_WRLOCK", PPW_OP_LOCK_ACQUIRE)            \
    X(GASP_PTHREAD_RWLOCK_UNLOCK, "GASP_PTHREAD_RWLOCK_UNLOCK", PPW_OP_LOCK_RELEASE)            \
    X(GASP_OMP_PARALLEL, "GASP_OMP_PARALLEL", PPW_OP_SPAWN)                                     \
    X(GASP_OMP_BARRIER, "GASP_OMP_BARRIER", PPW_OP_GROUP_SYNC)                                  \
    X(GASP_OMP_CRITICAL, "GASP_OMP_CRITICAL", PPW_OP_LOCK_ACQUIRE)                              \
    X(GASP_OMP_CRITICAL_EXIT, "GASP_OMP_CRITICAL_EXIT", PPW_OP_LOCK_RELEASE)                    \
    X(GASP_OMP_TASK_CREATE, "GASP_OMP_TASK_CREATE", PPW_OP_SPAWN)                               \
    X(GASP_OMP_TASKWAIT, "GASP_OMP_TASKWAIT", PPW_OP_JOIN)                                      \
    X(GASP_OMP_TASKGROUP_END, "GASP_OMP_TASKGROUP_END", PPW_OP_JOIN)                            \
    X(GASP_OMP_SET_LOCK, "GASP_OMP_SET_LOCK", PPW_OP_LOCK_ACQUIRE)                              \
    X(GASP_OMP_UNSET_LOCK, "GASP_OMP_UNSET_LOCK", PPW_OP_LOCK_RELEASE)                          \
    X(GASP_OMP_REDUCE, "GASP_OMP_REDUCE", PPW_OP_GROUP_COMM)                                    \
    X(GASP_OMP_TASKLOOP, "GASP_OMP_TASKLOOP", PPW_OP_SPAWN)                                     \
    X(GASP_MPI_INIT, "GASP_MPI_INIT", PPW_OP_INIT)                                              \
    X(GASP_MPI_FINALIZE, "GASP_MPI_FINALIZE", PPW_OP_TERM)                                      \
    X(GASP_MPI_SEND, "GASP_MPI_SEND", PPW_OP_SEND)                                              \
    X(GASP_MPI_RECV, "GASP_MPI_RECV", PPW_OP_RECV)                                              \
    X(GASP_MPI_ISEND, "GASP_MPI_ISEND", PPW_OP_SEND_NB)                                         \
    X(GASP_MPI_IRECV, "GASP_MPI_IRECV", PPW_OP_RECV_NB)                                         \
    X(GASP_MPI_WAIT, "GASP_MPI_WAIT", PPW_OP_COMM_SYNC)                                         \
    X(GASP_MPI_WAITALL, "GASP_MPI_WAITALL", PPW_OP_COMM_SYNC)                                   \
    X(GASP_MPI_WAITANY, "GASP_MPI_WAITANY", PPW_OP_COMM_SYNC)                                   \
    X(GASP_MPI_SENDRECV, "GASP_MPI_SENDRECV", PPW_OP_SEND)                                      \
    X(GASP_MPI_BARRIER, "GASP_MPI_BARRIER", PPW_OP_GROUP_SYNC)                                  \
    X(GASP_MPI_BCAST, "GASP_MPI_BCAST", PPW_OP_GROUP_COMM)                                      \
    X(GASP_MPI_REDUCE, "GASP_MPI_REDUCE", PPW_OP_GROUP_COMM)                                    \
    X(GASP_MPI_ALLREDUCE, "GASP_MPI_ALLREDUCE", PPW_OP_GROUP_COMM)                              \
    X(GASP_MPI_GATHER, "GASP_MPI_GATHER", PPW_OP_GROUP_COMM)                                    \
    X(GASP_MPI_ALLGATHER, "GASP_MPI_ALLGATHER", PPW_OP_GROUP_COMM)                              \
    X(GASP_MPI_SCATTER, "GASP_MPI_SCATTER", PPW_OP_GROUP_COMM)                                  \
    X(GASP_MPI_ALLTOALL, "GASP_MPI_ALLTOALL", PPW_OP_GROUP_COMM)                                \
    X(GASP_MPI_PUT, "GASP_MPI_PUT", PPW_OP_PUT)                                                 \
    X(GASP_MPI_RPUT, "GASP_MPI_RPUT", PPW_OP_PUT_NB)                                            \
    X(GASP_MPI_GET, "GASP_MPI_GET", PPW_OP_GET)                                                 \
    X(GASP_MPI_RGET, "GASP_MPI_RGET", PPW_OP_GET_NB)                                            \
    X(GASP_MPI_ACCUMULATE, "GASP_MPI_ACCUMULATE", PPW_OP_PUT)                                   \
    X(GASP_MPI_RACCUMULATE, "GASP_MPI_RACCUMULATE", PPW_OP_PUT_NB)                              \
    X(GASP_MPI_GET_ACCUMULATE, "GASP_MPI_GET_ACCUMULATE", PPW_OP_ATOMIC)                        \
    X(GASP_MPI_RGET_ACCUMULATE, "GASP_MPI_RGET_ACCUMULATE", PPW_OP_GET_NB)                      \
    X(GASP_MPI_FETCH_AND_OP, "GASP_MPI_FETCH_AND_OP", PPW_OP_ATOMIC)                            \
    X(GASP_MPI_COMPARE_AND_SWAP, "GASP_MPI_COMPARE_AND_SWAP", PPW_OP_ATOMIC)                    \
    X(GASP_MPI_WIN_FENCE, "GASP_MPI_WIN_FENCE", PPW_OP_ONE_SIDED_SYNC)                          \
    X(GASP_MPI_WIN_LOCK, "GASP_MPI_WIN_LOCK", PPW_OP_LOCK_ACQUIRE)                              \
    X(GASP_MPI_WIN_LOCK_ALL, "GASP_MPI_WIN_LOCK_ALL", PPW_OP_LOCK_ACQUIRE)                      \
    X(GASP_MPI_WIN_UNLOCK, "GASP_MPI_WIN_UNLOCK", PPW_OP_LOCK_RELEASE)                          \
    X(GASP_MPI_WIN_UNLOCK_ALL, "GASP_MPI_WIN_UNLOCK_ALL", PPW_OP_LOCK_RELEASE)                  \
    X(GASP_MPI_WIN_FLUSH, "GASP_MPI_WIN_FLUSH", PPW_OP_ONE_SIDED_SYNC)                          \
    X(GASP_MPI_WIN_FLUSH_ALL, "GASP_MPI_WIN_FLUSH_ALL", PPW_OP_ONE_SIDED_SYNC)                  \
    X(GASP_MPI_WIN_POST, "GASP_MPI_WIN_POST", PPW_OP_ONE_SIDED_SYNC)                            \
    X(GASP_MPI_WIN_START, "GASP_MPI_WIN_START", PPW_OP_ONE_SIDED_SYNC)                          \
    X(GASP_MPI_WIN_COMPLETE, "GASP_MPI_WIN_COMPLETE", PPW_OP_ONE_SIDED_SYNC)                    \
    X(GASP_MPI_WIN_WAIT, "GASP_MPI_WIN_WAIT", PPW_OP_ONE_SIDED_SYNC)                            \
    X(GASP_MPI_WIN_CREATE, "GASP_MPI_WIN_CREATE", PPW_OP_GLOBAL_ALLOC)                          \
    X(GASP_MPI_WIN_ALLOCATE, "GASP_MPI_WIN_ALLOCATE", PPW_OP_GLOBAL_ALLOC)                      \
    X(GASP_MPI_WIN_FREE, "GASP_MPI_WIN_FREE", PPW_OP_GLOBAL_FREE)                               \
    X(GASP_SHMEM_INIT, "GASP_SHMEM_INIT", PPW_OP_INIT)                                          \
    X(GASP_SHMEM_FINALIZE, "GASP_SHMEM_FINALIZE", PPW_OP_TERM)                                  \
    X(GASP_SHMEM_PUT, "GASP_SHMEM_PUT", PPW_OP_PUT)                                             \
    X(GASP_SHMEM_P, "GASP_SHMEM_P", PPW_OP_PUT)                                                 \
    X(GASP_SHMEM_PUT_NBI, "GASP_SHMEM_PUT_NBI", PPW_OP_PUT_NB)                                  \
    X(GASP_SHMEM_GET, "GASP_SHMEM_GET", PPW_OP_GET)                                             \
    X(GASP_SHMEM_G, "GASP_SHMEM_G", PPW_OP_GET)                                                 \
    X(GASP_SHMEM_GET_NBI, "GASP_SHMEM_GET_NBI", PPW_OP_GET_NB)                                  \
    X(GASP_SHMEM_ATOMIC, "GASP_SHMEM_ATOMIC", PPW_OP_ATOMIC)                                    \
    X(GASP_SHMEM_FENCE, "GASP_SHMEM_FENCE", PPW_OP_ONE_SIDED_SYNC)                              \
    X(GASP_SHMEM_QUIET, "GASP_SHMEM_QUIET", PPW_OP_ONE_SIDED_SYNC)                              \
    X(GASP_SHMEM_BARRIER, "GASP_SHMEM_BARRIER", PPW_OP_GROUP_SYNC)                              \
    X(GASP_SHMEM_SET_LOCK, "GASP_SHMEM_SET_LOCK", PPW_OP_LOCK_ACQUIRE)                          \
    X(GASP_SHMEM_TEST_LOCK, "GASP_SHMEM_TEST_LOCK", PPW_OP_LOCK_ACQUIRE)                        \
    X(GASP_SHMEM_CLEAR_LOCK, "GASP_SHMEM_CLEAR_LOCK", PPW_OP_LOCK_RELEASE)                      \
    X(GASP_SHMEM_WAIT_UNTIL, "GASP_SHMEM_WAIT_UNTIL", PPW_OP_WAIT_ON_VALUE)                     \
    X(GASP_SHMEM_BROADCAST, "GASP_SHMEM_BROADCAST", PPW_OP_GROUP_COMM)                          \
    X(GASP_SHMEM_COLLECT, "GASP_SHMEM_COLLECT", PPW_OP_GROUP_COMM)                              \
    X(GASP_SHMEM_ALLTOALL, "GASP_SHMEM_ALLTOALL", PPW_OP_GROUP_COMM)                            \
    X(GASP_SHMEM_REDUCE, "GASP_SHMEM_REDUCE", PPW_OP_GROUP_COMM)                                \
    X(GASP_SHMEM_MALLOC, "GASP_SHMEM_MALLOC", PPW_OP_GLOBAL_ALLOC)                              \
    X(GASP_SHMEM_CALLOC, "GASP_SHMEM_CALLOC", PPW_OP_GLOBAL_ALLOC)                              \
    X(GASP_SHMEM_REALLOC, "GASP_SHMEM_REALLOC", PPW_OP_GLOBAL_ALLOC)                            \
    X(GASP_SHMEM_FREE, "GASP_SHMEM_FREE", PPW_OP_GLOBAL_FREE)                                   \
    X(GASP_SHMEM_SYNC, "GASP_SHMEM_SYNC", PPW_OP_GROUP_SYNC)


/* The data an MPI event says it moves, from its START operands (the
 * masks above): up to two (count, datatype handle) pairs, e.g. a
 * sendrecv's send and receive parts, an accumulate's origin and result.
 * Returns how many pairs (0: the event moves no data, or too few
 * operands).  A datatype's size needs MPI (runtime) or the profile's
 * bytes (readers). */
struct ppw_gasp_moved {
    int64_t count[2];
    uint64_t type[2];
};

static inline int ppw_gasp_tag_moves_elements(unsigned tag)
{
    switch (tag) {
    case GASP_MPI_SEND:
    case GASP_MPI_RECV:
    case GASP_MPI_ISEND:
    case GASP_MPI_IRECV:
    case GASP_MPI_SENDRECV:
    case GASP_MPI_BCAST:
    case GASP_MPI_REDUCE:
    case GASP_MPI_ALLREDUCE:
    case GASP_MPI_GATHER:
    case GASP_MPI_ALLGATHER:
    case GASP_MPI_SCATTER:
    case GASP_MPI_ALLTOALL:
    case GASP_MPI_PUT:
    case GASP_MPI_RPUT:
    case GASP_MPI_GET:
    case GASP_MPI_RGET:
    case GASP_MPI_ACCUMULATE:
    case GASP_MPI_RACCUMULATE:
    case GASP_MPI_GET_ACCUMULATE:
    case GASP_MPI_RGET_ACCUMULATE:
    case GASP_MPI_FETCH_AND_OP:
    case GASP_MPI_COMPARE_AND_SWAP: return 1;
    default: return 0;
    }
}

static inline int ppw_gasp_moved_elements(unsigned tag, const uint64_t *args, uint32_t nargs,
                                          struct ppw_gasp_moved *out)
{
    if (!ppw_gasp_tag_moves_elements(tag))
        return 0;
    switch (tag) {
    case GASP_MPI_FETCH_AND_OP: /* type rank disp win: one element */
    case GASP_MPI_COMPARE_AND_SWAP:
        if (nargs < 1)
            return 0;
        out->count[0] = 1, out->type[0] = args[0];
        return 1;
    case GASP_MPI_SENDRECV: /* scount stype dest stag rcount rtype ... */
        if (nargs < 6)
            return 0;
        out->count[0] = (int64_t)args[0], out->type[0] = args[1];
        out->count[1] = (int64_t)args[4], out->type[1] = args[5];
        return 2;
    case GASP_MPI_GET_ACCUMULATE: /* ocount otype rcount rtype ... */
    case GASP_MPI_RGET_ACCUMULATE:
        if (nargs < 4)
            return 0;
        out->count[0] = (int64_t)args[0], out->type[0] = args[1];
        out->count[1] = (int64_t)args[2], out->type[1] = args[3];
        return 2;
    default: /* count type ... */
        if (nargs < 2)
            return 0;
        out->count[0] = (int64_t)args[0], out->type[0] = args[1];
        return 1;
    }
}

/* The bytes an OpenSHMEM event moves, from its START operands (the rows
 * above: the element size comes last), or 0. */
static inline uint64_t ppw_gasp_shmem_bytes(unsigned tag, const uint64_t *args, uint32_t nargs)
{
    uint64_t count = 0, size = 0, bytes;
    switch (tag) {
    case GASP_SHMEM_PUT: /* addr nelems pe size */
    case GASP_SHMEM_PUT_NBI:
    case GASP_SHMEM_GET:
    case GASP_SHMEM_GET_NBI:
        if (nargs >= 4)
            count = args[1], size = args[3];
        break;
    case GASP_SHMEM_P: /* addr pe size */
    case GASP_SHMEM_G:
    case GASP_SHMEM_ATOMIC:
        if (nargs >= 3)
            count = 1, size = args[2];
        break;
    case GASP_SHMEM_BROADCAST: /* nelems root size */
        if (nargs >= 3)
            count = args[0], size = args[2];
        break;
    case GASP_SHMEM_COLLECT: /* nelems size (nreduce: a C int, sign-extended) */
    case GASP_SHMEM_ALLTOALL:
    case GASP_SHMEM_REDUCE:
        if (nargs >= 2)
            count = args[0], size = args[1];
        break;
    default: break;
    }
    if ((int64_t)count <= 0 || __builtin_mul_overflow(count, size, &bytes))
        return 0; /* a negative count or a damaged record moves nothing known */
    return bytes;
}

static inline int ppw_gasp_tag_is_shmem(unsigned tag)
{
    return tag >= GASP_SHMEM_INIT && tag <= GASP_SHMEM_LAST;
}

/* Whether a tag is one of MPI's (their START tells libppw's PMPI wrappers
 * that the pass wrapped the call; a call their quiet site does not send
 * goes to PMPI_X instead, pass/instrument.c). */
static inline int ppw_gasp_tag_is_mpi(unsigned tag)
{
    return tag >= GASP_MPI_INIT && tag <= GASP_MPI_LAST;
}

#endif
