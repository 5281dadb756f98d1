/* make_run DIR [crashed]: writes the sample run of run_writer.h into DIR,
 * for the ppw-blame dump and profile tests.  Its stacks point into this
 * program (which must keep its symbol table and build-id) and into libc. */
#include <stdio.h>
#include <string.h>

#include "run_writer.h"

int main(int argc, char **argv)
{
    struct sample_run sr;
    if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "crashed") != 0)) {
        fputs("usage: make_run DIR [crashed]\n", stderr);
        return 2;
    }
    if (sample_run_build(&sr, argc == 3 ? SAMPLE_RUN_CRASHED : 0) != 0)
        return 1;
    int rc = sample_run_write(&sr, argv[1]);
    sample_run_free(&sr);
    return rc ? 1 : 0;
}
