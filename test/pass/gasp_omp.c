/* GASP events around the libomp entry points clang lowers OpenMP to
 * (check_gasp.sh ir, FileCheck, -fopenmp at -O0 and -O2): the directive's
 * line and column, the tag, and the table's operands. */
#include <omp.h>
#include <stdio.h>

int main(void)
{
    int x = 0, n = 41;
    omp_lock_t lock;
    omp_init_lock(&lock);
    // __kmpc_fork_call forwards the outlined function; it returns nothing.
    // CHECK: @gasp_event_notify(ptr null, i32 1073743024, i32 0, ptr [[FILE:@__ppw_gasp_file[.0-9]*]], i32 [[@LINE+3]], i32 1, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}, i64 ptrtoint (ptr @main.omp_outlined to i64)), !dbg
    // CHECK: call {{.*}} @__kmpc_fork_call(
    // CHECK: @gasp_event_notify(ptr null, i32 1073743024, i32 1, ptr [[FILE]], i32 [[@LINE+1]], i32 1, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}, i64 ptrtoint (ptr @main.omp_outlined to i64)), !dbg
#pragma omp parallel
    {
        // __kmpc_critical and __kmpc_end_critical forward the lock's name.
        // CHECK: @gasp_event_notify(ptr null, i32 1073743026, i32 0, ptr [[FILE]], i32 [[@LINE+3]], i32 1, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}, i64 ptrtoint (ptr @.gomp_critical_user_.var to i64)), !dbg
        // CHECK: call void @__kmpc_critical(
        // CHECK: @gasp_event_notify(ptr null, i32 1073743026, i32 1, ptr [[FILE]], i32 [[@LINE+1]], i32 1, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}, i64 ptrtoint (ptr @.gomp_critical_user_.var to i64)), !dbg
#pragma omp critical
        // CHECK: @gasp_event_notify(ptr null, i32 1073743027, i32 0, ptr [[FILE]], i32 [[@LINE+3]], i32 9, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}, i64 ptrtoint (ptr @.gomp_critical_user_.var to i64)), !dbg
        // CHECK: call void @__kmpc_end_critical(
        // CHECK: @gasp_event_notify(ptr null, i32 1073743027, i32 1, ptr [[FILE]], i32 [[@LINE+1]], i32 9, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}, i64 ptrtoint (ptr @.gomp_critical_user_.var to i64)), !dbg
        x++;
        // An explicit barrier: no operands.
        // CHECK: @gasp_event_notify(ptr null, i32 1073743025, i32 0, ptr [[FILE]], i32 [[@LINE+3]], i32 1, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}), !dbg
        // CHECK: call void @__kmpc_barrier(
        // CHECK: @gasp_event_notify(ptr null, i32 1073743025, i32 1, ptr [[FILE]], i32 [[@LINE+1]], i32 1, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}), !dbg
#pragma omp barrier
#pragma omp single
        {
            // __kmpc_omp_task forwards the task; END adds its i32 result.
            // CHECK: @gasp_event_notify(ptr null, i32 1073743028, i32 0, ptr [[FILE]], i32 [[@LINE+3]], i32 1, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}, i64 [[TASK:%[0-9]+]]), !dbg
            // CHECK: call i32 @__kmpc_omp_task(
            // CHECK: @gasp_event_notify(ptr null, i32 1073743028, i32 1, ptr [[FILE]], i32 [[@LINE+1]], i32 1, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}, i64 {{%[0-9]+}}, i64 {{%[0-9]+}}), !dbg
#pragma omp task shared(x) firstprivate(n)
            x += n;
            // CHECK: @gasp_event_notify(ptr null, i32 1073743029, i32 0, ptr [[FILE]], i32 [[@LINE+3]], i32 1, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}), !dbg
            // CHECK: call i32 @__kmpc_omp_taskwait(
            // CHECK: @gasp_event_notify(ptr null, i32 1073743029, i32 1, ptr [[FILE]], i32 [[@LINE+1]], i32 1, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}, i64 {{%[0-9]+}}), !dbg
#pragma omp taskwait
        }
        // The implicit barrier that ends the single construct, at its pragma.
        // CHECK: call void @__kmpc_end_single(
        // CHECK: @gasp_event_notify(ptr null, i32 1073743025, i32 0, ptr [[FILE]], i32 [[@LINE-15]], i32 19, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}), !dbg
        // CHECK: call void @__kmpc_barrier(
        // omp_set_lock and omp_unset_lock forward the lock.
        // CHECK: @gasp_event_notify(ptr null, i32 1073743031, i32 0, ptr [[FILE]], i32 [[@LINE+3]], i32 9, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}, i64 {{%[0-9]+}}), !dbg
        // CHECK: call void @omp_set_lock(
        // CHECK: @gasp_event_notify(ptr null, i32 1073743031, i32 1, ptr [[FILE]], i32 [[@LINE+1]], i32 9, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}, i64 {{%[0-9]+}}), !dbg
        omp_set_lock(&lock);
        // CHECK: @gasp_event_notify(ptr null, i32 1073743032, i32 0, ptr [[FILE]], i32 [[@LINE+3]], i32 9, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}, i64 {{%[0-9]+}}), !dbg
        // CHECK: call void @omp_unset_lock(
        // CHECK: @gasp_event_notify(ptr null, i32 1073743032, i32 1, ptr [[FILE]], i32 [[@LINE+1]], i32 9, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}, i64 {{%[0-9]+}}), !dbg
        omp_unset_lock(&lock);
    }
    omp_destroy_lock(&lock);
    printf("%d\n", x);
    return 0;
}
