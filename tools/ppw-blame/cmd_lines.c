/* ppw-blame lines: the hot source lines.  A sample's own line is its
 * innermost location in code with a blame graph (a sample in a library is
 * charged to the line that called it); every line on its stack, up to main,
 * counts it inclusively.  Output shapes are documented in docs/ppw-blame.md. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "user_stacks.h"
#include "ppw/static_format.h"
#include "read_graph.h"
#include "strmap.h"
#include "view.h"

static const char usage[] =
    "usage: ppw-blame lines [DIR...] [--top N] [--format text|tsv|csv|json] [--binary BIN]\n"
    "                       [--force] [--thread T] [--rank R] [--folded FILE]\n\n"
    "The source lines the samples were taken on (self), with the samples of the\n"
    "calls made from each line (incl). A sample in code without a blame graph\n"
    "(a library) counts on the line that called it.\n\n"
    "  --top N            the N first lines (default 20; 0: all)\n"
    "  --format FORMAT    text (default), tsv, csv or json\n"
    "  --thread, --rank, --binary, --force, --folded, several DIRs: as for\n"
    "                     'ppw-blame report'\n"
    "  -h, --help         show this help\n";

struct line_row {
    const char *file, *function;
    uint32_t line;
    uint64_t samples, self, stamp;
    double weight, self_weight;
};

struct lines {
    const struct view_opts *o;
    const struct view_input *in;
    struct ppw_strmap user;  /* functions with a blame graph -> function index */
    struct ppw_strmap index; /* "file:line" -> row */
    struct line_row *rows;
    size_t count, cap;
    uint64_t total;
};

static const struct ppw_static_func *user_func(const struct lines *l, const char *name)
{
    const struct ppw_strmap_entry *e = name ? ppw_strmap_find(&l->user, name) : NULL;
    return e ? &l->in->graph->funcs[e->value] : NULL;
}

static int index_user(struct lines *l)
{
    const struct ppw_static_graph *g = l->in->graph;
    for (size_t i = 0; i < g->func_count; i++) {
        const struct ppw_static_func *f = &g->funcs[i];
        bool added;
        if (!(f->flags & PPW_FUNC_ANALYSED))
            continue;
        if ((f->name[0] && !ppw_strmap_put(&l->user, f->name, i, &added)) ||
            (f->linkage_name[0] && !ppw_strmap_put(&l->user, f->linkage_name, i, &added)))
            return PPW_ENOMEM;
    }
    return 0;
}

static struct line_row *row_of(struct lines *l, const struct ppw_blame_frame *frame)
{
    const struct ppw_static_func *f = user_func(l, frame->function);
    const char *file = frame->file ? frame->file : f ? f->file : "?";
    size_t len = strlen(file) + 16;
    char *key = malloc(len);
    bool added;
    if (!key)
        return NULL;
    snprintf(key, len, "%s:%" PRIu32, file, frame->line);
    struct ppw_strmap_entry *e = ppw_strmap_put(&l->index, key, l->count, &added);
    free(key);
    if (!e)
        return NULL;
    if (added) {
        if (l->count == l->cap) {
            size_t cap = l->cap ? l->cap * 2 : 256;
            struct line_row *rows = realloc(l->rows, cap * sizeof *rows);
            if (!rows)
                return NULL;
            l->rows = rows;
            l->cap = cap;
        }
        l->rows[l->count++] = (struct line_row){
            .file = file, .function = view_frame_name(l->in, frame), .line = frame->line};
    }
    return &l->rows[e->value];
}

static int collect(struct lines *l)
{
    size_t nstacks;
    const struct ppw_blame_stack *stacks = view_stacks(l->in, &nstacks);
    for (size_t s = 0; s < nstacks; s++) {
        const struct ppw_blame_stack *st = &stacks[s];
        size_t self = st->nframes;
        for (size_t i = 0; i < st->nframes && self == st->nframes; i++)
            if (st->frames[i].line && user_func(l, st->frames[i].function))
                self = i;
        for (size_t i = 0; i < st->nframes && self == st->nframes; i++)
            if (st->frames[i].line && ppw_user_stacks_is_program(l->in->names, &st->frames[i]))
                self = i;
        size_t top = view_top_frame(st);
        for (size_t i = 0; i < st->nframes && i <= top; i++) {
            /* the program's lines: not the runtime's, not libppw's */
            if (!st->frames[i].line || !ppw_user_stacks_is_program(l->in->names, &st->frames[i]))
                continue;
            struct line_row *r = row_of(l, &st->frames[i]);
            if (!r)
                return PPW_ENOMEM;
            if (r->stamp != s + 1) {
                r->stamp = s + 1;
                r->samples += st->samples;
                r->weight += st->weight;
            }
            if (i == self) {
                r->self += st->samples;
                r->self_weight += st->weight;
            }
        }
    }
    return 0;
}

