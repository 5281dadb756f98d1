/* ppw-blame report: the flat data-centric view, variables ranked by the
 * share of samples that blame them (blame/attribute.h).  Output shapes are
 * documented in docs/ppw-blame.md. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "read_graph.h"
#include "view.h"

static const char usage[] =
    "usage: ppw-blame report [DIR...] [--top N] [--view blame|exclusive|access]\n"
    "                        [--blame-point FN] [--temporaries]\n"
    "                        [--format text|tsv|csv|json] [--binary BIN] [--force]\n"
    "                        [--thread T] [--rank R]\n"
    "       ppw-blame report --folded FILE --binary BIN [options]\n\n"
    "Ranks the variables of the program by the share of samples that blame them:\n"
    "inclusive (the samples of every line computing what the variable holds, in\n"
    "its function and, through exit variables, in the functions it calls) and\n"
    "exclusive (direct writes to it). One sample blames several variables, so the\n"
    "shares add up to more than 100%.\n\n"
    "The access view ranks them instead by the samples of the code that reads\n"
    "and writes them: a sample is split among the variables its location loads\n"
    "from and stores to, by number of accesses, and a callee's parameter passes\n"
    "its share to the caller's argument, so these shares add up to at most 100%.\n\n"
    "DIR is a run directory (default: the ppw-* directory of the current directory\n"
    "modified last) or an MPI job directory; several runs (or jobs) of one program\n"
    "are summed, and thread T is thread T of every run.  --folded reads folded\n"
    "stacks instead (docs/FORMATS.md).\n\n"
    "  --top N            the N first variables (default 20; 0: all)\n"
    "  --view VIEW        blame (default: inclusive blame), exclusive (direct writes)\n"
    "                     or access (reads and writes); JSON carries all three\n"
    "  --exclusive        the same as --view exclusive\n"
    "  --blame-point FN   stop propagating blame at function FN (default: main)\n"
    "  --temporaries      also list the scalar locals (numbers, enums) of the\n"
    "                     functions the blame point calls; by default their blame\n"
    "                     shows on the data they compute\n"
    "  --thread T         only the samples of thread T (default: all threads)\n"
    "  --rank R           a job directory (all MPI ranks): only rank R's samples\n"
    "  --format FORMAT    text (default), tsv, csv or json\n"
    "  --binary BIN       the binary with the blame graphs (default: the run's executable)\n"
    "  --force            use BIN even when its build-id is not the run's, and sum\n"
    "                     runs of different builds of one executable\n"
    "  --folded FILE      folded stacks, one per line: main@22;foo@9 3\n"
    "  -h, --help         show this help\n";

enum report_view { REPORT_BLAME, REPORT_EXCLUSIVE, REPORT_ACCESS };

static const char *const view_names[] = {"blame", "exclusive", "access"};

struct report {
    const struct view_opts *o;
    const struct view_input *in;
    const struct ppw_blame_result *r;
    const char *blame_point, *view_name;
    enum report_view view;
    bool exclusive, temporaries;
    size_t shown, listed;
};

static int compare_exclusive(const void *x, const void *y)
{
    const struct ppw_blame_var *a = x, *b = y;
    if (a->exclusive != b->exclusive)
        return a->exclusive > b->exclusive ? -1 : 1;
    if (a->inclusive != b->inclusive)
        return a->inclusive > b->inclusive ? -1 : 1;
    int c = strcmp(a->function ? a->function : "", b->function ? b->function : "");
    return c ? c : strcmp(a->name, b->name);
}

static double accessed(const struct ppw_blame_var *v)
{
    return v->access_read + v->access_write;
}

static int compare_access(const void *x, const void *y)
{
    const struct ppw_blame_var *a = x, *b = y;
    if (accessed(a) != accessed(b))
        return accessed(a) > accessed(b) ? -1 : 1;
    if (a->access_read != b->access_read)
        return a->access_read > b->access_read ? -1 : 1;
    if (a->inclusive != b->inclusive)
        return a->inclusive > b->inclusive ? -1 : 1;
    int c = strcmp(a->function ? a->function : "", b->function ? b->function : "");
    return c ? c : strcmp(a->name, b->name);
}

static double pct(double part, uint64_t total)
{
    return total ? 100.0 * part / (double)total : 0;
}

/* Sorts the variables for the view; returns how many it lists (those the
 * view charges at all). */
