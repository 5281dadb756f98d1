#define _POSIX_C_SOURCE 200809L

#include "read_elf.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

struct ppw_elf {
    int fd;
    Elf *elf;
    size_t shstrndx;
    char *path;
    char build_id[129]; /* up to 64 bytes of id */
};

static void hex_encode(const unsigned char *bytes, size_t size, char *out, size_t out_size)
{
    static const char digits[] = "0123456789abcdef";
    size_t n = size < (out_size - 1) / 2 ? size : (out_size - 1) / 2;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * n] = '\0';
}

int ppw_elf_load_extent(struct ppw_elf *elf, uint64_t *lo, uint64_t *hi)
{
    size_t count;
    *lo = UINT64_MAX;
    *hi = 0;
    if (elf_getphdrnum(elf->elf, &count) != 0)
        return -1;
    for (size_t i = 0; i < count; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
            continue;
        if (ph.p_vaddr < *lo)
            *lo = ph.p_vaddr;
        if (ph.p_vaddr + ph.p_memsz > *hi)
            *hi = ph.p_vaddr + ph.p_memsz;
    }
    return *lo < *hi ? 0 : -1;
}

/* Returns true and sets elf->build_id when scn holds a GNU build-id note. */
static bool read_build_id(struct ppw_elf *elf, Elf_Scn *scn)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!data || !data->d_buf)
        return false;
    GElf_Nhdr note;
    size_t offset = 0, name_off, desc_off, next;
    while ((next = gelf_getnote(data, offset, &note, &name_off, &desc_off)) > 0) {
        const char *name = (const char *)data->d_buf + name_off;
        if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
            hex_encode((const unsigned char *)data->d_buf + desc_off, note.n_descsz,
                       elf->build_id, sizeof elf->build_id);
            return true;
        }
        offset = next;
    }
    return false;
}

static int find_build_id(struct ppw_elf *elf, struct ppw_err *err)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf->elf, scn)) != NULL) {
        GElf_Shdr shdr;
        if (!gelf_getshdr(scn, &shdr))
            return ppw_err_set(err, PPW_ECORRUPT, "%s: cannot read an ELF section header: %s",
                               elf->path, elf_errmsg(-1));
        if (shdr.sh_type == SHT_NOTE && read_build_id(elf, scn))
            return 0;
    }
    return 0;
}

static int check_kind(const char *path, Elf *elf, struct ppw_err *err)
{
    switch (elf_kind(elf)) {
    case ELF_K_ELF:
        return 0;
    case ELF_K_AR:
        return ppw_err_set(err, PPW_ENOTELF,
                           "%s: an ar archive; give an object file, executable or shared library",
                           path);
    default:
        return ppw_err_set(err, PPW_ENOTELF, "%s: not an ELF file", path);
    }
}

