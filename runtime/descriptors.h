/* The descriptors libppw keeps open while the program runs (the output
 * directory, each thread's perf event), kept out of the program's way.
 *
 * A program may close every descriptor it did not open (daemons, test
 * harnesses: close(3..1023), closefrom(3), close_range), or dup2 onto a
 * number it wants.  Without ppw those numbers are free, so descriptors.c
 * interposes close, close_range, closefrom, dup2 and dup3: a close of one
 * of ppw's descriptors fails with EBADF, as for a number nobody opened, and
 * ppw's descriptor stays; a dup2 onto one first moves ppw's descriptor to
 * another number, then lets the program have it. */
#ifndef PPW_RUNTIME_DESCRIPTORS_H
#define PPW_RUNTIME_DESCRIPTORS_H

#include "sigsafe.h"

/* Who holds an owned descriptor, so that a move can tell it. */
enum ppw_fd_owner {
    PPW_FD_OUTPUT_DIR = 1, /* lifecycle.c's output directory */
    PPW_FD_PERF = 2,       /* a thread's perf event (sampler.c) */
    PPW_FD_PROFILE = 3,    /* a thread's profile file (measure.c) */
};

/* Marks *slot, a descriptor ppw keeps open, as ppw's: the program cannot
 * close it, and a dup2 onto its number moves it (storing the new number in
 * *slot; a perf event's signal is redirected too).  Normal context only.
 * 0, or -1 when it cannot be protected (a number of 65536 or more, or the
 * table full): it then works as before, unprotected. */
int ppw_fd_own(int *slot, enum ppw_fd_owner owner);

/* Forgets *slot's descriptor, closes it with the real close, and sets
 * *slot to -1.  Normal context only. */
void ppw_fd_close(int *slot);

/* Forgets *slot's descriptor without closing it (it is no longer ppw's). */
void ppw_fd_release(int *slot);

/* Forgets every descriptor (a fork()ed child, whose copies ppw closes or
 * abandons itself). */
void ppw_fd_forget_all(void);

/* Resolves the real functions (dlsym): at start-up, before any thread. */
void ppw_descriptors_init(void);

#endif
