/* Validating reader of the .ppw.blame section (docs/FORMATS.md section 1).
 *
 * The section bytes are untrusted: every read goes through a cursor bounded
 * by its record, every count is capped by the bytes that could hold it, and
 * every error names the file offset of the first bad byte. */
#define _POSIX_C_SOURCE 200809L

#include "read_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "ppw/static_format.h"
#include "read_elf.h"

/* Smallest possible records (8-byte record header plus one byte per field),
 * used to cap counts announced by untrusted data. */
enum {
    VAR_RECORD_MIN = 8 + 12,
    CALL_RECORD_MIN = 8 + 7,
    LOC_MIN = 3,
    BINDING_MIN = 4,
    ACCESS_LOC_MIN = 4,
    ACCESS_ENTRY_MIN = 3,
};

#define CORRUPT(p, pos, ...)                                                                       \
    ppw_err_corrupt_at((p)->err, __FILE__, __LINE__, (p)->path, (p)->base + (pos), __VA_ARGS__)

/* ---- parser state ---- */

struct parser {
    const char *path;
    uint64_t base; /* file offset of sec[0], for messages */
    const unsigned char *sec;
    size_t sec_size;
    struct ppw_err *err;
    struct ppw_static_graph *graph;
    size_t units_cap, funcs_cap, globals_cap;

    /* the chunk being read */
    const char *strtab; /* arena copy of its STRTAB payload */
    size_t strtab_size;
    size_t unit;
    bool have_strtab, have_unit_record;

    /* the FUNC whose VAR and CALL records are being read */
    bool in_func, have_access, have_flow;
    size_t func_pos; /* section offset of its record */
    uint64_t vars_announced, calls_announced;
};

/* A bounded window of the section: reads stay in [pos, end). */
struct cursor {
    const unsigned char *data;
    size_t pos, end;
};

static int no_memory(struct parser *p)
{
    return ppw_err_set(p->err, PPW_ENOMEM, "%s: out of memory reading .ppw.blame", p->path);
}

static void *reserve(void *items, size_t count, size_t *cap, size_t item_size)
{
    if (count < *cap)
        return items;
    size_t new_cap = *cap ? *cap * 2 : 16;
    if (new_cap > SIZE_MAX / item_size)
        return NULL;
    void *grown = realloc(items, new_cap * item_size);
    if (grown)
        *cap = new_cap;
    return grown;
}

static struct ppw_static_func *current_func(struct parser *p)
{
    return &p->graph->funcs[p->graph->func_count - 1];
}

/* ---- primitive reads ---- */

static uint32_t get_u32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint16_t get_u16(const unsigned char *b)
{
    return (uint16_t)(b[0] | b[1] << 8);
}

static uint64_t get_u64(const unsigned char *b)
{
    return (uint64_t)get_u32(b) | (uint64_t)get_u32(b + 4) << 32;
}

static int read_uleb(struct parser *p, struct cursor *c, const char *what, uint64_t *out)
{
    *out = 0; /* defined on errors too: gcc -O3 cannot tell CORRUPT() from success */
    uint64_t value = 0;
    for (unsigned shift = 0;; shift += 7) {
        if (c->pos >= c->end)
            return CORRUPT(p, c->pos, "%s: LEB128 number runs past the end of its record", what);
        unsigned char byte = c->data[c->pos];
        uint64_t low = byte & 0x7f;
        if (shift >= 64 || (shift == 63 && low > 1))
            return CORRUPT(p, c->pos, "%s: LEB128 number does not fit in 64 bits", what);
        value |= low << shift;
        c->pos++;
        if (!(byte & 0x80))
            break;
    }
    *out = value;
    return 0;
}

static int read_sleb(struct parser *p, struct cursor *c, const char *what, int64_t *out)
{
    *out = 0;
    uint64_t value = 0;
    unsigned shift = 0;
    unsigned char byte;
    do {
        if (c->pos >= c->end)
            return CORRUPT(p, c->pos, "%s: LEB128 number runs past the end of its record", what);
        byte = c->data[c->pos];
        unsigned low = byte & 0x7f;
        /* The tenth byte may only carry the sign. */
        if (shift >= 64 || (shift == 63 && low != 0 && low != 0x7f))
            return CORRUPT(p, c->pos, "%s: LEB128 number does not fit in 64 bits", what);
        value |= (uint64_t)low << shift;
        shift += 7;
        c->pos++;
    } while (byte & 0x80);
    if (shift < 64 && (byte & 0x40))
        value |= ~(uint64_t)0 << shift;
    *out = value > INT64_MAX ? -(int64_t)(~value) - 1 : (int64_t)value;
    return 0;
}

