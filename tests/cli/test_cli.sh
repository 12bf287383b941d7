#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/cli/test_cli.sh ATTNMETA_BINARY
#
# Drives the built attnmeta command-line tool through its help, its version,
# every kind of misuse and a few real runs on the CPU backend, and checks the
# exit status (0 ok, 1 a check failed, 2 usage or environment) and the
# message of each. Run by ctest (test "cli"). Needs no GPU: "no device" is
# provoked with the HIP backend (no AMD GPU on the test machines; without
# the module it is "not available", the same exit status) and with a CPU
# device index past the CPU backend's one device.
set -u
cli=${1:?usage: test_cli.sh ATTNMETA_BINARY}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
checks=0

# expect STATUS PATTERN ARGS...: runs `attnmeta ARGS...`, wants exit status
# STATUS and the extended regex PATTERN somewhere in stdout + stderr.
expect() {
  local want=$1 pattern=$2 rc
  shift 2
  checks=$((checks + 1))
  timeout 120 "$cli" "$@" >"$work/out" 2>"$work/err"
  rc=$?
  if [ "$rc" != "$want" ] || ! cat "$work/out" "$work/err" | grep -Eq -- "$pattern"; then
    failed=$((failed + 1))
    echo "FAIL: attnmeta $* -> exit $rc (want $want), output lacks /$pattern/ or differs:"
    sed 's/^/    out| /' "$work/out" | head -n 20
    sed 's/^/    err| /' "$work/err" | head -n 20
  else
    echo "ok:   attnmeta $* -> $rc"
  fi
}

# also_check DESCRIPTION COMMAND...: an extra condition on the last run.
also_check() {
  local what=$1
  shift
  checks=$((checks + 1))
  if "$@"; then
    echo "ok:   $what"
  else
    failed=$((failed + 1))
    echo "FAIL: $what"
  fi
}

exit_text='Exit status: 0 ok; 1 a check failed'

# ---- help and version ----
expect 0 "usage: attnmeta <command>" -h
expect 0 "$exit_text" --help
expect 0 "usage: attnmeta <command>" help
expect 2 "usage: attnmeta <command>"
expect 0 "^attnmeta [0-9]+\.[0-9]+\.[0-9]+ \(library [0-9]+\.[0-9]+\.[0-9]+, commit [0-9a-z-]+\)$" --version
expect 2 "unexpected argument 'x'" --version x
expect 2 "unknown command 'bogus'" bogus
expect 2 "unknown option '--bogus'" --bogus
expect 2 "unknown command 'bogus'" help bogus
for cmd in info step topk pool bench conformance; do
  expect 0 "usage: attnmeta $cmd" "$cmd" --help
  also_check "$cmd --help documents the exit status" grep -q "$exit_text" "$work/out"
  also_check "$cmd --help writes to stdout only" test ! -s "$work/err"
  expect 0 "usage: attnmeta $cmd" "$cmd" -h
  expect 0 "usage: attnmeta $cmd" help "$cmd"
  expect 2 "attnmeta $cmd: option --help takes no value" "$cmd" --help=yes
  # unknown options are refused by every subcommand, with a pointer to --help
  expect 2 "attnmeta $cmd: unknown option '--bogus'" "$cmd" --bogus
  also_check "$cmd --bogus points at --help" grep -q "'attnmeta $cmd --help' lists the options" "$work/err"
done
expect 2 "attnmeta info: unexpected argument 'extra'" info extra
expect 2 "attnmeta step: unexpected argument 'extra'" step extra

# ---- numbers: strict, ranged, the option named ----
for cmd in step bench; do
  expect 2 "attnmeta $cmd: --device: 'abc' is not a whole number" "$cmd" --device abc
  expect 2 "attnmeta $cmd: --device: -1 is out of range" "$cmd" --device -1
