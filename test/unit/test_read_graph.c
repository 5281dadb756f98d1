/* Unit tests of blame/read_graph.c: round trips of synthetic chunks, and
 * every kind of corruption giving its error code and a message, never a
 * crash (run under ASan/UBSan with -DPPW_SANITIZE=ON).
 *
 * usage: test_read_graph [WORKDIR]   (ELF fixtures are written there) */
#define _POSIX_C_SOURCE 200809L

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk_writer.h"
#include "elf_writer.h"
#include "harness.h"
#include "ppw/static_format.h"
#include "read_graph.h"
#include "sample_graph.h"

#define BASE 1000 /* pretend file offset of the section, to check reported offsets */

static const char *workdir = ".";

/* ---- fixtures ---- */

/* A chunk with STRTAB and UNIT whose remaining records a test writes. */
static void begin_small(struct chunk_writer *cw)
{
    cw_init(cw, "small.c");
    cw_unit(cw, "small.c", "", "", 1, 0);
}

static void finish_small(struct chunk_writer *cw, struct bytes *out)
{
    cw_finish(cw, out);
    cw_free(cw);
}

static int load_bytes(const struct bytes *b, struct ppw_static_graph **graph, struct ppw_err *err)
{
    return ppw_static_graph_load_section(b->data, b->len, "mem", BASE, graph, err);
}

#define EXPECT_ERROR(bytes, code, needle) expect_error((bytes), (code), (needle), __LINE__)

static void expect_error(const struct bytes *b, int code, const char *needle, int line)
{
    struct ppw_static_graph *graph = (void *)1;
    struct ppw_err err;
    int rc = load_bytes(b, &graph, &err);
    if (rc != code || err.code != code || graph != NULL || !strstr(err.message, needle))
        FAIL_AT("(case at line %d) rc=%d code=%d message=\"%s\", expected %d with \"%s\"", line, rc,
                err.code, err.message, code, needle);
    ppw_static_graph_free(rc ? NULL : graph);
}

static char *temp_path(const char *name)
{
    size_t len = strlen(workdir) + strlen(name) + 2;
    char *path = malloc(len);
    snprintf(path, len, "%s/%s", workdir, name);
    return path;
}

/* ---- round trips ---- */

static void check_main(const struct ppw_static_func *f)
{
    CHECK_STR(f->name, "main");
    CHECK_STR(f->file, "grid.c");
    CHECK_INT(f->line, 10);
    CHECK_INT(f->var_count, 3);
    CHECK_INT(f->call_count, 2);
    const struct ppw_static_var *g = &f->vars[0];
    CHECK_STR(g->type, "struct grid *");
    CHECK_INT(g->parent, -1);
    CHECK_INT(g->param_index, -1);
    CHECK_INT(g->inclusive_count, 4);
    CHECK_STR(g->inclusive[0].file, "grid.c"); /* "" resolves to the function's file */
    CHECK_INT(g->inclusive[1].col, 7);
    CHECK_STR(g->inclusive[3].file, "other.h");
    CHECK_INT(g->exclusive_count, 1);
    CHECK_INT(g->flags, PPW_VAR_WRITTEN | PPW_VAR_PASSED_BY_REF);
    CHECK_STR(f->vars[1].name, "g->cells[].energy");
    CHECK_INT(f->vars[1].parent, 0);
    CHECK_INT(f->vars[2].exclusive_count, 0);
    const struct ppw_static_call *step = &f->calls[0];
    CHECK_STR(step->callee, "step");
    CHECK_INT(step->binding_count, 2);
    CHECK_INT(step->bindings[0].var, 0);
    CHECK_INT(step->bindings[1].var, 2);
    CHECK_INT(step->bindings[1].formal, -1);
    CHECK_INT(step->bindings[1].mode, PPW_BIND_RETURN);
    const struct ppw_static_call *fork = &f->calls[1];
    CHECK_INT(fork->kind, PPW_CALL_FORK);
    CHECK_INT(fork->bindings[0].formal, 2);
    CHECK_STR(fork->bindings[0].callee_path, "->energy");
    CHECK_INT(f->access_count, 3);
    if (f->access_count != 3)
        return;
    CHECK_STR(f->accesses[0].loc.file, "grid.c");
    CHECK_INT(f->accesses[0].loc.line, 12);
    CHECK_INT(f->accesses[1].entry_count, 2);
    CHECK_INT(f->accesses[1].entries[1].var, 1);
    CHECK_INT(f->accesses[1].entries[1].reads, 1);
    CHECK_INT(f->accesses[1].entries[1].writes, 1);
    CHECK_STR(f->accesses[2].loc.file, "other.h");
    CHECK_INT(f->accesses[2].entries[0].writes, 2);
}

