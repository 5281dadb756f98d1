/* Function-level symbolizer over ELF symbol tables: each module file's
 * symbols are read once into a store (ppw_symbol_files), which the
 * symbolizers of several runs may share; a symbolizer maps its run's
 * modules to the store's entries. */
#define _POSIX_C_SOURCE 200809L

#include "symbols.h"

#include <elf.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "read_elf.h"
#include "read_run.h"

struct sym {
    uint64_t addr, size;
    const char *name;
    unsigned rank; /* among aliases at one address, the lowest is kept */
};

/* One module file, keyed by the path opened and the build-id the run
 * recorded; read-only once loaded. */
struct module_syms {
    const char *path, *build_id; /* the key; path is the module's name when no_file */
    bool no_file;
    const char *error; /* why there are no names */
    const char *table; /* ".symtab" or ".dynsym" */
    const char *file;  /* where the names come from */
    struct sym *syms;  /* sorted by address, one per address */
    size_t count, cap;
    uint64_t *starts; /* function starts from the unwind table, sorted */
    size_t start_count;
};

struct ppw_symbol_files {
    pthread_mutex_t lock; /* guards everything below */
    const char *debug_dir;
    struct ppw_arena *arena; /* keys, names and messages */
    struct module_syms **entries;
    size_t count, cap;
};

struct ppw_symbols {
    const struct ppw_run *run;
    struct ppw_symbol_files *files;
    bool own_files;
    const struct module_syms **modules; /* parallel to run->modules; NULL until first used */
    size_t last;                        /* module of the previous lookup, a cheap cache */
};

int ppw_symbol_files_new(const char *debug_dir, struct ppw_symbol_files **out,
                         struct ppw_err *err)
{
    struct ppw_symbol_files *files = calloc(1, sizeof *files);
    *out = NULL;
    if (!files || !(files->arena = ppw_arena_new())) {
        free(files);
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    }
    if (pthread_mutex_init(&files->lock, NULL) != 0) {
        ppw_arena_free(files->arena);
        free(files);
        return ppw_err_set(err, PPW_ENOMEM, "cannot create a mutex");
    }
    files->debug_dir = debug_dir && debug_dir[0] ? debug_dir : "/usr/lib/debug";
    *out = files;
    return 0;
}

void ppw_symbol_files_free(struct ppw_symbol_files *files)
{
    if (!files)
        return;
    for (size_t i = 0; i < files->count; i++) {
        free(files->entries[i]->syms);
        free(files->entries[i]->starts);
        free(files->entries[i]);
    }
    free(files->entries);
    pthread_mutex_destroy(&files->lock);
    ppw_arena_free(files->arena);
    free(files);
}

int ppw_symbols_new_shared(const struct ppw_run *run, struct ppw_symbol_files *files,
                           struct ppw_symbols **out, struct ppw_err *err)
{
    struct ppw_symbols *syms = calloc(1, sizeof *syms);
    *out = NULL;
    if (syms) {
        syms->run = run;
        syms->files = files;
        syms->modules = calloc(run->module_count ? run->module_count : 1, sizeof *syms->modules);
    }
    if (!syms || !syms->modules) {
        ppw_symbols_free(syms);
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    }
    *out = syms;
    return 0;
}

int ppw_symbols_new(const struct ppw_run *run, const char *debug_dir, struct ppw_symbols **out,
                    struct ppw_err *err)
{
    struct ppw_symbol_files *files;
    int rc = ppw_symbol_files_new(debug_dir, &files, err);
    if (!rc && (rc = ppw_symbols_new_shared(run, files, out, err)) != 0)
        ppw_symbol_files_free(files);
    if (!rc)
        (*out)->own_files = true;
    return rc;
}

void ppw_symbols_free(struct ppw_symbols *syms)
{
    if (!syms)
        return;
    if (syms->own_files)
        ppw_symbol_files_free(syms->files);
    free(syms->modules);
    free(syms);
}