static int read_u32(struct parser *p, struct cursor *c, const char *what, uint32_t *out)
{
    size_t at = c->pos;
    uint64_t value;
    int rc = read_uleb(p, c, what, &value);
    if (rc)
        return rc;
    if (value > UINT32_MAX)
        return CORRUPT(p, at, "%s: %llu does not fit in 32 bits", what, (unsigned long long)value);
    *out = (uint32_t)value;
    return 0;
}

/* A u field holding 0 for "none" or 1 + an index below limit. */
static int read_index(struct parser *p, struct cursor *c, const char *what, uint64_t limit,
                      int32_t *out)
{
    size_t at = c->pos;
    uint64_t value;
    int rc = read_uleb(p, c, what, &value);
    if (rc)
        return rc;
    if (value > limit || (value > 0 && value - 1 > INT32_MAX))
        return CORRUPT(p, at, "%s: %llu is out of range (at most %llu)", what,
                       (unsigned long long)value, (unsigned long long)limit);
    *out = value == 0 ? -1 : (int32_t)(value - 1);
    return 0;
}

static int read_str(struct parser *p, struct cursor *c, const char *what, const char **out)
{
    size_t at = c->pos;
    uint64_t off;
    int rc = read_uleb(p, c, what, &off);
    if (rc)
        return rc;
    if (off >= p->strtab_size)
        return CORRUPT(p, at, "%s: string offset %llu is outside the string table (%zu bytes)",
                       what, (unsigned long long)off, p->strtab_size);
    if (!memchr(p->strtab + off, '\0', p->strtab_size - off))
        return CORRUPT(p, at, "%s: string at offset %llu is not NUL-terminated", what,
                       (unsigned long long)off);
    *out = p->strtab + off;
    return 0;
}

static int read_enum(struct parser *p, struct cursor *c, const char *what, uint32_t max,
                     uint32_t *out)
{
    size_t at = c->pos;
    int rc = read_u32(p, c, what, out);
    if (rc)
        return rc;
    if (*out < 1 || *out > max)
        return CORRUPT(p, at, "%s: %u is not a known value (1..%u)", what, *out, max);
    return 0;
}

/* ---- records ---- */

static int read_strtab(struct parser *p, struct cursor *c)
{
    size_t size = c->end - c->pos;
    if (p->have_strtab)
        return CORRUPT(p, c->pos - 8, "second STRTAB record in one chunk");
    if (size == 0 || c->data[c->pos] != 0)
        return CORRUPT(p, c->pos, "STRTAB must start with a NUL (offset 0 is the empty string)");
    char *copy = ppw_arena_alloc(p->graph->arena, size);
    if (!copy)
        return no_memory(p);
    memcpy(copy, c->data + c->pos, size);
    p->strtab = copy;
    p->strtab_size = size;
    p->have_strtab = true;
    return 0;
}

static int read_unit(struct parser *p, struct cursor *c)
{
    struct ppw_static_unit *unit = &p->graph->units[p->unit];
    int rc;
    if (p->have_unit_record)
        return CORRUPT(p, c->pos - 8, "second UNIT record in one chunk");
    p->have_unit_record = true;
    if ((rc = read_str(p, c, "UNIT source", &unit->source)) ||
        (rc = read_str(p, c, "UNIT comp_dir", &unit->comp_dir)) ||
        (rc = read_str(p, c, "UNIT producer", &unit->producer)) ||
        (rc = read_u32(p, c, "UNIT functions_analysed", &unit->analysed)) ||
        (rc = read_u32(p, c, "UNIT functions_skipped", &unit->skipped_nodebug)))
        return rc;
    return 0;
}

static int read_global(struct parser *p, struct cursor *c)
{
    struct ppw_static_graph *g = p->graph;
    struct ppw_static_global *globals =
        reserve(g->globals, g->global_count, &p->globals_cap, sizeof *globals);
    if (!globals)
        return no_memory(p);
    g->globals = globals;
    struct ppw_static_global *global = &globals[g->global_count];
    memset(global, 0, sizeof *global);
    global->unit = p->unit;
    int rc;
    if ((rc = read_str(p, c, "GLOBAL name", &global->name)) ||
        (rc = read_str(p, c, "GLOBAL key", &global->key)) ||
        (rc = read_str(p, c, "GLOBAL type", &global->type)) ||
        (rc = read_str(p, c, "GLOBAL file", &global->file)) ||
        (rc = read_u32(p, c, "GLOBAL line", &global->line)))
        return rc;
    g->global_count++;
    return 0;
}

/* Parent links must form trees: consumers walk them up to the root. */
static int check_parent_cycles(struct parser *p, const struct ppw_static_func *func)
{
    if (func->var_count == 0)
        return 0;
    size_t *seen = calloc(func->var_count, sizeof *seen); /* walk number + 1 that reached it */
    if (!seen)
        return no_memory(p);
    int rc = 0;
    for (size_t i = 0; i < func->var_count && !rc; i++) {
        size_t j = i;
        while (!seen[j]) {
            seen[j] = i + 1;
            if (func->vars[j].parent < 0)
                break;
            j = (size_t)func->vars[j].parent;
            if (seen[j] == i + 1)
                rc = CORRUPT(p, p->func_pos, "FUNC '%s': variable '%s' is its own ancestor",
                             func->name, func->vars[j].name);
        }
    }
    free(seen);
    return rc;
}

