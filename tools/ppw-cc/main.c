/* ppw-cc: compiler wrapper in the tradition of scorep and tau_cc.
 *
 *   ppw-cc [clang args]  ==  clang -g -fpass-plugin=<lib>/ppw.so [clang args]
 *                            [-L<lib> -Wl,-rpath,<lib> -lppw -Wl,--build-id]
 *
 * The link flags are added only when the invocation links.  <lib> is
 * <dir of this executable>/../lib, which holds in the build tree (build/bin,
 * build/lib) and under an install prefix (prefix/bin, prefix/lib).
 *
 * GASP's instrumentation flags (--inst, --inst-functions, ...) become tokens
 * of PPW_PASS_OPTIONS in the compiler's environment: clang loads the plugin
 * after it has parsed -mllvm, so the pass reads its options from there. */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PPW_CLANG_PATH
#error "build with -DPPW_CLANG_PATH=\"/path/to/clang\""
#endif

/* Options that ppw-cc consumes itself; they never reach clang. */
enum ppw_cc_opt {
    PPW_CC_OPT_HELP,
    PPW_CC_OPT_SHOW,
    PPW_CC_OPT_PASS, /* becomes the pass option `token` */
};

static const struct {
    const char *name;
    enum ppw_cc_opt opt;
    const char *token;  /* PPW_PASS_OPTIONS token, for PPW_CC_OPT_PASS */
    int takes_file;     /* --name=FILE or --name FILE; the token gets =FILE */
} own_opts[] = {
    {"--ppw-help", PPW_CC_OPT_HELP, NULL, 0},
    {"--ppw-show", PPW_CC_OPT_SHOW, NULL, 0},
    /* GASP's compiler flags (docs/gasp.md). */
    {"--inst", PPW_CC_OPT_PASS, "inst", 0},
    {"--inst-local", PPW_CC_OPT_PASS, "inst-local", 0},
    {"--inst-functions", PPW_CC_OPT_PASS, "inst-functions", 0},
    {"--inst-only", PPW_CC_OPT_PASS, "inst-only", 1},
    {"--no-inst", PPW_CC_OPT_PASS, "no-inst", 0},
};

#define PASS_OPTIONS_VAR "PPW_PASS_OPTIONS"
/* clang marks every function not declared no_instrument_function with an
 * attribute under this flag; the pass reads and removes it (inst-marker). */
static const char marker_flag[] = "-finstrument-functions-after-inlining";

/* Any of these means the driver stops before linking (or never starts). */
static const char *const no_link_flags[] = {
    "-c", "-S", "-E", "-M", "-MM", "-fsyntax-only", "-###",
    "--version", "-help", "--help", "-dumpversion", "-dumpmachine",
};
static const char *const no_link_prefixes[] = {"-print-", "--print-"};

/* Options whose value is the next argument; that value is not an input file.
 * Only used to decide whether there are inputs at all, so a missing entry
 * matters only for command lines without source files. */
static const char *const separate_value_opts[] = {
    "-o", "-x", "-I", "-L", "-D", "-U", "-F", "-B", "-l", "-u", "-T", "-z", "-e",
    "-MF", "-MT", "-MQ", "-MJ", "-include", "-imacros", "-isystem", "-iquote",
    "-idirafter", "-iprefix", "-iwithprefix", "-iwithprefixbefore", "-isysroot",
    "-iframework", "-ivfsoverlay", "-cxx-isystem", "-Xlinker", "-Xclang",
    "-Xassembler", "-Xpreprocessor", "-Xopenmp-target", "-mllvm", "-target",
    "-arch", "--sysroot", "--param", "-resource-dir", "-dependency-file",
    "-working-directory",
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int in_list(const char *arg, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(arg, list[i]) == 0)
            return 1;
    return 0;
}