/* ---- loading one module ---- */

/* A formatted copy in the arena. */
static const char *keepf(struct ppw_symbol_files *files, const char *fmt, ...) PPW_PRINTF(2, 3);

static const char *keepf(struct ppw_symbol_files *files, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *copy = len >= 0 ? ppw_arena_alloc(files->arena, (size_t)len + 1) : NULL;
    if (!copy)
        return "out of memory";
    va_start(ap, fmt);
    vsnprintf(copy, (size_t)len + 1, fmt, ap);
    va_end(ap);
    return copy;
}

/* Among aliases at one address the lowest rank names the function: an
 * exported name before a local one (libppw's hidden ppw_fork_entry is the
 * __kmpc_fork_call the program called), then the public name (glibc's
 * clone is a weak alias of the global __clone), then global before weak. */
static unsigned symbol_rank(const char *name, unsigned binding)
{
    size_t underscores = strspn(name, "_");
    unsigned local = binding != STB_GLOBAL && binding != STB_WEAK;
    unsigned weak = binding == STB_WEAK;
    return local * 8 + (unsigned)(underscores < 3 ? underscores : 3) * 2 + weak;
}

struct add_ctx {
    struct ppw_symbol_files *files;
    struct module_syms *m;
};

static int push_symbol(struct module_syms *m, struct sym sym)
{
    if (m->count == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 256;
        struct sym *grown = realloc(m->syms, cap * sizeof *grown);
        if (!grown)
            return PPW_ENOMEM;
        m->syms = grown;
        m->cap = cap;
    }
    m->syms[m->count++] = sym;
    return 0;
}

static int add_symbol(void *ctx, const char *name, uint64_t addr, uint64_t size, unsigned binding)
{
    struct add_ctx *add = ctx;
    /* A static symbol table names versioned definitions "name@@VERSION". */
    const char *copy = keepf(add->files, "%.*s", (int)strcspn(name, "@"), name);
    return push_symbol(add->m, (struct sym){addr, size, copy, symbol_rank(name, binding)});
}

/* A PLT stub, named as perf and gdb do ("free@plt"): kept whole, and
 * ranked below any symbol at its address. */
static int add_plt_stub(void *ctx, const char *name, uint64_t addr, uint64_t size)
{
    struct add_ctx *add = ctx;
    return push_symbol(add->m, (struct sym){addr, size, keepf(add->files, "%s", name), UINT_MAX});
}