static void check_sample(const struct ppw_static_graph *graph)
{
    CHECK_INT(graph->unit_count, 1);
    CHECK_INT(graph->func_count, 2);
    CHECK_INT(graph->global_count, 1);
    if (graph->unit_count != 1 || graph->func_count != 2 || graph->global_count != 1)
        return;
    CHECK_STR(graph->units[0].source, "sample.c");
    CHECK_STR(graph->units[0].producer, "clang 19 + ppw");
    CHECK_INT(graph->units[0].analysed, 2);
    CHECK_INT(graph->units[0].skipped_nodebug, 1);
    CHECK(graph->units[0].minor >= PPW_STATIC_MINOR); /* 7 in the future-records test */
    check_main(&graph->funcs[0]);
    const struct ppw_static_func *outlined = &graph->funcs[1];
    CHECK_STR(outlined->parent, "main");
    CHECK_INT(outlined->vars[0].param_index, 2);
    CHECK_INT(outlined->unit, 0);
    CHECK_STR(graph->globals[0].name, "counter");
    CHECK_STR(graph->globals[0].type, "long");
}

static void test_roundtrip_in_memory(void)
{
    struct bytes b = {0};
    build_sample(&b, "sample.c");
    struct ppw_static_graph *graph = NULL;
    struct ppw_err err;
    CHECK_INT(load_bytes(&b, &graph, &err), 0);
    if (graph)
        check_sample(graph);
    ppw_static_graph_free(graph);
    bytes_free(&b);
}

static void test_roundtrip_elf(void)
{
    struct bytes b = {0};
    unsigned char note[64];
    build_sample(&b, "sample.c");
    size_t note_size = make_build_id_note(note, 0xa0);
    const struct test_section sections[] = {
        {".note.gnu.build-id", SHT_NOTE, note, note_size},
        {PPW_STATIC_SECTION, SHT_PROGBITS, b.data, b.len},
    };
    char *path = temp_path("roundtrip.o");
    CHECK_INT(write_test_elf(path, sections, 2), 0);
    struct ppw_static_graph *graph = NULL;
    struct ppw_err err;
    int rc = ppw_static_graph_load(path, &graph, &err);
    CHECK_INT(rc, 0);
    if (rc)
        fprintf(stderr, "  %s\n", err.message);
    if (graph) {
        check_sample(graph);
        CHECK_STR(graph->build_id, "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3");
        CHECK_STR(graph->path, path);
        CHECK(ppw_static_graph_find_func(graph, "main.omp_outlined") == &graph->funcs[1]);
        CHECK(ppw_static_graph_find_func(graph, "nope") == NULL);
    }
    ppw_static_graph_free(graph);
    free(path);
    bytes_free(&b);
}

static void test_find_by_linkage_name(void)
{
    struct chunk_writer cw;
    struct bytes b = {0};
    begin_small(&cw);
    cw_func(&cw, "helper", "_ZL6helperv", "small.c", 1, 0, "", 0, 0);
    finish_small(&cw, &b);
    struct ppw_static_graph *graph = NULL;
    struct ppw_err err;
    CHECK_INT(load_bytes(&b, &graph, &err), 0);
    if (graph) {
        CHECK(ppw_static_graph_find_func(graph, "helper") != NULL);
        CHECK(ppw_static_graph_find_func(graph, "_ZL6helperv") != NULL);
    }
    ppw_static_graph_free(graph);
    bytes_free(&b);
}

/* ---- minor-version tolerance, chunk walking ---- */

