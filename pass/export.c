#include "export.h"

#include "support.h"

#include <ppw/static_format.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct buffer {
    unsigned char *data;
    size_t size, capacity;
};

static void put_bytes(struct buffer *buffer, const void *bytes, size_t count)
{
    if (buffer->size + count > buffer->capacity) {
        size_t wanted = buffer->capacity ? buffer->capacity * 2 : 4096;
        while (wanted < buffer->size + count)
            wanted *= 2;
        buffer->data = ppw_xrealloc(buffer->data, wanted, 1);
        buffer->capacity = wanted;
    }
    memcpy(buffer->data + buffer->size, bytes, count);
    buffer->size += count;
}

static void put_u8(struct buffer *buffer, unsigned value)
{
    unsigned char byte = (unsigned char)value;
    put_bytes(buffer, &byte, 1);
}

static void put_le(struct buffer *buffer, uint64_t value, int bytes)
{
    for (int i = 0; i < bytes; i++)
        put_u8(buffer, (unsigned)(value >> (8 * i)) & 0xff);
}

static void put_uleb(struct buffer *buffer, uint64_t value)
{
    do {
        unsigned byte = value & 0x7f;
        value >>= 7;
        put_u8(buffer, byte | (value ? 0x80 : 0));
    } while (value);
}

static void put_sleb(struct buffer *buffer, int64_t value)
{
    for (;;) {
        unsigned byte = (unsigned)value & 0x7f;
        value >>= 7; /* arithmetic shift on the targets we build for */
        int done = (value == 0 && !(byte & 0x40)) || (value == -1 && (byte & 0x40));
        put_u8(buffer, byte | (done ? 0 : 0x80));
        if (done)
            return;
    }
}

/* String table with content deduplication. */
struct strtab {
    struct buffer bytes;
    uint32_t *offsets;
    size_t capacity, count;
};

static uint64_t hash_string(const char *text)
{
    return ppw_fnv1a64(text, strlen(text), PPW_FNV1A64_INIT);
}

static void strtab_grow(struct strtab *table)
{
    size_t capacity = table->capacity ? table->capacity * 2 : 1024;
    uint32_t *offsets = ppw_xcalloc(capacity, sizeof *offsets);
    for (size_t i = 0; i < table->capacity; i++) {
        if (!table->offsets[i])
            continue;
        const char *text = (const char *)table->bytes.data + table->offsets[i];
        size_t slot = hash_string(text) & (capacity - 1);
        while (offsets[slot])
            slot = (slot + 1) & (capacity - 1);
        offsets[slot] = table->offsets[i];
    }
    free(table->offsets);
    table->offsets = offsets;
    table->capacity = capacity;
}

static uint32_t strtab_add(struct strtab *table, const char *text)
{
    if (!text || !text[0])
        return 0;
    if (!table->bytes.size)
        put_u8(&table->bytes, 0); /* offset 0 is "" */
    if ((table->count + 1) * 2 > table->capacity)
        strtab_grow(table);
    size_t slot = hash_string(text) & (table->capacity - 1);
    while (table->offsets[slot]) {
        if (!strcmp((const char *)table->bytes.data + table->offsets[slot], text))
            return table->offsets[slot];
        slot = (slot + 1) & (table->capacity - 1);
    }
    uint32_t offset = (uint32_t)table->bytes.size;
    put_bytes(&table->bytes, text, strlen(text) + 1);
    table->offsets[slot] = offset;
    table->count++;
    return offset;
}

struct encoder {
    struct buffer body;
    struct buffer record;
    struct strtab strings;
    uint32_t record_count;
};

static void put_str(struct encoder *encoder, const char *text)
{
    put_uleb(&encoder->record, strtab_add(&encoder->strings, text));
}

static void end_record(struct encoder *encoder, enum ppw_static_record kind)
{
    put_le(&encoder->body, kind, 4);
    put_le(&encoder->body, encoder->record.size, 4);
    put_bytes(&encoder->body, encoder->record.data, encoder->record.size);
    encoder->record.size = 0;
    encoder->record_count++;
}

static void put_locs(struct encoder *encoder, const struct ppw_loc *locs, size_t count)
{
    put_uleb(&encoder->record, count);
    for (size_t i = 0; i < count; i++) {
        put_str(encoder, locs[i].file);
        put_uleb(&encoder->record, locs[i].line);
        put_uleb(&encoder->record, locs[i].col);
    }
}

static int same_loc(const struct ppw_loc *a, const struct ppw_loc *b)
{
    return a->line == b->line && a->col == b->col &&
           !strcmp(a->file ? a->file : "", b->file ? b->file : "");
}