/* Ends the current FUNC: it must have received every record it announced. */
static int close_func(struct parser *p, size_t pos)
{
    if (!p->in_func)
        return 0;
    p->in_func = false;
    struct ppw_static_func *func = current_func(p);
    if (func->var_count != p->vars_announced || func->call_count != p->calls_announced)
        return CORRUPT(p, pos,
                       "FUNC '%s' announced %llu variables and %llu calls, but %zu and %zu follow",
                       func->name, (unsigned long long)p->vars_announced,
                       (unsigned long long)p->calls_announced, func->var_count, func->call_count);
    return check_parent_cycles(p, func);
}

static int read_func_fields(struct parser *p, struct cursor *c, struct ppw_static_func *func)
{
    int rc;
    if ((rc = read_str(p, c, "FUNC name", &func->name)) ||
        (rc = read_str(p, c, "FUNC linkage_name", &func->linkage_name)) ||
        (rc = read_str(p, c, "FUNC file", &func->file)) ||
        (rc = read_u32(p, c, "FUNC line", &func->line)) ||
        (rc = read_u32(p, c, "FUNC flags", &func->flags)) ||
        (rc = read_str(p, c, "FUNC parent_linkage_name", &func->parent)) ||
        (rc = read_uleb(p, c, "FUNC variable_count", &p->vars_announced)) ||
        (rc = read_uleb(p, c, "FUNC call_count", &p->calls_announced)))
        return rc;
    return 0;
}

/* The announced VAR and CALL records must fit in what is left of the chunk. */
static int check_announced(struct parser *p, size_t record_end, size_t chunk_end)
{
    size_t room = chunk_end - record_end;
    uint64_t vars = p->vars_announced, calls = p->calls_announced;
    if (vars > room / VAR_RECORD_MIN || calls > (room - vars * VAR_RECORD_MIN) / CALL_RECORD_MIN)
        return CORRUPT(p, p->func_pos,
                       "FUNC announces %llu variables and %llu calls, more than the %zu bytes "
                       "left in the chunk can hold",
                       (unsigned long long)vars, (unsigned long long)calls, room);
    return 0;
}

static int read_func(struct parser *p, struct cursor *c, size_t chunk_end)
{
    struct ppw_static_graph *g = p->graph;
    struct ppw_static_func *funcs = reserve(g->funcs, g->func_count, &p->funcs_cap, sizeof *funcs);
    if (!funcs)
        return no_memory(p);
    g->funcs = funcs;
    struct ppw_static_func *func = &funcs[g->func_count];
    memset(func, 0, sizeof *func);
    func->unit = p->unit;
    p->func_pos = c->pos - 8;
    int rc = read_func_fields(p, c, func);
    if (!rc)
        rc = check_announced(p, c->end, chunk_end);
    if (rc)
        return rc;
    func->vars = ppw_arena_calloc(g->arena, p->vars_announced, sizeof *func->vars);
    func->calls = ppw_arena_calloc(g->arena, p->calls_announced, sizeof *func->calls);
    if ((p->vars_announced && !func->vars) || (p->calls_announced && !func->calls))
        return no_memory(p);
    g->func_count++;
    p->in_func = true;
    p->have_access = false;
    p->have_flow = false;
    return 0;
}

static int read_loclist(struct parser *p, struct cursor *c, const char *what,
                        struct ppw_static_loc **out, size_t *out_count)
{
    size_t at = c->pos;
    uint64_t count;
    int rc = read_uleb(p, c, what, &count);
    if (rc)
        return rc;
    if (count > (c->end - c->pos) / LOC_MIN)
        return CORRUPT(p, at, "%s: %llu locations cannot fit in the %zu bytes left of the record",
                       what, (unsigned long long)count, c->end - c->pos);
    struct ppw_static_loc *locs = ppw_arena_calloc(p->graph->arena, count, sizeof *locs);
    if (count && !locs)
        return no_memory(p);
    const char *func_file = current_func(p)->file;
    for (size_t i = 0; i < count; i++) {
        if ((rc = read_str(p, c, what, &locs[i].file)) ||
            (rc = read_u32(p, c, what, &locs[i].line)) || (rc = read_u32(p, c, what, &locs[i].col)))
            return rc;
        if (!locs[i].file[0])
            locs[i].file = func_file;
    }
    *out = locs;
    *out_count = count;
    return 0;
}

