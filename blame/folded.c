/* Reader of folded stacks (folded.h, docs/FORMATS.md section 3). */
#define _POSIX_C_SOURCE 200809L

#include "folded.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ppw/static_format.h"
#include "read_graph.h"
#include "stacks.h"

/* Counts stay far from overflowing the sums of a file's samples. */
#define MAX_COUNT 1000000000000000ull

struct folded {
    const char *path;
    size_t lineno;
    const struct ppw_static_graph *graph;
    struct ppw_stack_set *set;
    struct ppw_err *err;
    struct ppw_blame_frame *frames; /* the line's frames, root first */
    size_t cap;
};

#define BAD_LINE(f, ...) bad_line(f, PPW_ECORRUPT, __VA_ARGS__)

static int bad_line(struct folded *f, int code, const char *fmt, ...) PPW_PRINTF(3, 4);

/* Records code with "<path>:<line>: <message>". */
static int bad_line(struct folded *f, int code, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return ppw_err_set(f->err, code, "%s:%zu: %s", f->path, f->lineno, what);
}

static bool all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return n > 0;
}

/* s[0..n), all digits, as a number no larger than max; false if it is not. */
static bool parse_number(const char *s, size_t n, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (!all_digits(s, n))
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (max - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

/* LINE, LINE:COL, FILE:LINE or FILE:LINE:COL into frame. */
static int parse_location(struct folded *f, char *loc, const char *frame_text,
                          struct ppw_blame_frame *frame)
{
    char *last = strrchr(loc, ':'), *prev = NULL;
    const char *file = NULL, *line = loc, *col = NULL;
    if (last) {
        *last = '\0';
        prev = strrchr(loc, ':');
        if (all_digits(loc, strlen(loc))) { /* LINE:COL */
            line = loc, col = last + 1;
        } else if (prev && all_digits(prev + 1, strlen(prev + 1)) && prev != loc) {
            *prev = '\0'; /* FILE:LINE:COL */
            file = loc, line = prev + 1, col = last + 1;
        } else {
            file = loc, line = last + 1;
        }
    }
    uint64_t line_no, col_no = 0;
    if (!parse_number(line, strlen(line), UINT32_MAX, &line_no) || line_no == 0)
        return BAD_LINE(f, "frame '%s': the line must be a number from 1", frame_text);
    if (col && !parse_number(col, strlen(col), UINT32_MAX, &col_no))
        return BAD_LINE(f, "frame '%s': the column must be a number", frame_text);
    if (file && !file[0])
        return BAD_LINE(f, "frame '%s': empty file name", frame_text);
    frame->line = (uint32_t)line_no;
    frame->col = (uint32_t)col_no;
    frame->file = file ? ppw_stack_set_intern(f->set, file) : NULL;
    return file && !frame->file ? ppw_err_set(f->err, PPW_ENOMEM, "out of memory") : 0;
}

/* Checks a frame's function against the static graph. */
static int check_function(struct folded *f, const char *name, bool located)
{
    if (!f->graph)
        return 0;
    const struct ppw_static_func *func = ppw_static_graph_find_func(f->graph, name);
    bool has_graph = func && (func->flags & PPW_FUNC_ANALYSED);
    if (located && !func)
        return bad_line(f, PPW_ENOTFOUND,
                        "no function named '%s' in the static graphs of %s (a frame of code "
                        "without a blame graph has no location: write it bare)",
                        name, f->graph->path);
    if (!located && has_graph)
        return BAD_LINE(f, "frame '%s' has a blame graph: give its location (%s@LINE)", name,
                        name);
    return 0;
}

static int parse_frame(struct folded *f, char *text, struct ppw_blame_frame *frame)
{
    char copy[256];
    snprintf(copy, sizeof copy, "%s", text);
    *frame = (struct ppw_blame_frame){0};
    char *at = strrchr(text, '@');
    if (at)
        *at = '\0';
    if (!text[0])
        return BAD_LINE(f, "frame '%s' has no function name", copy);
    int rc = check_function(f, text, at != NULL);
    if (!rc && at)
        rc = parse_location(f, at + 1, copy, frame);
    if (!rc && !(frame->function = ppw_stack_set_intern(f->set, text)))
        rc = ppw_err_set(f->err, PPW_ENOMEM, "out of memory");
    return rc;
}

static int push_frame(struct folded *f, size_t n)
{
    if (n < f->cap)
        return 0;
    size_t cap = f->cap ? f->cap * 2 : 64;
    struct ppw_blame_frame *frames = realloc(f->frames, cap * sizeof *frames);
    if (!frames)
        return ppw_err_set(f->err, PPW_ENOMEM, "out of memory");
    f->frames = frames;
    f->cap = cap;
    return 0;
}

static int parse_line(struct folded *f, char *line)
{
    size_t len = strlen(line);
    while (len && strchr(" \t\r\n", line[len - 1]))
        line[--len] = '\0';
    char *start = line + strspn(line, " \t");
    if (!*start || *start == '#')
        return 0;
    char *last_space = NULL;
    for (char *p = start; *p; p++)
        if (*p == ' ' || *p == '\t')
            last_space = p;
    uint64_t count;
    if (!last_space)
        return BAD_LINE(f, "expected frames and a count, as in 'main@20;foo@9 3'");
    const char *count_text = last_space + 1;
    if (!parse_number(count_text, strlen(count_text), MAX_COUNT, &count) || count == 0)
        return BAD_LINE(f, "the count '%s' is not a whole number from 1 to 10^15", count_text);
    while (last_space > start && (last_space[-1] == ' ' || last_space[-1] == '\t'))
        last_space--;
    *last_space = '\0';
    size_t n = 0;
    for (char *frame = start;; n++) {
        char *end = frame + strcspn(frame, ";");
        bool more = *end == ';';
        *end = '\0';
        int rc = push_frame(f, n);
        if (!rc)
            rc = parse_frame(f, frame, &f->frames[n]);
        if (rc)
            return rc;
        if (!more)
            break;
        frame = end + 1;
    }
    n++;
    for (size_t i = 0; i < n / 2; i++) { /* innermost first */
        struct ppw_blame_frame t = f->frames[i];
        f->frames[i] = f->frames[n - 1 - i];
        f->frames[n - 1 - i] = t;
    }
    return ppw_stack_set_add(f->set, f->frames, n, count, (double)count, 0, f->err);
}

int ppw_folded_load(const char *path, const struct ppw_static_graph *graph,
                    struct ppw_stack_set *set, struct ppw_err *err)
{
    struct folded f = {.path = path, .graph = graph, .set = set, .err = err};
    FILE *in = fopen(path, "r");
    if (!in)
        return ppw_err_set(err, PPW_EIO, "%s: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    errno = 0;
    ssize_t len;
    while (!rc && (len = getline(&line, &cap, in)) >= 0) {
        f.lineno++;
        if (strlen(line) != (size_t)len)
            rc = BAD_LINE(&f, "a NUL byte in the line");
        else
            rc = parse_line(&f, line);
    }
    if (!rc && ferror(in))
        rc = ppw_err_set(err, PPW_EIO, "%s: %s", path, strerror(errno ? errno : EIO));
    free(line);
    free(f.frames);
    fclose(in);
    return rc;
}
