/* Source frames from DWARF, with libdwarf.
 *
 * Per module, on its first lookup: the compile units by address (from
 * their DIEs' ranges).  Per compile unit, on the first lookup that lands in
 * it: its line rows sorted by address, its file names spelled as the static
 * graph spells them, and the ranges of its subprograms and inlined
 * subroutines flattened into disjoint segments that each name the innermost
 * scope covering them.  A lookup is then two binary searches and a walk up
 * the inlined chain, and its frames are cached per PC. */
#define _POSIX_C_SOURCE 200809L

#include "lines.h"

#include <dwarf.h>
#include <libdwarf.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "read_run.h"
#include "symbols.h"

enum {
    MAX_FRAMES = 64,     /* frames kept per PC: a deeper inlined chain loses its outer end */
    MAX_DIE_DEPTH = 64,  /* DIE nesting walked below a compile unit */
    MAX_ORIGIN_HOPS = 8, /* abstract_origin / specification links followed for a name */
};

struct row {
    uint64_t addr;
    uint32_t file, line, col;
    uint32_t order; /* in the line program: ties keep it */
    bool end;       /* ends a sequence: no line from addr on */
};

/* A subprogram or inlined subroutine that has code. */
struct scope {
    int32_t parent; /* the enclosing scope in the unit, -1 when none */
    uint32_t depth; /* scopes above it */
    bool inlined, artificial;
    const char *name, *linkage;
    uint32_t decl_file;                      /* UINT32_MAX when unknown */
    uint32_t call_file, call_line, call_col; /* inlined: where it was inlined */
};

/* [lo, the next segment's lo): index, -1 for nothing. */
struct seg {
    uint64_t lo;
    int32_t index;
};

struct interval {
    uint64_t lo, hi;
    int32_t index;
    uint32_t depth; /* the deepest covering interval names a segment */
};

struct intervals {
    struct interval *items;
    size_t count, cap;
};

struct unit {
    Dwarf_Off offset; /* of its DIE in .debug_info */
    Dwarf_Half version;
    Dwarf_Addr base; /* DW_AT_low_pc: the base of DWARF 4 range lists */
    bool loaded;
    const char *comp_dir;
    const char **files; /* by the line table's file number; NULL entries unknown */
    size_t file_count;
    struct row *rows;
    size_t row_count, row_cap;
    struct scope *scopes;
    size_t scope_count, scope_cap;
    struct seg *segs;
    size_t seg_count;
};

/* One ELF file's DWARF (the module's, or its debug file), keyed by its path;
 * units are read lazily, under the store's lock. */
struct module_lines {
    const char *file;
    const char *error; /* why there are no source lines */
    Dwarf_Debug dbg;
    Dwarf_Error err; /* the last libdwarf error, freed by ok() */
    struct unit *units;
    size_t unit_count, unit_cap;
    struct seg *segs; /* units by address */
    size_t seg_count;
};

struct cached {
    uint64_t pc;
    uint32_t first, count; /* in ppw_lines.frames */
    bool used, exact, near;
};

struct ppw_dwarf_files {
    pthread_mutex_t lock; /* guards everything below and the modules' lazy loading */
    struct ppw_arena *arena; /* names and messages */
    struct module_lines **modules;
    size_t module_count, module_cap;
};

/* A run module's DWARF: the store's, or why there is none. */
struct run_module {
    const struct ppw_run_module *module;
    struct module_lines *lines; /* NULL: see error */
    const char *error;
};

struct ppw_lines {
    struct ppw_symbols *syms;
    struct ppw_dwarf_files *files;
    bool own_files;
    struct run_module *modules;
    size_t module_count, module_cap, last;
    struct cached *cache; /* open addressing, a power of two */
    size_t cache_cap, cache_count;
    struct ppw_source_frame *frames;
    size_t frame_count, frame_cap;
};

/* ---- memory ---- */

/* Makes room for need items of size bytes in *itemsp (a T **). */
static bool grow(void *itemsp, size_t *cap, size_t need, size_t size)
{
    void *items;
    if (need <= *cap)
        return true;
    size_t next = *cap ? *cap : 16;
    while (next < need)
        next *= 2;
    memcpy(&items, itemsp, sizeof items);
    if (next > SIZE_MAX / size || !(items = realloc(items, next * size)))
        return false;
    memcpy(itemsp, &items, sizeof items);
    *cap = next;
    return true;
}

static const char *keepf(struct ppw_dwarf_files *files, const char *fmt, ...) PPW_PRINTF(2, 3);

/* A formatted copy in the arena; NULL when out of memory. */
static const char *keepf(struct ppw_dwarf_files *files, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *copy = len >= 0 ? ppw_arena_alloc(files->arena, (size_t)len + 1) : NULL;
    if (copy) {
        va_start(ap, fmt);
        vsnprintf(copy, (size_t)len + 1, fmt, ap);
        va_end(ap);
    }
    return copy;
}

/* ---- libdwarf calls ---- */

/* res is DW_DLV_OK; an error is dropped (the caller treats it as absence). */
static bool ok(struct module_lines *m, int res)
{
    if (res == DW_DLV_ERROR && m->err) {
        dwarf_dealloc_error(m->dbg, m->err);
        m->err = NULL;
    }
    return res == DW_DLV_OK;
}

