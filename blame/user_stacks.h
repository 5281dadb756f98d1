/* Stacks as users see them (docs/ppw-blame.md, "Names"): functions named
 * as names.h names them, one frame per OpenMP construct, each chain of
 * runtime frames (libc, libpthread, libomp, MPI) under a call of the
 * program as one frame named for what the program called ("[omp
 * barrier]", "[MPI_Allreduce]"), libppw's frames left out: they are
 * measurement, which `ppw-blame intrusion` reports.  The code views (code,
 * lines, flame, html, exports) show these; attribution keeps the raw
 * stacks. */
#ifndef PPW_BLAME_USER_STACKS_H
#define PPW_BLAME_USER_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attribute.h"
#include "error.h"
#include "names.h"

/* Whose code a frame is in (struct ppw_blame_frame's origin). */
enum ppw_frame_origin {
    PPW_FRAME_UNKNOWN = 0, /* folded stacks: a frame with a blame graph is the program's,
                              "[libppw.so.0]" is libppw, any other is the runtime's */
    PPW_FRAME_PROGRAM = 1, /* the executable */
    PPW_FRAME_RUNTIME = 2, /* the C, OpenMP or MPI runtime (ppw_user_stacks_module_origin) */
    PPW_FRAME_LIBRARY = 3, /* another shared library: shown frame by frame */
    PPW_FRAME_PPW = 4,     /* libppw */
};

/* The origin of a run's module from its path and enum ppw_module_flag. */
uint32_t ppw_user_stacks_module_origin(const char *path, uint32_t module_flags);

/* Whether a frame is the program's own code (lines): its origin says so,
 * or, from folded stacks, its function is one of the graph's. */
bool ppw_user_stacks_is_program(struct ppw_names *names, const struct ppw_blame_frame *frame);

/* Stacks as users see them, one for each stack given, in the same order:
 * names as ppw_names_frame shows them (interned: equal names are equal
 * pointers), one frame per construct, a runtime chain as one frame
 * ("[omp barrier]": no file or line, origin PPW_FRAME_RUNTIME), libppw's
 * frames left out.  Runtime frames between a call and the outlined code of
 * the construct it starts are left out too: the construct's frame names
 * it.  The strings live as long as names.  Errors: PPW_ENOMEM. */
struct ppw_user_stacks {
    struct ppw_blame_stack *stacks;
    size_t count;
    struct ppw_blame_frame *frames; /* every stack's frames */
};
int ppw_user_stacks_build(struct ppw_names *names, const struct ppw_blame_stack *stacks, size_t n,
                          struct ppw_user_stacks *out, struct ppw_err *err);
void ppw_user_stacks_free(struct ppw_user_stacks *user);

#endif
