#!/usr/bin/env python3
"""torch.distributed's peer of `examples/dist_transpose.rs`: a row-sharded
`rows x cols` matrix (even split over every visible GPU, one process per GPU,
NCCL) transposed as torch users write it: a local `t().contiguous()` so each
rank's chunk for every peer is contiguous, `all_to_all_single`, and a copy that
puts the received blocks side by side. Also times the bare `all_to_all_single`
of the same bytes. Medians of CUDA-event-timed runs, each after a barrier; the
slowest rank's time per run.

    python3 scripts/gpu/dist_peers.py --shape 32768x32768 --elem 4 [--iters 20]
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

DTYPES = {1: (torch.uint8, 1), 4: (torch.int32, 1), 16: (torch.int32, 4)}


def timed(fn, iters, world):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    out = []
    for i in range(iters + 2):
        dist.barrier()
        torch.cuda.synchronize()
        s.record()
        fn()
        e.record()
        e.synchronize()
        t = torch.tensor([s.elapsed_time(e)], device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        if i >= 2:
            out.append(t.item())
    out.sort()
    return out[len(out) // 2]


def rank_main(rank, world, args):
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29533", rank=rank, world_size=world)
    rows, cols = args.rows, args.cols
    assert rows % world == 0 and cols % world == 0, "this peer splits evenly: rows and cols divisible by the GPU count"
    rp, cp = rows // world, cols // world
    dtype, lanes = DTYPES[args.elem]
    shape = (rp, cols, lanes) if lanes > 1 else (rp, cols)
    a = torch.randint(0, 100, shape, device="cuda", dtype=torch.int32).to(dtype)
    recv = torch.empty(world * cp * rp * lanes, device="cuda", dtype=dtype)

    def transpose():
        t = a.transpose(0, 1).contiguous()  # cols x rp: rank q's chunk is rows C_q..
        dist.all_to_all_single(recv, t.view(-1))
        blocks = recv.view(world, cp, rp, lanes) if lanes > 1 else recv.view(world, cp, rp)
        return blocks.transpose(0, 1).contiguous()  # cp x world x rp = cp x rows

    flat = a.view(-1)

    def bare():
        dist.all_to_all_single(recv, flat)

    # The result is checked once against the full transpose of the gathered matrix
    # on small shapes only.
    if rows * cols <= 1 << 22:
        full = [torch.empty_like(a) for _ in range(world)]
        dist.all_gather(full, a)
        want = torch.cat(full).transpose(0, 1)[rank * cp:(rank + 1) * cp]
        assert torch.equal(transpose().reshape(want.shape), want), "torch's result is wrong"
    t_ours = timed(transpose, args.iters, world)
    t_bare = timed(bare, args.iters, world)
    if rank == 0:
        gb = rows * cols * args.elem / 1e9
        print(f"torch {world} ranks, {rows} x {cols} of {args.elem}-byte elements ({gb:.2f} GB): "
              f"t().contiguous + all_to_all_single + copy {t_ours:.3f} ms, "
              f"bare all_to_all_single {t_bare:.3f} ms, ratio {t_ours / t_bare:.3f}", flush=True)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--shape", default="32768x32768")
    p.add_argument("--elem", type=int, default=4, choices=[1, 4, 16])
    p.add_argument("--iters", type=int, default=20)
    args = p.parse_args()
    args.rows, args.cols = map(int, args.shape.split("x"))
    world = torch.cuda.device_count()
    mp.spawn(rank_main, args=(world, args), nprocs=world)


if __name__ == "__main__":
    main()
