#!/bin/bash
# Realistic programs end to end (ctest programs.<PROGRAM>.<LEVEL>): build
# test/programs/PROGRAM.c with ppw-cc at -LEVEL with OpenMP, run it sampled
# for real on 2 threads, and check what `report` says about its data
# against what its structure implies (docs/testing.md, "Sampled numbers").
#
# Each check compares a variable's samples with the samples of the lines
# that, by the blame rules and the program's data flow, blame it (counted
# by `lines` from the same run): exact but for the samples the sampled
# address gives no line (line 0, prologues), allowed at 1% of them and 4
# sd.  Every number is printed, pass or fail.
#
#   check_programs.sh PROGRAM LEVEL BUILD_DIR
set -uo pipefail
program=$1 level=$2 build=$(cd "$3" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
SAMPLING_LIB=$here/../lib
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ppw-programs-$program-$level.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
blame=$build/bin/ppw-blame
failures=0
fail() { echo "FAIL: $program -$level: $*" >&2; failures=$((failures + 1)); }
skip() { echo "SKIP: $program -$level: $*" >&2; exit 77; }
. "$SAMPLING_LIB/sampling.sh"

if nm -D --undefined-only "$build/lib/ppw.so" | grep -q __asan_; then
    skip "the plugin is ASan-built (it cannot load into clang)"
fi
command -v jq >/dev/null || skip "jq not found"

# The work each program runs with (its default sizes, chosen for ~1,000
# samples at -O2 on 2 threads), and 4 times as much when a run falls short.
case $program in
lookup) args=(-l 800000) more=(-l 3200000) ;;
cg) args=(-n 14000 -i 150) more=(-n 14000 -i 600) ;;
particles) args=(200 10) more=(800 10) ;;
amr_alloc) args=(150) more=(600) ;;
threadprivate) args=(-n 25000 -p 60) more=(-n 25000 -p 240) ;;
chain) args=(400 800) more=(1600 800) ;;
*) echo "check_programs.sh: unknown program $program" >&2; exit 2 ;;
esac

"$build/bin/ppw-cc" "-$level" -fopenmp "$here/$program.c" -o prog -lm 2>cc.log ||
    { cat cc.log; fail "ppw-cc"; exit 1; }
clang_plain=$(sed -n 's/^PPW_CLANG:FILEPATH=//p' "$build/CMakeCache.txt")
"${clang_plain:-clang-19}" "-$level" -fopenmp "$here/$program.c" -o plain -lm 2>/dev/null ||
    skip "the plain build failed"

# run ARGS...: the instrumented program, sampled, into run/; its output
# must be the plain build's.
run() {
    rm -rf run
    OMP_NUM_THREADS=2 OMP_PROC_BIND=false PPW_OUTPUT=run ./prog "$@" >out.txt 2>err.txt ||
        { cat err.txt; fail "the run failed"; exit 1; }
    OMP_NUM_THREADS=2 ./plain "$@" >plain.txt 2>/dev/null
    cmp -s out.txt plain.txt || fail "output differs from the plain build's"
}
run "${args[@]}"
n=$("$blame" report run --format json | jq .total_samples)
if ((n < 400)); then
    echo "note: $n samples, fewer than 400: again with 4 times the work"
    run "${more[@]}"
    n=$("$blame" report run --format json | jq .total_samples)
    ((n >= 400)) || skip "$n samples with 4 times the work"
fi
"$blame" report run --format json --top 0 >blame.json || fail "report: $(cat blame.json)"
"$blame" report run --format json --top 0 --view access >access.json || fail "report --view access"
"$blame" lines run --format json --top 0 >lines.json || fail "lines"
echo "$program -$level: $n samples"
# No sample stays at line 0 (exact): every function of these programs has
# source lines, and an address the line table gives line 0 takes the
# frames of the closest one in its function with a line (docs/ppw-blame.md,
# "Symbols").  Without that rule lookup at -O2 had 8.5% of its samples
# there, most on grid_search's load of grid[mid].energy.
jq -e '.unattributed.blame.line_0 == 0 and .unattributed.access.line_0 == 0' access.json >/dev/null ||
    fail "samples at line 0: $(jq -c .unattributed access.json)"

