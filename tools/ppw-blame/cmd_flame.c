/* ppw-blame flame: an SVG flame graph of a run's samples, drawn here (no
 * external tool): main at the bottom, each function on top of its caller,
 * widths proportional to samples; with --variables each stack is topped
 * by the variable its samples are blamed to.  The file stands alone: no
 * scripts, no fonts, no links; each box has a <title> tooltip. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "export.h"
#include "view.h"

static const char usage[] =
    "usage: ppw-blame flame [DIR...] -o FILE.svg [--variables] [--title TEXT]\n"
    "                       [--binary BIN] [--force] [--thread T] [--rank R] [--folded FILE]\n\n"
    "Draws the samples of the run directory or MPI job DIR (default: the newest\n"
    "ppw-* directory; several are summed) as an SVG flame graph: main at the\n"
    "bottom, each function on top of its caller, widths proportional to samples.\n\n"
    "  -o, --output FILE  the SVG file to write (required; - for standard output)\n"
    "  --variables        top each stack with the variable its samples are blamed to\n"
    "  --title TEXT       the graph's title (default: the run directory)\n"
    "  --thread, --rank, --binary, --force, --folded: as for 'ppw-blame report'\n"
    "  -h, --help         show this help\n";

enum { WIDTH = 1200, ROW = 17, MARGIN = 10, TOP = 44 };
#define MIN_PX 0.3 /* narrower boxes are not drawn (their samples stay in their parent) */

struct node {
    const char *name;
    bool variable;
    size_t first_child, next_sibling; /* 0: none (node 0 is the root) */
    uint64_t samples;
};

struct flame {
    struct node *nodes;
    size_t count, cap;
    size_t depth; /* deepest level drawn */
};

static size_t child(struct flame *f, size_t parent, const char *name, bool variable)
{
    size_t *link = &f->nodes[parent].first_child;
    for (size_t k = *link; k; k = f->nodes[k].next_sibling) {
        if (f->nodes[k].variable == variable && strcmp(f->nodes[k].name, name) == 0)
            return k;
        link = &f->nodes[k].next_sibling;
    }
    if (f->count == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 1024;
        struct node *nodes = realloc(f->nodes, cap * sizeof *nodes);
        if (!nodes)
            return 0;
        f->nodes = nodes;
        f->cap = cap;
        for (link = &f->nodes[parent].first_child; *link; link = &f->nodes[*link].next_sibling)
            ;
    }
    size_t k = f->count++;
    f->nodes[k] = (struct node){name, variable, 0, 0, 0};
    *link = k;
    return k;
}

static int build(struct flame *f, const struct view_input *in, const struct export_blame *blame,
                 struct ppw_err *err)
{
    f->cap = 1024;
    if (!(f->nodes = malloc(f->cap * sizeof *f->nodes)))
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    f->nodes[0] = (struct node){"all", false, 0, 0, 0};
    f->count = 1;
    size_t n;
    const struct ppw_blame_stack *stacks = view_user_stacks(in, &n, err);
    if (!stacks)
        return err->code;
    for (size_t s = 0; s < n; s++) {
        const struct ppw_blame_stack *st = &stacks[s];
        /* A stack left without frames (a sample in libppw alone, which is
         * intrusion) still counts in the whole, as in every other view. */
        f->nodes[0].samples += st->samples;
        if (!st->nframes)
            continue;
        size_t at = 0, top = view_top_frame(st);
        for (size_t k = top + 1; k-- > 0;) {
            const char *name = st->frames[k].function ? st->frames[k].function : "??";
            if (!(at = child(f, at, name, false)))
                return ppw_err_set(err, PPW_ENOMEM, "out of memory");
            f->nodes[at].samples += st->samples;
        }
        const char *var = export_stack_variable(blame, s);
        if (var) {
            if (!(at = child(f, at, var, true)))
                return ppw_err_set(err, PPW_ENOMEM, "out of memory");
            f->nodes[at].samples += st->samples;
        }
    }
    return 0;
}

/* A warm colour from the name, so that a function keeps its colour between
 * graphs; variables are blue. */
static void colour(FILE *out, const struct node *n)
{
    uint32_t h = 2166136261u;
    for (const char *c = n->name; *c; c++)
        h = (h ^ (unsigned char)*c) * 16777619u;
    if (n->variable)
        fprintf(out, "rgb(%u,%u,%u)", 60 + h % 40, 110 + (h >> 8) % 60, 200 + (h >> 16) % 50);
    else
        fprintf(out, "rgb(%u,%u,%u)", 205 + h % 50, 80 + (h >> 8) % 120, 40 + (h >> 16) % 40);
}

