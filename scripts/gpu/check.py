#!/usr/bin/env python3
"""GPU checks of the kernels bankfree-gen writes (run on the H100 machine).

    check.py compile  KDIR          NVRTC: every kernel to CUBIN for sm_75/80/90; spills?
    check.py correct  KDIR          CuPy: bit-exact transposes on edge, batched, pitched shapes
    check.py ncu-run  KDIR          launch the ncu subset once each (run under ncu)
    check.py ncu-compare KDIR CSV   ncu's shared wavefronts/instruction vs the analyzer
    check.py sanitize KDIR          small launches for compute-sanitizer
    check.py time     KDIR          8192 x 8192 medians vs cudaMemcpy D2D (informational)
    check.py probe    KDIR REGEX BATCH ROWS COLS [REPS]
                                    time the kernels whose entry matches REGEX (and cuBLAS
                                    geam for 4- and 8-byte) on one dense shape vs memcpy;
                                    run it under ncu to count the bytes each one moves

KDIR is what `bankfree-gen grid --out KDIR` wrote (*.cu and manifest.json).
"""
import concurrent.futures as cf
import csv
import ctypes
import glob
import json
import os
import re
import sys

OUT = os.environ.get("OUT", "/tmp")


def load(kdir, every_form=False):
    """The manifest's kernels; unless every_form, only the square-tile ones of one
    element per step (the launch below is theirs: it knows neither `vec x vec`
    blocks, which need dimensions divisible by `vec`, nor the skew, tall and wide
    forms; those run in the Rust GPU tests, which check that a kernel fits a call)."""
    with open(os.path.join(kdir, "manifest.json")) as f:
        ks = json.load(f)
    if every_form:
        return ks
    return [k for k in ks if k["spec"].get("form", "tile") == "tile" and k["spec"].get("vec", 1) == 1]


def source(kdir, k):
    with open(os.path.join(kdir, k["file"])) as f:
        return f.read()


# ---------------------------------------------------------------- NVRTC
def nvrtc_lib():
    names = [os.environ.get("BANKFREE_NVRTC", ""), "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so"]
    names += glob.glob("/usr/local/cuda/lib64/libnvrtc.so.*")
    for n in filter(None, names):
        try:
            return ctypes.CDLL(n)
        except OSError:
            pass
    raise SystemExit("libnvrtc not found")


def nvrtc_compile(lib, src, name, arch, index64=False):
    prog = ctypes.c_void_p()
    rc = lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), name.encode(), 0, None, None)
    if rc != 0:
        return False, f"nvrtcCreateProgram {rc}", 0
    opts = [f"--gpu-architecture={arch}".encode(), b"--ptxas-options=-v"]
    if index64:
        opts.append(b"-DBANKFREE_INDEX64")  # the 64-bit index build
    arr = (ctypes.c_char_p * len(opts))(*opts)
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    buf = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, buf)
    log = buf.value.decode(errors="replace")
    cubin = ctypes.c_size_t()
    if rc == 0:
        lib.nvrtcGetCUBINSize(prog, ctypes.byref(cubin))
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return rc == 0, log, cubin.value


