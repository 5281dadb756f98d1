/* OMPT tool: spawn contexts for OpenMP parallel regions and explicit tasks,
 * and the current spawn tag of every implicit and explicit task, so samples
 * taken in a worker glue to the code that opened the region.  In trace
 * mode it also records each region's and task's spawn, begin and end
 * (PPW_EVT_OMP), which timelines draw as slices joined by flows.  libomp
 * finds ompt_start_tool in libppw by symbol lookup at its initialization.
 *
 * A region's or task's ompt_data_t holds its spawn tag in the low 32 bits
 * and its instance id above; bit 63 marks an explicit task. */
#include <omp-tools.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "lifecycle.h"
#include "omp_fork.h"
#include "ompt.h"
#include "sampler.h"
#include "sigsafe.h"
#include "spawn.h"
#include "stream.h"
#include "thread.h"

static ompt_set_callback_t set_callback;
static int active;
static uint32_t last_instance;

#define EXPLICIT_TASK (1ull << 63)

static uint32_t instance_of(uint64_t value)
{
    return (uint32_t)(value >> 32) & 0x7fffffffu;
}

static void record(struct ppw_thread *t, uint32_t instance, uint32_t tag, enum ppw_omp_event event)
{
    if (!(ppw_config.modes & PPW_MODE_TRACE) || !instance)
        return;
    struct ppw_stream *events = ppw_thread_events(t);
    struct ppw_rec_omp *rec = events ? ppw_stream_reserve(events, PPW_EVT_OMP, sizeof *rec) : NULL;
    if (!rec)
        return;
    *rec = (struct ppw_rec_omp){ppw_now_ns(), instance, tag, (uint32_t)event, 0};
    ppw_stream_commit(events);
}

/* A new region's or task's data value; in trace mode with an instance id
 * and its spawn record. */
static uint64_t spawned(struct ppw_thread *t, uint32_t tag, enum ppw_omp_event event)
{
    if (!(ppw_config.modes & PPW_MODE_TRACE))
        return tag;
    uint32_t instance = __atomic_add_fetch(&last_instance, 1, __ATOMIC_RELAXED) & 0x7fffffffu;
    record(t, instance, tag, event);
    return (uint64_t)instance << 32 | tag;
}

int ppw_ompt_active(void)
{
    return active;
}

static void on_parallel_begin(ompt_data_t *encountering_task_data,
                              const ompt_frame_t *encountering_task_frame,
                              ompt_data_t *parallel_data, unsigned int requested_parallelism,
                              int flags, const void *codeptr_ra)
{
    (void)encountering_task_data;
    (void)requested_parallelism;
    (void)flags;
    struct ppw_thread *t = ppw_thread_self();
    const void *frame = encountering_task_frame ? encountering_task_frame->enter_frame.ptr : NULL;
    parallel_data->value =
        t ? spawned(t,
                    ppw_spawn_context(t, PPW_SPAWN_OMP_PARALLEL, (uint64_t)(uintptr_t)codeptr_ra,
                                      frame),
                    PPW_OMP_SPAWN_PARALLEL)
          : 0;
}

static void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
                             ompt_data_t *task_data, unsigned int actual_parallelism,
                             unsigned int index, int flags)
{
    (void)actual_parallelism;
    (void)index;
    struct ppw_thread *t = ppw_thread_self();
    if (!t)
        return;
    if (flags & ompt_task_initial) {
        task_data->value = t->root_tag;
        return;
    }
    /* the samples so far belong to the context ending or enclosing */
    ppw_sampler_context_change(t);
    if (endpoint == ompt_scope_begin) {
        if (t->tag_depth < PPW_TAG_STACK_MAX)
            t->tag_stack[t->tag_depth] = t->spawn_tag;
        t->tag_depth++;
        uint64_t value = parallel_data ? parallel_data->value : 0;
        uint32_t tag = (uint32_t)value;
        task_data->value = value;
        t->spawn_tag = tag;
        record(t, instance_of(value), tag, PPW_OMP_BEGIN);
    } else if (t->tag_depth > 0) {
        record(t, instance_of(task_data->value), (uint32_t)task_data->value, PPW_OMP_END);
        t->tag_depth--;
        if (t->tag_depth < PPW_TAG_STACK_MAX)
            t->spawn_tag = t->tag_stack[t->tag_depth];
    }
}

static void on_task_create(ompt_data_t *encountering_task_data,
                           const ompt_frame_t *encountering_task_frame, ompt_data_t *new_task_data,
                           int flags, int has_dependences, const void *codeptr_ra)
{
    (void)encountering_task_data;
    (void)encountering_task_frame;
    (void)has_dependences;
    struct ppw_thread *t = ppw_thread_self();
    if (flags & ompt_task_explicit)
        new_task_data->value =
            t ? spawned(t,
                        ppw_spawn_context(t, PPW_SPAWN_OMP_TASK, (uint64_t)(uintptr_t)codeptr_ra,
                                          NULL),
                        PPW_OMP_SPAWN_TASK) |
                    EXPLICIT_TASK
              : 0;
    else
        new_task_data->value = t ? t->spawn_tag : 0;
}

static void on_task_schedule(ompt_data_t *prior_task_data, ompt_task_status_t prior_task_status,
                             ompt_data_t *next_task_data)
{
    (void)prior_task_status;
    struct ppw_thread *t = ppw_thread_self();
    if (!t)
        return;
    /* Implicit tasks pass through here too, when they run explicit ones;
     * their begin and end are the implicit-task callback's. */
    if (prior_task_data && (prior_task_data->value & EXPLICIT_TASK))
        record(t, instance_of(prior_task_data->value), (uint32_t)prior_task_data->value,
               PPW_OMP_END);
    if (next_task_data) {
        ppw_sampler_context_change(t);
        t->spawn_tag = (uint32_t)next_task_data->value;
        if (next_task_data->value & EXPLICIT_TASK)
            record(t, instance_of(next_task_data->value), (uint32_t)next_task_data->value,
                   PPW_OMP_BEGIN);
    }
}

static int initialize(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t *tool_data)
{
    (void)initial_device_num;
    (void)tool_data;
    set_callback = (ompt_set_callback_t)lookup("ompt_set_callback");
    if (!set_callback)
        return 0;
    set_callback(ompt_callback_parallel_begin, (ompt_callback_t)on_parallel_begin);
    set_callback(ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task);
    set_callback(ompt_callback_task_create, (ompt_callback_t)on_task_create);
    set_callback(ompt_callback_task_schedule, (ompt_callback_t)on_task_schedule);
    active = 1;
    return 1;
}

static void finalize(ompt_data_t *tool_data)
{
    (void)tool_data;
    active = 0;
}

PPW_EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
                                                     const char *runtime_version);

PPW_EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
                                                     const char *runtime_version)
{
    (void)omp_version;
    (void)runtime_version;
    static ompt_start_tool_result_t result = {initialize, finalize, {0}};
    ppw_lifecycle_ensure();
    if (ppw_config.disabled || !ppw_running)
        return NULL;
    ppw_omp_fork_decide();
    if (ppw_omp_fork_hooked())
        return NULL; /* libppw's __kmpc_fork_call records the regions */
    return &result;
}
