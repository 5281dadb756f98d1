/* What main.c and the cmd_*.c files share: the command signature, exit
 * statuses, and the one-line error report. */
#ifndef PPW_BLAME_CLI_H
#define PPW_BLAME_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "error.h"

/* Exit statuses, documented in docs/ppw-blame.md. */
enum ppw_exit {
    PPW_EXIT_OK = 0,
    PPW_EXIT_DATA = 1,  /* unreadable, corrupt or missing input; nothing matched */
    PPW_EXIT_USAGE = 2, /* bad command line */
};

/* A subcommand: argv[0] is its name.  Returns an exit status. */
int cmd_static(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_code(int argc, char **argv);
int cmd_lines(int argc, char **argv);
int cmd_imbalance(int argc, char **argv);
int cmd_intrusion(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_html(int argc, char **argv);

/* Prints "ppw-blame: error: <message>" on stderr; returns the exit status
 * for err->code. */
int cli_fail(const struct ppw_err *err);

/* Checks the PPW_* variables ppw-blame reads (docs/ppw-blame.md,
 * "Environment") before any command runs, so a bad value is one clear
 * usage error rather than a silent default. */
int cli_check_environment(struct ppw_err *err);

/* PPW_BLAME_THREADS, checked: loader threads, 0 (one per CPU) when unset. */
unsigned cli_loader_threads(void);

/* Records a PPW_EUSAGE error and reports it; returns PPW_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) PPW_PRINTF(1, 2);

/* Matches argv[*i] against "--name VALUE" or "--name=VALUE".  Returns 1 and
 * sets *value (advancing *i past a separate VALUE), 0 when argv[*i] is
 * another argument, or PPW_EUSAGE when VALUE is missing. */
int cli_option_value(int argc, char **argv, int *i, const char *name, const char **value,
                     struct ppw_err *err);

/* An option taking a value, for cli_parse. */
struct cli_option {
    const char *name;   /* "--format" */
    const char **value; /* set to the option's value; the last one given wins */
};

/* An option without a value, for cli_parse_flags. */
struct cli_flag {
    const char *name; /* "--force" */
    bool *set;        /* set to true when given */
};

/* Parses a command's argv[1..]: the options of the table (as "--name VALUE"
 * or "--name=VALUE"), -h/--help (sets *help), and at most one positional
 * argument, a directory ("-" included; "--" ends options).  Errors:
 * PPW_EUSAGE, naming argv[0]. */
int cli_parse(int argc, char **argv, const struct cli_option *options, size_t count,
              const char **positional, bool *help, struct ppw_err *err);

/* cli_parse, also accepting the flags of a second table. */
int cli_parse_flags(int argc, char **argv, const struct cli_option *options, size_t count,
                    const struct cli_flag *flags, size_t nflags, const char **positional,
                    bool *help, struct ppw_err *err);

/* cli_parse_flags, taking any number of positional arguments: on return
 * they are argv[1..1 + *count), in order (argv's slots are reused; the
 * options' values keep pointing at their strings), and *positionals points
 * at them. */
int cli_parse_list(int argc, char **argv, const struct cli_option *options, size_t count,
                   const struct cli_flag *flags, size_t nflags, const char *const **positionals,
                   size_t *npositionals, bool *help, struct ppw_err *err);

/* --format: NULL or "text" sets *json false, "json" true; else PPW_EUSAGE. */
int cli_parse_format(const char *value, bool *json, struct ppw_err *err);

/* --format of the commands that also write CSV: text, json or csv. */
enum cli_format { CLI_TEXT, CLI_JSON, CLI_CSV };
int cli_parse_format_csv(const char *value, enum cli_format *fmt, struct ppw_err *err);

/* One CSV field (RFC 4180): quoted when it holds a comma, a quote, a line
 * break or surrounding blanks, quotes doubled; NULL is an empty field.
 * cli_csv_n takes the first len bytes of s. */
void cli_csv(FILE *out, const char *s);
void cli_csv_n(FILE *out, const char *s, size_t len);

/* Prints s with control characters as \xNN, so a record stays on one line. */
void cli_text(FILE *out, const char *s);

/* The run directory a command reads: dir when given, else the ppw-*
 * directory of the current directory modified last.  Sets *out (to free),
 * or returns PPW_ENOTFOUND (there is none), PPW_EIO or PPW_ENOMEM. */
int cli_run_dir(const char *dir, char **out, struct ppw_err *err);

/* Flushes stdout; a write error (full disk, closed pipe) is a data error. */
int cli_finish_output(void);

#endif