static int read_var_fields(struct parser *p, struct cursor *c, struct ppw_static_var *var)
{
    int rc;
    if ((rc = read_str(p, c, "VAR name", &var->name)) ||
        (rc = read_enum(p, c, "VAR kind", PPW_VAR_RETURN, &var->kind)) ||
        (rc = read_str(p, c, "VAR type", &var->type)) ||
        (rc = read_str(p, c, "VAR decl_file", &var->decl_file)) ||
        (rc = read_u32(p, c, "VAR decl_line", &var->decl_line)) ||
        (rc = read_index(p, c, "VAR parent", p->vars_announced, &var->parent)) ||
        (rc = read_index(p, c, "VAR param_index", (uint64_t)INT32_MAX + 1, &var->param_index)) ||
        (rc = read_u32(p, c, "VAR flags", &var->flags)) ||
        (rc = read_str(p, c, "VAR key", &var->key)) ||
        (rc = read_loclist(p, c, "VAR inclusive", &var->inclusive, &var->inclusive_count)) ||
        (rc = read_loclist(p, c, "VAR exclusive", &var->exclusive, &var->exclusive_count)))
        return rc;
    return 0;
}

static int read_var(struct parser *p, struct cursor *c)
{
    size_t record_pos = c->pos - 8;
    if (!p->in_func)
        return CORRUPT(p, record_pos, "VAR record outside a FUNC");
    struct ppw_static_func *func = current_func(p);
    if (func->var_count == p->vars_announced)
        return CORRUPT(p, record_pos, "FUNC '%s' announced %llu variables; this VAR is one more",
                       func->name, (unsigned long long)p->vars_announced);
    struct ppw_static_var *var = &func->vars[func->var_count];
    size_t at = c->pos;
    int rc = read_u32(p, c, "VAR id", &var->id);
    if (rc)
        return rc;
    if (var->id != func->var_count)
        return CORRUPT(p, at, "FUNC '%s': VAR id %u out of order (expected %zu)", func->name,
                       var->id, func->var_count);
    if ((rc = read_var_fields(p, c, var)))
        return rc;
    func->var_count++;
    return 0;
}

static int read_binding(struct parser *p, struct cursor *c, struct ppw_static_binding *binding)
{
    int64_t formal = 0;
    size_t at;
    int rc;
    if ((rc = read_index(p, c, "CALL binding var", p->vars_announced, &binding->var)))
        return rc;
    at = c->pos;
    if ((rc = read_sleb(p, c, "CALL binding formal", &formal)))
        return rc;
    if (formal < -1 || formal > INT32_MAX)
        return CORRUPT(p, at, "CALL binding formal: %lld is out of range", (long long)formal);
    binding->formal = (int32_t)formal;
    if ((rc = read_enum(p, c, "CALL binding mode", PPW_BIND_SOURCE, &binding->mode)) ||
        (rc = read_str(p, c, "CALL binding callee_path", &binding->callee_path)))
        return rc;
    return 0;
}

static int read_bindings(struct parser *p, struct cursor *c, struct ppw_static_call *call)
{
    size_t at = c->pos;
    uint64_t count;
    int rc = read_uleb(p, c, "CALL binding_count", &count);
    if (rc)
        return rc;
    if (count > (c->end - c->pos) / BINDING_MIN)
        return CORRUPT(p, at, "CALL binding_count %llu cannot fit in the %zu bytes left",
                       (unsigned long long)count, c->end - c->pos);
    call->bindings = ppw_arena_calloc(p->graph->arena, count, sizeof *call->bindings);
    if (count && !call->bindings)
        return no_memory(p);
    for (size_t i = 0; i < count; i++)
        if ((rc = read_binding(p, c, &call->bindings[i])))
            return rc;
    call->binding_count = count;
    return 0;
}

static int read_call(struct parser *p, struct cursor *c)
{
    size_t record_pos = c->pos - 8;
    if (!p->in_func)
        return CORRUPT(p, record_pos, "CALL record outside a FUNC");
    struct ppw_static_func *func = current_func(p);
    if (func->call_count == p->calls_announced)
        return CORRUPT(p, record_pos, "FUNC '%s' announced %llu calls; this CALL is one more",
                       func->name, (unsigned long long)p->calls_announced);
    struct ppw_static_call *call = &func->calls[func->call_count];
    size_t at = c->pos;
    int rc = read_u32(p, c, "CALL id", &call->id);
    if (rc)
        return rc;
    if (call->id != func->call_count)
        return CORRUPT(p, at, "FUNC '%s': CALL id %u out of order (expected %zu)", func->name,
                       call->id, func->call_count);
    if ((rc = read_u32(p, c, "CALL line", &call->line)) ||
        (rc = read_u32(p, c, "CALL col", &call->col)) ||
        (rc = read_str(p, c, "CALL callee", &call->callee)) ||
        (rc = read_enum(p, c, "CALL kind", PPW_CALL_LIBRARY, &call->kind)) ||
        (rc = read_u32(p, c, "CALL flags", &call->flags)) || (rc = read_bindings(p, c, call)))
        return rc;
    func->call_count++;
    return 0;
}

