/* lines_probe: ppw_lines on real binaries, for test_lines.sh.
 *
 *   lines_probe DIR BINARY...          symbolize queries from stdin
 *   lines_probe -e DIR BINARY...       print each module's ppw_lines_module_error
 *   lines_probe -b N DIR BINARY...     time N lookups cycling over the queries
 *   lines_probe -n DIR BINARY...       as the first, with the frames the views
 *                                      use (ppw_lines_lookup_near)
 *
 * Writes a run directory DIR whose modules are the binaries, each mapped at
 * its own made-up load bias, and one sample per query (so `ppw-blame dump`
 * can read it too); then loads the run and looks every query up.  A query
 * is a line "MODULE ADDR [ret]": module index, hex link-time address, and
 * "ret" for a return address (looked up one byte earlier).  Output is
 * llvm-symbolizer's with --inlines: per query, for each frame the function
 * and file:line:col on two lines ("??" when unknown), then an empty line;
 * a query without frames prints "??" and "??:0:0". */
#define _XOPEN_SOURCE 700 /* realpath */

#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lines.h"
#include "read_elf.h"
#include "read_run.h"
#include "run_writer.h"
#include "symbols.h"

#define MODULE_BIAS(i) (0x555500000000ull + (uint64_t)(i)*0x100000000ull)

struct query {
    unsigned module;
    uint64_t addr;
    bool ret;
};

/* img: the binary's path, PT_LOAD range (biased), build-id; 0 or -1. */
static int read_image(const char *path, uint64_t bias, struct run_image *img)
{
    struct ppw_elf *elf = NULL;
    struct ppw_err err;
    Elf64_Ehdr eh;
    FILE *f = fopen(path, "rb");
    memset(img, 0, sizeof *img);
    if (!f || fread(&eh, sizeof eh, 1, f) != 1 || !realpath(path, img->path)) {
        fprintf(stderr, "lines_probe: %s: cannot read\n", path);
        if (f)
            fclose(f);
        return -1;
    }
    img->bias = bias;
    img->lo = UINT64_MAX;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        if (fseek(f, (long)(eh.e_phoff + i * sizeof ph), SEEK_SET) ||
            fread(&ph, sizeof ph, 1, f) != 1)
            break;
        if (ph.p_type != PT_LOAD)
            continue;
        img->lo = bias + ph.p_vaddr < img->lo ? bias + ph.p_vaddr : img->lo;
        img->hi =
            bias + ph.p_vaddr + ph.p_memsz > img->hi ? bias + ph.p_vaddr + ph.p_memsz : img->hi;
    }
    fclose(f);
    if (ppw_elf_open(path, &elf, &err) != 0) {
        fprintf(stderr, "lines_probe: %s\n", err.message);
        return -1;
    }
    const char *hex = ppw_elf_build_id(elf);
    for (size_t i = 0; hex[2 * i] && hex[2 * i + 1] && i < PPW_BUILD_ID_MAX; i++) {
        unsigned byte = 0;
        sscanf(hex + 2 * i, "%2x", &byte);
        img->build_id[img->build_id_size++] = (uint8_t)byte;
    }
    ppw_elf_close(elf);
    return 0;
}

/* The run: modules, and thread 0 with one single-frame sample per query. */
static int write_run(const char *dir, char **binaries, unsigned count, const struct query *q,
                     size_t nq)
{
    struct run_image img;
    struct run_file run, samples;
    int rc = 0;
    for (unsigned i = 0; i < count && rc == 0; i++) {
        if (read_image(binaries[i], MODULE_BIAS(i), &img) != 0)
            return -1;
        if (i == 0) {
            rf_init(&run, PPW_FILE_RUN, UINT32_MAX, 77, img.build_id, img.build_id_size);
            rf_init(&samples, PPW_FILE_SAMPLES, 0, 77, img.build_id, img.build_id_size);
        }
        rf_module(&run, PPW_RUN_MODULE, &img, i == 0 ? PPW_MODULE_EXE : 0);
    }
    for (size_t i = 0; i < nq; i++) {
        struct ppw_rec_stack s = {(uint32_t)i + 1, 1, q[i].ret ? 0 : PPW_STACK_LEAF_PC};
        uint64_t pc = MODULE_BIAS(q[i].module) + q[i].addr;
        rf_record(&samples, PPW_SMP_STACK, &s, sizeof s, &pc, sizeof pc, NULL);
        struct ppw_rec_sample sample = {(uint32_t)i + 1, 0, 1000 + i, 1000000};
        rf_record(&samples, PPW_SMP_SAMPLE, &sample, sizeof sample, NULL, 0, NULL);
    }
    rf_finish(&run);
    rf_finish(&samples);
    rf_header(&run)->flags |= PPW_FILE_CLOSED;
    rf_header(&samples)->flags |= PPW_FILE_CLOSED;
    char mk[4200];
    snprintf(mk, sizeof mk, "mkdir -p '%s'", dir);
    if (system(mk) != 0 || rf_write(&run, dir, "run.ppw") ||
        rf_write(&samples, dir, "t0.samples.ppw"))
        rc = -1;
    rf_free(&run);
    rf_free(&samples);
    return rc;
}