static void test_unknown_records_and_trailing_bytes(void)
{
    struct chunk_writer cw;
    struct bytes b = {0};
    cw_init(&cw, "sample.c");
    cw.minor = 7;
    cw_begin(&cw, 99); /* a record kind from the future, before known ones */
    cw_raw(&cw, "future", 6);
    cw_end(&cw);
    cw_unit(&cw, "sample.c", "/src", "clang 19 + ppw", 2, 1);
    write_main_func(&cw);
    cw_begin(&cw, 1234); /* and one between functions */
    cw_u(&cw, 42);
    cw_end(&cw);
    write_outlined_func(&cw);
    cw_begin(&cw, PPW_REC_GLOBAL);
    cw_str(&cw, "counter");
    cw_str(&cw, "counter");
    cw_str(&cw, "long");
    cw_str(&cw, "grid.c");
    cw_u(&cw, 3);
    cw_u(&cw, 777); /* a field appended by a newer minor version */
    cw_raw(&cw, "\xff\xff", 2);
    cw_end(&cw);
    cw_finish(&cw, &b);
    cw_free(&cw);

    struct ppw_static_graph *graph = NULL;
    struct ppw_err err;
    int rc = load_bytes(&b, &graph, &err);
    CHECK_INT(rc, 0);
    if (rc)
        fprintf(stderr, "  %s\n", err.message);
    if (graph)
        check_sample(graph);
    ppw_static_graph_free(graph);
    bytes_free(&b);
}

static void test_trailing_bytes_in_var(void)
{
    struct chunk_writer cw;
    struct bytes b = {0};
    begin_small(&cw);
    cw.minor = 3;
    cw_func(&cw, "f", "f", "small.c", 1, 0, "", 1, 0);
    cw_begin(&cw, 4242); /* unknown kinds inside a function do not end it */
    cw_end(&cw);
    cw_begin(&cw, PPW_REC_VAR);
    cw_u(&cw, 0);
    cw_str(&cw, "x");
    cw_u(&cw, PPW_VAR_LOCAL);
    for (int i = 0; i < 6; i++) /* type, decl_file, decl_line, parent, param, flags */
        cw_u(&cw, 0);
    cw_str(&cw, "");
    cw_u(&cw, 0);
    cw_u(&cw, 0);
    cw_raw(&cw, "\x85\x01\x02", 3); /* newer fields */
    cw_end(&cw);
    finish_small(&cw, &b);
    struct ppw_static_graph *graph = NULL;
    struct ppw_err err;
    CHECK_INT(load_bytes(&b, &graph, &err), 0);
    if (graph && graph->func_count == 1)
        CHECK_STR(graph->funcs[0].vars[0].name, "x");
    ppw_static_graph_free(graph);
    bytes_free(&b);
}

static void test_two_chunks_with_padding(void)
{
    struct bytes b = {0};
    bytes_zeros(&b, 3); /* padding may even come first */
    build_sample(&b, "sample.c");
    bytes_zeros(&b, 5);
    build_sample(&b, "other.c");
    bytes_zeros(&b, 8);
    struct ppw_static_graph *graph = NULL;
    struct ppw_err err;
    CHECK_INT(load_bytes(&b, &graph, &err), 0);
    if (graph) {
        CHECK_INT(graph->unit_count, 2);
        CHECK_INT(graph->func_count, 4);
        CHECK_INT(graph->funcs[3].unit, 1);
        CHECK_STR(graph->units[1].source, "other.c");
    }
    ppw_static_graph_free(graph);
    bytes_free(&b);
}

static void test_duplicate_chunk_loaded_once(void)
{
    struct bytes b = {0};
    build_sample(&b, "sample.c");
    bytes_zeros(&b, 4);
    build_sample(&b, "sample.c");
    struct ppw_static_graph *graph = NULL;
    struct ppw_err err;
    CHECK_INT(load_bytes(&b, &graph, &err), 0);
    if (graph) {
        CHECK_INT(graph->unit_count, 1);
        CHECK_INT(graph->func_count, 2);
        CHECK_INT(graph->global_count, 1);
    }
    ppw_static_graph_free(graph);
    bytes_free(&b);
}

static void test_empty_section(void)
{
    struct bytes b = {0};
    bytes_zeros(&b, 16);
    struct ppw_static_graph *graph = NULL;
    struct ppw_err err;
    CHECK_INT(load_bytes(&b, &graph, &err), 0);
    if (graph)
        CHECK_INT(graph->func_count, 0);
    ppw_static_graph_free(graph);
    bytes_free(&b);
}

/* ---- chunk-level corruption ---- */

