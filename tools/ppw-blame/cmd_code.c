/* ppw-blame code: the code-centric inclusive view, a calling-context tree
 * of the samples' (glued) stacks from main, or with --flat one row per
 * function.  Output shapes are documented in docs/ppw-blame.md. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "calltree.h"
#include "view.h"

static const char usage[] =
    "usage: ppw-blame code [DIR...] [--flat] [--top N] [--min PCT] [--format text|tsv|csv|json]\n"
    "                      [--binary BIN] [--force] [--thread T] [--rank R] [--folded FILE]\n\n"
    "The samples by function in full calling context: a tree from main (each\n"
    "function under its caller, with the line of the call), or with --flat one\n"
    "row per function. incl: samples with the function on the stack; self:\n"
    "samples in the function itself.\n\n"
    "  --flat             one row per function instead of the tree\n"
    "  --top N            --flat: the N first functions (default 20; 0: all);\n"
    "                     tree: at most N callees under each function (default: all)\n"
    "  --min PCT          tree: leave out calls below PCT% of the samples (default 0.5)\n"
    "  --format FORMAT    text (default), tsv, csv or json\n"
    "  --thread T         only the samples of thread T (default: all threads)\n"
    "  --rank R           a job directory (all MPI ranks): only rank R's samples\n"
    "  --binary, --force, --folded: as for 'ppw-blame report'\n"
    "  -h, --help         show this help\n";

struct code {
    struct view_opts *o;
    const struct view_input *in;
    bool flat;
    double min_pct;
    struct calltree tree;
    uint64_t total;
};

/* ---- the tree ---- */

static int compare_nodes(const void *x, const void *y)
{
    const struct calltree_node *a = *(const struct calltree_node *const *)x,
                               *b = *(const struct calltree_node *const *)y;
    if (a->samples != b->samples)
        return a->samples > b->samples ? -1 : 1;
    int k = strcmp(a->function ? a->function : "?", b->function ? b->function : "?");
    return k ? k : (a->line > b->line) - (a->line < b->line);
}

/* The children of node shown, sorted; NULL when out of memory. */
static const struct calltree_node **shown_children(const struct code *c, size_t node, size_t *count)
{
    size_t n = 0;
    for (size_t k = c->tree.nodes[node].first_child; k; k = c->tree.nodes[k].next_sibling)
        n++;
    const struct calltree_node **kids = calloc(n ? n : 1, sizeof *kids);
    if (!kids)
        return NULL;
    n = 0;
    for (size_t k = c->tree.nodes[node].first_child; k; k = c->tree.nodes[k].next_sibling)
        if (view_pct(c->tree.nodes[k].samples, c->total) >= c->min_pct || c->min_pct <= 0)
            kids[n++] = &c->tree.nodes[k];
    qsort(kids, n, sizeof *kids, compare_nodes);
    *count = c->o->top_n && c->o->top_n < n ? c->o->top_n : n;
    return kids;
}

/* Whether a node's name already ends with its call site, ", FILE:LINE]":
 * an OpenMP construct called from its own pragma's line. */
static bool names_call_site(const struct calltree_node *n)
{
    char site[300];
    const char *name = n->function ? n->function : "";
    int len = snprintf(site, sizeof site, ", %s:%" PRIu32 "]",
                       n->file ? view_basename(n->file) : "", n->line);
    size_t l = strlen(name);
    return n->file && len > 0 && (size_t)len < sizeof site && l >= (size_t)len &&
           strcmp(name + l - (size_t)len, site) == 0;
}

static void text_node(FILE *out, const struct code *c, const struct calltree_node *n, size_t depth)
{
    char label[512];
    size_t indent = 2 * (depth < 20 ? depth : 20);
    fprintf(out, "%6.1f %6.1f %9" PRIu64 " ", view_pct(n->samples, c->total),
            view_pct(n->self, c->total), n->samples);
    view_metric_cell(out, c->in, n->weight);
    fprintf(out, "  %*s", (int)indent, "");
    if (n->line && !names_call_site(n))
        snprintf(label, sizeof label, "%s%s  [%s%s%" PRIu32 "]", depth > 20 ? "... " : "",
                 n->function ? n->function : "?", n->file ? view_basename(n->file) : "",
                 n->file ? ":" : "line ", n->line);
    else
        snprintf(label, sizeof label, "%s%s", depth > 20 ? "... " : "",
                 n->function ? n->function : "?");
    size_t room = 65 - indent;
    view_cell(out, label, strlen(label) < room ? strlen(label) : room, false);
    putc('\n', out);
}

