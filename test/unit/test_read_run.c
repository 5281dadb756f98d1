/* Unit tests of blame/read_run.c and blame/symbols.c: a synthetic run read
 * back field by field, spawn chains, symbolization against this program's
 * own symbol table, and every kind of damage giving one error line, never a
 * crash (run under ASan/UBSan with -DPPW_SANITIZE=ON).
 *
 * usage: test_read_run [WORKDIR]   (run directories are written there) */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_writer.h"
#include "harness.h"
#include "ppw/gasp_events.h"
#include "read_elf.h"
#include "read_run.h"
#include "run_writer.h"
#include "symbols.h"

static const char *workdir = ".";
static char dir[1024]; /* the run directory of the current case */

/* ---- fixtures ---- */

static void remove_dir(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *de;
    char file[1300];
    while (d && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            snprintf(file, sizeof file, "%s/%s", path, de->d_name), unlink(file);
    }
    if (d)
        closedir(d);
    rmdir(path);
}

/* Writes sr into a fresh directory named after name (kept for inspection). */
static void write_run(const struct sample_run *sr, const char *name)
{
    snprintf(dir, sizeof dir, "%s/run-%s", workdir, name);
    remove_dir(dir);
    if (sample_run_write(sr, dir) != 0)
        FAIL_AT("cannot write %s", dir);
}

static char *file_path(const char *name)
{
    static char path[1300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

static void write_bytes(const char *name, const unsigned char *data, size_t len)
{
    FILE *f = fopen(file_path(name), "wb");
    if (!f || fwrite(data, 1, len, f) != len)
        FAIL_AT("cannot write %s", name);
    if (f)
        fclose(f);
}

#define EXPECT_LOAD_ERROR(code, needle) expect_load_error((code), (needle), __LINE__)

static void expect_load_error(int code, const char *needle, int line)
{
    struct ppw_run *run = (void *)1;
    struct ppw_err err;
    int rc = ppw_run_load(dir, &run, &err);
    if (rc != code || err.code != code || run != NULL || !strstr(err.message, needle) ||
        strchr(err.message, '\n') || strncmp(err.message, dir, strlen(dir)) != 0)
        FAIL_AT("(case at line %d) rc=%d code=%d message=\"%s\", expected %d with \"%s\"", line, rc,
                err.code, err.message, code, needle);
    ppw_run_free(rc ? NULL : run);
}

static struct ppw_run *load_ok(int line)
{
    struct ppw_run *run = NULL;
    struct ppw_err err;
    if (ppw_run_load(dir, &run, &err) != 0)
        FAIL_AT("(case at line %d) %s: %s", line, dir, err.message);
    return run;
}
#define LOAD_OK() load_ok(__LINE__)
/* The current format version as the reader names it, "1.7". */
#define VERSION_TEXT_(major, minor) #major "." #minor
#define VERSION_TEXT(major, minor) VERSION_TEXT_(major, minor)
#define CURRENT VERSION_TEXT(PPW_RUN_MAJOR, PPW_RUN_MINOR)

/* Builds the sample run; on failure the test is failed and false returned. */
static bool build(struct sample_run *sr, unsigned flags)
{
    if (sample_run_build(sr, flags) == 0)
        return true;
    FAIL_AT("sample_run_build failed");
    sample_run_free(sr);
    return false;
}

/* The file offset of the n-th record (from 0) of f. */
static size_t record_at(const struct run_file *f, int n)
{
    size_t pos = PPW_RUN_HEADER_SIZE;
    for (; n > 0; n--) {
        uint32_t size;
        memcpy(&size, f->b.data + pos + 4, 4);
        pos += size;
    }
    return pos;
}

/* ---- a valid run ---- */

static void check_process(const struct ppw_run *run, const struct sample_run *sr)
{
    CHECK_INT(run->pid, 4242);
    CHECK_INT(run->file.major, 1);
    CHECK(run->file.flags & PPW_FILE_CLOSED);
    CHECK_INT(strlen(run->build_id), 2 * sr->exe.build_id_size);
    CHECK(run->has_info && run->has_metric && run->has_config && run->has_calib);
    CHECK_STR(run->info.host, "testhost");
    CHECK_STR(run->info.exe, sr->exe.path);
    CHECK_STR(run->info.cwd, "/tmp");
    CHECK_INT(run->info.start_real_ns, 1700000000000000000ull);
    CHECK_INT(run->argc, 3);
    if (run->argc == 3)
        CHECK_STR(run->argv[2], "10");
    CHECK_INT(run->env_count, 1);
    CHECK_INT(run->metric.source, PPW_METRIC_POSIX_CPU_TIMER);
    CHECK_INT(run->metric.period, 1000000);
    CHECK_STR(run->metric.reason, "PAPI not available");
    CHECK_INT(run->config.callpath_depth, 2);
    CHECK(run->calib.pair_ns == 100.0 && run->calib.inner_ns == 30.0);
    CHECK(run->calib.throttled_pair_ns == 10.0 && run->calib.handler_ns == 1500.0);
    CHECK_INT(run->module_count, 4);
    if (run->module_count == 4) {
        CHECK_STR(run->modules[0].path, sr->exe.path);
        CHECK_INT(run->modules[0].flags, PPW_MODULE_EXE);
        CHECK_INT(run->modules[2].flags, PPW_MODULE_PARALLEL);
        CHECK(!run->modules[0].unloaded && run->modules[3].unloaded);
    }
    CHECK(run->finished);
    CHECK_INT(run->finish_threads, 2);
    CHECK_INT(run->note_count, 1);
    if (run->note_count)
        CHECK_STR(run->notes[0].message, "sample buffer grew");
    CHECK_INT(run->region_count, 4);
    const struct ppw_run_region *malloc_region = ppw_run_find_region(run, 3);
    CHECK(malloc_region && malloc_region->kind == PPW_REGION_CALLSITE);
    if (malloc_region) {
        CHECK_STR(malloc_region->name, "malloc");
        CHECK_STR(malloc_region->file, "prog.c");
        CHECK_INT(malloc_region->line, 22);
    }
    CHECK(ppw_run_find_region(run, 5) == NULL);
}

static void check_threads(const struct ppw_run *run, const struct sample_run *sr)
{
    CHECK_INT(run->thread_count, 2);
    if (run->thread_count != 2)
        return;
    const struct ppw_run_thread *t0 = &run->threads[0], *t1 = &run->threads[1];
    CHECK(t0->has_begin && t0->ended && t1->has_begin && t1->ended);
    CHECK_INT(t0->parent, UINT32_MAX);
    CHECK_INT(t1->parent, 0);
    CHECK_INT(t1->root_tag, 1);
    CHECK_INT(t1->start_routine, sr->at.worker);
    CHECK_INT(t1->cpu_ns, 7000);
    CHECK_INT(t1->end_flags, PPW_THREAD_END_AT_EXIT);
    CHECK_INT(t0->end_flags, 0);
    CHECK_INT(t0->handler_ns, 12345);
    CHECK_INT(t1->sample_count, 3);
    CHECK_INT(t0->stack_count, 2);
    CHECK_INT(t0->sample_count, 3);
    if (t0->sample_count == 3) {
        CHECK(t0->samples[2].stack == &t0->stacks[0]); /* stack 1, named again */
        CHECK_INT(t0->samples[1].stack->flags, PPW_STACK_LEAF_PC | PPW_STACK_TRUNCATED);
        CHECK_INT(t0->samples[0].stack->frames[2], sr->at.main + 1);
        CHECK_INT(t0->samples[0].weight, 1000000);
    }
    CHECK_INT(t1->dropped[PPW_DROP_NOT_READY], 2);
    CHECK_INT(t1->ring_full, 4);
    CHECK_INT(t1->samples[0].spawn_tag, 3);
    CHECK(t0->samples_file.present && t1->profile_file.present);
}

static void check_events(const struct ppw_run *run)
{
    CHECK_INT(run->spawn_count, 4);
    for (size_t i = 0; i < run->spawn_count; i++)
        CHECK_INT(run->spawns[i].tag, i + 1);
    const struct ppw_run_spawn *s3 = ppw_run_find_spawn(run, 3);
    CHECK(s3 && s3->parent_tag == 2 && s3->kind == PPW_SPAWN_OMP_TASK && s3->creator == 1);
    const struct ppw_run_thread *t0 = ppw_run_find_thread(run, 0);
    CHECK(t0 && t0->trace_count == 5);
    if (!t0 || t0->trace_count != 5)
        return;
    const struct ppw_run_trace *end = &t0->traces[2], *user = &t0->traces[3];
    CHECK_INT(end->evttype, GASP_END);
    CHECK_INT(end->region->id, 3);
    CHECK_INT(end->nargs, 2);
    CHECK_INT(end->args[1], 0x1234);
    CHECK(end->description == NULL);
    CHECK_INT(user->nargs, 1);
    CHECK_STR(user->description, "phase 1");
    CHECK(ppw_run_tag_name(user->region->tag) == NULL); /* a user event's tag */
    CHECK_STR(ppw_run_tag_name(end->region->tag), "GASP_C_MALLOC");
    CHECK_STR(ppw_run_op_name(end->region->op), "memory alloc");
}

static void check_profiles(const struct ppw_run *run)
{
    const struct ppw_run_thread *t0 = ppw_run_find_thread(run, 0);
    const struct ppw_run_thread *t1 = ppw_run_find_thread(run, 1);
    CHECK(t0 && t1 && t0->timer_count == 3 && t1->timer_count == 2 && t1->throttle_count == 1);
    if (!t0 || !t1 || t0->timer_count != 3 || t1->throttle_count != 1)
        return;
    const struct ppw_run_timer *main_t = &t0->timers[0], *work = &t0->timers[1];
    CHECK_INT(main_t->depth, 1);
    CHECK_INT(main_t->path[0], 1);
    CHECK_INT(main_t->probes_throttled, 500);
    CHECK_INT(main_t->flags, 0);
    CHECK_INT(work->flags, PPW_TIMER_UNWOUND);
    CHECK_INT(work->depth, 2);
    CHECK_INT(work->path[1], 1);
    CHECK(work->excl_sumsq_ns2 == 5e8);
    CHECK_INT(t1->throttles[0].region, 2);
    CHECK_INT(t1->throttles[0].calls_after, 52000);
}

static void test_valid_run(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    write_run(&sr, "valid");
    struct ppw_run *run = LOAD_OK();
    if (run) {
        check_process(run, &sr);
        check_threads(run, &sr);
        check_events(run);
        check_profiles(run);
    }
    ppw_run_free(run);
    sample_run_free(&sr);
}

/* ---- spawn chains ---- */

static void expect_chain(const struct ppw_run *run, uint32_t thread, uint32_t tag,
                         const uint32_t *tags, size_t n, int line)
{
    const struct ppw_run_spawn *chain[8];
    size_t count = 99;
    struct ppw_err err;
    int rc = ppw_run_spawn_chain(run, thread, tag, chain, 8, &count, &err);
    bool same = rc == 0 && count == n;
    for (size_t i = 0; same && i < n; i++)
        same = chain[i]->tag == tags[i];
    if (!same)
        FAIL_AT("(line %d) chain of thread %u tag %u: rc=%d count=%zu %s", line, thread, tag, rc,
                count, rc ? err.message : "");
}

static void test_spawn_chain(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    write_run(&sr, "chain");
    struct ppw_run *run = LOAD_OK();
    if (run) {
        expect_chain(run, 1, 3, (const uint32_t[]){3, 2, 1}, 3, __LINE__); /* depth 3 */
        expect_chain(run, 1, 0, (const uint32_t[]){1}, 1, __LINE__);       /* thread 1's root */
        expect_chain(run, 0, 0, NULL, 0, __LINE__);                        /* main's root */
        expect_chain(run, 1, 4, (const uint32_t[]){4, 1}, 2,
                     __LINE__); /* parent 0: creator's root */
        const struct ppw_run_spawn *chain[2];
        size_t count;
        struct ppw_err err;
        CHECK_INT(ppw_run_spawn_chain(run, 1, 77, chain, 2, &count, &err), PPW_ECORRUPT);
        CHECK_CONTAINS(err.message, "spawn tag 77 is not defined in any events file");
        CHECK_INT(ppw_run_spawn_chain(run, 1, 3, chain, 2, &count, &err), PPW_ENOMEM);
        CHECK_INT(ppw_run_spawn_chain(run, 9, 0, chain, 2, &count, &err), PPW_ECORRUPT);
        CHECK_CONTAINS(err.message, "thread 9 has no THREAD record");
    }
    ppw_run_free(run);
    sample_run_free(&sr);
}

/* A loop the reader cannot see (it is only built by hand) still ends. */
static void test_spawn_chain_loop_by_hand(void)
{
    struct ppw_run_spawn spawns[2] = {{.tag = 1, .parent_tag = 2}, {.tag = 2, .parent_tag = 1}};
    struct ppw_run run = {.dir = "hand", .spawns = spawns, .spawn_count = 2};
    const struct ppw_run_spawn *chain[8];
    size_t count;
    struct ppw_err err;
    CHECK_INT(ppw_run_spawn_chain(&run, 0, 1, chain, 8, &count, &err), PPW_ECORRUPT);
    CHECK_CONTAINS(err.message, "loops");
}

static void rebuild_events(struct sample_run *sr, int thread, const uint32_t (*spawns)[3], size_t n)
{
    uint64_t frame = sr->at.worker + 1;
    rf_free(&sr->events[thread]);
    rf_init(&sr->events[thread], PPW_FILE_EVENTS, (uint32_t)thread, sr->pid, sr->exe.build_id,
            sr->exe.build_id_size);
    for (size_t i = 0; i < n; i++) {
        struct ppw_rec_spawn s = {
            spawns[i][0], spawns[i][1], PPW_SPAWN_OMP_TASK, spawns[i][2], 1, 0, 0};
        rf_record(&sr->events[thread], PPW_EVT_SPAWN, &s, sizeof s, &frame, 8, NULL);
    }
    rf_finish(&sr->events[thread]);
}

static void test_spawn_cycle(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    /* 2 -> 3 -> 2 */
    rebuild_events(&sr, 1, (const uint32_t[][3]){{2, 3, 1}, {3, 2, 1}}, 2);
    write_run(&sr, "cycle");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "loops back");
    /* its own parent */
    rebuild_events(&sr, 1, (const uint32_t[][3]){{5, 5, 1}}, 1);
    write_run(&sr, "cycle-self");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "loops back to tag 5");
    /* through a root tag: 6 (parent 0, by thread 1) -> thread 1's root tag 1 -> 1's parent 6 */
    rebuild_events(&sr, 0, (const uint32_t[][3]){{1, 6, 0}}, 1);
    rebuild_events(&sr, 1, (const uint32_t[][3]){{6, 0, 1}}, 1);
    write_run(&sr, "cycle-root");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "loops back");
    sample_run_free(&sr);
}

