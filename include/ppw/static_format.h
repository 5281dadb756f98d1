/* The static blame-graph format: the contract between ppw.so (writer) and
 * ppw-blame (reader).  Documented in docs/FORMATS.md; change both together.
 *
 * Each translation unit contributes one chunk to the non-allocated ELF
 * section PPW_STATIC_SECTION.  The linker concatenates chunks; readers walk
 * them by chunk_size and skip zero padding between them. */
#ifndef PPW_STATIC_FORMAT_H
#define PPW_STATIC_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define PPW_STATIC_SECTION ".ppw.blame"
#define PPW_STATIC_MAGIC "PPWB"
#define PPW_STATIC_MAJOR 1
#define PPW_STATIC_MINOR 3 /* 1.1 added PPW_REC_ACCESS, 1.2 PPW_REC_FLOW, 1.3 PPW_VAR_SCALAR */
#define PPW_STATIC_HEADER_SIZE 40

/* Chunk header, little-endian, at offset 0 of each chunk:
 *   0 u8[4] magic  4 u16 major  6 u16 minor  8 u32 header_size
 *  12 u32 chunk_size  16 u64 payload_hash (FNV-1a 64 of the bytes after the
 *  header)  24 u32 record_count  28 u32 flags  32 u64 unit_id */

/* Records follow the header: {u32 kind, u32 size} then size payload bytes.
 * Payload fields are ULEB128 ("u"), SLEB128 ("s") or string references
 * ("str": ULEB128 offset into the chunk's STRTAB, which comes first). */
enum ppw_static_record {
    PPW_REC_STRTAB = 1, /* NUL-terminated strings; offset 0 is "" */
    PPW_REC_UNIT = 2,   /* str source, str comp_dir, str producer, u analysed, u skipped_nodebug */
    PPW_REC_FUNC = 3,   /* str name, str linkage, str file, u line, u flags, str parent, u nvars, u ncalls */
    PPW_REC_VAR = 4,    /* belongs to the preceding FUNC; see docs/FORMATS.md */
    PPW_REC_CALL = 5,   /* belongs to the preceding FUNC */
    PPW_REC_GLOBAL = 6, /* str name, str key, str type, str file, u line */
    /* Since 1.1, at most one per FUNC, after its VARs: the variables each
     * source location loads from and stores to.  u location_count, then per
     * location: str file, u line, u col, u entry_count, then per entry:
     * u var (index into the FUNC's vars), u reads, u writes. */
    PPW_REC_ACCESS = 7,
    /* Since 1.2, at most one per FUNC, after its VARs and CALLs: the
     * variables computed from each variable.  u entry_count, then per entry:
     * u source, u target_count, then target_count × u target (indices into
     * the FUNC's vars, ascending); then the variables written after each
     * call: u call_entry_count, then per entry: u call, u var_count, then
     * var_count × u var (ascending). */
    PPW_REC_FLOW = 8,
};

enum ppw_func_flag {
    PPW_FUNC_ANALYSED = 1u << 0,
    PPW_FUNC_OUTLINED = 1u << 1, /* OpenMP outlined body or task entry */
    PPW_FUNC_TRUNCATED = 1u << 2, /* hit an analysis size limit; sets may be incomplete */
};

enum ppw_var_kind {
    PPW_VAR_LOCAL = 1,
    PPW_VAR_PARAM = 2,
    PPW_VAR_GLOBAL = 3,
    PPW_VAR_STATIC = 4, /* function-scope static: program-level like a global */
    PPW_VAR_FIELD = 5,  /* a field path under another variable (parent is set) */
    PPW_VAR_RETURN = 6, /* the function's return value */
};

enum ppw_var_flag {
    PPW_VAR_EXIT_WRITTEN = 1u << 0,  /* pointer parameter written through */
    PPW_VAR_EXIT_RETURNED = 1u << 1, /* flows into the return value */
    PPW_VAR_EXIT_GLOBAL = 1u << 2,   /* program-level (global, static) */
    PPW_VAR_WRITTEN = 1u << 3,       /* has a direct write in this function */
    PPW_VAR_PASSED_BY_REF = 1u << 4, /* its address is passed to a call: may become
                                        an exit through the callee (resolved by ppw-blame) */
    PPW_VAR_SSA = 1u << 5,           /* named by dbg.value only (no memory home) */
    PPW_VAR_SCALAR = 1u << 6,        /* one value: a number or enum (1.3) */
};

enum ppw_call_kind {
    PPW_CALL_DIRECT = 1,
    PPW_CALL_INDIRECT = 2,
    PPW_CALL_FORK = 3,    /* __kmpc_fork_call: callee is the outlined body */
    PPW_CALL_TASK = 4,    /* __kmpc_omp_task_alloc: callee is the task body */
    PPW_CALL_SPAWN = 5,   /* pthread_create: callee is the start routine */
    PPW_CALL_LIBRARY = 6, /* no IR; effects from the blamed-parameter table */
};

enum ppw_bind_mode {
    PPW_BIND_REF = 1,     /* caller memory passed by address to the formal */
    PPW_BIND_VALUE = 2,   /* caller variable's value flows into the formal */
    PPW_BIND_RETURN = 3,  /* caller variable receives the return value (formal = -1) */
    PPW_BIND_WRITTEN = 4, /* library table: the callee writes this argument */
    PPW_BIND_SOURCE = 5,  /* library table: the written arguments are computed from it */
};

/* Exit flags that make a variable an exit variable. */
#define PPW_VAR_EXIT_MASK (PPW_VAR_EXIT_WRITTEN | PPW_VAR_EXIT_RETURNED | PPW_VAR_EXIT_GLOBAL)

static inline uint64_t ppw_fnv1a64(const void *data, size_t len, uint64_t hash)
{
    const unsigned char *bytes = data;
    for (size_t i = 0; i < len; i++) {
        hash ^= bytes[i];
        hash *= 0x100000001b3ull;
    }
    return hash;
}
#define PPW_FNV1A64_INIT 0xcbf29ce484222325ull

#endif