static void usage(void)
{
    printf("usage: ppw-cc [--ppw-show] [--inst | --inst-local | --inst-functions |\n"
           "              --inst-only=FILE | --no-inst] [clang arguments]\n"
           "\n"
           "Compiles with clang, the ppw pass plugin and debug info (-g); when the\n"
           "command links, also links the ppw runtime (libppw) with an rpath and a\n"
           "build-id.  All other arguments go to clang unchanged, in order.  The\n"
           "pass keeps a frame pointer in every function of an instrumented file.\n"
           "\n"
           "  --ppw-help         print this help and exit\n"
           "  --ppw-show         print the command that would run, without running it\n"
           "\n"
           "GASP instrumentation (the last of these wins; default --inst):\n"
           "  --inst             events around library calls (memory, pthreads,\n"
           "                     OpenMP, MPI)\n"
           "  --inst-local       the same as --inst (C has no remote accesses)\n"
           "  --inst-functions   --inst and function entry/exit (GASP_C_FUNC)\n"
           "  --inst-only=FILE   only the events FILE names, one per line\n"
           "                     (GASP_C_FUNC, GASP_PTHREAD_MUTEX_LOCK, ...)\n"
           "  --no-inst          no events\n"
           "\n"
           "environment:\n"
           "  PPW_CC             compiler to run (default: %s)\n"
           "  PPW_PASS_OPTIONS   pass options; ppw-cc appends its own to them\n"
           "\n"
           "plugin and runtime are taken from <ppw-cc's directory>/../lib\n",
           PPW_CLANG_PATH);
}

/* Does this clang command line end in a link step? */
static int links(int argc, char **argv)
{
    int inputs = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (in_list(a, no_link_flags, COUNT(no_link_flags)))
            return 0;
        for (size_t p = 0; p < COUNT(no_link_prefixes); p++)
            if (strncmp(a, no_link_prefixes[p], strlen(no_link_prefixes[p])) == 0)
                return 0;
        if (in_list(a, separate_value_opts, COUNT(separate_value_opts)))
            i++;
        else if (a[0] != '-' || strcmp(a, "-") == 0)
            inputs++; /* a source, object, archive, @response file or stdin */
    }
    /* Without inputs, -lppw would itself make clang try to link. */
    return inputs > 0;
}

/* Where -lppw goes: before the first MPI library (-lmpi..., or a path to
 * libmpi...), so that libppw's PMPI wrappers (MPI_Init and the others)
 * come first in symbol lookup, as `OMPI_CC=ppw-cc mpicc` needs; else at
 * the end (argc). */
static int first_mpi_library(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (in_list(a, separate_value_opts, COUNT(separate_value_opts))) {
            i++;
            continue;
        }
        const char *slash = strrchr(a, '/');
        const char *name = slash ? slash + 1 : a;
        if (strncmp(a, "-lmpi", 5) == 0 || (a[0] != '-' && strncmp(name, "libmpi", 6) == 0))
            return i;
    }
    return argc;
}

/* <directory of this executable>/../lib into out[PATH_MAX], canonical when
 * it exists.  /proc/self/exe has symlinks resolved, so a symlinked ppw-cc
 * still finds its own tree.  0, or -1 with errno. */
static int find_libdir(char *out)
{
    char exe[PATH_MAX], lib[PATH_MAX + 8];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n < 0)
        return -1;
    exe[n] = '\0';
    /* dirname() edits in place: exe becomes .../bin */
    snprintf(lib, sizeof(lib), "%s/../lib", dirname(exe));
    if (!realpath(lib, out) && snprintf(out, PATH_MAX, "%s", lib) >= PATH_MAX)
        return errno = ENAMETOOLONG, -1;
    return 0;
}

/* Print one word so that a POSIX shell reads it back unchanged. */
static void print_word(const char *a)
{
    int plain = a[0] != '\0' &&
                strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                          "0123456789-_./=,:+@%") == strlen(a);
    if (plain) {
        fputs(a, stdout);
        return;
    }
    putchar('\'');
    for (const char *c = a; *c; c++) {
        if (*c == '\'')
            fputs("'\\''", stdout); /* close, escaped quote, reopen */
        else
            putchar(*c);
    }
    putchar('\'');
}

/* Print a command, after its environment assignment if any, so that it can
 * be pasted into a POSIX shell. */
