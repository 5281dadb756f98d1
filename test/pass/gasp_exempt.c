/* no_instrument_function (check_gasp.sh ir, through ppw-cc --inst-functions
 * -O0): clang emits nothing for the attribute itself, so ppw-cc adds
 * -finstrument-functions-after-inlining, whose attribute clang gives every
 * other function; the pass reads it, skips the function's entry and exit
 * events (its library calls keep theirs), and removes the attributes, so no
 * __cyg_profile call follows. */
#include <stdlib.h>

// CHECK-NOT: "instrument-function-
// CHECK-LABEL: define {{.*}}i32 @quiet(
// CHECK-NOT: i32 1007,
// CHECK: @gasp_event_notify(ptr null, i32 1073742825, i32 0,
// CHECK: @gasp_event_notify(ptr null, i32 1073742827, i32 1,
// CHECK-NOT: i32 1007,
// CHECK: ret i32
__attribute__((no_instrument_function)) int quiet(int x)
{
    void *p = malloc((size_t)x);
    free(p);
    return x + 1;
}

// CHECK-LABEL: define {{.*}}i32 @loud(
// CHECK: @gasp_event_notify(ptr null, i32 1007, i32 0,
// CHECK: @gasp_event_notify(ptr null, i32 1007, i32 1,
// CHECK: ret i32
int loud(int x)
{
    return x * 2;
}

// CHECK-LABEL: define {{.*}}i32 @main(
// CHECK: @gasp_event_notify(ptr null, i32 1007, i32 0,
// CHECK-NOT: __cyg_profile
// CHECK-NOT: "instrument-function-
int main(int argc, char **argv)
{
    (void)argv;
    return loud(quiet(argc)) - 4;
}