static void test_spawn_defined_twice(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    /* thread 1 defines tag 1 again, the same way: fine */
    uint64_t frames[] = {sr.at.spawn + 1, sr.at.main + 1, sr.at.libc_start_main + 1};
    struct ppw_rec_spawn again = {1, 0, PPW_SPAWN_PTHREAD, 1, 3, 0, 0};
    size_t at =
        rf_record(&sr.events[1], PPW_EVT_SPAWN, &again, sizeof again, frames, sizeof frames, NULL);
    rf_finish(&sr.events[1]);
    write_run(&sr, "twice-same");
    struct ppw_run *run = LOAD_OK();
    CHECK(run && run->spawn_count == 4);
    ppw_run_free(run);
    /* ... and differently */
    sr.events[1].b.data[at + 8 + sizeof again] ^= 0x10; /* its first frame */
    write_run(&sr, "twice-different");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "tag 1 is defined twice, differently");
    sample_run_free(&sr);
}

/* ---- symbolization ---- */

static void expect_function(struct ppw_symbols *syms, uint64_t pc, bool exact, const char *name,
                            int line)
{
    struct ppw_symbol sym;
    ppw_symbols_lookup(syms, pc, exact, &sym);
    if (!sym.function || strcmp(sym.function, name) != 0 || !sym.module ||
        sym.offset != pc - sym.module->load_bias)
        FAIL_AT("(line %d) 0x%llx is in %s, expected %s", line, (unsigned long long)pc,
                sym.function ? sym.function : "(null)", name);
}

#if defined(__x86_64__) && defined(__linux__)
/* One function with two names, as libppw's __kmpc_fork_call and its hidden
 * alias ppw_fork_entry: the exported name must win, though the local one
 * has fewer underscores. */
__asm__(".text\n"
        ".globl __run_fixture_export\n"
        ".globl run_fixture_alias\n"
        ".hidden run_fixture_alias\n"
        ".type __run_fixture_export,@function\n"
        ".type run_fixture_alias,@function\n"
        "__run_fixture_export:\n"
        "run_fixture_alias:\n"
        "  ret\n"
        ".size __run_fixture_export, .-__run_fixture_export\n"
        ".size run_fixture_alias, .-run_fixture_alias\n");
__attribute__((visibility("hidden"))) void run_fixture_alias(void);
#define HAVE_ALIAS_FIXTURE 1
#else
#define HAVE_ALIAS_FIXTURE 0
#endif