static bool attr_udata(struct module_lines *m, Dwarf_Die die, Dwarf_Half name, Dwarf_Unsigned *out)
{
    Dwarf_Attribute attr = NULL;
    if (!ok(m, dwarf_attr(die, name, &attr, &m->err)))
        return false;
    Dwarf_Signed sdata = 0;
    bool found = ok(m, dwarf_formudata(attr, out, &m->err));
    if (!found && ok(m, dwarf_formsdata(attr, &sdata, &m->err)) && sdata >= 0) {
        *out = (Dwarf_Unsigned)sdata; /* DW_FORM_implicit_const */
        found = true;
    }
    dwarf_dealloc_attribute(attr);
    return found;
}

/* An unsigned attribute that fits 32 bits, else fallback. */
static uint32_t attr_u32(struct module_lines *m, Dwarf_Die die, Dwarf_Half name, uint32_t fallback)
{
    Dwarf_Unsigned value = 0;
    return attr_udata(m, die, name, &value) && value < UINT32_MAX ? (uint32_t)value : fallback;
}

static bool attr_flag(struct module_lines *m, Dwarf_Die die, Dwarf_Half name)
{
    Dwarf_Bool flag = 0;
    Dwarf_Attribute attr = NULL;
    if (!ok(m, dwarf_attr(die, name, &attr, &m->err)))
        return false;
    if (!ok(m, dwarf_formflag(attr, &flag, &m->err)))
        flag = 0;
    dwarf_dealloc_attribute(attr);
    return flag != 0;
}

/* The string attribute name of die, copied, or NULL. */
static const char *attr_string(struct ppw_dwarf_files *files, struct module_lines *m, Dwarf_Die die,
                               Dwarf_Half name)
{
    Dwarf_Attribute attr = NULL;
    char *text = NULL;
    if (!ok(m, dwarf_attr(die, name, &attr, &m->err)))
        return NULL;
    const char *copy = NULL;
    if (ok(m, dwarf_formstring(attr, &text, &m->err)) && text)
        copy = keepf(files, "%s", text);
    dwarf_dealloc_attribute(attr);
    return copy;
}

static bool attr_ref(struct module_lines *m, Dwarf_Die die, Dwarf_Half name, Dwarf_Off *out)
{
    Dwarf_Attribute attr = NULL;
    if (!ok(m, dwarf_attr(die, name, &attr, &m->err)))
        return false;
    bool found = ok(m, dwarf_global_formref(attr, out, &m->err));
    dwarf_dealloc_attribute(attr);
    return found;
}

/* ---- address ranges ---- */

static bool add_interval(struct intervals *iv, uint64_t lo, uint64_t hi, int32_t index,
                         uint32_t depth)
{
    if (lo == 0 || lo >= hi) /* empty, or code the linker discarded (tombstone 0) */
        return true;
    if (!grow(&iv->items, &iv->cap, iv->count + 1, sizeof *iv->items))
        return false;
    iv->items[iv->count++] = (struct interval){lo, hi, index, depth};
    return true;
}

/* DWARF 5 DW_AT_ranges (.debug_rnglists): libdwarf cooks every entry into
 * addresses. */
static void rnglists(struct module_lines *m, Dwarf_Attribute attr, Dwarf_Half form,
                     Dwarf_Unsigned value, struct intervals *iv, int32_t index, uint32_t depth)
{
    Dwarf_Rnglists_Head head = NULL;
    Dwarf_Unsigned count = 0, global = 0;
    if (!ok(m, dwarf_rnglists_get_rle_head(attr, form, value, &head, &count, &global, &m->err)))
        return;
    for (Dwarf_Unsigned i = 0; i < count; i++) {
        unsigned length = 0, code = 0;
        Dwarf_Unsigned raw1 = 0, raw2 = 0, lo = 0, hi = 0;
        Dwarf_Bool unavailable = 0;
        if (!ok(m, dwarf_get_rnglists_entry_fields_a(head, i, &length, &code, &raw1, &raw2,
                                                     &unavailable, &lo, &hi, &m->err)))
            break;
        if (!unavailable && code != DW_RLE_end_of_list && code != DW_RLE_base_address &&
            code != DW_RLE_base_addressx && !add_interval(iv, lo, hi, index, depth))
            break;
    }
    dwarf_dealloc_rnglists_head(head);
}

/* DWARF 2-4 DW_AT_ranges (.debug_ranges): offsets from the unit's base
 * address, which selection entries change. */
static void ranges(struct module_lines *m, const struct unit *u, Dwarf_Die die,
                   Dwarf_Unsigned offset, struct intervals *iv, int32_t index, uint32_t depth)
{
    Dwarf_Ranges *list = NULL;
    Dwarf_Signed count = 0;
    Dwarf_Unsigned bytes = 0;
    Dwarf_Off real = 0;
    Dwarf_Addr base = u->base;
    if (!ok(m, dwarf_get_ranges_b(m->dbg, offset, die, &real, &list, &count, &bytes, &m->err)))
        return;
    for (Dwarf_Signed i = 0; i < count; i++) {
        if (list[i].dwr_type == DW_RANGES_ADDRESS_SELECTION)
            base = list[i].dwr_addr2;
        else if (list[i].dwr_type == DW_RANGES_ENTRY &&
                 !add_interval(iv, base + list[i].dwr_addr1, base + list[i].dwr_addr2, index,
                               depth))
            break;
    }
    dwarf_ranges_dealloc(m->dbg, list, count);
}