/* One ACCESS record: the function's accesses grouped by location (they
 * arrive sorted by location). */
static void encode_accesses(struct encoder *encoder, const struct ppw_result_func *function)
{
    const struct ppw_result_access *accesses = function->accesses;
    size_t count = function->access_count, locations = 0;
    if (!count)
        return;
    for (size_t i = 0; i < count; i++)
        locations += !i || !same_loc(&accesses[i].loc, &accesses[i - 1].loc);
    put_uleb(&encoder->record, locations);
    for (size_t i = 0; i < count;) {
        size_t end = i + 1;
        while (end < count && same_loc(&accesses[end].loc, &accesses[i].loc))
            end++;
        put_str(encoder, accesses[i].loc.file);
        put_uleb(&encoder->record, accesses[i].loc.line);
        put_uleb(&encoder->record, accesses[i].loc.col);
        put_uleb(&encoder->record, end - i);
        for (; i < end; i++) {
            put_uleb(&encoder->record, (uint64_t)accesses[i].var);
            put_uleb(&encoder->record, accesses[i].reads);
            put_uleb(&encoder->record, accesses[i].writes);
        }
    }
    end_record(encoder, PPW_REC_ACCESS);
}

/* One FLOW record (since 1.2): for each variable that others are computed
 * from, those others. */
static void encode_flows(struct encoder *encoder, const struct ppw_result_func *function)
{
    size_t calls = 0;
    for (size_t i = 0; i < function->call_count; i++)
        calls += function->calls[i].written_after_count > 0;
    if (!function->flow_count && !calls)
        return;
    put_uleb(&encoder->record, function->flow_count);
    for (size_t i = 0; i < function->flow_count; i++) {
        const struct ppw_result_flow *flow = &function->flows[i];
        put_uleb(&encoder->record, (uint64_t)flow->source);
        put_uleb(&encoder->record, flow->target_count);
        for (size_t t = 0; t < flow->target_count; t++)
            put_uleb(&encoder->record, (uint64_t)flow->targets[t]);
    }
    put_uleb(&encoder->record, calls);
    for (size_t i = 0; i < function->call_count; i++) {
        const struct ppw_result_call *call = &function->calls[i];
        if (!call->written_after_count)
            continue;
        put_uleb(&encoder->record, i);
        put_uleb(&encoder->record, call->written_after_count);
        for (size_t v = 0; v < call->written_after_count; v++)
            put_uleb(&encoder->record, (uint64_t)call->written_after[v]);
    }
    end_record(encoder, PPW_REC_FLOW);
}

static void encode_function(struct encoder *encoder, const struct ppw_result_func *function)
{
    put_str(encoder, function->name);
    put_str(encoder, function->linkage_name);
    put_str(encoder, function->file);
    put_uleb(&encoder->record, function->line);
    put_uleb(&encoder->record, function->flags);
    put_str(encoder, function->parent);
    put_uleb(&encoder->record, function->var_count);
    put_uleb(&encoder->record, function->call_count);
    end_record(encoder, PPW_REC_FUNC);
    for (size_t i = 0; i < function->var_count; i++) {
        const struct ppw_result_var *var = &function->vars[i];
        put_uleb(&encoder->record, i);
        put_str(encoder, var->name);
        put_uleb(&encoder->record, var->kind);
        put_str(encoder, var->type);
        put_str(encoder, var->decl_file);
        put_uleb(&encoder->record, var->decl_line);
        put_uleb(&encoder->record, (uint64_t)(var->parent + 1));
        put_uleb(&encoder->record, (uint64_t)(var->param_index + 1));
        put_uleb(&encoder->record, var->flags);
        put_str(encoder, var->key);
        put_locs(encoder, var->inclusive, var->inclusive_count);
        put_locs(encoder, var->exclusive, var->exclusive_count);
        end_record(encoder, PPW_REC_VAR);
    }
    for (size_t i = 0; i < function->call_count; i++) {
        const struct ppw_result_call *call = &function->calls[i];
        put_uleb(&encoder->record, i);
        put_uleb(&encoder->record, call->line);
        put_uleb(&encoder->record, call->col);
        put_str(encoder, call->callee);
        put_uleb(&encoder->record, call->kind);
        put_uleb(&encoder->record, 0);
        put_uleb(&encoder->record, call->binding_count);
        for (size_t b = 0; b < call->binding_count; b++) {
            const struct ppw_result_binding *binding = &call->bindings[b];
            put_uleb(&encoder->record, (uint64_t)(binding->var + 1));
            put_sleb(&encoder->record, binding->formal);
            put_uleb(&encoder->record, binding->mode);
            put_str(encoder, binding->callee_path);
        }
        end_record(encoder, PPW_REC_CALL);
    }
    encode_accesses(encoder, function);
    encode_flows(encoder, function);
}

