/* libFuzzer target: the run-directory reader (blame/read_run.h).  Each
 * input replaces one file of a valid run with its remaining bytes, then
 * ppw_run_load and ppw_run_free run and the file is restored.  The runs
 * ("bases") are copied once into temporary directories:
 *
 *   base 0: test/unit's sample run, whose files name this program's
 *           build-id (every file kind, two threads, a spawn), with
 *           checksums in three of its files;
 *   base 1: a real run, when PPW_FUZZ_REAL_RUN names one: run_fuzz.sh
 *           makes it from seed_prog.c (OpenMP and pthread spawn records,
 *           GASP profile slots and trace events, deep sample stacks).
 *
 * The input's first byte selects: bit 6 the base, bits 0-5 the file (in
 * name order, modulo the base's file count).  Few mutations keep a file's
 * header naming its run (magic, kind, pid, thread, build-id) and its
 * committed size right, so unless bit 7 is set those header fields are
 * copied from the original file and committed is set to the bytes after
 * the header, and the checksums (run format 1.5: CHECKSUM records, a
 * sealed profile) are made right for the mutated bytes (run_file_reseal):
 * the records get fuzzed, not only the checksum check.  With bit 7 set,
 * the bytes are written as they are, and a mutation inside a checksummed
 * block must be caught by its checksum.
 *
 * With PPW_FUZZ_SEEDS=DIR set, LLVMFuzzerInitialize writes the seed corpus
 * into DIR (every file of every base, unchanged, behind its selector byte)
 * and exits. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_io.h"
#include "read_run.h"
#include "run_writer.h"

enum { MAX_FILES = 64, MAX_BASES = 2 };

struct base_file {
    char name[64];
    struct bytes original;
};

struct base {
    char dir[4096];
    struct base_file files[MAX_FILES];
    unsigned count;
};

static struct base bases[MAX_BASES];
static unsigned base_count;
static int verbose; /* PPW_FUZZ_VERBOSE=1: print why each input was rejected */

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct base_file *)a)->name, ((const struct base_file *)b)->name);
}

/* Reads every *.ppw file of dir into base (sorted by name). */
static int read_base(struct base *base, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        perror(dir);
        return -1;
    }
    struct dirent *de;
    int rc = 0;
    while (!rc && (de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len < 5 || strcmp(de->d_name + len - 4, ".ppw") != 0)
            continue;
        if (base->count == MAX_FILES || len >= sizeof base->files[0].name) {
            fprintf(stderr, "fuzz_run: %s: too many files or too long a name\n", dir);
            rc = -1;
            break;
        }
        struct base_file *f = &base->files[base->count++];
        char path[4096 + 64];
        snprintf(f->name, sizeof f->name, "%s", de->d_name);
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        rc = fuzz_read_file(path, &f->original.data, &f->original.len);
    }
    closedir(d);
    if (!rc && base->count == 0) {
        fprintf(stderr, "fuzz_run: %s: no .ppw files\n", dir);
        rc = -1;
    }
    qsort(base->files, base->count, sizeof base->files[0], by_name);
    return rc;
}

/* Copies base's files into a fresh temporary directory, base->dir. */
static int place_base(struct base *base)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(base->dir, sizeof base->dir, "%s/ppw-fuzz-run-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(base->dir)) {
        perror(base->dir);
        base->dir[0] = '\0';
        return -1;
    }
    for (unsigned i = 0; i < base->count; i++) {
        char path[4096 + 64];
        snprintf(path, sizeof path, "%s/%s", base->dir, base->files[i].name);
        const struct bytes *b = &base->files[i].original;
        if (fuzz_write_file(path, b->data, b->len, "", 0))
            return -1;
    }
    return 0;
}

static void remove_bases(void)
{
    for (unsigned b = 0; b < base_count; b++) {
        for (unsigned i = 0; i < bases[b].count; i++) {
            if (bases[b].dir[0]) {
                char path[4096 + 64];
                snprintf(path, sizeof path, "%s/%s", bases[b].dir, bases[b].files[i].name);
                unlink(path);
            }
            free(bases[b].files[i].original.data);
        }
        if (bases[b].dir[0])
            rmdir(bases[b].dir);
    }
}

static int write_seeds(const char *dir)
{
    for (unsigned b = 0; b < base_count; b++)
        for (unsigned i = 0; i < bases[b].count; i++) {
            char path[4096];
            unsigned char selector = (unsigned char)(b << 6 | i);
            const struct bytes *o = &bases[b].files[i].original;
            snprintf(path, sizeof path, "%s/base%u-%s", dir, b, bases[b].files[i].name);
            if (fuzz_write_file(path, &selector, 1, o->data, o->len))
                return -1;
        }
    return 0;
}