static int read_access_entries(struct parser *p, struct cursor *c, struct ppw_static_access *access)
{
    const struct ppw_static_func *func = current_func(p);
    size_t at = c->pos;
    uint64_t count;
    int rc = read_uleb(p, c, "ACCESS entry_count", &count);
    if (rc)
        return rc;
    if (count == 0 || count > (c->end - c->pos) / ACCESS_ENTRY_MIN)
        return CORRUPT(p, at, "ACCESS entry_count %llu is 0 or cannot fit in the %zu bytes left",
                       (unsigned long long)count, c->end - c->pos);
    access->entries = ppw_arena_calloc(p->graph->arena, count, sizeof *access->entries);
    if (!access->entries)
        return no_memory(p);
    for (size_t i = 0; i < count; i++) {
        struct ppw_static_access_entry *entry = &access->entries[i];
        at = c->pos;
        if ((rc = read_u32(p, c, "ACCESS var", &entry->var)) ||
            (rc = read_u32(p, c, "ACCESS reads", &entry->reads)) ||
            (rc = read_u32(p, c, "ACCESS writes", &entry->writes)))
            return rc;
        if (entry->var >= func->var_count)
            return CORRUPT(p, at, "FUNC '%s': ACCESS names variable %u of %zu read so far",
                           func->name, entry->var, func->var_count);
        if (!entry->reads && !entry->writes)
            return CORRUPT(p, at, "FUNC '%s': ACCESS entry with no read and no write", func->name);
    }
    access->entry_count = count;
    return 0;
}

/* The function's accesses by location (format 1.1), after its VARs. */
static int read_access(struct parser *p, struct cursor *c)
{
    size_t record_pos = c->pos - 8;
    if (!p->in_func)
        return CORRUPT(p, record_pos, "ACCESS record outside a FUNC");
    struct ppw_static_func *func = current_func(p);
    if (p->have_access)
        return CORRUPT(p, record_pos, "FUNC '%s' has a second ACCESS record", func->name);
    p->have_access = true;
    size_t at = c->pos;
    uint64_t count;
    int rc = read_uleb(p, c, "ACCESS location_count", &count);
    if (rc)
        return rc;
    if (count > (c->end - c->pos) / ACCESS_LOC_MIN)
        return CORRUPT(p, at, "ACCESS location_count %llu cannot fit in the %zu bytes left",
                       (unsigned long long)count, c->end - c->pos);
    func->accesses = ppw_arena_calloc(p->graph->arena, count, sizeof *func->accesses);
    if (count && !func->accesses)
        return no_memory(p);
    for (size_t i = 0; i < count; i++) {
        struct ppw_static_access *access = &func->accesses[i];
        if ((rc = read_str(p, c, "ACCESS file", &access->loc.file)) ||
            (rc = read_u32(p, c, "ACCESS line", &access->loc.line)) ||
            (rc = read_u32(p, c, "ACCESS col", &access->loc.col)) ||
            (rc = read_access_entries(p, c, access)))
            return rc;
        if (!access->loc.file[0])
            access->loc.file = func->file;
        func->access_count = i + 1;
    }
    return 0;
}