static void encode_unit(struct encoder *encoder, const struct ppw_export_unit *unit)
{
    put_str(encoder, unit->source);
    put_str(encoder, unit->comp_dir);
    put_str(encoder, unit->producer);
    put_uleb(&encoder->record, unit->analysed);
    put_uleb(&encoder->record, unit->skipped_without_debug_info);
    end_record(encoder, PPW_REC_UNIT);
    for (size_t i = 0; i < unit->global_count; i++) {
        const struct ppw_result_global *global = &unit->globals[i];
        put_str(encoder, global->name);
        put_str(encoder, global->key);
        put_str(encoder, global->type);
        put_str(encoder, global->file);
        put_uleb(&encoder->record, global->line);
        end_record(encoder, PPW_REC_GLOBAL);
    }
    for (size_t i = 0; i < unit->function_count; i++)
        encode_function(encoder, &unit->functions[i]);
}

static void assemble_chunk(struct encoder *encoder, const char *source, struct buffer *chunk)
{
    struct buffer payload = {0};
    if (!encoder->strings.bytes.size)
        put_u8(&encoder->strings.bytes, 0);
    put_le(&payload, PPW_REC_STRTAB, 4);
    put_le(&payload, encoder->strings.bytes.size, 4);
    put_bytes(&payload, encoder->strings.bytes.data, encoder->strings.bytes.size);
    put_bytes(&payload, encoder->body.data, encoder->body.size);
    uint64_t hash = ppw_fnv1a64(payload.data, payload.size, PPW_FNV1A64_INIT);
    uint64_t unit_id = ppw_fnv1a64(source, strlen(source), hash);
    put_bytes(chunk, PPW_STATIC_MAGIC, 4);
    put_le(chunk, PPW_STATIC_MAJOR, 2);
    put_le(chunk, PPW_STATIC_MINOR, 2);
    put_le(chunk, PPW_STATIC_HEADER_SIZE, 4);
    put_le(chunk, PPW_STATIC_HEADER_SIZE + payload.size, 4);
    put_le(chunk, hash, 8);
    put_le(chunk, encoder->record_count + 1, 4);
    put_le(chunk, 0, 4);
    put_le(chunk, unit_id, 8);
    put_bytes(chunk, payload.data, payload.size);
    free(payload.data);
}

/* Module assembly: the chunk as .ascii lines, printable bytes kept. */
static char *chunk_assembly(const struct buffer *chunk, size_t *length)
{
    struct buffer text = {0};
    static const char header[] = "\t.pushsection " PPW_STATIC_SECTION ",\"\",%progbits\n";
    put_bytes(&text, header, sizeof header - 1);
    for (size_t start = 0; start < chunk->size; start += 96) {
        put_bytes(&text, "\t.ascii \"", 9);
        for (size_t i = start; i < chunk->size && i < start + 96; i++) {
            unsigned char byte = chunk->data[i];
            char escaped[8];
            if (byte >= 0x20 && byte < 0x7f && byte != '"' && byte != '\\')
                put_u8(&text, byte);
            else {
                snprintf(escaped, sizeof escaped, "\\%03o", byte);
                put_bytes(&text, escaped, 4);
            }
        }
        put_bytes(&text, "\"\n", 2);
    }
    static const char footer[] = "\t.popsection\n";
    put_bytes(&text, footer, sizeof footer); /* with the NUL */
    *length = text.size - 1;
    return (char *)text.data;
}

static int target_is_elf(LLVMModuleRef module)
{
    const char *triple = LLVMGetTarget(module);
    return triple && !strstr(triple, "apple") && !strstr(triple, "darwin") &&
           !strstr(triple, "windows") && !strstr(triple, "wasm");
}

int ppw_export_unit(LLVMModuleRef module, const struct ppw_export_unit *unit)
{
    if (!target_is_elf(module))
        return -1;
    struct encoder encoder = {0};
    encode_unit(&encoder, unit);
    struct buffer chunk = {0};
    assemble_chunk(&encoder, unit->source ? unit->source : "", &chunk);
    size_t length = 0;
    char *assembly = chunk_assembly(&chunk, &length);
    LLVMAppendModuleInlineAsm(module, assembly, length);
    free(assembly);
    free(chunk.data);
    free(encoder.body.data);
    free(encoder.record.data);
    free(encoder.strings.bytes.data);
    free(encoder.strings.offsets);
    return 0;
}
