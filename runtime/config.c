/* PPW_* environment variables, parsed once (docs/config.md). */
#include "config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "ppw/run_format.h"

struct ppw_config ppw_config;

static void bad(const char *name, const char *value, const char *expected)
{
    ppw_log("%s=%s: expected %s; using the default", name, value, expected);
}

/* Unsigned decimal with an optional suffix from `units` (name, factor).
 * 0 on success. */
struct unit {
    const char *suffix;
    uint64_t factor;
};

static int parse_scaled(const char *s, const struct unit *units, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    uint64_t factor = 1;
    if (*end) {
        const struct unit *u = units;
        for (; u && u->suffix; u++)
            if (strcmp(end, u->suffix) == 0)
                break;
        if (!u || !u->suffix)
            return -1;
        factor = u->factor;
    }
    if (v > UINT64_MAX / factor)
        return -1;
    *out = (uint64_t)v * factor;
    return 0;
}

static void get_number(const char *name, uint64_t lo, uint64_t hi, const struct unit *units,
                       const char *expected, uint64_t *out)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return;
    uint64_t x;
    if (parse_scaled(v, units, &x) != 0 || x < lo || x > hi) {
        bad(name, v, expected);
        return;
    }
    *out = x;
}

static int get_flag(const char *name, int dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    if (strcmp(v, "1") == 0 || strcmp(v, "yes") == 0 || strcmp(v, "on") == 0)
        return 1;
    if (strcmp(v, "0") == 0 || strcmp(v, "no") == 0 || strcmp(v, "off") == 0)
        return 0;
    bad(name, v, "0 or 1");
    return dflt;
}

static void get_mode(void)
{
    const char *v = getenv("PPW_MODE");
    ppw_config.modes = PPW_MODE_PROFILE;
    if (!v || !*v)
        return;
    uint32_t modes = 0;
    char buf[64];
    if (strlen(v) >= sizeof(buf)) {
        bad("PPW_MODE", v, "profile, trace, profile,trace or none");
        return;
    }
    strcpy(buf, v);
    for (char *save = NULL, *tok = strtok_r(buf, ",+", &save); tok;
         tok = strtok_r(NULL, ",+", &save)) {
        if (strcmp(tok, "profile") == 0)
            modes |= PPW_MODE_PROFILE;
        else if (strcmp(tok, "trace") == 0)
            modes |= PPW_MODE_TRACE;
        else if (strcmp(tok, "none") == 0)
            ;
        else {
            bad("PPW_MODE", v, "profile, trace, profile,trace or none");
            return;
        }
    }
    ppw_config.modes = modes;
}

static void get_sampler(void)
{
    static const struct {
        const char *name;
        enum ppw_sampler_choice choice;
    } names[] = {{"auto", PPW_SAMPLER_AUTO}, {"papi", PPW_SAMPLER_PAPI},
                 {"perf", PPW_SAMPLER_PERF}, {"ring", PPW_SAMPLER_RING},
                 {"timer", PPW_SAMPLER_TIMER}, {"off", PPW_SAMPLER_OFF}};
    const char *v = getenv("PPW_SAMPLER");
    ppw_config.sampler = PPW_SAMPLER_AUTO;
    if (v && *v) {
        size_t i = 0;
        for (; i < sizeof(names) / sizeof(names[0]); i++)
            if (strcmp(v, names[i].name) == 0)
                break;
        if (i == sizeof(names) / sizeof(names[0]))
            bad("PPW_SAMPLER", v, "auto, papi, perf, ring, timer or off");
        else
            ppw_config.sampler = names[i].choice;
    }
    if (!get_flag("PPW_SAMPLE", 1))
        ppw_config.sampler = PPW_SAMPLER_OFF;
    if (ppw_config.sampler != PPW_SAMPLER_OFF)
        ppw_config.modes |= PPW_MODE_SAMPLE;
}

static void get_signal(void)
{
    const char *v = getenv("PPW_SIGNAL");
    ppw_config.signal = SIGRTMIN + 4;
    if (!v || !*v)
        return;
    const char *expected = "a signal number, SIGPROF, or RTMIN+n";
    int sig = -1;
    if (strcmp(v, "SIGPROF") == 0 || strcmp(v, "PROF") == 0) {
        sig = SIGPROF;
    } else if (strncmp(v, "RTMIN+", 6) == 0 || strncmp(v, "SIGRTMIN+", 9) == 0) {
        uint64_t n;
        if (parse_scaled(strchr(v, '+') + 1, NULL, &n) == 0 && n <= (uint64_t)(SIGRTMAX - SIGRTMIN))
            sig = SIGRTMIN + (int)n;
    } else {
        uint64_t n;
        if (parse_scaled(v, NULL, &n) == 0 && n >= 1 && n <= (uint64_t)SIGRTMAX)
            sig = (int)n;
    }
    /* Signals whose default meaning a program relies on are refused. */
    if (sig == SIGKILL || sig == SIGSTOP || sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
        sig == SIGFPE || sig == SIGABRT || sig == SIGCHLD || sig == SIGINT || sig == SIGTERM ||
        sig == SIGPIPE)
        sig = -1;
    if (sig < 0) {
        bad("PPW_SIGNAL", v, expected);
    } else {
        ppw_config.signal = sig;
        ppw_config.signal_set = 1;
    }
}

