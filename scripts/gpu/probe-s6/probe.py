"""Session-6 probe: staged loads (all of a move's loads before its first store)
against the session-5 emission, for every default kernel (H100, CuPy, one run).

Sources in ./old and ./new (see README.md), same names. Interleaved timing: each
round times 10 back-to-back launches of every kernel and of cudaMemcpy D2D in turn;
medians over the rounds; ratio = copy time / kernel time; every output checked."""
import re, sys, os, cupy as cp, numpy as np
start, stop = cp.cuda.Event(), cp.cuda.Event()

class Gen:
    """A generated kernel in its 32- or 64-bit index build, launched as the runtime does."""
    def __init__(self, path, index64):
        src = open(path).read()
        entry = re.search(r"\n(bankfree_transpose_\w+)\(", src).group(1)
        if index64:
            src = "#define BANKFREE_INDEX64\n" + src; entry += "_i64"
        self.fn = cp.RawModule(code=src, backend="nvrtc", options=("-std=c++17",)).get_function(entry)
        m = re.search(r"dynamic: launch with (\d+) bytes", src)
        self.shared = int(m.group(1)) if m else 0
        if self.shared:
            self.fn.max_dynamic_shared_size_bytes = self.shared
        self.ty = np.uint64 if index64 else np.uint32
        t, r = map(int, re.search(r"block \((\d+), (\d+), 1\)", src).groups())
        self.block = (t, r, 1)
        v = int(m.group(1)) if (m := re.search(r"_v(\d+)_", entry)) else 1
        skew = "_skew" in entry
        sector = 32 // int(re.search(r"_e(\d+)", entry).group(1))
        def grid(rows, cols):
            if skew:
                return -(-cols // t) * -(-(rows + sector - 1) // 64)
            return -(-cols // (t * v)) * -(-rows // (t * v))
        self.grid = grid
    def __call__(self, src, dst, rows, cols):
        n = rows * cols
        args = tuple(self.ty(a) for a in (1, rows, cols, cols, rows, n, n))
        g = min(self.grid(rows, cols), 2**31 - 1)
        self.fn((g, 1, 1), self.block, (src, dst) + args, shared_mem=self.shared)

results = []

def duel(name, e, rows, cols, kernels, rounds=25, per=10):
    n = rows * cols
    h = np.random.default_rng(1).integers(0, 256, n * e, dtype=np.uint8)
    want = h.reshape(rows, cols, e).transpose(1, 0, 2).reshape(-1)
    nb = max(2, -(-(120 << 20) // (n * e)))
    srcs = [cp.asarray(h) for _ in range(nb)]
    dst = cp.empty(n * e, dtype=cp.uint8)
    runs = [("cudaMemcpy D2D", lambda src: cp.cuda.runtime.memcpy(dst.data.ptr, src.data.ptr, n * e, 3))]
    for label, k in kernels:
        dst.fill(0); k(srcs[0], dst, rows, cols)
        ok = bool((cp.asnumpy(dst) == want).all())
        runs.append((label + ("" if ok else " WRONG"), lambda src, k=k: k(src, dst, rows, cols)))
    times = {label: [] for label, _ in runs}
    for _ in range(rounds):
        for label, f in runs:
            for i in range(3): f(srcs[i % nb])
            start.record()
            for i in range(per): f(srcs[i % nb])
            stop.record(); stop.synchronize()
            times[label].append(cp.cuda.get_elapsed_time(start, stop) / per)
    med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
    tc = med["cudaMemcpy D2D"]
    for label, _ in runs:
        print(f"{name:16} {label:34} {med[label]:.4f} ms  {tc / med[label]:.3f}", flush=True)
        results.append((name, label, tc / med[label]))
    del srcs, dst
    cp.get_default_memory_pool().free_all_blocks()

# (case, element bytes, rows, cols, [(source, builds)]); a build is "old32",
# "new64" and so on: the emission and the index width.
FIRST = [  # session-5 emission against staged loads, each in the build the launcher ran
    ("8192^2 u8", 1, 8192, 8192, [("u8p_t32r16.cu", "old32 new32"), ("u8x_t32r16.cu", "old32 new32"),
                                   ("u8x_t32r8.cu", "old32 new32"), ("u8x_t16r16.cu", "old32 new32")]),
    ("8192^2 2-byte", 2, 8192, 8192, [("e2p.cu", "old32 new32"), ("e2x.cu", "old32 new32")]),
    ("8192^2 f32", 4, 8192, 8192, [("e4p.cu", "old64 new64"), ("e4x.cu", "old64 new64"), ("e4p.cu", "old32 new32")]),
    ("8192^2 f64", 8, 8192, 8192, [("e8p.cu", "old64 new64"), ("e8x.cu", "old64 new64")]),
    ("8192^2 12-byte", 12, 8192, 8192, [("e12p.cu", "old64 new64 old32 new32")]),
    ("8192^2 16-byte", 16, 8192, 8192, [("e16p.cu", "old64 new64")]),
    ("8191x8193 f32", 4, 8191, 8193, [("skew.cu", "old32 new32")]),
]
BUILDS = [  # staged loads: which index build is faster now
    ("8192^2 u8", 1, 8192, 8192, [("u8p_t32r16.cu", "new32 new64"), ("u8x_t32r16.cu", "new32 new64")]),
    ("8192^2 2-byte", 2, 8192, 8192, [("e2p.cu", "new32 new64"), ("e2x.cu", "new32 new64")]),
    ("8192^2 f32", 4, 8192, 8192, [("e4p.cu", "old64 new32 new64"), ("e4x.cu", "old64 new32 new64")]),
    ("8192^2 f64", 8, 8192, 8192, [("e8p.cu", "old64 new32 new64"), ("e8x.cu", "old64 new32 new64")]),
    ("8191x8193 f32", 4, 8191, 8193, [("skew.cu", "old32 new32")]),
]
CHUNKS = [  # the final emission (new2: skew unstaged, 12-byte staged 2 rows at a time;
           # alt: 12-byte 4 rows at a time) against the session-5 one
    ("8192^2 12-byte", 12, 8192, 8192, [("e12p.cu", "old64 old32 new232 new264 alt32 alt64")]),
    ("8192^2 u8", 1, 8192, 8192, [("u8x_t32r16.cu", "old32 new232"), ("u8p_t32r16.cu", "old32 new232")]),
    ("8192^2 f32", 4, 8192, 8192, [("e4p.cu", "old64 new232"), ("e4x.cu", "old64 new232")]),
    ("8192^2 f64", 8, 8192, 8192, [("e8p.cu", "old64 new232"), ("e8x.cu", "old64 new232")]),
]
ASSUME = [  # new4: the committed emission; asm: the same with __builtin_assume(tx < T),
           # __builtin_assume(ty < R) after the thread indices
    ("8191x8193 f32", 4, 8191, 8193, [("skew.cu", "new432 asm32")]),
    ("8192x8193 f32", 4, 8192, 8193, [("skew.cu", "new432 asm32")]),
    ("8192^2 u8", 1, 8192, 8192, [("u8x_t32r16.cu", "new432 asm32"), ("u8p_t32r16.cu", "new432 asm32")]),
    ("8192^2 2-byte", 2, 8192, 8192, [("e2x.cu", "new432 asm32")]),
    ("8192^2 f32", 4, 8192, 8192, [("e4p.cu", "new432 asm32")]),
    ("8192^2 f64", 8, 8192, 8192, [("e8x.cu", "new432 asm32")]),
]
what = sys.argv[1:]
cases = {"builds": BUILDS, "chunks": CHUNKS, "assume": ASSUME}.get(what[0] if what else "", FIRST)
what = [w for w in what if w not in ("builds", "chunks", "assume")]
for name, e, rows, cols, ks in cases:
    if what and not any(w in name for w in what):
        continue
    kernels = []
    for f, builds in ks:
        for b in builds.split():
            d, bits = b[:-2], b[-2:]
            kernels.append((f"{d} {f[:-3]} {bits}", Gen(f"{d}/{f}", bits == "64")))
    duel(name, e, rows, cols, kernels + kernels)
print("\nsummary (ratio to cudaMemcpy D2D; each kernel twice per round)")
for name, label, r in results:
    print(f"{name:16} {label:34} {r:.3f}")
