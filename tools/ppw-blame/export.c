/* ppw-blame export's helpers (export.h). */
#define _POSIX_C_SOURCE 200809L
#include "export.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read_graph.h"
#include "view.h"

bool export_has_graph(const struct view_input *in, const char *function)
{
    return function && in->graph && ppw_static_graph_find_func(in->graph, function) != NULL;
}

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

static size_t name_hash(const char *s)
{
    size_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static const char *frame_name(const char *function)
{
    return function ? function : "??";
}

/* The frame named name: its index, or count when absent (*slot: where to
 * put it). */
static size_t find(const struct export_frames *f, const char *name, size_t *slot)
{
    size_t i = name_hash(name) & f->mask;
    while (f->slots[i] && strcmp(f->names[f->slots[i] - 1], name) != 0)
        i = (i + 1) & f->mask;
    *slot = i;
    return f->slots[i] ? f->slots[i] - 1 : f->count;
}

static int add(struct export_frames *f, const char *name, const char *file, size_t cap)
{
    size_t slot;
    if (find(f, name, &slot) < f->count)
        return 0;
    if (f->count == cap)
        return -1;
    f->names[f->count] = name;
    f->files[f->count] = file;
    f->slots[slot] = ++f->count;
    return 0;
}

int export_frames_build(struct export_frames *f, const struct ppw_blame_stack *stacks, size_t n,
                        const struct export_blame *blame)
{
    memset(f, 0, sizeof *f);
    size_t cap = 1;
    for (size_t s = 0; s < n; s++)
        cap += stacks[s].nframes + (export_stack_variable(blame, s) != NULL);
    size_t slots = 16;
    while (slots < 2 * cap)
        slots *= 2;
    f->mask = slots - 1;
    f->names = calloc(cap, sizeof *f->names);
    f->files = calloc(cap, sizeof *f->files);
    f->owned = calloc(cap, sizeof *f->owned);
    f->slots = calloc(slots, sizeof *f->slots);
    if (!f->names || !f->files || !f->owned || !f->slots)
        goto fail;
    for (size_t s = 0; s < n; s++) {
        for (size_t k = 0; k < stacks[s].nframes; k++)
            if (add(f, frame_name(stacks[s].frames[k].function), stacks[s].frames[k].file, cap))
                goto fail;
        const char *var = export_stack_variable(blame, s);
        if (!var)
            continue;
        size_t len = strlen(var) + sizeof "[variable] ";
        char *name = malloc(len);
        if (!name)
            goto fail;
        snprintf(name, len, "[variable] %s", var);
        size_t slot;
        if (find(f, name, &slot) < f->count) {
            free(name);
            continue;
        }
        f->owned[f->nowned++] = name;
        if (add(f, name, NULL, cap))
            goto fail;
    }
    return 0;
fail:
    export_frames_free(f);
    return -1;
}

size_t export_frame_index(const struct export_frames *f, const char *function, const char *file)
{
    (void)file; /* frames are functions: the first file seen names one */
    size_t slot;
    return find(f, frame_name(function), &slot);
}

size_t export_variable_index(const struct export_frames *f, const char *variable)
{
    for (size_t i = 0; i < f->nowned; i++) /* "[variable] " + variable */
        if (strcmp(f->owned[i] + sizeof "[variable] " - 1, variable) == 0) {
            size_t slot;
            return find(f, f->owned[i], &slot);
        }
    return f->count;
}

void export_frames_free(struct export_frames *f)
{
    for (size_t i = 0; f->owned && i < f->nowned; i++)
        free(f->owned[i]);
    free(f->owned);
    free(f->names);
    free(f->files);
    free(f->slots);
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
