/* ppw-blame html: the whole report of a run as one self-contained HTML
 * file (no network, no external scripts, styles or fonts): metadata, the
 * variables with inline bars, the calling-context tree (expandable
 * <details>), the hot source lines with the variables blamed for them, a
 * heatmap of the top variables over threads or ranks, the analysis
 * findings and the intrusion report.  docs/ppw-blame.md, "ppw-blame html". */
#define _XOPEN_SOURCE 700 /* realpath */

#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze.h"
#include "baseline.h"
#include "calltree.h"
#include "cli.h"
#include "export.h"
#include "intrusion_view.h"
#include "job.h"
#include "read_graph.h"
#include "strmap.h"
#include "view.h"

static const char usage[] =
    "usage: ppw-blame html [DIR...] -o FILE.html [--top N] [--binary BIN] [--force]\n"
    "                      [--thread T] [--rank R] [--folded FILE]\n\n"
    "Writes the report of the run directory or MPI job DIR (default: the newest\n"
    "ppw-* directory; several are summed) as one self-contained HTML file: the\n"
    "variables, the calling-context tree, the hot lines and the variables blamed\n"
    "for them, a heatmap of the top variables over threads or ranks, the analysis\n"
    "findings and the intrusion report (of each run), and the run's metadata.\n\n"
    "  -o, --output FILE  the HTML file to write (required; - for standard output)\n"
    "  --top N            variables listed (default 40; 0: all)\n"
    "  --thread, --rank, --binary, --force, --folded: as for 'ppw-blame report'\n"
    "  -h, --help         show this help\n";

enum {
    HEAT_VARS = 12,           /* variables in the heatmap */
    HEAT_GROUPS = 64,         /* threads or ranks in the heatmap */
    HOT_LINES = 30,           /* source lines listed */
    LINE_VARS = 6,            /* variables named per line */
    TREE_DEPTH = 80,          /* calling contexts deeper than this are cut */
    SOURCE_FILES = 8,         /* files listed whole */
    SOURCE_LINES_MAX = 20000, /* lines of one file listed */
};
#define TREE_MIN_PCT 0.2 /* contexts with fewer samples are left out of the tree */

struct html {
    FILE *out;
    struct view_opts *o;
    const struct view_input *in;
    const struct ppw_blame_stack *stacks;
    size_t nstacks;
    uint64_t total;
    struct ppw_blame_result *blame; /* all stacks */
};

static void esc(struct html *h, const char *s)
{
    export_xml(h->out, s ? s : "");
}

static double pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* A bar of pct% with the number beside it. */
static void bar(struct html *h, double p)
{
    fprintf(h->out,
            "<td class=\"bar\"><span class=\"b\"><span style=\"width:%.1f%%\"></span></span>"
            "<b>%.1f%%</b></td>",
            p, p);
}

/* ---- head and metadata ---- */

static void head(struct html *h)
{
    FILE *out = h->out;
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>ppw report: ",
          out);
    esc(h, h->in->source);
    fputs("</title>\n<style>\n"
          "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fcfcfa}\n"
          "h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ccc}\n"
          "table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left;"
          "vertical-align:top}\n"
          "th{background:#eee}tr:nth-child(even){background:#f4f4f0}\n"
          "td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
          "td.bar{white-space:nowrap}td.bar .b{display:inline-block;width:150px;height:12px;"
          "background:#eee;vertical-align:middle;border-radius:2px}\n"
          "td.bar .b span{display:block;height:100%;background:#e8743b;border-radius:2px}\n"
          "td.bar b{display:inline-block;width:4.2em;text-align:right;font-weight:normal}\n"
          "code,pre{font:12px/1.35 monospace}pre{margin:0;overflow-x:auto}\n"
          "details{margin-left:1.2em}summary{cursor:pointer;white-space:nowrap}\n"
          "summary .p{display:inline-block;width:4.5em;text-align:right;margin-right:.6em}\n"
          ".heat td.h{text-align:center;min-width:3.2em}td.vars{min-width:16em}\n"
          "table.src td{padding:0 6px}table.src tr:nth-child(even){background:none}\n"
          ".finding{border-left:4px solid #c0392b;padding:.3em .8em;margin:.6em 0;"
          "background:#fff}\n"
          ".muted{color:#777}dl{display:grid;grid-template-columns:max-content auto;"
          "gap:2px 12px}dt{color:#555}dd{margin:0}\n"
          "</style></head><body>\n<h1>ppw report: ",
          out);
    esc(h, h->in->source);
    fputs("</h1>\n", out);
}