static void test_truncated_chunk(void)
{
    struct bytes b = {0};
    build_sample(&b, "sample.c");
    b.len -= 10;
    EXPECT_ERROR(&b, PPW_ECORRUPT, "truncated chunk");
    b.len = 6;
    EXPECT_ERROR(&b, PPW_ECORRUPT, "truncated chunk header");
    b.len = 20;
    EXPECT_ERROR(&b, PPW_ECORRUPT, "truncated chunk header");
    bytes_free(&b);
}

/* Cutting the payload anywhere, even with a consistent header and hash,
 * must be caught by the record walk. */
static void test_truncated_at_every_length(void)
{
    struct bytes b = {0};
    build_sample(&b, "sample.c");
    size_t full = b.len;
    unsigned char *copy = malloc(full);
    for (size_t len = PPW_STATIC_HEADER_SIZE; len < full; len++) {
        memcpy(copy, b.data, full);
        chunk_rehash(copy, (uint32_t)len);
        struct bytes cut = {copy, len, full};
        struct ppw_static_graph *graph = NULL;
        struct ppw_err err;
        int rc = load_bytes(&cut, &graph, &err);
        if (rc != PPW_ECORRUPT || !err.message[0] || err.offset < BASE)
            FAIL_AT("cut at %zu: rc=%d offset=%lld \"%s\"", len, rc, (long long)err.offset,
                    err.message);
        ppw_static_graph_free(graph);
    }
    free(copy);
    bytes_free(&b);
}

static void test_hash_mismatch(void)
{
    struct bytes b = {0};
    build_sample(&b, "sample.c");
    b.data[b.len / 2] ^= 0x10;
    EXPECT_ERROR(&b, PPW_ECORRUPT, "hash mismatch");
    bytes_free(&b);
}

static void test_bad_magic(void)
{
    struct bytes b = {0};
    build_sample(&b, "sample.c");
    b.data[1] = 'Q';
    EXPECT_ERROR(&b, PPW_ECORRUPT, "bad chunk magic");
    struct ppw_err err;
    struct ppw_static_graph *graph;
    load_bytes(&b, &graph, &err);
    CHECK_INT(err.offset, BASE);
    bytes_free(&b);
}

static void test_newer_major_version(void)
{
    struct chunk_writer cw;
    struct bytes b = {0};
    begin_small(&cw);
    cw.major = 2;
    cw.minor = 3;
    finish_small(&cw, &b);
    EXPECT_ERROR(&b, PPW_EVERSION, "version 2.3");
    EXPECT_ERROR(&b, PPW_EVERSION, "reads version 1.x");
    bytes_free(&b);
}

static void test_bad_header_size(void)
{
    struct bytes b = {0};
    build_sample(&b, "sample.c");
    b.data[8] = 39;
    EXPECT_ERROR(&b, PPW_ECORRUPT, "header_size 39");
    bytes_free(&b);
}

static void test_record_count_mismatch(void)
{
    struct bytes b = {0};
    build_sample(&b, "sample.c");
    b.data[24]++;
    EXPECT_ERROR(&b, PPW_ECORRUPT, "announces");
    bytes_free(&b);
}

static void test_record_size_past_chunk(void)
{
    struct chunk_writer cw;
    struct bytes b = {0};
    begin_small(&cw);
    size_t record_start = cw.records.len;
    cw_global(&cw, "x", "x", "int", "small.c", 1);
    size_t size_field = cw_chunk_offset(&cw, record_start + 4);
    finish_small(&cw, &b);
    b.data[size_field] = 200;
    chunk_rehash(b.data, 0);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "has size 200");
    bytes_free(&b);
}

static void test_first_record_not_strtab(void)
{
    struct bytes b = {0};
    build_sample(&b, "sample.c");
    b.data[PPW_STATIC_HEADER_SIZE] = PPW_REC_UNIT; /* STRTAB's kind */
    chunk_rehash(b.data, 0);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "not STRTAB");
    bytes_free(&b);
}

/* ---- record-level corruption ---- */

