#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int cli_fail(const struct ppw_err *err)
{
    fprintf(stderr, "ppw-blame: error: %s\n", err->message[0] ? err->message : "unknown error");
    return err->code == PPW_EUSAGE ? PPW_EXIT_USAGE : PPW_EXIT_DATA;
}

int cli_usage_error(const char *fmt, ...)
{
    struct ppw_err err = { .code = PPW_EUSAGE, .offset = -1 };
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
