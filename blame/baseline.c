/* Baseline files (baseline.h; docs/FORMATS.md, "Baseline file"). */
#define _POSIX_C_SOURCE 200809L

#include "baseline.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A baseline file is a dozen short lines: anything much larger is not one. */
enum { MAX_FILE = 64 * 1024, MAX_LINE = 1024 };

/* The keys; each is given at most once.  Those not marked optional are
 * required.  A newer minor version may add keys, which readers skip. */
enum key_type { KEY_TIME, KEY_PER_BYTE, KEY_THREADS, KEY_HOST, KEY_UNIX_TIME };

struct key {
    const char *name;
    enum key_type type;
    bool optional;
    size_t offset; /* in struct ppw_baseline */
};

#define FIELD(name) offsetof(struct ppw_baseline, name)
static const struct key keys[] = {
    {"host", KEY_HOST, false, FIELD(host)},
    {"measured_at", KEY_UNIX_TIME, true, FIELD(measured_at)},
    {"barrier2_ns", KEY_TIME, false, FIELD(barrier2_ns)},
    {"barrier_all_ns", KEY_TIME, false, FIELD(barrier_all_ns)},
    {"barrier_all_threads", KEY_THREADS, false, FIELD(barrier_all_threads)},
    {"lock_ns", KEY_TIME, false, FIELD(lock_ns)},
    {"lock_handoff_ns", KEY_TIME, false, FIELD(lock_handoff_ns)},
    {"cond_roundtrip_ns", KEY_TIME, false, FIELD(cond_roundtrip_ns)},
    {"mpi_latency_ns", KEY_TIME, true, FIELD(mpi_latency_ns)},
    {"mpi_ns_per_byte", KEY_PER_BYTE, true, FIELD(mpi_ns_per_byte)},
    {"mpi_fence_ns", KEY_TIME, true, FIELD(mpi_fence_ns)}, /* 1.1 */
    {"mpi_rma_ns", KEY_TIME, true, FIELD(mpi_rma_ns)},     /* 1.1 */
};
#define NKEYS (sizeof keys / sizeof keys[0])
enum { KEY_MPI_LATENCY = 8, KEY_MPI_PER_BYTE = 9, KEY_MPI_FENCE = 10, KEY_MPI_RMA = 11 };

/* ---- reading ---- */

struct reader {
    const char *path;
    size_t lineno;
    struct ppw_err *err;
};

static int bad(const struct reader *r, const char *fmt, const char *a, const char *b)
{
    char what[400];
    snprintf(what, sizeof what, fmt, a, b);
    return ppw_err_set(r->err, PPW_ECORRUPT, "%s:%zu: %s", r->path, r->lineno, what);
}

static int parse_header(const struct reader *r, const char *line)
{
    unsigned major, minor;
    char tail;
    if (sscanf(line, "ppw-baseline %u.%u%c", &major, &minor, &tail) != 2)
        return ppw_err_set(r->err, PPW_ECORRUPT,
                           "%s: not a ppw baseline file (the first line is not "
                           "'ppw-baseline %d.%d'; run ppw-blame calibrate)",
                           r->path, PPW_BASELINE_MAJOR, PPW_BASELINE_MINOR);
    if (major != PPW_BASELINE_MAJOR)
        return ppw_err_set(r->err, PPW_EVERSION,
                           "%s: baseline file format version %u.%u; this ppw-blame reads "
                           "version %d.x (run ppw-blame calibrate again)",
                           r->path, major, minor, PPW_BASELINE_MAJOR);
    return 0;
}