static void test_string_offset_out_of_range(void)
{
    struct chunk_writer cw;
    struct bytes b = {0};
    begin_small(&cw);
    cw_begin(&cw, PPW_REC_GLOBAL);
    size_t mark = cw_mark(&cw);
    cw_u(&cw, 9999); /* name */
    cw_u(&cw, 0);
    cw_u(&cw, 0);
    cw_u(&cw, 0);
    cw_u(&cw, 1);
    cw_end(&cw);
    size_t expected = BASE + cw_chunk_offset(&cw, mark);
    finish_small(&cw, &b);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "GLOBAL name: string offset 9999 is outside");
    struct ppw_err err;
    struct ppw_static_graph *graph;
    load_bytes(&b, &graph, &err);
    CHECK_INT(err.offset, expected);
    bytes_free(&b);
}

static void test_string_not_terminated(void)
{
    struct chunk_writer cw;
    struct bytes b = {0};
    begin_small(&cw);
    cw_global(&cw, "x", "", "", "", 1);
    size_t strtab_end = PPW_STATIC_HEADER_SIZE + 8 + cw.strtab.len;
    finish_small(&cw, &b);
    b.data[strtab_end - 1] = 'y'; /* the NUL after "x", the last string */
    chunk_rehash(b.data, 0);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "not NUL-terminated");
    bytes_free(&b);
}

static void test_var_parent_out_of_range(void)
{
    struct chunk_writer cw;
    struct bytes b = {0};
    begin_small(&cw);
    cw_func(&cw, "f", "f", "small.c", 1, 0, "", 2, 0);
    cw_var(&cw, 0, &(struct tvar){.name = "a", .kind = PPW_VAR_LOCAL});
    cw_var(&cw, 1, &(struct tvar){.name = "a.b", .kind = PPW_VAR_FIELD, .parent = 3});
    finish_small(&cw, &b);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "VAR parent: 3 is out of range");
    bytes_free(&b);
}

static void test_var_parent_cycle(void)
{
    struct chunk_writer cw;
    struct bytes b = {0};
    begin_small(&cw);
    cw_func(&cw, "f", "f", "small.c", 1, 0, "", 3, 0);
    cw_var(&cw, 0, &(struct tvar){.name = "a", .kind = PPW_VAR_LOCAL});
    cw_var(&cw, 1, &(struct tvar){.name = "b", .kind = PPW_VAR_FIELD, .parent = 3});
    cw_var(&cw, 2, &(struct tvar){.name = "c", .kind = PPW_VAR_FIELD, .parent = 2});
    finish_small(&cw, &b);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "its own ancestor");
    bytes_free(&b);
}

static void test_var_id_out_of_order(void)
{
    struct chunk_writer cw;
    struct bytes b = {0};
    begin_small(&cw);
    cw_func(&cw, "f", "f", "small.c", 1, 0, "", 2, 0);
    cw_var(&cw, 1, &(struct tvar){.name = "a", .kind = PPW_VAR_LOCAL});
    cw_var(&cw, 0, &(struct tvar){.name = "b", .kind = PPW_VAR_LOCAL});
    finish_small(&cw, &b);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "VAR id 1 out of order");
    bytes_free(&b);
}

static void test_var_bad_kind(void)
{
    struct chunk_writer cw;
    struct bytes b = {0};
    begin_small(&cw);
    cw_func(&cw, "f", "f", "small.c", 1, 0, "", 1, 0);
    cw_var(&cw, 0, &(struct tvar){.name = "a", .kind = 9});
    finish_small(&cw, &b);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "VAR kind: 9 is not a known value");
    bytes_free(&b);
}

static void test_func_announces_more_vars(void)
{
    struct chunk_writer cw;
    struct bytes b = {0};
    begin_small(&cw);
    cw_func(&cw, "f", "f", "small.c", 1, 0, "", 3, 0);
    cw_var(&cw, 0, &(struct tvar){.name = "a", .kind = PPW_VAR_LOCAL});
    cw_var(&cw, 1, &(struct tvar){.name = "b", .kind = PPW_VAR_LOCAL});
    cw_begin(&cw, 77); /* room enough that only the count check can catch it */
    bytes_zeros(&cw.current, 200);
    cw_end(&cw);
    finish_small(&cw, &b);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "FUNC 'f' announced 3 variables and 0 calls, but 2 and 0");
    bytes_free(&b);
}

