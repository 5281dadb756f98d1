/* What the views (report, code, lines) share: their input options, the
 * stacks they read (a folded file, or a run directory glued and
 * symbolized) with the static graph, output formats and text cells. */
#ifndef PPW_BLAME_VIEW_H
#define PPW_BLAME_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "attribute.h"
#include "cli.h"
#include "error.h"
#include "glue.h"
#include "job.h"

struct ppw_static_graph;
struct ppw_stack_set;
struct ppw_names;
struct ppw_user_stacks;

enum view_format { VIEW_TEXT, VIEW_TSV, VIEW_JSON };

/* The options every view takes. */
struct view_opts {
    const char *dir, *folded, *binary, *format, *top, *thread, *rank;
    const char *const *dirs; /* every DIR given (dir is the first): several are summed */
    size_t ndirs;
    bool force, help;
    enum view_format fmt;
    size_t top_n;        /* 0: all */
    bool has_thread;     /* --thread T: only thread T's samples */
    uint32_t thread_id;  /* T */
    bool has_rank;       /* --rank R: only rank R's samples (job directories) */
    uint32_t rank_id;    /* R */
    bool split_threads;  /* keep the stacks of different threads apart (set by the command) */
    bool csv;            /* --format csv: fmt is VIEW_TSV, and view_out converts it */
    char *csv_tsv;       /* view_out's buffer of the TSV */
    size_t csv_size;
    FILE *csv_stream;
};

/* The value options of view_opts, for cli_parse_flags (6 entries). */
#define VIEW_OPTIONS(o)                                                                       \
    {"--folded", &(o)->folded}, {"--binary", &(o)->binary}, {"--format", &(o)->format},        \
        {"--top", &(o)->top}, {"--thread", &(o)->thread}, {"--rank", &(o)->rank}
#define VIEW_OPTION_COUNT 6

/* Where a view prints its table: stdout, or with --format csv a buffer
 * that takes the view's TSV for view_out_finish to write to stdout as CSV
 * (RFC 4180 quoting, one record per line).  view_out_finish returns
 * PPW_ENOMEM or 0; call it once after printing, whatever happened. */
FILE *view_out(struct view_opts *o);
int view_out_finish(struct view_opts *o);

/* Parses a view command's arguments: VIEW_OPTIONS and the command's own,
 * its flags, and any number of DIRs. */
#define VIEW_PARSE(argc, argv, o, options, noptions, flags, nflags, err)                       \
    cli_parse_list((argc), (argv), (options), (noptions), (flags), (nflags), &(o)->dirs,       \
                   &(o)->ndirs, &(o)->help, (err))

/* Checks and converts the parsed options (format, top; --folded needs
 * --binary and no DIR); top_default when --top is absent. */
int view_check_opts(struct view_opts *o, const char *command, size_t top_default,
                    struct ppw_err *err);

/* What a view reads. */
/* A rank of a job that is missing, did not end normally, or cannot be read. */
struct view_rank_fault {
    uint32_t rank;
    const char *state; /* "missing", "unfinished" or "unreadable" */
    char *error;       /* unreadable: why; else NULL */
    char *job;         /* several jobs summed: the job directory; else NULL */
};

/* One thread's samples against its CPU time (ppw_run_thread_loss). */
struct view_loss {
    uint32_t thread;         /* as in view_input.threads */
    bool has_rank;
    uint32_t rank;
    char *run;               /* several runs: the run or job directory; else NULL */
    struct ppw_run_loss loss;
};