/* Base 0: the sample run, written by run_writer.c, read back as files. */
static int synthetic_base(void)
{
    struct sample_run sample;
    if (sample_run_build(&sample, 0) != 0)
        return -1;
    /* The checksum path (run format 1.5) in the seeds, as libppw writes
     * it: thread 0's samples and the run file end with a CHECKSUM record
     * (rf_write fills it in), thread 0's profile is sealed. */
    rf_checksum(&sample.samples[0]);
    rf_finish(&sample.samples[0]);
    rf_header(&sample.samples[0])->flags |= PPW_FILE_CHECKSUMMED;
    rf_checksum(&sample.run);
    rf_finish(&sample.run);
    rf_header(&sample.run)->flags |= PPW_FILE_CHECKSUMMED;
    rf_header(&sample.profile[0])->flags |= PPW_FILE_SEALED;
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/ppw-fuzz-sample-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror(dir);
        sample_run_free(&sample);
        return -1;
    }
    struct base *base = &bases[base_count++];
    int rc = sample_run_write(&sample, dir);
    sample_run_free(&sample);
    if (!rc)
        rc = read_base(base, dir);
    for (unsigned i = 0; i < base->count; i++) {
        char path[4096 + 64];
        snprintf(path, sizeof path, "%s/%s", dir, base->files[i].name);
        unlink(path);
    }
    rmdir(dir);
    return rc;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    atexit(remove_bases);
    if (synthetic_base() != 0)
        exit(1);
    const char *real = getenv("PPW_FUZZ_REAL_RUN");
    if (real && *real && read_base(&bases[base_count++], real) != 0)
        exit(1);
    const char *seeds = getenv("PPW_FUZZ_SEEDS");
    if (seeds && *seeds)
        exit(write_seeds(seeds) ? 1 : 0);
    verbose = getenv("PPW_FUZZ_VERBOSE") != NULL;
    for (unsigned b = 0; b < base_count; b++) {
        if (place_base(&bases[b]) != 0)
            exit(1);
        /* Each base must load, or every input on it is wasted. */
        struct ppw_run *run = NULL;
        struct ppw_err err;
        if (ppw_run_load(bases[b].dir, &run, &err) != 0) {
            fprintf(stderr, "fuzz_run: base %u does not load: %s\n", b, err.message);
            exit(1);
        }
        ppw_run_free(run);
    }
    return 0;
}

/* The header fields that name the run, and committed, from the original
 * file, so that the records rather than the header get fuzzed. */
static void keep_header(uint8_t *file, size_t len, const struct bytes *orig)
{
    const struct ppw_file_header *h = (const void *)orig->data;
    if (orig->len < sizeof *h || len < h->header_size || h->header_size < sizeof *h)
        return;
    /* magic, major; then kind, header_size; then pid, thread; then the build-id */
    memcpy(file, h, offsetof(struct ppw_file_header, minor));
    memcpy(file + offsetof(struct ppw_file_header, kind), &h->kind,
           offsetof(struct ppw_file_header, committed) - offsetof(struct ppw_file_header, kind));
    uint64_t committed = len - h->header_size;
    memcpy(file + offsetof(struct ppw_file_header, committed), &committed, 8);
    memcpy(file + offsetof(struct ppw_file_header, pid), &h->pid,
           offsetof(struct ppw_file_header, flags) - offsetof(struct ppw_file_header, pid));
    memcpy(file + offsetof(struct ppw_file_header, build_id_size), &h->build_id_size,
           offsetof(struct ppw_file_header, dropped) -
               offsetof(struct ppw_file_header, build_id_size));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    struct base *base = &bases[(data[0] >> 6 & 1) % base_count];
    const struct base_file *target = &base->files[(data[0] & 0x3f) % base->count];
    char path[4096 + 64];
    snprintf(path, sizeof path, "%s/%s", base->dir, target->name);
    size_t len = size - 1;
    uint8_t *file = malloc(len ? len : 1);
    if (!file)
        return 0;
    memcpy(file, data + 1, len);
    if (!(data[0] & 0x80)) {
        keep_header(file, len, &target->original);
        run_file_reseal(file, len);
    }
    int rc = fuzz_write_file(path, file, len, "", 0);
    free(file);
    if (rc)
        abort();
    struct ppw_run *run = NULL;
    struct ppw_err err;
    if (ppw_run_load(base->dir, &run, &err) == 0) {
        /* Walk what the loader promises is consistent. */
        for (size_t t = 0; t < run->thread_count; t++) {
            const struct ppw_run_thread *th = &run->threads[t];
            for (size_t s = 0; s < th->sample_count; s++) {
                const struct ppw_run_spawn *chain[64];
                size_t n;
                (void)ppw_run_spawn_chain(run, th->index, th->samples[s].spawn_tag, chain, 64, &n,
                                          &err);
            }
        }
        ppw_run_free(run);
    } else if (verbose) {
        fprintf(stderr, "fuzz_run: %s\n", err.message);
    }
    if (fuzz_write_file(path, target->original.data, target->original.len, "", 0))
        abort();
    return 0;
}
