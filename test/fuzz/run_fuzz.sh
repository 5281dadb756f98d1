#!/bin/bash
# Builds one libFuzzer target of ppw-blame's readers with clang (the
# configure-time PPW_CLANG, whatever CMAKE_C_COMPILER is), generates its
# seed corpus from the test-only writers, and fuzzes it for a bounded time.
#
#   test/fuzz/run_fuzz.sh TARGET BUILD_DIR SOURCE_DIR
#   TARGET: static | run | folded
#   env PPW_FUZZ_TIME   seconds of fuzzing (default 15)
#   env PPW_FUZZ_KEEP   1: keep and extend BUILD_DIR/test/fuzz/TARGET/corpus
#                       across runs (default: start from the seeds each time)
#
# Exit 0: no crash, leak, UBSan report or timeout; 1: one was found (the
# reproducer's path is printed) or the build failed; 77: clang has no
# libFuzzer runtime.  The last line gives executions per second.
set -uo pipefail

die() { echo "run_fuzz.sh: error: $*" >&2; exit 1; }
[ $# -eq 3 ] || die "usage: run_fuzz.sh static|run|folded BUILD_DIR SOURCE_DIR"
target=$1
build=$(cd "$2" && pwd) || die "no build directory $2"
src=$(cd "$3" && pwd) || die "no source directory $3"
time=${PPW_FUZZ_TIME:-15}
[[ $time =~ ^[1-9][0-9]*$ ]] || die "PPW_FUZZ_TIME must be a positive integer, not '$time'"

cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
clang=${PPW_CLANG:-$(cache PPW_CLANG)}
libelf=$(cache PPW_LIBELF)
libelf_inc=$(cache PPW_LIBELF_INCLUDE)
[ -n "$clang" ] && [ -x "$clang" ] || die "no clang (PPW_CLANG) in $build/CMakeCache.txt"
[ -n "$libelf" ] || die "no PPW_LIBELF in $build/CMakeCache.txt"

b=$src/blame
u=$src/test/unit
case $target in
static) sources=("$b/read_graph.c" "$b/read_elf.c" "$u/chunk_writer.c" "$u/sample_graph.c") ;;
run)    sources=("$b/read_run.c" "$b/read_run_records.c" "$b/read_elf.c" "$u/chunk_writer.c"
                 "$u/run_writer.c") ;;
folded) sources=("$b/folded.c" "$b/stacks.c" "$b/strmap.c" "$b/read_graph.c" "$b/read_elf.c") ;;
*) die "unknown target '$target' (static, run or folded)" ;;
esac
sources=("$src/test/fuzz/fuzz_$target.c" "$src/test/fuzz/fuzz_io.c" "${sources[@]}"
         "$b/arena.c" "$b/error.c")

work=$build/test/fuzz/$target
mkdir -p "$work" || die "cannot create $work"
# One run per target and build tree at a time (ctest and bench/fuzz/run
# share the directory): wait for the other.
if command -v flock > /dev/null; then
    exec 9> "$work/lock" && flock 9 || die "cannot lock $work/lock"
fi
flags=(-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -fno-omit-frame-pointer -g -O1 -std=c11 -Wall -Wextra -Werror)

# libFuzzer present?  (Debian: libclang-rt-19-dev.)
probe=$work/probe
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
    'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
    > "$probe.c"
if ! "$clang" "${flags[@]}" "$probe.c" -o "$probe" 2> "$probe.log"; then
    echo "SKIP: $clang -fsanitize=fuzzer does not link (install libclang-rt-19-dev):"
    head -3 "$probe.log"
    exit 77
fi

# Build unless the binary is newer than every source and header it uses.
bin=$work/fuzz_$target
if [ ! -x "$bin" ] || [ -n "$(find "${sources[@]}" "$b" "$u" "$src/include" "$src/test/fuzz" \
        -name '*.[ch]' -newer "$bin" -print -quit)" ]; then
    "$clang" "${flags[@]}" -I"$b" -I"$u" -I"$src/include" -I"$libelf_inc" "${sources[@]}" \
        "$libelf" -lm -ldl -Wl,--build-id -o "$bin" || die "cannot build $bin"
