#!/usr/bin/env bash
# On the development machine: build what a GPU machine without a Rust toolchain
# needs into the git-ignored .gpu/ folder; copy the repository with .gpu/ there.
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .gpu && mkdir -p .gpu/bin
cargo build --release -p bankfree-gen
cp target/release/bankfree-gen .gpu/
.gpu/bankfree-gen grid --out .gpu/kernels
cargo build --release --examples --features images,nccl
cp target/release/examples/{transpose,runtime_overhead,bench,strategies,image_transpose,permute,dist_transpose} .gpu/bin/
# The release test binaries whose #[ignore = "needs a CUDA GPU"] tests run there.
{ cargo test --release -p bankfree-runtime --test gpu --no-run --message-format=json
  cargo test --release -p bankfree-runtime --test launch_gpu --no-run --message-format=json
  cargo test --release -p bankfree --test attribute_gpu --no-run --message-format=json
  cargo test --release -p bankfree --test gpu_matrix --no-run --message-format=json
  cargo test --release -p bankfree --test permute_gpu --no-run --message-format=json
  cargo test --release -p bankfree --features nccl --test dist_gpu --no-run --message-format=json; } \
  | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        print(m["executable"])' \
  | while read -r exe; do cp "$exe" ".gpu/bin/$(basename "$exe" | sed 's/-[0-9a-f]*$//')"; done
ls -la .gpu/bin
du -sh .gpu
