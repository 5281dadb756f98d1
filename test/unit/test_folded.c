/* Unit tests of blame/folded.c's writer against its reader: every frame
 * ppw_folded_write_frame writes reads back equal (function, file, line,
 * column), whatever bytes its names hold; the texts it writes for the
 * awkward cases; a stack without frames.  (The reader's errors are tested
 * through ppw-blame in test/blame/check_views.sh, and fuzzed.)
 *
 * usage: test_folded WORKDIR */
#define _POSIX_C_SOURCE 200809L

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attribute.h"
#include "folded.h"
#include "harness.h"
#include "stacks.h"

static char path[1000];

/* The text ppw_folded_write_frame writes for frame. */
static const char *text_of(const struct ppw_blame_frame *frame, bool has_graph)
{
    static char text[1000];
    FILE *f = fmemopen(text, sizeof text, "w");
    if (!f)
        return "";
    ppw_folded_write_frame(f, frame, has_graph);
    fclose(f);
    return text;
}

static bool equal_or_null(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* Writes frames[0..n) (innermost first) as one stack of count samples,
 * reads the file back without a graph, and compares. */
static void round_trip(const struct ppw_blame_frame *frames, size_t n, const bool *has_graph,
                       uint64_t count)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        FAIL_AT("cannot write %s", path);
        return;
    }
    fputs("# a comment\n", f);
    if (!n)
        fputs(PPW_FOLDED_NO_FRAMES, f);
    for (size_t k = n; k-- > 0;) {
        ppw_folded_write_frame(f, &frames[k], has_graph[k]);
        if (k)
            putc(';', f);
    }
    fprintf(f, " %llu\n", (unsigned long long)count);
    fclose(f);
    struct ppw_stack_set *set = NULL;
    struct ppw_err err;
    ppw_err_clear(&err);
    CHECK_INT(ppw_stack_set_new(&set, &err), 0);
    int rc = ppw_folded_load(path, NULL, set, &err);
    if (rc)
        FAIL_AT("read back: %s", err.message);
    size_t nstacks = 0;
    const struct ppw_blame_stack *st = set ? ppw_stack_set_stacks(set, &nstacks) : NULL;
    CHECK_INT(nstacks, 1);
    if (!rc && nstacks == 1) {
        CHECK_INT(st[0].samples, count);
        CHECK_INT(st[0].nframes, n);
        for (size_t k = 0; k < n && k < st[0].nframes; k++) {
            const struct ppw_blame_frame *a = &st[0].frames[k], *b = &frames[k];
            const char *want_file = b->file && b->file[0] ? b->file : NULL;
            const char *want_function = b->function && b->function[0] ? b->function : NULL;
            if (!equal_or_null(a->function, want_function) || !equal_or_null(a->file, want_file) ||
                a->line != b->line || a->col != b->col)
                FAIL_AT("frame %zu read back as %s %s:%u:%u, written %s %s:%u:%u", k,
                        a->function ? a->function : "(null)", a->file ? a->file : "(null)", a->line,
                        a->col, want_function ? want_function : "(null)",
                        want_file ? want_file : "(null)", b->line, b->col);
        }
    }
    ppw_stack_set_free(set);
}

static void test_texts(void)
{
    CHECK_STR(
        text_of(
            &(struct ppw_blame_frame){.function = "foo", .file = "src/a.c", .line = 12, .col = 5},
            true),
        "foo@src/a.c:12:5");
    CHECK_STR(
        text_of(
            &(struct ppw_blame_frame){.function = "foo", .file = "src/a.c", .line = 12, .col = 0},
            true),
        "foo@src/a.c:12:0");
    CHECK_STR(
        text_of(&(struct ppw_blame_frame){.function = "foo", .file = NULL, .line = 0, .col = 0},
                true),
        "foo@0");
    CHECK_STR(
        text_of(&(struct ppw_blame_frame){.function = "foo", .file = NULL, .line = 7, .col = 3},
                true),
        "foo@7:3");
    CHECK_STR(
        text_of(&(struct ppw_blame_frame){.function = "foo", .file = "a.c", .line = 0, .col = 0},
                true),
        "foo@a.c:0:0");
    CHECK_STR(
        text_of(&(struct ppw_blame_frame){.function = "memcpy", .file = NULL, .line = 0, .col = 0},
                false),
        "memcpy");
    CHECK_STR(text_of(
                  &(struct ppw_blame_frame){
                      .function = "[libomp.so.5]", .file = NULL, .line = 0, .col = 0},
                  false),
              "[libomp.so.5]");
    CHECK_STR(
        text_of(&(struct ppw_blame_frame){.function = "spin", .file = "lib.c", .line = 3, .col = 1},
                false),
        "spin@@lib.c:3:1");
    CHECK_STR(
        text_of(&(struct ppw_blame_frame){.function = NULL, .file = NULL, .line = 0, .col = 0},
                false),
        "??");
    CHECK_STR(
        text_of(&(struct ppw_blame_frame){.function = "??", .file = NULL, .line = 0, .col = 0},
                false),
        "%3F?");
    CHECK_STR(text_of(&(struct ppw_blame_frame){.function = "-", .file = NULL, .line = 0, .col = 0},
                      false),
              "%2D");
    CHECK_STR(text_of(
                  &(struct ppw_blame_frame){
                      .function = "a;b c@d#e%f\tg", .file = "x y;z.c", .line = 1, .col = 2},
                  false),
              "a%3Bb%20c%40d%23e%25f%09g@@x%20y%3Bz.c:1:2");
    CHECK_STR(
        text_of(&(struct ppw_blame_frame){.function = "f", .file = "", .line = 4, .col = 0}, true),
        "f@4");
}

static void test_round_trips(void)
{
    /* innermost first, as the views hold them */
    const struct ppw_blame_frame frames[] = {
        {.function = "[libomp.so.5]", .file = NULL, .line = 0, .col = 0},
        {.function = NULL, .file = "dir/unknown.c", .line = 9, .col = 0},
        {.function = "__memmove_avx_unaligned", .file = NULL, .line = 0, .col = 0},
        {.function = "helper",
         .file = "/usr/include/x86_64-linux-gnu/bits/string_fortified.h",
         .line = 29,
         .col = 10},
        {.function = "leaf", .file = NULL, .line = 0, .col = 0},
        {.function = "leaf", .file = "prog.c", .line = 0, .col = 0},
        {.function = "odd;name with blanks@v1#%",
         .file = "we;ird @dir/a#b%.c",
         .line = 4,
         .col = 2},
        {.function = "operator<<(std::ostream&, int)", .file = "a:b:12.c", .line = 3, .col = 0},
        {.function = "??", .file = "12", .line = 5, .col = 0},
        {.function = "-", .file = "x", .line = 1, .col = 1},
        {.function = "\x01\x7f\xc3\xa9", .file = NULL, .line = 0, .col = 0},
        {.function = "main", .file = "prog.c", .line = 40, .col = 7},
    };
    const bool graph[] = {false, false, false, false, true,  true,
                          false, false, false, false, false, true};
    size_t n = sizeof frames / sizeof frames[0];
    round_trip(frames, n, graph, 3);
    round_trip(frames + 11, 1, graph + 11, 1000000000000000ull);
    round_trip(NULL, 0, graph, 4);
}

int main(int argc, char **argv)
{
    snprintf(path, sizeof path, "%s/round_trip.folded", argc > 1 ? argv[1] : ".");
    RUN(test_texts);
    RUN(test_round_trips);
    return harness_exit();
}