fi

lib=$build/lib
# A real run: seed_prog.c built with ppw-cc and run once per build tree,
# again when libppw, ppw-cc or the program changed (ctest may start the
# three targets at once: one makes it).
real=$build/test/fuzz/real
make_real() {
    [ -s "$real/done" ] && [ -z "$(find -L "$lib/libppw.so" "$lib/ppw.so" "$src/test/fuzz/seed_prog.c" \
        -newer "$real/done" -print -quit)" ] && return
    rm -rf "$real" && mkdir -p "$real" || return 1
    "$build/bin/ppw-cc" -O1 -fopenmp -I"$src/include" "$src/test/fuzz/seed_prog.c" \
        -o "$real/seed_prog" > "$real/build.log" 2>&1 || return 1
    (cd "$real" && PPW_MODE=profile,trace PPW_PERIOD=100us OMP_NUM_THREADS=2 \
        PPW_OUTPUT="$real/run" ./seed_prog > run.out 2>&1) || return 1
    echo ok > "$real/done"
}
(
    flock 8 || exit 1
    make_real
) 8> "$build/test/fuzz/real.lock" || { cat "$real"/*.log "$real/run.out" 2>/dev/null | head -20
                                        die "cannot make the real run in $real"; }
# Seeds from the test-only writers (the target writes them itself: the run
# seeds carry its own build-id), and the real run's files (fuzz_run.c).
seeds=$work/seeds
rm -rf "$seeds" "$work/artifacts" && mkdir -p "$seeds" "$work/artifacts" ||
    die "cannot create $work's directories"
export PPW_FUZZ_REAL_RUN=$real/run
PPW_FUZZ_SEEDS=$seeds "$bin" > "$work/seeds.log" 2>&1 || {
    cat "$work/seeds.log"; die "$bin could not write its seeds"; }
blame=$build/bin/ppw-blame
case $target in
static) objcopy --dump-section .ppw.blame="$seeds/real-section" "$real/seed_prog" "$work/objcopy.out" ;;
run)    true ;; # the target reads the run itself (PPW_FUZZ_REAL_RUN)
folded) "$blame" export --to folded "$real/run" --binary "$real/seed_prog" -o "$seeds/real" &&
        "$blame" export --to folded --variables "$real/run" --binary "$real/seed_prog" \
            -o "$seeds/real-variables" &&
        "$blame" export --to folded --no-locations "$real/run" --binary "$real/seed_prog" \
            -o "$seeds/real-names" ;;
esac || die "cannot make the $target seeds from the real run in $real"
empty=$(find "$seeds" -type f -empty)
[ -z "$empty" ] || die "empty seeds: $empty"

corpus=$work/corpus
[ "${PPW_FUZZ_KEEP:-0}" = 1 ] || rm -rf "$corpus"
mkdir -p "$corpus"

# The targets write a file per input: in memory when /dev/shm allows (ten
# times the executions of a disk), removed whatever happens.
tmp=$(mktemp -d /dev/shm/ppw-fuzz.XXXXXX 2>/dev/null || mktemp -d "$work/tmp.XXXXXX") ||
    die "cannot create a temporary directory"
trap 'rm -rf "$tmp"' EXIT

echo "fuzz_$target: ${time}s, seeds $(ls "$seeds" | wc -l), log $work/fuzz.log"
TMPDIR=$tmp "$bin" -max_total_time="$time" -timeout=5 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$corpus" "$seeds" \
    > "$work/fuzz.log" 2>&1
rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log")
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/fuzz.log")
cov=$(grep -aoE 'cov: [0-9]+' "$work/fuzz.log" | tail -1)
if [ $rc -ne 0 ]; then
    tail -60 "$work/fuzz.log"
    for a in "$work"/artifacts/*; do
        [ -e "$a" ] && echo "fuzz_$target: FAILED: reproducer $a (replay: $bin $a)"
    done
    echo "fuzz_$target: FAILED (exit $rc); full log $work/fuzz.log"
    exit 1
fi
echo "fuzz_$target: ok: ${execs:-?} executions, ${rate:-?} exec/s, ${cov:-cov: ?}"