/* Appends die's code ranges to iv; returns how many it has. */
static size_t die_ranges(struct module_lines *m, const struct unit *u, Dwarf_Die die,
                         struct intervals *iv, int32_t index, uint32_t depth)
{
    size_t before = iv->count;
    Dwarf_Addr lo = 0, hi = 0;
    Dwarf_Half form = 0;
    enum Dwarf_Form_Class form_class = DW_FORM_CLASS_UNKNOWN;
    if (ok(m, dwarf_lowpc(die, &lo, &m->err)) &&
        ok(m, dwarf_highpc_b(die, &hi, &form, &form_class, &m->err))) {
        add_interval(iv, lo, form_class == DW_FORM_CLASS_CONSTANT ? lo + hi : hi, index, depth);
        return iv->count - before;
    }
    Dwarf_Attribute attr = NULL;
    Dwarf_Unsigned value = 0;
    Dwarf_Off offset = 0;
    if (!ok(m, dwarf_attr(die, DW_AT_ranges, &attr, &m->err)))
        return 0;
    if (!ok(m, dwarf_whatform(attr, &form, &m->err))) {
        form = 0;
    } else if (form == DW_FORM_rnglistx) {
        if (ok(m, dwarf_formudata(attr, &value, &m->err)))
            rnglists(m, attr, form, value, iv, index, depth);
    } else if (ok(m, dwarf_global_formref(attr, &offset, &m->err)) ||
               ok(m, dwarf_formudata(attr, &offset, &m->err))) {
        if (u->version >= 5)
            rnglists(m, attr, form, offset, iv, index, depth);
        else
            ranges(m, u, die, offset, iv, index, depth);
    }
    dwarf_dealloc_attribute(attr);
    return iv->count - before;
}

/* ---- segments: the deepest interval covering each address ---- */

static int compare_interval(const void *a, const void *b)
{
    const struct interval *x = a, *y = b;
    return x->lo != y->lo ? (x->lo < y->lo ? -1 : 1) : 0;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x != y ? (x < y ? -1 : 1) : 0;
}

/* Whether interval a names a segment rather than b: deeper, then later
 * starting, then later in the list. */
static bool above(const struct interval *iv, size_t a, size_t b)
{
    if (iv[a].depth != iv[b].depth)
        return iv[a].depth > iv[b].depth;
    if (iv[a].lo != iv[b].lo)
        return iv[a].lo > iv[b].lo;
    return a > b;
}

static void heap_push(const struct interval *iv, size_t *heap, size_t *n, size_t item)
{
    size_t i = (*n)++;
    for (; i > 0 && above(iv, item, heap[(i - 1) / 2]); i = (i - 1) / 2)
        heap[i] = heap[(i - 1) / 2];
    heap[i] = item;
}

static void heap_pop(const struct interval *iv, size_t *heap, size_t *n)
{
    size_t item = heap[--*n], i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= *n)
            break;
        if (child + 1 < *n && above(iv, heap[child + 1], heap[child]))
            child++;
        if (!above(iv, heap[child], item))
            break;
        heap[i] = heap[child];
        i = child;
    }
    if (*n)
        heap[i] = item;
}

/* Flattens iv (sorted here) into disjoint segments, each naming the
 * deepest interval that covers it.  Sweeps the boundaries with a heap of the
 * intervals begun so far, dropping ended ones when they surface.  False when
 * out of memory. */
static bool flatten(struct intervals *iv, struct seg **out, size_t *out_count)
{
    size_t n = iv->count, nb = 0, nh = 0, ns = 0, next = 0;
    uint64_t *bounds = malloc((2 * n + 1) * sizeof *bounds);
    size_t *heap = malloc((n + 1) * sizeof *heap);
    struct seg *segs = malloc((2 * n + 1) * sizeof *segs);
    if (!bounds || !heap || !segs) {
        free(bounds), free(heap), free(segs);
        return false;
    }
    if (n) /* else items may be NULL */
        qsort(iv->items, n, sizeof *iv->items, compare_interval);
    for (size_t i = 0; i < n; i++) {
        bounds[nb++] = iv->items[i].lo;
        bounds[nb++] = iv->items[i].hi;
    }
    qsort(bounds, nb, sizeof *bounds, compare_u64); /* bounds is never NULL */
    for (size_t b = 0; b < nb; b++) {
        if (b && bounds[b] == bounds[b - 1])
            continue;
        while (next < n && iv->items[next].lo == bounds[b])
            heap_push(iv->items, heap, &nh, next++);
        while (nh && iv->items[heap[0]].hi <= bounds[b])
            heap_pop(iv->items, heap, &nh);
        int32_t index = nh ? iv->items[heap[0]].index : -1;
        if (ns ? segs[ns - 1].index != index : index >= 0)
            segs[ns++] = (struct seg){bounds[b], index};
    }
    free(bounds);
    free(heap);
    *out = segs;
    *out_count = ns;
    return true;
}

