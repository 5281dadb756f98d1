/* ppw-blame: dispatches to one cmd_<name>() per subcommand. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "ppw/run_format.h"
#include "ppw/static_format.h"

#ifndef PPW_VERSION
#define PPW_VERSION "unknown"
#endif

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"report", cmd_report, "rank the variables by the samples that blame them (the default)"},
    {"code", cmd_code, "the time per function, in full calling context"},
    {"lines", cmd_lines, "the hot source lines"},
    {"imbalance", cmd_imbalance, "how each top variable's blame spreads over the threads"},
    {"static", cmd_static, "print the static blame graphs embedded in a binary"},
    {"dump", cmd_dump, "print what a run directory holds: records, stacks, spawns, trace"},
    {"profile", cmd_profile, "print a run's profile table, raw and compensated"},
    {"analyze", cmd_analyze, "what is wrong: waits, contention, imbalance, ranked by time lost"},
    {"intrusion", cmd_intrusion, "what measuring cost: probes, sampler, flagged regions"},
    {"calibrate", cmd_calibrate, "measure this machine's barrier, lock and message costs"},
    {"export", cmd_export, "write folded stacks, speedscope or Chrome trace JSON"},
    {"flame", cmd_flame, "draw the samples as an SVG flame graph"},
    {"html", cmd_html, "the whole report as one self-contained HTML file"},
};

static void print_usage(FILE *out)
{
    fputs("usage: ppw-blame [--help | --version] [<command>] [<args>]\n\ncommands:\n", out);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fputs("\nRun 'ppw-blame <command> --help' for a command's options.\n", out);
}

static const struct command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

int main(int argc, char **argv)
{
    static char report[] = "report";
    char *report_argv[] = {report, NULL};
    struct ppw_err err;
    if (cli_check_environment(&err) != 0)
        return cli_fail(&err);
    if (argc < 2) /* the default: report on the newest run directory */
        return cmd_report(1, report_argv);
    const char *first = argv[1];
    if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0) {
        print_usage(stdout);
        return cli_finish_output();
    }
    if (strcmp(first, "--version") == 0) {
        printf("ppw-blame %s (static graph format %d.%d, run format %d.%d)\n", PPW_VERSION,
               PPW_STATIC_MAJOR, PPW_STATIC_MINOR, PPW_RUN_MAJOR, PPW_RUN_MINOR);
        return cli_finish_output();
    }
    if (first[0] == '-')
        return cli_usage_error("unknown option '%s' (see 'ppw-blame --help')", first);
    const struct command *command = find_command(first);
    struct stat st;
    if (!command && stat(first, &st) == 0 && S_ISDIR(st.st_mode)) {
        argv[0] = report; /* ppw-blame DIR [options]: report on DIR */
        return cmd_report(argc, argv);
    }
    if (!command)
        return cli_usage_error("unknown command '%s' (see 'ppw-blame --help')", first);
    return command->run(argc - 1, argv + 1);
}
