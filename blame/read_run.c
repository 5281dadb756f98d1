/* Validating reader of a run directory (docs/FORMATS.md, "Run directory").
 *
 * The files are untrusted: each is mapped read-only up to header_size +
 * committed (checked against its size first), records are walked twice (a
 * first pass checks the framing and counts records by kind, so the second
 * allocates every array once), and every field a record announces (string,
 * frame count, id) is checked against its record or against what earlier
 * records defined.  Errors name the file and the offset of the first bad
 * byte. */
#define _DEFAULT_SOURCE /* madvise */
#define _POSIX_C_SOURCE 200809L

#include "read_run.h"
#include "ppw/crc32c.h"
#include "read_run_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arena.h"
#include "ppw/gasp_events.h"
#include "read_elf.h"

int ppw_run_no_memory(struct loader *l)
{
    return ppw_err_set(l->err, PPW_ENOMEM, "%s: out of memory", l->run->dir);
}

void ppw_run_hex(const unsigned char *bytes, size_t size, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < size; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * size] = '\0';
}

/* ---- files ---- */

void ppw_run_close_file(struct rfile *f)
{
    if (f->map)
        munmap((void *)f->map, f->map_size);
    free(f->path);
    memset(f, 0, sizeof *f);
}

static const char *file_kind_name(uint32_t kind)
{
    static const char *const names[] = {"?", "run", "samples", "events", "profile"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

static int check_version(struct loader *l, uint16_t major, uint16_t minor)
{
    if (major == PPW_RUN_MAJOR)
        return 0;
    ppw_err_set(l->err, PPW_EVERSION,
                "%s: run file format version %u.%u; this ppw-blame reads version %d.x (%s)",
                l->file->path, major, minor, PPW_RUN_MAJOR,
                major > PPW_RUN_MAJOR ? "upgrade ppw-blame" : "unknown version");
    l->err->offset = 4;
    return PPW_EVERSION;
}

/* Records "<path>: truncated: <detail>", at offset at (the file's end). */
static int truncated(struct loader *l, uint64_t at, const char *fmt, ...) PPW_PRINTF(3, 4);

static int truncated(struct loader *l, uint64_t at, const char *fmt, ...)
{
    char detail[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    ppw_err_set(l->err, PPW_ECORRUPT, "%s: truncated: %s", l->file->path, detail);
    l->err->offset = (int64_t)at;
    return PPW_ECORRUPT;
}

static int short_header(struct loader *l, uint64_t size, uint64_t header_size)
{
    return truncated(l, size, "the file has %llu bytes, fewer than its %llu-byte header",
                     (unsigned long long)size, (unsigned long long)header_size);
}

/* Decodes and checks the fixed header fields of f (hdr: its first bytes). */
static int read_header(struct loader *l, struct rfile *f, const unsigned char *hdr, size_t got)
{
    typedef struct ppw_file_header H;
    if (got >= 4 && memcmp(hdr, PPW_RUN_MAGIC, 4) != 0)
        return CORRUPT(l, 0, "bad magic (expected \"%s\"): not a ppw run file", PPW_RUN_MAGIC);
    if (got < 8)
        return short_header(l, got, PPW_RUN_HEADER_SIZE);
    f->info.major = F16(hdr, H, major);
    f->info.minor = F16(hdr, H, minor);
    int rc = check_version(l, f->info.major, f->info.minor);
    if (rc)
        return rc;
    if (got < PPW_RUN_HEADER_SIZE)
        return short_header(l, got, PPW_RUN_HEADER_SIZE);
    uint32_t kind = F32(hdr, H, kind), header_size = F32(hdr, H, header_size);
    f->info.committed = F64(hdr, H, committed);
    f->pid = F32(hdr, H, pid);
    f->thread_field = F32(hdr, H, thread);
    f->info.flags = F32(hdr, H, flags);
    f->build_id_size = F32(hdr, H, build_id_size);
    memcpy(f->build_id, hdr + offsetof(H, build_id), PPW_BUILD_ID_MAX);
    for (int i = 0; i < PPW_DROP_REASONS; i++)
        f->dropped[i] = get_u64(hdr + offsetof(H, dropped) + 8 * (size_t)i);
    f->slot_size = F64(hdr, H, slot_size);
    f->handler_ns = F64(hdr, H, handler_ns);
    f->reserved = F64(hdr, H, reserved);
    if (kind != f->kind)
        return CORRUPT(l, offsetof(H, kind), "file kind %u, but a %s file has kind %u", kind,
                       file_kind_name(f->kind), f->kind);
    if (header_size < PPW_RUN_HEADER_SIZE || header_size % 8)
        return CORRUPT(l, offsetof(H, header_size),
                       "header_size %u is not a multiple of 8 of at least %d", header_size,
                       PPW_RUN_HEADER_SIZE);
    if (header_size > f->info.size)
        return short_header(l, f->info.size, header_size);
    f->header_size = header_size;
    if (f->info.committed > f->info.size - header_size)
        return truncated(l, f->info.size,
                         "committed says %llu bytes of records, but only %llu follow the header",
                         (unsigned long long)f->info.committed,
                         (unsigned long long)(f->info.size - header_size));
    if (f->build_id_size > PPW_BUILD_ID_MAX)
        return CORRUPT(l, offsetof(H, build_id_size), "build_id_size %u is over %d",
                       f->build_id_size, PPW_BUILD_ID_MAX);
    if (f->thread_field != f->thread)
        return CORRUPT(l, offsetof(H, thread), "thread %u in the header of a file for thread %u",
                       f->thread_field, f->thread);
    return 0;
}

static bool all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

/* A per-thread file must come from the same process and build as run.ppw. */
static int check_identity(struct loader *l, const struct rfile *f)
{
    const struct rfile *r = &l->run_file;
    if (f->build_id_size != r->build_id_size ||
        memcmp(f->build_id, r->build_id, r->build_id_size)) {
        char mine[2 * PPW_BUILD_ID_MAX + 1];
        ppw_run_hex(f->build_id, f->build_id_size, mine);
        ppw_err_set(l->err, PPW_ECORRUPT,
                    "%s: file from another build: build-id %s, run.ppw has %s", f->path,
                    mine[0] ? mine : "(none)", l->run->build_id[0] ? l->run->build_id : "(none)");
        l->err->offset = offsetof(struct ppw_file_header, build_id);
        return PPW_ECORRUPT;
    }
    if (f->pid != r->pid) {
        ppw_err_set(l->err, PPW_ECORRUPT, "%s: file from another process: pid %u, run.ppw has %u",
                    f->path, f->pid, r->pid);
        l->err->offset = offsetof(struct ppw_file_header, pid);
        return PPW_ECORRUPT;
    }
    return 0;
}

static int map_file(struct loader *l, struct rfile *f, int fd)
{
    size_t end = f->header_size + f->info.committed;
    f->end = end;
    if (f->info.committed == 0)
        return 0;
    void *map = mmap(NULL, end, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED)
        return ppw_err_set(l->err, errno == ENOMEM ? PPW_ENOMEM : PPW_EIO, "%s: cannot map: %s",
                           f->path, strerror(errno));
    posix_madvise(map, end, POSIX_MADV_SEQUENTIAL);
    f->map = map;
    f->map_size = end;
    return 0;
}

/* The record kinds a file of this minor version may hold. */
static bool known_record(uint32_t file_kind, uint16_t minor, uint32_t kind)
{
    if (kind == PPW_REC_CHECKSUM)
        return true;
    switch (file_kind) {
    case PPW_FILE_RUN: return kind >= PPW_RUN_INFO && kind <= PPW_RUN_MPI;
    case PPW_FILE_SAMPLES:
        return kind == PPW_SMP_STACK || kind == PPW_SMP_SAMPLE ||
               (kind == PPW_SMP_BLOCK && minor >= 6);
    case PPW_FILE_EVENTS: return kind >= PPW_EVT_SPAWN && kind <= PPW_EVT_OMP;
    default: return false;
    }
}

/* The CRC32C of n bytes, as ppw_crc32c(0, data, n) gives it.  Checking
 * every file byte at a time took half of ppw-blame analyze's time on a
 * job of 4096 ranks; x86-64's crc32 instruction (SSE4.2) does 8 bytes at
 * a time, where the CPU has it. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
__attribute__((target("sse4.2"))) static uint32_t crc32c_sse42(const unsigned char *p, size_t n)
{
    uint64_t crc = 0xffffffffu;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t word;
        memcpy(&word, p, sizeof word);
        crc = _mm_crc32_u64(crc, word);
    }
    uint32_t crc32 = (uint32_t)crc;
    for (; n; p++, n--)
        crc32 = _mm_crc32_u8(crc32, *p);
    return ~crc32;
}
#define PPW_HAVE_CRC32C_SSE42 1
#endif

static uint32_t file_crc32c(const void *data, size_t n)
{
#ifdef PPW_HAVE_CRC32C_SSE42
    if (__builtin_cpu_supports("sse4.2"))
        return crc32c_sse42(data, n);
#endif
    return ppw_crc32c(0, data, n);
}

/* A sealed profile file's slots must give the CRC32C its header holds. */
static int check_seal(struct loader *l, struct rfile *f)
{
    f->info.unchecked = f->end - f->header_size;
    if (!(f->info.flags & PPW_FILE_SEALED))
        return 0;
    uint32_t want = (uint32_t)f->reserved, got = 0; /* no slots: nothing mapped */
    if (f->end > f->header_size)
        got = file_crc32c(f->map + f->header_size, f->end - f->header_size);
    if (got != want || f->reserved >> 32)
        return CORRUPT(l, f->header_size,
                       "checksum mismatch: the slots give CRC32C %08x, the sealed header says "
                       "%08llx (the file changed after ppw wrote it)",
                       got, (unsigned long long)f->reserved);
    f->info.checksums = 1;
    f->info.unchecked = 0;
    return 0;
}

/* CHECKSUM records (1.5): each covers the bytes since the previous one (or
 * the header).  A writer that says so (PPW_FILE_CHECKSUMMED) adds one as
 * soon as a block reaches PPW_CHECKSUM_BLOCK bytes, so that no more than a
 * block and one record go unchecked (the tail of a crash, or of a full
 * disk).  A file before 1.5 has none. */
static int check_checksums(struct loader *l, struct rfile *f)
{
    size_t pos = f->header_size, from = f->header_size;
    bool sealing = f->info.flags & PPW_FILE_CHECKSUMMED;
    /* A file of this reader's version or older holds only kinds it knows:
     * another kind is damage, not a newer writer's record. */
    bool current = f->info.major == PPW_RUN_MAJOR && f->info.minor <= PPW_RUN_MINOR;
    while (pos < f->end) {
        struct rec r;
        int rc = ppw_run_next_record(l, f, &pos, &r);
        if (rc)
            return rc;
        if (current && !known_record(f->kind, f->info.minor, r.kind))
            return CORRUPT(l, r.pos, "record kind %u: run format %u.%u has no such kind in %s files",
                           r.kind, f->info.major, f->info.minor, file_kind_name(f->kind));
        if (r.kind != PPW_REC_CHECKSUM) {
            if (sealing && r.pos - from >= PPW_CHECKSUM_BLOCK)
                return CORRUPT(l, r.pos,
                               "%zu bytes of records since byte %zu without a CHECKSUM record "
                               "(one follows every %d)",
                               r.pos - from, from, PPW_CHECKSUM_BLOCK);
            continue;
        }
        if (r.body_size < sizeof(struct ppw_rec_checksum))
            return CORRUPT(l, r.pos, "a CHECKSUM record of %zu bytes", r.body_size);
        uint32_t want = get_u32(r.body + offsetof(struct ppw_rec_checksum, crc32c));
        uint64_t claimed = get_u64(r.body + offsetof(struct ppw_rec_checksum, from));
        if (claimed != from)
            return CORRUPT(l, r.pos + 8 + offsetof(struct ppw_rec_checksum, from),
                           "CHECKSUM record covers from byte %llu, but its block starts at %zu",
                           (unsigned long long)claimed, from);
        uint32_t got = file_crc32c(f->map + from, r.pos - from);
        if (got != want)
            return CORRUPT(l, from,
                           "checksum mismatch in bytes %zu to %zu: CRC32C %08x, the CHECKSUM "
                           "record at byte %zu says %08x (the file changed after ppw wrote it)",
                           from, r.pos, got, r.pos, want);
        f->info.checksums++;
        from = pos;
    }
    f->info.unchecked = f->end - from;
    return 0;
}

int ppw_run_open_file(struct loader *l, struct rfile *f, const char *name, uint32_t kind,
                      uint32_t thread)
{
    size_t len = strlen(l->run->dir) + 1 + strlen(name) + 1;
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->thread = thread;
    if (!(f->path = malloc(len)))
        return ppw_run_no_memory(l);
    snprintf(f->path, len, "%s/%s", l->run->dir, name);
    l->file = f;
    /* ppw writes no symbolic links into a run: one found there was planted,
     * and following it would read some other file as this run's. */
    /* O_NONBLOCK: a FIFO put in place of a run file must not block the
     * open; it is refused below as not a regular file. */
    int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat st;
    if (fd < 0 && errno == ELOOP)
        return ppw_err_set(l->err, PPW_EIO,
                           "%s: a symbolic link, which ppw never writes into a run directory; "
                           "remove it to read the rest of the run",
                           f->path);
    if (fd < 0 || fstat(fd, &st) != 0) {
        int rc = ppw_err_set(l->err, PPW_EIO, "%s: %s", f->path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return rc;
    }
    unsigned char hdr[PPW_RUN_HEADER_SIZE];
    ssize_t got = 0;
    int rc = 0;
    if (!S_ISREG(st.st_mode))
        rc = ppw_err_set(l->err, PPW_EIO, "%s: not a regular file", f->path);
    else if ((got = pread(fd, hdr, sizeof hdr, 0)) < 0)
        rc = ppw_err_set(l->err, PPW_EIO, "%s: %s", f->path, strerror(errno));
    if (!rc) {
        f->info.present = true;
        f->info.size = (uint64_t)st.st_size;
        if (kind != PPW_FILE_RUN && all_zero(hdr, (size_t)got) &&
            (got == PPW_RUN_HEADER_SIZE || (uint64_t)got == f->info.size)) {
            f->info.unwritten = true; /* created, not yet written: see ppw_run_file */
            close(fd);
            return 0;
        }
        rc = read_header(l, f, hdr, (size_t)got);
    }
    if (!rc && kind != PPW_FILE_RUN)
        rc = check_identity(l, f);
    if (!rc && (uint64_t)f->header_size + f->info.committed > SIZE_MAX)
        rc = ppw_err_set(l->err, PPW_ENOMEM, "%s: too large to map", f->path);
    if (!rc)
        rc = map_file(l, f, fd);
    close(fd);
    if (!rc)
        rc = kind == PPW_FILE_PROFILE ? check_seal(l, f) : check_checksums(l, f);
    return rc;
}

/* ---- record framing ---- */

int ppw_run_next_record(struct loader *l, const struct rfile *f, size_t *pos, struct rec *r)
{
    *r = (struct rec){.pos = *pos}; /* defined on errors too: gcc -O3 cannot tell CORRUPT() */
    size_t left = f->end - *pos;
    if (left < 8)
        return CORRUPT(l, *pos, "%zu bytes at the end of the committed records: not a record",
                       left);
    r->pos = *pos;
    r->kind = get_u32(f->map + *pos);
    uint32_t size = get_u32(f->map + *pos + 4);
    if (size < 8 || size % 8)
        return CORRUPT(l, *pos + 4,
                       "record of kind %u has size %u (not a multiple of 8 of at least 8)", r->kind,
                       size);
    if (size > left)
        return CORRUPT(l, *pos + 4,
                       "record of kind %u and size %u runs past the committed end (byte %zu)",
                       r->kind, size, f->end);
    r->size = size;
    r->body = f->map + *pos + 8;
    r->body_size = size - 8;
    *pos += size;
    return 0;
}

void ppw_run_release_pages(struct rfile *f, size_t pos)
{
    enum { CHUNK = 8u << 20 };
    size_t upto = pos & ~(size_t)(CHUNK - 1);
    if (upto > f->released + CHUNK || (pos >= f->end && upto > f->released)) {
        madvise((void *)(f->map + f->released), upto - f->released, MADV_DONTNEED);
        f->released = upto;
    }
}

int ppw_run_count_records(struct loader *l, struct rfile *f)
{
    size_t pos = f->header_size;
    while (pos < f->end) {
        struct rec r;
        int rc = ppw_run_next_record(l, f, &pos, &r);
        if (rc)
            return rc;
        if (r.kind < KIND_SLOTS)
            f->counts[r.kind]++;
        ppw_run_release_pages(f, pos);
    }
    f->released = 0; /* the next pass faults them in again, from the page cache */
    return 0;
}

int ppw_run_each_record(struct loader *l, struct rfile *f,
                        int (*visit)(struct loader *l, const struct rec *r, void *ctx), void *ctx)
{
    size_t pos = f->header_size;
    while (pos < f->end) {
        struct rec r;
        int rc = ppw_run_next_record(l, f, &pos, &r);
        if (!rc)
            rc = visit(l, &r, ctx);
        if (rc)
            return rc;
        ppw_run_release_pages(f, pos);
    }
    return 0;
}

/* ---- the directory ---- */

static const struct {
    const char *suffix;
    uint32_t kind;
} thread_files[] = {
    {".samples.ppw", PPW_FILE_SAMPLES},
    {".events.ppw", PPW_FILE_EVENTS},
    {".profile.ppw", PPW_FILE_PROFILE},
};

/* "t<N>.<kind>.ppw" with N in decimal, without leading zeros. */
static bool parse_thread_file(const char *name, struct entry *e)
{
    const char *p = name + 1;
    uint64_t n = 0;
    if (name[0] != 't' || *p < '0' || *p > '9' || (p[0] == '0' && p[1] >= '0' && p[1] <= '9'))
        return false;
    for (; *p >= '0' && *p <= '9'; p++)
        if ((n = n * 10 + (uint64_t)(*p - '0')) >= UINT32_MAX)
            return false; /* UINT32_MAX is run.ppw's */
    for (size_t i = 0; i < sizeof thread_files / sizeof thread_files[0]; i++) {
        if (strcmp(p, thread_files[i].suffix) == 0) {
            e->thread = (uint32_t)n;
            e->kind = thread_files[i].kind;
            return true;
        }
    }
    return false; /* another file, perhaps a newer minor version's */
}

static int add_entry(struct loader *l, const struct entry *e)
{
    if (l->entry_count == l->entry_cap) {
        size_t cap = l->entry_cap ? 2 * l->entry_cap : 16;
        struct entry *grown = realloc(l->entries, cap * sizeof *grown);
        if (!grown)
            return ppw_run_no_memory(l);
        l->entries = grown;
        l->entry_cap = cap;
    }
    l->entries[l->entry_count++] = *e;
    return 0;
}

static int compare_entry(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    return (x->kind > y->kind) - (x->kind < y->kind);
}

/* Lists the t<N> files of the directory into l->entries, sorted; the
 * directory must hold a run.ppw. */
static int list_dir(struct loader *l)
{
    const char *dir = l->run->dir;
    DIR *d = opendir(dir);
    if (!d)
        return ppw_err_set(l->err, PPW_EIO, "%s: %s", dir, strerror(errno));
    int rc = 0;
    struct dirent *de;
    bool has_run = false;
    errno = 0;
    while (!rc && (de = readdir(d)) != NULL) {
        struct entry e;
        if (strcmp(de->d_name, "run.ppw") == 0)
            has_run = true;
        else if (parse_thread_file(de->d_name, &e))
            rc = add_entry(l, &e);
    }
    if (!rc && errno)
        rc = ppw_err_set(l->err, PPW_EIO, "%s: %s", dir, strerror(errno));
    closedir(d);
    if (!rc && !has_run)
        rc = ppw_err_set(l->err, PPW_EIO, "%s: no run.ppw (not a ppw run directory)", dir);
    if (!rc && l->entry_count)
        qsort(l->entries, l->entry_count, sizeof *l->entries, compare_entry);
    return rc;
}

static int read_thread_file(struct loader *l, const struct entry *e)
{
    struct ppw_run_thread *t = ppw_run_thread_slot(l->run, e->thread);
    char name[48];
    const char *suffix = "";
    for (size_t i = 0; i < sizeof thread_files / sizeof thread_files[0]; i++)
        if (thread_files[i].kind == e->kind)
            suffix = thread_files[i].suffix;
    snprintf(name, sizeof name, "t%u%s", e->thread, suffix);
    struct rfile f;
    int rc = ppw_run_open_file(l, &f, name, e->kind, e->thread);
    if (!rc && !t) /* make_threads created one per entry */
        rc = ppw_err_set(l->err, PPW_ECORRUPT, "%s: thread %u vanished", f.path, e->thread);
    if (!rc && f.info.unwritten) {
        struct ppw_run_file *info = e->kind == PPW_FILE_SAMPLES  ? &t->samples_file
                                    : e->kind == PPW_FILE_EVENTS ? &t->events_file
                                                                 : &t->profile_file;
        *info = f.info;
    } else if (!rc && e->kind == PPW_FILE_SAMPLES)
        rc = ppw_run_read_samples(l, &f, t);
    else if (!rc && e->kind == PPW_FILE_EVENTS)
        rc = ppw_run_read_events(l, &f, t);
    else if (!rc)
        rc = ppw_run_read_profile(l, &f, t);
    ppw_run_close_file(&f);
    return rc;
}

/* ---- spawn contexts ---- */

/* By tag, then creator, so that which of two equal definitions is kept
 * does not depend on qsort. */
static int compare_spawn(const void *a, const void *b)
{
    const struct ppw_run_spawn *x = a, *y = b;
    if (x->tag != y->tag)
        return x->tag < y->tag ? -1 : 1;
    return (x->creator > y->creator) - (x->creator < y->creator);
}

static bool same_spawn(const struct ppw_run_spawn *a, const struct ppw_run_spawn *b)
{
    return a->parent_tag == b->parent_tag && a->kind == b->kind && a->flags == b->flags &&
           a->nframes == b->nframes &&
           (a->nframes == 0 || memcmp(a->frames, b->frames, a->nframes * sizeof *a->frames) == 0);
}

/* The spawn that follows s in a chain (see ppw_run_spawn_chain), or NULL at
 * the root or at a tag nobody defined. */
static const struct ppw_run_spawn *next_spawn(const struct ppw_run *run,
                                              const struct ppw_run_spawn *s)
{
    uint32_t tag = s->parent_tag;
    if (tag == 0) {
        const struct ppw_run_thread *creator = ppw_run_find_thread(run, s->creator);
        tag = creator && creator->has_begin ? creator->root_tag : 0;
    }
    return tag ? ppw_run_find_spawn(run, tag) : NULL;
}

/* Parent chains must end: a loop is corrupt data (a missing tag is only
 * reported when a chain is walked). */
static int check_spawn_cycles(struct loader *l)
{
    const struct ppw_run *run = l->run;
    size_t n = run->spawn_count;
    unsigned char *state = calloc(n ? n : 1, 1); /* 0 new, 1 on the current walk, 2 done */
    if (!state)
        return ppw_run_no_memory(l);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const struct ppw_run_spawn *s = &run->spawns[i];
        while (s && state[s - run->spawns] == 0) {
            state[s - run->spawns] = 1;
            s = next_spawn(run, s);
        }
        if (s && state[s - run->spawns] == 1)
            rc = ppw_err_set(l->err, PPW_ECORRUPT,
                             "%s: corrupt spawn records: the parent chain "
                             "of spawn tag %u loops back to tag %u",
                             run->dir, run->spawns[i].tag, s->tag);
        for (s = &run->spawns[i]; s && state[s - run->spawns] == 1; s = next_spawn(run, s))
            state[s - run->spawns] = 2;
    }
    free(state);
    return rc;
}

/* Sorts the spawns of every events file by tag.  Tags are process-wide: a
 * tag defined twice must be defined the same way. */
static int index_spawns(struct loader *l)
{
    struct ppw_run *run = l->run;
    size_t n = l->spawn_count;
    if (n == 0)
        return 0;
    qsort(l->spawns, n, sizeof *l->spawns, compare_spawn);
    run->spawns = ppw_arena_calloc(run->arena, n, sizeof *run->spawns);
    if (!run->spawns)
        return ppw_run_no_memory(l);
    for (size_t i = 0; i < n; i++) {
        const struct ppw_run_spawn *s = &l->spawns[i];
        struct ppw_run_spawn *last = run->spawn_count ? &run->spawns[run->spawn_count - 1] : NULL;
        if (last && last->tag == s->tag) {
            if (!same_spawn(last, s))
                return ppw_err_set(l->err, PPW_ECORRUPT,
                                   "%s: corrupt spawn records: tag %u is defined twice, "
                                   "differently (by threads %u and %u)",
                                   run->dir, s->tag, last->creator, s->creator);
            continue;
        }
        run->spawns[run->spawn_count++] = *s;
    }
    return check_spawn_cycles(l);
}

/* ---- loading ---- */

static int load(struct loader *l)
{
    int rc = list_dir(l);
    if (!rc)
        rc = ppw_run_read_run_file(l);
    for (size_t i = 0; i < l->entry_count && !rc; i++)
        rc = read_thread_file(l, &l->entries[i]);
    if (!rc)
        rc = index_spawns(l);
    return rc;
}

static int load_dir(const char *dir, bool merge, struct ppw_run **out, struct ppw_err *err);

int ppw_run_load(const char *dir, struct ppw_run **out, struct ppw_err *err)
{
    return load_dir(dir, false, out, err);
}

int ppw_run_load_merged(const char *dir, struct ppw_run **out, struct ppw_err *err)
{
    return load_dir(dir, true, out, err);
}

static int load_dir(const char *dir, bool merge, struct ppw_run **out, struct ppw_err *err)
{
    *out = NULL;
    ppw_err_clear(err);
    struct ppw_run *run = calloc(1, sizeof *run);
    if (run) {
        run->dir = strdup(dir);
        run->arena = ppw_arena_new();
    }
    if (!run || !run->dir || !run->arena) {
        ppw_run_free(run);
        return ppw_err_set(err, PPW_ENOMEM, "%s: out of memory", dir);
    }
    struct loader l = {.run = run, .err = err, .merge_samples = merge};
    int rc = load(&l);
    ppw_run_close_file(&l.run_file);
    free(l.entries);
    free(l.spawns);
    if (rc) {
        ppw_run_free(run);
        return rc;
    }
    *out = run;
    return 0;
}

void ppw_run_free(struct ppw_run *run)
{
    if (!run)
        return;
    ppw_arena_free(run->arena);
    free(run->dir);
    free(run);
}

/* ---- lookups ---- */

/* bsearch comparators: a u32 key against an item's id. */
static int key_vs(uint32_t key, uint32_t id)
{
    return (key > id) - (key < id);
}

static int region_vs(const void *key, const void *item)
{
    return key_vs(*(const uint32_t *)key, ((const struct ppw_run_region *)item)->id);
}

static int thread_vs(const void *key, const void *item)
{
    return key_vs(*(const uint32_t *)key, ((const struct ppw_run_thread *)item)->index);
}

static int spawn_vs(const void *key, const void *item)
{
    return key_vs(*(const uint32_t *)key, ((const struct ppw_run_spawn *)item)->tag);
}

const struct ppw_run_region *ppw_run_find_region(const struct ppw_run *run, uint32_t id)
{
    return run->region_count
               ? bsearch(&id, run->regions, run->region_count, sizeof *run->regions, region_vs)
               : NULL;
}

struct ppw_run_thread *ppw_run_thread_slot(struct ppw_run *run, uint32_t index)
{
    return run->thread_count
               ? bsearch(&index, run->threads, run->thread_count, sizeof *run->threads, thread_vs)
               : NULL;
}

const struct ppw_run_thread *ppw_run_find_thread(const struct ppw_run *run, uint32_t index)
{
    return ppw_run_thread_slot((struct ppw_run *)run, index);
}

const struct ppw_run_spawn *ppw_run_find_spawn(const struct ppw_run *run, uint32_t tag)
{
    return run->spawn_count
               ? bsearch(&tag, run->spawns, run->spawn_count, sizeof *run->spawns, spawn_vs)
               : NULL;
}

/* The root context of thread: its root_tag (0 for the main thread). */
static int root_tag(const struct ppw_run *run, uint32_t thread, uint32_t *tag, struct ppw_err *err)
{
    const struct ppw_run_thread *t = ppw_run_find_thread(run, thread);
    *tag = 0;
    if (t && t->has_begin)
        *tag = t->root_tag;
    else if (thread != 0)
        return ppw_err_set(err, PPW_ECORRUPT,
                           "%s: thread %u has no THREAD record, so its creation context is unknown",
                           run->dir, thread);
    return 0;
}

int ppw_run_spawn_chain(const struct ppw_run *run, uint32_t thread, uint32_t tag,
                        const struct ppw_run_spawn **chain, size_t cap, size_t *count,
                        struct ppw_err *err)
{
    *count = 0;
    for (;;) {
        int rc = tag ? 0 : root_tag(run, thread, &tag, err);
        if (rc || tag == 0)
            return rc;
        const struct ppw_run_spawn *s = ppw_run_find_spawn(run, tag);
        if (!s)
            return ppw_err_set(err, PPW_ECORRUPT,
                               "%s: spawn tag %u is not defined in any events file", run->dir, tag);
        if (*count == run->spawn_count) /* more links than spawns: a loop */
            return ppw_err_set(err, PPW_ECORRUPT, "%s: the spawn chain through tag %u loops",
                               run->dir, tag);
        if (*count == cap)
            return ppw_err_set(err, PPW_ENOMEM, "spawn chain deeper than %zu", cap);
        chain[(*count)++] = s;
        thread = s->creator;
        tag = s->parent_tag;
    }
}

int ppw_run_check_binary(const struct ppw_run *run, const char *binary, struct ppw_err *err)
{
    struct ppw_elf *elf = NULL;
    int rc = ppw_elf_open(binary, &elf, err);
    if (rc)
        return rc;
    const char *id = ppw_elf_build_id(elf);
    if (strcmp(id, run->build_id) != 0)
        rc = ppw_err_set(
            err, PPW_ECORRUPT, "%s: from another build: its build-id is %s, the run's (%s) is %s",
            binary, id[0] ? id : "(none)", run->dir, run->build_id[0] ? run->build_id : "(none)");
    ppw_elf_close(elf);
    return rc;
}

int ppw_run_use_exe_copy(struct ppw_run *run, const char *path, struct ppw_err *err)
{
    int rc = ppw_run_check_binary(run, path, err);
    for (size_t i = 0; !rc && i < run->module_count; i++) {
        struct ppw_run_module *m = &run->modules[i];
        if (!(m->flags & PPW_MODULE_EXE) || strcmp(m->build_id, run->build_id) != 0)
            continue;
        /* absolute: a module path without '/' names no file (the vDSO) */
        char *absolute = realpath(path, NULL);
        const char *use = absolute ? absolute : path;
        char *copy = ppw_arena_alloc(run->arena, strlen(use) + 1);
        if (copy)
            m->path = strcpy(copy, use);
        free(absolute);
        if (!copy)
            return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    }
    return rc;
}

/* ---- clocks ---- */

uint64_t ppw_run_master_ns(const struct ppw_run *run, uint64_t time_ns)
{
    if (!run->has_mpi)
        return time_ns;
    const struct ppw_run_mpi *m = &run->mpi;
    double offset = (double)m->init_master_ns - (double)m->init_local_ns;
    if (m->fini_local_ns > m->init_local_ns) {
        double fini_offset = (double)m->fini_master_ns - (double)m->fini_local_ns;
        double drift = (fini_offset - offset) / (double)(m->fini_local_ns - m->init_local_ns);
        offset += drift * ((double)time_ns - (double)m->init_local_ns);
    }
    double master = (double)time_ns + offset;
    return master <= 0 ? 0 : (uint64_t)(master + 0.5);
}

/* ---- names ---- */

#define NAME_OF(table, value)                                                                      \
    ((value) < sizeof table / sizeof table[0] && table[value] ? table[value] : "?")

const char *ppw_run_tag_name(uint32_t tag)
{
    switch (tag) {
#define PPW_TAG_CASE(tag_value, name, op)                                                          \
    case tag_value: return name;
        PPW_GASP_TAGS(PPW_TAG_CASE)
#undef PPW_TAG_CASE
    }
    return NULL;
}

const char *ppw_run_op_name(uint32_t op)
{
    static const char *const names[] = {
#define PPW_OP_TEXT(name, text) text,
        PPW_OPS(PPW_OP_TEXT)
#undef PPW_OP_TEXT
    };
    return NAME_OF(names, op);
}

const char *ppw_run_metric_source_name(uint32_t source)
{
    static const char *const names[] = {
        [PPW_METRIC_NONE] = "none",
        [PPW_METRIC_PAPI_CYCLES] = "papi-cycles",
        [PPW_METRIC_PERF_TASK_CLOCK] = "perf-task-clock",
        [PPW_METRIC_POSIX_CPU_TIMER] = "posix-cpu-timer",
    };
    return NAME_OF(names, source);
}

const char *ppw_run_unit_name(uint32_t unit)
{
    static const char *const names[] = {[PPW_UNIT_NS] = "ns", [PPW_UNIT_CYCLES] = "cycles"};
    return NAME_OF(names, unit);
}

const char *ppw_run_region_kind_name(uint32_t kind)
{
    static const char *const names[] = {
        [PPW_REGION_FUNCTION] = "function",
        [PPW_REGION_CALLSITE] = "callsite",
        [PPW_REGION_USER] = "user",
    };
    return NAME_OF(names, kind);
}

const char *ppw_run_spawn_kind_name(uint32_t kind)
{
    static const char *const names[] = {
        [PPW_SPAWN_PTHREAD] = "pthread",
        [PPW_SPAWN_OMP_PARALLEL] = "omp-parallel",
        [PPW_SPAWN_OMP_TASK] = "omp-task",
    };
    return NAME_OF(names, kind);
}

const char *ppw_run_evttype_name(uint32_t evttype)
{
    static const char *const names[] = {
        [GASP_START] = "start",
        [GASP_END] = "end",
        [GASP_ATOMIC] = "atomic",
    };
    return NAME_OF(names, evttype);
}

const char *ppw_run_drop_name(unsigned reason)
{
    static const char *const names[] = {
        [PPW_DROP_NOT_READY] = "not_ready",
        [PPW_DROP_PAUSED] = "paused",
        [PPW_DROP_NO_SPACE] = "no_space",
        [PPW_DROP_WALK] = "walk",
    };
    return NAME_OF(names, reason);
}

/* ---- lost samples ---- */

/* A NOTE the runtime wrote about thread index's sampling: "thread N: what". */
static bool note_about(const struct ppw_run *run, uint32_t index, const char *what)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "thread %u: ", index);
    for (size_t i = 0; i < run->note_count; i++) {
        const char *m = run->notes[i].message;
        if (strncmp(m, prefix, strlen(prefix)) == 0 && strstr(m, what))
            return true;
    }
    return false;
}

void ppw_run_thread_loss(const struct ppw_run *run, const struct ppw_run_thread *t,
                         struct ppw_run_loss *out)
{
    memset(out, 0, sizeof *out);
    out->recorded = t->samples_read;
    uint64_t period = run->has_metric ? run->metric.period : 0;
    bool sampled = run->has_metric && run->metric.source != PPW_METRIC_NONE;
    if (t->samples_file.unwritten)
        out->causes |= PPW_LOSS_CRASH;
    if (!sampled)
        return;
    if (note_about(run, t->index, "cannot create"))
        out->causes |= PPW_LOSS_NO_FILE;
    if (note_about(run, t->index, "cannot start"))
        out->causes |= PPW_LOSS_NOT_ARMED;
    if (t->dropped[PPW_DROP_NO_SPACE])
        out->causes |= PPW_LOSS_DISK_FULL;
    if (t->dropped[PPW_DROP_NOT_READY] + t->dropped[PPW_DROP_WALK] + t->ring_full > 0)
        out->causes |= PPW_LOSS_DROPPED;
    if (t->end_flags & PPW_THREAD_END_SIGNAL_BLOCKED)
        out->causes |= PPW_LOSS_SIGNAL_BLOCKED;
    if (t->end_flags & PPW_THREAD_END_SIGNAL_IGNORED)
        out->causes |= PPW_LOSS_SIGNAL_IGNORED;
    if (t->end_flags & PPW_THREAD_END_SIGNAL_TAKEN)
        out->causes |= PPW_LOSS_SIGNAL_TAKEN;
    if (t->end_flags & PPW_THREAD_END_TIMER_CLOSED)
        out->causes |= PPW_LOSS_TIMER_CLOSED;
    if (!t->ended || run->metric.unit != PPW_UNIT_NS || period == 0)
        return;
    out->known = true;
    out->cpu_ns = t->cpu_ns - t->armed_cpu_ns; /* the start-up before the arming: no sample's */
    out->expected = out->cpu_ns / period;
    /* The weights add up to the CPU time from the sampler's arming to the
     * last sample; a signal that did not come makes its successor's weight
     * span several periods.  One period is the tail after the last sample. */
    uint64_t unweighed =
        out->cpu_ns > t->weight_read ? (out->cpu_ns - t->weight_read) / period : 0;
    out->lost = unweighed + t->missed_periods;
    out->lost = out->lost > 1 ? out->lost - 1 : 0;
    if (out->lost > out->expected)
        out->lost = out->expected;
    out->significant = out->lost >= 20 && out->lost * 10 >= out->expected;
    if (out->significant && !(out->causes & ~(uint32_t)PPW_LOSS_DROPPED))
        out->causes |= PPW_LOSS_UNKNOWN;
    if (!out->lost && !out->significant)
        out->causes &= PPW_LOSS_CRASH;
}

const char *ppw_run_loss_cause_name(unsigned bit_index)
{
    static const char *const names[PPW_LOSS_CAUSES] = {
        "crash",          "no_file",        "not_armed",     "disk_full",     "dropped",
        "signal_blocked", "signal_ignored", "signal_taken", "timer_closed", "unknown",
    };
    return bit_index < PPW_LOSS_CAUSES ? names[bit_index] : "?";
}