# on_lines FIRST LAST [FIRST LAST...]: the samples taken on the program's
# source lines FIRST..LAST (and the other ranges): the stacks, in the run's
# folded export, whose innermost frame is there (not in a library or ppw
# the line calls).
"$blame" export run --to folded -o run.folded || fail "export --to folded"
on_lines() {
    awk -v file="$program.c" -v ranges="$*" '
        BEGIN { n = split(ranges, r, " ") }
        /^#/ { next }
        {
            count = $NF; stack = $0; sub(/ [0-9]+$/, "", stack)
            k = split(stack, frames, ";"); leaf = frames[k]
            if (leaf !~ ("/" file ":[0-9]+:[0-9]+$") || leaf ~ /@@/) next
            m = split(leaf, parts, ":"); line = parts[m - 1] + 0
            for (i = 1; i < n; i += 2)
                if (line >= r[i] && line <= r[i + 1]) { total += count; break }
        }
        END { print total + 0 }' run.folded
}
# samples_of FUNCTION NAME [FILE]: a variable's samples (FUNCTION null: a
# global).  A variable of FUNCTION's parallel region that a stack without
# its spawn chain (a worker's first instructions) shows as the region's own
# is the same data: its row is added.
samples_of() {
    jq --argjson f "$1" --arg v "$2" '[.variables[] | select(.name == $v and (.function == $f
        or ($f != null and (.function // "" | startswith($f + ".omp_outlined")))))
        | .samples] | add // 0' "${3:-blame.json}"
}
# at_least NAME OBSERVED LINES FROM: OBSERVED >= LINES less 1% at 4 sd
at_least() {
    echo "{\"n\": $n, \"observed\": $2, \"lines\": $3}" >check.json
    sampled "$1" check.json '{n, observed, op: ">=",
        threshold: (.lines - (.lines * 0.01 + 4 * ((.lines * 0.01) | sqrt))),
        from: "exact: '"$4"', less 1% without a line at 4 sd"}'
}
# at_most NAME OBSERVED PCT FROM: OBSERVED <= share_ceil(PCT, n) of n
at_most() {
    echo "{\"n\": $n, \"observed\": $2}" >check.json
    sampled "$1" check.json '{n, observed: (.observed / .n * 100), op: "<=",
        threshold: share_ceil('"$3"'; .n), from: "'"$4"'"}'
}

