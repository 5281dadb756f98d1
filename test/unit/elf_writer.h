/* Test-only: writes a minimal x86-64 ELF relocatable object holding the
 * given sections, so reader tests need no compiler or objcopy. */
#ifndef PPW_TEST_ELF_WRITER_H
#define PPW_TEST_ELF_WRITER_H

#include <stddef.h>
#include <stdint.h>

struct test_section {
    const char *name;
    uint32_t type; /* SHT_PROGBITS, SHT_NOTE, ... */
    const void *data;
    size_t size;
};

/* Returns 0, or -1 with a message on stderr. */
int write_test_elf(const char *path, const struct test_section *sections, size_t count);

/* Fills note (at least 36 bytes) with a GNU build-id note of 20 bytes
 * counting up from first; returns its size. */
size_t make_build_id_note(unsigned char *note, unsigned char first);

#endif