static void test_symbols(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    write_run(&sr, "symbols");
    struct ppw_run *run = LOAD_OK();
    struct ppw_symbols *syms = NULL;
    struct ppw_err err;
    if (run && ppw_symbols_new(run, NULL, &syms, &err) == 0) {
        const struct sample_addrs *a = &sr.at;
        expect_function(syms, a->leaf, true, "run_fixture_leaf", __LINE__);
        expect_function(syms, a->compute + 1, false, "run_fixture_compute", __LINE__);
        expect_function(syms, a->main + 1, false, "main", __LINE__);
        expect_function(syms, a->libc_start_main + 1, false, "__libc_start_main", __LINE__);
        expect_function(syms, a->clone + 1, false, "clone", __LINE__);
#if HAVE_ALIAS_FIXTURE
        expect_function(syms, (uintptr_t)run_fixture_alias, true, "__run_fixture_export", __LINE__);
#endif
        /* a return address just past a function belongs to the call inside it */
        struct ppw_symbol sym;
        const struct ppw_run_stack *stack = ppw_run_find_thread(run, 0)->samples[0].stack;
        ppw_symbols_frame(syms, stack->frames, 0, stack->flags, &sym);
        CHECK_STR(sym.function, "run_fixture_leaf");
        CHECK(sym.module == &run->modules[0]);
        CHECK_STR(ppw_symbols_module_table(syms, &run->modules[0]), ".symtab");
        CHECK_STR(ppw_symbols_module_file(syms, &run->modules[0]), sr.exe.path);
        ppw_symbols_lookup(syms, a->compute + 1, false, &sym);
        CHECK_INT(sym.function_start, a->compute - sr.exe.bias);
        CHECK(ppw_symbols_module_error(syms, &run->modules[0]) == NULL);
        ppw_symbols_lookup(syms, 0x10, false, &sym); /* no module */
        CHECK(sym.module == NULL && sym.function == NULL);
        ppw_symbols_lookup(syms, 0x7e0000001800, false, &sym); /* the unloaded library */
        CHECK(sym.module == &run->modules[3] && sym.function == NULL);
        CHECK_INT(sym.offset, 0x1800);
        CHECK_CONTAINS(ppw_symbols_module_error(syms, &run->modules[3]), "/nonexistent/libgone.so");
    }
    ppw_symbols_free(syms);
    ppw_run_free(run);
    sample_run_free(&sr);
}

static void test_symbols_build_id_mismatch(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    size_t module = record_at(&sr.run, 6); /* INFO ARGV ENV METRIC CONFIG CALIB, then MODULE */
    sr.run.b.data[module + 8 + offsetof(struct ppw_rec_module, build_id)] ^= 1;
    write_run(&sr, "symbols-mismatch");
    struct ppw_run *run = LOAD_OK();
    struct ppw_symbols *syms = NULL;
    struct ppw_err err;
    if (run && ppw_symbols_new(run, NULL, &syms, &err) == 0) {
        struct ppw_symbol sym;
        ppw_symbols_lookup(syms, sr.at.main + 1, false, &sym);
        CHECK(sym.module == &run->modules[0] && sym.function == NULL);
        CHECK_CONTAINS(ppw_symbols_module_error(syms, &run->modules[0]), "differs from the run's");
    }
    ppw_symbols_free(syms);
    ppw_run_free(run);
    sample_run_free(&sr);
}

/* .eh_frame_hdr's search table: function starts relative to the section. */
static void expect_starts(const unsigned char *hdr, size_t size, int code, size_t count, int line)
{
    const struct test_section sections[] = {{".eh_frame_hdr", SHT_PROGBITS, hdr, size}};
    char path[1300];
    snprintf(path, sizeof path, "%s/eh-frame-hdr.o", workdir);
    struct ppw_elf *elf = NULL;
    struct ppw_err err;
    uint64_t *starts = NULL;
    size_t n = 99;
    if (write_test_elf(path, sections, 1) != 0 || ppw_elf_open(path, &elf, &err) != 0) {
        FAIL_AT("(line %d) cannot write or open %s", line, path);
        return;
    }
    int rc = ppw_elf_function_starts(elf, &starts, &n, &err);
    if (rc != code || n != count)
        FAIL_AT("(line %d) rc=%d count=%zu, expected %d and %zu (%s)", line, rc, n, code, count,
                rc ? err.message : "");
    if (!rc && count == 2 && (starts[0] != 0x10 || starts[1] != (uint64_t)-8))
        FAIL_AT("(line %d) starts 0x%llx 0x%llx", line, (unsigned long long)starts[0],
                (unsigned long long)starts[1]);
    free(starts);
    ppw_elf_close(elf);
}

/* The PLT stubs of this test program, as ppw_elf_each_plt_stub finds
 * them, checked against the code they name (x86-64): each starts with
 * `jmp *slot(%rip)` (after an endbr64 with IBT), and its GOT slot holds
 * the named function's address once bound, or points back into the stub
 * itself before the first call (lazy binding).  A stub shifted by one,
 * or named after its neighbour, fails. */
struct plt_stubs {
    uint64_t bias, free_addr;
    size_t count, checked;
    int bad;
};

static int note_stub(void *ctx, const char *name, uint64_t addr, uint64_t size)
{
    struct plt_stubs *stubs = ctx;
    size_t length = strlen(name);
    stubs->count++;
    stubs->bad |= (size != 8 && size != 16) || length < 5 || strcmp(name + length - 4, "@plt") != 0;
    if (strcmp(name, "free@plt") == 0)
        stubs->free_addr = addr;
#if defined(__x86_64__)
    const unsigned char *stub = (const unsigned char *)(uintptr_t)(stubs->bias + addr);
    const unsigned char *code = stub;
    if (code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e && code[3] == 0xfa)
        code += 4;
    if (code[0] == 0xf2) /* bnd jmp */
        code++;
    if (code[0] != 0xff || code[1] != 0x25) {
        stubs->bad = 1;
        return 0;
    }
    int32_t displacement;
    memcpy(&displacement, code + 2, sizeof displacement);
    void *target = *(void *const *)(code + 6 + displacement);
    char symbol[256];
    snprintf(symbol, sizeof symbol, "%.*s", (int)(length - 4), name);
    void *named = dlsym(RTLD_DEFAULT, symbol);
    bool lazy = (const unsigned char *)target > stub &&
                (const unsigned char *)target < stub + size;
    if (named && !lazy) {
        stubs->checked++;
        stubs->bad |= target != named;
    }
#endif
    return 0;
}

static void test_plt_stubs(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    free(malloc(1)); /* free's slot is bound now */
    struct ppw_elf *elf = NULL;
    struct ppw_err err;
    struct plt_stubs stubs = {.bias = sr.exe.bias};
    if (ppw_elf_open(sr.exe.path, &elf, &err) != 0) {
        FAIL_AT("cannot open %s: %s", sr.exe.path, err.message);
        sample_run_free(&sr);
        return;
    }
    CHECK_INT(ppw_elf_each_plt_stub(elf, note_stub, &stubs), 0);
    ppw_elf_close(elf);
    CHECK(stubs.count > 0 && !stubs.bad && stubs.free_addr != 0);
#if defined(__x86_64__)
    CHECK(stubs.checked > 0);
#endif
    /* and a sample there is named after it, not after the symbol before */
    write_run(&sr, "plt");
    struct ppw_run *run = LOAD_OK();
    struct ppw_symbols *syms = NULL;
    if (run && stubs.free_addr && ppw_symbols_new(run, NULL, &syms, &err) == 0)
        expect_function(syms, sr.exe.bias + stubs.free_addr + 2, true, "free@plt", __LINE__);
    ppw_symbols_free(syms);
    ppw_run_free(run);
    sample_run_free(&sr);
}

static void test_function_starts(void)
{
    /* version 1, eh_frame_ptr pcrel|sdata4, count udata4, table datarel|sdata4 */
    unsigned char hdr[] = {1,    0x1b, 0x03, 0x3b, 0,    0, 0,    0, 2, 0,
                           0,    0,    0x10, 0,    0,    0, 0x40, 0, 0, 0, /* start 0x10 */
                           0xf8, 0xff, 0xff, 0xff, 0x50, 0, 0,    0};      /* start -8 */
    expect_starts(hdr, sizeof hdr, 0, 2, __LINE__);
    hdr[8] = 3; /* three entries in room for two */
    expect_starts(hdr, sizeof hdr, PPW_ECORRUPT, 0, __LINE__);
    hdr[8] = 2;
    hdr[3] = 0x1b; /* a table encoding no linker writes */
    expect_starts(hdr, sizeof hdr, 0, 0, __LINE__);
    expect_starts(hdr, 3, 0, 0, __LINE__);
}

