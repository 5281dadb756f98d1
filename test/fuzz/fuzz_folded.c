/* libFuzzer target: the folded-stack parser (blame/folded.h) on arbitrary
 * bytes, written to a file in a temporary directory created once.
 *
 * With PPW_FUZZ_SEEDS=DIR set, LLVMFuzzerInitialize writes a few valid
 * folded files into DIR and exits. */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "folded.h"
#include "fuzz_io.h"
#include "stacks.h"

static char tmp_dir[4096], input_path[4096];

static void remove_tmp(void)
{
    unlink(input_path);
    rmdir(tmp_dir);
}

static int write_seeds(const char *dir)
{
    static const char *const seeds[] = {
        "main@22;foo@9 3\n",
        "# comment\n\nmain@main.c:22;compute@work.c:9:5;memcpy 12\nmain@22 1\n",
        "main@22;.omp_outlined.@main.c:30:7;leaf@40 100000\r\nmain 1\n",
        "main@a.c:22:0;foo@0;memcpy@@string.c:12:3;??;odd%3Bname%20x 2\n- 4\n",
    };
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/seed%zu", dir, i);
        if (fuzz_write_file(path, seeds[i], strlen(seeds[i]), "", 0))
            return -1;
    }
    return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *seeds = getenv("PPW_FUZZ_SEEDS");
    if (seeds && *seeds)
        exit(write_seeds(seeds) ? 1 : 0);
    const char *tmp = getenv("TMPDIR");
    snprintf(tmp_dir, sizeof tmp_dir, "%s/ppw-fuzz-folded-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(tmp_dir)) {
        perror(tmp_dir);
        exit(1);
    }
    snprintf(input_path, sizeof input_path, "%s/input.folded", tmp_dir);
    atexit(remove_tmp);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fuzz_write_file(input_path, data, size, "", 0))
        abort();
    struct ppw_stack_set *set = NULL;
    struct ppw_err err;
    if (ppw_stack_set_new(&set, &err) != 0)
        return 0;
    if (ppw_folded_load(input_path, NULL, set, &err) == 0) {
        size_t count;
        (void)ppw_stack_set_stacks(set, &count);
    }
    ppw_stack_set_free(set);
    return 0;
}
