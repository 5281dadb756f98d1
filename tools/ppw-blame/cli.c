#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int cli_fail(const struct ppw_err *err)
{
    fprintf(stderr, "ppw-blame: error: %s\n", err->message[0] ? err->message : "unknown error");
    return err->code == PPW_EUSAGE ? PPW_EXIT_USAGE : PPW_EXIT_DATA;
}

int cli_usage_error(const char *fmt, ...)
{
    struct ppw_err err = {.code = PPW_EUSAGE, .offset = -1};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err.message, sizeof err.message, fmt, ap);
    va_end(ap);
    return cli_fail(&err);
}

int cli_option_value(int argc, char **argv, int *i, const char *name, const char **value,
                     struct ppw_err *err)
{
    const char *arg = argv[*i];
    size_t len = strlen(name);
    if (strncmp(arg, name, len) != 0)
        return 0;
    if (arg[len] == '=') {
        *value = arg + len + 1;
        return 1;
    }
    if (arg[len] != '\0')
        return 0;
    if (*i + 1 >= argc)
        return ppw_err_set(err, PPW_EUSAGE, "option %s needs a value", name);
    *value = argv[++*i];
    return 1;
}

int cli_finish_output(void)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return PPW_EXIT_OK;
    struct ppw_err err;
    ppw_err_set(&err, PPW_EIO, "writing output: %s", strerror(errno));
    return cli_fail(&err);
}

/* Newer modification time first, then the greater name, so that the choice
 * never depends on readdir's order. */
static bool newer(const struct stat *a, const char *a_name, const struct stat *b,
                  const char *b_name)
{
    if (a->st_mtim.tv_sec != b->st_mtim.tv_sec)
        return a->st_mtim.tv_sec > b->st_mtim.tv_sec;
    if (a->st_mtim.tv_nsec != b->st_mtim.tv_nsec)
        return a->st_mtim.tv_nsec > b->st_mtim.tv_nsec;
    return strcmp(a_name, b_name) > 0;
}

int cli_run_dir(const char *dir, char **out, struct ppw_err *err)
{
    *out = NULL;
    if (dir) {
        if (!(*out = strdup(dir)))
            return ppw_err_set(err, PPW_ENOMEM, "out of memory");
        return 0;
    }
    DIR *d = opendir(".");
    if (!d)
        return ppw_err_set(err, PPW_EIO, "cannot list the current directory: %s", strerror(errno));
    struct stat best_st = {0}, st;
    char *best = NULL;
    struct dirent *de;
    int rc = 0;
    while (!rc && (de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "ppw-", 4) != 0 || stat(de->d_name, &st) != 0 ||
            !S_ISDIR(st.st_mode) || (best && !newer(&st, de->d_name, &best_st, best)))
            continue;
        free(best);
        if (!(best = strdup(de->d_name)))
            rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
        best_st = st;
    }
    closedir(d);
    if (!rc && !best)
        rc = ppw_err_set(err, PPW_ENOTFOUND,
                         "no ppw-* run directory in the current directory "
                         "(give the run directory as an argument)");
    if (rc) {
        free(best);
        return rc;
    }
    *out = best;
    return 0;
}

/* How many positional arguments a command takes. */
enum positionals { ONE, ONE_DIR, ANY };

/* Parses argv[1..]; positional arguments are moved to argv[1..1 + *npositionals)
 * (slots already parsed). */
static int parse_args(int argc, char **argv, const struct cli_option *options, size_t count,
                      const struct cli_flag *flags, size_t nflags, enum positionals takes,
                      size_t *npositionals, bool *help, struct ppw_err *err)
{
    bool options_done = false;
    *npositionals = 0;
    for (int i = 1; i < argc; i++) {
        char *arg = argv[i];
        int rc = 0;
        if (options_done || arg[0] != '-' || strcmp(arg, "-") == 0) {
            if (takes != ANY && *npositionals)
                return ppw_err_set(err, PPW_EUSAGE, "%s: unexpected argument '%s'%s%s%s", argv[0],
                                   arg, takes == ONE_DIR ? " (" : "",
                                   takes == ONE_DIR ? argv[0] : "",
                                   takes == ONE_DIR ? " reads one directory)" : "");
            argv[1 + (*npositionals)++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            options_done = true;
            continue;
        }
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            *help = true;
            continue;
        }
        for (size_t k = 0; k < nflags && rc == 0; k++)
            if (strcmp(arg, flags[k].name) == 0)
                *flags[k].set = true, rc = 1;
        for (size_t k = 0; k < count && rc == 0; k++)
            rc = cli_option_value(argc, argv, &i, options[k].name, options[k].value, err);
        if (rc < 0)
            return rc;
        if (rc == 0)
            return ppw_err_set(err, PPW_EUSAGE, "%s: unknown option '%s'", argv[0], arg);
    }
    return 0;
}