static void metadata(struct html *h)
{
    const struct view_input *in = h->in;
    FILE *out = h->out;
    fputs("<h2 id=\"run\">Run</h2>\n<dl>\n<dt>source</dt><dd><code>", out);
    esc(h, in->source);
    fputs("</code></dd>\n<dt>binary</dt><dd><code>", out);
    esc(h, in->binary);
    fprintf(out, "</code>%s</dd>\n<dt>samples</dt><dd>%" PRIu64 "</dd>\n<dt>metric</dt><dd>",
            in->forced ? " (another build, --force)" : "", h->total);
    esc(h, in->metric);
    fputs(" (", out);
    esc(h, in->unit);
    fputs(")</dd>\n", out);
    if (in->nruns > 1) {
        fprintf(out, "<dt>runs</dt><dd>%zu, their samples summed:", in->nruns);
        for (size_t i = 0; i < in->nruns; i++) {
            fputs(" <code>", out);
            esc(h, in->run_dirs[i]);
            fputs("</code>", out);
        }
        fputs("</dd>\n", out);
    }
    if (in->job)
        fprintf(out, "<dt>MPI job</dt><dd>%zu of %" PRIu32 " ranks read</dd>\n", in->nranks,
                in->job_size);
    fprintf(out, "<dt>threads</dt><dd>%zu</dd>\n", in->nthreads);
    if (in->from_run)
        fprintf(out, "<dt>ended normally</dt><dd>%s</dd>\n", in->finished ? "yes" : "no");
    if (in->job_notes && in->job_notes[0]) {
        fputs(in->job ? "<dt>ranks</dt><dd><pre>" : "<dt>runs</dt><dd><pre>", out);
        esc(h, in->job_notes);
        fputs("</pre></dd>\n", out);
    }
    fputs("</dl>\n", out);
}

/* ---- variables ---- */

