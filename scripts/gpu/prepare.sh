#!/usr/bin/env bash
# Here (the development machine): build what the GPU machine needs into the
# git-ignored .gpu/ folder, which the device tool carries (`carry: [".gpu"]`).
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .gpu && mkdir -p .gpu
cargo build --release -p bankfree-gen
cp target/release/bankfree-gen .gpu/
.gpu/bankfree-gen grid --out .gpu/kernels
du -sh .gpu
