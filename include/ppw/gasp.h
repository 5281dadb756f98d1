/* GASP 1.5: the interface between instrumented code (the ppw pass, or any
 * GASP-aware compiler) and the measurement tool (libppw).
 *
 * The first half is the GASP 1.5 C API exactly as the specification gives it
 * (Leko, Su, George, Bonachea; PPW thesis Appendix A).  The second half holds
 * ppw's event tags, named GASP_<MODEL>_<EVENT> as the specification asks for
 * vendor events.  Tag values are ppw's own: the specification fixes none.
 *
 * Argument convention for ppw's tags (not the GASP_C_* ones, whose varargs
 * the specification fixes): a START event carries the operands listed for its
 * tag in ppw/gasp_events.h, each widened to a 64-bit integer; the END event
 * carries the same operands followed by the call's result, when it has one.
 *
 * Compiles as C11 and as C++. */
#ifndef PPW_GASP_H
#define PPW_GASP_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- GASP 1.5 C API ---------------------------------------------------- */

#define GASP_VERSION 20060914 /* YYYYMMDD */

typedef enum {
    GASP_LANG_UPC,
    GASP_LANG_TITANIUM,
    GASP_LANG_CAF,
    GASP_LANG_MPI,
    GASP_LANG_SHMEM,
    /* ppw extension: plain C with pthreads and OpenMP.  Appended, so the
     * specification's values are unchanged. */
    GASP_LANG_C = 64
} gasp_model_t;

struct _gasp_context_S; /* defined by the tool */
typedef struct _gasp_context_S *gasp_context_t;

gasp_context_t gasp_init(gasp_model_t srcmodel, int *argc, char ***argv);

typedef enum {
    GASP_START,
    GASP_END,
    GASP_ATOMIC,
} gasp_evttype_t;

void gasp_event_notify(gasp_context_t context, unsigned int evttag, gasp_evttype_t evttype,
                       const char *filename, int linenum, int colnum, ...);
void gasp_event_notifyVA(gasp_context_t context, unsigned int evttag, gasp_evttype_t evttype,
                         const char *filename, int linenum, int colnum, va_list varargs);
int gasp_control(gasp_context_t context, int on);
unsigned int gasp_create_event(gasp_context_t context, const char *name, const char *desc);

/* ---- C events (specification Tables) ------------------------- */
/*   tag               type   varargs                                       */
#define GASP_C_FUNC 1000u    /* S,E   const char *funcsig                    */
#define GASP_C_MALLOC 1001u  /* S     size_t nbytes                          */
                             /* E     size_t nbytes, void *returnptr         */
#define GASP_C_REALLOC 1002u /* S     void *ptr, size_t size                 */
                             /* E     void *ptr, size_t size, void *returnptr */
#define GASP_C_FREE 1003u    /* S,E   void *ptr                              */

/* ---- ppw extensions ----------------------------------------------------- */
/* Context: ppw-generated code passes a NULL context, meaning "the calling
 * thread's GASP_LANG_C context": plain C has no per-thread place where
 * compiled code could keep the value gasp_init returned. */

/* Tool-generated ids (gasp_create_event) are in [USEREVT_START, USEREVT_END]. */
#define GASP_PPW_USEREVT_START 100u
#define GASP_PPW_USEREVT_END 999u

#define GASP_C_CALLOC 1004u /* S nmemb, size; E + returnptr (ppw convention) */
/* dlopen/dlclose: the tool refreshes its module map after each (so samples
 * in a library that is later unloaded can still be symbolized). */
#define GASP_C_DLOPEN 1005u  /* S file, mode; E + handle */
#define GASP_C_DLCLOSE 1006u /* S,E handle; E + result */
/* GASP_C_FUNC with an enable switch, as the ppw pass emits it:
 *   S,E  const char *funcsig, unsigned char *enable
 * The compiled code tests *enable (read once at function entry, so START
 * and END stay paired) before calling; a tool may store 0 there to stop a
 * function's events in every thread: throttling without a residual call.
 * Otherwise the same event as GASP_C_FUNC. */