static void test_check_binary(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    write_run(&sr, "binary");
    struct ppw_run *run = LOAD_OK();
    struct ppw_err err;
    if (run) {
        CHECK_INT(ppw_run_check_binary(run, sr.exe.path, &err), 0);
        unsigned char note[64];
        size_t size = make_build_id_note(note, 0x40);
        const struct test_section sections[] = {{".note.gnu.build-id", SHT_NOTE, note, size}};
        char other[4200];
        snprintf(other, sizeof other, "%s/other-build.o", workdir);
        CHECK_INT(write_test_elf(other, sections, 1), 0);
        CHECK_INT(ppw_run_check_binary(run, other, &err), PPW_ECORRUPT);
        CHECK_CONTAINS(err.message, "from another build: its build-id is 404142");
        CHECK_INT(ppw_run_check_binary(run, "/nonexistent/prog", &err), PPW_EIO);
    }
    ppw_run_free(run);
    sample_run_free(&sr);
}

/* ---- truncation ---- */

static void expect_truncated_at(const struct run_file *f, const char *name, size_t cut, int line)
{
    write_bytes(name, f->b.data, cut);
    struct ppw_run *run = (void *)1;
    struct ppw_err err;
    int rc = ppw_run_load(dir, &run, &err);
    if (rc != PPW_ECORRUPT || !strstr(err.message, "truncated") || !strstr(err.message, name))
        FAIL_AT("(line %d) %s cut at %zu: rc=%d \"%s\"", line, name, cut, rc, err.message);
    ppw_run_free(rc ? NULL : run);
}

static void test_truncated(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    write_run(&sr, "truncated");
    const struct {
        const struct run_file *f;
        const char *name;
    } files[] = {{&sr.run, "run.ppw"},
                 {&sr.samples[0], "t0.samples.ppw"},
                 {&sr.events[1], "t1.events.ppw"},
                 {&sr.profile[1], "t1.profile.ppw"}};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        const struct run_file *f = files[i].f;
        size_t cuts[] = {0,
                         3,
                         7,
                         64,
                         PPW_RUN_HEADER_SIZE - 1,
                         PPW_RUN_HEADER_SIZE,
                         PPW_RUN_HEADER_SIZE + 4,
                         PPW_RUN_HEADER_SIZE + 12,
                         f->b.len - 8,
                         f->b.len - 1};
        /* a thread file of 0 bytes is unwritten, not truncated (below) */
        for (size_t k = f == &sr.run ? 0 : 1; k < sizeof cuts / sizeof cuts[0]; k++)
            expect_truncated_at(f, files[i].name, cuts[k], __LINE__);
        write_bytes(files[i].name, f->b.data, f->b.len);
    }
    sample_run_free(&sr);
}

/* Every shorter length of every file is an error, never a crash. */
static void test_truncated_at_every_length(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    write_run(&sr, "every-length");
    const struct run_file *files[] = {&sr.run, &sr.samples[1], &sr.events[0], &sr.profile[0]};
    const char *names[] = {"run.ppw", "t1.samples.ppw", "t0.events.ppw", "t0.profile.ppw"};
    for (size_t i = 0; i < 4; i++) {
        int failures = 0;
        for (size_t cut = i == 0 ? 0 : 1; cut < files[i]->b.len && failures < 3; cut++) {
            write_bytes(names[i], files[i]->b.data, cut);
            struct ppw_run *run = NULL;
            struct ppw_err err;
            if (ppw_run_load(dir, &run, &err) != PPW_ECORRUPT) {
                FAIL_AT("%s cut at %zu loaded", names[i], cut);
                failures++;
                ppw_run_free(run);
            }
        }
        write_bytes(names[i], files[i]->b.data, files[i]->b.len);
    }
    sample_run_free(&sr);
}

/* A thread file the process created and never wrote (it died as the
 * thread started: 0 bytes, or the preallocated zeros of a header) is that
 * thread's lost data, not a corrupt run: the other threads read (issue 18:
 * 2 of 8 crashed runs of a benchmark were refused whole).  run.ppw so
 * damaged is still an error: nothing of the run can be read without it. */
static void test_unwritten_thread_files(void)
{
    struct sample_run sr;
    if (!build(&sr, SAMPLE_RUN_CRASHED))
        return;
    write_run(&sr, "unwritten");
    static unsigned char zeros[65536];
    write_bytes("t1.samples.ppw", zeros, 0);             /* created, not yet extended */
    write_bytes("t1.events.ppw", zeros, sizeof zeros);   /* extended, header not written */
    write_bytes("t1.profile.ppw", zeros, 40);            /* a short file of zeros */
    struct ppw_run *run = LOAD_OK();
    if (run) {
        const struct ppw_run_thread *t0 = ppw_run_find_thread(run, 0);
        const struct ppw_run_thread *t1 = ppw_run_find_thread(run, 1);
        CHECK(t1 && t1->samples_file.present && t1->samples_file.unwritten &&
              t1->events_file.unwritten && t1->profile_file.unwritten);
        CHECK(t1 && t1->sample_count == 0 && t1->timer_count == 0 && t1->trace_count == 0);
        CHECK(t0 && !t0->samples_file.unwritten && t0->sample_count == 3 &&
              t0->timer_count == 3);
    }
    ppw_run_free(run);
    /* zeros after a real header are no unwritten file */
    write_run(&sr, "unwritten-partly");
    unsigned char header[PPW_RUN_HEADER_SIZE] = {0};
    header[5] = 1;
    write_bytes("t1.samples.ppw", header, sizeof header);
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "t1.samples.ppw: corrupt data at byte 0: bad magic");
    write_run(&sr, "unwritten-run");
    write_bytes("run.ppw", zeros, sizeof zeros);
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "run.ppw: corrupt data at byte 0: bad magic");
    sample_run_free(&sr);
}

/* A FIFO (or any other non-regular file) in place of a run file is
 * refused at once; opening it for reading must not wait for a writer. */
static void test_fifo(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    const char *names[] = {"run.ppw", "t1.samples.ppw"};
    for (size_t i = 0; i < 2; i++) {
        write_run(&sr, "fifo");
        unlink(file_path(names[i]));
        if (mkfifo(file_path(names[i]), 0600) != 0) {
            FAIL_AT("mkfifo %s", names[i]);
            break;
        }
        alarm(20); /* a blocking open would hang the test: fail it instead */
        EXPECT_LOAD_ERROR(PPW_EIO, "not a regular file");
        alarm(0);
    }
    sample_run_free(&sr);
}

/* Flips bit 0 of the byte at offset in the written file name. */
static void flip_on_disk(const char *name, size_t offset)
{
    FILE *f = fopen(file_path(name), "r+b");
    int c = f && fseek(f, (long)offset, SEEK_SET) == 0 ? fgetc(f) : EOF;
    if (c == EOF || fseek(f, (long)offset, SEEK_SET) != 0 || fputc(c ^ 1, f) == EOF)
        FAIL_AT("cannot flip byte %zu of %s", offset, name);
    if (f)
        fclose(f);
}

/* Checksums (run format 1.5): CHECKSUM records cover the records before
 * them, a sealed profile file's header covers its slots.  Flipped bytes
 * anywhere they cover are refused (issue 18: two flipped bytes in a
 * samples file were accepted); a 1.5 file must not go a block without a
 * CHECKSUM record, and each must start where the previous one ended. */