case $program in
lookup)
    # Every sample in the kernel (grid_search, micro_xs, macro_xs: lines
    # 217-259) blames the lookup's result: grid_search's result is idx in
    # micro_xs, from which low, high, f and xs_vector are computed after
    # the call; xs_vector is macro_xs's xs, from which macro_xs_vector is
    # computed; it is the loop's macro_xs_vector, from which max_idx, the
    # lookup's hash and the reduced verification are computed.  Not only
    # the scratch xs.
    kernel=$(on_lines 217 259)
    at_least "macro_xs_vector" "$(samples_of '"main"' macro_xs_vector)" "$kernel" \
        "the kernel's lines 217-259"
    at_least "verification" "$(samples_of '"main"' verification)" "$kernel" \
        "the kernel's lines 217-259"
    # The search reads .energy 11 times per nuclide, each a cache miss in
    # a 9 MiB table; the interpolation reads 10 values on the lines the
    # search just loaded: .energy is the most accessed data.
    top=$(jq -r '.variables[0].name' access.json)
    [ "$top" = "sd.nuclide_grid[].energy" ] ||
        fail "access: the top variable is $top, not sd.nuclide_grid[].energy"
    # The composition tables are written only in the set-up
    # (generate_materials, a few hundred draws, after generate_grids); the
    # kernel reads them for every nuclide (lines 251, 253-254) and a read
    # blames nothing: only samples under the set-up's functions can blame
    # them, measured from the run (1 to 2% of it), where a blamed read
    # would give them the kernel's ~85-95%.
    setup=$(awk '/^#/ { next } /(^|;)generate_(grids|materials)@/ { total += $NF }
        END { print total + 0 }' run.folded)
    for v in sd.num_nucs sd.mats sd.concs; do
        at_most "$v (read only in the kernel)" "$(samples_of '"main"' "$v")" \
            "$(jq -n "$setup / $n * 100")" \
            "share_ceil(set-up, n): $setup samples under generate_grids and generate_materials"
    done
    ;;
cg)
    # Every sample in the sparse product's loop (lines 212-216) blames q; dot(p, q)
    # is computed from q after the call, alpha from it, and the parallel
    # region that updates z from alpha writes the global z; main computes
    # norm_temp1, then zeta and x, from z after conj_grad (in the warm-up
    # as in the timed loop, lines 287-292 and 299-304): so zeta and x.
    product=$(on_lines 212 216)
    at_least "zeta" "$(samples_of '"main"' zeta)" "$product" "the sparse product's lines 212-216"
    at_least "x" "$(samples_of null x)" "$product" "the sparse product's lines 212-216"
    at_least "rnorm" "$(samples_of '"main"' rnorm)" "$product" "the sparse product's lines 212-216"
    # The verification (lines 312-314) compares zeta with a reference from
    # x: its outcome, main's verified, is computed from zeta and so from
    # every solve, and carries zeta's blame.
    at_least "verified" "$(samples_of '"main"' verified)" "$product" "the sparse product's lines 212-216"
    # The matrix is only read in the solve and written in make_matrix,
    # called from main's line 279: blamed for at most the samples whose
    # stacks pass through it and those on line 279, measured from the run.
    # Its work is well under 0.3% of the iterations, but its first touch of
    # 3.5 MB is not: under ASan, on a VM whose page faults trap to the host,
    # it took 1.2% of the samples.  Blamed for the reads, they would have
    # 70% (the sparse product).
    matrix=$(($(grep -E '(^|;)make_matrix@' run.folded | awk '{s += $NF} END {print s + 0}') +
        $(on_lines 279 279)))
    for v in a colidx rowstr; do
        at_most "$v (read only in the solve)" "$(samples_of null "$v")" \
            "$(jq -n "100 * $matrix / $n")" "share_ceil of make_matrix's $matrix samples, the only writer"
    done
    ;;
particles)
    # Every sample in the force loop's body (lines 137-168) blames the
    # force it computes, written to p[i].force: main's p[].force, a field
    # row at the default blame point.
    forces=$(on_lines 137 168)
    at_least "p[].force" "$(samples_of '"main"' 'p[].force')" "$forces" "the force loop's lines 137-168"
    jq -e '[.variables[] | select(.function == "main" and .name == "p[].force")
        | .kind == "field" and .type == "struct vec3"] == [true]' blame.json >/dev/null ||
        fail "p[].force is not main's field of type struct vec3"
    # Positions: lines 151-153 index p[i].pos and p[j].pos (their only
    # indexed accesses, so their whole samples), minimum_image (lines
    # 69-74) computes on d, bound to the positions, and box: d has at
    # least a third of each line's operands.
    distances=$(on_lines 151 153) image=$(on_lines 69 74)
    pos=$(jq '[.variables[] | select(.function == "main" and (.name | startswith("p[].pos")))
        | .access / 100 * '"$n"'] | add // 0' access.json)
    at_least "p[].pos (access)" "$pos" "$(jq -n "$distances + $image / 3")" \
        "lines 151-153 and a third of minimum_image's"
    ;;
