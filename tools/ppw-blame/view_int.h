/* The insides of the views' input (view.c and view_runs.c); view.h is the
 * boundary the commands use. */
#ifndef PPW_BLAME_VIEW_INT_H
#define PPW_BLAME_VIEW_INT_H

#include "view.h"

struct ppw_run;
struct ppw_lines;
struct ppw_job_rank;
struct ppw_glue_stats;

/* The run's metric (in->metric, in->unit) and the factor that turns its
 * weights into in->unit. */
double view_run_metric(const struct ppw_run *run, struct view_input *in);

/* The binary in->binary must be the run's build (unless --force) and carry
 * DWARF (the run's executable, for its lines) and blame graphs, which it
 * loads into in->graph. */
int view_check_binary(const struct view_opts *o, const struct ppw_run *run, struct view_input *in,
                      struct ppw_lines *lines, struct ppw_err *err);

/* The first run or rank read as the input's identity (in->build_id,
 * in->exe), and view_check_binary for the binary --binary names, else
 * the one it names (in->binary), against that run, whose metric it also
 * takes. */
int view_check_first_binary(const struct view_opts *o, const struct ppw_job_rank *first,
                            struct view_input *in, struct ppw_err *err);

/* Adds the glue counts of a run or rank to a sum. */
void view_add_glue(struct ppw_glue_stats *to, const struct ppw_glue_stats *from);

/* Appends n threads' losses to in->losses: thread ids[i] (as in->threads
 * holds it) lost losses[i]; run names the run or job when several are
 * summed (copied), else NULL. */
int view_add_losses(struct view_input *in, const char *run, bool has_rank, uint32_t rank,
                    const uint32_t *ids, const struct ppw_run_loss *losses, size_t n,
                    struct ppw_err *err);

/* Appends a line to in->job_notes. */
int view_note(struct view_input *in, const char *line, struct ppw_err *err);
/* Room for one more fault in in->faults (grown by doubling: a job can
 * have a fault per rank).  Errors: PPW_ENOMEM. */
int view_reserve_fault(struct view_input *in, struct ppw_err *err);

/* Loads one run or job directory, as view_load does for a single DIR,
 * into in (cleared first; its stacks keep their threads apart).  Free it
 * with view_input_free. */
int view_load_dir(const struct view_opts *o, const char *dir, struct view_input *in,
                  struct ppw_err *err);

/* view_load for several DIRs (view_runs.c): runs of one program, or jobs
 * of one program, their samples summed (docs/ppw-blame.md, "Several
 * runs").  in is cleared, with its stack set made. */
int view_load_runs(const struct view_opts *o, struct view_input *in, struct ppw_err *err);

#endif