#define GASP_C_FUNC_GATED 1007u

/* ppw extension: a wrapped call's site record.  The pass makes one per
 * call it wraps (a private global of the program) and, with the tag's
 * GASP_PPW_SITE bit set, passes it and the gate it read ahead of the
 * tag's own operands:
 *   S,E  struct ppw_gasp_site *site, int64_t gate_read, operands...
 * The tool caches the site's region in `region`, so that a hot site is
 * resolved once and then indexed.  At every site but the PPW_OP_INIT and
 * PPW_OP_TERM rows' (whose events the tool needs at each call), the
 * compiled code also obeys `gate`, read once per call so that START and
 * END stay paired (an MPI call not sent goes to its PMPI_ entry, past the
 * tool's wrapper, when the tool is present and the entry exists):
 *   0      no events (the tool is not measuring);
 *   1      every call;
 *   K > 1  about one call in K: a per-thread countdown in the program
 *          counts the site's calls and is reset to the gate it read at
 *          each call it lets through, which carries that gate_read; the
 *          tool weighs such a call by the window it closes (the
 *          gate_read of the thread's previous one).
 * The tool may change `gate` at any time (relaxed atomic stores). */
#define GASP_PPW_SITE 0x40000000u
struct ppw_gasp_site {
    int gate;            /* read by compiled code; written by the tool */
    unsigned int region; /* the tool's cache; 0 until the first event */
};

/* pthreads */
#define GASP_PTHREAD_CREATE 1100u
#define GASP_PTHREAD_JOIN 1101u
#define GASP_PTHREAD_MUTEX_LOCK 1102u
#define GASP_PTHREAD_MUTEX_TRYLOCK 1103u
#define GASP_PTHREAD_MUTEX_UNLOCK 1104u
#define GASP_PTHREAD_BARRIER_WAIT 1105u
#define GASP_PTHREAD_COND_WAIT 1106u
#define GASP_PTHREAD_COND_TIMEDWAIT 1107u
#define GASP_PTHREAD_COND_SIGNAL 1108u
#define GASP_PTHREAD_COND_BROADCAST 1109u
#define GASP_PTHREAD_SPIN_LOCK 1110u
#define GASP_PTHREAD_SPIN_UNLOCK 1111u
#define GASP_PTHREAD_RWLOCK_RDLOCK 1112u
#define GASP_PTHREAD_RWLOCK_WRLOCK 1113u
#define GASP_PTHREAD_RWLOCK_UNLOCK 1114u

/* OpenMP (the libomp entry points clang lowers directives to, and the
 * omp_*_lock API) */
#define GASP_OMP_PARALLEL 1200u
#define GASP_OMP_BARRIER 1201u
#define GASP_OMP_CRITICAL 1202u
#define GASP_OMP_CRITICAL_EXIT 1203u
#define GASP_OMP_TASK_CREATE 1204u
#define GASP_OMP_TASKWAIT 1205u
#define GASP_OMP_TASKGROUP_END 1206u
#define GASP_OMP_SET_LOCK 1207u
#define GASP_OMP_UNSET_LOCK 1208u
#define GASP_OMP_REDUCE 1209u
#define GASP_OMP_TASKLOOP 1210u

