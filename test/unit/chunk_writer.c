#include "chunk_writer.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ppw/static_format.h"

void bytes_put(struct bytes *b, const void *data, size_t len)
{
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + len)
            cap *= 2;
        b->data = realloc(b->data, cap);
        if (!b->data) {
            perror("chunk_writer");
            exit(99);
        }
        b->cap = cap;
    }
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
}

void bytes_zeros(struct bytes *b, size_t len)
{
    static const unsigned char zero[64];
    while (len) {
        size_t n = len < sizeof zero ? len : sizeof zero;
        bytes_put(b, zero, n);
        len -= n;
    }
}

void bytes_free(struct bytes *b)
{
    free(b->data);
    *b = (struct bytes){0};
}

static void put_le(struct bytes *b, uint64_t value, int size)
{
    unsigned char buf[8];
    for (int i = 0; i < size; i++)
        buf[i] = (unsigned char)(value >> (8 * i));
    bytes_put(b, buf, (size_t)size);
}

static void put_uleb(struct bytes *b, uint64_t value)
{
    do {
        unsigned char byte = value & 0x7f;
        value >>= 7;
        if (value)
            byte |= 0x80;
        bytes_put(b, &byte, 1);
    } while (value);
}

static void put_sleb(struct bytes *b, int64_t value)
{
    for (;;) {
        unsigned char byte = (unsigned char)(value & 0x7f);
        value = value < 0 ? ~(~value >> 7) : value >> 7; /* arithmetic shift, portably */
        bool done = (value == 0 && !(byte & 0x40)) || (value == -1 && (byte & 0x40));
        if (!done)
            byte |= 0x80;
        bytes_put(b, &byte, 1);
        if (done)
            return;
    }
}

void cw_init(struct chunk_writer *cw, const char *source)
{
    *cw = (struct chunk_writer){
        .major = PPW_STATIC_MAJOR, .minor = PPW_STATIC_MINOR, .source = source};
    bytes_zeros(&cw->strtab, 1);
}

void cw_free(struct chunk_writer *cw)
{
    bytes_free(&cw->strtab);
    bytes_free(&cw->records);
    bytes_free(&cw->current);
}

void cw_begin(struct chunk_writer *cw, uint32_t kind)
{
    cw->current.len = 0;
    cw->current_kind = kind;
}

void cw_u(struct chunk_writer *cw, uint64_t value)
{
    put_uleb(&cw->current, value);
}
void cw_s(struct chunk_writer *cw, int64_t value)
{
    put_sleb(&cw->current, value);
}
void cw_raw(struct chunk_writer *cw, const void *data, size_t len)
{
    bytes_put(&cw->current, data, len);
}

void cw_str(struct chunk_writer *cw, const char *s)
{
    if (!s || !*s) {
        cw_u(cw, 0);
        return;
    }
    cw_u(cw, cw->strtab.len);
    bytes_put(&cw->strtab, s, strlen(s) + 1);
}

void cw_end(struct chunk_writer *cw)
{
    put_le(&cw->records, cw->current_kind, 4);
    put_le(&cw->records, cw->current.len, 4);
    bytes_put(&cw->records, cw->current.data, cw->current.len);
    cw->record_count++;
    cw->current.len = 0;
}

size_t cw_mark(const struct chunk_writer *cw)
{
    return cw->records.len + 8 + cw->current.len;
}

size_t cw_chunk_offset(const struct chunk_writer *cw, size_t mark)
{
    return PPW_STATIC_HEADER_SIZE + 8 + cw->strtab.len + mark;
}

static void set_le(unsigned char *at, uint64_t value, int size)
{
    for (int i = 0; i < size; i++)
        at[i] = (unsigned char)(value >> (8 * i));
}

static uint64_t get_le(const unsigned char *at, int size)
{
    uint64_t value = 0;
    for (int i = size - 1; i >= 0; i--)
        value = value << 8 | at[i];
    return value;
}

void chunk_rehash(unsigned char *chunk, uint32_t size)
{
    if (size)
        set_le(chunk + 12, size, 4);
    uint32_t header = (uint32_t)get_le(chunk + 8, 4), total = (uint32_t)get_le(chunk + 12, 4);
    uint64_t hash = ppw_fnv1a64(chunk + header, total - header, PPW_FNV1A64_INIT);
    set_le(chunk + 16, hash, 8);
}