static size_t rank_for_view(struct ppw_blame_result *r, enum report_view view)
{
    if (!r->nvars)
        return 0;
    if (view == REPORT_EXCLUSIVE)
        qsort(r->vars, r->nvars, sizeof *r->vars, compare_exclusive);
    else if (view == REPORT_ACCESS)
        qsort(r->vars, r->nvars, sizeof *r->vars, compare_access);
    size_t n = 0;
    while (n < r->nvars &&
           (view == REPORT_ACCESS ? accessed(&r->vars[n]) > 0 : r->vars[n].inclusive > 0))
        n++;
    return n;
}

/* ---- text ---- */

static void text_header(FILE *out, const struct report *p)
{
    const struct ppw_blame_result *r = p->r;
    view_text_title(out, p->in, "report");
    fputs("blame point: ", out);
    cli_text(out, p->blame_point ? p->blame_point : "main (default)");
    if (p->view == REPORT_ACCESS)
        fputs("; ranked by reads and writes, a sample split by accesses\n", out);
    else
        fprintf(out, "; ranked by %s blame; a sample blames several variables\n",
                p->view == REPORT_EXCLUSIVE ? "exclusive" : "inclusive");
    /* what no variable was charged with, by cause */
    double none[4], sum = 0;
    for (int c = 0; c < 4; c++)
        sum += none[c] = p->view == REPORT_ACCESS ? r->unaccessed[c] : (double)r->unblamed[c];
    if (sum > 0) {
        static const char *const causes[] = {"runtime waits", "no blame graph", "line 0",
                                             "lines of no variable"};
        fprintf(out, "note: %.1f%% of the samples %s no variable:\n     ",
                pct(sum, r->total_samples), p->view == REPORT_ACCESS ? "access" : "blame");
        const char *sep = " ";
        for (int c = 0; c < 4; c++)
            if (none[c] > 0) {
                fprintf(out, "%s%.1f%% %s", sep, pct(none[c], r->total_samples),
                        c == 3 && p->view == REPORT_ACCESS ? "lines that access none" : causes[c]);
                sep = ", ";
            }
        putc('\n', out);
    }
    if (r->temporaries)
        fprintf(out,
                "note: %zu scalar local%s of called functions not listed (--temporaries)\n",
                r->temporaries, r->temporaries == 1 ? "" : "s");
    if (!p->shown) {
        fputs(p->view == REPORT_ACCESS ? "\nno variable is accessed\n"
                                       : "\nno variable is blamed\n",
              out);
        return;
    }
    if (p->view == REPORT_ACCESS)
        fprintf(out, "\n%6s %6s %9s %9s  %-22s %-6s %-14s %s\n", "read%", "write%", "samples",
                view_metric_header(p->in), "variable", "kind", "type", "declared");
    else
        fprintf(out, "\n%6s %6s %9s %9s  %-22s %-6s %-14s %s\n", "incl%", "excl%", "samples",
                view_metric_header(p->in), "variable", "kind", "type", "declared");
}

static void text_var(FILE *out, const struct report *p, const struct ppw_blame_var *v)
{
    char decl[64], where[600];
    uint64_t total = p->r->total_samples;
    if (p->view == REPORT_ACCESS) {
        fprintf(out, "%6.1f %6.1f %9.1f ", pct(v->access_read, total), pct(v->access_write, total),
                accessed(v));
        view_metric_cell(out, p->in, v->access_read_weight + v->access_write_weight);
    } else {
        fprintf(out, "%6.1f %6.1f %9" PRIu64 " ", view_pct(v->inclusive, total),
                view_pct(v->exclusive, total), v->inclusive);
        view_metric_cell(out, p->in, v->inclusive_weight);
    }
    fputs("  ", out);
    view_cell(out, v->name, 22, false);
    putc(' ', out);
    view_cell(out, strcmp(v->kind, "parameter") == 0 ? "param" : v->kind, 6, false);
    putc(' ', out);
    view_cell(out, v->type, 14, false);
    putc(' ', out);
    if (v->decl_line)
        snprintf(decl, sizeof decl, "%s:%" PRIu32, view_basename(v->decl_file), v->decl_line);
    else
        snprintf(decl, sizeof decl, "%s", view_basename(v->decl_file));
    view_cell(out, decl, strlen(decl) < 20 ? strlen(decl) : 20, true);
    /* Then the name and type when the table cut them, and the context. */
    if (strlen(v->name) > 22 || strlen(v->type) > 14) {
        snprintf(where, sizeof where, "%s: %s", v->name, v->type);
        fprintf(out, "\n%35s", "");
        view_cell(out, where, strlen(where) < 65 ? strlen(where) : 65, false);
    }
    fprintf(out, "\n%35s", "");
    if (v->context) {
        view_wrap(out, "in ", v->context, 35, 65); /* whole, on as many lines as it needs */
    } else {
        snprintf(where, sizeof where, "program-level%s%s", v->function ? ", in " : "",
                 v->function ? v->function : "");
        view_cell(out, where, strlen(where) < 65 ? strlen(where) : 65, false);
    }
    if (v->naliases) {
        /* the names a callee knew it by: "seen as g in relax, x in foo" */
        size_t used = (size_t)snprintf(where, sizeof where, "seen as ");
        for (size_t i = 0; i < v->naliases && used < sizeof where; i++)
            used += (size_t)snprintf(where + used, sizeof where - used, "%s%s in %s",
                                     i ? ", " : "", v->aliases[i].name, v->aliases[i].function);
        fprintf(out, "\n%35s", "");
        view_cell(out, where, strlen(where) < 65 ? strlen(where) : 65, false);
    }
    putc('\n', out);
}