struct view_input {
    struct ppw_static_graph *graph;
    struct ppw_stack_set *stacks;
    struct ppw_names *names; /* the graph's functions as users see them (names.h) */
    struct ppw_user_stacks *user; /* the stacks as users see them, made on first use */
    char *source;       /* the folded file or the run directory, as given or found; several
                           summed: "A + B" (or "A + N more") */
    char **run_dirs;    /* several run or job directories summed: each, as given */
    size_t nruns;       /* how many: 1 for one run or job, 0 for folded stacks */
    char *build_id;     /* the run's (a job's first rank's), hex; NULL for folded stacks */
    char *exe;          /* the executable the run names (RUN_INFO); NULL when unnamed */
    char *binary;       /* the binary the graph came from */
    const char *metric; /* "samples" (folded), or the run's metric source */
    const char *unit;   /* of the stacks' weights: "samples", "s", "cycles" or "units" */
    bool from_run;      /* a run directory: the fields below are set */
    bool finished;      /* the run ended normally */
    bool forced;        /* --force used a binary of another build */
    struct ppw_glue_stats glue;
    uint32_t *threads;  /* the run's thread indices, sorted (folded: those of the stacks;
                           a job: rank * PPW_JOB_RANK_SHIFT + thread) */
    size_t nthreads;
    struct view_loss *losses; /* every thread of every run read */
    size_t nlosses, losses_cap;
    bool job;           /* a job directory: the ranks below are set */
    uint32_t *ranks;    /* the ranks loaded, sorted */
    size_t nranks;
    uint32_t job_size;  /* ranks in the job (MPI record), loaded or not */
    char *job_notes;    /* text lines about missing, unfinished or unreadable ranks */
    size_t job_notes_len;
    struct view_rank_fault *faults; /* the same, for JSON, by rank */
    size_t nfaults, faults_cap;
    bool selected;      /* --thread/--rank: the stacks and totals below are the selection's */
    bool sel_thread, sel_rank;
    uint32_t thread, rank;
    struct ppw_blame_stack *sel;
    size_t nsel;
    uint64_t sel_samples;
    double sel_weight;
};

int view_load(const struct view_opts *o, struct view_input *in, struct ppw_err *err);
void view_input_free(struct view_input *in);

/* The stacks and their totals (with --thread, the thread's). */
const struct ppw_blame_stack *view_stacks(const struct view_input *in, size_t *count);
/* The stacks as users see them (names.h: source names, a frame per
 * construct, runtime chains collapsed, libppw left out), one for each of
 * view_stacks' in the same order; NULL with err set when out of memory. */
const struct ppw_blame_stack *view_user_stacks(const struct view_input *in, size_t *count,
                                               struct ppw_err *err);

/* A frame's function as users see it (ppw_names_frame). */
const char *view_frame_name(const struct view_input *in, const struct ppw_blame_frame *frame);

uint64_t view_total_samples(const struct view_input *in);
double view_total_weight(const struct view_input *in);

/* The outermost frame of a stack the views show: its outermost main, else
 * its root (frames beyond main are the C runtime's start). */
size_t view_top_frame(const struct ppw_blame_stack *stack);

/* 100 * part / total, 0 when total is 0. */
double view_pct(uint64_t part, uint64_t total);

/* JSON: {"total_samples":N,"metric":{"name":..,"unit":..,"total":..}, then
 * a job's ranks and faults, and several runs' "runs" and "run_dirs" (the
 * caller goes on with ",..." and closes the object). */
void view_json_head(FILE *out, const struct view_input *in);

/* JSON: {"total_samples":N,"metric":{"name":..,"unit":..,"total":..},"<list>":[
 * (the caller writes the items and "]}"). */
void view_json_open(FILE *out, const struct view_input *in, const char *list);

/* Text: "<view>: N samples (metric: M) from SOURCE, binary BIN" and a
 * newline, then "runs: N" for several runs, a job's ranks, and a line per
 * warning about the input (a run that did not end normally, broken spawn
 * chains, truncated stacks, samples without lines). */
void view_text_title(FILE *out, const struct view_input *in, const char *view);

/* Text: s in exactly width columns, padded; a longer s is cut, marked with
 * "..." at the end (or, with keep_end, at the start).  Control characters
 * print as '?'. */
void view_cell(FILE *out, const char *s, size_t width, bool keep_end);

/* Text: prefix, then s broken into lines at its " > " separators (a
 * context), never cut: the first line goes on from column `indent`, where
 * the caller is, and is at most `width` columns; each further line is
 * indented to the end of prefix and starts with "> ".  A part too long for
 * a line of its own goes on to the next line.  No newline at the end. */
void view_wrap(FILE *out, const char *prefix, const char *s, size_t indent, size_t width);

/* TSV: s with tabs, newlines and other control characters as spaces. */
void view_tsv(FILE *out, const char *s);

/* The last component of a path. */
const char *view_basename(const char *path);

/* Text: the header of the metric column ("seconds", "cycles" or "metric"). */
const char *view_metric_header(const struct view_input *in);

/* Text: the metric of a weight, in a 9-column cell ("-" for samples). */
void view_metric_cell(FILE *out, const struct view_input *in, double weight);

#endif
