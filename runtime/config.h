/* Run-time configuration: every PPW_* environment variable, parsed once at
 * start-up (docs/config.md lists them).  Nothing needs a recompile. */
#ifndef PPW_RUNTIME_CONFIG_H
#define PPW_RUNTIME_CONFIG_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

enum ppw_sampler_choice {
    PPW_SAMPLER_AUTO = 0, /* PAPI cycles, else the perf task clock into a ring buffer
                             (programs built by the pass), else with a signal, else
                             a POSIX CPU timer */
    PPW_SAMPLER_PAPI,
    PPW_SAMPLER_PERF,
    PPW_SAMPLER_TIMER,
    PPW_SAMPLER_OFF,
    PPW_SAMPLER_RING, /* perf task clock, the kernel's call chains into a ring buffer */
};

struct ppw_config {
    int disabled;                 /* PPW_DISABLE=1: libppw does nothing at all */
    char output[PATH_MAX];        /* PPW_OUTPUT template, %p pid, %e executable name */
    int output_set;               /* PPW_OUTPUT was given */
    uint32_t modes;               /* PPW_MODE (profile|trace|none) + PPW_SAMPLE: enum ppw_mode_flag */
    enum ppw_sampler_choice sampler; /* PPW_SAMPLER */
    uint64_t period;              /* PPW_PERIOD, in the metric's unit; 0: the metric's default */
    unsigned jitter_pct;          /* PPW_JITTER */
    int signal;                   /* PPW_SIGNAL; the sampler may move it (signals.h) */
    int signal_set;               /* PPW_SIGNAL was given: no search for a free signal */
    unsigned max_frames;          /* PPW_MAX_FRAMES */
    unsigned callpath_depth;      /* PPW_CALLPATH: flat 1, parent 2, full PPW_CALLPATH_MAX */
    uint64_t throttle_calls;      /* PPW_THROTTLE_CALLS; 0 disables throttling */
    uint64_t throttle_ns;         /* PPW_THROTTLE_USEC * 1000 */
    uint64_t throttle_alloc_calls; /* PPW_THROTTLE_ALLOC_CALLS: calls after which a tiny
                                      allocation site is throttled */
    uint32_t throttle_sample;     /* PPW_THROTTLE_SAMPLE: 1 in K calls timed at a throttled
                                     allocation site; 0: none */
    uint64_t throttle_sample_gap_ns; /* PPW_THROTTLE_SAMPLE_USEC * 1000: the spacing grows
                                        past K so that a thread times a site's calls about
                                        this far apart at most; 0: it stays K */
    size_t window;                /* PPW_BUFFER: bytes mapped per stream window */
    int verbose;                  /* PPW_VERBOSE */
    int record_all_env;           /* PPW_RECORD_ENV=all: run.ppw records the whole environment */
    int ompt_always;              /* PPW_OMPT=always: OpenMP regions through OMPT even where
                                     libppw's __kmpc_fork_call could take them (omp_fork.h) */
};

extern struct ppw_config ppw_config;

/* Fills ppw_config from the environment.  A malformed or out-of-range value
 * gets one line on stderr naming the variable, and its default is used. */
void ppw_config_load(void);

#endif