int cli_parse(int argc, char **argv, const struct cli_option *options, size_t count,
              const char **positional, bool *help, struct ppw_err *err)
{
    size_t n;
    int rc = parse_args(argc, argv, options, count, NULL, 0, ONE_DIR, &n, help, err);
    if (!rc && n)
        *positional = argv[1];
    return rc;
}

int cli_parse_flags(int argc, char **argv, const struct cli_option *options, size_t count,
                    const struct cli_flag *flags, size_t nflags, const char **positional,
                    bool *help, struct ppw_err *err)
{
    size_t n;
    int rc = parse_args(argc, argv, options, count, flags, nflags, ONE, &n, help, err);
    if (!rc && n)
        *positional = argv[1];
    return rc;
}

int cli_parse_list(int argc, char **argv, const struct cli_option *options, size_t count,
                   const struct cli_flag *flags, size_t nflags, const char *const **positionals,
                   size_t *npositionals, bool *help, struct ppw_err *err)
{
    int rc = parse_args(argc, argv, options, count, flags, nflags, ANY, npositionals, help, err);
    *positionals = (const char *const *)(argv + 1);
    return rc;
}

int cli_parse_format(const char *value, bool *json, struct ppw_err *err)
{
    if (!value || strcmp(value, "text") == 0)
        *json = false;
    else if (strcmp(value, "json") == 0)
        *json = true;
    else
        return ppw_err_set(err, PPW_EUSAGE, "unknown format '%s' (expected text or json)", value);
    return 0;
}

int cli_parse_format_csv(const char *value, enum cli_format *fmt, struct ppw_err *err)
{
    if (!value || strcmp(value, "text") == 0)
        *fmt = CLI_TEXT;
    else if (strcmp(value, "json") == 0)
        *fmt = CLI_JSON;
    else if (strcmp(value, "csv") == 0)
        *fmt = CLI_CSV;
    else
        return ppw_err_set(err, PPW_EUSAGE, "unknown format '%s' (expected text, json or csv)",
                           value);
    return 0;
}

void cli_csv_n(FILE *out, const char *s, size_t len)
{
    bool quote = len && (s[0] == ' ' || s[len - 1] == ' ');
    for (size_t i = 0; i < len && !quote; i++)
        quote = s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
    if (!quote) {
        fwrite(s, 1, len, out);
        return;
    }
    putc('"', out);
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '"')
            putc('"', out);
        putc(s[i], out);
    }
    putc('"', out);
}

void cli_csv(FILE *out, const char *s)
{
    cli_csv_n(out, s ? s : "", s ? strlen(s) : 0);
}

void cli_text(FILE *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7f)
            fprintf(out, "\\x%02x", *p);
        else
            putc(*p, out);
    }
}

/* ---- environment ---- */

static unsigned loader_threads;

int cli_check_environment(struct ppw_err *err)
{
    const char *v = getenv("PPW_BLAME_THREADS");
    if (v && v[0]) {
        char *end;
        errno = 0;
        unsigned long n = v[0] >= '0' && v[0] <= '9' ? strtoul(v, &end, 10) : 0;
        if (v[0] < '0' || v[0] > '9' || *end || errno || n < 1 || n > 256)
            return ppw_err_set(err, PPW_EUSAGE,
                               "PPW_BLAME_THREADS=%s: expected a thread count from 1 to 256", v);
        loader_threads = (unsigned)n;
    }
    struct stat st;
    if ((v = getenv("PPW_DEBUG_DIR")) && v[0]) {
        if (stat(v, &st) != 0)
            return ppw_err_set(err, PPW_EUSAGE, "PPW_DEBUG_DIR=%s: %s", v, strerror(errno));
        if (!S_ISDIR(st.st_mode))
            return ppw_err_set(err, PPW_EUSAGE, "PPW_DEBUG_DIR=%s: not a directory", v);
    }
    static const char *const files[] = {"PPW_BASELINE", "PPW_CALIBRATE_MPI"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        if ((v = getenv(files[i])) && v[0] && stat(v, &st) == 0 && S_ISDIR(st.st_mode))
            return ppw_err_set(err, PPW_EUSAGE, "%s=%s: expected a file, not a directory", files[i],
                               v);
    return 0;
}

unsigned cli_loader_threads(void)
{
    return loader_threads;
}