amr_alloc)
    # These lines write the arrays blocks[b].array[v] points to, or the
    # pointers (a write's variable is blamed for its value, its address and
    # the conditions and loops it runs under): remap's loops (98-102,
    # 104-105), resize_block's allocation (115-116 size it, 118 stores it;
    # 117 only loads the old pointer into old), the initial state (142-144),
    # deposit's cooling and disc (158-165, 167-176), the ghost exchange
    # (190-200), relax's sweep (212-221) and the equation of state (232-238:
    # the pressure, a field of blocks[].array).  Left out: the parallel
    # regions' pragma and block-loop lines, where a thread waits in the
    # runtime, and the lines of braces alone (103, 166, 177-178: at -O0 a
    # jump, in no variable's set).
    work=$(on_lines 98 102 104 105 115 116 118 118 142 144 158 165 167 176 190 200 212 221 232 238)
    at_least "blocks[].array" "$(samples_of '"main"' 'blocks[].array')" "$work" \
        "the lines of the seven functions that write the arrays"
    # The equation of state's line 238 writes the pressure array, a
    # variable named by its constant: blocks[].array[VAR_PRESSURE], a
    # field of its own, blamed for every sample of the line (all of its
    # operations compute the value stored).
    eos=$(on_lines 238 238)
    at_least "blocks[].array[VAR_PRESSURE]" \
        "$(samples_of '"main"' 'blocks[].array[VAR_PRESSURE]')" "$eos" "line 238, the pressure"
    # ... and reads three others: each sample of the line is split among
    # the four arrays' accesses, one row per array (main's, or the
    # region's own where a worker's stack lacks its spawn chain: the
    # parameter has main's name).  deposit and mark_blocks name some of
    # them too: the rows can only hold more.
    elements=$(jq '[.variables[] | select((.name | test(
        "^blocks\\[\\]\\.array\\[VAR_(DENSITY|MOMENTUM|ENERGY|PRESSURE)\\]$")))]' access.json)
    [ "$(jq '[.[] | select(.function == "main")] | length' <<<"$elements")" = 4 ] ||
        fail "access: not one row per named array: $(jq -c '[.[].name]' <<<"$elements")"
    at_least "blocks[].array[VAR_*] (access)" \
        "$(jq '[.[] | .access / 100 * '"$n"'] | add // 0' <<<"$elements")" "$eos" \
        "line 238, which accesses only those four arrays"
    # main's checksum adds up the pressure every step (line 310), computed
    # by the equation of state (232-238) from the arrays the step's kernels
    # wrote before it: deposit (158-165, 167-176), the exchange (190-200)
    # and relax (212-221); and the criterion's decisions (249-258), computed
    # from the density, choose the blocks the regrid resizes.  (remap's
    # lines write arrays the checksum reads after too, but ppw blames only
    # blocks[].array for them, not what main computes from it after the
    # call: they are not counted here.)
    at_least "checksum" "$(samples_of '"main"' checksum)" \
        "$(on_lines 158 165 167 176 190 200 212 221 232 238 249 258)" \
        "the lines of deposit, exchange_ghosts, relax, equation_of_state and mark_blocks"
    # The ghost exchange (lines 190-200, leaf samples on stacks glued to
    # main): every sample blames the arrays it writes, blocks[].array
    # (the ghost cells, line 200; the lines before compute where they are,
    # and loop over them), and so the checksum (above); none blames the
    # neighbour ids blocks[].nbr, which line 192 reads: init_mesh writes
    # them once, from the options.  Exact, on those stacks alone.
    awk '/^main@/ { stack = $0; sub(/ [0-9]+$/, "", stack); k = split(stack, f, ";")
            if (f[k] ~ /\/amr_alloc\.c:[0-9]+:[0-9]+$/ && f[k] !~ /@@/) {
                m = split(f[k], part, ":"); line = part[m - 1] + 0
                if (line >= 190 && line <= 200) print } }' run.folded >ghost.folded
    if [ -s ghost.folded ]; then
        "$blame" report --folded ghost.folded --binary prog --format json --top 0 >ghost.json ||
            fail "report --folded ghost.folded: $(cat ghost.json)"
        jq -e '. as $r | [.variables[] | select(.function == "main")] as $v
            | ([$v[] | select(.name == "blocks[].array" or .name == "checksum") | .samples]
               == [$r.total_samples, $r.total_samples])
            and ([$v[] | select(.name | startswith("blocks[].nbr"))] == [])' ghost.json \
            >/dev/null || fail "ghost exchange: $(jq -c '{total_samples,
                v: [.variables[] | [.name, .samples]]}' ghost.json)"
        echo "  ghost exchange: $(jq .total_samples ghost.json) samples on lines 190-200," \
            "all blame blocks[].array and checksum, none blocks[].nbr"
    fi
    # The block metadata (level, n, decision, corner, size, neighbours) is
    # read once per block, and in the disc's cells: the lines that access it
    # are the kernels' per-block lines (158-159, 190 and the per-side
    # 192-195, 212-213, 236, 249, 269, 271), the loop over the sides that
    # subscripts the neighbour ids (191), the disc's bounding box and
    # positions (167-168, 171-172), the decision (255-258), resize_block's
    # (115, 123-124), init_mesh (129-146) and main's regrid and summary
    # (297-301, 313-316).  The hot loops' lines, their control lines
    # included (charged to the arrays they subscript), access only the
    # arrays: the metadata's access share is at most those lines' samples
    # (those whose innermost frame of the program is there).
    ranges="115 115 123 124 129 146 158 159 167 168 171 172 190 195 212 213 236 236 249 249"
    ranges="$ranges 255 258 269 269 271 271 297 301 313 316"
    metadata_lines=$(awk -v ranges="$ranges" '
        BEGIN { nr = split(ranges, r, " ") }
        /^#/ { next }
        { count = $NF; stack = $0; sub(/ [0-9]+$/, "", stack); k = split(stack, f, ";")
          for (i = k; i > 0; i--) if (f[i] ~ /\/amr_alloc\.c:[0-9]+:[0-9]+$/ && f[i] !~ /@@/) break
          if (i == 0) next
          m = split(f[i], part, ":"); line = part[m - 1] + 0
          for (j = 1; j < nr; j += 2)
              if (line >= r[j] && line <= r[j + 1]) { total += count; break } }
        END { print total + 0 }' run.folded)
    metadata=$(jq '[.variables[] | select(.function == "main" and (.name |
        test("^blocks\\[\\]\\.(level|n|decision|x0|y0|size|nbr)(\\[|$)"))) | .access / 100 * '"$n"']
        | add // 0' access.json)
    at_most "block metadata (access)" "$metadata" "$(jq -n "$metadata_lines * 100 / $n")" \
        "share_ceil of the $metadata_lines samples on the lines that access it"
    # An allocation stored straight into the struct: every sample under
    # ma_malloc (malloc's, the memset's, and the wrapper's own from line 59
    # on) blames blocks[].array, which receives its return value (exact, on
    # those stacks alone).  Left out: lines 57-58, which count the
    # allocation into two globals the result is not computed from (they
    # blame only those), the wrapper's opening line 56 (its prologue at -O0,
    # which computes nothing, in no variable's set: rule 1) and its line 0
    # (code without a line, rule 1).
    grep -E '(^|;)ma_malloc@' run.folded |
        grep -vE 'ma_malloc@[^;]*amr_alloc\.c:(0|56|57|58):[0-9]+ [0-9]+$' >alloc.folded
    if [ -s alloc.folded ]; then
        "$blame" report --folded alloc.folded --binary prog --format json --top 0 >alloc.json ||
            fail "report --folded alloc.folded: $(cat alloc.json)"
        jq -e '.total_samples == ([.variables[] | select(.function == "main"
            and .name == "blocks[].array") | .samples] | first // 0)' alloc.json >/dev/null ||
            fail "allocations: $(jq -c '{total_samples, v: [.variables[0:4][] | [.name, .samples]]}' alloc.json)"
        echo "  allocations: $(jq .total_samples alloc.json) samples under ma_malloc, all blame blocks[].array"
    fi
    # main's exit status is 1 only where calloc returned NULL (the test
    # on line 287 reads the pointer, not the blocks it points to), else 0:
    # computed from no data, so main's result is blamed for nothing but
    # its own return lines (the failure: `if (!blocks)` taken as reading
    # the blocks gave it 60% of the samples).
    at_most "main() result" "$(samples_of '"main"' 'main() result')" 0.5 \
        "share_ceil(0.5%, n): the exit status reads no data"
    ;;
