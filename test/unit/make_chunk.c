/* Writes a test chunk to a file, for tests that embed it into real objects
 * with objcopy.  usage: make_chunk OUT SOURCE [odd]
 * "odd" writes a unit whose names need escaping, and a task call, instead
 * of the sample. */
#include <stdio.h>
#include <string.h>

#include "ppw/static_format.h"
#include "sample_graph.h"

static void build_odd_names(struct bytes *out, const char *source)
{
    struct chunk_writer cw;
    cw_init(&cw, source);
    cw_unit(&cw, source, "", "", 1, 0);
    cw_func(&cw, "odd", "odd", "odd dir/odd.c", 1, PPW_FUNC_ANALYSED, "", 3, 1);
    cw_var(&cw, 0, &(struct tvar){ .name = "quote\"back\\slash", .kind = PPW_VAR_LOCAL,
                                   .type = "int" });
    cw_var(&cw, 1, &(struct tvar){ .name = "tab\there\nnewline", .kind = PPW_VAR_LOCAL,
                                   .type = "int" });
    cw_var(&cw, 2, &(struct tvar){ .name = "na\xc3\xafve\xff", .kind = PPW_VAR_LOCAL,
                                   .type = "char \xe2\x82\xac" });
    /* A task binds a shared variable by name, not by field path. */
    const struct tbinding task[] = { { 1, 5, PPW_BIND_REF, "shared" } };
    cw_call(&cw, 0, 4, 1, ".omp_outlined.", PPW_CALL_TASK, task, 1);
    cw_finish(&cw, out);
    cw_free(&cw);
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: make_chunk OUT SOURCE [odd]\n");
        return 2;
    }
    struct bytes chunk = { 0 };
    if (argc == 4 && strcmp(argv[3], "odd") == 0)
        build_odd_names(&chunk, argv[2]);
    else
        build_sample(&chunk, argv[2]);
    FILE *out = fopen(argv[1], "wb");
    int ok = out && fwrite(chunk.data, 1, chunk.len, out) == chunk.len;
    if (out && fclose(out) != 0)
        ok = 0;
    bytes_free(&chunk);
    if (!ok) {
        perror(argv[1]);
        return 1;
    }
    return 0;
}