static void print_command(const char *pass_options, char **av)
{
    if (pass_options && *pass_options) {
        fputs(PASS_OPTIONS_VAR "=", stdout);
        print_word(pass_options);
        putchar(' ');
    }
    for (int i = 0; av[i]; i++) {
        fputs(i ? " " : "", stdout);
        print_word(av[i]);
    }
    putchar('\n');
}

/* The row of own_opts that `arg` names, or -1.  *value gets the FILE of a
 * --name=FILE argument. */
static int own_option(const char *arg, const char **value)
{
    *value = NULL;
    for (size_t k = 0; k < COUNT(own_opts); k++) {
        size_t length = strlen(own_opts[k].name);
        if (strncmp(arg, own_opts[k].name, length) != 0)
            continue;
        if (arg[length] == '\0')
            return (int)k;
        if (own_opts[k].takes_file && arg[length] == '=') {
            *value = arg + length + 1;
            return (int)k;
        }
    }
    return -1;
}

/* Appends `token` to the comma-separated list in *list (NULL: empty). */
static int append_token(char **list, const char *token, const char *value)
{
    size_t old = *list ? strlen(*list) : 0;
    size_t extra = strlen(token) + (value ? strlen(value) + 1 : 0) + 2;
    char *grown = realloc(*list, old + extra);
    if (!grown)
        return -1;
    snprintf(grown + old, extra, "%s%s%s%s", old ? "," : "", token, value ? "=" : "",
             value ? value : "");
    *list = grown;
    return 0;
}

/* Whether the comma/space-separated `list` holds `token` (or token=...). */
static int has_token(const char *list, const char *token)
{
    size_t length = strlen(token);
    for (const char *at = list; at && *at;) {
        at += strspn(at, ", \t\n");
        size_t word = strcspn(at, ", \t\n");
        if (word >= length && !strncmp(at, token, length) &&
            (word == length || at[length] == '='))
            return 1;
        at += word;
    }
    return 0;
}

/* Does the user already pass one of clang's -finstrument-function* flags?
 * Then their attributes are theirs, and ppw-cc adds no marker. */
static int user_instruments_functions(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "-finstrument-function", 21))
            return 1;
    return 0;
}

/* What ppw-cc's own options asked for. */
struct own_request {
    int show;
    char *pass_tokens; /* PPW_PASS_OPTIONS tokens of the GASP flags, or NULL */
};

/* Splits argv into ppw-cc's options (into *request) and clang's arguments
 * (into clang_args, argv[0] first).  Returns the number of clang arguments,
 * 0 after --ppw-help, -1 after an error (printed). */
static int parse_arguments(int argc, char **argv, struct own_request *request, char **clang_args)
{
    int clang_argc = 0;
    clang_args[clang_argc++] = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *value = NULL;
        int k = own_option(argv[i], &value);
        if (k < 0) {
            if (strncmp(argv[i], "--ppw-", 6) == 0) {
                fprintf(stderr, "ppw-cc: error: unknown option '%s' (see --ppw-help)\n", argv[i]);
                return -1;
            }
            clang_args[clang_argc++] = argv[i];
            continue;
        }
        switch (own_opts[k].opt) {
        case PPW_CC_OPT_HELP:
            usage();
            return 0;
        case PPW_CC_OPT_SHOW:
            request->show = 1;
            break;
        case PPW_CC_OPT_PASS:
            if (own_opts[k].takes_file && !value) {
                if (i + 1 >= argc) {
                    fprintf(stderr, "ppw-cc: error: %s needs a file\n", argv[i]);
                    return -1;
                }
                value = argv[++i];
            }
            if (own_opts[k].takes_file && (!*value || strpbrk(value, ", \t\n"))) {
                /* The pass's option list is separated by commas and spaces. */
                fprintf(stderr, "ppw-cc: error: %s: '%s' is empty or holds a comma or space\n",
                        own_opts[k].name, value);
                return -1;
            }
            if (append_token(&request->pass_tokens, own_opts[k].token, value) != 0) {
                perror("ppw-cc: error");
                return -1;
            }
            break;
        }
    }
    return clang_argc;
}

/* PPW_PASS_OPTIONS for the compiler: the environment's value, then ours, so
 * that the pass (last inst option wins) lets the command line decide.  When
 * function events may be on, *marker is set and inst-marker appended.
 * 0, or -1 when out of memory. */
