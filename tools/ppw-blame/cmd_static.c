/* ppw-blame static: prints the static blame graphs embedded in a binary, as
 * text or JSON.  Output shapes are documented in docs/ppw-blame.md. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "ppw/static_format.h"
#include "read_graph.h"

enum static_format { FORMAT_TEXT, FORMAT_JSON };

struct static_opts {
    const char *binary;
    const char *function; /* NULL: all functions */
    enum static_format format;
    bool help;
};

/* Scratch space for sorting line numbers, reused across variables. */
struct line_buf {
    uint32_t *lines;
    size_t cap;
};

static const char usage[] =
    "usage: ppw-blame static BINARY [--function NAME] [--format text|json]\n"
    "\n"
    "Prints the static blame graphs that ppw.so embedded in BINARY (an executable,\n"
    "shared library or object file built with ppw-cc or -fpass-plugin=ppw.so).\n"
    "\n"
    "  --function NAME   only functions whose name or linkage name is NAME\n"
    "  --format FORMAT   text (default) or json\n"
    "  -h, --help        show this help\n";

/* ---- names ---- */

static const char *var_kind_name(uint32_t kind)
{
    static const char *const names[] = {"?",      "local", "param", "global",
                                        "static", "field", "return"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

static const char *call_kind_name(uint32_t kind)
{
    static const char *const names[] = {"?",    "direct", "indirect", "fork",
                                        "task", "spawn",  "library"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

static const char *bind_mode_name(uint32_t mode)
{
    static const char *const names[] = {"?", "ref", "value", "return", "written", "source"};
    return mode < sizeof names / sizeof names[0] ? names[mode] : "?";
}

static const struct {
    uint32_t bit;
    const char *name;
} var_flag_names[] = {
    {PPW_VAR_EXIT_WRITTEN, "exit_written"},   {PPW_VAR_EXIT_RETURNED, "exit_returned"},
    {PPW_VAR_EXIT_GLOBAL, "exit_global"},     {PPW_VAR_WRITTEN, "written"},
    {PPW_VAR_PASSED_BY_REF, "passed_by_ref"}, {PPW_VAR_SSA, "ssa"},
};

static const char *func_display_name(const struct ppw_static_func *func)
{
    return func->name[0] ? func->name : func->linkage_name;
}

static const char *var_name(const struct ppw_static_func *func, int32_t index)
{
    return index >= 0 && (size_t)index < func->var_count ? func->vars[index].name : NULL;
}

/* ---- line sets ---- */

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Sorted unique lines of locs into buf->lines; returns how many, or -1. */
static long unique_lines(struct line_buf *buf, const struct ppw_static_loc *locs, size_t count)
{
    if (count > buf->cap) {
        uint32_t *grown = realloc(buf->lines, count * sizeof *grown);
        if (!grown)
            return -1;
        buf->lines = grown;
        buf->cap = count;
    }
    for (size_t i = 0; i < count; i++)
        buf->lines[i] = locs[i].line;
    if (count)
        qsort(buf->lines, count, sizeof *buf->lines, compare_u32);
    size_t n = 0;
    for (size_t i = 0; i < count; i++)
        if (n == 0 || buf->lines[n - 1] != buf->lines[i])
            buf->lines[n++] = buf->lines[i];
    return (long)n;
}

/* ---- text ---- */

static int text_lines(FILE *out, struct line_buf *buf, const struct ppw_static_loc *locs,
                      size_t count)
{
    long n = unique_lines(buf, locs, count);
    if (n < 0)
        return PPW_ENOMEM;
    for (long i = 0; i < n; i++)
        fprintf(out, "%s%u", i ? "," : "", buf->lines[i]);
    return 0;
}

static int text_var(FILE *out, struct line_buf *buf, const struct ppw_static_func *func,
                    const struct ppw_static_var *var)
{
    fputs("  var ", out);
    cli_text(out, var->name);
    fprintf(out, " kind=%s type=", var_kind_name(var->kind));
    cli_text(out, var->type);
    fprintf(out, " decl=%u exit=%s lines=", var->decl_line,
            var->flags & PPW_VAR_EXIT_MASK ? "yes" : "no");
    if (text_lines(out, buf, var->inclusive, var->inclusive_count))
        return PPW_ENOMEM;
    fputs(" exclusive=", out);
    if (text_lines(out, buf, var->exclusive, var->exclusive_count))
        return PPW_ENOMEM;
    const char *parent = var_name(func, var->parent);
    if (parent) {
        fputs(" parent=", out);
        cli_text(out, parent);
    }
    if (var->param_index >= 0)
        fprintf(out, " param=%d", var->param_index);
    putc('\n', out);
    return 0;
}

static void text_binding(FILE *out, const struct ppw_static_func *func,
                         const struct ppw_static_binding *binding)
{
    const char *name = var_name(func, binding->var);
    putc(' ', out);
    cli_text(out, name ? name : "-");
    if (binding->formal < 0)
        fputs("<-ret", out);
    else
        fprintf(out, "<-arg%d", binding->formal);
    /* A field path reads on (arg0->result); a task's shared variable is a
     * name in the task body (arg5:x). */
    const char *path = binding->callee_path;
    if (path[0] && path[0] != '-' && path[0] != '.' && path[0] != '[')
        putc(':', out);
    cli_text(out, path);
    fprintf(out, "(%s)", bind_mode_name(binding->mode));
}

static void text_call(FILE *out, const struct ppw_static_func *func,
                      const struct ppw_static_call *call)
{
    fprintf(out, "  call %u:%u ", call->line, call->col);
    cli_text(out, call->callee[0] ? call->callee : "?");
    fprintf(out, " kind=%s", call_kind_name(call->kind));
    for (size_t i = 0; i < call->binding_count; i++)
        text_binding(out, func, &call->bindings[i]);
    putc('\n', out);
}

/* "line:col" in the function's own file, "file:line:col" elsewhere. */
static void text_location(FILE *out, const struct ppw_static_func *func,
                          const struct ppw_static_loc *loc)
{
    if (strcmp(loc->file, func->file) != 0) {
        cli_text(out, loc->file);
        putc(':', out);
    }
    fprintf(out, "%u:%u", loc->line, loc->col);
}

/* One line per (location, variable): "  access 88:17 SD.grid[].xs reads=1 writes=0". */
static void text_access(FILE *out, const struct ppw_static_func *func,
                        const struct ppw_static_access *access)
{
    for (size_t i = 0; i < access->entry_count; i++) {
        const struct ppw_static_access_entry *entry = &access->entries[i];
        fputs("  access ", out);
        text_location(out, func, &access->loc);
        putc(' ', out);
        cli_text(out, var_name(func, (int32_t)entry->var));
        fprintf(out, " reads=%u writes=%u\n", entry->reads, entry->writes);
    }
}

/* "  flow t -> acc, <return>": the variables computed from t. */
static void text_flow(FILE *out, const struct ppw_static_func *func,
                      const struct ppw_static_flow *flow)
{
    fputs("  flow ", out);
    cli_text(out, var_name(func, (int32_t)flow->source));
    fputs(" ->", out);
    for (size_t i = 0; i < flow->target_count; i++) {
        fputs(i ? ", " : " ", out);
        cli_text(out, var_name(func, (int32_t)flow->targets[i]));
    }
    putc('\n', out);
}

static int text_func(FILE *out, struct line_buf *buf, const struct ppw_static_func *func)
{
    fputs("function ", out);
    cli_text(out, func_display_name(func));
    fputs(" (", out);
    cli_text(out, func->file);
    fprintf(out, ":%u)", func->line);
    if (func->parent[0]) {
        fputs(" [outlined from ", out);
        cli_text(out, func->parent);
        putc(']', out);
    }
    if (!(func->flags & PPW_FUNC_ANALYSED))
        fputs(" [not analysed]", out);
    if (func->flags & PPW_FUNC_TRUNCATED)
        fputs(" [truncated: blame sets omitted]", out);
    putc('\n', out);
    for (size_t i = 0; i < func->var_count; i++)
        if (text_var(out, buf, func, &func->vars[i]))
            return PPW_ENOMEM;
    for (size_t i = 0; i < func->call_count; i++)
        text_call(out, func, &func->calls[i]);
    for (size_t i = 0; i < func->access_count; i++)
        text_access(out, func, &func->accesses[i]);
    for (size_t i = 0; i < func->flow_count; i++)
        text_flow(out, func, &func->flows[i]);
    return 0;
}

/* ---- json ---- */

static int json_lines(FILE *out, struct line_buf *buf, const struct ppw_static_loc *locs,
                      size_t count)
{
    long n = unique_lines(buf, locs, count);
    if (n < 0)
        return PPW_ENOMEM;
    putc('[', out);
    for (long i = 0; i < n; i++)
        fprintf(out, "%s%u", i ? "," : "", buf->lines[i]);
    putc(']', out);
    return 0;
}

/* "line:col" in the function's own file, "file:line:col" elsewhere. */
static void json_locations(FILE *out, const struct ppw_static_func *func,
                           const struct ppw_static_var *var)
{
    char text[64];
    putc('[', out);
    for (size_t i = 0; i < var->inclusive_count; i++) {
        const struct ppw_static_loc *loc = &var->inclusive[i];
        if (i)
            putc(',', out);
        snprintf(text, sizeof text, "%u:%u", loc->line, loc->col);
        if (strcmp(loc->file, func->file) == 0) {
            json_string(out, text);
            continue;
        }
        size_t len = strlen(loc->file) + 1 + strlen(text) + 1;
        char *full = malloc(len);
        if (full)
            snprintf(full, len, "%s:%s", loc->file, text);
        json_string(out, full ? full : text);
        free(full);
    }
    putc(']', out);
}

static void json_var_flags(FILE *out, uint32_t flags)
{
    bool first = true;
    putc('[', out);
    for (size_t i = 0; i < sizeof var_flag_names / sizeof var_flag_names[0]; i++) {
        if (!(flags & var_flag_names[i].bit))
            continue;
        fprintf(out, "%s\"%s\"", first ? "" : ",", var_flag_names[i].name);
        first = false;
    }
    putc(']', out);
}

static int json_var(FILE *out, struct line_buf *buf, const struct ppw_static_func *func,
                    const struct ppw_static_var *var)
{
    fputs("{\"name\":", out);
    json_string(out, var->name);
    fprintf(out, ",\"kind\":\"%s\",\"type\":", var_kind_name(var->kind));
    json_string(out, var->type);
    fprintf(out, ",\"decl_line\":%u,\"exit\":%s,\"lines\":", var->decl_line,
            var->flags & PPW_VAR_EXIT_MASK ? "true" : "false");
    if (json_lines(out, buf, var->inclusive, var->inclusive_count))
        return PPW_ENOMEM;
    fputs(",\"exclusive_lines\":", out);
    if (json_lines(out, buf, var->exclusive, var->exclusive_count))
        return PPW_ENOMEM;
    fputs(",\"locations\":", out);
    json_locations(out, func, var);
    fputs(",\"parent\":", out);
    json_string_or_null(out, var_name(func, var->parent));
    if (var->param_index >= 0)
        fprintf(out, ",\"param_index\":%d", var->param_index);
    else
        fputs(",\"param_index\":null", out);
    fputs(",\"flags\":", out);
    json_var_flags(out, var->flags);
    putc('}', out);
    return 0;
}

static void json_call(FILE *out, const struct ppw_static_func *func,
                      const struct ppw_static_call *call)
{
    fprintf(out, "{\"line\":%u,\"col\":%u,\"callee\":", call->line, call->col);
    json_string_or_null(out, call->callee);
    fprintf(out, ",\"kind\":\"%s\",\"bindings\":[", call_kind_name(call->kind));
    for (size_t i = 0; i < call->binding_count; i++) {
        const struct ppw_static_binding *binding = &call->bindings[i];
        fputs(i ? ",{\"var\":" : "{\"var\":", out);
        json_string_or_null(out, var_name(func, binding->var));
        fprintf(out, ",\"formal\":%d,\"mode\":\"%s\",\"path\":", binding->formal,
                bind_mode_name(binding->mode));
        json_string(out, binding->callee_path);
        putc('}', out);
    }
    fputs("]}", out);
}

static void json_accesses(FILE *out, const struct ppw_static_func *func)
{
    bool first = true;
    putc('[', out);
    for (size_t i = 0; i < func->access_count; i++) {
        const struct ppw_static_access *access = &func->accesses[i];
        for (size_t k = 0; k < access->entry_count; k++) {
            const struct ppw_static_access_entry *entry = &access->entries[k];
            fputs(first ? "{\"file\":" : ",{\"file\":", out);
            first = false;
            json_string(out, access->loc.file);
            fprintf(out, ",\"line\":%u,\"col\":%u,\"variable\":", access->loc.line,
                    access->loc.col);
            json_string_or_null(out, var_name(func, (int32_t)entry->var));
            fprintf(out, ",\"reads\":%u,\"writes\":%u}", entry->reads, entry->writes);
        }
    }
    putc(']', out);
}

static void json_flows(FILE *out, const struct ppw_static_func *func)
{
    putc('[', out);
    for (size_t i = 0; i < func->flow_count; i++) {
        const struct ppw_static_flow *flow = &func->flows[i];
        fputs(i ? ",{\"from\":" : "{\"from\":", out);
        json_string_or_null(out, var_name(func, (int32_t)flow->source));
        fputs(",\"to\":[", out);
        for (size_t t = 0; t < flow->target_count; t++) {
            if (t)
                putc(',', out);
            json_string_or_null(out, var_name(func, (int32_t)flow->targets[t]));
        }
        fputs("]}", out);
    }
    putc(']', out);
}

static int json_func(FILE *out, struct line_buf *buf, const struct ppw_static_func *func)
{
    fputs("{\"name\":", out);
    json_string(out, func_display_name(func));
    fputs(",\"linkage_name\":", out);
    json_string(out, func->linkage_name);
    fputs(",\"file\":", out);
    json_string(out, func->file);
    fprintf(out, ",\"line\":%u,\"outlined_from\":", func->line);
    json_string_or_null(out, func->parent);
    fputs(",\"variables\":[", out);
    for (size_t i = 0; i < func->var_count; i++) {
        if (i)
            putc(',', out);
        if (json_var(out, buf, func, &func->vars[i]))
            return PPW_ENOMEM;
    }
    fputs("],\"calls\":[", out);
    for (size_t i = 0; i < func->call_count; i++) {
        if (i)
            putc(',', out);
        json_call(out, func, &func->calls[i]);
    }
    fputs("],\"accesses\":", out);
    json_accesses(out, func);
    fputs(",\"flows\":", out);
    json_flows(out, func);
    fputs(",\"flags\":[", out);
    const char *separator = "";
    if (func->flags & PPW_FUNC_ANALYSED)
        fprintf(out, "%s\"analysed\"", separator), separator = ",";
    if (func->flags & PPW_FUNC_OUTLINED)
        fprintf(out, "%s\"outlined\"", separator), separator = ",";
    if (func->flags & PPW_FUNC_TRUNCATED)
        fprintf(out, "%s\"truncated\"", separator);
    fputs("]}", out);
    return 0;
}

/* ---- command ---- */

static bool selected(const struct static_opts *opts, const struct ppw_static_func *func)
{
    return !opts->function || ppw_static_func_matches(func, opts->function);
}

static int print_graph(FILE *out, const struct static_opts *opts,
                       const struct ppw_static_graph *graph)
{
    struct line_buf buf = {0};
    bool json = opts->format == FORMAT_JSON, first = true;
    int rc = 0;
    if (json) {
        fputs("{\"build_id\":", out);
        json_string(out, graph->build_id);
        fputs(",\"functions\":[", out);
    }
    for (size_t i = 0; i < graph->func_count && !rc; i++) {
        const struct ppw_static_func *func = &graph->funcs[i];
        if (!selected(opts, func))
            continue;
        if (json)
            fputs(first ? "\n" : ",\n", out);
        rc = json ? json_func(out, &buf, func) : text_func(out, &buf, func);
        first = false;
    }
    if (json && !rc)
        fputs("\n]}\n", out);
    free(buf.lines);
    return rc;
}

static int parse_format(const char *value, struct static_opts *opts, struct ppw_err *err)
{
    if (strcmp(value, "text") == 0)
        opts->format = FORMAT_TEXT;
    else if (strcmp(value, "json") == 0)
        opts->format = FORMAT_JSON;
    else
        return ppw_err_set(err, PPW_EUSAGE, "unknown format '%s' (expected text or json)", value);
    return 0;
}

static int parse_positional(const char *arg, struct static_opts *opts, struct ppw_err *err)
{
    if (opts->binary)
        return ppw_err_set(err, PPW_EUSAGE, "static: unexpected argument '%s'", arg);
    opts->binary = arg;
    return 0;
}

static int parse_args(int argc, char **argv, struct static_opts *opts, struct ppw_err *err)
{
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *value;
        int rc;
        if (options_done || arg[0] != '-' || strcmp(arg, "-") == 0)
            rc = parse_positional(arg, opts, err);
        else if (strcmp(arg, "--") == 0)
            options_done = true, rc = 0;
        else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
            opts->help = true, rc = 0;
        else if ((rc = cli_option_value(argc, argv, &i, "--function", &value, err)) == 1)
            opts->function = value, rc = 0;
        else if (rc == 0 && (rc = cli_option_value(argc, argv, &i, "--format", &value, err)) == 1)
            rc = parse_format(value, opts, err);
        else if (rc == 0)
            rc = ppw_err_set(err, PPW_EUSAGE, "static: unknown option '%s'", arg);
        if (rc)
            return rc;
    }
    if (!opts->binary && !opts->help)
        return ppw_err_set(err, PPW_EUSAGE,
                           "static: missing BINARY (see 'ppw-blame static --help')");
    return 0;
}

static int check_function_exists(const struct static_opts *opts,
                                 const struct ppw_static_graph *graph, struct ppw_err *err)
{
    if (!opts->function || ppw_static_graph_find_func(graph, opts->function))
        return 0;
    return ppw_err_set(err, PPW_ENOTFOUND, "%s: no function named '%s' in the static graphs",
                       opts->binary, opts->function);
}

int cmd_static(int argc, char **argv)
{
    struct static_opts opts = {0};
    struct ppw_err err;
    ppw_err_clear(&err);
    if (parse_args(argc, argv, &opts, &err))
        return cli_fail(&err);
    if (opts.help) {
        fputs(usage, stdout);
        return cli_finish_output();
    }
    struct ppw_static_graph *graph = NULL;
    int rc = ppw_static_graph_load(opts.binary, &graph, &err);
    if (!rc)
        rc = check_function_exists(&opts, graph, &err);
    if (!rc && print_graph(stdout, &opts, graph) != 0)
        rc = ppw_err_set(&err, PPW_ENOMEM, "out of memory while printing");
    ppw_static_graph_free(graph);
    if (rc)
        return cli_fail(&err);
    return cli_finish_output();
}