static void test_checksums(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    size_t sum = rf_record(&sr.samples[0], PPW_REC_CHECKSUM,
                           &(struct ppw_rec_checksum){0, 0, 0}, sizeof(struct ppw_rec_checksum),
                           NULL, 0, NULL);
    rf_finish(&sr.samples[0]);
    rf_checksum(&sr.run);
    rf_finish(&sr.run);
    rf_header(&sr.profile[0])->flags |= PPW_FILE_SEALED;
    write_run(&sr, "checksums");
    struct ppw_run *run = LOAD_OK();
    if (run) {
        const struct ppw_run_thread *t0 = ppw_run_find_thread(run, 0);
        CHECK(run->file.checksums == 1 && run->file.unchecked == 0);
        CHECK(t0 && t0->samples_file.checksums == 1 && t0->samples_file.unchecked == 0);
        CHECK(t0 && t0->profile_file.checksums == 1 && t0->profile_file.unchecked == 0);
        CHECK(t0 && t0->events_file.checksums == 0 && t0->events_file.unchecked > 0);
    }
    ppw_run_free(run);
    flip_on_disk("t0.samples.ppw", PPW_RUN_HEADER_SIZE + 20);
    flip_on_disk("t0.samples.ppw", sum - 3);
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "t0.samples.ppw: corrupt data at byte 128: checksum "
                                    "mismatch in bytes 128 to ");
    write_run(&sr, "checksums-profile");
    flip_on_disk("t0.profile.ppw", PPW_RUN_HEADER_SIZE + PPW_PROFILE_SLOT_SIZE + 40);
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "t0.profile.ppw: corrupt data at byte 128: checksum "
                                    "mismatch: the slots give CRC32C");
    write_run(&sr, "checksums-run");
    flip_on_disk("run.ppw", PPW_RUN_HEADER_SIZE + 9);
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "run.ppw: corrupt data at byte 128: checksum mismatch");
    /* a block that does not start where the previous one ended */
    write_run(&sr, "checksums-from");
    flip_on_disk("t0.samples.ppw", sum + 8 + offsetof(struct ppw_rec_checksum, from) + 1);
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "CHECKSUM record covers from byte 384, but its block "
                                    "starts at 128");
    sample_run_free(&sr);

    /* More than a block of records with no CHECKSUM: refused in a file
     * whose writer says it adds one every PPW_CHECKSUM_BLOCK bytes
     * (PPW_FILE_CHECKSUMMED, as libppw does), read in a file without that
     * flag (before 1.5, or a writer without checksums). */
    if (!build(&sr, 0))
        return;
    for (uint64_t i = 0; i < 600; i++) {
        struct ppw_rec_sample more = {1, 0, 9000 + i, 1000};
        rf_record(&sr.samples[0], PPW_SMP_SAMPLE, &more, sizeof more, NULL, 0, NULL);
    }
    rf_finish(&sr.samples[0]);
    rf_header(&sr.samples[0])->flags |= PPW_FILE_CHECKSUMMED;
    write_run(&sr, "checksums-missing");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "bytes of records since byte 128 without a CHECKSUM record");
    rf_header(&sr.samples[0])->flags &= ~(uint32_t)PPW_FILE_CHECKSUMMED;
    write_run(&sr, "checksums-unflagged");
    run = LOAD_OK();
    CHECK(run && run->threads[0].samples_file.checksums == 0 &&
          run->threads[0].samples_file.unchecked > 600 * 32);
    ppw_run_free(run);
    sample_run_free(&sr);
}

/* Profile slots whose sums no series of calls gives. */
static void test_timer_sums(void)
{
    const struct {
        size_t field;
        uint64_t value;
        bool closed;
        const char *needle;
    } cases[] = {
        {offsetof(struct ppw_rec_timer, incl_min_ns), 1600, true, "incl_min_ns is over incl_max_ns"},
        {offsetof(struct ppw_rec_timer, incl_sum_ns), 1500001, true,
         "incl_sum_ns is over count x incl_max_ns"},
        {offsetof(struct ppw_rec_timer, incl_sum_ns), 499999, true,
         "incl_sum_ns is under count x incl_min_ns"},
        {offsetof(struct ppw_rec_timer, excl_sum_ns), 800001, true,
         "excl_sum_ns is over incl_sum_ns"},
        {offsetof(struct ppw_rec_timer, count), 0, true, "times summed over no call"},
        /* not closed: one call may be half added (its time in the sums,
         * not yet in count), so 1001 calls' worth is still a measurement */
        {offsetof(struct ppw_rec_timer, incl_sum_ns), 1501500, false, NULL},
        {offsetof(struct ppw_rec_timer, incl_sum_ns), 1501501, false,
         "incl_sum_ns is over count x incl_max_ns"},
    };
    size_t slot = PPW_RUN_HEADER_SIZE + PPW_PROFILE_SLOT_SIZE; /* work <- main: 1000 calls,
                                                                 500..1500 ns, sum 800000 */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sample_run sr;
        if (!build(&sr, 0))
            return;
        memcpy(sr.profile[0].b.data + slot + cases[i].field, &cases[i].value, 8);
        if (!cases[i].closed)
            rf_header(&sr.profile[0])->flags &= ~(uint32_t)PPW_FILE_CLOSED;
        write_run(&sr, "timer-sums");
        if (cases[i].needle) {
            EXPECT_LOAD_ERROR(PPW_ECORRUPT, cases[i].needle);
        } else {
            struct ppw_run *run = LOAD_OK();
            ppw_run_free(run);
        }
        sample_run_free(&sr);
    }
}

/* Preallocated space after committed is ignored, whatever it holds. */
static void test_bytes_past_committed(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    bytes_put(&sr.samples[0].b, "\xff\xff\xff\xff\x07\x00\x00\x00 partial", 16);
    bytes_zeros(&sr.events[0].b, 4096);
    write_run(&sr, "past-committed");
    struct ppw_run *run = LOAD_OK();
    CHECK(run && run->threads[0].sample_count == 3);
    ppw_run_free(run);
    sample_run_free(&sr);
}

static void test_committed_past_size(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    rf_header(&sr.events[0])->committed += 8;
    write_run(&sr, "committed-past-size");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "t0.events.ppw: truncated: committed says");
    sample_run_free(&sr);
}

/* ---- framing ---- */

static void set_u32(struct run_file *f, size_t at, uint32_t value)
{
    memcpy(f->b.data + at, &value, 4);
}

static void test_record_sizes(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    size_t second = record_at(&sr.samples[0], 1);
    const struct {
        uint32_t size;
        const char *needle;
    } cases[] = {{0, "size 0 (not a multiple of 8"},
                 {4, "size 4 (not a multiple of 8"},
                 {30, "size 30 (not a multiple of 8"},
                 {0x10000000, "runs past the committed end"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t old;
        memcpy(&old, sr.samples[0].b.data + second + 4, 4);
        set_u32(&sr.samples[0], second + 4, cases[i].size);
        write_run(&sr, "record-size");
        EXPECT_LOAD_ERROR(PPW_ECORRUPT, cases[i].needle);
        set_u32(&sr.samples[0], second + 4, old);
    }
    /* well framed, but shorter than its kind's fixed part */
    uint64_t half = 1;
    rf_record(&sr.samples[0], PPW_SMP_SAMPLE, &half, sizeof half, NULL, 0, NULL);
    rf_finish(&sr.samples[0]);
    write_run(&sr, "record-short");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT,
                      "SAMPLE record of 16 bytes is shorter than its 32-byte minimum");
    sample_run_free(&sr);
}

/* Each bit of each record's size field, flipped: an error or a load, never a crash. */
static void test_size_bit_flips(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    write_run(&sr, "size-flips");
    struct run_file *files[] = {&sr.run, &sr.events[0]};
    const char *names[] = {"run.ppw", "t0.events.ppw"};
    for (size_t i = 0; i < 2; i++) {
        struct run_file *f = files[i];
        for (size_t pos = PPW_RUN_HEADER_SIZE; pos < f->b.len;) {
            uint32_t size;
            memcpy(&size, f->b.data + pos + 4, 4);
            for (int bit = 0; bit < 32; bit++) {
                f->b.data[pos + 4 + bit / 8] ^= (unsigned char)(1u << (bit % 8));
                write_bytes(names[i], f->b.data, f->b.len);
                struct ppw_run *run = NULL;
                struct ppw_err err;
                int rc = ppw_run_load(dir, &run, &err);
                if (rc && (rc != err.code || !err.message[0] || strchr(err.message, '\n')))
                    FAIL_AT("%s size bit %d at %zu: rc=%d \"%s\"", names[i], bit, pos, rc,
                            err.message);
                if (!rc && bit < 3)
                    FAIL_AT("%s: size %u with bit %d flipped loaded", names[i], size, bit);
                ppw_run_free(run);
                f->b.data[pos + 4 + bit / 8] ^= (unsigned char)(1u << (bit % 8));
            }
            pos += size;
        }
        write_bytes(names[i], f->b.data, f->b.len);
    }
    sample_run_free(&sr);
}

/* ---- headers ---- */

static void test_newer_minor_and_unknown_kinds(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    struct run_file *all[] = {&sr.run, &sr.samples[0], &sr.events[1], &sr.profile[0]};
    for (size_t i = 0; i < 4; i++)
        rf_header(all[i])->minor = PPW_RUN_MINOR + 1;
    uint64_t future[3] = {1, 2, 3};
    const char *strings[] = {"from the future", NULL};
    rf_record(&sr.run, 999, future, sizeof future, NULL, 0, strings);
    rf_record(&sr.samples[0], 40, future, sizeof future, NULL, 0, NULL);
    rf_record(&sr.events[1], 0, NULL, 0, NULL, 0, NULL);
    uint32_t slot[2] = {77, 0};
    rf_slot(&sr.profile[0], slot, sizeof slot);
    for (size_t i = 0; i < 4; i++)
        rf_finish(all[i]);
    write_run(&sr, "newer-minor");
    struct ppw_run *run = LOAD_OK();
    CHECK(run && run->file.minor == PPW_RUN_MINOR + 1 && run->threads[0].timer_count == 3);
    ppw_run_free(run);
    /* The same kinds in files of this reader's version are damage (issue
     * 18: a profile with a garbage body printed an empty table). */
    const struct {
        struct run_file *f;
        const char *needle;
    } current[] = {
        {&sr.run, "run.ppw: corrupt data at byte "},
        {&sr.samples[0], "record kind 40: run format " CURRENT " has no such kind in samples files"},
        {&sr.events[1], "record kind 0: run format " CURRENT " has no such kind in events files"},
        {&sr.profile[0], "slot kind 77: run format " CURRENT " has no such kind in profile files"},
    };
    for (size_t i = 0; i < 4; i++) {
        for (size_t k = 0; k < 4; k++)
            rf_header(all[k])->minor = k == i ? PPW_RUN_MINOR : PPW_RUN_MINOR + 1;
        write_run(&sr, "current-minor");
        EXPECT_LOAD_ERROR(PPW_ECORRUPT, current[i].needle);
    }
    sample_run_free(&sr);
}