static int compare_sym(const void *a, const void *b)
{
    const struct sym *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Sorts by address and keeps the best-ranked name of each address. */
static void sort_symbols(struct module_syms *m)
{
    if (m->count == 0)
        return;
    qsort(m->syms, m->count, sizeof *m->syms, compare_sym);
    size_t n = 1;
    for (size_t i = 1; i < m->count; i++)
        if (m->syms[i].addr != m->syms[n - 1].addr)
            m->syms[n++] = m->syms[i];
    m->count = n;
}

/* The file to open for module: its path, under the run's cwd when relative;
 * NULL for a name without a slash (the vDSO), which is no file. */
static const char *module_file(struct ppw_symbols *syms, const struct ppw_run_module *module)
{
    const struct ppw_run *run = syms->run;
    if (!strchr(module->path, '/'))
        return NULL;
    if (module->path[0] == '/' || !run->has_info || !run->info.cwd[0])
        return module->path;
    return keepf(syms->files, "%s/%s", run->info.cwd, module->path);
}

/* Replaces m's symbols by the .symtab of the module's separate debug file,
 * if there is one with the same build-id. */
static void load_debug_file(struct ppw_symbol_files *files, struct module_syms *m)
{
    const char *id = m->build_id;
    struct ppw_elf *elf = NULL;
    struct ppw_err err;
    const char *table = NULL;
    if (strlen(id) < 4)
        return;
    const char *path = keepf(files, "%s/.build-id/%.2s/%s.debug", files->debug_dir, id, id + 2);
    if (ppw_elf_open(path, &elf, &err) != 0)
        return;
    struct module_syms debug = {0};
    struct add_ctx ctx = {files, &debug};
    if (strcmp(ppw_elf_build_id(elf), id) == 0 &&
        ppw_elf_each_function(elf, add_symbol, &ctx, &table, &err) == 0 && table &&
        strcmp(table, ".symtab") == 0) {
        free(m->syms);
        m->syms = debug.syms;
        m->count = debug.count;
        m->table = table;
        m->file = path;
    } else {
        free(debug.syms);
    }
    ppw_elf_close(elf);
}

static void read_module(struct ppw_symbol_files *files, struct module_syms *m,
                        struct ppw_elf *elf)
{
    struct ppw_err err;
    struct add_ctx ctx = {files, m};
    const char *id = ppw_elf_build_id(elf);
    int rc;
    if (m->build_id[0] && strcmp(id, m->build_id) != 0) {
        m->error = keepf(files,
                         "%s: build-id %s differs from the run's %s (the file changed "
                         "since the run)",
                         m->path, id[0] ? id : "(none)", m->build_id);
        return;
    }
    if ((rc = ppw_elf_each_function(elf, add_symbol, &ctx, &m->table, &err)) != 0) {
        m->error = rc == PPW_ENOMEM ? "out of memory" : keepf(files, "%s", err.message);
        return;
    }
    m->file = m->path;
    if (!m->table || strcmp(m->table, ".symtab") != 0)
        load_debug_file(files, m);
    if (m->table && (rc = ppw_elf_each_plt_stub(elf, add_plt_stub, &ctx)) != 0) {
        m->error = "out of memory";
        return;
    }
    if (!m->table)
        m->error = keepf(files, "%s: no symbol table", m->path);
    if (ppw_elf_function_starts(elf, &m->starts, &m->start_count, &err) != 0)
        m->start_count = 0; /* names still work without them */
}

static void load_entry(struct ppw_symbol_files *files, struct module_syms *m)
{
    struct ppw_err err;
    struct ppw_elf *elf = NULL;
    if (m->no_file) {
        m->error = keepf(files, "%s: a name, not a file (the vDSO has none)", m->path);
        return;
    }
    if (ppw_elf_open(m->path, &elf, &err) != 0) {
        m->error = keepf(files, "%s", err.message);
        return;
    }
    read_module(files, m, elf);
    ppw_elf_close(elf);
    if (m->error) {
        free(m->syms);
        m->syms = NULL;
        m->count = 0;
    }
    sort_symbols(m);
}

/* The store's entry for (path, no_file, build_id), read on first use; NULL
 * when out of memory.  Called with the lock held. */
static const struct module_syms *entry_for(struct ppw_symbol_files *files, const char *path,
                                           bool no_file, const char *build_id)
{
    for (size_t i = 0; i < files->count; i++) {
        const struct module_syms *m = files->entries[i];
        if (m->no_file == no_file && strcmp(m->path, path) == 0 &&
            strcmp(m->build_id, build_id) == 0)
            return m;
    }
    struct module_syms *m = calloc(1, sizeof *m);
    if (!m || !ppw_array_reserve(&files->entries, &files->cap, files->count + 1,
                                 sizeof *files->entries)) {
        free(m);
        return NULL;
    }
    m->build_id = keepf(files, "%s", build_id);
    m->path = keepf(files, "%s", path);
    m->no_file = no_file;
    files->entries[files->count++] = m;
    load_entry(files, m);
    return m;
}

static const struct module_syms out_of_memory = {.error = "out of memory", .build_id = ""};

/* The run's module index, loaded. */
static const struct module_syms *load_module(struct ppw_symbols *syms, size_t index)
{
    if (syms->modules[index])
        return syms->modules[index];
    const struct ppw_run_module *module = &syms->run->modules[index];
    struct ppw_symbol_files *files = syms->files;
    pthread_mutex_lock(&files->lock);
    const char *path = module_file(syms, module);
    const struct module_syms *m =
        entry_for(files, path ? path : module->path, !path, module->build_id);
    pthread_mutex_unlock(&files->lock);
    return syms->modules[index] = m ? m : &out_of_memory;
}

/* ---- lookups ---- */

static bool holds(const struct ppw_run_module *module, uint64_t pc)
{
    return pc >= module->lo && pc < module->hi;
}

/* The module holding pc: the last one loaded and not unloaded, else the
 * last one at all (a sample cannot be ordered against dlclose). */
static long find_module(struct ppw_symbols *syms, uint64_t pc)
{
    const struct ppw_run *run = syms->run;
    if (syms->last < run->module_count && holds(&run->modules[syms->last], pc) &&
        !run->modules[syms->last].unloaded)
        return (long)syms->last;
    long any = -1;
    for (size_t i = run->module_count; i-- > 0;) {
        if (!holds(&run->modules[i], pc))
            continue;
        if (!run->modules[i].unloaded) {
            syms->last = i;
            return (long)i;
        }
        if (any < 0)
            any = (long)i;
    }
    return any;
}

static const struct sym *find_function(const struct module_syms *m, uint64_t addr)
{
    size_t lo = 0, hi = m->count; /* the last symbol at or below addr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->syms[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct sym *s = &m->syms[lo - 1];
    if (s->size && addr - s->addr >= s->size)
        return NULL; /* past its end: in a gap between functions */
    return s;
}

/* The last function start at or below addr in the unwind table, or 0. */
static uint64_t find_start(const struct module_syms *m, uint64_t addr)
{
    size_t lo = 0, hi = m->start_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->starts[mid] <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? m->starts[lo - 1] : 0;
}

void ppw_symbols_lookup(struct ppw_symbols *syms, uint64_t pc, bool exact, struct ppw_symbol *out)
{
    *out = (struct ppw_symbol){0};
    long index = find_module(syms, pc);
    if (index < 0)
        return;
    const struct ppw_run_module *module = &syms->run->modules[index];
    const struct module_syms *m = load_module(syms, (size_t)index);
    out->module = module;
    out->offset = pc - module->load_bias;
    uint64_t addr = out->offset - (exact || out->offset == 0 ? 0 : 1);
    const struct sym *s = m->error ? NULL : find_function(m, addr);
    out->function = s ? s->name : NULL;
    out->function_start = s ? s->addr : find_start(m, addr);
}

void ppw_symbols_frame(struct ppw_symbols *syms, const uint64_t *frames, size_t i, uint16_t flags,
                       struct ppw_symbol *out)
{
    ppw_symbols_lookup(syms, frames[i], i == 0 && (flags & PPW_STACK_LEAF_PC), out);
}

/* module's cache, loaded; NULL when module is not one of the run's. */
static const struct module_syms *loaded(struct ppw_symbols *syms,
                                        const struct ppw_run_module *module)
{
    const struct ppw_run *run = syms->run;
    if (module < run->modules || module >= run->modules + run->module_count)
        return NULL;
    return load_module(syms, (size_t)(module - run->modules));
}

const char *ppw_symbols_module_error(struct ppw_symbols *syms, const struct ppw_run_module *module)
{
    const struct module_syms *m = loaded(syms, module);
    return m ? m->error : "not a module of the run";
}

const char *ppw_symbols_module_table(struct ppw_symbols *syms, const struct ppw_run_module *module)
{
    const struct module_syms *m = loaded(syms, module);
    return m && !m->error ? m->table : NULL;
}

const char *ppw_symbols_module_file(struct ppw_symbols *syms, const struct ppw_run_module *module)
{
    const struct module_syms *m = loaded(syms, module);
    return m && !m->error ? m->file : NULL;
}
