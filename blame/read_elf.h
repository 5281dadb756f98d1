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

/* Calls visit with the contents of each section named name (decompressed
 * if needed) and its file offset, in section order, and counts them in
 * *found.  Stops at the first negative code, from visit or from reading. */
int ppw_elf_each_section(struct ppw_elf *elf, const char *name,
                         int (*visit)(void *ctx, const void *data, size_t size,
                                      uint64_t file_offset),
                         void *ctx, size_t *found, struct ppw_err *err);

#endif