static void variables(struct html *h)
{
    const struct ppw_blame_result *r = h->blame;
    size_t top = h->o->top_n && h->o->top_n < r->nvars ? h->o->top_n : r->nvars;
    FILE *out = h->out;
    fputs("<h2 id=\"variables\">Variables</h2>\n<p class=\"muted\">The variables the samples are "
          "blamed to: inclusive (the variable's value depends on the sampled code, here or in "
          "its callees) and exclusive (in its own function).</p>\n<table id=\"variables-table\">"
          "<tr><th>variable</th><th>function</th><th>kind</th><th>type</th><th>samples</th>"
          "<th>inclusive</th><th>exclusive</th><th>declared</th><th>context</th></tr>\n",
          out);
    for (size_t i = 0; i < top; i++) {
        const struct ppw_blame_var *v = &r->vars[i];
        fputs("<tr><td><b>", out);
        esc(h, v->name);
        fputs("</b></td><td>", out);
        esc(h, v->function ? v->function : "(program)");
        fputs("</td><td>", out);
        esc(h, v->kind);
        fputs("</td><td><code>", out);
        esc(h, v->type);
        fprintf(out, "</code></td><td class=\"n\">%" PRIu64 "</td>", v->inclusive);
        bar(h, pct(v->inclusive, h->total));
        bar(h, pct(v->exclusive, h->total));
        fputs("<td><code>", out);
        esc(h, view_basename(v->decl_file));
        fprintf(out, ":%" PRIu32 "</code></td><td>", v->decl_line);
        esc(h, v->context ? v->context : "");
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n", out);
    if (top < r->nvars)
        fprintf(out, "<p class=\"muted\">%zu more variables (--top 0 lists all).</p>\n",
                r->nvars - top);
}

/* ---- the calling-context tree ---- */

static void tree_print(struct html *h, const struct calltree *t, size_t k, unsigned depth)
{
    const struct calltree_node *n = &t->nodes[k];
    FILE *out = h->out;
    bool leaf = true;
    for (size_t c = n->first_child; c; c = t->nodes[c].next_sibling)
        leaf &= pct(t->nodes[c].samples, h->total) < TREE_MIN_PCT;
    fprintf(out, "<details%s><summary><span class=\"p\">%.1f%%</span>", depth < 2 ? " open" : "",
            pct(n->samples, h->total));
    esc(h, n->function ? n->function : "??");
    if (n->line)
        fprintf(out, " <span class=\"muted\">from line %" PRIu32 "</span>", n->line);
    if (n->self)
        fprintf(out, " <span class=\"muted\">(self %.1f%%)</span>", pct(n->self, h->total));
    fputs(leaf ? " <span class=\"muted\">&middot;</span>" : "", out);
    fputs("</summary>\n", out);
    if (depth < TREE_DEPTH)
        for (size_t c = n->first_child; c; c = t->nodes[c].next_sibling)
            if (pct(t->nodes[c].samples, h->total) >= TREE_MIN_PCT)
                tree_print(h, t, c, depth + 1);
    fputs("</details>\n", out);
}

static int code_tree(struct html *h)
{
    struct calltree t = {0};
    struct ppw_err err;
    size_t n;
    const struct ppw_blame_stack *user = view_user_stacks(h->in, &n, &err);
    int rc = user ? calltree_build(&t, user, n) : err.code;
    if (!rc) {
        fprintf(h->out,
                "<h2 id=\"code\">Code</h2>\n<p class=\"muted\">The samples in calling context "
                "from main (click to expand; contexts under %.1f%% left out).</p>\n"
                "<div id=\"tree\">\n",
                TREE_MIN_PCT);
        for (size_t c = t.nodes[0].first_child; c; c = t.nodes[c].next_sibling)
            tree_print(h, &t, c, 0);
        fputs("</div>\n", h->out);
    }
    calltree_free(&t);
    return rc;
}

/* ---- hot lines ---- */

struct hot_line {
    const char *function, *file;
    uint32_t line;
    uint64_t samples;
};

static int by_samples(const void *a, const void *b)
{
    const struct hot_line *x = a, *y = b;
    return (x->samples < y->samples) - (x->samples > y->samples);
}

/* Line `line` of file, without its newline, into buf ("" when unreadable). */
/* Opens a source file as the line tables name it.  A relative name is
 * relative to the deepest directory the file shares with the compilation
 * directory (clang's DIFile, which the static graph also uses), and that
 * directory is not recorded: it is an ancestor of the compilation
 * directory, usually where the binary was built.  So a relative name is
 * tried under the directory of ppw-blame, then under the binary's directory
 * and each of its ancestors, deepest first. */
static FILE *open_source(const struct html *h, const char *file)
{
    if (!file)
        return NULL;
    FILE *f = fopen(file, "r");
    if (f || file[0] == '/' || !h->in->binary)
        return f;
    char dir[PATH_MAX];
    if (!realpath(h->in->binary, dir))
        return NULL;
    for (char *slash = strrchr(dir, '/'); slash && !f; slash = strrchr(dir, '/')) {
        *slash = 0; /* the binary's directory, then its parents; "" is the root */
        char path[PATH_MAX];
        int n = snprintf(path, sizeof path, "%s/%s", dir, file);
        struct stat st;
        if (n > 0 && (size_t)n < sizeof path && stat(path, &st) == 0 && S_ISREG(st.st_mode))
            f = fopen(path, "r");
    }
    return f;
}

static void source_text(const struct html *h, const char *file, uint32_t line, char *buf,
                        size_t size)
{
    buf[0] = 0;
    FILE *f = open_source(h, file);
    if (!f)
        return;
    for (uint32_t n = 1; fgets(buf, (int)size, f); n++) {
        size_t len = strlen(buf);
        bool whole = len && buf[len - 1] == '\n';
        if (n == line) {
            if (whole)
                buf[len - 1] = 0;
            break;
        }
        while (!whole && fgets(buf, (int)size, f)) { /* the rest of a long line */
            len = strlen(buf);
            whole = len && buf[len - 1] == '\n';
        }
        buf[0] = 0;
    }
    fclose(f);
}

/* The variables of fn whose inclusive blame holds file:line. */
static void line_variables(struct html *h, const struct ppw_static_func *fn, uint32_t line)
{
    unsigned shown = 0;
    for (size_t v = 0; fn && v < fn->var_count && shown < LINE_VARS; v++) {
        const struct ppw_static_var *var = &fn->vars[v];
        for (size_t k = 0; k < var->inclusive_count; k++)
            if (var->inclusive[k].line == line) {
                fputs(shown++ ? ", " : "", h->out);
                esc(h, var->name);
                break;
            }
    }
}

/* Whether a path of the static graph names the same file as a frame's
 * (equal, or one a trailing part of the other after a '/'). */
static bool same_file(const char *a, const char *b)
{
    if (!a || !b)
        return false;
    size_t la = strlen(a), lb = strlen(b);
    if (la < lb) {
        const char *t = a;
        a = b;
        b = t;
        size_t tl = la;
        la = lb;
        lb = tl;
    }
    return strcmp(a + la - lb, b) == 0 && (la == lb || a[la - lb - 1] == '/');
}

struct file_sum {
    const char *file;
    uint64_t samples;
};

static int by_file_samples(const void *a, const void *b)
{
    const struct file_sum *x = a, *y = b;
    return (x->samples < y->samples) - (x->samples > y->samples);
}

/* Line of a source listing: samples there and the variables blamed. */
struct src_line {
    uint64_t samples;
    const char *vars[LINE_VARS];
    unsigned nvars;
};

/* The lines of a file (at most SOURCE_LINES_MAX; *cut when there were
 * more), malloc'ed; a line longer than the buffer keeps its start. */
static char **read_source(const struct html *h, const char *file, size_t *count, bool *cut)
{
    *count = 0;
    *cut = false;
    FILE *src = open_source(h, file);
    if (!src)
        return NULL;
    size_t cap = 0;
    char **text = NULL, buf[1024];
    while (fgets(buf, sizeof buf, src)) {
        size_t len = strlen(buf);
        bool whole = len && buf[len - 1] == '\n';
        if (whole)
            buf[len - 1] = 0;
        if (*count == SOURCE_LINES_MAX) {
            *cut = true;
            break;
        }
        if (*count == cap) {
            size_t grown = cap ? 2 * cap : 256;
            char **t = realloc(text, grown * sizeof *t);
            if (!t)
                break;
            text = t;
            cap = grown;
        }
        if (!(text[*count] = strdup(buf)))
            break;
        (*count)++;
        while (!whole && fgets(buf, sizeof buf, src)) /* the rest of a long line: left out */
            whole = strchr(buf, '\n') != NULL;
    }
    fclose(src);
    return text;
}

/* The variables whose inclusive blame holds each line of file. */
static void blame_lines(const struct ppw_static_graph *g, const char *file, struct src_line *info,
                        size_t count)
{
    for (size_t f = 0; f < g->func_count; f++)
        for (size_t v = 0; v < g->funcs[f].var_count; v++) {
            const struct ppw_static_var *var = &g->funcs[f].vars[v];
            for (size_t k = 0; k < var->inclusive_count; k++) {
                const struct ppw_static_loc *l = &var->inclusive[k];
                if (l->line < 1 || l->line > count || !same_file(l->file, file))
                    continue;
                struct src_line *d = &info[l->line - 1];
                unsigned j = 0;
                while (j < d->nvars && strcmp(d->vars[j], var->name) != 0)
                    j++;
                if (j == d->nvars && d->nvars < LINE_VARS)
                    d->vars[d->nvars++] = var->name;
            }
        }
}

/* One file's listing: every line with its samples (shaded) and the
 * variables whose inclusive blame holds it, from the static graph. */
static void source_file(struct html *h, const struct file_sum *fs, const struct hot_line *lines,
                        size_t n, bool open)
{
    size_t count;
    bool cut;
    char **text = read_source(h, fs->file, &count, &cut);
    struct src_line *info = text ? calloc(count + 1, sizeof *info) : NULL;
    if (info) {
        for (size_t i = 0; i < n; i++)
            if (lines[i].file && strcmp(lines[i].file, fs->file) == 0 && lines[i].line >= 1 &&
                lines[i].line <= count)
                info[lines[i].line - 1].samples += lines[i].samples;
        blame_lines(h->in->graph, fs->file, info, count);
        FILE *out = h->out;
        fprintf(out, "<details class=\"file\"%s><summary><code>", open ? " open" : "");
        esc(h, fs->file);
        fprintf(out,
                "</code> <span class=\"muted\">%.1f%% of the samples</span></summary>\n"
                "<table class=\"src\">\n",
                pct(fs->samples, h->total));
        uint64_t max = 1;
        for (size_t i = 0; i < count; i++)
            max = info[i].samples > max ? info[i].samples : max;
        for (size_t i = 0; i < count; i++) {
            const struct src_line *d = &info[i];
            if (d->samples)
                fprintf(out, "<tr style=\"background:rgba(232,116,59,%.2f)\">",
                        0.12 + 0.6 * (double)d->samples / (double)max);
            else
                fputs("<tr>", out);
            fprintf(out, "<td class=\"n\">%zu</td><td class=\"n\">", i + 1);
            if (d->samples)
                fprintf(out, "%" PRIu64, d->samples);
            fputs("</td><td class=\"vars\">", out);
            for (unsigned j = 0; j < d->nvars; j++) {
                fputs(j ? ", " : "", out);
                esc(h, d->vars[j]);
            }
            fputs("</td><td><pre>", out);
            esc(h, text[i]);
            fputs("</pre></td></tr>\n", out);
        }
        if (cut)
            fprintf(out,
                    "<tr><td></td><td></td><td></td><td class=\"muted\">(only the first %d "
                    "lines are shown)</td></tr>\n",
                    SOURCE_LINES_MAX);
        fputs("</table></details>\n", out);
    }
    free(info);
    for (size_t i = 0; i < count; i++)
        free(text[i]);
    free(text);
}

/* The files with samples, most first: each listed whole (SOURCE_FILES at
 * most; a file that cannot be read is left out). */
static int source_files(struct html *h, const struct hot_line *lines, size_t n)
{
    struct file_sum *files = calloc(n + 1, sizeof *files);
    if (!files)
        return PPW_ENOMEM;
    size_t nfiles = 0;
    for (size_t i = 0; i < n; i++) {
        if (!lines[i].file)
            continue;
        size_t k = 0;
        while (k < nfiles && strcmp(files[k].file, lines[i].file) != 0)
            k++;
        if (k == nfiles)
            files[nfiles++] = (struct file_sum){lines[i].file, 0};
        files[k].samples += lines[i].samples;
    }
    if (nfiles)
        qsort(files, nfiles, sizeof *files, by_file_samples);
    fputs("<h3>Source</h3>\n<p class=\"muted\">Each file with samples, every line: its samples "
          "(shaded) and the variables its cost is blamed to.</p>\n<div id=\"source\">\n",
          h->out);
    for (size_t k = 0; k < nfiles && k < SOURCE_FILES; k++)
        source_file(h, &files[k], lines, n, k == 0);
    fputs("</div>\n", h->out);
    free(files);
    return 0;
}

static int hot_lines(struct html *h)
{
    /* lines by (function, line): the function's frame index and the line
     * are the key */
    struct export_frames frames;
    if (export_frames_build(&frames, h->stacks, h->nstacks, NULL, h->in->graph) != 0)
        return PPW_ENOMEM;
    struct hot_line *lines = calloc(h->nstacks + 1, sizeof *lines);
    struct ppw_strmap index = {0};
    size_t n = 0;
    int rc = lines ? 0 : PPW_ENOMEM;
    for (size_t s = 0; !rc && s < h->nstacks; s++) {
        const struct ppw_blame_stack *st = &h->stacks[s];
        /* the innermost frame of code with a blame graph */
        for (size_t k = 0; k < st->nframes; k++) {
            const struct ppw_blame_frame *f = &st->frames[k];
            size_t fi = export_frame_index(&frames, f->function);
            if (!f->line || !f->function || !frames.funcs[fi])
                continue;
            char key[48];
            snprintf(key, sizeof key, "%zu:%" PRIu32, fi, f->line);
            bool added;
            struct ppw_strmap_entry *e = ppw_strmap_put(&index, key, n, &added);
            if (!e) {
                rc = PPW_ENOMEM;
                break;
            }
            if (added)
                lines[n++] = (struct hot_line){f->function, f->file, f->line, 0};
            lines[e->value].samples += st->samples;
            break;
        }
    }
    ppw_strmap_free(&index);
    export_frames_free(&frames);
    if (rc) {
        free(lines);
        return rc;
    }
    if (n)
        qsort(lines, n, sizeof *lines, by_samples);
    FILE *out = h->out;
    fputs("<h2 id=\"lines\">Source lines</h2>\n<p class=\"muted\">The hottest lines of the "
          "program's own code (samples there or in the library calls they make) and the "
          "variables blamed for them.</p>\n<table id=\"lines-table\"><tr><th>samples</th>"
          "<th>share</th><th>line</th><th>function</th><th>variables blamed</th>"
          "<th>source</th></tr>\n",
          out);
    char text[512];
    for (size_t i = 0; i < n && i < HOT_LINES; i++) {
        const struct hot_line *l = &lines[i];
        fprintf(out, "<tr><td class=\"n\">%" PRIu64 "</td>", l->samples);
        bar(h, pct(l->samples, h->total));
        fputs("<td><code>", out);
        esc(h, l->file ? view_basename(l->file) : "?");
        fprintf(out, ":%" PRIu32 "</code></td><td>", l->line);
        const struct ppw_blame_frame shown = {.function = l->function, .file = l->file};
        esc(h, view_frame_name(h->in, &shown));
        fputs("</td><td class=\"vars\">", out);
        line_variables(h, ppw_static_graph_find_func(h->in->graph, l->function), l->line);
        source_text(h, l->file, l->line, text, sizeof text);
        fputs("</td><td><pre>", out);
        esc(h, text);
        fputs("</pre></td></tr>\n", out);
    }
    fputs("</table>\n", out);
    rc = source_files(h, lines, n);
    free(lines);
    return rc;
}

/* ---- heatmap ---- */

static int heatmap(struct html *h)
{
    size_t ngroups = 0;
    uint32_t *groups = export_stack_threads(h->stacks, h->nstacks, &ngroups);
    size_t nvars = h->blame->nvars < HEAT_VARS ? h->blame->nvars : HEAT_VARS;
    if (h->nstacks && !groups)
        return PPW_ENOMEM;
    if (ngroups > HEAT_GROUPS)
        ngroups = HEAT_GROUPS;
    uint64_t *cells = calloc(nvars * ngroups + 1, sizeof *cells);
    struct ppw_blame_stack *mine = malloc((h->nstacks + 1) * sizeof *mine);
    int rc = cells && mine ? 0 : PPW_ENOMEM;
    /* each group's stacks attributed on their own */
    for (size_t g = 0; !rc && g < ngroups; g++) {
        size_t m = 0;
        for (size_t s = 0; s < h->nstacks; s++)
            if (h->stacks[s].thread == groups[g])
                mine[m++] = h->stacks[s];
        struct ppw_blame_result *r = NULL;
        struct ppw_err err;
        if ((rc = ppw_blame_attribute(h->in->graph, mine, m, NULL, &r, &err)) != 0)
            break;
        for (size_t v = 0; v < nvars; v++) {
            const struct ppw_blame_var *want = &h->blame->vars[v];
            for (size_t k = 0; k < r->nvars; k++) {
                const struct ppw_blame_var *got = &r->vars[k];
                if (strcmp(got->name, want->name) == 0 &&
                    (got->function_key == want->function_key ||
                     (got->function_key && want->function_key &&
                      strcmp(got->function_key, want->function_key) == 0))) {
                    cells[v * ngroups + g] = got->inclusive;
                    break;
                }
            }
        }
        ppw_blame_result_free(r);
    }
    if (!rc) {
        FILE *out = h->out;
        fputs("<h2 id=\"imbalance\">Imbalance</h2>\n<p class=\"muted\">Each top variable's "
              "samples by thread (by rank and thread in a job): the darker, the larger its share "
              "of the variable's busiest group.</p>\n<table class=\"heat\" id=\"heatmap\"><tr>"
              "<th>variable</th>",
              out);
        for (size_t g = 0; g < ngroups; g++) {
            if (h->in->job)
                fprintf(out, "<th>r%" PRIu32 ".%" PRIu32 "</th>", groups[g] / PPW_JOB_RANK_SHIFT,
                        groups[g] % PPW_JOB_RANK_SHIFT);
            else
                fprintf(out, "<th>t%" PRIu32 "</th>", groups[g]);
        }
        fputs("</tr>\n", out);
        for (size_t v = 0; v < nvars; v++) {
            uint64_t max = 0;
            for (size_t g = 0; g < ngroups; g++)
                max = cells[v * ngroups + g] > max ? cells[v * ngroups + g] : max;
            fputs("<tr><td>", out);
            esc(h, h->blame->vars[v].name);
            fputs("</td>", out);
            for (size_t g = 0; g < ngroups; g++) {
                uint64_t c = cells[v * ngroups + g];
                double a = max ? (double)c / (double)max : 0;
                fprintf(out,
                        "<td class=\"h\" style=\"background:rgba(192,57,43,%.2f);color:%s\">"
                        "%" PRIu64 "</td>",
                        0.08 + 0.82 * a, a > 0.55 ? "#fff" : "#222", c);
            }
            fputs("</tr>\n", out);
        }
        fputs("</table>\n", out);
    }
    free(cells);
    free(mine);
    free(groups);
    return rc;
}

/* ---- analysis and intrusion (from the run itself; a --folded input has none) ---- */

/* The directories the sections below read one by one: several runs summed
 * are analysed and measured each on its own (their waits do not add up). */
static size_t run_count(const struct html *h)
{
    return h->in->nruns > 1 ? h->in->nruns : 1;
}

/* Run i's directory, after its heading when several runs are summed. */
static const char *run_dir(struct html *h, size_t i)
{
    if (h->in->nruns <= 1)
        return h->in->source;
    fputs("<h3><code>", h->out);
    esc(h, h->in->run_dirs[i]);
    fputs("</code></h3>\n", h->out);
    return h->in->run_dirs[i];
}

static void findings_of(struct html *h, const char *dir);
static void intrusion_of(struct html *h, const char *dir);

static void findings(struct html *h)
{
    fputs("<h2 id=\"analysis\">Analysis</h2>\n", h->out);
    if (!h->in->from_run) {
        fputs("<p class=\"muted\">Folded stacks: no run to analyse.</p>\n", h->out);
        return;
    }
    for (size_t i = 0; i < run_count(h); i++)
        findings_of(h, run_dir(h, i));
}

static void intrusion(struct html *h)
{
    fputs("<h2 id=\"intrusion\">Intrusion</h2>\n", h->out);
    if (!h->in->from_run) {
        fputs("<p class=\"muted\">Folded stacks: no run.</p>\n", h->out);
        return;
    }
    for (size_t i = 0; i < run_count(h); i++)
        intrusion_of(h, run_dir(h, i));
}

static void findings_of(struct html *h, const char *dir)
{
    FILE *out = h->out;
    struct analyze_thresholds t;
    analyze_default_thresholds(&t);
    struct analyze_input input = {dir, h->o->binary, h->o->force};
    struct ppw_baseline baseline;
    const struct ppw_baseline *use = NULL;
    char path[4096];
    const char *source = ppw_baseline_default_path(path, sizeof path);
    struct ppw_err err;
    if (source && ppw_baseline_load(source, &baseline, &err) == 0)
        use = &baseline;
    struct analyze_result r = {0};
    if (analyze_run(&input, 1, &t, use, use ? source : NULL, &r, &err) != 0) {
        fputs("<p class=\"muted\">Not analysed: ", out);
        esc(h, err.message);
        fputs("</p>\n", out);
        return;
    }
    fprintf(out, "<p class=\"muted\">%zu findings (%zu under --min-loss left out); baseline: ",
            r.nfindings, r.dropped);
    esc(h, r.baseline_source ? r.baseline_source : "built-in defaults");
    fputs(".</p>\n", out);
    for (size_t i = 0; i < r.nfindings; i++) {
        const struct analyze_finding *f = &r.findings[i];
        fprintf(out, "<div class=\"finding\"><b>%zu. ", i + 1);
        esc(h, analyze_pattern_title(f->pattern));
        fprintf(out, "</b> [%s]: %.3f s lost (%.1f%%)<br>where: ", analyze_pattern_name(f->pattern),
                f->lost_s, f->lost_pct);
        esc(h, f->region[0] ? f->region : "-");
        if (f->file[0]) {
            fputs(" at <code>", out);
            esc(h, view_basename(f->file));
            fprintf(out, ":%" PRIu32 "</code>", f->line);
        }
        if (f->variable[0]) {
            fputs(", on <b>", out);
            esc(h, f->variable);
            fputs("</b>", out);
        }
        fputs("<br>evidence: ", out);
        esc(h, f->evidence);
        if (f->cause[0]) {
            fputs("<br>cause: ", out);
            esc(h, f->cause);
        }
        fputs("<br>hint: ", out);
        esc(h, analyze_pattern_hint(f->pattern));
        fputs("</div>\n", out);
    }
    analyze_result_free(&r);
}

static void intrusion_of(struct html *h, const char *dir)
{
    FILE *out = h->out;
    struct ppw_intrusion *in = NULL;
    struct ppw_run **runs = NULL;
    uint32_t *ranks = NULL;
    size_t n = 0;
    struct ppw_err err;
    if (intrusion_view_load(dir, PPW_INTRUSION_FLAG_RATIO, &in, &runs, &n, &ranks, &err) != 0) {
        fputs("<p class=\"muted\">Not measured: ", out);
        esc(h, err.message);
        fputs("</p>\n", out);
    }
    char *text = NULL;
    size_t size = 0;
    FILE *mem = n ? open_memstream(&text, &size) : NULL;
    for (size_t i = 0; mem && i < n; i++) {
        if (h->in->job)
            fprintf(mem, "rank %" PRIu32 "\n", ranks[i]);
        intrusion_print_text(mem, &in[i], 10);
        fputc('\n', mem);
    }
    if (mem && fclose(mem) == 0) {
        fputs("<pre>", out);
        esc(h, text);
        fputs("</pre>\n", out);
    }
    free(text);
    for (size_t i = 0; i < n; i++) {
        ppw_intrusion_free(&in[i]);
        ppw_run_free(runs[i]);
    }
    free(in);
    free(runs);
    free(ranks);
}

/* The test hook: report.html#selftest clicks the tree's first closed
 * context and puts the outcome in the title, for a headless browser. */
static const char selftest[] =
    "<script>\n"
    "if (location.hash === '#selftest') {\n"
    "  var d = document.querySelector('#tree details:not([open])');\n"
    "  var first = document.querySelector('#variables-table tr:nth-child(2) b');\n"
    "  if (d) d.querySelector('summary').click();\n"
    "  document.title = 'selftest ' + (d && d.open ? 'expanded' : 'not-expanded') +\n"
    "    ' top=' + (first ? first.textContent : '');\n"
    "}\n"
    "</script>\n";

static int write_html(struct html *h)
{
    head(h);
    FILE *out = h->out;
    fputs("<p><a href=\"#variables\">variables</a> &middot; <a href=\"#code\">code</a> &middot; "
          "<a href=\"#lines\">source lines</a> &middot; <a href=\"#imbalance\">imbalance</a> "
          "&middot; <a href=\"#analysis\">analysis</a> &middot; <a href=\"#intrusion\">"
          "intrusion</a> &middot; <a href=\"#run\">run</a></p>\n",
          out);
    variables(h);
    int rc = code_tree(h);
    if (!rc)
        rc = hot_lines(h);
    if (!rc)
        rc = heatmap(h);
    if (!rc) {
        findings(h);
        intrusion(h);
        metadata(h);
        fputs(selftest, out);
        fputs("<p class=\"muted\">Written by ppw-blame html.</p>\n</body></html>\n", out);
    }
    return rc;
}

int cmd_html(int argc, char **argv)
{
    struct view_opts o = {0};
    const char *output = NULL;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-o") == 0)
            argv[i] = (char *)"--output";
    const struct cli_option options[] = {VIEW_OPTIONS(&o), {"--output", &output}};
    const struct cli_flag flags[] = {{"--force", &o.force}};
    struct ppw_err err;
    ppw_err_clear(&err);
    if (VIEW_PARSE(argc, argv, &o, options, VIEW_OPTION_COUNT + 1, flags, 1, &err))
        return cli_fail(&err);
    if (o.help) {
        fputs(usage, stdout);
        return cli_finish_output();
    }
    if (o.format)
        return cli_usage_error("html: --format is not an html option");
    if (!output)
        return cli_usage_error("html: -o FILE is required (the HTML to write; - for stdout)");
    o.split_threads = true; /* for the heatmap */
    if (view_check_opts(&o, "html", 40, &err))
        return cli_fail(&err);
    struct view_input in = {0};
    struct html h = {.o = &o, .in = &in};
    int rc = view_load(&o, &in, &err);
    if (!rc) {
        h.stacks = view_stacks(&in, &h.nstacks);
        h.total = view_total_samples(&in);
        rc = ppw_blame_attribute(in.graph, h.stacks, h.nstacks, NULL, &h.blame, &err);
    }
    FILE *out = NULL;
    if (!rc && !(out = export_open(output, &err)))
        rc = PPW_EIO;
    if (out) {
        h.out = out;
        if (!rc && (rc = write_html(&h)) != 0)
            ppw_err_set(&err, rc, "out of memory");
        rc = export_finish(out, output, rc, &err);
    }
    ppw_blame_result_free(h.blame);
    view_input_free(&in);
    return rc ? cli_fail(&err) : PPW_EXIT_OK;
}