static void test_func_gets_extra_var(void)
{
    struct chunk_writer cw;
    struct bytes b = {0};
    begin_small(&cw);
    cw_func(&cw, "f", "f", "small.c", 1, 0, "", 1, 0);
    cw_var(&cw, 0, &(struct tvar){.name = "a", .kind = PPW_VAR_LOCAL});
    cw_var(&cw, 1, &(struct tvar){.name = "b", .kind = PPW_VAR_LOCAL});
    finish_small(&cw, &b);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "this VAR is one more");
    bytes_free(&b);
}

static void test_var_outside_func(void)
{
    struct chunk_writer cw;
    struct bytes b = {0};
    begin_small(&cw);
    cw_var(&cw, 0, &(struct tvar){.name = "a", .kind = PPW_VAR_LOCAL});
    finish_small(&cw, &b);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "VAR record outside a FUNC");
    bytes_free(&b);
}

static void test_huge_counts(void)
{
    struct chunk_writer cw;
    struct bytes b = {0};
    begin_small(&cw);
    cw_func(&cw, "f", "f", "small.c", 1, 0, "", UINT64_C(1) << 62, 0);
    finish_small(&cw, &b);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "more than the");
    bytes_free(&b);

    begin_small(&cw);
    cw_func(&cw, "f", "f", "small.c", 1, 0, "", 1, 0);
    cw_begin(&cw, PPW_REC_VAR);
    cw_u(&cw, 0);
    cw_str(&cw, "a");
    cw_u(&cw, PPW_VAR_LOCAL);
    for (int i = 0; i < 7; i++) /* type .. key */
        cw_u(&cw, 0);
    cw_u(&cw, UINT64_MAX); /* inclusive count */
    cw_end(&cw);
    finish_small(&cw, &b);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "locations cannot fit");
    bytes_free(&b);

    begin_small(&cw);
    cw_func(&cw, "f", "f", "small.c", 1, 0, "", 0, 1);
    cw_begin(&cw, PPW_REC_CALL);
    for (int i = 0; i < 6; i++) /* id, line, col, callee, kind, flags */
        cw_u(&cw, i == 4 ? PPW_CALL_DIRECT : 0);
    cw_u(&cw, UINT64_C(1) << 40);
    cw_end(&cw);
    finish_small(&cw, &b);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "binding_count");
    bytes_free(&b);
}

static void test_leb_overflow(void)
{
    struct chunk_writer cw;
    struct bytes b = {0};
    begin_small(&cw);
    cw_begin(&cw, PPW_REC_GLOBAL);
    cw_raw(&cw, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
    cw_end(&cw);
    finish_small(&cw, &b);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "does not fit in 64 bits");
    bytes_free(&b);

    begin_small(&cw);
    cw_begin(&cw, PPW_REC_GLOBAL);
    cw_raw(&cw, "\x80\x80", 2); /* runs off the end of the record */
    cw_end(&cw);
    finish_small(&cw, &b);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "runs past the end");
    bytes_free(&b);
}

static void test_binding_var_out_of_range(void)
{
    struct chunk_writer cw;
    struct bytes b = {0};
    begin_small(&cw);
    cw_func(&cw, "f", "f", "small.c", 1, 0, "", 1, 1);
    cw_var(&cw, 0, &(struct tvar){.name = "a", .kind = PPW_VAR_LOCAL});
    const struct tbinding bad[] = {{2, 0, PPW_BIND_REF, ""}};
    cw_call(&cw, 0, 1, 1, "g", PPW_CALL_DIRECT, bad, 1);
    finish_small(&cw, &b);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "CALL binding var: 2 is out of range");
    bytes_free(&b);
}

static void test_binding_formal_out_of_range(void)
{
    struct chunk_writer cw;
    struct bytes b = {0};
    begin_small(&cw);
    cw_func(&cw, "f", "f", "small.c", 1, 0, "", 0, 1);
    const struct tbinding bad[] = {{0, -2, PPW_BIND_REF, ""}};
    cw_call(&cw, 0, 1, 1, "g", PPW_CALL_DIRECT, bad, 1);
    finish_small(&cw, &b);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "formal: -2 is out of range");
    bytes_free(&b);
}

/* ---- ACCESS (format 1.1) ---- */

