/* What main.c and the cmd_*.c files share: the command signature, exit
 * statuses, and the one-line error report. */
#ifndef PPW_BLAME_CLI_H
#define PPW_BLAME_CLI_H

#include "error.h"

/* Exit statuses, documented in docs/ppw-blame.md. */
enum ppw_exit {
    PPW_EXIT_OK = 0,
    PPW_EXIT_DATA = 1,  /* unreadable, corrupt or missing input; nothing matched */
    PPW_EXIT_USAGE = 2, /* bad command line */
};

/* A subcommand: argv[0] is its name.  Returns an exit status. */
int cmd_static(int argc, char **argv);

/* Prints "ppw-blame: error: <message>" on stderr; returns the exit status
 * for err->code. */
int cli_fail(const struct ppw_err *err);

/* Records a PPW_EUSAGE error and reports it; returns PPW_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) PPW_PRINTF(1, 2);

/* Matches argv[*i] against "--name VALUE" or "--name=VALUE".  Returns 1 and
 * sets *value (advancing *i past a separate VALUE), 0 when argv[*i] is
 * another argument, or PPW_EUSAGE when VALUE is missing. */
int cli_option_value(int argc, char **argv, int *i, const char *name, const char **value,
                     struct ppw_err *err);

/* Flushes stdout; a write error (full disk, closed pipe) is a data error. */
int cli_finish_output(void);

#endif