static void json_node_head(FILE *out, const struct code *c, const struct calltree_node *n)
{
    fputs("{\"function\":", out);
    json_string_or_null(out, n->function);
    fputs(",\"call_file\":", out);
    json_string_or_null(out, n->file);
    if (n->line)
        fprintf(out, ",\"call_line\":%" PRIu32, n->line);
    else
        fputs(",\"call_line\":null", out);
    fprintf(out, ",\"samples\":%" PRIu64 ",\"self_samples\":%" PRIu64 ",\"inclusive\":", n->samples,
            n->self);
    json_double(out, view_pct(n->samples, c->total));
    fputs(",\"self\":", out);
    json_double(out, view_pct(n->self, c->total));
}

/* path: the functions from the root, ';'-separated (TSV). */
static int print_tree(FILE *out, const struct code *c, size_t node, size_t depth, char **path,
                      size_t *path_len)
{
    size_t count;
    const struct calltree_node **kids = shown_children(c, node, &count);
    if (!kids)
        return PPW_ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < count && !rc; i++) {
        const struct calltree_node *n = kids[i];
        size_t len = *path_len, add = strlen(n->function ? n->function : "?") + 1;
        char *grown = realloc(*path, len + add + 1);
        if (!grown) {
            rc = PPW_ENOMEM;
            break;
        }
        *path = grown;
        snprintf(*path + len, add + 1, "%s%s", len ? ";" : "", n->function ? n->function : "?");
        *path_len = len + add - !len;
        if (c->o->fmt == VIEW_TEXT) {
            text_node(out, c, n, depth);
        } else if (c->o->fmt == VIEW_TSV) {
            view_tsv(out, *path);
            fprintf(out, "\t%" PRIu32 "\t%" PRIu64 "\t%" PRIu64 "\t%.3f\t%.3f\t%.9g\t%.9g\n",
                    n->line, n->samples, n->self, view_pct(n->samples, c->total),
                    view_pct(n->self, c->total), n->weight, n->self_weight);
        } else {
            fputs(i ? ",\n" : "\n", out);
            json_node_head(out, c, n);
            fputs(",\"children\":[", out);
        }
        rc = print_tree(out, c, (size_t)(n - c->tree.nodes), depth + 1, path, path_len);
        if (c->o->fmt == VIEW_JSON)
            fputs("]}", out);
        *path_len = len;
        (*path)[len] = '\0';
    }
    free(kids);
    return rc;
}

/* ---- flat ---- */

struct flat_row {
    const char *function;
    uint64_t samples, self;
    double weight, self_weight;
    uint64_t stamp;
};

static int compare_rows(const void *x, const void *y)
{
    const struct flat_row *a = x, *b = y;
    if (a->samples != b->samples)
        return a->samples > b->samples ? -1 : 1;
    if (a->self != b->self)
        return a->self > b->self ? -1 : 1;
    return strcmp(a->function ? a->function : "?", b->function ? b->function : "?");
}

/* One row per function (the tree's nodes merged by function name, each
 * counted once per stack even when it recurs). */
static int flat_rows(const struct code *c, const struct ppw_blame_stack *stacks, size_t nstacks,
                     struct flat_row **out, size_t *count)
{
    size_t n = 0;
    struct flat_row *rows = calloc(c->tree.count, sizeof *rows);
    if (!rows)
        return PPW_ENOMEM;
    for (size_t s = 0; s < nstacks; s++) {
        const struct ppw_blame_stack *st = &stacks[s];
        size_t top = st->nframes ? view_top_frame(st) : 0;
        for (size_t i = 0; i < st->nframes && i <= top; i++) {
            size_t r = 0;
            while (r < n && rows[r].function != st->frames[i].function)
                r++;
            if (r == n)
                rows[n++].function = st->frames[i].function;
            if (i == 0) {
                rows[r].self += st->samples;
                rows[r].self_weight += st->weight;
            }
            if (rows[r].stamp != s + 1) {
                rows[r].stamp = s + 1;
                rows[r].samples += st->samples;
                rows[r].weight += st->weight;
            }
        }
    }
    qsort(rows, n, sizeof *rows, compare_rows);
    *out = rows;
    *count = n;
    return 0;
}