/* The variables computed from each variable (format 1.2), after its VARs. */
static int read_flow(struct parser *p, struct cursor *c)
{
    size_t record_pos = c->pos - 8;
    if (!p->in_func)
        return CORRUPT(p, record_pos, "FLOW record outside a FUNC");
    struct ppw_static_func *func = current_func(p);
    if (p->have_flow)
        return CORRUPT(p, record_pos, "FUNC '%s' has a second FLOW record", func->name);
    p->have_flow = true;
    size_t at = c->pos;
    uint64_t count;
    int rc = read_uleb(p, c, "FLOW entry_count", &count);
    if (rc)
        return rc;
    if (count > (c->end - c->pos) / 2)
        return CORRUPT(p, at, "FLOW entry_count %llu cannot fit in the %zu bytes left",
                       (unsigned long long)count, c->end - c->pos);
    func->flows = ppw_arena_calloc(p->graph->arena, count, sizeof *func->flows);
    if (count && !func->flows)
        return no_memory(p);
    for (size_t i = 0; i < count; i++) {
        struct ppw_static_flow *flow = &func->flows[i];
        uint64_t targets;
        at = c->pos;
        if ((rc = read_u32(p, c, "FLOW source", &flow->source)))
            return rc;
        if (flow->source >= func->var_count)
            return CORRUPT(p, at, "FUNC '%s': FLOW names variable %u of %zu read so far",
                           func->name, flow->source, func->var_count);
        if (i && flow->source <= func->flows[i - 1].source)
            return CORRUPT(p, at, "FUNC '%s': FLOW sources out of order", func->name);
        at = c->pos;
        if ((rc = read_uleb(p, c, "FLOW target_count", &targets)))
            return rc;
        if (targets == 0 || targets > c->end - c->pos)
            return CORRUPT(p, at, "FLOW target_count %llu is 0 or cannot fit in the %zu bytes left",
                           (unsigned long long)targets, c->end - c->pos);
        flow->targets = ppw_arena_calloc(p->graph->arena, targets, sizeof *flow->targets);
        if (!flow->targets)
            return no_memory(p);
        for (size_t t = 0; t < targets; t++) {
            at = c->pos;
            if ((rc = read_u32(p, c, "FLOW target", &flow->targets[t])))
                return rc;
            if (flow->targets[t] >= func->var_count || flow->targets[t] == flow->source)
                return CORRUPT(p, at, "FUNC '%s': FLOW target %u is not another variable",
                               func->name, flow->targets[t]);
        }
        flow->target_count = targets;
        func->flow_count = i + 1;
    }
    func->has_flow = true;
    if (c->pos == c->end)
        return 0;
    at = c->pos;
    if ((rc = read_uleb(p, c, "FLOW call_entry_count", &count)))
        return rc;
    if (count > (c->end - c->pos) / 2)
        return CORRUPT(p, at, "FLOW call_entry_count %llu cannot fit in the %zu bytes left",
                       (unsigned long long)count, c->end - c->pos);
    for (size_t i = 0, last = 0; i < count; i++) {
        uint32_t call;
        uint64_t vars;
        at = c->pos;
        if ((rc = read_u32(p, c, "FLOW call", &call)))
            return rc;
        if (call >= func->call_count || (i && call <= last))
            return CORRUPT(p, at, "FUNC '%s': FLOW names call %u (of %zu, after %zu)", func->name,
                           call, func->call_count, last);
        last = call;
        at = c->pos;
        if ((rc = read_uleb(p, c, "FLOW var_count", &vars)))
            return rc;
        if (vars == 0 || vars > c->end - c->pos)
            return CORRUPT(p, at, "FLOW var_count %llu is 0 or cannot fit in the %zu bytes left",
                           (unsigned long long)vars, c->end - c->pos);
        struct ppw_static_call *target = &func->calls[call];
        target->written_after = ppw_arena_calloc(p->graph->arena, vars, sizeof(uint32_t));
        if (!target->written_after)
            return no_memory(p);
        for (size_t v = 0; v < vars; v++) {
            at = c->pos;
            if ((rc = read_u32(p, c, "FLOW var", &target->written_after[v])))
                return rc;
            if (target->written_after[v] >= func->var_count ||
                (v && target->written_after[v] <= target->written_after[v - 1]))
                return CORRUPT(p, at, "FUNC '%s': FLOW variable %u after call %u is out of order "
                               "or not a variable", func->name, target->written_after[v], call);
        }
        target->written_after_count = vars;
    }
    return 0;
}

/* Fields past the ones read here are a newer minor version's: ignored. */
static int read_record(struct parser *p, uint32_t kind, struct cursor *body, size_t chunk_end)
{
    int rc;
    switch (kind) {
    case PPW_REC_STRTAB: return read_strtab(p, body);
    case PPW_REC_UNIT: return (rc = close_func(p, body->pos - 8)) ? rc : read_unit(p, body);
    case PPW_REC_FUNC:
        return (rc = close_func(p, body->pos - 8)) ? rc : read_func(p, body, chunk_end);
    case PPW_REC_VAR: return read_var(p, body);
    case PPW_REC_CALL: return read_call(p, body);
    case PPW_REC_GLOBAL: return (rc = close_func(p, body->pos - 8)) ? rc : read_global(p, body);
    case PPW_REC_ACCESS: return read_access(p, body);
    case PPW_REC_FLOW: return read_flow(p, body);
    default: return 0; /* a newer minor version's record kind */
    }
}

/* ---- chunks ---- */

struct chunk_header {
    uint16_t major, minor;
    uint32_t header_size, chunk_size, record_count;
    uint64_t payload_hash, unit_id;
};

static int check_version(struct parser *p, size_t start, const struct chunk_header *h)
{
    if (h->major >= 1 && h->major <= PPW_STATIC_MAJOR)
        return 0;
    ppw_err_set(p->err, PPW_EVERSION,
                "%s: .ppw.blame chunk at byte %llu has format version %u.%u; this ppw-blame "
                "reads version %d.x (%s)",
                p->path, (unsigned long long)(p->base + start), h->major, h->minor,
                PPW_STATIC_MAJOR,
                h->major > PPW_STATIC_MAJOR ? "upgrade ppw-blame" : "unknown version");
    p->err->offset = (int64_t)(p->base + start + 4);
    return PPW_EVERSION;
}