static void draw(FILE *out, const struct flame *f, size_t k, double x, size_t level,
                 double px_per_sample, uint64_t total, size_t rows)
{
    const struct node *n = &f->nodes[k];
    double w = (double)n->samples * px_per_sample;
    if (k) {
        double y = TOP + (double)(rows - level) * ROW;
        fputs("<g><title>", out);
        export_xml(out, n->variable ? "variable " : "");
        export_xml(out, n->name);
        fprintf(out,
                " (%" PRIu64 " samples, %.2f%%)</title><rect x=\"%.2f\" y=\"%.0f\" "
                "width=\"%.2f\" height=\"%d\" fill=\"",
                n->samples, 100.0 * (double)n->samples / (double)total, x, y, w, ROW - 1);
        colour(out, n);
        fputs("\" rx=\"2\"/>", out);
        size_t chars = (size_t)((w - 6) / 7); /* 12px monospace-ish: 7 px a character */
        if (chars >= 3) {
            fprintf(out, "<text x=\"%.2f\" y=\"%.0f\">", x + 3, y + ROW - 5);
            size_t len = strlen(n->name);
            if (len <= chars) {
                export_xml(out, n->name);
            } else {
                char cut[256];
                size_t keep = chars - 2 < sizeof cut - 1 ? chars - 2 : sizeof cut - 1;
                memcpy(cut, n->name, keep);
                cut[keep] = 0;
                export_xml(out, cut);
                fputs("..", out);
            }
            fputs("</text>", out);
        }
        fputs("</g>\n", out);
    }
    for (size_t c = n->first_child; c; c = f->nodes[c].next_sibling) {
        double cw = (double)f->nodes[c].samples * px_per_sample;
        if (cw >= MIN_PX)
            draw(out, f, c, x, level + 1, px_per_sample, total, rows);
        x += cw;
    }
}

static size_t depth(const struct flame *f, size_t k, size_t level, double px_per_sample)
{
    size_t best = level;
    for (size_t c = f->nodes[k].first_child; c; c = f->nodes[c].next_sibling)
        if ((double)f->nodes[c].samples * px_per_sample >= MIN_PX) {
            size_t d = depth(f, c, level + 1, px_per_sample);
            best = d > best ? d : best;
        }
    return best;
}

static void write_svg(FILE *out, const struct flame *f, const char *title)
{
    uint64_t total = f->nodes[0].samples;
    double px = total ? (double)(WIDTH - 2 * MARGIN) / (double)total : 0;
    size_t rows = total ? depth(f, 0, 0, px) : 0;
    int height = TOP + (int)(rows + 1) * ROW + MARGIN;
    fprintf(out,
            "<?xml version=\"1.0\" standalone=\"no\"?>\n"
            "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\">\n"
            "<style>text { font-family: monospace; font-size: 12px; fill: #000; } "
            "rect:hover { stroke: #000; stroke-width: 0.5; }</style>\n"
            "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f4\"/>\n"
            "<text x=\"%d\" y=\"24\" style=\"font-size: 16px\">",
            WIDTH, height, WIDTH, height, MARGIN);
    export_xml(out, title);
    fprintf(out,
            "</text>\n<text x=\"%d\" y=\"38\">%" PRIu64
            " samples; width: share of samples; blue: blamed variables</text>\n",
            MARGIN, total);
    if (total)
        draw(out, f, 0, MARGIN, 0, px, total, rows);
    fputs("</svg>\n", out);
}

int cmd_flame(int argc, char **argv)
{
    struct view_opts o = {0};
    const char *output = NULL, *title = NULL;
    bool variables = false;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-o") == 0)
            argv[i] = (char *)"--output";
    const struct cli_option options[] = {
        VIEW_OPTIONS(&o), {"--output", &output}, {"--title", &title}};
    const struct cli_flag flags[] = {{"--force", &o.force}, {"--variables", &variables}};
    struct ppw_err err;
    ppw_err_clear(&err);
    if (VIEW_PARSE(argc, argv, &o, options, VIEW_OPTION_COUNT + 2, flags, 2, &err))
        return cli_fail(&err);
    if (o.help) {
        fputs(usage, stdout);
        return cli_finish_output();
    }
    if (o.format || o.top)
        return cli_usage_error("flame: --format and --top are not flame options");
    if (!output)
        return cli_usage_error("flame: -o FILE is required (the SVG to write; - for stdout)");
    if (view_check_opts(&o, "flame", 0, &err))
        return cli_fail(&err);
    struct view_input in = {0};
    struct export_blame *blame = NULL;
    struct flame f = {0};
    int rc = view_load(&o, &in, &err);
    if (!rc && variables)
        rc = export_blame_new(&in, &blame, &err);
    if (!rc)
        rc = build(&f, &in, blame, &err);
    FILE *out = NULL;
    if (!rc && !(out = export_open(output, &err)))
        rc = PPW_EIO;
    if (out) {
        if (!rc)
            write_svg(out, &f, title ? title : in.source);
        rc = export_finish(out, output, rc, &err);
    }
    free(f.nodes);
    export_blame_free(blame);
    view_input_free(&in);
    return rc ? cli_fail(&err) : PPW_EXIT_OK;
}
