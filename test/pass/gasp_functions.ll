; GASP_C_FUNC events (check_gasp.sh ir): opt -passes=ppw-instrument with
; PPW_PASS_OPTIONS=inst-functions, then FileCheck.  IR rather than C because
; clang merges returns: here a function really has three.  No debug info, so
; the events carry a null file and line 0, and the function's symbol.

; CHECK-DAG: [[THREE:@__ppw_gasp_func[.0-9]*]] = private constant [6 x i8] c"three\00"
; CHECK-DAG: [[CALLER:@__ppw_gasp_func[.0-9]*]] = private constant [7 x i8] c"caller\00"

; One START at entry, one END before each of the three returns, all with the
; same funcsig pointer.
; CHECK-LABEL: define i32 @three(
; CHECK: [[ON:%.+]] = icmp ne ptr @gasp_event_notify, null
; The function's enable switch is read once, atomically, and gates every
; function event (GASP_C_FUNC_GATED); library-call events use [[ON]] alone.
; CHECK-NEXT: [[GATE:%.+]] = load atomic i8, ptr @__ppw_gasp_gate{{[.0-9]*}} monotonic
; CHECK-NEXT: [[OPEN:%.+]] = icmp ne i8 [[GATE]], 0
; CHECK-NEXT: [[FUNC_ON:%.+]] = and i1 [[ON]], [[OPEN]]
; CHECK-NEXT: br i1 [[FUNC_ON]], label %[[START:.+]], label
; CHECK: [[START]]:
; CHECK-NEXT: call void (ptr, i32, i32, ptr, i32, i32, ...) @gasp_event_notify(ptr null, i32 1007, i32 0, ptr null, i32 0, i32 0, ptr [[THREE]], ptr {{@__ppw_gasp_gate[.0-9]*}})
; CHECK: icmp slt i32 %x, 0
; CHECK: @gasp_event_notify(ptr null, i32 1007, i32 1, ptr null, i32 0, i32 0, ptr [[THREE]], ptr {{@__ppw_gasp_gate[.0-9]*}})
; CHECK: ret i32 -1
; CHECK: @gasp_event_notify(ptr null, i32 1007, i32 1, ptr null, i32 0, i32 0, ptr [[THREE]], ptr {{@__ppw_gasp_gate[.0-9]*}})
; CHECK: ret i32 0
; CHECK: @gasp_event_notify(ptr null, i32 1007, i32 1, ptr null, i32 0, i32 0, ptr [[THREE]], ptr {{@__ppw_gasp_gate[.0-9]*}})
; CHECK: ret i32 1
; CHECK-NOT: @gasp_event_notify
; CHECK-LABEL: define i32 @forward(
define i32 @three(i32 %x) {
entry:
  %negative = icmp slt i32 %x, 0
  br i1 %negative, label %minus, label %rest
minus:
  ret i32 -1
rest:
  %is_zero = icmp eq i32 %x, 0
  br i1 %is_zero, label %zero, label %plus
zero:
  ret i32 0
plus:
  ret i32 1
}

; Nothing may come between a musttail call and its return: no exit event
; fits, so the function gets no entry event either, and a musttail call to a
; wrapped function is left alone.
; CHECK-NOT: @gasp_event_notify
; CHECK: musttail call i32 @three(i32 %x)
; CHECK-NEXT: ret i32
define i32 @forward(i32 %x) {
  %result = musttail call i32 @three(i32 %x)
  ret i32 %result
}

; CHECK-LABEL: define ptr @allocate(
; CHECK-NOT: i32 1001,
; CHECK: musttail call ptr @malloc(i64 %size)
; CHECK-NEXT: ret ptr
define ptr @allocate(i64 %size) {
  %pointer = musttail call ptr @malloc(i64 %size)
  ret ptr %pointer
}

; Naked functions hold only inline assembly.
; CHECK-LABEL: define void @bare(
; CHECK-NEXT: call void asm sideeffect "ret", ""()
; CHECK-NEXT: unreachable
define void @bare() naked {
  call void asm sideeffect "ret", ""()
  unreachable
}

; The tool's own functions and the runtime's prefix are left alone, calls
; included (probes there would recurse into the tool).
; CHECK-LABEL: define void @gasp_helper(
; CHECK-NOT: @gasp_event_notify
; CHECK: call void @free(
; CHECK-NEXT: ret void
define void @gasp_helper(ptr %p) {
  call void @free(ptr %p)
  ret void
}

; CHECK-LABEL: define void @__ppw_helper(
; CHECK-NOT: @gasp_event_notify
; CHECK: ret void
define void @__ppw_helper() {
  ret void
}

; available_externally bodies are emitted by another unit.
; CHECK-LABEL: define available_externally i32 @elsewhere(
; CHECK-NOT: @gasp_event_notify
; CHECK: ret i32 7
define available_externally i32 @elsewhere() {
  ret i32 7
}

; Function events enclose the call events, in order.
; CHECK-LABEL: define void @caller(
; CHECK: @gasp_event_notify(ptr null, i32 1007, i32 0, ptr null, i32 0, i32 0, ptr [[CALLER]], ptr {{@__ppw_gasp_gate[.0-9]*}})
; CHECK: @gasp_event_notify(ptr null, i32 1073742827, i32 0, ptr null, i32 0, i32 0, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{[^,]+}}, i64 %{{.+}})
; CHECK: call void @free(ptr %p)
; CHECK: @gasp_event_notify(ptr null, i32 1073742827, i32 1, ptr null, i32 0, i32 0, ptr {{@__ppw_gasp_site[.0-9]*}}, i64 {{[^,]+}}, i64 %{{.+}})
; CHECK: @gasp_event_notify(ptr null, i32 1007, i32 1, ptr null, i32 0, i32 0, ptr [[CALLER]], ptr {{@__ppw_gasp_gate[.0-9]*}})
; CHECK-NEXT: br label
; CHECK: ret void
define void @caller(ptr %p) {
  call void @free(ptr %p)
  ret void
}

declare ptr @malloc(i64)
declare void @free(ptr)

; CHECK: declare extern_weak void @gasp_event_notify(ptr, i32, i32, ptr, i32, i32, ...)
; CHECK: define internal void @__ppw_gasp_init()