void ppw_config_load(void)
{
    static const struct unit time_units[] = {
        {"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}, {NULL, 0}};
    static const struct unit size_units[] = {{"K", 1024}, {"k", 1024}, {"M", 1024 * 1024},
                                             {"m", 1024 * 1024}, {NULL, 0}};
    memset(&ppw_config, 0, sizeof(ppw_config));
    ppw_config.verbose = get_flag("PPW_VERBOSE", 0);
    ppw_config.disabled = get_flag("PPW_DISABLE", 0);

    const char *out = getenv("PPW_OUTPUT");
    if (out && *out && strlen(out) < sizeof(ppw_config.output)) {
        strcpy(ppw_config.output, out);
        ppw_config.output_set = 1;
    }
    else {
        if (out && *out)
            bad("PPW_OUTPUT", "...", "a path shorter than PATH_MAX");
        strcpy(ppw_config.output, "ppw-%e-%p");
    }

    get_mode();
    get_sampler();
    /* Units depend on the metric chosen later; 10 us .. 10 s of CPU time,
     * or the same range read as cycles. */
    get_number("PPW_PERIOD", 10000, 10000000000ull, time_units,
               "a period from 10us to 10s (e.g. 1ms, 500us, or cycles with PAPI)",
               &ppw_config.period);
    uint64_t jitter = 5;
    get_number("PPW_JITTER", 0, 50, NULL, "a percentage from 0 to 50", &jitter);
    ppw_config.jitter_pct = (unsigned)jitter;
    get_signal();
    uint64_t frames = 256;
    get_number("PPW_MAX_FRAMES", 8, 1024, NULL, "a frame count from 8 to 1024", &frames);
    ppw_config.max_frames = (unsigned)frames;

    ppw_config.callpath_depth = PPW_CALLPATH_MAX;
    const char *cp = getenv("PPW_CALLPATH");
    if (cp && *cp) {
        uint64_t d;
        if (strcmp(cp, "flat") == 0)
            ppw_config.callpath_depth = 1;
        else if (strcmp(cp, "parent") == 0)
            ppw_config.callpath_depth = 2;
        else if (strcmp(cp, "full") == 0)
            ppw_config.callpath_depth = PPW_CALLPATH_MAX;
        else if (parse_scaled(cp, NULL, &d) == 0 && d >= 1 && d <= PPW_CALLPATH_MAX)
            ppw_config.callpath_depth = (unsigned)d;
        else
            bad("PPW_CALLPATH", cp, "flat, parent, full or a depth from 1 to 10");
    }
    ppw_config.throttle_calls = 10000;
    get_number("PPW_THROTTLE_CALLS", 0, UINT32_MAX, NULL, "a call count (0 disables)",
               &ppw_config.throttle_calls);
    uint64_t usec = 10;
    get_number("PPW_THROTTLE_USEC", 0, 10000000, NULL, "microseconds from 0 to 10000000",
               &usec);
    ppw_config.throttle_ns = usec * 1000;
    ppw_config.throttle_alloc_calls = 1000;
    get_number("PPW_THROTTLE_ALLOC_CALLS", 1, UINT32_MAX, NULL, "a call count from 1",
               &ppw_config.throttle_alloc_calls);
    uint64_t sample = 1000;
    get_number("PPW_THROTTLE_SAMPLE", 0, PPW_THROTTLE_SAMPLE_MAX, NULL,
               "a count from 0 to 1000000 (0: none)",
               &sample);
    ppw_config.throttle_sample = (uint32_t)sample;
    uint64_t sample_usec = 250;
    get_number("PPW_THROTTLE_SAMPLE_USEC", 0, 1000000, NULL,
               "microseconds from 0 to 1000000 (0: the spacing stays PPW_THROTTLE_SAMPLE)",
               &sample_usec);
    ppw_config.throttle_sample_gap_ns = sample_usec * 1000;
    uint64_t window = 1024 * 1024;
    get_number("PPW_BUFFER", 64 * 1024, 256 * 1024 * 1024, size_units,
               "a size from 64K to 256M", &window);
    ppw_config.window = (size_t)window;
    const char *ompt = getenv("PPW_OMPT");
    ppw_config.ompt_always = 0;
    if (ompt && *ompt && strcmp(ompt, "auto") != 0) {
        if (strcmp(ompt, "always") == 0)
            ppw_config.ompt_always = 1;
        else
            bad("PPW_OMPT", ompt, "auto or always");
    }
    const char *env = getenv("PPW_RECORD_ENV");
    if (env && *env && strcmp(env, "all") == 0)
        ppw_config.record_all_env = 1;
    else if (env && *env && strcmp(env, "default") != 0)
        bad("PPW_RECORD_ENV", env, "all or default");
}
