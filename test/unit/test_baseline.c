/* Unit tests of blame/baseline.c: a baseline written and read back, the
 * optional keys, newer minor versions, and every kind of bad file giving
 * one clear error (never a crash: also run under ASan/UBSan); the default
 * path's rules.
 *
 * usage: test_baseline WORKDIR       the checks (files are written there)
 *        test_baseline --read FILE   read FILE, check every value is positive and
 *                                    finite, print them (for test_cli_calibrate.sh) */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "baseline.h"
#include "harness.h"

static char workdir[900] = ".";

static const char *path_of(const char *name)
{
    static char path[1000];
    snprintf(path, sizeof path, "%s/%s", workdir, name);
    return path;
}

static const char *write_text(const char *name, const char *text)
{
    const char *path = path_of(name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(text, 1, strlen(text), f) != strlen(text))
        FAIL_AT("cannot write %s", path);
    if (f)
        fclose(f);
    return path;
}

static const struct ppw_baseline sample = {.barrier2_ns = 1240.5,
                                           .barrier_all_ns = 3000.25,
                                           .barrier_all_threads = 8,
                                           .lock_ns = 12.887190000000001,
                                           .lock_handoff_ns = 27300,
                                           .cond_roundtrip_ns = 69639.89,
                                           .has_mpi = true,
                                           .mpi_latency_ns = 257.5,
                                           .mpi_ns_per_byte = 0.166021,
                                           .measured_at = 1700000000,
                                           .host = "node-7"};

static const char valid[] = "ppw-baseline 1.0\n"
                            "# a comment\n"
                            "host node-7\n"
                            "barrier2_ns 1240.5\n"
                            "barrier_all_ns 3000\n"
                            "barrier_all_threads 8\n"
                            "lock_ns 12.9\n"
                            "lock_handoff_ns 27300\n"
                            "cond_roundtrip_ns 69639.89\n";

static void test_round_trip(void)
{
    struct ppw_baseline b;
    struct ppw_err err;
    const char *path = path_of("deep/er/baseline"); /* the directories are created */
    CHECK_INT(ppw_baseline_save(path, &sample, &err), 0);
    CHECK_INT(ppw_baseline_load(path, &b, &err), 0);
    CHECK(b.barrier2_ns == sample.barrier2_ns && b.barrier_all_ns == sample.barrier_all_ns);
    CHECK(b.lock_ns == sample.lock_ns && b.lock_handoff_ns == sample.lock_handoff_ns);
    CHECK(b.cond_roundtrip_ns == sample.cond_roundtrip_ns);
    CHECK(b.has_mpi && b.mpi_latency_ns == 257.5 && b.mpi_ns_per_byte == 0.166021);
    CHECK_INT(b.barrier_all_threads, 8);
    CHECK_INT(b.measured_at, 1700000000);
    CHECK_STR(b.host, "node-7");
    struct ppw_baseline no_mpi = sample;
    no_mpi.has_mpi = false;
    CHECK_INT(ppw_baseline_save(path, &no_mpi, &err), 0); /* replaces the file */
    CHECK_INT(ppw_baseline_load(path, &b, &err), 0);
    CHECK(!b.has_mpi && b.mpi_latency_ns == 0);
}

static void test_accepted(void)
{
    struct ppw_baseline b;
    struct ppw_err err;
    CHECK_INT(ppw_baseline_load(write_text("valid", valid), &b, &err), 0);
    CHECK(!b.has_mpi && b.measured_at == 0 && b.lock_ns == 12.9);
    /* a newer minor version with a key this reader does not know; CRLF */
    char text[1024];
    snprintf(text, sizeof text, "ppw-baseline 1.7\r\n%sfuture_key 42 and more\r\n", valid + 17);
    CHECK_INT(ppw_baseline_load(write_text("minor", text), &b, &err), 0);
    CHECK_STR(b.host, "node-7");
    snprintf(text, sizeof text, "%smpi_latency_ns 250\nmpi_ns_per_byte 0\n", valid);
    CHECK_INT(ppw_baseline_load(write_text("mpi", text), &b, &err), 0);
    CHECK(b.has_mpi && b.mpi_latency_ns == 250 && b.mpi_ns_per_byte == 0);
}

