/* ppw-cc: compiler wrapper in the tradition of scorep and tau_cc.
 *
 *   ppw-cc [clang args]  ==  clang -g -fpass-plugin=<lib>/ppw.so [clang args]
 *                            [-L<lib> -Wl,-rpath,<lib> -lppw -Wl,--build-id]
 *
 * The link flags are added only when the invocation links.  <lib> is
 * <dir of this executable>/../lib, which holds in the build tree (build/bin,
 * build/lib) and under an install prefix (prefix/bin, prefix/lib). */
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
    /* Reserved: pass options (GASP's --inst, --inst-functions,
     * --inst-only=FILE) get values here and rows in own_opts[]. */
};

static const struct {
    const char *name;
    enum ppw_cc_opt opt;
} own_opts[] = {
    {"--ppw-help", PPW_CC_OPT_HELP},
    {"--ppw-show", PPW_CC_OPT_SHOW},
    /* Reserved for pass options, not implemented yet.  Each will become
     * `-mllvm -ppw-<name>` arguments where main() builds the command. */
};

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
    printf("usage: ppw-cc [--ppw-show] [clang arguments]\n"
           "\n"
           "Compiles with clang, the ppw pass plugin and debug info (-g); when the\n"
           "command links, also links the ppw runtime (libppw) with an rpath and a\n"
           "build-id.  All other arguments go to clang unchanged, in order.\n"
           "\n"
           "  --ppw-help   print this help and exit\n"
           "  --ppw-show   print the command that would run, without running it\n"
           "\n"
           "environment:\n"
           "  PPW_CC       compiler to run (default: %s)\n"
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

/* Print a command so that it can be pasted into a POSIX shell. */
static void print_command(char **av)
{
    for (int i = 0; av[i]; i++) {
        const char *a = av[i];
        int plain = a[0] != '\0' &&
                    strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                              "0123456789-_./=,:+@%") == strlen(a);
        fputs(i ? " " : "", stdout);
        if (plain) {
            fputs(a, stdout);
            continue;
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
    putchar('\n');
}

int main(int argc, char **argv)
{
    int show = 0;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--ppw-", 6) != 0)
            continue;
        size_t k = 0;
        while (k < COUNT(own_opts) && strcmp(argv[i], own_opts[k].name) != 0)
            k++;
        if (k == COUNT(own_opts)) {
            fprintf(stderr, "ppw-cc: error: unknown option '%s' (see --ppw-help)\n", argv[i]);
            return 1;
        }
        switch (own_opts[k].opt) {
        case PPW_CC_OPT_HELP:
            usage();
            return 0;
        case PPW_CC_OPT_SHOW:
            show = 1;
            break;
        }
    }

    char lib[PATH_MAX], plugin[PATH_MAX + 16];
    if (find_libdir(lib) != 0) {
        fprintf(stderr, "ppw-cc: error: /proc/self/exe: %s\n", strerror(errno));
        return 1;
    }
    snprintf(plugin, sizeof(plugin), "%s/ppw.so", lib);
    if (access(plugin, R_OK) != 0) {
        fprintf(stderr, "ppw-cc: error: pass plugin %s: %s (build or install ppw first)\n",
                plugin, strerror(errno));
        return 1;
    }

    const char *cc = getenv("PPW_CC");
    if (!cc || !*cc)
        cc = PPW_CLANG_PATH;

    /* compiler, -g, plugin flag, user args, 4 link args, NULL */
    char **av = calloc((size_t)argc + 8, sizeof(*av));
    char plugin_flag[PATH_MAX + 32], libdir_flag[PATH_MAX + 8], rpath_flag[PATH_MAX + 16];
    if (!av) {
        perror("ppw-cc: error");
        return 1;
    }
    int n = 0;
    av[n++] = (char *)cc;
    av[n++] = "-g";
    snprintf(plugin_flag, sizeof(plugin_flag), "-fpass-plugin=%s", plugin);
    av[n++] = plugin_flag;
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--ppw-", 6) != 0)
            av[n++] = argv[i];
    if (links(argc, argv)) {
        snprintf(libdir_flag, sizeof(libdir_flag), "-L%s", lib);
        snprintf(rpath_flag, sizeof(rpath_flag), "-Wl,-rpath,%s", lib);
        av[n++] = libdir_flag;
        av[n++] = rpath_flag;
        av[n++] = "-lppw";
        av[n++] = "-Wl,--build-id";
    }
    av[n] = NULL;

    if (show) {
        print_command(av);
        free(av);
        return 0;
    }
    /* execvp: a PPW_CC with a slash runs as is, a bare name is looked up in
     * PATH.  No shell is involved, so arguments need no quoting. */
    execvp(cc, av);
    int err = errno;
    fprintf(stderr, "ppw-cc: error: cannot run compiler '%s': %s (set PPW_CC)\n", cc,
            strerror(err));
    free(av);
    return err == ENOENT || err == ENOTDIR ? 127 : 126;
}