/* A newer minor's longer header: records start at header_size. */
static void test_longer_header(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    struct run_file *f = &sr.samples[1];
    struct bytes grown = {0};
    bytes_put(&grown, f->b.data, PPW_RUN_HEADER_SIZE);
    bytes_zeros(&grown, 16);
    bytes_put(&grown, f->b.data + PPW_RUN_HEADER_SIZE, f->b.len - PPW_RUN_HEADER_SIZE);
    bytes_free(&f->b);
    f->b = grown;
    rf_header(f)->header_size = PPW_RUN_HEADER_SIZE + 16;
    rf_header(f)->minor = 1;
    write_run(&sr, "longer-header");
    struct ppw_run *run = LOAD_OK();
    CHECK(run && run->threads[1].sample_count == 3);
    ppw_run_free(run);
    rf_header(f)->header_size = 132;
    write_run(&sr, "odd-header");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "header_size 132 is not a multiple of 8");
    sample_run_free(&sr);
}

static void test_newer_major(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    rf_header(&sr.events[1])->major = 2;
    rf_header(&sr.events[1])->minor = 3;
    write_run(&sr, "newer-major");
    EXPECT_LOAD_ERROR(PPW_EVERSION, "t1.events.ppw: run file format version 2.3; this ppw-blame "
                                    "reads version 1.x (upgrade ppw-blame)");
    rf_header(&sr.events[1])->major = 0;
    write_run(&sr, "major-zero");
    EXPECT_LOAD_ERROR(PPW_EVERSION, "unknown version");
    sample_run_free(&sr);
}

static void test_bad_headers(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    memcpy(rf_header(&sr.run)->magic, "PPWB", 4);
    write_run(&sr, "bad-magic");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "run.ppw: corrupt data at byte 0: bad magic");
    memcpy(rf_header(&sr.run)->magic, PPW_RUN_MAGIC, 4);
    rf_header(&sr.samples[0])->kind = PPW_FILE_EVENTS;
    write_run(&sr, "wrong-kind");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "t0.samples.ppw: corrupt data at byte 8: file kind 3");
    rf_header(&sr.samples[0])->kind = PPW_FILE_SAMPLES;
    rf_header(&sr.profile[1])->thread = 0;
    write_run(&sr, "wrong-thread");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "thread 0 in the header of a file for thread 1");
    rf_header(&sr.profile[1])->thread = 1;
    rf_header(&sr.run)->build_id_size = 33;
    write_run(&sr, "build-id-size");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "build_id_size 33 is over 32");
    sample_run_free(&sr);
}

static void test_another_build_or_process(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    rf_header(&sr.samples[1])->build_id[0] ^= 0xff;
    write_run(&sr, "another-build");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "t1.samples.ppw: file from another build: build-id ");
    rf_header(&sr.samples[1])->build_id[0] ^= 0xff;
    rf_header(&sr.profile[0])->pid = 99;
    write_run(&sr, "another-process");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "t0.profile.ppw: file from another process: pid 99, run.ppw "
                                    "has 4242");
    sample_run_free(&sr);
}

static void test_missing_files(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    write_run(&sr, "no-run-ppw");
    unlink(file_path("run.ppw"));
    EXPECT_LOAD_ERROR(PPW_EIO, "no-run-ppw: no run.ppw (not a ppw run directory)");
    snprintf(dir, sizeof dir, "%s/no-such-run", workdir);
    EXPECT_LOAD_ERROR(PPW_EIO, "no-such-run: No such file or directory");
    /* per-thread files may be absent */
    write_run(&sr, "absent-thread-files");
    unlink(file_path("t1.samples.ppw"));
    unlink(file_path("t1.profile.ppw"));
    unlink(file_path("t0.events.ppw"));
    write_bytes("t1.notes.ppw", (const unsigned char *)"x", 1); /* not a run file: ignored */
    write_bytes("t01.samples.ppw", (const unsigned char *)"x", 1);
    struct ppw_run *run = LOAD_OK();
    if (run) {
        const struct ppw_run_thread *t1 = ppw_run_find_thread(run, 1);
        CHECK(t1 && !t1->samples_file.present && t1->events_file.present && t1->sample_count == 0);
        CHECK_INT(run->spawn_count, 3);
    }
    ppw_run_free(run);
    sample_run_free(&sr);
}

/* A t<N> file of a thread with no THREAD record: the thread exists, its
 * root context is unknown. */
static void test_thread_without_record(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    write_run(&sr, "thread-without-record");
    rf_header(&sr.samples[0])->thread = 5;
    rf_write(&sr.samples[0], dir, "t5.samples.ppw");
    struct ppw_run *run = LOAD_OK();
    const struct ppw_run_thread *t5 = run ? ppw_run_find_thread(run, 5) : NULL;
    CHECK(t5 && !t5->has_begin && !t5->ended && t5->sample_count == 3);
    if (t5) {
        const struct ppw_run_spawn *chain[4];
        size_t count;
        struct ppw_err err;
        CHECK_INT(ppw_run_spawn_chain(run, 5, 0, chain, 4, &count, &err), PPW_ECORRUPT);
    }
    ppw_run_free(run);
    sample_run_free(&sr);
}

static void test_crashed_run(void)
{
    struct sample_run sr;
    if (!build(&sr, SAMPLE_RUN_CRASHED))
        return;
    write_run(&sr, "crashed");
    struct ppw_run *run = LOAD_OK();
    if (run) {
        CHECK(!run->finished && !(run->file.flags & PPW_FILE_CLOSED));
        CHECK(run->threads[0].has_begin && !run->threads[0].ended && !run->threads[1].ended);
        CHECK_INT(run->threads[0].timers[0].flags, PPW_TIMER_OPEN);
    }
    ppw_run_free(run);
    sample_run_free(&sr);
}

/* ---- references and record contents ---- */

static void test_sample_names_missing_stack(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    struct ppw_rec_sample s = {99, 0, 8000, 1};
    rf_record(&sr.samples[1], PPW_SMP_SAMPLE, &s, sizeof s, NULL, 0, NULL);
    rf_finish(&sr.samples[1]);
    write_run(&sr, "missing-stack");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "t1.samples.ppw: corrupt data at byte");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "sample names stack 99, which no earlier STACK record defines");
    sample_run_free(&sr);

    /* a stack defined after the sample that names it */
    if (!build(&sr, 0))
        return;
    struct ppw_rec_sample early = {4, 0, 8000, 1};
    struct ppw_rec_stack late = {4, 0, 0};
    rf_record(&sr.samples[1], PPW_SMP_SAMPLE, &early, sizeof early, NULL, 0, NULL);
    rf_record(&sr.samples[1], PPW_SMP_STACK, &late, sizeof late, NULL, 0, NULL);
    rf_finish(&sr.samples[1]);
    write_run(&sr, "stack-too-late");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "sample names stack 4");
    sample_run_free(&sr);
}

static void test_stack_records(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    struct ppw_rec_stack dup = {1, 0, 0};
    rf_record(&sr.samples[0], PPW_SMP_STACK, &dup, sizeof dup, NULL, 0, NULL);
    rf_finish(&sr.samples[0]);
    write_run(&sr, "stack-twice");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "stack id 1 defined twice");
    sample_run_free(&sr);
    if (!build(&sr, 0))
        return;
    size_t first = record_at(&sr.samples[1], 0);
    sr.samples[1].b.data[first + 8 + offsetof(struct ppw_rec_stack, nframes)] = 100;
    write_run(&sr, "frames-past-record");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "STACK frames: 100 64-bit values do not fit");
    set_u32(&sr.samples[1], first + 8, 0);
    write_run(&sr, "stack-id-0");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "stack id 0");
    sample_run_free(&sr);
}

