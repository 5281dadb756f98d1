/* GASP events around library calls (check_gasp.sh ir, FileCheck): START
 * before and END after every wrapped call, with the row's tag, the call's
 * own line and column, and the operands the table forwards (END adds the
 * result), each widened to i64.  Built at -O0 and -O2 with the default
 * options, which wrap calls but leave function entry and exit alone. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

// One private string per file, one weak tool, one constructor per module.
// CHECK: [[FILE:@__ppw_gasp_file[.0-9]*]] = private constant {{.*}} c"{{.*}}gasp_calls.c\00"
// CHECK-NOT: __ppw_gasp_func
// Every wrapped call has a site record, its gate open (ppw/gasp.h); an
// allocation site also has its per-thread countdown.
// CHECK: @__ppw_gasp_site{{[.0-9]*}} = private global { i32, i32 } { i32 1, i32 0 }, align 8
// CHECK: @__ppw_gasp_countdown{{[.0-9]*}} = internal thread_local global i32 1
// CHECK: @llvm.global_ctors = appending global {{.*}} { i32 101, ptr @__ppw_gasp_init, ptr null }

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long total;
static long *volatile keep;

// CHECK-LABEL: define {{.*}} @worker(
// The default (inst) has no GASP_C_FUNC events.
// CHECK-NOT: i32 1000,
void *worker(void *arg)
{
    long *values = arg;
    // CHECK: [[ON:%[0-9]+]] = icmp ne ptr @gasp_event_notify, null
    // A lock's site goes quiet too when the tool throttles it: its
    // countdown runs first, and only a call it lets through tests [[ON]].
    // CHECK: load i32, ptr {{@__ppw_gasp_countdown[.0-9]*}}
    // CHECK: and i1 [[ON]],
    // CHECK: call void (ptr, i32, i32, ptr, i32, i32, ...) @gasp_event_notify(ptr null, i32 1073742926, i32 0, ptr [[FILE]], i32 [[@LINE+3]], i32 5, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}, i64 ptrtoint (ptr @lock to i64)), !dbg
    // CHECK: call {{.*}}i32 @pthread_mutex_lock(ptr {{.*}}@lock)
    // CHECK: @gasp_event_notify(ptr null, i32 1073742926, i32 1, ptr [[FILE]], i32 [[@LINE+1]], i32 5, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}, i64 ptrtoint (ptr @lock to i64), i64 {{[^,]+}}), !dbg
    pthread_mutex_lock(&lock);
    total += values[0];
    // CHECK: @gasp_event_notify(ptr null, i32 1073742928, i32 0, ptr [[FILE]], i32 [[@LINE+3]], i32 5, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}, i64 ptrtoint (ptr @lock to i64)), !dbg
    // CHECK: call {{.*}}i32 @pthread_mutex_unlock(ptr {{.*}}@lock)
    // CHECK: @gasp_event_notify(ptr null, i32 1073742928, i32 1, ptr [[FILE]], i32 [[@LINE+1]], i32 5, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}, i64 ptrtoint (ptr @lock to i64), i64 {{[^,]+}}), !dbg
    pthread_mutex_unlock(&lock);
    // CHECK-NOT: i32 1000,
    // CHECK: ret ptr null
    return NULL;
}

// CHECK-LABEL: define {{.*}} @main(
int main(int argc, char **argv)
{
    (void)argv;
    size_t n = (size_t)argc * 16;
    // malloc(size_t): START carries the size; END the size and the pointer.
    // The site's countdown is stepped first, down to 0 (so that the
    // decrement's own flags decide the branch), and the call as written is
    // the hot path.  Only when the countdown runs out does a copy of the
    // call run on the cold path: the gate read (once, atomically), the
    // countdown reset, START, the call, END with the same site and gate.
    // The two results meet in a phi.
    // CHECK: [[LEFT:%[0-9]+]] = load i32, ptr [[COUNTDOWN:@__ppw_gasp_countdown[.0-9]*]]
    // CHECK: [[NEXT:%[0-9]+]] = sub i32 [[LEFT]], 1
    // CHECK: store i32 [[NEXT]], ptr [[COUNTDOWN]]
    // CHECK: [[DUE:%[0-9]+]] = icmp eq i32 [[NEXT]], 0
    // CHECK: br i1 [[DUE]], label {{%[0-9]+}}, label %[[HOT:[0-9]+]], {{.*}}!prof
    // CHECK: [[GATE:%[0-9]+]] = load atomic i32, ptr [[SITE:@__ppw_gasp_site[.0-9]*]] monotonic
    // CHECK: store i32 {{%[0-9]+}}, ptr [[COUNTDOWN]]
    // CHECK: [[READ:%[0-9]+]] = sext i32 [[GATE]] to i64
    // CHECK: @gasp_event_notify(ptr null, i32 1073742825, i32 0, ptr [[FILE]], i32 [[@LINE+10]], i32 20, ptr [[SITE]], i64 [[READ]], i64 [[SIZE:%[0-9]+]]), !dbg
    // CHECK: [[COLD:%[0-9]+]] = {{.*}}call {{.*}}ptr @malloc(i64 {{.*}}[[SIZE]])
    // CHECK: @gasp_event_notify(ptr null, i32 1073742825, i32 1, ptr [[FILE]], i32 [[@LINE+8]], i32 20, ptr [[SITE]], i64 [[READ]], i64 [[SIZE]], i64 {{[^,]+}}), !dbg
    // The hot path: the call alone.
    // CHECK: [[HOT]]:
    // CHECK-NEXT: [[WARM:%[0-9]+]] = {{.*}}call {{.*}}ptr @malloc(i64 {{.*}}[[SIZE]])
    // CHECK-NEXT: br label
    // CHECK: phi ptr [ [[WARM]], %[[HOT]] ], [ [[COLD]], {{%[0-9]+}} ]
    // CHECK-NOT: @gasp_event_notify
    // CHECK: load i32, ptr {{@__ppw_gasp_countdown[.0-9]*}}
    long *values = malloc(n * sizeof *values);
    // calloc(nmemb, size): two operands, then the pointer.
    // CHECK: @gasp_event_notify(ptr null, i32 1073742828, i32 0, ptr [[FILE]], i32 [[@LINE+3]], i32 19, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{[^,]+}}, i64 [[NMEMB:%[0-9]+]], i64 8), !dbg
    // CHECK: call {{.*}}ptr @calloc(
    // CHECK: @gasp_event_notify(ptr null, i32 1073742828, i32 1, ptr [[FILE]], i32 [[@LINE+1]], i32 19, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{[^,]+}}, i64 [[NMEMB]], i64 8, i64 {{[^,]+}}), !dbg
    long *zeros = calloc(n, sizeof *zeros);
    keep = zeros;
    // realloc(ptr, size): the old pointer, the size, then the new pointer.
    // CHECK: @gasp_event_notify(ptr null, i32 1073742826, i32 0, ptr [[FILE]], i32 [[@LINE+3]], i32 14, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{[^,]+}}, i64 {{[^,]+}}, i64 [[RSIZE:%[0-9]+]]), !dbg
    // CHECK: call {{.*}}ptr @realloc(
    // CHECK: @gasp_event_notify(ptr null, i32 1073742826, i32 1, ptr [[FILE]], i32 [[@LINE+1]], i32 14, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{[^,]+}}, i64 {{[^,]+}}, i64 [[RSIZE]], i64 {{[^,]+}}), !dbg
    values = realloc(values, 2 * n * sizeof *values);
    values[0] = 41;
    pthread_t thread;
    // pthread_create forwards the start routine.
    // CHECK: @gasp_event_notify(ptr null, i32 1073742924, i32 0, ptr [[FILE]], i32 [[@LINE+3]], i32 5, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}, i64 ptrtoint (ptr @worker to i64)), !dbg
    // CHECK: call {{.*}}i32 @pthread_create(
    // CHECK: @gasp_event_notify(ptr null, i32 1073742924, i32 1, ptr [[FILE]], i32 [[@LINE+1]], i32 5, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}, i64 ptrtoint (ptr @worker to i64), i64 {{[^,]+}}), !dbg
    pthread_create(&thread, NULL, worker, values);
    // pthread_join forwards the thread id (an unsigned long: no extension).
    // CHECK: @gasp_event_notify(ptr null, i32 1073742925, i32 0, ptr [[FILE]], i32 [[@LINE+3]], i32 5, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}, i64 [[THREAD:%[0-9]+]]), !dbg
    // CHECK: call {{.*}}i32 @pthread_join(i64 {{.*}}[[THREAD]],
    // CHECK: @gasp_event_notify(ptr null, i32 1073742925, i32 1, ptr [[FILE]], i32 [[@LINE+1]], i32 5, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{%[0-9]+}}, i64 [[THREAD]], i64 {{[^,]+}}), !dbg
    pthread_join(thread, NULL);
    // Unwrapped calls stay as they were.
    // CHECK-NOT: @gasp_event_notify
    // CHECK: call {{.*}} @printf(
    printf("%ld\n", total + argc);
    // free(ptr): no result, so START and END both carry one operand.
    // CHECK: @gasp_event_notify(ptr null, i32 1073742827, i32 0, ptr [[FILE]], i32 [[@LINE+3]], i32 5, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{[^,]+}}, i64 {{[^,]+}}), !dbg
    // CHECK: call void @free(
    // CHECK: @gasp_event_notify(ptr null, i32 1073742827, i32 1, ptr [[FILE]], i32 [[@LINE+1]], i32 5, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{[^,]+}}, i64 {{[^,]+}}), !dbg
    free(values);
    // CHECK-NOT: i32 1000,
    // CHECK: ret i32 0
    return 0;
}

// CHECK: declare extern_weak void @gasp_event_notify(ptr, i32, i32, ptr, i32, i32, ...)
// CHECK: declare extern_weak ptr @gasp_init(i32, ptr, ptr)
// CHECK: define internal void @__ppw_gasp_init()
// CHECK: icmp ne ptr @gasp_init, null
// CHECK: call ptr @gasp_init(i32 64, ptr null, ptr null)