/* The index of the segment holding addr, -1 for none. */
static int32_t seg_find(const struct seg *segs, size_t count, uint64_t addr)
{
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (segs[mid].lo <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? segs[lo - 1].index : -1;
}

/* ---- file names ---- */

/* Length of the leading directories that absolute paths a and b share,
 * not counting the root: 0 when they share only "/". */
static size_t shared_dirs(const char *a, const char *b)
{
    size_t shared = 0, i = 0;
    while (a[i] && a[i] == b[i]) {
        i++;
        if ((a[i] == '/' || !a[i]) && (b[i] == '/' || !b[i]) && i > 1)
            shared = i;
    }
    return shared;
}

/* The file as clang's DIFile names it, which is how the static graph
 * spells it.  clang's createFile makes an absolute path relative to the
 * deepest directory it shares with the compilation directory, unless only
 * "/" is shared; LLVM's line table then splits the name into a directory
 * (relative to the compilation directory, or absolute) and a base name.
 * Joining them and redoing the stripping gives the name back: src/util.h,
 * src/../inc/x.h, /usr/include/stdio.h, and src/prog.c for a unit compiled
 * as /work/src/prog.c in /work/build. */
static const char *spell_file(struct ppw_dwarf_files *files, const char *comp_dir, const char *dir,
                              const char *name)
{
    if (!name)
        return NULL;
    bool dir_absolute = dir && dir[0] == '/';
    if (name[0] != '/' && dir && dir[0] && !dir_absolute)
        return keepf(files, "%s/%s", dir, name);
    if (name[0] != '/' && !dir_absolute)
        return keepf(files, "%s", name);
    const char *full = name[0] == '/' ? keepf(files, "%s", name) : keepf(files, "%s/%s", dir, name);
    size_t shared = full && comp_dir && comp_dir[0] == '/' ? shared_dirs(comp_dir, full) : 0;
    return shared && full[shared] == '/' ? full + shared + 1 : full;
}

/* The unit's file names by the numbers its rows and DW_AT_call_file use
 * (from 0 in DWARF 5, from 1 before).  Directory 0 is the compilation
 * directory.  libdwarf 20210528 numbers the include directories as the
 * line table does in both versions (DWARF 4's from 1, DWARF 5's from 0),
 * whatever its header says. */
static void load_files(struct ppw_dwarf_files *files, struct module_lines *m, struct unit *u,
                       Dwarf_Line_Context ctx)
{
    Dwarf_Signed base = 0, count = 0, end = 0;
    if (!ok(m, dwarf_srclines_files_indexes(ctx, &base, &count, &end, &m->err)) || base < 0 ||
        end <= base || !(u->files = calloc((size_t)end, sizeof *u->files)))
        return;
    u->file_count = (size_t)end;
    for (Dwarf_Signed i = base; i < end; i++) {
        const char *name = NULL, *dir = NULL;
        Dwarf_Unsigned dir_index = 0, mtime = 0, length = 0;
        Dwarf_Form_Data16 *md5 = NULL;
        if (!ok(m, dwarf_srclines_files_data_b(ctx, i, &name, &dir_index, &mtime, &length, &md5,
                                               &m->err)))
            continue;
        if (dir_index > 0 &&
            (dir_index > INT32_MAX ||
             !ok(m, dwarf_srclines_include_dir_data(ctx, (Dwarf_Signed)dir_index, &dir, &m->err))))
            dir = NULL;
        u->files[i] = spell_file(files, u->comp_dir, dir_index > 0 ? dir : NULL, name);
    }
}

static const char *unit_file(const struct unit *u, uint32_t index)
{
    return index < u->file_count ? u->files[index] : NULL;
}

/* ---- line rows ---- */

static int compare_row(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    if (x->end != y->end) /* a sequence ends before the next one starts */
        return x->end ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Whether line ends its sequence.  libdwarf before 2026 also says so of a
 * row that begins an epilogue (libdwarf-code issue 322): such a row is
 * not an end (DW_LNE_end_sequence resets epilogue_begin). */
static bool ends_sequence(struct module_lines *m, Dwarf_Line line)
{
    Dwarf_Bool end = 0, prologue_end = 0, epilogue_begin = 0;
    Dwarf_Unsigned isa = 0, discriminator = 0;
    if (!ok(m, dwarf_lineendsequence(line, &end, &m->err)) || !end)
        return false;
    return !ok(m, dwarf_prologue_end_etc(line, &prologue_end, &epilogue_begin, &isa, &discriminator,
                                         &m->err)) ||
           !epilogue_begin;
}

/* Appends the rows of a line program; a sequence at address 0 is code the
 * linker discarded and is dropped. */
static void load_rows(struct module_lines *m, struct unit *u, Dwarf_Line_Context ctx)
{
    Dwarf_Line *list = NULL;
    Dwarf_Signed count = 0;
    size_t start = u->row_count;
    if (!ok(m, dwarf_srclines_from_linecontext(ctx, &list, &count, &m->err)) || count <= 0 ||
        !grow(&u->rows, &u->row_cap, u->row_count + (size_t)count, sizeof *u->rows))
        return;
    for (Dwarf_Signed i = 0; i < count; i++) {
        Dwarf_Addr addr = 0;
        Dwarf_Unsigned line = 0, col = 0, file = 0;
        if (!ok(m, dwarf_lineaddr(list[i], &addr, &m->err)))
            continue;
        bool end = ends_sequence(m, list[i]);
        if (!ok(m, dwarf_lineno(list[i], &line, &m->err)))
            line = 0;
        if (!ok(m, dwarf_lineoff_b(list[i], &col, &m->err)))
            col = 0;
        if (!ok(m, dwarf_line_srcfileno(list[i], &file, &m->err)))
            file = UINT32_MAX;
        /* A row at its sequence's end address covers nothing; kept, it
         * would sort after the end row and lend its line to whatever code
         * follows (another sequence, which may start there). */
        while (end && u->row_count > start && u->rows[u->row_count - 1].addr == addr)
            u->row_count--;
        u->rows[u->row_count] = (struct row){addr,
                                             file > UINT32_MAX ? UINT32_MAX : (uint32_t)file,
                                             line > UINT32_MAX ? 0 : (uint32_t)line,
                                             col > UINT32_MAX ? 0 : (uint32_t)col,
                                             (uint32_t)u->row_count,
                                             end};
        u->row_count++;
        if (end) {
            if (u->rows[start].addr == 0)
                u->row_count = start;
            start = u->row_count;
        }
    }
    u->row_count = start; /* a sequence without its end is dropped */
}

/* The row that covers addr, or NULL. */
static const struct row *row_find(const struct unit *u, uint64_t addr)
{
    size_t lo = 0, hi = u->row_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (u->rows[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo && !u->rows[lo - 1].end ? &u->rows[lo - 1] : NULL;
}

/* ---- scopes ---- */

/* name, linkage name and declaring file of a scope, through its abstract
 * origin or specification when it has none itself.  artificial likewise. */
static void scope_names(struct ppw_dwarf_files *files, struct module_lines *m, Dwarf_Die die,
                        struct scope *s)
{
    Dwarf_Die owned = NULL;
    for (int hops = 0; die && hops <= MAX_ORIGIN_HOPS; hops++) {
        Dwarf_Off ref = 0;
        Dwarf_Die next = NULL;
        if (!s->name)
            s->name = attr_string(files, m, die, DW_AT_name);
        if (!s->linkage)
            s->linkage = attr_string(files, m, die, DW_AT_linkage_name);
        if (!s->linkage)
            s->linkage = attr_string(files, m, die, DW_AT_MIPS_linkage_name);
        s->artificial |= attr_flag(m, die, DW_AT_artificial);
        if (s->decl_file == UINT32_MAX)
            s->decl_file = attr_u32(m, die, DW_AT_decl_file, UINT32_MAX);
        if ((s->name && s->linkage && s->decl_file != UINT32_MAX) ||
            !(attr_ref(m, die, DW_AT_abstract_origin, &ref) ||
              attr_ref(m, die, DW_AT_specification, &ref)) ||
            !ok(m, dwarf_offdie_b(m->dbg, ref, true, &next, &m->err)))
            break;
        if (owned)
            dwarf_dealloc_die(owned);
        die = owned = next;
    }
    if (owned)
        dwarf_dealloc_die(owned);
}

/* Records die (a subprogram or inlined subroutine) as a scope when it has
 * code; returns its index, or -1. */
static int32_t add_scope(struct ppw_dwarf_files *files, struct module_lines *m, struct unit *u,
                         Dwarf_Die die, Dwarf_Half tag, int32_t parent, struct intervals *iv)
{
    int32_t index = (int32_t)u->scope_count;
    uint32_t depth = parent >= 0 ? u->scopes[parent].depth + 1 : 0;
    if (u->scope_count >= INT32_MAX ||
        !grow(&u->scopes, &u->scope_cap, u->scope_count + 1, sizeof *u->scopes) ||
        !die_ranges(m, u, die, iv, index, depth))
        return -1;
    struct scope *s = &u->scopes[u->scope_count++];
    *s = (struct scope){.parent = parent,
                        .depth = depth,
                        .inlined = tag == DW_TAG_inlined_subroutine,
                        .decl_file = UINT32_MAX};
    scope_names(files, m, die, s);
    if (s->inlined) {
        s->call_file = attr_u32(m, die, DW_AT_call_file, UINT32_MAX);
        s->call_line = attr_u32(m, die, DW_AT_call_line, 0);
        s->call_col = attr_u32(m, die, DW_AT_call_column, 0);
    }
    return index;
}

/* Walks parent's children for scopes with code, scope being the innermost
 * one around them. */
static void walk(struct ppw_dwarf_files *files, struct module_lines *m, struct unit *u, Dwarf_Die parent,
                 int32_t scope, unsigned depth, struct intervals *iv)
{
    Dwarf_Die child = NULL;
    if (depth > MAX_DIE_DEPTH || !ok(m, dwarf_child(parent, &child, &m->err)))
        return;
    while (child) {
        Dwarf_Half tag = 0;
        Dwarf_Die next = NULL;
        if (!ok(m, dwarf_tag(child, &tag, &m->err)))
            tag = 0;
        if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
            int32_t inner = add_scope(files, m, u, child, tag, scope, iv);
            if (inner >= 0) /* else abstract, or a declaration: no code below */
                walk(files, m, u, child, inner, depth + 1, iv);
        } else if (tag == DW_TAG_lexical_block || tag == DW_TAG_namespace ||
                   tag == DW_TAG_try_block || tag == DW_TAG_catch_block) {
            walk(files, m, u, child, scope, depth + 1, iv);
        }
        if (!ok(m, dwarf_siblingof_b(m->dbg, child, true, &next, &m->err)))
            next = NULL;
        dwarf_dealloc_die(child);
        child = next;
    }
}

/* libdwarf 20210528 starts each DWARF 5 sequence in file 0 where the
 * standard says 1, so the rows before a sequence's first DW_LNS_set_file to
 * a file other than 0 all read as file 0: truly file 1 up to an unseen
 * switch to 0, then file 0.  When files 0 and 1 are spelled differently,
 * the scopes decide by their DW_AT_decl_file: rows in scopes declared in
 * file 1 are in file 1, up to the first row in a scope declared elsewhere. */
static void fix_first_files(struct unit *u, Dwarf_Unsigned version)
{
    if (version < 5 || u->file_count < 2 || !u->files[0] || !u->files[1] ||
        strcmp(u->files[0], u->files[1]) == 0)
        return;
    for (size_t start = 0, i; start < u->row_count; start = i + 1) {
        bool in_1 = false; /* a row of this run is in a scope declared in file 1 */
        for (i = start; i < u->row_count && u->rows[i].file == 0 && !u->rows[i].end; i++) {
            int32_t si = seg_find(u->segs, u->seg_count, u->rows[i].addr);
            uint32_t decl = si >= 0 ? u->scopes[si].decl_file : UINT32_MAX;
            if (decl != 1 && decl != UINT32_MAX)
                break;
            in_1 |= decl == 1;
            if (in_1)
                u->rows[i].file = 1;
        }
        while (i < u->row_count && !u->rows[i].end)
            i++;
    }
}

/* Reads unit's scopes and line table; what fails to read stays unknown. */
static void load_unit(struct ppw_dwarf_files *files, struct module_lines *m, struct unit *u)
{
    Dwarf_Die die = NULL;
    Dwarf_Line_Context ctx = NULL;
    Dwarf_Unsigned version = 0;
    Dwarf_Small tables = 0;
    struct intervals iv = {0};
    u->loaded = true;
    if (!ok(m, dwarf_offdie_b(m->dbg, u->offset, true, &die, &m->err)))
        return;
    walk(files, m, u, die, -1, 0, &iv);
    if (!flatten(&iv, &u->segs, &u->seg_count))
        u->seg_count = 0;
    free(iv.items);
    if (ok(m, dwarf_srclines_b(die, &version, &tables, &ctx, &m->err))) {
        load_files(files, m, u, ctx);
        load_rows(m, u, ctx);
        dwarf_srclines_dealloc_b(ctx);
        fix_first_files(u, version);
        if (u->row_count)
            qsort(u->rows, u->row_count, sizeof *u->rows, compare_row);
    }
    dwarf_dealloc_die(die);
}

/* ---- modules ---- */

/* Appends a compile unit and its ranges (or, without any, its line
 * sequences') to units. */
static void add_unit(struct ppw_dwarf_files *files, struct module_lines *m, Dwarf_Die die,
                     Dwarf_Half version, struct intervals *units)
{
    Dwarf_Off offset = 0;
    Dwarf_Addr base = 0;
    if (!ok(m, dwarf_dieoffset(die, &offset, &m->err)) ||
        !grow(&m->units, &m->unit_cap, m->unit_count + 1, sizeof *m->units))
        return;
    if (!ok(m, dwarf_lowpc(die, &base, &m->err)))
        base = 0;
    struct unit *u = &m->units[m->unit_count];
    *u = (struct unit){.offset = offset, .version = version, .base = base};
    u->comp_dir = attr_string(files, m, die, DW_AT_comp_dir);
    int32_t index = (int32_t)m->unit_count++;
    if (die_ranges(m, u, die, units, index, 0))
        return;
    load_unit(files, m, u);
    for (size_t i = 0, start = 0; i < u->row_count; i++) {
        if (u->rows[i].end) {
            add_interval(units, u->rows[start].addr, u->rows[i].addr, index, 0);
            start = i + 1;
        }
    }
}

static const char *no_dwarf(struct ppw_dwarf_files *files, const char *file)
{
    return keepf(files, "%s: no DWARF debug info; rebuild with -g (ppw-cc adds it)", file);
}

/* Opens m->file and indexes its compile units by address. */
static void load_module(struct ppw_dwarf_files *files, struct module_lines *m)
{
    struct intervals units = {0};
    const char *file = m->file;
    int res = dwarf_init_path(file, NULL, 0, DW_DLC_READ, DW_GROUPNUMBER_ANY, NULL, NULL, &m->dbg,
                              NULL, 0, NULL, &m->err);
    if (res != DW_DLV_OK) {
        m->error = res == DW_DLV_NO_ENTRY ? no_dwarf(files, file)
                                          : keepf(files, "%s: unreadable DWARF: %s", file,
                                                  m->err ? dwarf_errmsg(m->err) : "?");
        if (m->err)
            dwarf_dealloc_error(NULL, m->err);
        m->err = NULL;
        m->dbg = NULL;
        return;
    }
    for (;;) {
        Dwarf_Unsigned length = 0, type_offset = 0, next = 0;
        Dwarf_Half version = 0, address_size = 0, offset_size = 0, extension_size = 0, type = 0;
        Dwarf_Off abbrev = 0;
        Dwarf_Sig8 signature;
        Dwarf_Die die = NULL;
        Dwarf_Half tag = 0;
        if (!ok(m, dwarf_next_cu_header_d(m->dbg, true, &length, &version, &abbrev, &address_size,
                                          &offset_size, &extension_size, &signature, &type_offset,
                                          &next, &type, &m->err)))
            break;
        if (!ok(m, dwarf_siblingof_b(m->dbg, NULL, true, &die, &m->err)))
            continue;
        if (ok(m, dwarf_tag(die, &tag, &m->err)) && tag == DW_TAG_compile_unit)
            add_unit(files, m, die, version, &units);
        dwarf_dealloc_die(die);
    }
    if (!m->unit_count)
        m->error = no_dwarf(files, file);
    else if (!flatten(&units, &m->segs, &m->seg_count))
        m->error = "out of memory";
    free(units.items);
}

/* The store's state of file, loaded on first use; NULL when out of memory.
 * Called with the lock held. */
static struct module_lines *store_module(struct ppw_dwarf_files *files, const char *file)
{
    for (size_t i = 0; i < files->module_count; i++)
        if (strcmp(files->modules[i]->file, file) == 0)
            return files->modules[i];
    struct module_lines *m = calloc(1, sizeof *m);
    if (!m || !(m->file = keepf(files, "%s", file)) ||
        !grow(&files->modules, &files->module_cap, files->module_count + 1,
              sizeof *files->modules)) {
        free(m);
        return NULL;
    }
    files->modules[files->module_count++] = m;
    load_module(files, m);
    return m;
}

/* The run module's DWARF state (its file found through the symbolizer);
 * NULL when out of memory. */
static struct run_module *find_module(struct ppw_lines *lines, const struct ppw_run_module *module)
{
    if (lines->last < lines->module_count && lines->modules[lines->last].module == module)
        return &lines->modules[lines->last];
    for (size_t i = 0; i < lines->module_count; i++)
        if (lines->modules[i].module == module)
            return &lines->modules[lines->last = i];
    if (!grow(&lines->modules, &lines->module_cap, lines->module_count + 1,
              sizeof *lines->modules))
        return NULL;
    struct run_module *r = &lines->modules[lines->module_count];
    *r = (struct run_module){.module = module};
    const char *file = ppw_symbols_module_file(lines->syms, module);
    struct ppw_dwarf_files *files = lines->files;
    pthread_mutex_lock(&files->lock);
    if (!file) {
        const char *why = ppw_symbols_module_error(lines->syms, module);
        r->error = keepf(files, "%s", why ? why : "no file to read");
    } else if ((r->lines = store_module(files, file)) != NULL) {
        r->error = r->lines->error;
    }
    pthread_mutex_unlock(&files->lock);
    if (!r->error && !r->lines)
        r->error = "out of memory";
    lines->last = lines->module_count++;
    return r;
}

static void free_module(struct module_lines *m)
{
    for (size_t i = 0; i < m->unit_count; i++) {
        free(m->units[i].files);
        free(m->units[i].rows);
        free(m->units[i].scopes);
        free(m->units[i].segs);
    }
    free(m->units);
    free(m->segs);
    if (m->dbg) {
        Dwarf_Error err = NULL;
        if (dwarf_finish(m->dbg, &err) == DW_DLV_ERROR && err)
            dwarf_dealloc_error(NULL, err);
    }
    free(m);
}

/* ---- lookups ---- */

enum { NEAR_ROWS = 32 }; /* rows looked at on each side of a line-0 row */

/* The function that scope index si lies in: si, or the scope it was
 * inlined into, and so on (a parent's index is below its child's). */
static int32_t top_scope(const struct unit *u, int32_t si)
{
    while (si >= 0 && u->scopes[si].inlined && u->scopes[si].parent >= 0)
        si = u->scopes[si].parent;
    return si;
}

/* Whether row k can lend a line-0 row its statement: it covers code (a row
 * followed by one at its address covers none), has a line, and lies in
 * function top. */
static bool lends_line(const struct unit *u, size_t k, int32_t top)
{
    const struct row *row = &u->rows[k];
    if (!row->line || (k + 1 < u->row_count && u->rows[k + 1].addr == row->addr))
        return false;
    return top_scope(u, seg_find(u->segs, u->seg_count, row->addr)) == top;
}

/* The statement for code the line table gives line 0, which clang gives to
 * an instruction it made of several statements (a load two branches share,
 * hoisted into one), and which a sample often lands on just after the
 * instruction that cost (skid: a stalled load's sample names the
 * instruction after it).  The closest row before r in its sequence and
 * function that has a line, else the closest after it; NULL when neither
 * is within NEAR_ROWS rows.  Its inlined chain comes with it. */
static const struct row *near_row(const struct unit *u, const struct row *r, int32_t top)
{
    size_t at = (size_t)(r - u->rows);
    for (size_t k = at, seen = 0; k-- > 0 && seen < NEAR_ROWS && !u->rows[k].end; seen++)
        if (lends_line(u, k, top))
            return &u->rows[k];
    for (size_t k = at + 1, seen = 0; k < u->row_count && seen < NEAR_ROWS && !u->rows[k].end;
         k++, seen++)
        if (lends_line(u, k, top))
            return &u->rows[k];
    return NULL;
}

/* The frames at addr in m, innermost first, into out[MAX_FRAMES]; near:
 * at a line-0 address, those of the row near_row lends it. */
static size_t frames_at(struct ppw_dwarf_files *files, struct module_lines *m, uint64_t addr,
                        bool near, const struct ppw_symbol *sym, struct ppw_source_frame *out)
{
    int32_t unit = seg_find(m->segs, m->seg_count, addr);
    if (unit < 0)
        return 0;
    struct unit *u = &m->units[unit];
    if (!u->loaded)
        load_unit(files, m, u);
    const struct row *r = row_find(u, addr);
    int32_t si = seg_find(u->segs, u->seg_count, addr);
    const char *file = r ? unit_file(u, r->file) : NULL;
    uint32_t line = r ? r->line : 0, col = r ? r->col : 0;
    if (si < 0) {
        if (!r)
            return 0;
        out[0] = (struct ppw_source_frame){sym->function, NULL, file, line, col, false};
        return 1;
    }
    const struct row *lender = near && r && !line ? near_row(u, r, top_scope(u, si)) : NULL;
    if (lender) { /* its frames, read in this unit: the row is the last at its address */
        si = seg_find(u->segs, u->seg_count, lender->addr);
        file = unit_file(u, lender->file);
        line = lender->line;
        col = lender->col;
    }
    size_t n = 0;
    for (;;) {
        const struct scope *s = &u->scopes[si];
        bool last = !s->inlined || s->parent < 0 || n + 1 == MAX_FRAMES;
        const char *name = s->name ? s->name : s->linkage;
        const char *linkage =
            s->name && s->linkage && strcmp(s->name, s->linkage) ? s->linkage : NULL;
        /* OpenMP outlined code and other artificial functions: the ELF
         * symbol, as the static graph has it (main.omp_outlined,
         * .omp_outlined..1); an unnamed function likewise. */
        if (last && !s->inlined && sym->function && (s->artificial || !name)) {
            name = sym->function;
            linkage = NULL;
        }
        out[n++] = (struct ppw_source_frame){name, linkage, file, line, col, !last};
        if (last)
            return n;
        file = unit_file(u, s->call_file);
        line = s->call_line;
        col = s->call_col;
        si = s->parent;
    }
}

static size_t hash_slot(uint64_t pc, bool exact, bool near, size_t cap)
{
    uint64_t key = pc ^ (pc >> 31) ^ (uint64_t)exact ^ ((uint64_t)near << 1);
    uint64_t h = key * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 17) & (cap - 1);
}

static struct cached *cache_find(struct ppw_lines *lines, uint64_t pc, bool exact, bool near)
{
    size_t mask = lines->cache_cap - 1;
    for (size_t i = hash_slot(pc, exact, near, lines->cache_cap);; i = (i + 1) & mask) {
        struct cached *c = &lines->cache[i];
        if (!c->used || (c->pc == pc && c->exact == exact && c->near == near))
            return c;
    }
}

/* Doubles the cache; false when out of memory. */
static bool cache_grow(struct ppw_lines *lines)
{
    struct cached *old = lines->cache;
    size_t old_cap = lines->cache_cap;
    struct cached *cache = calloc(2 * old_cap, sizeof *cache);
    if (!cache)
        return false;
    lines->cache = cache;
    lines->cache_cap = 2 * old_cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].used)
            *cache_find(lines, old[i].pc, old[i].exact, old[i].near) = old[i];
    free(old);
    return true;
}

