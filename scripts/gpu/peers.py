#!/usr/bin/env python3
"""Peers on the benchmark's cases, same machine, same day: torch's transposed copy
`out.copy_(x.t())` (permute for batched / 12-byte) and cuBLAS geam through CuPy
(f32, f64). Ratio = time of a same-bytes `cudaMemcpy` device-to-device / time.
Medians of 30 CUDA-event-timed runs after 3 warm-ups.

    python3 scripts/gpu/peers.py [--json peers.json]
    python3 scripts/gpu/peers.py --shapes shapes.json   # the cases `bench --random` drew
    python3 scripts/gpu/peers.py --permute              # `y.copy_(x.permute(p))` on the cases of `--example permute`
    python3 scripts/gpu/peers.py --permute --cases F    # ... on the cases `--example permute -- --random N --cases F` drew
"""
import json
import sys

import cupy as cp
import cupy.cublas  # a submodule: not loaded by `import cupy`
import torch

REPS = 30


def median(fn):
    for _ in range(3):
        fn()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(REPS):
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[REPS // 2]


def case(name, shape, dtype, last=None):
    """shape: (batch, rows, cols); last: a trailing element dimension (12-byte = 3 x f32)."""
    b, r, c = shape
    dims = (b, r, c) + ((last,) if last else ())
    x = torch.randint(0, 100, dims, device="cuda").to(dtype) if dtype != torch.uint8 else torch.randint(0, 255, dims, device="cuda", dtype=torch.uint8)
    out_copy = torch.empty_like(x)
    tdims = (b, c, r) + ((last,) if last else ())
    out = torch.empty(tdims, device="cuda", dtype=dtype)
    # Inputs rotate among enough copies to exceed the L2 cache (as in the bench):
    # a case of a few MB read from L2 every time would time the cache, not memory.
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    xs = [x] + [x.clone() for _ in range(min(63, -(-4 * l2 // (x.numel() * x.element_size())) - 1))]
    turn = iter(range(1 << 62))
    nxt = lambda: xs[next(turn) % len(xs)]
    # The baseline is a cudaMemcpy device-to-device of the same bytes, as in the
    # bench: torch's own `copy_` runs a kernel whose time varies at a few tens of MB
    # (21 MB of complex128 took 20 to 37 us where the memcpy takes 14).
    nb = x.numel() * x.element_size()
    stream = torch.cuda.current_stream().cuda_stream
    d2d = cp.cuda.runtime.memcpyDeviceToDevice
    copy = median(lambda: cp.cuda.runtime.memcpyAsync(out_copy.data_ptr(), nxt().data_ptr(), nb, d2d, stream))
    perm = (0, 2, 1) + ((3,) if last else ())
    t = median(lambda: out.copy_(nxt().permute(*perm)))
    assert torch.equal(out, x.permute(*perm))
    nbytes = 2 * x.numel() * x.element_size()
    rows = [(name, "same-bytes cudaMemcpy", copy, nbytes, 1.0), (name, "torch copy_(x.t())", t, nbytes, copy / t)]
    if dtype in (torch.float32, torch.float64) and b == 1 and not last:
        a = cp.asarray(x[0])
        o = cp.empty((c, r), dtype=a.dtype)
        # beta = 0 and B = C: cuBLAS allows it, and nothing is allocated per run.
        g = median(lambda: cp.cublas.geam("T", "N", 1.0, a, 0.0, o, out=o))
        assert bool((o == a.T).all())
        rows.append((name, "cuBLAS geam (CuPy)", g, nbytes, copy / g))
    return rows


DTYPES = {1: (torch.uint8, None), 2: (torch.float16, None), 4: (torch.float32, None),
          8: (torch.float64, None), 12: (torch.float32, 3), 16: (torch.complex128, None)}


def drawn(path):
    """torch on the cases of `bench --random ... --shapes path`, with each class's median and worst."""
    with open(path) as f:
        cases = json.load(f)
    per_class = {}
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}; median of {REPS}")
    print(f"{'case':<28} {'class':<18} {'torch ratio':>11}")
    for c in cases:
        dtype, last = DTYPES[c["elem_bytes"]]
        rows = case(c["case"], (c["batch"], c["rows"], c["cols"]), dtype, last)
        ratio = rows[1][4]
        per_class.setdefault(c["class"], []).append(ratio)
        print(f"{c['case']:<28} {c['class']:<18} {ratio:11.3f}")
        torch.cuda.empty_cache()
    for name, v in per_class.items():
        v.sort()
        print(f"{name:<18} torch median {v[len(v) // 2]:.3f}, worst {v[0]:.3f}")


PERMUTES = [
    ("[B,S,H,D]->[B,H,S,D] f16", (8, 2048, 32, 128), (0, 2, 1, 3), torch.float16),
    ("[B,H,S,D]->[B,S,H,D] f16", (8, 32, 2048, 128), (0, 2, 1, 3), torch.float16),
    ("QKV split f16", (8, 2048, 3, 32, 128), (2, 0, 3, 1, 4), torch.float16),
    ("NCHW->NHWC f16", (64, 256, 56, 56), (0, 2, 3, 1), torch.float16),
    ("NHWC->NCHW f32", (64, 56, 56, 256), (0, 3, 1, 2), torch.float32),
    ("HWC->CHW u8", (2160, 3840, 3), (2, 0, 1), torch.uint8),
    ("16^5 reversed f32", (16, 16, 16, 16, 16), (4, 3, 2, 1, 0), torch.float32),
    ("rank 7 f32", (8, 7, 6, 5, 4, 3, 32), (6, 2, 0, 4, 1, 5, 3), torch.float32),
]


def permutes():
    """torch's permuted copy on the cases of `cargo run --release --example permute`."""
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}; median of {REPS}")
    print(f"{'case':<28} {'torch ratio':>11}")
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    cases = PERMUTES
    if "--cases" in sys.argv:
        # The cases `--example permute -- --random N --cases FILE` drew.
        types = {1: torch.uint8, 2: torch.float16, 4: torch.float32, 8: torch.float64}
        with open(sys.argv[sys.argv.index("--cases") + 1]) as f:
            cases = [(c["name"], c["dims"], c["perm"], types[c["elem_bytes"]]) for c in json.load(f)]
    for name, dims, perm, dtype in cases:
        x = torch.randint(0, 100, dims, device="cuda").to(dtype)
        xs = [x] + [x.clone() for _ in range(min(63, -(-4 * l2 // (x.numel() * x.element_size())) - 1))]
        turn = iter(range(1 << 62))
        nxt = lambda: xs[next(turn) % len(xs)]
        out_copy = torch.empty_like(x)
        out = torch.empty([dims[p] for p in perm], device="cuda", dtype=dtype)
        nb = x.numel() * x.element_size()
        stream = torch.cuda.current_stream().cuda_stream
        d2d = cp.cuda.runtime.memcpyDeviceToDevice
        copy = median(lambda: cp.cuda.runtime.memcpyAsync(out_copy.data_ptr(), nxt().data_ptr(), nb, d2d, stream))
        t = median(lambda: out.copy_(nxt().permute(*perm)))
        assert torch.equal(out, xs[(next(turn) - 1) % len(xs)].permute(*perm))
        print(f"{name:<28} {copy / t:11.3f}")
        del xs, x, out, out_copy
        torch.cuda.empty_cache()


def main():
    if "--permute" in sys.argv:
        permutes()
        return
    if "--shapes" in sys.argv:
        drawn(sys.argv[sys.argv.index("--shapes") + 1])
        return
    cases = [
        ("8192x8192 1-byte", (1, 8192, 8192), torch.uint8, None),
        ("8192x8192 2-byte", (1, 8192, 8192), torch.float16, None),
        ("8192x8192 f32", (1, 8192, 8192), torch.float32, None),
        ("8192x8192 f64", (1, 8192, 8192), torch.float64, None),
        ("8192x8192 12-byte", (1, 8192, 8192), torch.float32, 3),
        ("8192x8192 16-byte", (1, 8192, 8192), torch.complex128, None),
        ("8191x8193 f32", (1, 8191, 8193), torch.float32, None),
        ("4194304x3 f32", (1, 1 << 22, 3), torch.float32, None),
        ("3x4194304 f32", (1, 3, 1 << 22), torch.float32, None),
        ("64x512x512 f16", (64, 512, 512), torch.float16, None),
        ("1080x1920 u8", (1, 1080, 1920), torch.uint8, None),
    ]
    rows = []
    for name, shape, dtype, last in cases:
        rows += case(name, shape, dtype, last)
        torch.cuda.empty_cache()
    print(f"\n{torch.cuda.get_device_name()}, torch {torch.__version__}, CuPy {cp.__version__}; median of {REPS}")
    print(f"{'case':<20} {'implementation':<26} {'ms':>9} {'GB/s':>8} {'ratio':>7}")
    for name, what, ms, nbytes, ratio in rows:
        print(f"{name:<20} {what:<26} {ms:9.4f} {nbytes / ms / 1e6:8.0f} {ratio:7.3f}")
    if "--json" in sys.argv:
        with open(sys.argv[sys.argv.index("--json") + 1], "w") as f:
            json.dump([dict(case=n, impl=w, ms=m, gbps=b / m / 1e6, ratio=r) for n, w, m, b, r in rows], f)


if __name__ == "__main__":
    main()
