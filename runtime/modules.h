/* The module map: every loaded ELF object with its load bias, address
 * range and build-id, written to run.ppw so that PIE and shared-library PCs
 * can be symbolized after the run.  Refreshed when the program calls
 * dlopen/dlclose (GASP_C_DLOPEN/GASP_C_DLCLOSE events), at thread start and
 * end, and at exit.  dlopen is deliberately not interposed: glibc searches
 * DT_RUNPATH of the *calling* object, which an interposer would change.
 * dlclose is (it takes a handle, not a path), to mark the thread inside it:
 * dlclose holds the dynamic linker's lock while it unmaps, and a stack walk
 * in that thread's sample handler can wait for libunwind's lock, held by
 * another thread's walk that waits in dl_iterate_phdr for the dynamic
 * linker's lock: a deadlock (seen in Open MPI's MPI_Init and MPI_Finalize,
 * which close components). */
#ifndef PPW_RUNTIME_MODULES_H
#define PPW_RUNTIME_MODULES_H

#include <link.h>
#include <signal.h>
#include <stdint.h>

#include "sigsafe.h"

/* >0 while this thread is inside dlclose: the sample handler keeps the
 * interrupted PC and does not walk (sampler.c). */
extern PPW_TLS volatile sig_atomic_t ppw_in_dlclose;

/* Finds the executable's build-id; callable before the run file exists. */
void ppw_modules_early_init(void);
/* Writes a PPW_RUN_MODULE record for every loaded object. */
void ppw_modules_init(void);
/* Records objects loaded or unloaded since the last scan. */
void ppw_modules_rescan(void);
/* Whether a stack walk by thread tid, which dl_iterate_phdr makes wait for
 * the dynamic linker's write lock, may wait forever: the lock is held by
 * tid itself, or by a thread not in a stack walk of ppw's (inside dlopen,
 * dlclose or a dl_iterate_phdr callback, which may wait for a lock tid
 * holds), or by a thread not yet recorded as its owner.  Then tid's
 * sample handler must not walk.  Signal-safe.  0 when the lock could not
 * be located (then ppw_modules_dl_lock_known() is 0 too). */
int ppw_modules_walk_may_block(uint32_t tid);
int ppw_modules_dl_lock_known(void);
/* Is pc inside libppw's own code? (signal-safe: reads a fixed range) */
/* How many dlclose calls have returned: code at an address may have
 * changed since a count seen before (signal-safe). */
PPW_SIGSAFE uint64_t ppw_modules_unload_count(void);
int ppw_modules_in_self(uint64_t pc);
/* Is pc in libppw or a parallel runtime (libomp, libgomp)?  Unloaded
 * runtimes are not forgotten: harmless, since their ranges stay unmapped. */
int ppw_modules_in_runtime(uint64_t pc);
/* Is pc in the executable? (signal-safe; 0 before the first scan) */
int ppw_modules_in_exe(uint64_t pc);
const uint8_t *ppw_modules_exe_build_id(uint32_t *size);
void ppw_modules_after_fork_child(void);

/* Calls fn for each relocation of info's module against a symbol it
 * imports (the dynamic section's DT_RELA, then DT_JMPREL's entries), with
 * the symbol's name and the address of the slot the dynamic linker fills;
 * stops at the first nonzero return, and returns it (0: none, or no
 * dynamic section). */
typedef int ppw_module_import_fn(const struct dl_phdr_info *info, const char *name, void **slot,
                                 void *arg);
int ppw_modules_each_import(const struct dl_phdr_info *info, ppw_module_import_fn *fn, void *arg);

/* Runs call(arg) with the module that holds `in_module` calling, for
 * `name`, `replacement` instead of what the dynamic linker bound: its
 * import slot rewritten, then restored.  Only for a call no other thread
 * can make meanwhile.  0 when the slot was redirected, -1 when not (no
 * such import, or its page could not be made writable): call still ran. */
int ppw_modules_call_redirected(const void *in_module, const char *name, void *replacement,
                                void (*call)(void *), void *arg);

#endif