/* Looks pc up and caches its frames; NULL when out of memory. */
static const struct cached *resolve(struct ppw_lines *lines, uint64_t pc, bool exact, bool near)
{
    struct ppw_source_frame found[MAX_FRAMES];
    struct ppw_symbol sym;
    size_t n = 0;
    ppw_symbols_lookup(lines->syms, pc, exact, &sym);
    struct run_module *r = sym.module ? find_module(lines, sym.module) : NULL;
    if (r && !r->error) {
        pthread_mutex_lock(&lines->files->lock);
        uint64_t at = sym.offset - (exact || sym.offset == 0 ? 0 : 1);
        n = frames_at(lines->files, r->lines, at, near, &sym, found);
        pthread_mutex_unlock(&lines->files->lock);
    }
    if ((2 * (lines->cache_count + 1) > lines->cache_cap && !cache_grow(lines)) ||
        !grow(&lines->frames, &lines->frame_cap, lines->frame_count + n, sizeof *lines->frames))
        return NULL;
    if (n)
        memcpy(lines->frames + lines->frame_count, found, n * sizeof *found);
    struct cached *c = cache_find(lines, pc, exact, near);
    *c = (struct cached){pc, (uint32_t)lines->frame_count, (uint32_t)n, true, exact, near};
    lines->frame_count += n;
    lines->cache_count++;
    return c;
}

