import re, cupy as cp, numpy as np
exec(open("widths.py").read().split("CASES = [")[0])
for S in (8, 16, 32):
    for rows, cols in ((8191, 8193), (8192, 8192), (8193, 8191)):
        fn, wide = kern(f"skewS{S}_32.cu")
        n = rows * cols; e = 4
        h = np.random.default_rng(1).integers(0, 256, n * e, dtype=np.uint8)
        want = h.reshape(rows, cols, e).transpose(1, 0, 2).reshape(-1)
        srcs = [cp.asarray(h) for _ in range(4)]; dst = cp.empty(n * e, dtype=cp.uint8); cur = [0]
        def copy():
            cur[0] = (cur[0] + 1) % 4
            cp.cuda.runtime.memcpy(dst.data.ptr, srcs[cur[0]].data.ptr, n * e, 3)
        tc = med(copy)
        args = tuple(np.uint32(v) for v in (1, rows, cols, cols, rows, n, n))
        grid = (-(-cols // 32) * ((rows + S - 1 + 31) // 32), 1, 1)
        dst.fill(0); fn(grid, (32, 8, 1), (srcs[0], dst) + args)
        ok = bool((cp.asnumpy(dst) == want).all())
        def run():
            cur[0] = (cur[0] + 1) % 4
            fn(grid, (32, 8, 1), (srcs[cur[0]], dst) + args)
        t = med(run)
        print(f"skew S={S:2} {rows}x{cols}: copy {tc:.4f} kernel {t:.4f} ratio {tc / t:.3f} {'ok' if ok else 'WRONG'}", flush=True)
