#!/usr/bin/env bash
# Instruction issue against memory: one launch of each default kernel under ncu, on
# a GPU machine after `bash scripts/gpu/prepare.sh`; writes $OUT/ncu_*.txt and
# prints the lines that say whether a kernel is issue-bound or memory-bound.
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/cuda/lib64
OUT=${OUT:-$(mktemp -d)}; export BANKFREE_CACHE_DIR=$(mktemp -d)
B=.gpu/bin
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__warps_eligible.avg.per_cycle_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
run() { # case, entry regex, label
  ncu --metrics $M -k "regex:$2" --launch-skip 3 --launch-count 1 $B/bench --case "$1" > "$OUT/ncu_$3.txt" 2>&1
  echo "== $1 $2"
  grep -E "bankfree_transpose|gpu__time|inst_executed|issue_active|sm__throughput|dram__throughput|eligible|warps_active|registers" "$OUT/ncu_$3.txt" | sed 's/  */ /g'
}
run 8191x8193 't32_r8_e4_pad1_skew$' skew
run "8192x8192 f32" 't32_r8_e4_pad1$' scalar
run "8192x8192 f32" 't32_r16_e4_v2_pad1$' vec2
run 4194304x3 '_tall$' tall
run 3x4194304 '_wide$' wide