/* ---- the interface ---- */

int ppw_dwarf_files_new(struct ppw_dwarf_files **out, struct ppw_err *err)
{
    struct ppw_dwarf_files *files = calloc(1, sizeof *files);
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
    *out = files;
    return 0;
}

void ppw_dwarf_files_free(struct ppw_dwarf_files *files)
{
    if (!files)
        return;
    for (size_t i = 0; i < files->module_count; i++)
        free_module(files->modules[i]);
    free(files->modules);
    pthread_mutex_destroy(&files->lock);
    ppw_arena_free(files->arena);
    free(files);
}

int ppw_lines_new_shared(struct ppw_symbols *syms, struct ppw_dwarf_files *files,
                         struct ppw_lines **out, struct ppw_err *err)
{
    struct ppw_lines *lines = calloc(1, sizeof *lines);
    *out = NULL;
    if (lines) {
        lines->syms = syms;
        lines->files = files;
        lines->cache_cap = 1024;
        lines->cache = calloc(lines->cache_cap, sizeof *lines->cache);
    }
    if (!lines || !lines->cache) {
        ppw_lines_free(lines);
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    }
    *out = lines;
    return 0;
}

int ppw_lines_new(struct ppw_symbols *syms, struct ppw_lines **out, struct ppw_err *err)
{
    struct ppw_dwarf_files *files;
    int rc = ppw_dwarf_files_new(&files, err);
    if (!rc && (rc = ppw_lines_new_shared(syms, files, out, err)) != 0)
        ppw_dwarf_files_free(files);
    if (!rc)
        (*out)->own_files = true;
    return rc;
}