/* Each bad file: the code, and a part of the one message. */
static void expect_bad(const char *name, const char *text, int code, const char *message)
{
    struct ppw_baseline b;
    struct ppw_err err;
    ppw_err_clear(&err);
    int rc = ppw_baseline_load(write_text(name, text), &b, &err);
    if (rc != code)
        FAIL_AT("%s: status %d, expected %d (%s)", name, rc, code, err.message);
    CHECK_CONTAINS(err.message, message);
    CHECK(!strchr(err.message, '\n'));
    CHECK(b.barrier2_ns == 0 && !b.host[0]); /* nothing half-read */
}

static void test_rejected(void)
{
    char text[2048];
    size_t n = strlen(valid);
    expect_bad("empty", "", PPW_ECORRUPT, "empty");
    expect_bad("magic", "hello\n", PPW_ECORRUPT, "not a ppw baseline file");
    expect_bad("major", "ppw-baseline 2.0\nhost x\n", PPW_EVERSION, "version 2.0; this ppw-blame");
    memcpy(text, valid, n - 20); /* cut in the middle of a line */
    text[n - 20] = '\0';
    expect_bad("truncated", text, PPW_ECORRUPT, "truncated");
    memcpy(text, valid, n - 27); /* cut after a line: keys missing */
    text[n - 27] = '\0';
    expect_bad("incomplete", text, PPW_ECORRUPT, "no cond_roundtrip_ns");
    snprintf(text, sizeof text, "%slock_ns 3\n", valid);
    expect_bad("twice", text, PPW_ECORRUPT, ":10: lock_ns: given twice");
    snprintf(text, sizeof text, "%smpi_latency_ns 250\n", valid);
    expect_bad("mpi_half", text, PPW_ECORRUPT, "mpi_latency_ns without mpi_ns_per_byte");
    const char *bad_values[][2] = {
        {"lock_ns -1\n", "lock_ns: '-1' is not a time"},
        {"lock_ns 0\n", "lock_ns: '0' is not a time"},
        {"lock_ns nan\n", "'nan'"},
        {"lock_ns inf\n", "'inf'"},
        {"lock_ns 12ns\n", "'12ns'"},
        {"barrier_all_threads 0\n", "barrier_all_threads: '0' is not a positive integer"},
        {"barrier_all_threads 2.5\n", "'2.5'"},
        {"barrier_all_threads 99999999999999999999\n", "not a positive integer"},
        {"lock_ns\n", "expected 'key value'"},
        {"measured_at -5\n", "measured_at"},
        {"mpi_ns_per_byte -0.1\nmpi_latency_ns 1\n", "is not a number >= 0"},
    };
    for (size_t i = 0; i < sizeof bad_values / sizeof bad_values[0]; i++) {
        /* the bad line replaces lock_ns (or comes before the valid one) */
        snprintf(text, sizeof text, "ppw-baseline 1.0\n%s%s", bad_values[i][0], valid + 17);
        char name[32];
        snprintf(name, sizeof name, "value%zu", i);
        expect_bad(name, text, PPW_ECORRUPT, bad_values[i][1]);
    }
    char host[400];
    memset(host, 'h', sizeof host - 1);
    host[sizeof host - 1] = '\0';
    snprintf(text, sizeof text, "ppw-baseline 1.0\nhost %s\n%s", host, valid + 29);
    expect_bad("long_host", text, PPW_ECORRUPT, "1 to 255 printable characters");
    expect_bad("ctl_host", "ppw-baseline 1.0\nhost a\033b\n", PPW_ECORRUPT, "printable");
    char *big = malloc(70000);
    if (big) { /* larger than any baseline file */
        memset(big, '#', 69998);
        memcpy(big, "ppw-baseline 1.0\n", 17);
        big[69998] = '\n';
        big[69999] = '\0';
        expect_bad("big", big, PPW_ECORRUPT, "larger than");
        free(big);
    }
    struct ppw_baseline b;
    struct ppw_err err;
    static const char binary[] = "ppw-baseline 1.0\nhost a\0b\n";
    FILE *f = fopen(path_of("binary"), "wb");
    if (f) {
        fwrite(binary, 1, sizeof binary - 1, f);
        fclose(f);
    }
    CHECK_INT(ppw_baseline_load(path_of("binary"), &b, &err), PPW_ECORRUPT);
    CHECK_CONTAINS(err.message, "not a ppw baseline file (binary data)");
    CHECK_INT(ppw_baseline_load(path_of("no-such-file"), &b, &err), PPW_EIO);
    CHECK_CONTAINS(err.message, "No such file");
    CHECK_INT(ppw_baseline_load(workdir, &b, &err), PPW_EIO); /* a directory */
}

