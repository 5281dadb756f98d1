/* ppw-blame calibrate: measures what a barrier, a lock, a condition
 * variable and an MPI message cost on this machine when nobody waits
 * (microbench.h), prints the costs and writes them to the baseline file
 * that analyze's baseline filter reads (baseline.h; docs/FORMATS.md,
 * "Baseline file").  Output shapes: docs/ppw-blame.md. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "baseline.h"
#include "cli.h"
#include "json.h"
#include "microbench.h"

static const char usage[] =
    "usage: ppw-blame calibrate [-o FILE] [--format text|json] [--no-mpi]\n\n"
    "Measures the baseline costs of synchronization on this machine (barrier of 2 and\n"
    "of all CPUs' threads, mutex lock+unlock, mutex hand-off, condition variable round\n"
    "trip, and with MPI a small message's latency and the cost per byte), prints them\n"
    "and writes them to FILE (default: $PPW_BASELINE, else\n"
    "$XDG_CACHE_HOME/ppw/baseline-<host>, else ~/.cache/ppw/baseline-<host>).\n\n"
    "  -o FILE           where to write the baseline\n"
    "  --format FORMAT   text (default) or json\n"
    "  --no-mpi          do not measure MPI (else: when the MPI helper and mpirun exist)\n"
    "  -h, --help        show this help\n";

/* mpirun's start-up alone takes a second or two; a hung one is cut here
 * (each of the runs). */
enum { MPI_TIMEOUT_S = 30 };

/* ppw-calibrate-mpi: $PPW_CALIBRATE_MPI, else ../lib/ppw/ beside this
 * program (the build tree and the installed layout alike). */
static const char *mpi_helper(char *buf, size_t size)
{
    const char *env = getenv("PPW_CALIBRATE_MPI");
    if (env && env[0])
        return env;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    int w = snprintf(buf, size, "%s/../lib/ppw/ppw-calibrate-mpi", exe);
    return w > 0 && (size_t)w < size ? buf : NULL;
}

static int measure_threads(struct ppw_baseline *b, struct ppw_err *err)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    b->barrier_all_threads = cpus >= 2 ? (unsigned)cpus : 2;
    int rc = microbench_barrier(2, &b->barrier2_ns, err);
    if (!rc)
        rc = microbench_barrier(b->barrier_all_threads, &b->barrier_all_ns, err);
    if (!rc)
        rc = microbench_lock(&b->lock_ns, err);
    if (!rc)
        rc = microbench_lock_handoff(&b->lock_handoff_ns, err);
    if (!rc)
        rc = microbench_cond_roundtrip(&b->cond_roundtrip_ns, err);
    return rc;
}

/* ---- output ---- */

static void print_text(const struct ppw_baseline *b, const char *path, const char *mpi_skipped)
{
    printf("baseline of ");
    cli_text(stdout, b->host);
    printf(" written to ");
    cli_text(stdout, path);
    char all[40];
    snprintf(all, sizeof all, "barrier, %u threads", b->barrier_all_threads);
    printf("\n  barrier, 2 threads          %12.3f us per episode\n", b->barrier2_ns / 1000);
    printf("  %-27s %12.3f us per episode\n", all, b->barrier_all_ns / 1000);
    printf("  mutex lock + unlock         %12.3f us\n", b->lock_ns / 1000);
    printf("  mutex hand-off to a waiter  %12.3f us\n", b->lock_handoff_ns / 1000);
    printf("  condition round trip        %12.3f us\n", b->cond_roundtrip_ns / 1000);
    if (b->has_mpi) {
        printf("  MPI latency, 8 bytes        %12.3f us\n", b->mpi_latency_ns / 1000);
        printf("  MPI per byte                %12.6f ns (%.0f MB/s)\n", b->mpi_ns_per_byte,
               b->mpi_ns_per_byte > 0 ? 1000 / b->mpi_ns_per_byte : 0);
        if (b->mpi_fence_ns > 0)
            printf("  MPI_Win_fence, 2 ranks      %12.3f us\n", b->mpi_fence_ns / 1000);
        if (b->mpi_rma_ns > 0)
            printf("  MPI_Get + MPI_Win_flush     %12.3f us\n", b->mpi_rma_ns / 1000);
    } else {
        printf("  MPI: not measured: ");
        cli_text(stdout, mpi_skipped);
        putchar('\n');
    }
}

static void json_key(const char *key, double value)
{
    printf(",\"%s\":", key);
    json_double(stdout, value);
}