static int read_chunk_header(struct parser *p, size_t start, struct chunk_header *h)
{
    const unsigned char *b = p->sec + start;
    size_t left = p->sec_size - start;
    size_t magic_len = strlen(PPW_STATIC_MAGIC);
    if (memcmp(b, PPW_STATIC_MAGIC, left < magic_len ? left : magic_len) != 0)
        return CORRUPT(p, start, "bad chunk magic (expected \"%s\")", PPW_STATIC_MAGIC);
    if (left < 8)
        return CORRUPT(p, p->sec_size, "truncated chunk header (%zu bytes)", left);
    h->major = get_u16(b + 4);
    h->minor = get_u16(b + 6);
    int rc = check_version(p, start, h);
    if (rc)
        return rc;
    if (left < PPW_STATIC_HEADER_SIZE)
        return CORRUPT(p, p->sec_size, "truncated chunk header (%zu of %d bytes)", left,
                       PPW_STATIC_HEADER_SIZE);
    h->header_size = get_u32(b + 8);
    h->chunk_size = get_u32(b + 12);
    h->payload_hash = get_u64(b + 16);
    h->record_count = get_u32(b + 24);
    h->unit_id = get_u64(b + 32);
    if (h->header_size < PPW_STATIC_HEADER_SIZE || h->header_size > h->chunk_size)
        return CORRUPT(p, start + 8, "chunk header_size %u is not in [%d, chunk_size %u]",
                       h->header_size, PPW_STATIC_HEADER_SIZE, h->chunk_size);
    if (h->chunk_size > left)
        return CORRUPT(p, p->sec_size, "truncated chunk: chunk_size %u but %zu bytes remain",
                       h->chunk_size, left);
    return 0;
}

static int check_payload_hash(struct parser *p, size_t start, const struct chunk_header *h)
{
    const unsigned char *payload = p->sec + start + h->header_size;
    uint64_t hash = ppw_fnv1a64(payload, h->chunk_size - h->header_size, PPW_FNV1A64_INIT);
    if (hash != h->payload_hash)
        return CORRUPT(p, start + h->header_size,
                       "chunk payload hash mismatch (header says %016llx, payload has %016llx)",
                       (unsigned long long)h->payload_hash, (unsigned long long)hash);
    return 0;
}

static bool unit_loaded(const struct ppw_static_graph *g, uint64_t unit_id)
{
    for (size_t i = 0; i < g->unit_count; i++)
        if (g->units[i].unit_id == unit_id)
            return true;
    return false;
}

static int begin_unit(struct parser *p, uint64_t unit_id)
{
    struct ppw_static_graph *g = p->graph;
    struct ppw_static_unit *units = reserve(g->units, g->unit_count, &p->units_cap, sizeof *units);
    if (!units)
        return no_memory(p);
    g->units = units;
    units[g->unit_count] =
        (struct ppw_static_unit){.source = "", .comp_dir = "", .producer = "", .unit_id = unit_id};
    p->unit = g->unit_count++;
    p->strtab = "";
    p->strtab_size = 1;
    p->have_strtab = p->have_unit_record = p->in_func = false;
    return 0;
}

static int next_record(struct parser *p, struct cursor *c, uint32_t *kind, struct cursor *body)
{
    size_t left = c->end - c->pos;
    if (left < 8)
        return CORRUPT(p, c->pos, "truncated record header (%zu bytes left in the chunk)", left);
    *kind = get_u32(c->data + c->pos);
    uint32_t size = get_u32(c->data + c->pos + 4);
    if (size > left - 8)
        return CORRUPT(p, c->pos + 4, "record of kind %u has size %u but %zu bytes remain", *kind,
                       size, left - 8);
    *body = (struct cursor){c->data, c->pos + 8, c->pos + 8 + size};
    c->pos = body->end;
    return 0;
}

static int read_records(struct parser *p, size_t start, const struct chunk_header *h)
{
    size_t chunk_end = start + h->chunk_size;
    struct cursor c = {p->sec, start + h->header_size, chunk_end};
    uint32_t count = 0;
    int rc = begin_unit(p, h->unit_id);
    if (!rc)
        p->graph->units[p->unit].minor = h->minor;
    while (!rc && c.pos < c.end) {
        uint32_t kind = 0;
        struct cursor body;
        if ((rc = next_record(p, &c, &kind, &body)))
            break;
        if (count++ == 0 && kind != PPW_REC_STRTAB)
            rc = CORRUPT(p, body.pos - 8, "first record is kind %u, not STRTAB", kind);
        else
            rc = read_record(p, kind, &body, chunk_end);
    }
    if (!rc)
        rc = close_func(p, chunk_end);
    if (!rc && count != h->record_count)
        rc = CORRUPT(p, start + 24, "chunk header announces %u records but holds %u",
                     h->record_count, count);
    return rc;
}