static void test_save_errors(void)
{
    struct ppw_err err;
    write_text("plainfile", "x\n");
    char path[1100];
    snprintf(path, sizeof path, "%s/plainfile/sub/baseline", workdir);
    CHECK_INT(ppw_baseline_prepare(path, &err), PPW_EIO);
    CHECK_CONTAINS(err.message, "cannot create the directory");
    CHECK_INT(ppw_baseline_save(path, &sample, &err), PPW_EIO);
    CHECK_INT(ppw_baseline_prepare(workdir, &err), PPW_EIO);
    CHECK_CONTAINS(err.message, "is a directory");
    CHECK_INT(ppw_baseline_prepare(path_of("fresh/baseline"), &err), 0);
    struct stat st;
    CHECK(stat(path_of("fresh"), &st) == 0 && stat(path_of("fresh/baseline"), &st) != 0);
    struct ppw_baseline bad = sample;
    bad.lock_ns = NAN;
    CHECK_INT(ppw_baseline_save(path_of("bad"), &bad, &err), PPW_EUSAGE);
    bad = sample;
    bad.host[0] = '\0';
    CHECK_INT(ppw_baseline_save(path_of("bad"), &bad, &err), PPW_EUSAGE);
}

static void test_default_path(void)
{
    char buf[600];
    setenv("PPW_BASELINE", "/some/where", 1);
    CHECK_STR(ppw_baseline_default_path(buf, sizeof buf), "/some/where");
    CHECK(ppw_baseline_default_path(buf, 5) == NULL); /* does not fit */
    unsetenv("PPW_BASELINE");
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    char want[600];
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    snprintf(want, sizeof want, "/xdg/ppw/baseline-%s", host);
    CHECK_STR(ppw_baseline_default_path(buf, sizeof buf), want);
    setenv("XDG_CACHE_HOME", "relative", 1); /* invalid by the XDG spec: ignored */
    setenv("HOME", "/home/u", 1);
    snprintf(want, sizeof want, "/home/u/.cache/ppw/baseline-%s", host);
    CHECK_STR(ppw_baseline_default_path(buf, sizeof buf), want);
    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    CHECK(ppw_baseline_default_path(buf, sizeof buf) == NULL);
}

/* --read FILE: the calibrate test's check of what calibrate wrote. */
static int read_back(const char *path)
{
    struct ppw_baseline b;
    struct ppw_err err;
    if (ppw_baseline_load(path, &b, &err) != 0) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    const double v[] = {b.barrier2_ns, b.barrier_all_ns, b.lock_ns, b.lock_handoff_ns,
                        b.cond_roundtrip_ns};
    bool sane = b.barrier_all_threads >= 2 && b.host[0] && b.measured_at > 0;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        sane &= isfinite(v[i]) && v[i] > 0;
    if (b.has_mpi)
        sane &= isfinite(b.mpi_latency_ns) && b.mpi_latency_ns > 0 && isfinite(b.mpi_ns_per_byte) &&
                b.mpi_ns_per_byte >= 0;
    printf("barrier2_ns %g\nbarrier_all_ns %g (%u threads)\nlock_ns %g\nlock_handoff_ns %g\n"
           "cond_roundtrip_ns %g\nmpi %s\n",
           b.barrier2_ns, b.barrier_all_ns, b.barrier_all_threads, b.lock_ns, b.lock_handoff_ns,
           b.cond_roundtrip_ns, b.has_mpi ? "yes" : "no");
    return sane ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--read") == 0)
        return read_back(argv[2]);
    if (argc > 1)
        snprintf(workdir, sizeof workdir, "%s", argv[1]);
    mkdir(workdir, 0777);
    RUN(test_round_trip);
    RUN(test_accepted);
    RUN(test_rejected);
    RUN(test_save_errors);
    RUN(test_default_path);
    return harness_exit();
}