static int open_file(const char *path, struct ppw_elf *elf, struct ppw_err *err)
{
    struct stat st;
    elf->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (elf->fd < 0 || fstat(elf->fd, &st) != 0)
        return ppw_err_set(err, PPW_EIO, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return ppw_err_set(err, PPW_EIO, "%s: not a regular file", path);
    if (elf_version(EV_CURRENT) == EV_NONE)
        return ppw_err_set(err, PPW_EIO, "libelf: %s", elf_errmsg(-1));
    /* ELF_C_READ, not MMAP: a file truncated while we read gives an error,
     * not SIGBUS. */
    elf->elf = elf_begin(elf->fd, ELF_C_READ, NULL);
    if (!elf->elf)
        return ppw_err_set(err, PPW_ENOTELF, "%s: not an ELF file (%s)", path, elf_errmsg(-1));
    int rc = check_kind(path, elf->elf, err);
    if (!rc && elf_getshdrstrndx(elf->elf, &elf->shstrndx) != 0)
        rc = ppw_err_set(err, PPW_ECORRUPT, "%s: cannot read ELF section headers: %s", path,
                         elf_errmsg(-1));
    return rc;
}

int ppw_elf_open(const char *path, struct ppw_elf **out, struct ppw_err *err)
{
    *out = NULL;
    struct ppw_elf *elf = calloc(1, sizeof *elf);
    if (!elf || !(elf->path = strdup(path))) {
        free(elf);
        return ppw_err_set(err, PPW_ENOMEM, "%s: out of memory", path);
    }
    int rc = open_file(path, elf, err);
    if (!rc)
        rc = find_build_id(elf, err);
    if (rc) {
        ppw_elf_close(elf);
        return rc;
    }
    *out = elf;
    return 0;
}

void ppw_elf_close(struct ppw_elf *elf)
{
    if (!elf)
        return;
    if (elf->elf)
        elf_end(elf->elf);
    if (elf->fd >= 0)
        close(elf->fd);
    free(elf->path);
    free(elf);
}

const char *ppw_elf_build_id(const struct ppw_elf *elf)
{
    return elf->build_id;
}

static int section_data(struct ppw_elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr,
                        const char *name, Elf_Data **out, struct ppw_err *err)
{
    if (shdr->sh_type == SHT_NOBITS)
        return ppw_err_set(err, PPW_ECORRUPT, "%s: section %s has no contents (SHT_NOBITS)",
                           elf->path, name);
    if ((shdr->sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
        return ppw_err_set(err, PPW_ECORRUPT, "%s: cannot decompress section %s: %s", elf->path,
                           name, elf_errmsg(-1));
    *out = elf_getdata(scn, NULL);
    if (!*out)
        return ppw_err_set(err, PPW_ECORRUPT, "%s: cannot read section %s: %s", elf->path, name,
                           elf_errmsg(-1));
    return 0;
}

int ppw_elf_each_section(struct ppw_elf *elf, const char *name,
                         int (*visit)(void *ctx, const void *data, size_t size,
                                      uint64_t file_offset),
                         void *ctx, size_t *found, struct ppw_err *err)
{
    Elf_Scn *scn = NULL;
    *found = 0;
    while ((scn = elf_nextscn(elf->elf, scn)) != NULL) {
        GElf_Shdr shdr;
        if (!gelf_getshdr(scn, &shdr))
            return ppw_err_set(err, PPW_ECORRUPT, "%s: cannot read an ELF section header: %s",
                               elf->path, elf_errmsg(-1));
        const char *scn_name = elf_strptr(elf->elf, elf->shstrndx, shdr.sh_name);
        if (!scn_name || strcmp(scn_name, name) != 0)
            continue;
        ++*found;
        Elf_Data *data;
        int rc = section_data(elf, scn, &shdr, name, &data, err);
        if (!rc && data->d_buf && data->d_size)
            rc = visit(ctx, data->d_buf, data->d_size, shdr.sh_offset);
        if (rc)
            return rc;
    }
    return 0;
}

/* The first section named name, or NULL. */
static Elf_Scn *find_section_named(struct ppw_elf *elf, const char *name, GElf_Shdr *shdr)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf->elf, scn)) != NULL) {
        const char *scn_name;
        if (gelf_getshdr(scn, shdr) &&
            (scn_name = elf_strptr(elf->elf, elf->shstrndx, shdr->sh_name)) &&
            strcmp(scn_name, name) == 0)
            return scn;
    }
    return NULL;
}

/* The first section of type `type`, or NULL. */
static Elf_Scn *find_section_of_type(struct ppw_elf *elf, uint32_t type, GElf_Shdr *shdr)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf->elf, scn)) != NULL)
        if (gelf_getshdr(scn, shdr) && shdr->sh_type == type)
            return scn;
    return NULL;
}

int ppw_elf_each_function(struct ppw_elf *elf,
                          int (*visit)(void *ctx, const char *name, uint64_t addr, uint64_t size,
                                       unsigned binding),
                          void *ctx, const char **table, struct ppw_err *err)
{
    GElf_Shdr shdr;
    Elf_Scn *scn = find_section_of_type(elf, SHT_SYMTAB, &shdr);
    *table = ".symtab";
    if (!scn) {
        scn = find_section_of_type(elf, SHT_DYNSYM, &shdr);
        *table = ".dynsym";
    }
    if (!scn) {
        *table = NULL;
        return 0;
    }
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!data || shdr.sh_entsize == 0)
        return ppw_err_set(err, PPW_ECORRUPT, "%s: cannot read %s: %s", elf->path, *table,
                           elf_errmsg(-1));
    size_t count = shdr.sh_size / shdr.sh_entsize;
    for (size_t i = 0; i < count && i <= INT_MAX; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(data, (int)i, &sym))
            break; /* past the data libelf could read */
        unsigned type = GELF_ST_TYPE(sym.st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_value == 0 ||
            sym.st_shndx == SHN_UNDEF)
            continue;
        const char *name = elf_strptr(elf->elf, shdr.sh_link, sym.st_name);
        if (!name || !name[0])
            continue;
        /* A hidden symbol is local to its module, whatever the linker
         * left as its binding (GNU ld makes it STB_LOCAL, not always). */
        unsigned vis = GELF_ST_VISIBILITY(sym.st_other);
        unsigned binding =
            vis == STV_HIDDEN || vis == STV_INTERNAL ? STB_LOCAL : GELF_ST_BIND(sym.st_info);
        int rc = visit(ctx, name, sym.st_value, sym.st_size, binding);
        if (rc)
            return rc;
    }
    return 0;
}

