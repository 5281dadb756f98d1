/* Late insertion (check_gasp.sh ir, FileCheck, PPW_PASS_OPTIONS=
 * inst-functions): at -O2 the pass runs after inlining, so a small static
 * function inlined into main has no function events of its own, and the
 * malloc it calls reports its own line and column inside it.  At -O0
 * nothing is inlined and the function has its events. */
#include <stdio.h>
#include <stdlib.h>

static int *volatile keep; /* the buffer escapes, so -O2 keeps malloc */

// The funcsig strings: one per instrumented function.
// O0-DAG: [[MAKE:@__ppw_gasp_func[.0-9]*]] = private constant [5 x i8] c"make\00"
// CHECK-DAG: [[MAIN:@__ppw_gasp_func[.0-9]*]] = private constant [5 x i8] c"main\00"
// O2-NOT: c"make\00"

static int *make(int n);

// CHECK-LABEL: define {{.*}}i32 @main(
// CHECK: @gasp_event_notify(ptr null, i32 1007, i32 0, ptr [[FILE:@__ppw_gasp_file[.0-9]*]], i32 [[@LINE+6]], i32 0, ptr [[MAIN]], ptr {{@__ppw_gasp_gate[.0-9]*}}), !dbg [[MAIN_ENTRY:![0-9]+]]
// O2: @gasp_event_notify(ptr null, i32 1073742825, i32 0, ptr [[FILE]], i32 [[@LINE+27]], i32 12, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{[^,]+}}, i64 {{[^,]+}}), !dbg
// O2: call {{.*}}@malloc(
// O2: @gasp_event_notify(ptr null, i32 1073742825, i32 1, ptr [[FILE]], i32 [[@LINE+25]], i32 12, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{[^,]+}}, i64 {{[^,]+}}, i64 {{[^,]+}}), !dbg
// CHECK: @gasp_event_notify(ptr null, i32 1007, i32 1, ptr [[FILE]], i32 [[@LINE+2]], i32 0, ptr [[MAIN]], ptr {{@__ppw_gasp_gate[.0-9]*}}), !dbg
// CHECK-NEXT: br label
int main(int argc, char **argv)
{
    (void)argv;
    int *p = make(argc);
    p[0] = argc;
    keep = p;
    printf("%d\n", p[0]);
    free(p);
    return 0;
}

// O2-NOT: define {{.*}}@make(
// O0-LABEL: define internal ptr @make(
// O0: @gasp_event_notify(ptr null, i32 1007, i32 0, ptr [[FILE]], i32 [[@LINE+6]], i32 0, ptr [[MAKE]], ptr {{@__ppw_gasp_gate[.0-9]*}}), !dbg [[MAKE_ENTRY:![0-9]+]]
// O0: @gasp_event_notify(ptr null, i32 1073742825, i32 0, ptr [[FILE]], i32 [[@LINE+8]], i32 12, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{[^,]+}}, i64 {{[^,]+}}), !dbg
// O0: call {{.*}}@malloc(
// O0: @gasp_event_notify(ptr null, i32 1073742825, i32 1, ptr [[FILE]], i32 [[@LINE+6]], i32 12, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{[^,]+}}, i64 {{[^,]+}}, i64 {{[^,]+}}), !dbg
// O0: @gasp_event_notify(ptr null, i32 1007, i32 1, ptr [[FILE]], i32 [[@LINE+2]], i32 0, ptr [[MAKE]], ptr {{@__ppw_gasp_gate[.0-9]*}}), !dbg
// O0-NEXT: br label
static int *make(int n)
{
    // The call's own line and column, also once inlined into main.
    return malloc((size_t)n * sizeof(int));
}

// The entry event's location is the function's scope line, column 0 (not printed).
// CHECK: [[MAIN_ENTRY]] = !DILocation(line: [[@LINE-25]], scope:
// O0: [[MAKE_ENTRY]] = !DILocation(line: [[@LINE-7]], scope:
