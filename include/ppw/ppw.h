/* ppw's user-event API, in the spirit of GASP's pupc_* calls (PPW thesis
 * A.4): name a region of your own, then bracket it.
 *
 *   unsigned solve = ppw_create_event("solve", "iteration %d");
 *   ppw_event_start(solve, iter);
 *   ...
 *   ppw_event_end(solve);
 *
 * desc is NULL or a printf format; the arguments of ppw_event_start, _end
 * and _atomic must match it (they are formatted into trace records).
 * Returns of ppw_create_event: an id in [GASP_PPW_USEREVT_START,
 * GASP_PPW_USEREVT_END], or 0 when ids are exhausted or libppw is absent.
 *
 * The declarations are weak and the macros test them, so a program using
 * this header links and runs without libppw, and then measures nothing.
 * ppw_control(0) stops measurement on the calling thread (events and
 * samples) until ppw_control(1); it returns the previous setting. */
#ifndef PPW_PPW_H
#define PPW_PPW_H

#include "ppw/gasp.h"

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((weak)) unsigned int ppw_create_event_(const char *name, const char *desc);
__attribute__((weak)) void ppw_event_notify_(unsigned int evttag, gasp_evttype_t evttype,
                                             const char *file, int line, ...);
__attribute__((weak)) int ppw_control_(int on);

#define ppw_create_event(name, desc) (ppw_create_event_ ? ppw_create_event_((name), (desc)) : 0u)
#define ppw_event_start(...) ppw_event_(GASP_START, __VA_ARGS__)
#define ppw_event_end(...) ppw_event_(GASP_END, __VA_ARGS__)
#define ppw_event_atomic(...) ppw_event_(GASP_ATOMIC, __VA_ARGS__)
#define ppw_control(on) (ppw_control_ ? ppw_control_(on) : 1)

/* Internal: evttag is the first of __VA_ARGS__, so the format's arguments
 * may be empty without a GNU extension. */
#define ppw_event_(type, ...) ppw_event_at_(type, __FILE__, __LINE__, __VA_ARGS__)
#define ppw_event_at_(type, file, line, ...)                                                    \
    (ppw_event_notify_ ? ppw_event_notify_(ppw_first_(__VA_ARGS__, 0), (type), (file), (line)   \
                                               ppw_rest_(__VA_ARGS__, 0))                       \
                       : (void)0)
#define ppw_first_(first, ...) (first)
/* Drops the tag and the trailing 0 sentinel... except that C11 cannot drop
 * the last element portably; the runtime ignores arguments beyond what the
 * description's format consumes, so the sentinel is harmless. */
#define ppw_rest_(first, ...) , __VA_ARGS__

#ifdef __cplusplus
}
#endif
#endif