/* A 1.0 chunk has no ACCESS records: it reads, and says which minor it is. */
static void test_version_1_0_without_accesses(void)
{
    struct chunk_writer cw;
    struct bytes b = {0};
    begin_small(&cw);
    cw.minor = 0;
    cw_func(&cw, "f", "f", "small.c", 1, PPW_FUNC_ANALYSED, "", 1, 0);
    cw_var(&cw, 0, &(struct tvar){.name = "a", .kind = PPW_VAR_LOCAL});
    finish_small(&cw, &b);
    struct ppw_static_graph *graph = NULL;
    struct ppw_err err;
    CHECK_INT(load_bytes(&b, &graph, &err), 0);
    if (graph) {
        CHECK_INT(graph->units[0].minor, 0);
        CHECK_INT(graph->funcs[0].access_count, 0);
        CHECK(graph->funcs[0].accesses == NULL);
    }
    ppw_static_graph_free(graph);
    bytes_free(&b);
}

/* f with one variable, then an ACCESS record the test completes. */
static void begin_access(struct chunk_writer *cw)
{
    begin_small(cw);
    cw_func(cw, "f", "f", "small.c", 1, PPW_FUNC_ANALYSED, "", 1, 0);
    cw_var(cw, 0, &(struct tvar){.name = "a", .kind = PPW_VAR_LOCAL});
}

static void test_access_errors(void)
{
    struct chunk_writer cw;
    struct bytes b = {0};
    const struct taccess one = {"", 3, 4, 0, 1, 0};

    begin_small(&cw);
    cw_access(&cw, &one, 1);
    finish_small(&cw, &b);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "ACCESS record outside a FUNC");
    bytes_free(&b);

    begin_access(&cw);
    cw_access(&cw, &one, 1);
    cw_access(&cw, &one, 1);
    finish_small(&cw, &b);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "FUNC 'f' has a second ACCESS record");
    bytes_free(&b);

    begin_access(&cw);
    const struct taccess bad_var = {"", 3, 4, 1, 1, 0};
    cw_access(&cw, &bad_var, 1);
    finish_small(&cw, &b);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "ACCESS names variable 1 of 1 read so far");
    bytes_free(&b);

    begin_access(&cw);
    const struct taccess nothing = {"", 3, 4, 0, 0, 0};
    cw_access(&cw, &nothing, 1);
    finish_small(&cw, &b);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "ACCESS entry with no read and no write");
    bytes_free(&b);

    begin_access(&cw);
    cw_begin(&cw, PPW_REC_ACCESS);
    cw_u(&cw, 1000000); /* locations that cannot fit */
    cw_u(&cw, 0);
    cw_end(&cw);
    finish_small(&cw, &b);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "ACCESS location_count 1000000 cannot fit");
    bytes_free(&b);

    begin_access(&cw);
    cw_begin(&cw, PPW_REC_ACCESS);
    cw_u(&cw, 1);
    cw_str(&cw, "");
    cw_u(&cw, 3);
    cw_u(&cw, 4);
    cw_u(&cw, 0); /* a location without entries */
    cw_end(&cw);
    finish_small(&cw, &b);
    EXPECT_ERROR(&b, PPW_ECORRUPT, "ACCESS entry_count 0 is 0 or cannot fit");
    bytes_free(&b);
}

/* Every single-byte change, with the hash fixed up so parsing goes deep:
 * the result is a graph or an error with a message, never a crash. */
static void test_mutations_never_crash(void)
{
    static const unsigned char flips[] = {0x01, 0x80, 0xff, 0x7f};
    struct bytes b = {0};
    build_sample(&b, "sample.c");
    unsigned char *copy = malloc(b.len);
    int loaded = 0, rejected = 0;
    for (size_t at = 0; at < b.len; at++) {
        for (size_t f = 0; f < sizeof flips; f++) {
            memcpy(copy, b.data, b.len);
            copy[at] ^= flips[f];
            if (at >= PPW_STATIC_HEADER_SIZE)
                chunk_rehash(copy, 0);
            struct bytes mutated = {copy, b.len, b.len};
            struct ppw_static_graph *graph = NULL;
            struct ppw_err err;
            int rc = load_bytes(&mutated, &graph, &err);
            if (rc == 0) {
                loaded++;
                CHECK(graph != NULL);
            } else {
                rejected++;
                if (rc > 0 || graph != NULL || !err.message[0])
                    FAIL_AT("byte %zu ^ 0x%02x: rc=%d without a message", at, flips[f], rc);
            }
            ppw_static_graph_free(graph);
        }
    }
    CHECK(loaded > 0 && rejected > 0);
    free(copy);
    bytes_free(&b);
}