done
expect 2 "attnmeta conformance: --device: '1x' is not a whole number \(unexpected 'x'\)" conformance --device 1x
expect 2 "attnmeta step: --iters: 'abc' is not a whole number" step --iters abc
expect 2 "attnmeta step: --iters: 99999999999 is out of range, want \[0, 10000000\]" step --iters 99999999999
expect 2 "attnmeta step: --iters: 99999999999999999999999 is out of range" step --iters 99999999999999999999999
expect 2 "attnmeta step: --iters: -5 is out of range" step --iters -5
expect 2 "attnmeta step: --iters: empty value" step --iters ''
expect 2 "attnmeta step: --iters: '12abc' is not a whole number \(unexpected 'abc'\)" step --iters 12abc
expect 2 "attnmeta step: --iters: ' 12' is not a whole number" step --iters ' 12'
expect 2 "attnmeta step: --iters: '\+12' is not a whole number" step --iters +12
expect 2 "attnmeta step: --iters: '1.5' is not a whole number" step --iters 1.5
expect 2 "attnmeta step: --iters: 'abc' is not a whole number" step --iters=abc
expect 2 "attnmeta step: --reqs: 2000000 is out of range" step --reqs 2000000
expect 2 "attnmeta step: --qlen: '4..1': the first bound is above the second" step --qlen 4..1
expect 2 "attnmeta step: --qlen: 'x' is not a whole number" step --qlen 1..x
expect 2 "attnmeta step: --block-size: 0 is out of range" step --block-size 0
expect 2 "attnmeta step: --dcp-rank 2 must be below --dcp-world 2" step --dcp-world 2 --dcp-rank 2
expect 2 "attnmeta step: --capacity 100 is below the 256 padded tokens" step --capacity 100
expect 2 "need at least [0-9]+ block-table columns; --cols is 4" step --cols 4
expect 2 "attnmeta step: the step is too large" step --reqs 1000000 --cols 1000
expect 2 "attnmeta step: --products: unknown product 'nope'" step --products token_to_req,nope
expect 2 "attnmeta step: --show: 0 is out of range" step --show 0
expect 2 "attnmeta bench: --repeats: 'many' is not a whole number" bench --repeats many
expect 2 "attnmeta bench: --repeats: 0 is out of range" bench --repeats 0
expect 2 "attnmeta bench: --steps: 99999999999 is out of range" bench --steps 99999999999
expect 2 "attnmeta bench: --sets: 129 is out of range" bench --sets 129
expect 2 "attnmeta bench: --target-ms: 'fast' is not a number" bench --target-ms fast
expect 2 "attnmeta bench: --target-ms: -1 is out of range" bench --target-ms -1
expect 2 "attnmeta bench: --target-ms: 'inf' is not a finite number" bench --target-ms inf
expect 2 "attnmeta bench: --target-ms: 'nan' is not a finite number" bench --target-ms nan
expect 2 "attnmeta bench: --copy-bytes: '1e9' is not a whole number" bench --copy-bytes 1e9
expect 2 "attnmeta bench: --case: no case named 'nope'" bench --case nope
expect 2 "attnmeta bench: option --quick takes no value" bench --quick=1
expect 2 "attnmeta bench: option --warm-only takes no value" bench --warm-only=1
expect 2 "attnmeta bench: --cold-cache-bytes: 0 is out of range" bench --cold-cache-bytes 0
expect 2 "attnmeta bench: --cold-cache-bytes: '4M' is not a whole number" bench --cold-cache-bytes 4M
expect 0 "--warm-only +no cold figures" bench --help
also_check "bench --help documents --cold-cache-bytes" grep -q -- "--cold-cache-bytes N" "$work/out"

# ---- one launch-config parser for bench and conformance ----
for cmd in bench conformance; do
  expect 2 "attnmeta $cmd: --config block=: 'x' is not a whole number" "$cmd" --config block=x
  expect 2 "attnmeta $cmd: --config grid=: -2 is out of range" "$cmd" --config block=1,grid=-2
  expect 2 "attnmeta $cmd: --config: 'warp=3' is not one of block=" "$cmd" --config warp=3
  expect 2 "attnmeta $cmd: --config: 'block=1,' ends with a comma" "$cmd" --config block=1,
done
expect 2 "attnmeta bench: --config: empty value" bench --config ''

# ---- an option whose value is missing says so ----
for opt in --backend --device --iters --reqs --qlen --products; do
  expect 2 "attnmeta step: option $opt needs a value" step "$opt"
done
for opt in --backend --device --config --case --repeats --json; do
  expect 2 "attnmeta bench: option $opt needs a value" bench "$opt"
done
for opt in --backend --device --config --vector --json; do
  expect 2 "attnmeta conformance: option $opt needs a value" conformance "$opt"
done
expect 2 "attnmeta step: --backend: unknown backend 'tpu', want auto, cpu, cuda or hip" step --backend tpu
expect 2 "attnmeta bench: --backend: unknown backend 'tpu'" bench --backend tpu
expect 2 "attnmeta conformance: --backend: unknown backend 'tpu'" conformance --backend tpu

