/* The intrusion report's text and JSON (docs/ppw-blame.md, "ppw-blame
 * intrusion"), for ppw-blame intrusion and for reports that embed it. */
#ifndef PPW_BLAME_INTRUSION_VIEW_H
#define PPW_BLAME_INTRUSION_VIEW_H

#include <stddef.h>
#include <stdio.h>

#include <stdint.h>

#include "error.h"
#include "intrusion.h"

/* The report of one run, the top regions first (top 0: all of them). */
void intrusion_print_text(FILE *out, const struct ppw_intrusion *in, size_t top);

/* The regions (the top ones; 0: all) as CSV, a header record first. */
void intrusion_print_csv(FILE *out, const struct ppw_intrusion *in, size_t top);

/* The same as one JSON object value, without a trailing newline. */
void intrusion_print_json(FILE *out, const struct ppw_intrusion *in, size_t top);

/* The intrusion report of every run of dir (every rank of a job, those
 * that can be read; dir NULL: the newest run directory); the reports point
 * into their runs, which stay loaded in *runs (free both, and *ranks). */
int intrusion_view_load(const char *dir, double flag_ratio, struct ppw_intrusion **out,
                        struct ppw_run ***runs, size_t *n, uint32_t **ranks, struct ppw_err *err);

#endif