/* Samples and stacks in BLOCK records (1.6, as libppw writes them) read as
 * the same samples and stacks as in SAMPLE and STACK records; a block cut
 * short by a crash reads up to its last published entry; a damaged block
 * is refused. */
static void test_sample_blocks(void)
{
    struct sample_run plain, blocks;
    if (!build(&plain, 0))
        return;
    if (!build(&blocks, SAMPLE_RUN_BLOCKS)) {
        sample_run_free(&plain);
        return;
    }
    write_run(&plain, "records");
    struct ppw_run *want = LOAD_OK();
    write_run(&blocks, "blocks");
    struct ppw_run *got = LOAD_OK();
    for (size_t i = 0; want && got && i < 2; i++) {
        const struct ppw_run_thread *w = &want->threads[i], *g = &got->threads[i];
        CHECK_INT(g->sample_count, w->sample_count);
        CHECK_INT(g->stack_count, w->stack_count);
        for (size_t k = 0; k < w->sample_count && k < g->sample_count; k++) {
            const struct ppw_run_sample *ws = &w->samples[k], *gs = &g->samples[k];
            CHECK_INT(gs->time_ns, ws->time_ns);
            CHECK_INT(gs->weight, ws->weight);
            CHECK_INT(gs->spawn_tag, ws->spawn_tag);
            CHECK_INT(gs->stack->id, ws->stack->id);
            CHECK_INT(gs->stack->flags, ws->stack->flags);
            CHECK_INT(gs->stack->nframes, ws->stack->nframes);
            for (size_t f = 0; f < ws->stack->nframes && f < gs->stack->nframes; f++)
                CHECK_INT(gs->stack->frames[f], ws->stack->frames[f]);
        }
    }
    ppw_run_free(want);
    ppw_run_free(got);
    sample_run_free(&plain);

    /* Thread 1's second block: STACK entry (8 + 4 x 8 bytes), then its
     * sample at spawn tag 2: SPAWN (8) and SAMPLE (12) entries. */
    size_t second = record_at(&blocks.samples[1], 1) + 8;
    uint32_t used;
    memcpy(&used, blocks.samples[1].b.data + second, 4);
    CHECK_INT(used, 40 + 8 + 12);
    set_u32(&blocks.samples[1], second, 40); /* a crash before the sample was published */
    write_run(&blocks, "block-crashed");
    got = LOAD_OK();
    if (got) {
        CHECK_INT(got->threads[1].sample_count, 2); /* the first block's two */
        CHECK_INT(got->threads[1].stack_count, 3);
    }
    ppw_run_free(got);
    set_u32(&blocks.samples[1], second, 40 + 8 + 8); /* the sample cut in half */
    write_run(&blocks, "block-entry-cut");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "BLOCK entry of kind 0 needs 12 bytes, 8 are left");
    set_u32(&blocks.samples[1], second, 64); /* more used than the room */
    write_run(&blocks, "block-overfull");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "says 64 bytes of entries used of 60");
    set_u32(&blocks.samples[1], second, 60);
    set_u32(&blocks.samples[1], second + 16 + 40, (uint32_t)PPW_BLOCK_SPAWN << 30 | 7);
    write_run(&blocks, "block-spawn-id");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "BLOCK SPAWN entry with 7 in its id bits");
    set_u32(&blocks.samples[1], second + 16 + 40, (uint32_t)PPW_BLOCK_SPAWN << 30);
    write_run(&blocks, "block-repaired");
    ppw_run_free(LOAD_OK());
    rf_header(&blocks.samples[1])->minor = 5; /* BLOCK came with 1.6 */
    write_run(&blocks, "block-in-1.5");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "record kind 34: run format 1.5 has no such kind in samples");
    sample_run_free(&blocks);
}

static void test_strings(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    uint32_t head[4] = {1, 0, 0x64636261, 0x68676665}; /* severity, 0, "abcdefgh" without NUL */
    rf_record(&sr.run, PPW_RUN_NOTE, head, sizeof head, NULL, 0, NULL);
    rf_finish(&sr.run);
    write_run(&sr, "string-unterminated");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "NOTE message: string runs past the end of its 24-byte record");
    sample_run_free(&sr);
    if (!build(&sr, 0))
        return;
    uint32_t argv_head[2] = {1000, 0};
    const char *one[] = {"x", NULL};
    rf_record(&sr.run, PPW_RUN_ARGV, argv_head, sizeof argv_head, NULL, 0, one);
    rf_finish(&sr.run);
    write_run(&sr, "argv-twice");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "a second ARGV record");
    sample_run_free(&sr);
    if (!build(&sr, 0))
        return;
    size_t argv = record_at(&sr.run, 1);
    set_u32(&sr.run, argv + 8, 1000);
    write_run(&sr, "argv-count");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "ARGV count 1000: more strings than");
    /* 3 strings and 7 bytes of zero padding, which read as 7 empty strings */
    set_u32(&sr.run, argv + 8, 11);
    write_run(&sr, "argv-missing-string");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "ARGV: string runs past the end");
    sample_run_free(&sr);
}

static void test_trace_and_timer_references(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    struct ppw_rec_trace t = {1, 42, GASP_START, 0};
    rf_record(&sr.events[0], PPW_EVT_TRACE, &t, sizeof t, NULL, 0, NULL);
    rf_finish(&sr.events[0]);
    write_run(&sr, "trace-region");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "trace event names region 42, which run.ppw does not define");
    sample_run_free(&sr);
    if (!build(&sr, 0))
        return;
    struct ppw_rec_trace with_text = {1, 4, GASP_ATOMIC, 0x8001}; /* one arg and a string */
    uint64_t arg = 1;
    rf_record(&sr.events[0], PPW_EVT_TRACE, &with_text, sizeof with_text, &arg, 8, NULL);
    rf_finish(&sr.events[0]);
    write_run(&sr, "trace-no-string");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "TRACE description: string runs past");
    sample_run_free(&sr);

    if (!build(&sr, 0))
        return;
    struct ppw_rec_omp unknown = {1, 1, 2, 9, 0};
    rf_record(&sr.events[0], PPW_EVT_OMP, &unknown, sizeof unknown, NULL, 0, NULL);
    rf_finish(&sr.events[0]);
    write_run(&sr, "omp-event");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "OMP event kind 9 unknown");
    sample_run_free(&sr);
    if (!build(&sr, 0))
        return;
    struct ppw_rec_omp no_instance = {1, 0, 2, PPW_OMP_BEGIN, 0};
    rf_record(&sr.events[0], PPW_EVT_OMP, &no_instance, sizeof no_instance, NULL, 0, NULL);
    rf_finish(&sr.events[0]);
    write_run(&sr, "omp-instance");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "OMP instance 0");
    sample_run_free(&sr);

    if (!build(&sr, 0))
        return;
    size_t slot = PPW_RUN_HEADER_SIZE + PPW_PROFILE_SLOT_SIZE; /* thread 0's work <- main */
    set_u32(&sr.profile[0], slot + offsetof(struct ppw_rec_timer, path) + 4, 9);
    write_run(&sr, "timer-region");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "timer path[1] names region 9");
    set_u32(&sr.profile[0], slot + offsetof(struct ppw_rec_timer, path) + 4, 1);
    set_u32(&sr.profile[0], slot + offsetof(struct ppw_rec_timer, depth), 11);
    write_run(&sr, "timer-depth");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "timer depth 11 is not in [1, 10]");
    set_u32(&sr.profile[0], slot + offsetof(struct ppw_rec_timer, depth), 2);
    size_t throttle = PPW_RUN_HEADER_SIZE + 2 * PPW_PROFILE_SLOT_SIZE;
    set_u32(&sr.profile[1], throttle + offsetof(struct ppw_rec_throttle, region), 0);
    write_run(&sr, "throttle-region");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "throttle slot names region 0");
    set_u32(&sr.profile[1], throttle + offsetof(struct ppw_rec_throttle, region), 2);

    /* probe windows: a part longer than its whole, a mean over the limit,
     * a second PROBE slot, a calibration window that is no number */
    size_t probe = PPW_RUN_HEADER_SIZE + 3 * PPW_PROFILE_SLOT_SIZE;
    uint64_t v = 64 * 70;
    memcpy(sr.profile[1].b.data + probe + offsetof(struct ppw_rec_probe, end_head_ns), &v, 8);
    write_run(&sr, "probe-part");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "PROBE slot: window sums that no clock gives");
    v = 64 * 25;
    memcpy(sr.profile[1].b.data + probe + offsetof(struct ppw_rec_probe, end_head_ns), &v, 8);
    v = 1000000000;
    memcpy(sr.profile[1].b.data + probe + offsetof(struct ppw_rec_probe, throttled_ns), &v, 8);
    write_run(&sr, "probe-mean");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "PROBE slot: window sums that no clock gives");
    sample_run_free(&sr);
    if (!build(&sr, 0))
        return;
    struct ppw_rec_probe again = {.slot_kind = PPW_SLOT_PROBE, .window_period = 64};
    rf_slot(&sr.profile[1], &again, sizeof again);
    rf_finish(&sr.profile[1]);
    write_run(&sr, "probe-twice");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "a second PROBE slot");
    sample_run_free(&sr);
    if (!build(&sr, 0))
        return;
    size_t calib = record_at(&sr.run, 5); /* INFO ARGV ENV METRIC CONFIG, then CALIB */
    double nan_value = NAN;
    memcpy(sr.run.b.data + calib + 8 + offsetof(struct ppw_rec_calib, window_end_ns), &nan_value,
           8);
    write_run(&sr, "calib-window");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "CALIB: probe window nan is not a number of nanoseconds");
    sample_run_free(&sr);
}