threadprivate)
    # track_history (lines 179-198) follows each neutron and counts it into
    # the threadprivate tally: each of its lines computes the position,
    # direction, group, cell or material a count is made at, a test that
    # decides which count is made (escape, real collision, absorption), or
    # a count.  Its random numbers come from history_seed (148-153), then
    # uniform's state (159), its groups from sample_group (167-170), and
    # clear_tally's memset (204) zeroes the tally before a pass: all of
    # them blame the tally, the global it is at the default blame point.
    # uniform's line 160 turns the state into the number: where a variable
    # receives it (x, mu: lines 179, 181 and 198) the count is computed
    # from that variable; where it goes straight into another call (180,
    # 183, 197: sample_group's result is g, log's feeds x) or decides a
    # test (190, 193: whether a collision is real, whether the neutron is
    # absorbed) its result is received by the variables the call's line
    # blames (rule 3), so the tally too: a tenth of the run.
    # Left out: the lines that compute nothing (the loop's head 182, the
    # returns 186 and 195, the continue 191, the braces).
    # fold_tally's loop (211-214) adds the tally into the global results
    # after track_history in the same region: results is computed from
    # both, and main's total from results.  (The critical section's pragma
    # line, where a thread waits for the lock, is left out.)
    fill=$(on_lines 148 153 159 160 167 170 179 181 183 185 188 190 192 194 197 198 204 204)
    fold=$(on_lines 211 214)
    at_least "tally" "$(samples_of null tally)" "$fill" \
        "the histories' lines 148-153, 159-160, 167-170, 179-198 and the clear, 204"
    at_least "results" "$(samples_of null results)" "$((fill + fold))" \
        "the histories' and the clear's lines, and fold_tally's loop, 211-214"
    at_least "total" "$(samples_of '"main"' total)" "$((fill + fold))" \
        "the histories' and the clear's lines, and fold_tally's loop, 211-214"
    # ... exactly, on the stacks sampled in uniform's line 160 alone: each
    # blames the tally and the results folded from it, whichever of its
    # call sites (a receiving variable, another call, a test) it came from.
    grep -E ';uniform@[^;]*threadprivate\.c:160:[0-9]+ [0-9]+$' run.folded >uniform.folded
    if [ -s uniform.folded ]; then
        "$blame" report --folded uniform.folded --binary prog --format json --top 0 >uniform.json ||
            fail "report --folded uniform.folded: $(cat uniform.json)"
        jq -e '.total_samples as $n | [.variables[] | select(.function == null
            and (.name == "tally" or .name == "results")) | .samples] == [$n, $n]' \
            uniform.json >/dev/null &&
            echo "  uniform: $(jq .total_samples uniform.json) samples on line 160, all blame tally and results" ||
            fail "uniform's samples: $(jq -c '{total_samples, v: [.variables[0:4][] | [.name, .samples]]}' uniform.json)"
    fi
    # The tables are written by setup_tables alone (a few hundred
    # operations, once: about 1e-6 of the histories' work) and only read by
    # the histories, whose samples blame what their lines compute (x, the
    # group, the cell, the tally), never a table: each under 0.5% of the
    # samples (the failure, the tables blamed for the lines that read
    # them, would give them 40% of the samples at -O2, 57% at -O0).
    for v in sigma_t absorb_prob scatter_cdf sigma_major cell_material source_cdf; do
        at_most "$v (read only by the histories)" "$(samples_of null "$v")" 0.5 \
            "share_ceil(0.5%, n): setup_tables, about 1e-6 of the work"
    done
    # Yet the majorant is hot data: the flight's line 183 accesses
    # sigma_major alone (x, mu and g are scalar locals, uniform's accesses
    # are its own frame's), and the log it calls is charged to it, so its
    # access share holds at least the line's self samples in `lines`, log's
    # included (about a third of the run).  Likewise the counts' lines 185,
    # 192 and 194 access the threadprivate tally alone, and clear_tally's
    # memset on line 204 writes it: their samples are the access share of
    # the one program-level tally, not of a copy per thread.
    self_of() {
        jq --argjson l "$1" '[.lines[] | select(.line == $l
            and (.file | endswith("/threadprivate.c"))) | .self_samples] | add // 0' lines.json
    }
    access_of() {
        jq --arg v "$1" '[.variables[] | select(.function == null and .name == $v)
            | .access / 100 * '"$n"'] | add // 0' access.json
    }
    at_least "sigma_major (access)" "$(access_of sigma_major)" "$(self_of 183)" \
        "line 183's self samples, the log it calls included"
    at_least "tally (access)" "$(access_of tally)" \
        "$(($(self_of 185) + $(self_of 192) + $(self_of 194) + $(self_of 204)))" \
        "the self samples of lines 185, 192, 194 and 204, the memset included"
    ;;