static int pass_options_for(const struct own_request *request, int argc, char **argv,
                            char **options, int *marker)
{
    const char *inherited = getenv(PASS_OPTIONS_VAR);
    *options = NULL;
    if ((inherited && *inherited && append_token(options, inherited, NULL) != 0) ||
        (request->pass_tokens && append_token(options, request->pass_tokens, NULL) != 0))
        return -1;
    *marker = (has_token(*options, "inst-functions") || has_token(*options, "inst-only")) &&
              !user_instruments_functions(argc, argv);
    return *marker ? append_token(options, "inst-marker", NULL) : 0;
}

int main(int argc, char **argv)
{
    int status = 1, marker = 0;
    struct own_request request = {0};
    char *pass_options = NULL;
    /* compiler, -g, plugin flag, marker, user args, 4 link args, NULL */
    char **av = calloc((size_t)argc + 9, sizeof(*av));
    /* The arguments meant for clang, as a command line for links(). */
    char **clang_args = calloc((size_t)argc + 1, sizeof(*clang_args));
    if (!av || !clang_args) {
        perror("ppw-cc: error");
        goto out;
    }
    int clang_argc = parse_arguments(argc, argv, &request, clang_args);
    if (clang_argc <= 0) {
        status = clang_argc < 0;
        goto out;
    }

    char lib[PATH_MAX], plugin[PATH_MAX + 16];
    if (find_libdir(lib) != 0) {
        fprintf(stderr, "ppw-cc: error: /proc/self/exe: %s\n", strerror(errno));
        goto out;
    }
    snprintf(plugin, sizeof(plugin), "%s/ppw.so", lib);
    if (access(plugin, R_OK) != 0) {
        fprintf(stderr, "ppw-cc: error: pass plugin %s: %s (build or install ppw first)\n",
                plugin, strerror(errno));
        goto out;
    }

    const char *cc = getenv("PPW_CC");
    if (!cc || !*cc)
        cc = PPW_CLANG_PATH;
    if (pass_options_for(&request, argc, argv, &pass_options, &marker) != 0) {
        perror("ppw-cc: error");
        goto out;
    }

    char plugin_flag[PATH_MAX + 32], libdir_flag[PATH_MAX + 8], rpath_flag[PATH_MAX + 16];
    int n = 0;
    av[n++] = (char *)cc;
    av[n++] = "-g";
    snprintf(plugin_flag, sizeof(plugin_flag), "-fpass-plugin=%s", plugin);
    av[n++] = plugin_flag;
    if (marker)
        av[n++] = (char *)marker_flag;
    int link = links(clang_argc, clang_args);
    int ppw_at = link ? first_mpi_library(clang_argc, clang_args) : clang_argc;
    for (int i = 1; i <= clang_argc; i++) {
        if (link && i == ppw_at) {
            snprintf(libdir_flag, sizeof(libdir_flag), "-L%s", lib);
            snprintf(rpath_flag, sizeof(rpath_flag), "-Wl,-rpath,%s", lib);
            av[n++] = libdir_flag;
            av[n++] = rpath_flag;
            av[n++] = "-lppw";
            av[n++] = "-Wl,--build-id";
        }
        if (i < clang_argc)
            av[n++] = clang_args[i];
    }
    av[n] = NULL;

    if (request.show) {
        print_command(pass_options, av);
        status = 0;
        goto out;
    }
    if (pass_options && setenv(PASS_OPTIONS_VAR, pass_options, 1) != 0) {
        perror("ppw-cc: error");
        goto out;
    }
    /* execvp: a PPW_CC with a slash runs as is, a bare name is looked up in
     * PATH.  No shell is involved, so arguments need no quoting. */
    execvp(cc, av);
    int err = errno;
    fprintf(stderr, "ppw-cc: error: cannot run compiler '%s': %s (set PPW_CC)\n", cc,
            strerror(err));
    status = err == ENOENT || err == ENOTDIR ? 127 : 126;
out:
    free(av);
    free(clang_args);
    free(request.pass_tokens);
    free(pass_options);
    return status;
}