static uint64_t read_le(const unsigned char *p, size_t n);

/* x86-64's .plt.got: stubs (8 bytes, 16 with IBT) for functions whose
 * address is also taken, each `jmp *slot(%rip)` through a GOT slot that a
 * .rela.dyn relocation names.  Visits "name@plt" for each. */
static int each_plt_got_stub(struct ppw_elf *elf,
                             int (*visit)(void *ctx, const char *name, uint64_t addr,
                                          uint64_t size),
                             void *ctx)
{
    GElf_Shdr got_hdr, rela_hdr, dynsym_hdr;
    Elf_Scn *got = find_section_named(elf, ".plt.got", &got_hdr);
    Elf_Scn *rela = find_section_named(elf, ".rela.dyn", &rela_hdr);
    if (!got || !rela || got_hdr.sh_type == SHT_NOBITS || rela_hdr.sh_type != SHT_RELA ||
        !rela_hdr.sh_entsize)
        return 0;
    Elf_Scn *dynsym = elf_getscn(elf->elf, rela_hdr.sh_link);
    Elf_Data *code = elf_getdata(got, NULL), *relocs = elf_getdata(rela, NULL);
    Elf_Data *syms = dynsym ? elf_getdata(dynsym, NULL) : NULL;
    if (!code || !code->d_buf || !relocs || !syms || !gelf_getshdr(dynsym, &dynsym_hdr))
        return 0;
    uint64_t entry = got_hdr.sh_entsize ? got_hdr.sh_entsize : 8;
    size_t relocations = rela_hdr.sh_size / rela_hdr.sh_entsize;
    const unsigned char *bytes = code->d_buf;
    for (uint64_t at = 0; at + entry <= code->d_size; at += entry) {
        uint64_t jump = at; /* the jmp, after an endbr64 */
        while (jump + 6 <= at + entry && !(bytes[jump] == 0xff && bytes[jump + 1] == 0x25))
            jump++;
        if (jump + 6 > at + entry)
            continue;
        int32_t displacement = (int32_t)read_le(bytes + jump + 2, 4);
        uint64_t slot = got_hdr.sh_addr + jump + 6 + (uint64_t)(int64_t)displacement;
        for (size_t i = 0; i < relocations && i <= INT_MAX; i++) {
            GElf_Rela r;
            GElf_Sym sym;
            const char *name;
            if (!gelf_getrela(relocs, (int)i, &r) || r.r_offset != slot)
                continue;
            if (GELF_R_SYM(r.r_info) && gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym) &&
                (name = elf_strptr(elf->elf, dynsym_hdr.sh_link, sym.st_name)) && name[0]) {
                char stub_name[300];
                snprintf(stub_name, sizeof stub_name, "%s@plt", name);
                int rc = visit(ctx, stub_name, got_hdr.sh_addr + at, entry);
                if (rc)
                    return rc;
            }
            break;
        }
    }
    return 0;
}

int ppw_elf_each_plt_stub(struct ppw_elf *elf,
                          int (*visit)(void *ctx, const char *name, uint64_t addr, uint64_t size),
                          void *ctx)
{
    /* Stubs are 16 bytes; a lazy .plt starts with a header (PLT0) of 16
     * bytes on x86-64, 32 on AArch64; .plt.sec (IBT) has none. */
    GElf_Ehdr ehdr;
    if (!gelf_getehdr(elf->elf, &ehdr))
        return 0;
    uint64_t header = ehdr.e_machine == EM_X86_64 ? 16 : ehdr.e_machine == EM_AARCH64 ? 32 : 0;
    const uint64_t stub = 16;
    GElf_Shdr rela_hdr, plt_hdr, dynsym_hdr;
    if (ehdr.e_machine == EM_X86_64) {
        int rc = each_plt_got_stub(elf, visit, ctx);
        if (rc)
            return rc;
    }
    Elf_Scn *rela = find_section_named(elf, ".rela.plt", &rela_hdr);
    Elf_Scn *plt = find_section_named(elf, ".plt.sec", &plt_hdr);
    if (plt) {
        header = 0;
    } else {
        if (!header)
            return 0; /* a machine whose PLT layout this does not know */
        plt = find_section_named(elf, ".plt", &plt_hdr);
    }
    if (!rela || !plt || rela_hdr.sh_type != SHT_RELA || !rela_hdr.sh_entsize)
        return 0;
    Elf_Scn *dynsym = elf_getscn(elf->elf, rela_hdr.sh_link);
    Elf_Data *relocs = elf_getdata(rela, NULL), *syms = dynsym ? elf_getdata(dynsym, NULL) : NULL;
    if (!relocs || !syms || !gelf_getshdr(dynsym, &dynsym_hdr))
        return 0;
    size_t count = rela_hdr.sh_size / rela_hdr.sh_entsize;
    for (size_t i = 0; i < count && i <= INT_MAX; i++) {
        uint64_t addr = plt_hdr.sh_addr + header + i * stub;
        GElf_Rela r;
        GElf_Sym sym;
        if (addr + stub > plt_hdr.sh_addr + plt_hdr.sh_size || !gelf_getrela(relocs, (int)i, &r))
            break;
        const char *name = NULL;
        if (GELF_R_SYM(r.r_info) && gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym))
            name = elf_strptr(elf->elf, dynsym_hdr.sh_link, sym.st_name);
        if (!name || !name[0])
            continue; /* an IRELATIVE slot: no name */
        char stub_name[300];
        snprintf(stub_name, sizeof stub_name, "%s@plt", name);
        int rc = visit(ctx, stub_name, addr, stub);
        if (rc)
            return rc;
    }
    return 0;
}

