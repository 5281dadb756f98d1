/* libFuzzer target: the .ppw.blame section reader (docs/FORMATS.md section
 * 1) on arbitrary bytes, through ppw_static_graph_load_section, the entry
 * that ppw_static_graph_load hands each section to.  Each chunk carries a
 * payload hash that almost no mutation keeps right, so an input whose
 * hashes are wrong is loaded twice: as it is, and with them recomputed.
 *
 * With PPW_FUZZ_SEEDS=DIR set, LLVMFuzzerInitialize writes the seed corpus
 * (sample chunks from test/unit's chunk writer) into DIR and exits. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ppw/static_format.h"
#include "fuzz_io.h"
#include "read_graph.h"
#include "sample_graph.h"

static int write_seed(const char *dir, const char *name, const struct bytes *b)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return fuzz_write_file(path, b->data, b->len, "", 0);
}

static int write_seeds(const char *dir)
{
    struct bytes one = {0}, two = {0};
    build_sample(&one, "main.c");
    /* Two chunks in one section, as a linked binary has them. */
    build_sample(&two, "main.c");
    build_sample(&two, "other.c");
    int rc = write_seed(dir, "sample", &one) | write_seed(dir, "two_units", &two);
    bytes_free(&one);
    bytes_free(&two);
    return rc;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *seeds = getenv("PPW_FUZZ_SEEDS");
    if (seeds && *seeds)
        exit(write_seeds(seeds) ? 1 : 0);
    return 0;
}

static uint64_t get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Recomputes the payload hash of every chunk the reader would reach (as
 * read_section walks them); returns whether one changed. */
static int rehash(uint8_t *sec, size_t size)
{
    int changed = 0;
    size_t pos = 0, magic_len = strlen(PPW_STATIC_MAGIC);
    while (pos < size) {
        if (sec[pos] == 0) {
            pos++;
            continue;
        }
        uint8_t *b = sec + pos;
        size_t left = size - pos;
        if (left < PPW_STATIC_HEADER_SIZE || memcmp(b, PPW_STATIC_MAGIC, magic_len) != 0)
            break;
        uint64_t header = get_le(b + 8, 4), chunk = get_le(b + 12, 4);
        if (header < PPW_STATIC_HEADER_SIZE || header > chunk || chunk > left)
            break;
        uint64_t hash = ppw_fnv1a64(b + header, chunk - header, PPW_FNV1A64_INIT);
        if (hash != get_le(b + 16, 8)) {
            for (int i = 0; i < 8; i++)
                b[16 + i] = (uint8_t)(hash >> 8 * i);
            changed = 1;
        }
        pos += chunk;
    }
    return changed;
}

static void load(const uint8_t *data, size_t size)
{
    struct ppw_static_graph *graph = NULL;
    struct ppw_err err;
    if (ppw_static_graph_load_section(data, size, "fuzz", 0, &graph, &err) == 0) {
        for (size_t i = 0; i < graph->func_count; i++)
            (void)ppw_static_graph_find_func(graph, graph->funcs[i].name);
        ppw_static_graph_free(graph);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load(data, size);
    uint8_t *fixed = malloc(size ? size : 1); /* exactly size: ASan sees overreads */
    if (!fixed)
        return 0;
    memcpy(fixed, data, size);
    if (rehash(fixed, size))
        load(fixed, size);
    free(fixed);
    return 0;
}