static void print_frames(const struct ppw_source_frame *f, size_t n)
{
    if (n == 0)
        puts("??\n??:0:0");
    for (size_t i = 0; i < n; i++)
        printf("%s\n%s:%" PRIu32 ":%" PRIu32 "\n", f[i].function ? f[i].function : "??",
               f[i].file ? f[i].file : "??", f[i].line, f[i].col);
    putchar('\n');
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Times n lookups cycling over the queries: the first pass (loading DWARF
 * and filling the cache) and the rest. */
static void bench(struct ppw_lines *lines, const struct query *q, size_t nq, long n)
{
    struct ppw_source_frame f[16];
    size_t sum = 0;
    double t0 = seconds();
    for (size_t i = 0; i < nq; i++)
        sum += ppw_lines_lookup(lines, MODULE_BIAS(q[i].module) + q[i].addr, !q[i].ret, f, 16);
    double t1 = seconds();
    for (long i = 0; i < n; i++) {
        const struct query *x = &q[(size_t)i % nq];
        sum += ppw_lines_lookup(lines, MODULE_BIAS(x->module) + x->addr, !x->ret, f, 16);
    }
    double t2 = seconds();
    printf(
        "distinct=%zu first_pass_s=%.6f lookups=%ld cached_s=%.6f ns_per_lookup=%.1f frames=%zu\n",
        nq, t1 - t0, n, t2 - t1, 1e9 * (t2 - t1) / (double)n, sum);
}

static struct query *read_queries(size_t *count)
{
    struct query *q = NULL;
    size_t n = 0, cap = 0;
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        struct query x = {0};
        char kind[16] = "";
        if (sscanf(line, "%u %" SCNx64 " %15s", &x.module, &x.addr, kind) < 2)
            continue;
        x.ret = strcmp(kind, "ret") == 0;
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            struct query *grown = realloc(q, cap * sizeof *q);
            if (!grown)
                break;
            q = grown;
        }
        q[n++] = x;
    }
    *count = n;
    return q;
}

int main(int argc, char **argv)
{
    bool errors = false, near = false;
    long bench_n = 0;
    int a = 1;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (strcmp(argv[a], "-e") == 0)
            errors = true;
        else if (strcmp(argv[a], "-n") == 0)
            near = true;
        else if (strcmp(argv[a], "-b") == 0 && a + 1 < argc)
            bench_n = strtol(argv[++a], NULL, 10);
    }
    if (argc - a < 2) {
        fputs("usage: lines_probe [-e | -n | -b N] DIR BINARY...\n", stderr);
        return 2;
    }
    const char *dir = argv[a];
    unsigned count = (unsigned)(argc - a - 1);
    size_t nq = 0;
    struct query *q = errors ? NULL : read_queries(&nq);
    struct ppw_run *run = NULL;
    struct ppw_symbols *syms = NULL;
    struct ppw_lines *lines = NULL;
    struct ppw_err err;
    int rc = write_run(dir, argv + a + 1, count, q, nq) ? 1 : 0;
    if (!rc && (ppw_run_load(dir, &run, &err) || ppw_symbols_new(run, NULL, &syms, &err) ||
                ppw_lines_new(syms, &lines, &err))) {
        fprintf(stderr, "lines_probe: %s\n", err.message);
        rc = 1;
    }
    for (unsigned i = 0; !rc && errors && i < run->module_count; i++) {
        const char *why = ppw_lines_module_error(lines, &run->modules[i]);
        printf("module %u: %s\n", i, why ? why : "ok");
    }
    if (!rc && bench_n > 0 && nq)
        bench(lines, q, nq, bench_n);
    for (size_t i = 0; !rc && !errors && !bench_n && i < nq; i++) {
        struct ppw_source_frame f[64], again[1];
        uint64_t pc = MODULE_BIAS(q[i].module) + q[i].addr;
        size_t (*look)(struct ppw_lines *, uint64_t, bool, struct ppw_source_frame *, size_t) =
            near ? ppw_lines_lookup_near : ppw_lines_lookup;
        size_t n = look(lines, pc, !q[i].ret, f, 64);
        /* a second lookup comes from the cache, here cut to one frame */
        size_t n1 = look(lines, pc, !q[i].ret, again, 1);
        if (n1 != (n ? 1u : 0u) || (n && memcmp(again, f, sizeof again) != 0)) {
            fprintf(stderr, "lines_probe: the cached lookup of 0x%" PRIx64 " differs\n", q[i].addr);
            rc = 1;
        }
        print_frames(f, n);
    }
    ppw_lines_free(lines);
    ppw_symbols_free(syms);
    ppw_run_free(run);
    free(q);
    return rc;
}