static int read_chunk(struct parser *p, size_t start, size_t *chunk_size)
{
    struct chunk_header h = {0};
    int rc = read_chunk_header(p, start, &h);
    if (!rc)
        rc = check_payload_hash(p, start, &h);
    if (rc)
        return rc;
    *chunk_size = h.chunk_size;
    if (unit_loaded(p->graph, h.unit_id))
        return 0; /* the same object linked twice */
    return read_records(p, start, &h);
}

static int read_section(struct parser *p)
{
    size_t pos = 0;
    while (pos < p->sec_size) {
        if (p->sec[pos] == 0) {
            pos++; /* alignment padding between chunks */
            continue;
        }
        size_t size;
        int rc = read_chunk(p, pos, &size);
        if (rc)
            return rc;
        pos += size;
    }
    return 0;
}

static int parse_into(struct ppw_static_graph *g, const void *data, size_t size, const char *path,
                      uint64_t base, struct ppw_err *err)
{
    struct parser p = {
        .path = path, .base = base, .sec = data, .sec_size = size, .err = err, .graph = g};
    /* Arrays may already hold another section's items. */
    p.units_cap = g->unit_count;
    p.funcs_cap = g->func_count;
    p.globals_cap = g->global_count;
    return read_section(&p);
}

/* ---- graph lifetime ---- */

static int graph_new(const char *path, struct ppw_static_graph **out, struct ppw_err *err)
{
    struct ppw_static_graph *g = calloc(1, sizeof *g);
    if (g) {
        g->path = strdup(path);
        g->arena = ppw_arena_new();
    }
    if (!g || !g->path || !g->arena) {
        ppw_static_graph_free(g);
        return ppw_err_set(err, PPW_ENOMEM, "%s: out of memory", path);
    }
    *out = g;
    return 0;
}

void ppw_static_graph_free(struct ppw_static_graph *graph)
{
    if (!graph)
        return;
    ppw_arena_free(graph->arena);
    free(graph->units);
    free(graph->funcs);
    free(graph->globals);
    free(graph->path);
    free(graph);
}

int ppw_static_graph_load_section(const void *data, size_t size, const char *path,
                                  uint64_t base_offset, struct ppw_static_graph **out,
                                  struct ppw_err *err)
{
    struct ppw_static_graph *g = NULL;
    *out = NULL;
    ppw_err_clear(err);
    int rc = graph_new(path, &g, err);
    if (!rc)
        rc = parse_into(g, data, size, path, base_offset, err);
    if (rc) {
        ppw_static_graph_free(g);
        return rc;
    }
    *out = g;
    return 0;
}

/* ---- from an ELF file ---- */

struct section_ctx {
    struct ppw_static_graph *graph;
    const char *path;
    struct ppw_err *err;
};

static int visit_blame_section(void *ctx, const void *data, size_t size, uint64_t file_offset)
{
    struct section_ctx *c = ctx;
    return parse_into(c->graph, data, size, c->path, file_offset, c->err);
}

static int load_from_elf(const char *path, struct ppw_elf *elf, struct ppw_static_graph *g,
                         struct ppw_err *err)
{
    struct section_ctx ctx = {g, path, err};
    size_t found = 0;
    snprintf(g->build_id, sizeof g->build_id, "%s", ppw_elf_build_id(elf));
    int rc = ppw_elf_each_section(elf, PPW_STATIC_SECTION, visit_blame_section, &ctx, &found, err);
    if (!rc && !found)
        rc = ppw_err_set(err, PPW_ENOSECTION,
                         "%s: no %s section (not built with ppw-cc or -fpass-plugin=ppw.so)", path,
                         PPW_STATIC_SECTION);
    return rc;
}

int ppw_static_graph_load(const char *path, struct ppw_static_graph **out, struct ppw_err *err)
{
    struct ppw_static_graph *g = NULL;
    struct ppw_elf *elf = NULL;
    *out = NULL;
    ppw_err_clear(err);
    int rc = ppw_elf_open(path, &elf, err);
    if (!rc)
        rc = graph_new(path, &g, err);
    if (!rc)
        rc = load_from_elf(path, elf, g, err);
    ppw_elf_close(elf);
    if (rc) {
        ppw_static_graph_free(g);
        return rc;
    }
    *out = g;
    return 0;
}

bool ppw_static_func_matches(const struct ppw_static_func *func, const char *name)
{
    return strcmp(func->name, name) == 0 || strcmp(func->linkage_name, name) == 0;
}

const struct ppw_static_func *ppw_static_graph_find_func(const struct ppw_static_graph *graph,
                                                         const char *name)
{
    for (size_t i = 0; i < graph->func_count; i++)
        if (ppw_static_func_matches(&graph->funcs[i], name))
            return &graph->funcs[i];
    return NULL;
}