static void print_json(const struct ppw_baseline *b, const char *path, const char *mpi_skipped)
{
    fputs("{\"file\":", stdout);
    json_string(stdout, path);
    printf(",\"format\":\"%d.%d\",\"host\":", PPW_BASELINE_MAJOR, PPW_BASELINE_MINOR);
    json_string(stdout, b->host);
    printf(",\"measured_at\":%lld", (long long)b->measured_at);
    json_key("barrier2_ns", b->barrier2_ns);
    json_key("barrier_all_ns", b->barrier_all_ns);
    printf(",\"barrier_all_threads\":%u", b->barrier_all_threads);
    json_key("lock_ns", b->lock_ns);
    json_key("lock_handoff_ns", b->lock_handoff_ns);
    json_key("cond_roundtrip_ns", b->cond_roundtrip_ns);
    if (b->has_mpi) {
        json_key("mpi_latency_ns", b->mpi_latency_ns);
        json_key("mpi_ns_per_byte", b->mpi_ns_per_byte);
        if (b->mpi_fence_ns > 0)
            json_key("mpi_fence_ns", b->mpi_fence_ns);
        else
            fputs(",\"mpi_fence_ns\":null", stdout);
        if (b->mpi_rma_ns > 0)
            json_key("mpi_rma_ns", b->mpi_rma_ns);
        else
            fputs(",\"mpi_rma_ns\":null", stdout);
        fputs(",\"mpi_skipped\":null}\n", stdout);
    } else {
        fputs(",\"mpi_latency_ns\":null,\"mpi_ns_per_byte\":null,\"mpi_fence_ns\":null,"
              "\"mpi_rma_ns\":null,\"mpi_skipped\":",
              stdout);
        json_string(stdout, mpi_skipped);
        fputs("}\n", stdout);
    }
}

/* ---- command ---- */

int cmd_calibrate(int argc, char **argv)
{
    const char *out = NULL, *format = NULL, *positional = NULL;
    bool help = false, no_mpi = false, json = false;
    const struct cli_option options[] = {{"-o", &out}, {"--output", &out}, {"--format", &format}};
    const struct cli_flag flags[] = {{"--no-mpi", &no_mpi}};
    char path_buf[PATH_MAX], helper_buf[PATH_MAX];
    struct ppw_err err;
    ppw_err_clear(&err);
    if (cli_parse_flags(argc, argv, options, 3, flags, 1, &positional, &help, &err) ||
        cli_parse_format(format, &json, &err))
        return cli_fail(&err);
    if (help) {
        fputs(usage, stdout);
        return cli_finish_output();
    }
    if (positional)
        return cli_usage_error("calibrate: unexpected argument '%s' (the file is -o FILE)",
                               positional);
    const char *path = out ? out : ppw_baseline_default_path(path_buf, sizeof path_buf);
    if (!path) {
        ppw_err_set(&err, PPW_ENOTFOUND,
                    "calibrate: no place for the baseline file: set HOME or PPW_BASELINE, "
                    "or give -o FILE");
        return cli_fail(&err);
    }
    struct ppw_baseline b = {0};
    if (ppw_baseline_prepare(path, &err) || measure_threads(&b, &err))
        return cli_fail(&err);
    struct ppw_err mpi_err;
    ppw_err_clear(&mpi_err);
    if (no_mpi)
        ppw_err_set(&mpi_err, PPW_EUSAGE, "--no-mpi");
    else {
        struct microbench_mpi_costs mpi;
        b.has_mpi = microbench_mpi(mpi_helper(helper_buf, sizeof helper_buf), MPI_TIMEOUT_S, &mpi,
                                   &mpi_err) == 0;
        if (b.has_mpi) {
            b.mpi_latency_ns = mpi.latency_ns;
            b.mpi_ns_per_byte = mpi.ns_per_byte;
            b.mpi_fence_ns = mpi.fence_ns;
            b.mpi_rma_ns = mpi.rma_ns;
        }
    }
    if (gethostname(b.host, sizeof b.host - 1) != 0 || !b.host[0])
        strcpy(b.host, "unknown");
    b.measured_at = (int64_t)time(NULL);
    if (ppw_baseline_save(path, &b, &err))
        return cli_fail(&err);
    if (json)
        print_json(&b, path, mpi_err.message);
    else
        print_text(&b, path, mpi_err.message);
    return cli_finish_output();
}