# ---- no device: the same exit status everywhere ----
for cmd in step topk pool bench conformance; do
  expect 2 "attnmeta $cmd: cannot open backend hip device 0" "$cmd" --backend hip
  expect 2 "attnmeta $cmd: cannot open backend cpu device 7" "$cmd" --backend cpu --device 7
done

# ---- diagnostics: files, commit, the variable that forces a backend ----
expect 0 "^attnmeta [0-9]+\.[0-9]+\.[0-9]+, commit [0-9a-z-]+ \(header " info
also_check "info names the library's file, and it exists" \
  bash -c "f=\$(sed -n 's/^library: //p' '$work/out'); test -f \"\$f\""
also_check "info gives each GPU backend that loaded its module's file" bash -c \
  "awk '/^backend (cuda|hip) +built for/ { getline; if (\$1 != \"module:\") bad = 1 } END { exit bad }' '$work/out'"
also_check "info says the CPU backend has no GPU driver or runtime" \
  grep -qx "              driver/runtime: none (the CPU backend uses no GPU runtime)" "$work/out"
# a GPU runtime library in the process is named, links resolved (a stand-in
# built here, preloaded)
if command -v cc >/dev/null 2>&1; then
  echo 'int attnmeta_test_stand_in(void) { return 1; }' >"$work/stand_in.c"
  cc -shared -fPIC -o "$work/libcudart.so.99.1" "$work/stand_in.c" &&
    ln -sf libcudart.so.99.1 "$work/libcudart.so.99"
  checks=$((checks + 1))
  # a CLI built with gcc's ASan needs its runtime first in the preload list
  asan_rt=$(ldd "$cli" 2>/dev/null | awk '/libasan/ { print $3 }')
  if LD_PRELOAD="${asan_rt:+$asan_rt:}$work/libcudart.so.99" "$cli" info 2>&1 |
    grep -qx "GPU runtime library: $work/libcudart.so.99.1"; then
    echo "ok:   info names a loaded GPU runtime library"
  else
    failed=$((failed + 1))
    echo "FAIL: info does not name the preloaded libcudart.so.99"
  fi
fi
for cmd in step bench; do
  checks=$((checks + 1))
  if ATTNMETA_BACKEND=hip timeout 120 "$cli" "$cmd" >"$work/out" 2>"$work/err"; then
    echo "ok:   ATTNMETA_BACKEND=hip attnmeta $cmd: this machine has a HIP device"
  elif grep -q "ATTNMETA_BACKEND=hip forces backend hip" "$work/err"; then
    echo "ok:   ATTNMETA_BACKEND=hip attnmeta $cmd names the variable"
  else
    failed=$((failed + 1))
    echo "FAIL: ATTNMETA_BACKEND=hip attnmeta $cmd does not name the variable:"
    sed 's/^/    err| /' "$work/err" | head -n 5
  fi
done

# ---- outputs opened before the work ----
SECONDS=0
expect 2 "attnmeta bench: --json: cannot write '$work/no/such/dir/b.json'" \
  bench --backend cpu --json "$work/no/such/dir/b.json"
also_check "bench with an unwritable --json fails before running (${SECONDS} s)" test "$SECONDS" -lt 5
also_check "bench with an unwritable --json ran no case" bash -c "! grep -q 'floors' '$work/err'"
expect 2 "attnmeta conformance: --json: cannot write '$work/no/such/dir/c.json'" \
  conformance --backend cpu --json "$work/no/such/dir/c.json"
expect 2 "attnmeta bench: cannot open backend hip" bench --backend hip --json "$work/nodev.json"
also_check "bench that could not start leaves no report file" test ! -e "$work/nodev.json"
expect 2 "attnmeta conformance: cannot open backend hip" conformance --backend hip --json "$work/nodev.json"
also_check "conformance that could not start leaves no report file" test ! -e "$work/nodev.json"

# ---- real runs on the CPU backend ----
expect 0 "^  requests +3$" step --backend cpu --iters 2 --reqs 3 --qlen 0..2 --pad 5 --cols 1 \
  --context 0..40 --block-size 64 --products token_to_req,positions,slot_mapping
also_check "step prints the shape it built" grep -Eq "^  padding +5 tokens, to [0-9]+$" "$work/out"
also_check "step prints each product it built, labelled" \
  grep -Eq "^  token_to_req +int32\[[0-9]+\] " "$work/out"