/* MPI */
#define GASP_MPI_INIT 1300u
#define GASP_MPI_FINALIZE 1301u
#define GASP_MPI_SEND 1302u
#define GASP_MPI_RECV 1303u
#define GASP_MPI_ISEND 1304u
#define GASP_MPI_IRECV 1305u
#define GASP_MPI_WAIT 1306u
#define GASP_MPI_WAITALL 1307u
#define GASP_MPI_SENDRECV 1308u
#define GASP_MPI_BARRIER 1309u
#define GASP_MPI_BCAST 1310u
#define GASP_MPI_REDUCE 1311u
#define GASP_MPI_ALLREDUCE 1312u
#define GASP_MPI_GATHER 1313u
#define GASP_MPI_ALLGATHER 1314u
#define GASP_MPI_SCATTER 1315u
#define GASP_MPI_ALLTOALL 1316u
#define GASP_MPI_WAITANY 1317u
/* MPI-3 one-sided communication (RMA) */
#define GASP_MPI_PUT 1318u
#define GASP_MPI_RPUT 1319u
#define GASP_MPI_GET 1320u
#define GASP_MPI_RGET 1321u
#define GASP_MPI_ACCUMULATE 1322u
#define GASP_MPI_RACCUMULATE 1323u
#define GASP_MPI_GET_ACCUMULATE 1324u
#define GASP_MPI_RGET_ACCUMULATE 1325u
#define GASP_MPI_FETCH_AND_OP 1326u
#define GASP_MPI_COMPARE_AND_SWAP 1327u
#define GASP_MPI_WIN_FENCE 1328u
#define GASP_MPI_WIN_LOCK 1329u
#define GASP_MPI_WIN_LOCK_ALL 1330u
#define GASP_MPI_WIN_UNLOCK 1331u
#define GASP_MPI_WIN_UNLOCK_ALL 1332u
#define GASP_MPI_WIN_FLUSH 1333u
#define GASP_MPI_WIN_FLUSH_ALL 1334u
#define GASP_MPI_WIN_POST 1335u
#define GASP_MPI_WIN_START 1336u
#define GASP_MPI_WIN_COMPLETE 1337u
#define GASP_MPI_WIN_WAIT 1338u
#define GASP_MPI_WIN_CREATE 1339u
#define GASP_MPI_WIN_ALLOCATE 1340u
#define GASP_MPI_WIN_FREE 1341u
/* MPI's tags are GASP_MPI_INIT..GASP_MPI_LAST, with no gaps. */
#define GASP_MPI_LAST GASP_MPI_WIN_FREE

/* OpenSHMEM.  Each tag stands for every typed and sized variant of one
 * call (shmem_int_put, shmem_put64, shmem_putmem, shmem_ctx_long_iput...):
 * PPW's generic operation with a size, the size of one element travelling
 * with the event (ppw/gasp_events.h). */
#define GASP_SHMEM_INIT 1400u
#define GASP_SHMEM_FINALIZE 1401u
#define GASP_SHMEM_PUT 1402u
#define GASP_SHMEM_P 1403u
#define GASP_SHMEM_PUT_NBI 1404u
#define GASP_SHMEM_GET 1405u
#define GASP_SHMEM_G 1406u
#define GASP_SHMEM_GET_NBI 1407u
#define GASP_SHMEM_ATOMIC 1408u
#define GASP_SHMEM_FENCE 1409u
#define GASP_SHMEM_QUIET 1410u
#define GASP_SHMEM_BARRIER 1411u
#define GASP_SHMEM_SET_LOCK 1412u
#define GASP_SHMEM_TEST_LOCK 1413u
#define GASP_SHMEM_CLEAR_LOCK 1414u
#define GASP_SHMEM_WAIT_UNTIL 1415u
#define GASP_SHMEM_BROADCAST 1416u
#define GASP_SHMEM_COLLECT 1417u
#define GASP_SHMEM_ALLTOALL 1418u
#define GASP_SHMEM_REDUCE 1419u
#define GASP_SHMEM_MALLOC 1420u
#define GASP_SHMEM_CALLOC 1421u
#define GASP_SHMEM_REALLOC 1422u
#define GASP_SHMEM_FREE 1423u
#define GASP_SHMEM_SYNC 1424u
/* SHMEM's tags are GASP_SHMEM_INIT..GASP_SHMEM_LAST, with no gaps. */
#define GASP_SHMEM_LAST GASP_SHMEM_SYNC

#ifdef __cplusplus
}
#endif
#endif