/* ---- tsv and json ---- */

static void tsv_var(FILE *out, const struct report *p, const struct ppw_blame_var *v)
{
    uint64_t total = p->r->total_samples;
    const char *fields[] = {v->name, v->function, v->kind, v->type, v->decl_file};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        view_tsv(out, fields[i]);
        putc('\t', out);
    }
    fprintf(out, "%" PRIu32 "\t", v->decl_line);
    view_tsv(out, v->context);
    fprintf(out, "\t%" PRIu64 "\t%" PRIu64 "\t%.3f\t%.3f\t%.9g\t%.9g", v->inclusive, v->exclusive,
            view_pct(v->inclusive, total), view_pct(v->exclusive, total), v->inclusive_weight,
            v->exclusive_weight);
    if (p->r->access_data)
        fprintf(out, "\t%.3f\t%.3f\t%.3f\t%.9g\n", pct(accessed(v), total),
                pct(v->access_read, total), pct(v->access_write, total),
                v->access_read_weight + v->access_write_weight);
    else
        fputs("\t\t\t\t\n", out);
}

static void json_var(FILE *out, const struct report *p, const struct ppw_blame_var *v)
{
    uint64_t total = p->r->total_samples;
    fputs("{\"name\":", out);
    json_string(out, v->name);
    fputs(",\"function\":", out);
    json_string_or_null(out, v->function);
    fputs(",\"kind\":", out);
    json_string(out, v->kind);
    fputs(",\"type\":", out);
    json_string(out, v->type);
    size_t len = strlen(v->decl_file) + 16;
    char *decl = malloc(len);
    if (decl)
        snprintf(decl, len, "%s:%" PRIu32, v->decl_file, v->decl_line);
    fputs(",\"decl\":", out);
    json_string(out, decl ? decl : v->decl_file);
    free(decl);
    fputs(",\"context\":", out);
    json_string_or_null(out, v->context);
    fprintf(out, ",\"samples\":%" PRIu64 ",\"inclusive\":", v->inclusive);
    json_double(out, view_pct(v->inclusive, total));
    fputs(",\"exclusive\":", out);
    json_double(out, view_pct(v->exclusive, total));
    if (p->r->access_data) {
        fputs(",\"access\":", out);
        json_double(out, pct(accessed(v), total));
        fputs(",\"read\":", out);
        json_double(out, pct(v->access_read, total));
        fputs(",\"write\":", out);
        json_double(out, pct(v->access_write, total));
    } else {
        fputs(",\"access\":null,\"read\":null,\"write\":null", out);
    }
    fputs(",\"aliases\":[", out);
    for (size_t i = 0; i < v->naliases; i++) {
        fputs(i ? ",{\"name\":" : "{\"name\":", out);
        json_string(out, v->aliases[i].name);
        fputs(",\"function\":", out);
        json_string(out, v->aliases[i].function);
        putc('}', out);
    }
    fputs("]}", out);
}