static int parse_value(const struct reader *r, const struct key *k, const char *value,
                       struct ppw_baseline *b)
{
    char *end;
    void *field = (char *)b + k->offset;
    errno = 0;
    if (k->type == KEY_HOST) {
        bool control = false;
        for (const char *p = value; *p; p++)
            control |= (unsigned char)*p < 0x20 || *p == 0x7f;
        if (!value[0] || strlen(value) >= sizeof b->host || control)
            return bad(r, "%s: the host name must have 1 to 255 printable characters", k->name, "");
        strcpy(field, value);
        return 0;
    }
    if (k->type == KEY_THREADS || k->type == KEY_UNIX_TIME) {
        long long n = strtoll(value, &end, 10);
        long long max = k->type == KEY_THREADS ? 1 << 20 : INT64_MAX;
        if (value[0] < '0' || value[0] > '9' || *end || errno || n < 1 || n > max)
            return bad(r, "%s: '%s' is not a positive integer in range", k->name, value);
        if (k->type == KEY_THREADS)
            *(unsigned *)field = (unsigned)n;
        else
            *(int64_t *)field = n;
        return 0;
    }
    double x = strtod(value, &end);
    if (end == value || *end || errno || !isfinite(x) || x < 0 || (k->type == KEY_TIME && x == 0))
        return bad(r,
                   k->type == KEY_TIME ? "%s: '%s' is not a time in ns (a number > 0)"
                                       : "%s: '%s' is not a number >= 0",
                   k->name, value);
    *(double *)field = x;
    return 0;
}

/* One "key value" line; unknown keys are skipped (a newer minor version). */
static int parse_line(const struct reader *r, char *line, struct ppw_baseline *b, bool *seen)
{
    if (!line[0] || line[0] == '#')
        return 0;
    char *space = strchr(line, ' ');
    if (!space || space == line || !space[1])
        return bad(r, "expected 'key value', not '%s'", line, "");
    *space = '\0';
    for (size_t i = 0; i < NKEYS; i++) {
        if (strcmp(line, keys[i].name) != 0)
            continue;
        if (seen[i])
            return bad(r, "%s: given twice", line, "");
        seen[i] = true;
        return parse_value(r, &keys[i], space + 1, b);
    }
    return 0;
}

static int check_complete(const struct reader *r, const bool *seen, struct ppw_baseline *b)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (!seen[i] && !keys[i].optional)
            return ppw_err_set(r->err, PPW_ECORRUPT, "%s: no %s (the file is incomplete)", r->path,
                               keys[i].name);
    if (seen[KEY_MPI_LATENCY] != seen[KEY_MPI_PER_BYTE])
        return ppw_err_set(r->err, PPW_ECORRUPT, "%s: %s without %s", r->path,
                           keys[seen[KEY_MPI_LATENCY] ? KEY_MPI_LATENCY : KEY_MPI_PER_BYTE].name,
                           keys[seen[KEY_MPI_LATENCY] ? KEY_MPI_PER_BYTE : KEY_MPI_LATENCY].name);
    if (!seen[KEY_MPI_LATENCY] && (seen[KEY_MPI_FENCE] || seen[KEY_MPI_RMA]))
        return ppw_err_set(r->err, PPW_ECORRUPT, "%s: %s without %s", r->path,
                           keys[seen[KEY_MPI_FENCE] ? KEY_MPI_FENCE : KEY_MPI_RMA].name,
                           keys[KEY_MPI_LATENCY].name);
    b->has_mpi = seen[KEY_MPI_LATENCY];
    return 0;
}