static void test_slot_size(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    const struct {
        uint64_t slot_size;
        const char *needle;
    } cases[] = {{0, "slot_size 0 is not a multiple of 8"},
                 {12, "slot_size 12 is not a multiple of 8"},
                 {56, "is not a whole number of 56-byte slots"},
                 {80, "slot_size 80 is smaller than a TIMER slot (144 bytes)"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rf_header(&sr.profile[0])->slot_size = cases[i].slot_size;
        write_run(&sr, "slot-size");
        EXPECT_LOAD_ERROR(PPW_ECORRUPT, cases[i].needle);
    }
    rf_header(&sr.profile[0])->slot_size = PPW_PROFILE_SLOT_SIZE;
    rf_header(&sr.profile[0])->committed -= 8;
    write_run(&sr, "slot-committed");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "committed 472 is not a whole number of 160-byte slots");
    sample_run_free(&sr);
}

static void test_run_records(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    struct ppw_rec_metric metric = {0};
    const char *strings[] = {"", "", NULL};
    rf_record(&sr.run, PPW_RUN_METRIC, &metric, sizeof metric, NULL, 0, strings);
    rf_finish(&sr.run);
    write_run(&sr, "metric-twice");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "a second METRIC record");
    sample_run_free(&sr);

    const struct {
        uint32_t kind;
        uint32_t body[8];
        const char *needle;
    } cases[] = {
        {PPW_RUN_THREAD_END, {7}, "THREAD_END for thread 7, which no earlier THREAD record"},
        {PPW_RUN_THREAD_END, {1}, "a second THREAD_END for thread 1"},
        {PPW_RUN_THREAD, {1}, "a second THREAD record for thread 1"},
        {PPW_RUN_THREAD, {3, 0, 3}, "thread 3 has parent 3, which was not created before it"},
        {PPW_RUN_FINISH, {0}, "a second FINISH record"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!build(&sr, 0))
            return;
        rf_record(&sr.run, cases[i].kind, cases[i].body, sizeof cases[i].body, NULL, 0, NULL);
        rf_finish(&sr.run);
        write_run(&sr, "run-records");
        EXPECT_LOAD_ERROR(PPW_ECORRUPT, cases[i].needle);
        sample_run_free(&sr);
    }
}

static void test_modules_and_regions(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    struct run_image nowhere = {"", 0, 0x1000, 0x2000, {0}, 0};
    struct ppw_rec_module m = {.load_bias = nowhere.bias, .lo = nowhere.lo, .hi = nowhere.hi};
    const char *empty[] = {"", NULL};
    rf_record(&sr.run, PPW_RUN_UNMODULE, &m, sizeof m, NULL, 0, empty);
    rf_finish(&sr.run);
    write_run(&sr, "unmodule");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "UNMODULE for [0x1000, 0x2000), which no loaded module covers");
    sample_run_free(&sr);
    if (!build(&sr, 0))
        return;
    struct ppw_rec_region again = {2, PPW_REGION_FUNCTION, 1000, PPW_OP_FUNCTION, 20, 1};
    const char *same[] = {"work", "prog.c", NULL}, *other[] = {"work2", "prog.c", NULL};
    rf_record(&sr.run, PPW_RUN_REGION, &again, sizeof again, NULL, 0, same);
    rf_finish(&sr.run);
    write_run(&sr, "region-same");
    struct ppw_run *run = LOAD_OK();
    CHECK(run && run->region_count == 4);
    ppw_run_free(run);
    rf_record(&sr.run, PPW_RUN_REGION, &again, sizeof again, NULL, 0, other);
    rf_finish(&sr.run);
    write_run(&sr, "region-different");
    EXPECT_LOAD_ERROR(PPW_ECORRUPT, "region 2 defined twice, differently");
    sample_run_free(&sr);
}

/* Bytes flipped anywhere: an error or a load, never a crash or a hang. */
static void test_mutations_never_crash(void)
{
    struct sample_run sr;
    if (!build(&sr, 0))
        return;
    write_run(&sr, "mutations");
    struct run_file *files[] = {&sr.run, &sr.samples[0], &sr.events[1], &sr.profile[1]};
    const char *names[] = {"run.ppw", "t0.samples.ppw", "t1.events.ppw", "t1.profile.ppw"};
    uint32_t state = 12345;
    for (int round = 0; round < 400; round++) {
        int i = round % 4;
        struct run_file *f = files[i];
        state = state * 1103515245u + 12345u;
        size_t pos = (state >> 8) % f->b.len;
        unsigned char old = f->b.data[pos];
        f->b.data[pos] ^= (unsigned char)(1u << (state % 8));
        write_bytes(names[i], f->b.data, f->b.len);
        struct ppw_run *run = NULL;
        struct ppw_err err;
        int rc = ppw_run_load(dir, &run, &err);
        if (rc && (err.code != rc || !err.message[0]))
            FAIL_AT("%s byte %zu: rc=%d without a message", names[i], pos, rc);
        ppw_run_free(run);
        f->b.data[pos] = old;
        write_bytes(names[i], f->b.data, f->b.len);
    }
    sample_run_free(&sr);
}

/* The linear drift model: offsets +1000 ns at init (local 1e9) and +3000 ns
 * at finalize (local 3e9) give +2000 halfway; a rank that never finalized
 * keeps the init offset; a run of no MPI rank keeps its own clock. */
static void test_master_clock(void)
{
    struct ppw_run run = {0};
    CHECK(ppw_run_master_ns(&run, 123) == 123);
    run.has_mpi = true;
    run.mpi.init_local_ns = 1000000000;
    run.mpi.init_master_ns = 1000001000;
    CHECK(ppw_run_master_ns(&run, 5000000000) == 5000001000);
    run.mpi.fini_local_ns = 3000000000;
    run.mpi.fini_master_ns = 3000003000;
    CHECK(ppw_run_master_ns(&run, 1000000000) == 1000001000);
    CHECK(ppw_run_master_ns(&run, 2000000000) == 2000002000);
    CHECK(ppw_run_master_ns(&run, 3000000000) == 3000003000);
    CHECK(ppw_run_master_ns(&run, 4000000000) == 4000004000); /* extrapolated */
    run.mpi.init_master_ns = 999999000;                       /* a negative offset */
    run.mpi.fini_master_ns = 2999999000;
    CHECK(ppw_run_master_ns(&run, 2000000000) == 1999999000);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        workdir = argv[1];
    mkdir(workdir, 0755);
    RUN(test_valid_run);
    RUN(test_spawn_chain);
    RUN(test_spawn_chain_loop_by_hand);
    RUN(test_spawn_cycle);
    RUN(test_spawn_defined_twice);
    RUN(test_symbols);
    RUN(test_symbols_build_id_mismatch);
    RUN(test_plt_stubs);
    RUN(test_function_starts);
    RUN(test_check_binary);
    RUN(test_truncated);
    RUN(test_truncated_at_every_length);
    RUN(test_unwritten_thread_files);
    RUN(test_fifo);
    RUN(test_timer_sums);
    RUN(test_checksums);
    RUN(test_bytes_past_committed);
    RUN(test_committed_past_size);
    RUN(test_record_sizes);
    RUN(test_size_bit_flips);
    RUN(test_newer_minor_and_unknown_kinds);
    RUN(test_longer_header);
    RUN(test_newer_major);
    RUN(test_bad_headers);
    RUN(test_another_build_or_process);
    RUN(test_missing_files);
    RUN(test_thread_without_record);
    RUN(test_crashed_run);
    RUN(test_sample_names_missing_stack);
    RUN(test_stack_records);
    RUN(test_sample_blocks);
    RUN(test_strings);
    RUN(test_trace_and_timer_references);
    RUN(test_slot_size);
    RUN(test_run_records);
    RUN(test_modules_and_regions);
    RUN(test_mutations_never_crash);
    RUN(test_master_clock);
    return harness_exit();
}
