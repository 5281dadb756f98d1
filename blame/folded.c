/* Reader and writer of folded stacks (folded.h, docs/FORMATS.md section 3). */
#define _POSIX_C_SOURCE 200809L

#include "folded.h"

#include <errno.h>
#include <inttypes.h>
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

/* Decodes the %XX escapes of s in place; false when a '%' does not start
 * two hex digits, or one stands for a NUL byte. */
static bool unescape(char *s)
{
    char *out = s;
    for (const char *in = s; *in; in++) {
        if (*in != '%') {
            *out++ = *in;
            continue;
        }
        int value = 0;
        for (int k = 1; k <= 2; k++) {
            char c = in[k];
            int digit = c >= '0' && c <= '9'   ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : -1;
            if (digit < 0)
                return false;
            value = value * 16 + digit;
        }
        if (!value)
            return false;
        *out++ = (char)value;
        in += 2;
    }
    *out = '\0';
    return true;
}

/* LINE, LINE:COL, FILE:LINE or FILE:LINE:COL into frame (line 0: no line). */
static int parse_location(struct folded *f, char *loc, const char *frame_text,
                          struct ppw_blame_frame *frame)
{
    char *last = strrchr(loc, ':'), *prev = NULL;
    char *file = NULL;
    const char *line = loc, *col = NULL;
    if (last) {
        *last = '\0';
        prev = strrchr(loc, ':');
        if (all_digits(loc, strlen(loc))) { /* LINE:COL */
            line = loc, col = last + 1;
        } else if (prev && all_digits(prev + 1, strlen(prev + 1))) {
            *prev = '\0'; /* FILE:LINE:COL (an empty FILE is an error below) */
            file = loc, line = prev + 1, col = last + 1;
        } else {
            file = loc, line = last + 1;
        }
    }
    uint64_t line_no, col_no = 0;
    if (!parse_number(line, strlen(line), UINT32_MAX, &line_no))
        return BAD_LINE(f, "frame '%s': the line must be a number (0: no line)", frame_text);
    if (col && !parse_number(col, strlen(col), UINT32_MAX, &col_no))
        return BAD_LINE(f, "frame '%s': the column must be a number", frame_text);
    if (file && !file[0])
        return BAD_LINE(f, "frame '%s': empty file name", frame_text);
    if (file && !unescape(file))
        return BAD_LINE(f,
                        "frame '%s': a '%%' in the file must start an escape %%XX (%%25 is '%%')",
                        frame_text);
    frame->line = (uint32_t)line_no;
    frame->col = (uint32_t)col_no;
    frame->file = file ? ppw_stack_set_intern(f->set, file) : NULL;
    return file && !frame->file ? ppw_err_set(f->err, PPW_ENOMEM, "out of memory") : 0;
}

/* How a frame gives its location. */
enum frame_form {
    FORM_BARE,    /* FUNCTION: code without a blame graph, no location */
    FORM_GRAPH,   /* FUNCTION@LOCATION: a function of the static graphs */
    FORM_FOREIGN, /* FUNCTION@@LOCATION: code without a blame graph, located */
};

/* Checks a frame's function (NULL: unknown) against the static graph. */
static int check_function(struct folded *f, const char *name, enum frame_form form)
{
    if (!f->graph || form == FORM_FOREIGN)
        return 0;
    const struct ppw_static_func *func = name ? ppw_static_graph_find_func(f->graph, name) : NULL;
    bool has_graph = func && (func->flags & PPW_FUNC_ANALYSED);
    if (form == FORM_GRAPH && !func)
        return bad_line(f, PPW_ENOTFOUND,
                        "no function named '%s' in the static graphs of %s (a frame of code "
                        "without a blame graph is written bare, or FUNCTION@@LOCATION)",
                        name ? name : "??", f->graph->path);
    if (form == FORM_BARE && has_graph)
        return BAD_LINE(f,
                        "frame '%s' has a blame graph: give its location (%s@LINE, or %s@0 "
                        "without a line)",
                        name, name, name);
    return 0;
}

static int parse_frame(struct folded *f, char *text, struct ppw_blame_frame *frame)
{
    char copy[256];
    snprintf(copy, sizeof copy, "%s", text);
    *frame = (struct ppw_blame_frame){0};
    /* escaped names hold no '@': the first one ends the name */
    char *at = strchr(text, '@');
    enum frame_form form = !at ? FORM_BARE : at[1] == '@' ? FORM_FOREIGN : FORM_GRAPH;
    if (at)
        *at = '\0';
    if (!text[0])
        return BAD_LINE(f, "frame '%s' has no function name", copy);
    if (strcmp(text, PPW_FOLDED_NO_FRAMES) == 0)
        return BAD_LINE(f,
                        "frame '%s': '%s' is a stack without frames, alone on its line (a "
                        "function named '-' is written %%2D)",
                        copy, PPW_FOLDED_NO_FRAMES);
    bool unknown = strcmp(text, "??") == 0;
    if (!unknown && !unescape(text))
        return BAD_LINE(
            f, "frame '%s': a '%%' in the name must start an escape %%XX (%%25 is '%%')", copy);
    const char *name = unknown ? NULL : text;
    int rc = check_function(f, name, form);
    if (!rc && at)
        rc = parse_location(f, at + (form == FORM_FOREIGN ? 2 : 1), copy, frame);
    if (!rc && name && !(frame->function = ppw_stack_set_intern(f->set, name)))
        rc = ppw_err_set(f->err, PPW_ENOMEM, "out of memory");
    return rc;
}

/* Bytes a name or file cannot hold as they are: the separators (';',
 * blanks, '@'), '#' (a comment at the start of a line), '%' (the escape)
 * and control characters. */
static bool needs_escape(unsigned char c)
{
    return c <= ' ' || c == 0x7f || c == '%' || c == ';' || c == '@' || c == '#';
}

static void write_escaped(FILE *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (needs_escape(*p))
            fprintf(out, "%%%02X", *p);
        else
            putc(*p, out);
    }
}

void ppw_folded_write_frame(FILE *out, const struct ppw_blame_frame *frame, bool has_graph)
{
    const char *name = frame->function;
    if (!name || !name[0]) {
        fputs("??", out); /* unknown */
    } else if (strcmp(name, "??") == 0 || strcmp(name, PPW_FOLDED_NO_FRAMES) == 0) {
        /* a function really named so: its first byte escaped */
        fprintf(out, "%%%02X", (unsigned char)name[0]);
        write_escaped(out, name + 1);
    } else {
        write_escaped(out, name);
    }
    bool file = frame->file && frame->file[0];
    if (!has_graph && !file && !frame->line && !frame->col)
        return;
    fputs(has_graph ? "@" : "@@", out);
    if (file) { /* always with the column: FILE:LINE alone would read as LINE:COL for a file "12" */
        write_escaped(out, frame->file);
        fprintf(out, ":%" PRIu32 ":%" PRIu32, frame->line, frame->col);
    } else if (frame->col) {
        fprintf(out, "%" PRIu32 ":%" PRIu32, frame->line, frame->col);
    } else {
        fprintf(out, "%" PRIu32, frame->line);
    }
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
    if (strcmp(start, PPW_FOLDED_NO_FRAMES) == 0) /* samples whose stack has no frame */
        return ppw_stack_set_add(f->set, NULL, 0, count, (double)count, 0, f->err);
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
