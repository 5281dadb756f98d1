#include "source_text.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Sources larger than this are not read (generated tables, amalgamations). */
enum { MAX_SOURCE_BYTES = 16 << 20, MAX_USE_DEPTH = 3, MAX_USES_PER_VALUE = 16 };

struct ppw_source_file {
    struct ppw_source_file *next;
    char *path;
    char *data; /* NUL-terminated; NULL when unreadable */
    size_t *line_starts;
    size_t line_count;
};

static char *read_regular_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat info;
    char *data = NULL;
    if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size < MAX_SOURCE_BYTES) {
        size_t size = (size_t)info.st_size, done = 0;
        data = malloc(size + 1);
        while (data && done < size) {
            ssize_t got = read(fd, data + done, size - done);
            if (got <= 0)
                break;
            done += (size_t)got;
        }
        if (data)
            data[done] = '\0';
    }
    close(fd);
    return data;
}

static struct ppw_source_file *source_file(struct ppw_source_text *text, const char *path)
{
    for (struct ppw_source_file *file = text->files; file; file = file->next)
        if (!strcmp(file->path, path))
            return file;
    struct ppw_source_file *file = ppw_xcalloc(1, sizeof *file);
    file->path = strdup(path);
    file->data = read_regular_file(path);
    size_t capacity = 0;
    for (const char *at = file->data; at && *at;) {
        file->line_starts = ppw_grow(file->line_starts, &capacity, file->line_count + 1,
                                     sizeof *file->line_starts, 256);
        file->line_starts[file->line_count++] = (size_t)(at - file->data);
        const char *end = strchr(at, '\n');
        at = end ? end + 1 : at + strlen(at);
    }
    file->next = text->files;
    text->files = file;
    return file;
}

void ppw_source_text_free(struct ppw_source_text *text)
{
    ppw_ptrmap_free(&text->located_index);
    free(text->located);
    text->located = NULL;
    text->located_count = text->located_capacity = 0;
    while (text->files) {
        struct ppw_source_file *next = text->files->next;
        free(text->files->path);
        free(text->files->data);
        free(text->files->line_starts);
        free(text->files);
        text->files = next;
    }
}

static int located(LLVMValueRef value)
{
    return LLVMIsAInstruction(value) && LLVMGetDebugLocLine(value) > 0;
}

/* The instruction itself when it has a location, else the first located
 * instruction among its users (hoisted address computations lose theirs;
 * the loads and subscripts that use them keep it). */
static LLVMValueRef located_use(LLVMValueRef value, int depth)
{
    if (located(value))
        return value;
    if (depth == MAX_USE_DEPTH)
        return NULL;
    int visited = 0;
    for (LLVMUseRef use = LLVMGetFirstUse(value); use && visited < MAX_USES_PER_VALUE;
         use = LLVMGetNextUse(use), visited++) {
        LLVMValueRef found = located_use(LLVMGetUser(use), depth + 1);
        if (found)
            return found;
    }
    return NULL;
}

static int is_ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* The subscript text after `base` in the postfix expression starting at
 * `start` (`a->b[i].base[K]...`), trimmed; 0 when the expression does not
 * subscript `base`.  Stops at the end of the expression. */
static int subscript_in_chain(const char *start, const char *line_end, const char *base,
                              const char **token, size_t *token_length)
{
    size_t base_length = strlen(base);
    const char *at = start;
    const char *last_name = NULL;
    size_t last_length = 0;
    while (at < line_end) {
        if (is_ident_char(*at)) {
            last_name = at;
            while (at < line_end && is_ident_char(*at))
                at++;
            last_length = (size_t)(at - last_name);
        } else if (*at == '.' || (*at == '-' && at + 1 < line_end && at[1] == '>')) {
            at += *at == '.' ? 1 : 2;
        } else if (*at == ' ' || *at == '\t') {
            at++;
        } else if (*at == '[') {
            const char *open = ++at;
            int depth = 1;
            while (at < line_end && depth) {
                depth += *at == '[' ? 1 : *at == ']' ? -1 : 0;
                at++;
            }
            if (depth)
                return 0;
            if (last_name && last_length == base_length && !memcmp(last_name, base, base_length)) {
                const char *close = at - 1;
                while (open < close && isspace((unsigned char)*open))
                    open++;
                while (close > open && isspace((unsigned char)close[-1]))
                    close--;
                *token = open;
                *token_length = (size_t)(close - open);
                return 1;
            }
            last_name = NULL;
        } else {
            return 0;
        }
    }
    return 0;
}

/* An identifier, or an integer literal equal to index. */
static int names_index(const char *token, size_t length, unsigned long long index)
{
    if (!length || length > 64)
        return 0;
    for (size_t i = 0; i < length; i++)
        if (!is_ident_char(token[i]))
            return 0;
    if (!isdigit((unsigned char)token[0]))
        return 1;
    char digits[72];
    memcpy(digits, token, length);
    digits[length] = '\0';
    char *end = NULL;
    unsigned long long value = strtoull(digits, &end, 0);
    return end && !*end && value == index;
}

const char *ppw_source_subscript(struct ppw_source_text *text, struct ppw_arena *arena,
                                 LLVMValueRef inst, const char *base, unsigned long long index)
{
    if (!base || !base[0])
        return NULL;
    int known = ppw_ptrmap_get(&text->located_index, inst, 0);
    LLVMValueRef where;
    if (known) {
        where = text->located[known - 1];
    } else {
        where = located_use(inst, 0);
        text->located = ppw_grow(text->located, &text->located_capacity, text->located_count + 1,
                                 sizeof *text->located, 64);
        text->located[text->located_count++] = where;
        ppw_ptrmap_put(&text->located_index, inst, (int)text->located_count);
    }
    if (!where)
        return NULL;
    unsigned length = 0;
    const char *name = LLVMGetDebugLocFilename(where, &length);
    const char *directory = LLVMGetDebugLocDirectory(where, &length);
    if (!name || !name[0])
        return NULL;
    char path[4096];
    int written = name[0] == '/' || !directory || !directory[0]
                      ? snprintf(path, sizeof path, "%s", name)
                      : snprintf(path, sizeof path, "%s/%s", directory, name);
    if (written < 0 || (size_t)written >= sizeof path)
        return NULL;
    struct ppw_source_file *file = source_file(text, path);
    unsigned line = LLVMGetDebugLocLine(where), column = LLVMGetDebugLocColumn(where);
    if (!file->data || line > file->line_count)
        return NULL;
    const char *line_start = file->data + file->line_starts[line - 1];
    const char *line_end = strchr(line_start, '\n');
    if (!line_end)
        line_end = line_start + strlen(line_start);
    if (!column || column > (unsigned)(line_end - line_start))
        return NULL;
    const char *token = NULL;
    size_t token_length = 0;
    if (!subscript_in_chain(line_start + column - 1, line_end, base, &token, &token_length) ||
        !names_index(token, token_length, index))
        return NULL;
    return ppw_arena_printf(arena, "%.*s", (int)token_length, token);
}
