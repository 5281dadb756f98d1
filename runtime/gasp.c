/* libppw's entry points: the GASP 1.5 tool interface (ppw/gasp.h) and the
 * user-event API (ppw/ppw.h).  Everything else in libppw is hidden.
 *
 * Each entry point saves errno, finds the calling thread's state, returns
 * quietly when there is none or when it is already inside libppw (an
 * event sent from code libppw itself calls), sets the re-entrancy guard
 * that the sampler also honours, forwards to measure.c, and restores
 * errno.  Contexts: ppw's contexts are per thread, and events always go
 * to the calling thread's, whatever context is passed (ppw-generated code
 * passes NULL). */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>

#include "ppw/gasp.h"
#include "ppw/gasp_events.h"
/* ppw.h declares the user API weak, for programs that may run without
 * libppw; libppw's own definitions must be strong.  Its declarations are
 * renamed here and checked against the definitions at the end. */
#define ppw_create_event_ ppw_create_event_decl_
#define ppw_event_notify_ ppw_event_notify_decl_
#define ppw_control_ ppw_control_decl_
#include "ppw/ppw.h"
#undef ppw_create_event_
#undef ppw_event_notify_
#undef ppw_control_

#include "lifecycle.h"
#include "measure.h"
#include "modules.h"
#include "sampler.h"
#include "sigsafe.h"
#include "thread.h"

PPW_EXPORT const char *ppw_runtime_version(void);

PPW_EXPORT const char *ppw_runtime_version(void)
{
    return "0.1.0";
}

/* Whether this thread already asked lifecycle to initialize libppw: a
 * thread libppw did not start (or one running before the constructor)
 * tries once, then its events are ignored cheaply. */
static PPW_TLS int ensure_tried;

/* The calling thread's state with the guard set, or NULL. */
static inline struct ppw_thread *enter(void)
{
    struct ppw_thread *t = ppw_thread_self();
    if (__builtin_expect(!t, 0)) {
        if (ensure_tried)
            return NULL;
        ensure_tried = 1;
        ppw_lifecycle_ensure();
        if (!(t = ppw_thread_self()))
            return NULL;
    }
    if (t->in_ppw)
        return NULL;
    t->in_ppw = 1;
    atomic_signal_fence(memory_order_seq_cst);
    return t;
}

static inline void leave(struct ppw_thread *t)
{
    atomic_signal_fence(memory_order_seq_cst);
    t->in_ppw = 0;
}

PPW_EXPORT gasp_context_t gasp_init(gasp_model_t srcmodel, int *argc, char ***argv)
{
    /* A non-NULL context even when libppw is off, for tools that test it. */
    static char inactive;
    (void)srcmodel;
    (void)argc;
    (void)argv;
    int saved = errno;
    struct ppw_thread *t = enter();
    gasp_context_t ctx = (gasp_context_t)(t ? (void *)t : (void *)&inactive);
    if (t)
        leave(t);
    errno = saved;
    return ctx;
}

/* mpi.c: >0 between the pass's START and END of an MPI call on this
 * thread, so that libppw's PMPI wrappers do not record it again.  Counted
 * whether or not the thread is measuring. */
PPW_TLS int ppw_gasp_mpi_depth;

/* Probe windows: events left until the next one this thread times from
 * entry to exit (measure.h), and the state of its random spacing. */
static PPW_TLS int32_t window_countdown;
static PPW_TLS uint64_t window_rng;

/* libppw is off for good: closes the gate of the call site or function
 * the event came from, so that their later calls stay in the program's
 * code.  (With PPW_DISABLE=1 every allocation still came here: alloc.c
 * ran 3.4 times its plain CPU time.) */
static void close_gate(unsigned int tag, struct ppw_gasp_site *site, va_list *ap)
{
    if (site) {
        __atomic_store_n(&site->gate, 0, __ATOMIC_RELAXED);
    } else if (tag == GASP_C_FUNC_GATED) {
        (void)va_arg(*ap, const char *);
        unsigned char *enable = va_arg(*ap, unsigned char *);
        if (enable)
            __atomic_store_n(enable, 0, __ATOMIC_RELAXED);
    }
}