void ppw_lines_free(struct ppw_lines *lines)
{
    if (!lines)
        return;
    if (lines->own_files)
        ppw_dwarf_files_free(lines->files);
    free(lines->modules);
    free(lines->cache);
    free(lines->frames);
    free(lines);
}

static size_t lookup(struct ppw_lines *lines, uint64_t pc, bool exact, bool near,
                     struct ppw_source_frame *out, size_t max)
{
    const struct cached *c = cache_find(lines, pc, exact, near);
    if (!c->used && !(c = resolve(lines, pc, exact, near)))
        return 0;
    size_t n = c->count < max ? c->count : max;
    if (n)
        memcpy(out, lines->frames + c->first, n * sizeof *out);
    return n;
}

size_t ppw_lines_lookup(struct ppw_lines *lines, uint64_t pc, bool exact,
                        struct ppw_source_frame *out, size_t max)
{
    return lookup(lines, pc, exact, false, out, max);
}

size_t ppw_lines_lookup_near(struct ppw_lines *lines, uint64_t pc, bool exact,
                             struct ppw_source_frame *out, size_t max)
{
    /* Only a line-0 address has frames of its own here: the others share
     * ppw_lines_lookup's cache entry. */
    size_t n = lookup(lines, pc, exact, false, out, max);
    return n && out[0].line == 0 ? lookup(lines, pc, exact, true, out, max) : n;
}

const char *ppw_lines_module_error(struct ppw_lines *lines, const void *module)
{
    struct run_module *r = find_module(lines, module);
    return r ? r->error : "out of memory";
}
