#!/usr/bin/env bash
# What the attribute costs a user's build: a crate outside the workspace, with
# default profiles (so bankfree's proc-macro and bankfree-gen run unoptimized, as in
# any dependent crate), depending on bankfree by path. Its dependencies are built
# once; then for each case src/main.rs is rewritten and an incremental
# `cargo check` is timed (the best of RUNS, default 2). Prints one table.
#
#   bash scripts/compile-time.sh            # every case
#   RUNS=3 bash scripts/compile-time.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runs=${RUNS:-2}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/src"
cat > "$dir/Cargo.toml" <<EOF
[package]
name = "bankfree-compile-time"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
bankfree = { path = "$root" }

[workspace]
EOF
export CARGO_TARGET_DIR="$dir/target"

head='#![allow(dead_code, unused_imports)]
use bankfree::cudarc::driver::CudaSlice;
use bankfree::tiled_transpose;
fn main() {}'
sig() { # attribute arguments, function name, element type
  printf '#[tiled_transpose(%s)]\npub fn %s(src: &CudaSlice<%s>, dst: &mut CudaSlice<%s>, rows: usize, cols: usize) -> bankfree::Result<()>;\n' \
    "$1" "$2" "$3" "$3"
}
generic='#[tiled_transpose]
pub fn generic<T: bankfree::Element>(src: &CudaSlice<T>, dst: &mut CudaSlice<T>, rows: usize, cols: usize) -> bankfree::Result<()>;'
twelve=""
i=0
for t in u8 u16 f32 f64 '[f32; 3]' '[u32; 4]'; do
  for s in pad swizzle; do
    twelve+="$(sig "strategy = $s" "t$i" "$t")"$'\n'
    i=$((i + 1))
  done
done

# Build the dependencies (and bankfree-macros) once.
printf '%s\n' "$head" > "$dir/src/main.rs"
cargo check --quiet --manifest-path "$dir/Cargo.toml" 2>&1

measure() { # label, body
  printf '%s\n%s\n' "$head" "$2" > "$dir/src/main.rs"
  local best=""
  for _ in $(seq "$runs"); do
    touch "$dir/src/main.rs"
    local t0 t1
    t0=$(date +%s.%N)
    cargo check --quiet --manifest-path "$dir/Cargo.toml" 2>&1
    t1=$(date +%s.%N)
    best=$(python3 -c "a=$t1-$t0; b='$best'; print(f'{min(a, float(b)) if b else a:.2f}')")
  done
  printf '| %s | %s s |\n' "$1" "$best"
}

echo "| the crate holds | cargo check |"
echo "|---|---|"
measure "no attribute" ""
measure "#[tiled_transpose(tile = 32, strategy = pad)] on an f32 fn" "$(sig 'tile = 32, strategy = pad' f f32)"
measure "#[tiled_transpose] on a u8 fn" "$(sig '' f u8)"
measure "#[tiled_transpose] on an f64 fn" "$(sig '' f f64)"
measure "#[tiled_transpose] on a [f32; 3] fn" "$(sig '' f '[f32; 3]')"
measure "#[tiled_transpose(strategy = pad)] on an f32 fn" "$(sig 'strategy = pad' f f32)"
measure "#[tiled_transpose] on a generic T: Element fn" "$generic"
measure "12 concrete attributes (6 element types x pad/swizzle) plus one generic" "$twelve$generic"