also_check "step prints only the products asked for" bash -c "! grep -q seq_lens_out '$work/out'"
also_check "step prints the error word" grep -Eq "^  error word +0x0 " "$work/out"
expect 0 "^  block_table_out +int32\[64\]\[8\] +row 0: 0, 1, 2" step --backend cpu --iters=1 \
  --reqs=4 --qlen=4..4 --pad=48 --cols=8 --context=0..100 --block-size=16 --show=3
expect 0 "world 2, rank 1, interleave 4" step --backend cpu --iters 1 --dcp-world 2 --dcp-rank 1 \
  --dcp-interleave 4
# a check that fails: a conformance vector whose expected values are wrong
awk '{ print } /^end$/ { exit }' "$(dirname "$0")/../../conformance/vectors/errors_device_data.amv" |
  sed 's/^expect decode_lens_out 8 1\*8$/expect decode_lens_out 8 2*8/' >"$work/wrong.amv"
expect 1 "^FAIL  .*wrong.amv  hostile_qsl_decreasing .*decode_lens_out" \
  conformance --backend cpu --config auto --json "$work/wrong.json" "$work/wrong.amv"
also_check "conformance ends with the summary line" grep -q "^0 passed, 1 failed, 0 skipped$" "$work/out"
also_check "conformance --json wrote the failed run's report" grep -q '"failed": 1' "$work/wrong.json"
# progress_run UNIT CALIBRATION_ITERS ARGS...: runs `$cli ARGS --iters N`
# into $work/out and $work/err with N (set in iters) enough calls for about
# 2.5 s on this machine (sanitizer builds are slower), from a run of
# CALIBRATION_ITERS calls and its "us per UNIT to complete" line. A loaded
# machine can make the calibration slower than the run: a run that finished
# within 1.5 s is tried again with four times the calls.
progress_run() {
  local unit=$1 calibration=$2 us took _
  shift 2
  local per_unit="s/.* \([0-9.]*\) us per $unit to complete\$/\1/p"
  us=$("$cli" "$@" --iters "$calibration" | sed -n "$per_unit")
  iters=$(awk -v us="${us:-100}" 'BEGIN { n = int(2.5e6 / (us > 0.01 ? us : 0.01)); print (n > 10000000 ? 10000000 : n < 1000 ? 1000 : n) }')
  for _ in 1 2 3; do
    "$cli" "$@" --iters "$iters" >"$work/out" 2>"$work/err"
    grep -Eq "calls [0-9]+/[0-9]+ \([0-9]+ s\)" "$work/err" && break
    took=$(sed -n "$per_unit" "$work/out")
    awk -v us="${took:-0}" -v n="$iters" 'BEGIN { exit !(us * n < 1.5e6) }' || break
    iters=$((iters * 4 > 10000000 ? 10000000 : iters * 4))
  done
}
progress_run step 1000 step --backend cpu
also_check "step --iters $iters reports its progress on stderr" \
  grep -Eq "calls [0-9]+/[0-9]+ \([0-9]+ s\)" "$work/err"
also_check "step's progress goes to stderr, not stdout" bash -c "! grep -q 'calls 1' '$work/out'"
# the same for topk
progress_run call 200 topk --backend cpu --tokens 64 --topk 512 --cols 64
also_check "topk --iters $iters reports its progress on stderr" \
  grep -Eq "calls [0-9]+/[0-9]+ \([0-9]+ s\)" "$work/err"
# ---- DeepSeek-V4 products of the step ----
expect 0 "^  swa_indices +int32\[256\]\[128\] +row 0: " step --backend cpu --iters 1 --products swa_indices
also_check "step --products swa_indices builds only that" bash -c "! grep -q '^  token_to_req' '$work/out'"
# one request of 4 tokens at positions 4..7, block size 4, table row [0, 1]:
# ratio 4 (64 rows a block) completes row 1 at position 7 (slot 0 * 64 + 1);
# token 0's SWA row holds positions 0..4, slots 0..3 and 1 * 4 + 0
dsv4_small="step --backend cpu --iters 0 --reqs 1 --qlen 4..4 --context 4..4 --block-size 4 --cols 2 --pad 0 --capacity 4"
expect 0 "^  c4_slot_mapping +int64\[4\] +-1, -1, -1, 1$" $dsv4_small --products c4_slot_mapping,swa_indices,c4_seq_lens
also_check "step's SWA row 0 is the window's slots, then -1" \
  grep -Eq "^  swa_indices +int32\[4\]\[128\] +row 0: 0, 1, 2, 3, 4, -1, -1, -1, \.\.\.$" "$work/out"