static void print_report(FILE *out, const struct report *p)
{
    const struct ppw_blame_result *r = p->r;
    if (p->o->fmt == VIEW_JSON) {
        view_json_open(out, p->in, "variables");
    } else if (p->o->fmt == VIEW_TSV) {
        fputs("name\tfunction\tkind\ttype\tdecl_file\tdecl_line\tcontext\tsamples\t"
              "exclusive_samples\tinclusive\texclusive\tinclusive_metric\texclusive_metric\t"
              "access\tread\twrite\taccess_metric\n",
              out);
    } else {
        text_header(out, p);
    }
    for (size_t i = 0; i < p->shown; i++) {
        if (p->o->fmt == VIEW_JSON) {
            fputs(i ? ",\n" : "\n", out);
            json_var(out, p, &r->vars[i]);
        } else if (p->o->fmt == VIEW_TSV) {
            tsv_var(out, p, &r->vars[i]);
        } else {
            text_var(out, p, &r->vars[i]);
        }
    }
    if (p->o->fmt == VIEW_JSON) {
        fprintf(out, "],\"view\":\"%s\",\"accessed_samples\":", view_names[p->view]);
        if (r->access_data)
            json_double(out, r->access_samples);
        else
            fputs("null", out);
        static const char *const keys[] = {"runtime_wait", "no_graph", "line_0", "no_variable"};
        fputs(",\"unattributed\":{\"blame\":{", out);
        for (int c = 0; c < 4; c++)
            fprintf(out, "%s\"%s\":%" PRIu64, c ? "," : "", keys[c], r->unblamed[c]);
        fputs("},\"access\":{", out);
        for (int c = 0; c < 4; c++) {
            fprintf(out, "%s\"%s\":", c ? "," : "", keys[c]);
            json_double(out, r->unaccessed[c]);
        }
        fprintf(out, "}},\"temporaries_not_listed\":%zu}\n", r->temporaries);
    } else if (p->o->fmt == VIEW_TEXT && p->shown < p->listed)
        fprintf(out, "(%zu more variable%s: --top 0 shows all)\n", p->listed - p->shown,
                p->listed - p->shown == 1 ? "" : "s");
}

static int parse_view(struct report *p, struct ppw_err *err)
{
    if (p->exclusive && p->view_name && strcmp(p->view_name, "exclusive") != 0)
        return ppw_err_set(err, PPW_EUSAGE, "report: --exclusive contradicts --view %s",
                           p->view_name);
    p->view = p->exclusive ? REPORT_EXCLUSIVE : REPORT_BLAME;
    if (!p->view_name)
        return 0;
    for (size_t i = 0; i < sizeof view_names / sizeof view_names[0]; i++)
        if (strcmp(p->view_name, view_names[i]) == 0) {
            p->view = (enum report_view)i;
            return 0;
        }
    return ppw_err_set(err, PPW_EUSAGE,
                       "report: unknown view '%s' (expected blame, exclusive or access)",
                       p->view_name);
}

int cmd_report(int argc, char **argv)
{
    struct view_opts o = {0};
    struct report p = {.o = &o};
    const struct cli_option options[] = {
        VIEW_OPTIONS(&o), {"--blame-point", &p.blame_point}, {"--view", &p.view_name}};
    const struct cli_flag flags[] = {
        {"--exclusive", &p.exclusive}, {"--force", &o.force}, {"--temporaries", &p.temporaries}};
    struct view_input in = {0};
    struct ppw_blame_result *r = NULL;
    struct ppw_err err;
    ppw_err_clear(&err);
    if (VIEW_PARSE(argc, argv, &o, options, VIEW_OPTION_COUNT + 2, flags, 3, &err) ||
        view_check_opts(&o, "report", 20, &err) || parse_view(&p, &err))
        return cli_fail(&err);
    if (o.help) {
        fputs(usage, stdout);
        return cli_finish_output();
    }
    int rc = view_load(&o, &in, &err);
    if (!rc) {
        size_t nstacks;
        const struct ppw_blame_stack *stacks = view_stacks(&in, &nstacks);
        struct ppw_blame_options bo = {
            .blame_point = p.blame_point, .access = true, .temporaries = p.temporaries};
        rc = ppw_blame_attribute(in.graph, stacks, nstacks, &bo, &r, &err);
    }
    if (!rc && p.view == REPORT_ACCESS && !r->access_data)
        rc = ppw_err_set(&err, PPW_EVERSION,
                         "%s: its blame graphs predate format 1.1 and hold no accesses; rebuild "
                         "it with this ppw-cc for --view access (blame and exclusive work)",
                         in.binary ? in.binary : "the binary");
    if (!rc) {
        p.listed = rank_for_view(r, p.view);
        p.in = &in;
        p.r = r;
        p.shown = o.top_n && o.top_n < p.listed ? o.top_n : p.listed;
        print_report(view_out(&o), &p);
        if ((rc = view_out_finish(&o)) != 0)
            ppw_err_set(&err, rc, "out of memory");
    }
    ppw_blame_result_free(r);
    view_input_free(&in);
    return rc ? cli_fail(&err) : cli_finish_output();
}