chain)
    # smooth's loop (lines 172-182) computes, for each cell, c (174), the
    # face conductivities (175-176), the Jacobi value v (177-178) and the
    # weighted update d (179), and adds d * d into change (181), i and j
    # (172-173) subscripting all of them: change is the norm smooth
    # returns (level 5); scaled_sweep returns it times h (4), sweep_into
    # stores it in stats->update_norm (3), sweep_once returns
    # stats->update_norm (2), relax writes it through its out-parameter
    # (1), and main computes history from residual.  Line 180 stores the
    # new value in g->next only (the next sweep's norm reads it back,
    # through main's loop: not asserted).
    norm=$(on_lines 172 179 181 181)
    at_least "residual" "$(samples_of '"main"' residual)" "$norm" "smooth's lines 172-179 and 181"
    at_least "history" "$(samples_of '"main"' history)" "$norm" "smooth's lines 172-179 and 181"
    # The statistics are main's: sweep_into's stats->update_norm is main's
    # field stats.update_norm (bound through sweep_once and relax), written
    # from the returned norm: a field row blamed for the same lines.
    at_least "stats.update_norm" "$(samples_of '"main"' stats.update_norm)" "$norm" \
        "smooth's lines 172-179 and 181"
    # next[c] = u[c] + d (180), d computed on lines 172-179: all of them
    # compute what is stored in g->next, whose value smooth copied into
    # the local next that the OpenMP body captures and writes through.
    at_least "g.next" "$(samples_of '"main"' g.next)" "$(on_lines 172 180)" \
        "the stencil's lines 172-180, which compute and store g->next"
    # residual_norm's loop (lines 225-234) sums r * r into the norm it
    # returns, which control_step stores in ctl->last_residual (and main
    # itself before the loop): main's field ctl.last_residual.
    at_least "ctl.last_residual" "$(samples_of '"main"' ctl.last_residual)" \
        "$(on_lines 225 234)" "residual_norm's lines 225-234"
    # The conductivity and the source are read in the solve (five
    # conductivities and a source per cell and sweep) and written only by
    # problem_setup, called from main's line 301: blamed for at most the
    # samples whose stacks pass through it (its loop and mallocs, one pass
    # over the grid against 400 sweeps: about 0.3%, more when its page
    # faults are slow) and those on line 301, measured from the run.
    # Blamed for the reads, they would have 80% (the smoother) or 4% (the
    # residual).
    setup=$(($(grep -E '(^|;)problem_setup@' run.folded | awk '{s += $NF} END {print s + 0}') +
        $(on_lines 301 301)))
    for v in prob.kappa prob.rhs; do
        at_most "$v (read only in the solve)" "$(samples_of '"main"' "$v")" \
            "$(jq -n "100 * $setup / $n")" "share_ceil of problem_setup's $setup samples, the only writer"
    done
    ;;
esac

# No compiler names in any output of any view or export, in any format,
# and no frame of libppw (test/lib/names.sh); a declaration line on every
# variable row.
. "$SAMPLING_LIB/names.sh"
source_names_only "$blame" run ./prog
# A region serialized by its if clause (cg's dot) ran on the thread that met
# it: its context is the native stack, not that stack glued to itself.
jq -e '[.variables[].context // "" | select(test("(^|> )main >.*> main( >|$)"))] == []' blame.json \
    >/dev/null || fail "a context repeats main: $(jq -c '[.variables[].context // "" |
        select(test("(^|> )main >.*> main( >|$)"))] | unique' blame.json)"
[ "$failures" -eq 0 ] || exit 1
echo "PASS: $program -$level"
