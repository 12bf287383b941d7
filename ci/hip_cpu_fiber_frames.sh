#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ci/hip_cpu_fiber_frames.sh MODULE [LIMIT]
#
# Fails when a kernel of the HIP module built on HIP-CPU (MODULE: its
# libattnmeta_hip.so) has a stack frame of more than LIMIT bytes (default
# 6656). HIP-CPU runs each thread of a block but the first as a fiber on a
# stack of 7168 bytes that it mallocs (third_party/hip-cpu: fiber.hpp,
# min_stack_byte_cnt_), and those stacks lie next to each other. A kernel
# frame larger than that runs into the neighbouring fiber's stack: under
# AddressSanitizer, whose redzones make kernel frames several times larger,
# that showed as a stack-buffer-overflow read of a kernel's own local, then
# "nested bug" (the top-k kernel at 8712 bytes, docs/reliability.md). The
# limit leaves 512 bytes for the fiber's entry frames and the barrier's
# calls: a margin, not a measured figure. Reads `sub $N,%rsp` in each
# am_*kernel* function, and in each body a kernel dispatches to with a frame
# of its own (AM_DEVICE_OWN_FRAME: am_*_body, a static C++ name) (x86-64,
# objdump).
set -euo pipefail
module=$1
limit=${2:-6656}
command -v objdump >/dev/null || { echo "hip_cpu_fiber_frames: objdump not found" >&2; exit 1; }
frames=$(objdump -d --no-show-raw-insn "$module" |
  awk '/^[0-9a-f]+ <.*>:$/ { fn = $2 }
       /sub +\$0x[0-9a-f]+,%rsp/ &&
       fn ~ /^<(_ZL[0-9]+)?am_[a-z0-9_]*(kernel[a-z0-9_]*|_body[A-Za-z0-9_.]*)>:$/ {
         hex = $0; sub(/.*\$0x/, "", hex); sub(/,%rsp.*/, "", hex)
         name = fn; gsub(/[<>:]/, "", name); print name, hex }')
[ -n "$frames" ] || { echo "hip_cpu_fiber_frames: no kernel found in $module" >&2; exit 1; }
bad=0 most=0 most_name=""
while read -r name hex; do
  bytes=$((16#$hex))
  if [ "$bytes" -gt "$most" ]; then most=$bytes most_name=$name; fi
  if [ "$bytes" -gt "$limit" ]; then
    echo "hip_cpu_fiber_frames: $name: frame of $bytes bytes > $limit (HIP-CPU fiber stacks are 7168 bytes)" >&2
    bad=1
  fi
done <<<"$frames"
echo "hip_cpu_fiber_frames: largest kernel frame $most bytes ($most_name), limit $limit"
exit $bad