def cmd_compile(kdir):
    lib = nvrtc_lib()
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    ks = load(kdir, every_form=True)
    jobs = [(k, arch, wide) for k in ks for arch in ("sm_75", "sm_80", "sm_90") for wide in (False, True)]

    def one(job):
        k, arch, wide = job
        ok, log, n = nvrtc_compile(lib, source(kdir, k), k["file"], arch, wide)
        arch += " 64-bit" if wide else ""
        counts = [int(x) for m in re.finditer(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
                  for x in m.groups()]
        spill = any(counts) or not counts  # no ptxas report at all also fails the check
        return k["entry"], arch, ok, n, spill, log

    fails, spills, logs = [], [], []
    with cf.ThreadPoolExecutor(16) as ex:
        for entry, arch, ok, n, spill, log in ex.map(one, jobs):
            logs.append(f"== {entry} {arch} ok={ok} cubin={n}\n{log}")
            if not ok or n == 0:
                fails.append((entry, arch))
            if spill:
                spills.append((entry, arch))
    with open(os.path.join(OUT, "nvrtc.log"), "w") as f:
        f.write("\n".join(logs))
    print(f"NVRTC {major.value}.{minor.value}: {len(jobs)} compiles ({len(ks)} kernels x 3 archs x 2 index builds): "
          f"{len(jobs) - len(fails)} ok, {len(fails)} failed, {len(spills)} with spills")
    for f_ in fails[:10]:
        print("  FAILED", *f_)
    for s in spills[:10]:
        print("  SPILL", *s)
    return not fails and not spills


# ---------------------------------------------------------------- CuPy launches
def cupy_kernel(kdir, k, cache={}):
    import cupy as cp
    key = k["entry"]
    if key not in cache:
        mod = cp.RawModule(code=source(kdir, k), backend="nvrtc")
        fn = mod.get_function(k["entry"])
        if k["shared_bytes"] > 48 * 1024:
            fn.max_dynamic_shared_size_bytes = k["shared_bytes"]
        cache[key] = (mod, fn)
    return cache[key][1]


def launch(fn, k, src, dst, shape):
    import numpy as np
    batch, rows, cols, sld, dld, sbs, dbs = shape
    t = k["spec"]["tile"]
    tiles = -(-rows // t) * -(-cols // t)
    grid = (min(tiles, 2**31 - 1), min(batch, 65535), 1)
    block = (t, k["spec"]["block_rows"], 1)
    smem = k["shared_bytes"] if k["shared_bytes"] > 48 * 1024 else 0
    # The 32-bit build (the source as emitted): every parameter fits these shapes.
    args = (src, dst) + tuple(np.uint32(v) for v in (batch, rows, cols, sld, dld, sbs, dbs))
    fn(grid, block, args, shared_mem=smem)


def dense(batch, rows, cols):
    return (batch, rows, cols, cols, rows, rows * cols, rows * cols)


def extent(shape):
    batch, rows, cols, sld, dld, sbs, dbs = shape
    return (batch - 1) * sbs + (rows - 1) * sld + cols, (batch - 1) * dbs + (cols - 1) * dld + rows


def reference(shape, e, src_h, dst_h):
    import numpy as np
    batch, rows, cols, sld, dld, sbs, dbs = shape
    b, r, c = np.meshgrid(np.arange(batch), np.arange(rows), np.arange(cols), indexing="ij")
    s = (b * sbs + r * sld + c).ravel()
    d = (b * dbs + c * dld + r).ravel()
    out = dst_h.reshape(-1, e).copy()
    out[d] = src_h.reshape(-1, e)[s]
    return out.reshape(-1)


def run_one(kdir, k, shape, rng):
    import cupy as cp
    import numpy as np
    e = k["spec"]["elem_bytes"]
    ns, nd = extent(shape)
    src_h = rng.integers(0, 256, ns * e, dtype=np.uint8)
    poison = rng.integers(0, 256, nd * e, dtype=np.uint8)
    want = reference(shape, e, src_h, poison)
    src = cp.asarray(src_h)
    dst = cp.asarray(poison)
    launch(cupy_kernel(kdir, k), k, src, dst, shape)
    cp.cuda.runtime.deviceSynchronize()
    return bool((cp.asnumpy(dst) == want).all())


CORRECT_SHAPES = [
    dense(1, 1, 1), dense(1, 1, 7), dense(1, 7, 1), dense(1, 31, 33), dense(1, 1080, 1920),
    dense(3, 37, 41), dense(1, 2**21, 3), dense(1, 3, 2**21),
    (2, 45, 70, 75, 50, 45 * 75 + 11, 70 * 50 + 7),  # pitched, with gaps between batches
]


def correct_subset(ks):
    picked = []
    for k in ks:
        s = k["spec"]
        default_rows = s["block_rows"] == min(s["tile"], 8)
        if default_rows and s["elem_bytes"] in (1, 2, 4, 8, 12, 16):
            picked.append(k)
        elif s["strategy"] == "xor" and s["elem_bytes"] == 4 and s["tile"] in (32, 64):
            picked.append(k)  # every block_rows of the XOR kernels at tiles 32 and 64
    return picked


def cmd_correct(kdir):
    import numpy as np
    rng = np.random.default_rng(2026)
    ks = correct_subset(load(kdir))
    runs, bad = 0, []
    for k in ks:
        for shape in CORRECT_SHAPES:
            runs += 1
            if not run_one(kdir, k, shape, rng):
                bad.append((k["entry"], shape))
    print(f"correctness: {len(ks)} kernels x {len(CORRECT_SHAPES)} shapes = {runs} runs, {len(bad)} wrong")
    for b in bad[:20]:
        print("  WRONG", *b)
    return not bad


# ---------------------------------------------------------------- ncu
def ncu_subset(ks):
    out = []
    for k in ks:
        s = k["spec"]
        if k["strategy"] == "naive" or s["block_rows"] != min(s["tile"], 8):
            continue
        if s["tile"] == 32 and s["elem_bytes"] in (1, 2, 4, 8, 12, 16):
            out.append(k)
        elif s["tile"] in (8, 16, 64) and s["elem_bytes"] in (2, 4, 8) and s["strategy"] in ("xor", "none", "rotate"):
            out.append(k)
    return out


def cmd_ncu_run(kdir):
    """NCU_N sets the side (default 1024, a multiple of every tile: interior tiles only);
    NCU_ONLY keeps the kernels whose entry contains one of its comma-separated words."""
    import cupy as cp
    n = int(os.environ.get("NCU_N", "1024"))
    only = [w for w in os.environ.get("NCU_ONLY", "").split(",") if w]
    for k in ncu_subset(load(kdir)):
        if only and not any(w in k["entry"] for w in only):
            continue
        e = k["spec"]["elem_bytes"]
        shape = dense(1, n, n)
        src = cp.zeros(n * n * e, dtype=cp.uint8) + 1
        dst = cp.zeros_like(src)
        launch(cupy_kernel(kdir, k), k, src, dst, shape)
    cp.cuda.runtime.deviceSynchronize()


def cmd_ncu_compare(kdir, csv_path):
    ks = {k["entry"]: k for k in ncu_subset(load(kdir))}
    per = {}
    with open(csv_path) as f:
        lines = [l for l in f if l.startswith('"')]
    for row in csv.DictReader(lines):
        name = row.get("Kernel Name", "")
        val = float(row["Metric Value"].replace(",", "") or 0)
        per.setdefault((row["ID"], name), {})[row["Metric Name"]] = val
    rows, worst = [], 0.0
    for (_, name), m in sorted(per.items(), key=lambda x: x[0][1]):
        k = ks.get(name)
        if not k:
            continue
        pred = {i["kind"]: i["mean_wavefronts"] for i in k["instructions"]}
        res = {}
        for kind, op in (("store", "st"), ("load", "ld")):
            inst = m.get(f"smsp__sass_inst_executed_op_shared_{op}.sum", 0)
            wf = m.get(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum", 0)
            meas = wf / inst if inst else float("nan")
            dev = abs(meas - pred[kind]) / pred[kind]
            worst = max(worst, dev)
            res[kind] = (pred[kind], meas, dev)
        rows.append((name, res))
    print(f"{'kernel':<42} {'st pred':>7} {'st ncu':>7} {'ld pred':>7} {'ld ncu':>7}  max dev")
    for name, res in rows:
        (sp, sm, sd), (lp, lm, ld) = res["store"], res["load"]
        print(f"{name:<42} {sp:7.2f} {sm:7.2f} {lp:7.2f} {lm:7.2f}  {100 * max(sd, ld):5.1f}%")
    print(f"ncu vs analyzer: {len(rows)} kernels, worst deviation {100 * worst:.1f}% "
          f"({'within' if worst <= 0.05 else 'OUTSIDE'} 5%)")
    return rows and worst <= 0.05


# ---------------------------------------------------------------- sanitizer
def cmd_sanitize(kdir):
    import numpy as np
    rng = np.random.default_rng(7)
    ks = [k for k in load(kdir) if k["spec"]["tile"] == 32 and k["spec"]["block_rows"] == 8
          and k["spec"]["elem_bytes"] in (1, 4, 12) and k["strategy"] in ("pad", "swizzle(xor)", "swizzle(rotate)", "none")]
    ks += [k for k in load(kdir) if k["entry"] in ("bankfree_transpose_t64_r8_e16_xor506",
                                                   "bankfree_transpose_t8_r8_e2_xor303")]
    shapes = [dense(1, 31, 33), dense(3, 37, 41), (2, 45, 70, 75, 50, 45 * 75 + 11, 70 * 50 + 7)]
    ok = all(run_one(kdir, k, s, rng) for k in ks for s in shapes)
    print(f"sanitize subset: {len(ks)} kernels x {len(shapes)} shapes, results {'right' if ok else 'WRONG'}")
    return ok


# ---------------------------------------------------------------- timing
def cmd_time(kdir):
    import cupy as cp
    ks = load(kdir)
    n = 8192
    pick = [k for k in ks if k["spec"]["tile"] == 32 and k["spec"]["block_rows"] == 8
            and (k["spec"]["elem_bytes"] == 4 or (k["spec"]["elem_bytes"] in (1, 2, 8, 16) and k["strategy"] in ("pad", "swizzle(xor)")))]
    res = []
    for e in sorted({k["spec"]["elem_bytes"] for k in pick}):
        nbytes = n * n * e
        src = cp.random.randint(0, 256, nbytes, dtype=cp.uint8)
        dst = cp.empty_like(src)
        start, stop = cp.cuda.Event(), cp.cuda.Event()

        def med(f, reps=30):
            for _ in range(3):
                f()
            ts = []
            for _ in range(reps):
                start.record()
                f()
                stop.record()
                stop.synchronize()
                ts.append(cp.cuda.get_elapsed_time(start, stop))
            ts.sort()
            return ts[len(ts) // 2]

        copy = med(lambda: cp.cuda.runtime.memcpy(dst.data.ptr, src.data.ptr, nbytes, 3))
        res.append((f"cudaMemcpy D2D ({e}-byte case)", e, copy, 1.0))
        for k in [k for k in pick if k["spec"]["elem_bytes"] == e]:
            fn = cupy_kernel(kdir, k)
            t = med(lambda: launch(fn, k, src, dst, dense(1, n, n)))
            res.append((k["entry"], e, t, copy / t))
    print(f"{'8192 x 8192':<44} {'ms':>7} {'GB/s':>7} {'vs memcpy':>9}")
    for name, e, t, ratio in res:
        print(f"{name:<44} {t:7.3f} {2 * n * n * e / t / 1e6:7.0f} {ratio:9.2f}")
    return True


def cmd_probe(kdir, regex, batch, rows, cols, reps="30"):
    import cupy as cp
    import cupy.cublas  # noqa: F401 (a submodule: not loaded by `import cupy`)
    batch, rows, cols, reps = int(batch), int(rows), int(cols), int(reps)
    ks = [k for k in load(kdir) if re.search(regex, k["entry"])]
    start, stop = cp.cuda.Event(), cp.cuda.Event()

    def med(f):
        f()
        ts = []
        for _ in range(reps):
            start.record()
            f()
            stop.record()
            stop.synchronize()
            ts.append(cp.cuda.get_elapsed_time(start, stop))
        ts.sort()
        return ts[len(ts) // 2]

    print(f"{batch} x {rows} x {cols}: median of {reps} runs")
    for e in sorted({k["spec"]["elem_bytes"] for k in ks}):
        nbytes = batch * rows * cols * e
        src = cp.random.randint(0, 256, nbytes, dtype=cp.uint8)
        dst = cp.empty_like(src)
        copy = med(lambda: cp.cuda.runtime.memcpy(dst.data.ptr, src.data.ptr, nbytes, 3))
        print(f"  {'cudaMemcpy D2D':<44} {copy:8.4f} ms  1.000")
        for k in [k for k in ks if k["spec"]["elem_bytes"] == e]:
            fn = cupy_kernel(kdir, k)
            t = med(lambda: launch(fn, k, src, dst, dense(batch, rows, cols)))
            print(f"  {k['entry']:<44} {t:8.4f} ms  {copy / t:.3f}")
        if e in (4, 8) and batch == 1:
            dt = cp.float32 if e == 4 else cp.float64
            a = src.view(dt).reshape(rows, cols)
            o = dst.view(dt).reshape(cols, rows)
            t = med(lambda: cp.cublas.geam("T", "N", 1.0, a, 0.0, o, out=o))
            print(f"  {'cuBLAS geam':<44} {t:8.4f} ms  {copy / t:.3f}")
    return True


if __name__ == "__main__":
    if sys.argv[1] == "probe":
        sys.exit(0 if cmd_probe(*sys.argv[2:]) else 1)
    cmd, kdir = sys.argv[1], sys.argv[2]
    fns = {"compile": cmd_compile, "correct": cmd_correct, "ncu-run": cmd_ncu_run,
           "sanitize": cmd_sanitize, "time": cmd_time}
    if cmd == "ncu-compare":
        ok = cmd_ncu_compare(kdir, sys.argv[3])
    else:
        ok = fns[cmd](kdir)
    sys.exit(0 if ok in (None, True) else 1)