void cw_finish(const struct chunk_writer *cw, struct bytes *out)
{
    struct bytes payload = {0};
    put_le(&payload, PPW_REC_STRTAB, 4);
    put_le(&payload, cw->strtab.len, 4);
    bytes_put(&payload, cw->strtab.data, cw->strtab.len);
    bytes_put(&payload, cw->records.data, cw->records.len);

    uint64_t unit_id = ppw_fnv1a64(cw->source, strlen(cw->source), PPW_FNV1A64_INIT);
    unit_id = ppw_fnv1a64(payload.data, payload.len, unit_id);
    bytes_put(out, PPW_STATIC_MAGIC, 4);
    put_le(out, cw->major, 2);
    put_le(out, cw->minor, 2);
    put_le(out, PPW_STATIC_HEADER_SIZE, 4);
    put_le(out, PPW_STATIC_HEADER_SIZE + payload.len, 4);
    put_le(out, ppw_fnv1a64(payload.data, payload.len, PPW_FNV1A64_INIT), 8);
    put_le(out, cw->record_count + 1, 4);
    put_le(out, 0, 4);
    put_le(out, unit_id, 8);
    bytes_put(out, payload.data, payload.len);
    bytes_free(&payload);
}

void cw_unit(struct chunk_writer *cw, const char *source, const char *comp_dir,
             const char *producer, uint32_t analysed, uint32_t skipped)
{
    cw_begin(cw, PPW_REC_UNIT);
    cw_str(cw, source);
    cw_str(cw, comp_dir);
    cw_str(cw, producer);
    cw_u(cw, analysed);
    cw_u(cw, skipped);
    cw_end(cw);
}

void cw_func(struct chunk_writer *cw, const char *name, const char *linkage, const char *file,
             uint32_t line, uint32_t flags, const char *parent, uint64_t nvars, uint64_t ncalls)
{
    cw_begin(cw, PPW_REC_FUNC);
    cw_str(cw, name);
    cw_str(cw, linkage);
    cw_str(cw, file);
    cw_u(cw, line);
    cw_u(cw, flags);
    cw_str(cw, parent);
    cw_u(cw, nvars);
    cw_u(cw, ncalls);
    cw_end(cw);
}

static void put_loclist(struct chunk_writer *cw, const struct tloc *locs, size_t count)
{
    cw_u(cw, count);
    for (size_t i = 0; i < count; i++) {
        cw_str(cw, locs[i].file);
        cw_u(cw, locs[i].line);
        cw_u(cw, locs[i].col);
    }
}

void cw_var(struct chunk_writer *cw, uint32_t id, const struct tvar *var)
{
    cw_begin(cw, PPW_REC_VAR);
    cw_u(cw, id);
    cw_str(cw, var->name);
    cw_u(cw, var->kind);
    cw_str(cw, var->type);
    cw_str(cw, var->decl_file);
    cw_u(cw, var->decl_line);
    cw_u(cw, var->parent);
    cw_u(cw, var->param_index);
    cw_u(cw, var->flags);
    cw_str(cw, var->key);
    put_loclist(cw, var->inclusive, var->inclusive_count);
    put_loclist(cw, var->exclusive, var->exclusive_count);
    cw_end(cw);
}

void cw_call(struct chunk_writer *cw, uint32_t id, uint32_t line, uint32_t col, const char *callee,
             uint32_t kind, const struct tbinding *bindings, size_t count)
{
    cw_begin(cw, PPW_REC_CALL);
    cw_u(cw, id);
    cw_u(cw, line);
    cw_u(cw, col);
    cw_str(cw, callee);
    cw_u(cw, kind);
    cw_u(cw, 0);
    cw_u(cw, count);
    for (size_t i = 0; i < count; i++) {
        cw_u(cw, bindings[i].var);
        cw_s(cw, bindings[i].formal);
        cw_u(cw, bindings[i].mode);
        cw_str(cw, bindings[i].path);
    }
    cw_end(cw);
}

static bool same_access_loc(const struct taccess *a, const struct taccess *b)
{
    return a->line == b->line && a->col == b->col &&
           strcmp(a->file ? a->file : "", b->file ? b->file : "") == 0;
}

void cw_access(struct chunk_writer *cw, const struct taccess *entries, size_t count)
{
    size_t locations = 0;
    for (size_t i = 0; i < count; i++)
        locations += i == 0 || !same_access_loc(&entries[i], &entries[i - 1]);
    cw_begin(cw, PPW_REC_ACCESS);
    cw_u(cw, locations);
    for (size_t i = 0; i < count;) {
        size_t end = i + 1;
        while (end < count && same_access_loc(&entries[end], &entries[i]))
            end++;
        cw_str(cw, entries[i].file);
        cw_u(cw, entries[i].line);
        cw_u(cw, entries[i].col);
        cw_u(cw, end - i);
        for (; i < end; i++) {
            cw_u(cw, entries[i].var);
            cw_u(cw, entries[i].reads);
            cw_u(cw, entries[i].writes);
        }
    }
    cw_end(cw);
}

void cw_global(struct chunk_writer *cw, const char *name, const char *key, const char *type,
               const char *file, uint32_t line)
{
    cw_begin(cw, PPW_REC_GLOBAL);
    cw_str(cw, name);
    cw_str(cw, key);
    cw_str(cw, type);
    cw_str(cw, file);
    cw_u(cw, line);
    cw_end(cw);
}
