#!/usr/bin/env bash
# On a GPU machine, from the repository root: every GPU check of the
# generated kernels. Logs go to $OUT; the summary table is printed last.
set -uo pipefail
K=.gpu/kernels
OUT=${OUT:-$(mktemp -d)}; mkdir -p "$OUT"; export OUT
export PYTHONUNBUFFERED=1
C=scripts/gpu/check.py
status=()
step() { # name, command...
  local name=$1; shift
  echo "=== $name"
  if "$@" 2>&1 | tee "$OUT/$name.log"; then status+=("$name: ok"); else status+=("$name: FAILED"); fi
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
step compile python3 $C compile $K
step correct python3 $C correct $K
# Per-instruction cost is what the analyzer predicts: measure it on 64 x 64 (fewer
# blocks than SMs). Under full load (1024 x 1024) L1 arbitration adds wavefronts:
# logged for reference, not gating.
M=smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
for n in 64 1024; do
  NCU_N=$n ncu --clock-control none --kernel-name regex:bankfree_transpose --csv --log-file "$OUT/ncu$n.csv" \
    --metrics $M python3 $C ncu-run $K > "$OUT/ncu-run$n.log" 2>&1
done
step ncu python3 $C ncu-compare $K "$OUT/ncu64.csv"
python3 $C ncu-compare $K "$OUT/ncu1024.csv" > "$OUT/ncu-loaded.log" 2>&1
for tool in memcheck racecheck synccheck; do
  step "sanitizer-$tool" timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 python3 $C sanitize $K
done
step time python3 $C time $K
# The Rust side: GPU tests, the runtime's costs, and the main example twice (the
# second run must load its kernels from the disk cache).
step gpu-tests .gpu/bin/gpu --include-ignored --test-threads=1
step launch-tests .gpu/bin/launch_gpu --include-ignored --test-threads=1
step attribute-gpu .gpu/bin/attribute_gpu --include-ignored
step gpu-matrix .gpu/bin/gpu_matrix --include-ignored --nocapture
# compute-sanitizer over the Rust path too: edge tiles, batches, pitches, views.
for tool in memcheck racecheck synccheck; do
  step "rust-sanitizer-$tool" timeout 200 compute-sanitizer --tool $tool --error-exitcode 3 \
    .gpu/bin/gpu --include-ignored --exact views_streams_and_errors other_tiles_and_dynamic_shared_memory
done
step overhead .gpu/bin/runtime_overhead
export BANKFREE_CACHE_DIR=$(mktemp -d)
step example-first .gpu/bin/transpose
step example-second .gpu/bin/transpose
step strategies .gpu/bin/strategies
# The image example: the built-in test image, then gray, RGBA and JPEG inputs.
IMG=$(mktemp -d)
python3 -c "from PIL import Image; import numpy as n; r=n.random.default_rng(3)
Image.fromarray(r.integers(0,255,(777,1001),dtype=n.uint8)).save('$IMG/gray.png')
Image.fromarray(r.integers(0,255,(480,641,4),dtype=n.uint8)).save('$IMG/rgba.png')
Image.fromarray(r.integers(0,255,(1080,1920,3),dtype=n.uint8)).save('$IMG/photo.jpg')"
step image-default .gpu/bin/image_transpose "" "$IMG/t0.png"
step image-gray .gpu/bin/image_transpose "$IMG/gray.png" "$IMG/t1.png"
step image-rgba .gpu/bin/image_transpose "$IMG/rgba.png" "$IMG/t2.png"
step image-jpeg .gpu/bin/image_transpose "$IMG/photo.jpg" "$IMG/t3.png"
# The benchmark, then the peers (torch, cuBLAS geam through CuPy) on the same cases.
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64"
step bench .gpu/bin/bench --json "$OUT/bench.json"
step peers python3 scripts/gpu/peers.py --json "$OUT/peers.json"
# The transpose across GPUs: its tests need two (on one GPU the one-rank case
# runs), the example uses every visible GPU.
export NCCL_NVLS_ENABLE=0
if [ "$(nvidia-smi -L | wc -l)" -ge 2 ]; then
  step dist-tests .gpu/bin/dist_gpu --include-ignored --test-threads=1
else
  step dist-tests .gpu/bin/dist_gpu --include-ignored one_rank
fi
step dist-example .gpu/bin/dist_transpose --shape 8192x6000 --elem 4 --uneven
echo "=== summary"
tail -n 3 "$OUT/compile.log" "$OUT/correct.log" | grep -v '^$'
tail -n 1 "$OUT/ncu.log"; echo "under load (1024 x 1024): $(tail -n 1 "$OUT/ncu-loaded.log")"
for tool in memcheck racecheck synccheck; do grep -h 'ERROR SUMMARY' "$OUT/sanitizer-$tool.log" | sed "s/^/$tool: /"; done
cat "$OUT/time.log"
grep -h 'test result' "$OUT/gpu-tests.log" "$OUT/launch-tests.log" "$OUT/attribute-gpu.log" "$OUT/gpu-matrix.log"
grep -h '^matrix:' "$OUT/gpu-matrix.log"
for tool in memcheck racecheck synccheck; do grep -h 'SUMMARY' "$OUT/rust-sanitizer-$tool.log" | sed "s/^/rust $tool: /"; done
cat "$OUT/overhead.log"
tail -n 5 "$OUT/example-first.log" "$OUT/example-second.log"
cat "$OUT/strategies.log"
cat "$OUT"/image-*.log
grep -A200 'median of' "$OUT/bench.log"
grep -A200 'median of' "$OUT/peers.log"
grep -h 'test result' "$OUT/dist-tests.log"; tail -n 3 "$OUT/dist-example.log"
printf '%s\n' "${status[@]}"