static void print_flat(FILE *out, const struct code *c, const struct flat_row *rows, size_t n)
{
    size_t shown = c->o->top_n && c->o->top_n < n ? c->o->top_n : n;
    if (c->o->fmt == VIEW_TSV)
        fputs("function\tsamples\tself_samples\tinclusive\tself\tinclusive_metric\tself_metric\n",
              out);
    for (size_t i = 0; i < shown; i++) {
        const struct flat_row *r = &rows[i];
        const char *name = r->function ? r->function : "?";
        if (c->o->fmt == VIEW_TEXT) {
            fprintf(out, "%6.1f %6.1f %9" PRIu64 " ", view_pct(r->samples, c->total),
                    view_pct(r->self, c->total), r->samples);
            view_metric_cell(out, c->in, r->weight);
            fputs("  ", out);
            view_cell(out, name, strlen(name) < 65 ? strlen(name) : 65, false);
            putc('\n', out);
        } else if (c->o->fmt == VIEW_TSV) {
            view_tsv(out, name);
            fprintf(out, "\t%" PRIu64 "\t%" PRIu64 "\t%.3f\t%.3f\t%.9g\t%.9g\n", r->samples,
                    r->self, view_pct(r->samples, c->total), view_pct(r->self, c->total), r->weight,
                    r->self_weight);
        } else {
            fputs(i ? ",\n{\"function\":" : "\n{\"function\":", out);
            json_string_or_null(out, r->function);
            fprintf(out, ",\"samples\":%" PRIu64 ",\"self_samples\":%" PRIu64 ",\"inclusive\":",
                    r->samples, r->self);
            json_double(out, view_pct(r->samples, c->total));
            fputs(",\"self\":", out);
            json_double(out, view_pct(r->self, c->total));
            putc('}', out);
        }
    }
    if (c->o->fmt == VIEW_TEXT && shown < n)
        fprintf(out, "(%zu more functions: --top 0 shows all)\n", n - shown);
}

/* ---- command ---- */

static void print_head(FILE *out, const struct code *c)
{
    if (c->o->fmt == VIEW_JSON) {
        view_json_open(out, c->in, c->flat ? "functions" : "tree");
    } else if (c->o->fmt == VIEW_TSV && !c->flat) {
        fputs("path\tcall_line\tsamples\tself_samples\tinclusive\tself\tinclusive_metric\t"
              "self_metric\n",
              out);
    } else if (c->o->fmt == VIEW_TEXT) {
        view_text_title(out, c->in, "code");
        if (!c->flat && c->min_pct > 0)
            fprintf(out, "calls below %g%% of the samples are left out (--min)\n", c->min_pct);
        fprintf(out, "\n%6s %6s %9s %9s  %s\n", "incl%", "self%", "samples",
                view_metric_header(c->in), "function");
    }
}

static int run_code(struct code *c, struct ppw_err *err)
{
    char *path = NULL;
    size_t path_len = 0;
    struct flat_row *rows = NULL;
    size_t nrows = 0;
    c->total = view_total_samples(c->in);
    size_t nstacks;
    const struct ppw_blame_stack *stacks = view_user_stacks(c->in, &nstacks, err);
    if (!stacks)
        return err->code;
    int rc = calltree_build(&c->tree, stacks, nstacks);
    if (!rc && c->flat)
        rc = flat_rows(c, stacks, nstacks, &rows, &nrows);
    if (rc)
        return rc;
    FILE *out = view_out(c->o);
    print_head(out, c);
    if (c->flat)
        print_flat(out, c, rows, nrows);
    else
        rc = print_tree(out, c, 0, 0, &path, &path_len);
    if (c->o->fmt == VIEW_JSON)
        fputs("]}\n", out);
    int finished = view_out_finish(c->o);
    rc = rc ? rc : finished;
    free(path);
    free(rows);
    return rc;
}

static int parse_min(const char *value, double *out, struct ppw_err *err)
{
    char *end;
    *out = 0.5;
    if (!value)
        return 0;
    *out = strtod(value, &end);
    if (!value[0] || *end || !(*out >= 0 && *out <= 100))
        return ppw_err_set(err, PPW_EUSAGE, "code: --min needs a percentage, not '%s'", value);
    return 0;
}

int cmd_code(int argc, char **argv)
{
    struct view_opts o = {0};
    struct code c = {.o = &o};
    const char *min = NULL;
    const struct cli_option options[] = {VIEW_OPTIONS(&o), {"--min", &min}};
    const struct cli_flag flags[] = {{"--flat", &c.flat}, {"--force", &o.force}};
    struct view_input in = {0};
    struct ppw_err err;
    ppw_err_clear(&err);
    if (VIEW_PARSE(argc, argv, &o, options, VIEW_OPTION_COUNT + 1, flags, 2, &err) ||
        view_check_opts(&o, "code", 0, &err) || parse_min(min, &c.min_pct, &err))
        return cli_fail(&err);
    if (o.help) {
        fputs(usage, stdout);
        return cli_finish_output();
    }
    if (c.flat && !o.top)
        o.top_n = 20;
    int rc = view_load(&o, &in, &err);
    if (!rc) {
        c.in = &in;
        if ((rc = run_code(&c, &err)) != 0 && !err.code)
            ppw_err_set(&err, rc, "out of memory");
    }
    calltree_free(&c.tree);
    view_input_free(&in);
    return rc ? cli_fail(&err) : cli_finish_output();
}
