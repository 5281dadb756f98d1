/* ELF access for ppw-blame's readers: opens a binary with libelf, finds
 * sections by name and the GNU build-id, so format readers only see bytes. */
#ifndef PPW_BLAME_READ_ELF_H
#define PPW_BLAME_READ_ELF_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct ppw_elf;

/* Opens path, which must be an ELF object, executable or shared library.
 * Errors: PPW_EIO (cannot open, not a regular file), PPW_ENOTELF (not ELF,
 * or an ar archive), PPW_ECORRUPT (unreadable section headers). */
int ppw_elf_open(const char *path, struct ppw_elf **out, struct ppw_err *err);

void ppw_elf_close(struct ppw_elf *elf);

/* Lowercase hex of the first NT_GNU_BUILD_ID note, "" when there is none. */
const char *ppw_elf_build_id(const struct ppw_elf *elf);

/* The link-time address range [lo, hi) of the file's PT_LOAD segments (as
 * a run's MODULE record gives it, less the load bias).  0, or -1 when it
 * has none. */
int ppw_elf_load_extent(struct ppw_elf *elf, uint64_t *lo, uint64_t *hi);

/* Calls visit with the contents of each section named name (decompressed
 * if needed) and its file offset, in section order, and counts them in
 * *found.  Stops at the first negative code, from visit or from reading. */
int ppw_elf_each_section(struct ppw_elf *elf, const char *name,
                         int (*visit)(void *ctx, const void *data, size_t size,
                                      uint64_t file_offset),
                         void *ctx, size_t *found, struct ppw_err *err);

/* Calls visit with each defined function symbol (STT_FUNC or STT_GNU_IFUNC
 * with a nonzero value) of .symtab, or of .dynsym when the file has no
 * .symtab (a stripped binary): its name, its link-time address and its size
 * (0 when unknown), and its binding (STB_*; STB_LOCAL for a hidden
 * symbol).  Sets *table to ".symtab", ".dynsym" or NULL (neither).  Stops
 * at the first negative code. */
int ppw_elf_each_function(struct ppw_elf *elf,
                          int (*visit)(void *ctx, const char *name, uint64_t addr, uint64_t size,
                                       unsigned binding),
                          void *ctx, const char **table, struct ppw_err *err);

/* Calls visit with the name ("free@plt") and link-time address of each
 * PLT stub, from .rela.plt and .plt.sec or .plt (x86-64 and AArch64
 * layouts; nothing on other machines or without those sections).  A
 * sample in a stub would otherwise take the name of the symbol before it,
 * the ELF _init.  Stops at the first nonzero code from visit. */
int ppw_elf_each_plt_stub(struct ppw_elf *elf,
                          int (*visit)(void *ctx, const char *name, uint64_t addr, uint64_t size),
                          void *ctx);

/* The link-time start addresses of the functions .eh_frame_hdr's search
 * table covers (every function with unwind information), sorted, in a
 * malloc'd array (NULL when count is 0).  *count is 0 when the file has no
 * .eh_frame_hdr, or one with encodings other than the ones GNU ld and lld
 * write.  Errors: PPW_ECORRUPT (a table that does not fit), PPW_ENOMEM. */
int ppw_elf_function_starts(struct ppw_elf *elf, uint64_t **starts, size_t *count,
                            struct ppw_err *err);

#endif
