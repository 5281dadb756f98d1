/* libFuzzer target: the run-directory reader (blame/read_run.h).  A valid
 * run (test/unit's sample run, whose files name this program's build-id)
 * is written once into a temporary directory; each input replaces one of
 * its files, chosen by the input's first byte, with the remaining bytes,
 * then ppw_run_load and ppw_run_free run and the file is restored.
 *
 * Few mutations keep a file's header naming this run (magic, kind, pid,
 * thread, build-id) and its committed size right, so unless the first
 * byte has its high bit set, those header fields are copied from the
 * original file and committed is set to the bytes after the header: the
 * records get fuzzed.  With the bit set, the bytes are written as they are.
 *
 * With PPW_FUZZ_SEEDS=DIR set, LLVMFuzzerInitialize writes the seed corpus
 * into DIR (each of the sample run's fuzzed files, unchanged, behind its
 * selector byte) and exits. */
#define _POSIX_C_SOURCE 200809L

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_io.h"
#include "read_run.h"
#include "run_writer.h"

static const char *const names[] = {"run.ppw", "t0.samples.ppw", "t0.events.ppw",
                                    "t0.profile.ppw"};
#define NFILES (sizeof names / sizeof names[0])

static struct sample_run sample;
static const struct run_file *originals[NFILES];
static char run_dir[4096];
static int verbose; /* PPW_FUZZ_VERBOSE=1: print why each input was rejected */

static int write_seeds(const char *dir)
{
    for (unsigned i = 0; i < NFILES; i++) {
        char path[4096];
        unsigned char selector = (unsigned char)i;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (fuzz_write_file(path, &selector, 1, originals[i]->b.data, originals[i]->b.len))
            return -1;
    }
    return 0;
}

static void remove_tmp(void)
{
    static const char *const all[] = {"run.ppw",        "t0.samples.ppw", "t0.events.ppw",
                                      "t0.profile.ppw", "t1.samples.ppw", "t1.events.ppw",
                                      "t1.profile.ppw"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", run_dir, all[i]);
        unlink(path);
    }
    rmdir(run_dir);
    sample_run_free(&sample);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (sample_run_build(&sample, 0) != 0)
        exit(1);
    originals[0] = &sample.run;
    originals[1] = &sample.samples[0];
    originals[2] = &sample.events[0];
    originals[3] = &sample.profile[0];
    const char *seeds = getenv("PPW_FUZZ_SEEDS");
    if (seeds && *seeds) {
        int rc = write_seeds(seeds);
        sample_run_free(&sample);
        exit(rc ? 1 : 0);
    }
    verbose = getenv("PPW_FUZZ_VERBOSE") != NULL;
    const char *tmp = getenv("TMPDIR");
    snprintf(run_dir, sizeof run_dir, "%s/ppw-fuzz-run-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(run_dir)) {
        perror(run_dir);
        exit(1);
    }
    atexit(remove_tmp);
    if (sample_run_write(&sample, run_dir) != 0)
        exit(1);
    /* The sample run itself must load, or every input is wasted. */
    struct ppw_run *run = NULL;
    struct ppw_err err;
    if (ppw_run_load(run_dir, &run, &err) != 0) {
        fprintf(stderr, "fuzz_run: the sample run does not load: %s\n", err.message);
        exit(1);
    }
    ppw_run_free(run);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    unsigned which = (data[0] & 0x7f) % NFILES;
    const struct run_file *orig = originals[which];
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", run_dir, names[which]);
    size_t len = size - 1;
    uint8_t *file = malloc(len ? len : 1);
    if (!file)
        return 0;
    memcpy(file, data + 1, len);
    const struct ppw_file_header *h = (const void *)orig->b.data;
    if (!(data[0] & 0x80) && len >= h->header_size) {
        /* magic, major; then kind, header_size; then pid, thread; then the build-id */
        memcpy(file, h, offsetof(struct ppw_file_header, minor));
        memcpy(file + offsetof(struct ppw_file_header, kind), &h->kind,
               offsetof(struct ppw_file_header, committed) -
                   offsetof(struct ppw_file_header, kind));
        uint64_t committed = len - h->header_size;
        memcpy(file + offsetof(struct ppw_file_header, committed), &committed, 8);
        memcpy(file + offsetof(struct ppw_file_header, pid), &h->pid,
               offsetof(struct ppw_file_header, flags) - offsetof(struct ppw_file_header, pid));
        memcpy(file + offsetof(struct ppw_file_header, build_id_size), &h->build_id_size,
               offsetof(struct ppw_file_header, dropped) -
                   offsetof(struct ppw_file_header, build_id_size));
    }
    int rc = fuzz_write_file(path, file, len, "", 0);
    free(file);
    if (rc)
        abort();
    struct ppw_run *run = NULL;
    struct ppw_err err;
    if (ppw_run_load(run_dir, &run, &err) == 0) {
        /* Walk what the loader promises is consistent. */
        for (size_t t = 0; t < run->thread_count; t++) {
            const struct ppw_run_thread *th = &run->threads[t];
            for (size_t s = 0; s < th->sample_count; s++) {
                const struct ppw_run_spawn *chain[64];
                size_t n;
                (void)ppw_run_spawn_chain(run, th->index, th->samples[s].spawn_tag, chain, 64,
                                          &n, &err);
            }
        }
        ppw_run_free(run);
    } else if (verbose) {
        fprintf(stderr, "fuzz_run: %s\n", err.message);
    }
    if (fuzz_write_file(path, orig->b.data, orig->b.len, "", 0))
        abort();
    return 0;
}