/* ---- files ---- */

static void test_not_elf(void)
{
    char *path = temp_path("not-elf.txt");
    FILE *f = fopen(path, "w");
    fputs("hello, not an ELF file\n", f);
    fclose(f);
    struct ppw_static_graph *graph = NULL;
    struct ppw_err err;
    CHECK_INT(ppw_static_graph_load(path, &graph, &err), PPW_ENOTELF);
    CHECK_CONTAINS(err.message, "not an ELF file");
    CHECK(graph == NULL);
    free(path);
}

static void test_missing_file(void)
{
    struct ppw_static_graph *graph = NULL;
    struct ppw_err err;
    CHECK_INT(ppw_static_graph_load("/nonexistent/ppw/a.out", &graph, &err), PPW_EIO);
    CHECK_CONTAINS(err.message, "/nonexistent/ppw/a.out: No such file");
}

static void test_elf_without_section(void)
{
    unsigned char note[64];
    size_t note_size = make_build_id_note(note, 1);
    const struct test_section sections[] = {{".note.gnu.build-id", SHT_NOTE, note, note_size}};
    char *path = temp_path("no-section.o");
    CHECK_INT(write_test_elf(path, sections, 1), 0);
    struct ppw_static_graph *graph = NULL;
    struct ppw_err err;
    CHECK_INT(ppw_static_graph_load(path, &graph, &err), PPW_ENOSECTION);
    CHECK_CONTAINS(err.message,
                   "no .ppw.blame section (not built with ppw-cc or -fpass-plugin=ppw.so)");
    free(path);
}

static void test_corrupt_section_in_elf(void)
{
    struct bytes b = {0};
    build_sample(&b, "sample.c");
    b.data[b.len - 1] ^= 1;
    const struct test_section sections[] = {{PPW_STATIC_SECTION, SHT_PROGBITS, b.data, b.len}};
    char *path = temp_path("corrupt.o");
    CHECK_INT(write_test_elf(path, sections, 1), 0);
    struct ppw_static_graph *graph = NULL;
    struct ppw_err err;
    CHECK_INT(ppw_static_graph_load(path, &graph, &err), PPW_ECORRUPT);
    CHECK_CONTAINS(err.message, path);
    CHECK(err.offset > PPW_STATIC_HEADER_SIZE); /* a file offset, past the ELF header */
    free(path);
    bytes_free(&b);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        workdir = argv[1];
    RUN(test_roundtrip_in_memory);
    RUN(test_roundtrip_elf);
    RUN(test_find_by_linkage_name);
    RUN(test_unknown_records_and_trailing_bytes);
    RUN(test_trailing_bytes_in_var);
    RUN(test_two_chunks_with_padding);
    RUN(test_duplicate_chunk_loaded_once);
    RUN(test_empty_section);
    RUN(test_truncated_chunk);
    RUN(test_truncated_at_every_length);
    RUN(test_hash_mismatch);
    RUN(test_bad_magic);
    RUN(test_newer_major_version);
    RUN(test_bad_header_size);
    RUN(test_record_count_mismatch);
    RUN(test_record_size_past_chunk);
    RUN(test_first_record_not_strtab);
    RUN(test_string_offset_out_of_range);
    RUN(test_string_not_terminated);
    RUN(test_var_parent_out_of_range);
    RUN(test_var_parent_cycle);
    RUN(test_var_id_out_of_order);
    RUN(test_var_bad_kind);
    RUN(test_func_announces_more_vars);
    RUN(test_func_gets_extra_var);
    RUN(test_var_outside_func);
    RUN(test_huge_counts);
    RUN(test_leb_overflow);
    RUN(test_binding_var_out_of_range);
    RUN(test_binding_formal_out_of_range);
    RUN(test_version_1_0_without_accesses);
    RUN(test_access_errors);
    RUN(test_mutations_never_crash);
    RUN(test_not_elf);
    RUN(test_missing_file);
    RUN(test_elf_without_section);
    RUN(test_corrupt_section_in_elf);
    return harness_exit();
}
