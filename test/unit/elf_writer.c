#define _POSIX_C_SOURCE 200809L
#include "elf_writer.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int add_section(Elf *elf, uint32_t name, uint32_t type, const void *data, size_t size)
{
    Elf_Scn *scn = elf_newscn(elf);
    Elf_Data *d = scn ? elf_newdata(scn) : NULL;
    Elf64_Shdr *shdr = scn ? elf64_getshdr(scn) : NULL;
    if (!d || !shdr)
        return -1;
    d->d_buf = (void *)data;
    d->d_size = size;
    d->d_type = ELF_T_BYTE; /* raw bytes: no translation */
    d->d_align = type == SHT_NOTE ? 4 : 1;
    d->d_version = EV_CURRENT;
    shdr->sh_name = name;
    shdr->sh_type = type;
    shdr->sh_addralign = d->d_align;
    return (int)elf_ndxscn(scn);
}

static char *build_shstrtab(const struct test_section *sections, size_t count, uint32_t *names,
                            size_t *size)
{
    size_t len = 1 + strlen(".shstrtab") + 1;
    for (size_t i = 0; i < count; i++)
        len += strlen(sections[i].name) + 1;
    char *table = calloc(1, len);
    if (!table)
        return NULL;
    size_t at = 1;
    for (size_t i = 0; i <= count; i++) {
        const char *name = i < count ? sections[i].name : ".shstrtab";
        names[i] = (uint32_t)at;
        memcpy(table + at, name, strlen(name) + 1);
        at += strlen(name) + 1;
    }
    *size = len;
    return table;
}

static int fill_elf(Elf *elf, const struct test_section *sections, size_t count, char *shstrtab,
                    const uint32_t *names, size_t shstrtab_size)
{
    Elf64_Ehdr *ehdr = elf64_newehdr(elf);
    if (!ehdr)
        return -1;
    ehdr->e_ident[EI_DATA] = ELFDATA2LSB;
    ehdr->e_type = ET_REL;
    ehdr->e_machine = EM_X86_64;
    ehdr->e_version = EV_CURRENT;
    for (size_t i = 0; i < count; i++)
        if (add_section(elf, names[i], sections[i].type, sections[i].data, sections[i].size) < 0)
            return -1;
    int index = add_section(elf, names[count], SHT_STRTAB, shstrtab, shstrtab_size);
    if (index < 0)
        return -1;
    ehdr->e_shstrndx = (Elf64_Half)index;
    return elf_update(elf, ELF_C_WRITE) < 0 ? -1 : 0;
}

int write_test_elf(const char *path, const struct test_section *sections, size_t count)
{
    uint32_t names[16];
    size_t shstrtab_size;
    if (count >= sizeof names / sizeof names[0] || elf_version(EV_CURRENT) == EV_NONE)
        return -1;
    char *shstrtab = build_shstrtab(sections, count, names, &shstrtab_size);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_WRITE, NULL) : NULL;
    int rc = elf && shstrtab ? fill_elf(elf, sections, count, shstrtab, names, shstrtab_size) : -1;
    if (rc)
        fprintf(stderr, "write_test_elf %s: %s\n", path, elf_errmsg(-1));
    if (elf)
        elf_end(elf);
    if (fd >= 0)
        close(fd);
    free(shstrtab);
    return rc;
}

size_t make_build_id_note(unsigned char *note, unsigned char first)
{
    static const unsigned char header[] = { 4, 0, 0, 0, 20, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0 };
    memcpy(note, header, sizeof header);
    for (int i = 0; i < 20; i++)
        note[sizeof header + i] = (unsigned char)(first + i);
    return sizeof header + 20;
}
