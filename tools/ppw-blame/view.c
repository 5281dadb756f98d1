/* The views' shared input and output helpers (view.h). */
#define _POSIX_C_SOURCE 200809L

#include "view.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "folded.h"
#include "json.h"
#include "read_graph.h"
#include "stacks.h"

int view_check_opts(struct view_opts *o, const char *command, size_t top_default,
                    struct ppw_err *err)
{
    if (!o->format || strcmp(o->format, "text") == 0)
        o->fmt = VIEW_TEXT;
    else if (strcmp(o->format, "tsv") == 0)
        o->fmt = VIEW_TSV;
    else if (strcmp(o->format, "json") == 0)
        o->fmt = VIEW_JSON;
    else
        return ppw_err_set(err, PPW_EUSAGE, "%s: unknown format '%s' (expected text, tsv or json)",
                           command, o->format);
    o->top_n = top_default;
    if (o->top) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(o->top, &end, 10);
        if (o->top[0] < '0' || o->top[0] > '9' || *end || errno || n > SIZE_MAX)
            return ppw_err_set(err, PPW_EUSAGE, "%s: --top needs a number (0: all), not '%s'",
                               command, o->top);
        o->top_n = (size_t)n;
    }
    if (o->folded && o->dir)
        return ppw_err_set(err, PPW_EUSAGE, "%s: give a run directory or --folded FILE, not both",
                           command);
    if (o->folded && !o->binary)
        return ppw_err_set(err, PPW_EUSAGE,
                           "%s: --folded needs --binary BIN, the binary the stacks ran in", command);
    return 0;
}

static int load_folded(const struct view_opts *o, struct view_input *in, struct ppw_err *err)
{
    int rc = ppw_static_graph_load(o->binary, &in->graph, err);
    if (!rc && !(in->source = strdup(o->folded)))
        rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
    if (!rc)
        rc = ppw_folded_load(o->folded, in->graph, in->stacks, err);
    in->binary = o->binary;
    in->metric = "samples";
    in->unit = "samples";
    return rc;
}

int view_load(const struct view_opts *o, struct view_input *in, struct ppw_err *err)
{
    *in = (struct view_input){0};
    int rc = ppw_stack_set_new(&in->stacks, err);
    if (rc)
        return rc;
    if (o->folded)
        return load_folded(o, in, err);
    return ppw_err_set(err, PPW_EUSAGE,
                       "reading a run directory is not available yet: give --folded FILE "
                       "--binary BIN");
}

void view_input_free(struct view_input *in)
{
    ppw_static_graph_free(in->graph);
    ppw_stack_set_free(in->stacks);
    free(in->source);
    *in = (struct view_input){0};
}

const struct ppw_blame_stack *view_stacks(const struct view_input *in, size_t *count)
{
    return ppw_stack_set_stacks(in->stacks, count);
}

uint64_t view_total_samples(const struct view_input *in)
{
    return ppw_stack_set_samples(in->stacks);
}

double view_total_weight(const struct view_input *in)
{
    return ppw_stack_set_weight(in->stacks);
}

double view_pct(uint64_t part, uint64_t total)
{
    return total ? 100.0 * (double)part / (double)total : 0;
}

void view_json_open(FILE *out, const struct view_input *in, const char *list)
{
    fprintf(out, "{\"total_samples\":%" PRIu64 ",\"metric\":{\"name\":", view_total_samples(in));
    json_string(out, in->metric);
    fputs(",\"unit\":", out);
    json_string(out, in->unit);
    fputs(",\"total\":", out);
    json_double(out, view_total_weight(in));
    fprintf(out, "},\"%s\":[", list);
}

void view_text_title(FILE *out, const struct view_input *in, const char *view)
{
    fprintf(out, "%s: %" PRIu64 " samples (metric: %s) from ", view, view_total_samples(in),
            in->metric);
    cli_text(out, in->source);
    fputs(", binary ", out);
    cli_text(out, view_basename(in->binary));
    putc('\n', out);
}

static void put_clean(FILE *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        putc((unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i], out);
}

void view_cell(FILE *out, const char *s, size_t width, bool keep_end)
{
    size_t len = strlen(s);
    if (len <= width) {
        put_clean(out, s, len);
        fprintf(out, "%*s", (int)(width - len), "");
    } else if (width < 4) {
        put_clean(out, keep_end ? s + len - width : s, width);
    } else if (keep_end) {
        fputs("...", out);
        put_clean(out, s + len - (width - 3), width - 3);
    } else {
        put_clean(out, s, width - 3);
        fputs("...", out);
    }
}

void view_tsv(FILE *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++)
        putc(*p < 0x20 || *p == 0x7f ? ' ' : *p, out);
}

const char *view_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

const char *view_metric_header(const struct view_input *in)
{
    if (strcmp(in->unit, "s") == 0)
        return "seconds";
    return strcmp(in->unit, "cycles") == 0 ? "cycles" : "metric";
}

void view_metric_cell(FILE *out, const struct view_input *in, double weight)
{
    if (strcmp(in->unit, "s") == 0)
        fprintf(out, "%9.3f", weight);
    else if (strcmp(in->unit, "cycles") == 0)
        fprintf(out, "%9.3g", weight);
    else
        fprintf(out, "%9s", "-");
}