also_check "step's ratio-4 compressed length is 8 / 4" grep -Eq "^  c4_seq_lens +int32\[1\] +2$" "$work/out"
expect 0 "^  compressed groups +ratio 4 \(64 rows a block\) and 128" step --backend cpu --iters 1 --products dsv4
also_check "step --products dsv4 builds every DSV4 product" bash -c \
  "for p in c4_slot_mapping c4_seq_lens c128_slot_mapping c128_seq_lens swa_indices swa_lens c128a_rows c128a_lens; do grep -q \"^  \$p \" '$work/out' || exit 1; done"
also_check "step --products dsv4 leaves the part-1 products out" bash -c "! grep -q '^  positions' '$work/out'"
expect 0 "error word +0x0" step --backend cpu --iters 1 --products all --dcp-world 2 --dcp-rank 1 --dcp-interleave 4
also_check "step --products all builds both kinds" bash -c "grep -q '^  c128a_rows ' '$work/out' && grep -q '^  slot_mapping ' '$work/out'"
expect 0 "^  query lengths +1\.\.1 per request \(seed [0-9]+\): 1 real token$" step --backend cpu --iters 1 \
  --reqs 1 --qlen 1..1 --pad 1
also_check "step says '1 token' of padding" grep -Eq "^  padding +1 token, to 2$" "$work/out"
expect 2 "attnmeta step: --swa-window: 0 is out of range" step --swa-window 0

# ---- the top-k conversion ----
expect 0 "^  every row matches the naive conversion$" topk --backend cpu --iters 2 --tokens 16 --topk 256 --cols 64
also_check "topk prints row 0 and the counts" bash -c "grep -Eq '^  out +int32\[16\]\[256\] +row 0: ' '$work/out' && grep -Eq '^  valid_count +int32\[16\] ' '$work/out'"
also_check "topk prints the error word" grep -Eq "^  error word +0x0 " "$work/out"
also_check "topk says '2 calls'" grep -Eq "^  2 calls " "$work/out"
expect 0 "^  every row matches the naive conversion$" topk --backend cpu --iters 1 --tokens 8 --topk 64 --cols 8 --compact
expect 0 "^  every row matches the naive conversion$" topk --backend cpu --iters 1 --tokens 8 --topk 64 --cols 8 --dcp-world 2 --dcp-interleave 2 --peer-blocks 1000
also_check "topk prints the peer view" grep -Eq "^  peer view +1000 blocks a rank" "$work/out"
expect 0 "^  every row matches the naive conversion$" topk --backend cpu --iters 1 --tokens 8 --topk 64 --cols 8 \
  --dcp-world 2 --dcp-rank 1 --dcp-interleave 4 --block-size 16
expect 2 "attnmeta topk: --topk: 0 is out of range" topk --topk 0
# pool: FA3's build, DSA's with the top-k and page_table_1, target verify
expect 0 "^  every output matches the naive build$" pool --backend cpu --iters 1 --reqs 8 --ctx 300
also_check "pool prints cu_seqlens_k" grep -Eq "^  cu_seqlens_k +int32\[9\] +0, " "$work/out"
expect 0 "^  every output matches the naive build$" pool --backend cpu --iters 1 --reqs 8 --ctx 300 \
  --topk 64 --token-table --next-n 3 --page-size 16
expect 2 "attnmeta pool: --next-n: 0 is out of range" pool --next-n 0
expect 2 "attnmeta topk: --dcp-rank 2 must be below --dcp-world 2" topk --dcp-world 2 --dcp-rank 2
expect 2 "attnmeta topk: option --compact takes no value" topk --compact=1
expect 2 "attnmeta topk: unexpected argument 'extra'" topk extra

expect 0 "^1x1 " bench --list
expect 0 "1 x 1, 64" bench --backend cpu --quick --case 1x1 --json "$work/bench.json"
also_check "bench --json wrote a JSON report" python3 -c \
  "import json,sys; d=json.load(open(sys.argv[1])); assert d['tool']=='attnmeta bench'" "$work/bench.json"
also_check "bench lists the DSV4 step cases" bash -c "'$cli' bench --list | grep -q '^dsv4_32x2 '"
expect 0 "^DSV4 step 1 x 1, 512 .* ok$" bench --backend cpu --quick --case dsv4_1x1 --case topk_t1_k512
also_check "bench runs a top-k case beside it" grep -Eq "^top-k T 1 x K 512, counts .* ok$" "$work/out"

echo "cli: $checks checks, $failed failed"
[ "$failed" -eq 0 ]
