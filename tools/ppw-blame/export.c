/* ppw-blame export's helpers (export.h). */
#define _POSIX_C_SOURCE 200809L
#include "export.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read_graph.h"
#include "view.h"

/* ---- each stack's variable ---- */

struct export_blame {
    const char **variable; /* by stack, NULL when none; names in the static graph */
    size_t n;
};

int export_blame_new(const struct view_input *in, struct export_blame **out, struct ppw_err *err)
{
    size_t n;
    const struct ppw_blame_stack *stacks = view_stacks(in, &n);
    struct export_blame *b = calloc(1, sizeof *b);
    if (!b || !(b->variable = calloc(n ? n : 1, sizeof *b->variable))) {
        free(b);
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    }
    b->n = n;
    /* one attribution of all stacks, which reports each stack's variable */
    const struct ppw_blame_options options = {.stack_variable = b->variable};
    struct ppw_blame_result *r = NULL;
    int rc = ppw_blame_attribute(in->graph, stacks, n, &options, &r, err);
    ppw_blame_result_free(r);
    if (rc) {
        export_blame_free(b);
        return rc;
    }
    *out = b;
    return 0;
}

const char *export_stack_variable(const struct export_blame *blame, size_t stack)
{
    return blame && stack < blame->n ? blame->variable[stack] : NULL;
}

void export_blame_free(struct export_blame *blame)
{
    if (!blame)
        return;
    free(blame->variable);
    free(blame);
}

/* ---- distinct frames ---- */

static int add(struct export_frames *f, const char *name, const char *file, bool variable,
               const struct ppw_static_graph *graph, size_t *index)
{
    bool added;
    struct ppw_strmap_entry *e = ppw_strmap_put(&f->index, name, f->count, &added);
    if (!e)
        return -1;
    *index = e->value;
    if (!added)
        return 0;
    if (f->count == f->cap) { /* the three arrays grow together */
        size_t cap = f->cap ? 2 * f->cap : 256;
        const char **names = realloc(f->names, cap * sizeof *names);
        if (names)
            f->names = names;
        const char **files = realloc(f->files, cap * sizeof *files);
        if (files)
            f->files = files;
        const struct ppw_static_func **funcs = realloc(f->funcs, cap * sizeof *funcs);
        if (funcs)
            f->funcs = funcs;
        if (!names || !files || !funcs)
            return -1;
        f->cap = cap;
    }
    f->names[f->count] = e->key; /* the index's copy */
    f->files[f->count] = file;
    f->funcs[f->count] = variable || !graph ? NULL : ppw_static_graph_find_func(graph, name);
    f->count++;
    return 0;
}

int export_frames_build(struct export_frames *f, const struct ppw_blame_stack *stacks, size_t n,
                        const struct export_blame *blame, const struct ppw_static_graph *graph)
{
    memset(f, 0, sizeof *f);
    size_t index;
    for (size_t s = 0; s < n; s++) {
        for (size_t k = 0; k < stacks[s].nframes; k++) {
            const struct ppw_blame_frame *fr = &stacks[s].frames[k];
            if (add(f, fr->function ? fr->function : "??", fr->file, false, graph, &index))
                goto fail;
        }
        const char *var = export_stack_variable(blame, s);
        if (!var || ppw_strmap_find(&f->variables, var))
            continue;
        size_t len = strlen(var) + sizeof "[variable] ";
        char *name = malloc(len);
        if (!name)
            goto fail;
        snprintf(name, len, "[variable] %s", var);
        bool added;
        int rc = add(f, name, NULL, true, graph, &index);
        free(name);
        if (rc || !ppw_strmap_put(&f->variables, var, index, &added))
            goto fail;
    }
    return 0;
fail:
    export_frames_free(f);
    return -1;
}

size_t export_frame_index(const struct export_frames *f, const char *function)
{
    const struct ppw_strmap_entry *e = ppw_strmap_find(&f->index, function ? function : "??");
    return e ? e->value : f->count;
}

size_t export_variable_index(const struct export_frames *f, const char *variable)
{
    const struct ppw_strmap_entry *e = ppw_strmap_find(&f->variables, variable);
    return e ? e->value : f->count;
}

void export_frames_free(struct export_frames *f)
{
    free(f->names);
    free(f->files);
    free(f->funcs);
    ppw_strmap_free(&f->index);
    ppw_strmap_free(&f->variables);
    memset(f, 0, sizeof *f);
}

/* ---- threads ---- */

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

uint32_t *export_stack_threads(const struct ppw_blame_stack *stacks, size_t n, size_t *count)
{
    *count = 0;
    uint32_t *ids = malloc((n ? n : 1) * sizeof *ids);
    if (!ids)
        return NULL;
    for (size_t s = 0; s < n; s++)
        if (stacks[s].nframes)
            ids[(*count)++] = stacks[s].thread;
    qsort(ids, *count, sizeof *ids, compare_u32);
    size_t m = 0;
    for (size_t i = 0; i < *count; i++)
        if (!m || ids[m - 1] != ids[i])
            ids[m++] = ids[i];
    *count = m;
    return ids;
}

/* ---- the output file ---- */

FILE *export_open(const char *path, struct ppw_err *err)
{
    if (!path || strcmp(path, "-") == 0)
        return stdout;
    FILE *f = fopen(path, "w");
    if (!f)
        ppw_err_set(err, PPW_EIO, "cannot write %s: %s", path, strerror(errno));
    return f;
}

int export_finish(FILE *out, const char *path, int rc, struct ppw_err *err)
{
    if (out == stdout) {
        if (rc)
            return rc;
        if (fflush(stdout) != 0 || ferror(stdout))
            return ppw_err_set(err, PPW_EIO, "cannot write the standard output: %s",
                               strerror(errno));
        return 0;
    }
    bool bad = ferror(out) != 0;
    if ((fclose(out) != 0 || bad) && !rc)
        rc = ppw_err_set(err, PPW_EIO, "cannot write %s: %s", path,
                         errno ? strerror(errno) : "write error");
    if (rc)
        remove(path);
    return rc;
}

void export_xml(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '<')
            fputs("&lt;", out);
        else if (c == '>')
            fputs("&gt;", out);
        else if (c == '&')
            fputs("&amp;", out);
        else if (c == '"')
            fputs("&quot;", out);
        else if (c < 0x20 && c != '\n' && c != '\t')
            putc('?', out);
        else
            putc(c, out);
    }
}