/* Splits text (NUL-terminated, size bytes) into lines and parses them. */
static int parse_text(struct reader *r, char *text, size_t size, struct ppw_baseline *b)
{
    bool seen[NKEYS] = {false};
    if (memchr(text, '\0', size))
        return ppw_err_set(r->err, PPW_ECORRUPT, "%s: not a ppw baseline file (binary data)",
                           r->path);
    if (size && text[size - 1] != '\n')
        return ppw_err_set(r->err, PPW_ECORRUPT, "%s: truncated: the last line has no newline",
                           r->path);
    int rc = 0;
    char *line = text;
    for (r->lineno = 1; !rc && line < text + size; r->lineno++) {
        char *nl = strchr(line, '\n'), *end = nl; /* there is one: the text ends with it */
        while (end > line && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
            end--; /* trailing blanks, and CRLF files, read the same */
        *end = '\0';
        if ((size_t)(end - line) > MAX_LINE)
            rc = bad(r, "a line longer than %s characters%s", "1024", "");
        else if (r->lineno == 1)
            rc = parse_header(r, line);
        else
            rc = parse_line(r, line, b, seen);
        line = nl + 1;
    }
    if (!rc && r->lineno == 1)
        rc = ppw_err_set(r->err, PPW_ECORRUPT, "%s: empty: not a ppw baseline file", r->path);
    return rc ? rc : check_complete(r, seen, b);
}

int ppw_baseline_load(const char *path, struct ppw_baseline *out, struct ppw_err *err)
{
    memset(out, 0, sizeof *out);
    struct reader r = {path, 0, err};
    FILE *f = fopen(path, "rb");
    if (!f)
        return ppw_err_set(err, PPW_EIO, "%s: %s", path, strerror(errno));
    char *text = malloc(MAX_FILE + 2);
    if (!text) {
        fclose(f);
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    }
    size_t size = fread(text, 1, MAX_FILE + 1, f);
    int rc = 0;
    if (ferror(f))
        rc = ppw_err_set(err, PPW_EIO, "%s: %s", path, strerror(errno ? errno : EIO));
    else if (size > MAX_FILE)
        rc = ppw_err_set(err, PPW_ECORRUPT, "%s: not a ppw baseline file (larger than %d bytes)",
                         path, MAX_FILE);
    fclose(f);
    if (!rc) {
        text[size] = '\0';
        rc = parse_text(&r, text, size, out);
    }
    free(text);
    if (rc)
        memset(out, 0, sizeof *out);
    return rc;
}

/* ---- writing ---- */

static bool valid_time(double x)
{
    return isfinite(x) && x > 0;
}

static int check_values(const struct ppw_baseline *b, struct ppw_err *err)
{
    const double times[] = {b->barrier2_ns, b->barrier_all_ns, b->lock_ns, b->lock_handoff_ns,
                            b->cond_roundtrip_ns};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
        if (!valid_time(times[i]))
            return ppw_err_set(err, PPW_EUSAGE, "baseline: a measured time is not > 0: %g",
                               times[i]);
    if (b->has_mpi &&
        (!valid_time(b->mpi_latency_ns) || !isfinite(b->mpi_ns_per_byte) || b->mpi_ns_per_byte < 0))
        return ppw_err_set(err, PPW_EUSAGE, "baseline: bad MPI costs: %g ns, %g ns per byte",
                           b->mpi_latency_ns, b->mpi_ns_per_byte);
    if (!b->barrier_all_threads || !b->host[0] || memchr(b->host, '\n', strlen(b->host)) ||
        strlen(b->host) >= sizeof b->host)
        return ppw_err_set(err, PPW_EUSAGE, "baseline: no thread count or host name");
    return 0;
}

/* The shortest of %.15g and %.17g that reads back exactly. */
static void put_double(FILE *f, const char *key, double x)
{
    char buf[40];
    snprintf(buf, sizeof buf, "%.15g", x);
    if (strtod(buf, NULL) != x)
        snprintf(buf, sizeof buf, "%.17g", x);
    fprintf(f, "%s %s\n", key, buf);
}

static void put_baseline(FILE *f, const struct ppw_baseline *b)
{
    fprintf(f, "ppw-baseline %d.%d\n", PPW_BASELINE_MAJOR, PPW_BASELINE_MINOR);
    fputs("# baseline costs of this machine, by ppw-blame calibrate (docs/FORMATS.md)\n", f);
    fprintf(f, "host %s\n", b->host);
    if (b->measured_at > 0)
        fprintf(f, "measured_at %lld\n", (long long)b->measured_at);
    put_double(f, "barrier2_ns", b->barrier2_ns);
    put_double(f, "barrier_all_ns", b->barrier_all_ns);
    fprintf(f, "barrier_all_threads %u\n", b->barrier_all_threads);
    put_double(f, "lock_ns", b->lock_ns);
    put_double(f, "lock_handoff_ns", b->lock_handoff_ns);
    put_double(f, "cond_roundtrip_ns", b->cond_roundtrip_ns);
    if (b->has_mpi) {
        put_double(f, "mpi_latency_ns", b->mpi_latency_ns);
        put_double(f, "mpi_ns_per_byte", b->mpi_ns_per_byte);
        if (b->mpi_fence_ns > 0)
            put_double(f, "mpi_fence_ns", b->mpi_fence_ns);
        if (b->mpi_rma_ns > 0)
            put_double(f, "mpi_rma_ns", b->mpi_rma_ns);
    }
}

/* mkdir -p of path's directory. */
static int make_parents(const char *path, struct ppw_err *err)
{
    char *dir = strdup(path);
    if (!dir)
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    int rc = 0;
    for (char *p = dir + 1; !rc && (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        if (mkdir(dir, 0777) != 0 && errno != EEXIST)
            rc = ppw_err_set(err, PPW_EIO, "%s: cannot create the directory %s: %s", path, dir,
                             strerror(errno));
        *p = '/';
    }
    free(dir);
    return rc;
}

/* The temporary file path is written through: "<path>.tmp.<pid>", created
 * (with the missing directories).  Returns it open, or NULL with err set. */
static FILE *open_temporary(const char *path, char **tmp, struct ppw_err *err)
{
    size_t n = strlen(path) + 32;
    *tmp = NULL;
    if (make_parents(path, err))
        return NULL;
    if (!(*tmp = malloc(n))) {
        ppw_err_set(err, PPW_ENOMEM, "out of memory");
        return NULL;
    }
    snprintf(*tmp, n, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(*tmp, "w");
    if (!f) {
        ppw_err_set(err, PPW_EIO, "%s: cannot write: %s", path, strerror(errno));
        free(*tmp);
        *tmp = NULL;
    }
    return f;
}

int ppw_baseline_prepare(const char *path, struct ppw_err *err)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return ppw_err_set(err, PPW_EIO, "%s: is a directory (give the file's path)", path);
    char *tmp;
    FILE *f = open_temporary(path, &tmp, err);
    if (!f)
        return err ? err->code : PPW_EIO;
    fclose(f);
    unlink(tmp);
    free(tmp);
    return 0;
}

int ppw_baseline_save(const char *path, const struct ppw_baseline *b, struct ppw_err *err)
{
    char *tmp;
    int rc = check_values(b, err);
    if (rc)
        return rc;
    FILE *f = open_temporary(path, &tmp, err);
    if (!f)
        return err ? err->code : PPW_EIO;
    put_baseline(f, b);
    bool failed = ferror(f) != 0;
    failed |= fclose(f) != 0;
    if (failed || rename(tmp, path) != 0) {
        rc = ppw_err_set(err, PPW_EIO, "%s: cannot write: %s", path, strerror(errno ? errno : EIO));
        unlink(tmp);
    }
    free(tmp);
    return rc;
}

/* ---- where ---- */

const char *ppw_baseline_default_path(char *buf, size_t size)
{
    const char *env = getenv("PPW_BASELINE");
    if (env && env[0]) {
        int n = snprintf(buf, size, "%s", env);
        return n >= 0 && (size_t)n < size ? buf : NULL;
    }
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0 || !host[0])
        strcpy(host, "unknown");
    for (char *p = host; *p; p++)
        if (*p == '/')
            *p = '_'; /* a file name, whatever the host name holds */
    const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (cache && cache[0] == '/') /* the XDG spec: a relative path is invalid, ignore it */
        n = snprintf(buf, size, "%s/ppw/baseline-%s", cache, host);
    else if (home && home[0])
        n = snprintf(buf, size, "%s/.cache/ppw/baseline-%s", home, host);
    else
        return NULL;
    return n >= 0 && (size_t)n < size ? buf : NULL;
}