/* DWARF exception-header pointer encodings (LSB "DWARF Extensions"). */
enum {
    EH_PE_UDATA4 = 0x03,
    EH_PE_SDATA4 = 0x0b,
    EH_PE_UDATA8 = 0x04,
    EH_PE_SDATA8 = 0x0c,
    EH_PE_PCREL = 0x10,
    EH_PE_DATAREL = 0x30,
    EH_PE_OMIT = 0xff,
};

static uint64_t read_le(const unsigned char *p, size_t n)
{
    uint64_t value = 0;
    for (size_t i = n; i-- > 0;)
        value = value << 8 | p[i];
    return value;
}

/* Size of a value with encoding enc (its low nibble), 0 when unsupported. */
static size_t encoded_size(unsigned enc)
{
    switch (enc & 0x0f) {
    case EH_PE_UDATA4:
    case EH_PE_SDATA4: return 4;
    case EH_PE_UDATA8:
    case EH_PE_SDATA8: return 8;
    default: return 0;
    }
}

static int read_fde_table(struct ppw_elf *elf, const unsigned char *p, size_t size, uint64_t addr,
                          uint64_t **starts, size_t *count, struct ppw_err *err)
{
    /* version, eh_frame_ptr_enc, fde_count_enc, table_enc, eh_frame_ptr, fde_count, table */
    if (size < 4 || p[0] != 1 || p[1] == EH_PE_OMIT || p[3] != (EH_PE_DATAREL | EH_PE_SDATA4))
        return 0;
    size_t ptr_size = encoded_size(p[1]), count_size = encoded_size(p[2]);
    if (!ptr_size || !count_size || (p[2] & 0x70) || size < 4 + ptr_size + count_size)
        return 0;
    uint64_t n = read_le(p + 4 + ptr_size, count_size);
    size_t at = 4 + ptr_size + count_size;
    if (n > (size - at) / 8)
        return ppw_err_set(err, PPW_ECORRUPT,
                           "%s: .eh_frame_hdr announces %llu entries, more than its %zu bytes hold",
                           elf->path, (unsigned long long)n, size);
    if (n == 0)
        return 0;
    uint64_t *out = malloc(n * sizeof *out);
    if (!out)
        return ppw_err_set(err, PPW_ENOMEM, "%s: out of memory", elf->path);
    for (size_t i = 0; i < n; i++)
        out[i] = addr + (uint64_t)(int64_t)(int32_t)(uint32_t)read_le(p + at + 8 * i, 4);
    *starts = out;
    *count = n;
    return 0;
}

int ppw_elf_function_starts(struct ppw_elf *elf, uint64_t **starts, size_t *count,
                            struct ppw_err *err)
{
    Elf_Scn *scn = NULL;
    *starts = NULL;
    *count = 0;
    while ((scn = elf_nextscn(elf->elf, scn)) != NULL) {
        GElf_Shdr shdr;
        const char *name;
        /* PROGBITS from GNU ld, X86_64_UNWIND from lld: go by the name */
        if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS ||
            !(name = elf_strptr(elf->elf, elf->shstrndx, shdr.sh_name)) ||
            strcmp(name, ".eh_frame_hdr") != 0)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        if (!data || !data->d_buf)
            return 0;
        return read_fde_table(elf, data->d_buf, data->d_size, shdr.sh_addr, starts, count, err);
    }
    return 0;
}