static int compare_rows(const void *x, const void *y)
{
    const struct line_row *a = x, *b = y;
    if (a->self != b->self)
        return a->self > b->self ? -1 : 1;
    if (a->samples != b->samples)
        return a->samples > b->samples ? -1 : 1;
    int c = strcmp(a->file, b->file);
    return c ? c : (a->line > b->line) - (a->line < b->line);
}

static void print_row(FILE *out, const struct lines *l, const struct line_row *r, size_t i)
{
    char where[64];
    const char *function = r->function ? r->function : "?";
    if (l->o->fmt == VIEW_TEXT) {
        fprintf(out, "%6.1f %6.1f %9" PRIu64 " ", view_pct(r->samples, l->total),
                view_pct(r->self, l->total), r->self);
        view_metric_cell(out, l->in, r->self_weight);
        snprintf(where, sizeof where, "%s:%" PRIu32, view_basename(r->file), r->line);
        fputs("  ", out);
        view_cell(out, where, 30, true);
        putc(' ', out);
        view_cell(out, function, strlen(function) < 34 ? strlen(function) : 34, false);
        putc('\n', out);
    } else if (l->o->fmt == VIEW_TSV) {
        view_tsv(out, r->file);
        fprintf(out, "\t%" PRIu32 "\t", r->line);
        view_tsv(out, function);
        fprintf(out, "\t%" PRIu64 "\t%" PRIu64 "\t%.3f\t%.3f\t%.9g\t%.9g\n", r->samples, r->self,
                view_pct(r->samples, l->total), view_pct(r->self, l->total), r->weight,
                r->self_weight);
    } else {
        fputs(i ? ",\n{\"file\":" : "\n{\"file\":", out);
        json_string(out, r->file);
        fprintf(out, ",\"line\":%" PRIu32 ",\"function\":", r->line);
        json_string_or_null(out, r->function);
        fprintf(out, ",\"samples\":%" PRIu64 ",\"self_samples\":%" PRIu64 ",\"inclusive\":",
                r->samples, r->self);
        json_double(out, view_pct(r->samples, l->total));
        fputs(",\"self\":", out);
        json_double(out, view_pct(r->self, l->total));
        putc('}', out);
    }
}

static void print_lines(FILE *out, const struct lines *l)
{
    size_t shown = l->o->top_n && l->o->top_n < l->count ? l->o->top_n : l->count;
    if (l->o->fmt == VIEW_JSON) {
        view_json_open(out, l->in, "lines");
    } else if (l->o->fmt == VIEW_TSV) {
        fputs("file\tline\tfunction\tsamples\tself_samples\tinclusive\tself\tinclusive_metric\t"
              "self_metric\n",
              out);
    } else {
        view_text_title(out, l->in, "lines");
        fprintf(out, "\n%6s %6s %9s %9s  %-30s %s\n", "incl%", "self%", "self",
                view_metric_header(l->in),
                "line", "function");
    }
    for (size_t i = 0; i < shown; i++)
        print_row(out, l, &l->rows[i], i);
    if (l->o->fmt == VIEW_JSON)
        fputs("]}\n", out);
    else if (l->o->fmt == VIEW_TEXT && shown < l->count)
        fprintf(out, "(%zu more lines: --top 0 shows all)\n", l->count - shown);
}

int cmd_lines(int argc, char **argv)
{
    struct view_opts o = {0};
    struct lines l = {.o = &o};
    const struct cli_option options[] = {VIEW_OPTIONS(&o)};
    const struct cli_flag flags[] = {{"--force", &o.force}};
    struct view_input in = {0};
    struct ppw_err err;
    ppw_err_clear(&err);
    if (VIEW_PARSE(argc, argv, &o, options, VIEW_OPTION_COUNT, flags, 1, &err) ||
        view_check_opts(&o, "lines", 20, &err))
        return cli_fail(&err);
    if (o.help) {
        fputs(usage, stdout);
        return cli_finish_output();
    }
    int rc = view_load(&o, &in, &err);
    if (!rc) {
        l.in = &in;
        l.total = view_total_samples(&in);
        rc = index_user(&l);
        if (!rc)
            rc = collect(&l);
        if (rc)
            ppw_err_set(&err, rc, "out of memory");
    }
    if (!rc) {
        if (l.count)
            qsort(l.rows, l.count, sizeof *l.rows, compare_rows);
        print_lines(view_out(&o), &l);
        if ((rc = view_out_finish(&o)) != 0)
            ppw_err_set(&err, rc, "out of memory");
    }
    ppw_strmap_free(&l.user);
    ppw_strmap_free(&l.index);
    free(l.rows);
    view_input_free(&in);
    return rc ? cli_fail(&err) : cli_finish_output();
}