static void notify(unsigned int tag, gasp_evttype_t type, const char *file, int line, int col,
                   va_list *ap)
{
    /* The window's clock reads come before anything else, so that all of
     * ppw's work after the call instruction lands inside it.  The first
     * read only measures what the second costs here and now. */
    uint64_t gap_start = 0, entry = 0, now = 0;
    enum ppw_probe_kind kind = PPW_PROBE_OTHER;
    if (__builtin_expect(--window_countdown <= 0, 0)) {
        window_countdown = ppw_probe_window_next(&window_rng);
        gap_start = ppw_now_ns();
        entry = ppw_now_ns();
    }
    int saved = errno;
    struct ppw_gasp_site *site = NULL;
    int64_t gate_read = 1;
    if (tag & GASP_PPW_SITE) {
        tag &= ~GASP_PPW_SITE;
        site = va_arg(*ap, struct ppw_gasp_site *);
        gate_read = va_arg(*ap, int64_t);
    }
    if (ppw_gasp_tag_is_mpi(tag)) {
        if (type == GASP_START)
            ppw_gasp_mpi_depth++;
        else if (type == GASP_END && ppw_gasp_mpi_depth > 0)
            ppw_gasp_mpi_depth--;
    }
    struct ppw_thread *t = enter();
    if (!t) {
        if (ppw_lifecycle_off())
            close_gate(tag, site, ap);
        goto out;
    }
    if (t->measuring)
        kind = ppw_measure_event(t, tag, type, file, line, col, site, gate_read, ap, &now);
    /* The module map follows the program's own dlopen/dlclose calls. */
    if (__builtin_expect((tag == GASP_C_DLOPEN || tag == GASP_C_DLCLOSE) && type == GASP_END, 0))
        ppw_modules_rescan();
    leave(t);
    errno = saved;
    if (__builtin_expect(entry != 0, 0) && kind != PPW_PROBE_OTHER)
        ppw_measure_probe_window(t, kind, gap_start, entry, now, ppw_now_ns());
    return;
out:
    errno = saved;
}

PPW_EXPORT void gasp_event_notify(gasp_context_t context, unsigned int evttag,
                                  gasp_evttype_t evttype, const char *filename, int linenum,
                                  int colnum, ...)
{
    (void)context;
    va_list ap;
    va_start(ap, colnum);
    notify(evttag, evttype, filename, linenum, colnum, &ap);
    va_end(ap);
}

PPW_EXPORT void gasp_event_notifyVA(gasp_context_t context, unsigned int evttag,
                                    gasp_evttype_t evttype, const char *filename, int linenum,
                                    int colnum, va_list varargs)
{
    (void)context;
    va_list ap;
    va_copy(ap, varargs); /* a va_list parameter may be an array turned pointer */
    notify(evttag, evttype, filename, linenum, colnum, &ap);
    va_end(ap);
}

static int control(int on)
{
    int saved = errno, previous = 1;
    struct ppw_thread *t = enter();
    if (t) {
        previous = t->measuring;
        if (previous != (on != 0))
            ppw_sampler_context_change(t); /* buffered samples: taken before the switch */
        t->measuring = on != 0;
        leave(t);
    }
    errno = saved;
    return previous;
}

PPW_EXPORT int gasp_control(gasp_context_t context, int on)
{
    (void)context;
    return control(on);
}

static unsigned int create_event(const char *name, const char *desc)
{
    int saved = errno;
    unsigned int id = 0;
    struct ppw_thread *t = enter();
    if (t) {
        id = ppw_measure_create_event(name, desc);
        leave(t);
    }
    errno = saved;
    return id;
}

PPW_EXPORT unsigned int gasp_create_event(gasp_context_t context, const char *name,
                                          const char *desc)
{
    (void)context;
    return create_event(name, desc);
}

PPW_EXPORT unsigned int ppw_create_event_(const char *name, const char *desc)
{
    return create_event(name, desc);
}

PPW_EXPORT void ppw_event_notify_(unsigned int evttag, gasp_evttype_t evttype, const char *file,
                                  int line, ...)
{
    va_list ap;
    va_start(ap, line);
    notify(evttag & ~GASP_PPW_SITE, evttype, file, line, 0, &ap); /* no site records here */
    va_end(ap);
}

PPW_EXPORT int ppw_control_(int on)
{
    return control(on);
}

#define SAME_TYPE(a, b)                                                                            \
    _Static_assert(__builtin_types_compatible_p(__typeof__(a), __typeof__(b)), #a)
SAME_TYPE(ppw_create_event_, ppw_create_event_decl_);
SAME_TYPE(ppw_event_notify_, ppw_event_notify_decl_);
SAME_TYPE(ppw_control_, ppw_control_decl_);
