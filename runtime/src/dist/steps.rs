//! The NCCL route: each step's packs and places (generated kernels, through the
//! run-time permute) on the kernel streams, its exchange as one NCCL group on
//! the communicators' streams, and the pipeline that overlaps them.

use super::nccl;
use crate::buffer::{DstArg, SrcArg};
use crate::error::Result;
use crate::ffi::{elems, elems_mut};
use crate::permute::{permute_with, PermuteOptions};
use bankfree_gen::select::dist::{Move, Plan, Step};
use cudarc::driver::{CudaEvent, CudaSlice, CudaStream};
use cudarc::nccl::{group_end, group_start, Comm};
use std::sync::Arc;

/// One communicator's rank, second stream and exchange buffers.
pub(super) struct Local {
    pub rank: usize,
    pub kernels: Arc<CudaStream>,
    pub send: [CudaSlice<u8>; 2],
    pub recv: [CudaSlice<u8>; 2],
}

impl Local {
    /// A rank's kernel stream, with exchange buffers of one byte until
    /// [`Local::reserve`] sizes them.
    pub fn new(rank: usize, kernels: Arc<CudaStream>) -> Result<Local> {
        let byte = || kernels.alloc_zeros::<u8>(1);
        Ok(Local {
            rank,
            send: [byte()?, byte()?],
            recv: [byte()?, byte()?],
            kernels,
        })
    }

    /// Exchange buffers of at least `send` and `recv` bytes a slot (allocated on
    /// the kernel stream by the first run that takes the NCCL route; the peer route
    /// needs none).
    pub fn reserve(&mut self, send: u64, recv: u64) -> Result<()> {
        for (slots, n) in [(&mut self.send, send), (&mut self.recv, recv)] {
            for slot in slots.iter_mut() {
                if (slot.len() as u64) < n {
                    *slot = self.kernels.alloc_zeros::<u8>(n as usize)?;
                }
            }
        }
        Ok(())
    }
}

/// The stream of a rank's packs, places and own pieces: a new stream of the
/// lowest priority, below the exchange's (which `local_comms` and
/// `rank_comm` give the highest), waiting first for the communicator's stream.
pub(super) fn kernel_stream(comm: &Arc<CudaStream>) -> Result<Arc<CudaStream>> {
    let ctx = comm.context();
    ctx.bind_to_thread()?;
    let (least, _) = cudarc::driver::result::stream::get_priority_range()?;
    let kernels = ctx.new_stream_with_priority(least)?;
    kernels.join(comm)?;
    Ok(kernels)
}

/// A step's packs: source pieces transposed into the send slot.
pub(super) fn pack<T, S: SrcArg<T> + ?Sized>(l: &mut Local, step: &Step, src: &S) -> Result<()> {
    let mut slot = elems_mut::<T>(&mut l.send[step.slot]);
    for mv in &step.packs {
        apply(mv, src, &mut slot, &l.kernels, None)?;
    }
    Ok(())
}

/// A step's places: received pieces copied into the result at its pitch.
pub(super) fn place<T, D: DstArg<T> + ?Sized>(l: &Local, step: &Step, dst: &mut D) -> Result<()> {
    let slot = elems::<T>(&l.recv[step.slot]);
    for mv in &step.places {
        apply(mv, &slot, dst, &l.kernels, None)?;
    }
    Ok(())
}

/// One step's sends and receives of every local rank, as one NCCL group (a
/// process driving several ranks must post all of them before any can finish).
pub(super) fn exchange(
    comms: &[Comm],
    local: &mut [Local],
    steps: &[Step],
    elem: usize,
) -> Result<()> {
    group_start().map_err(|e| nccl::nccl(e, "ncclGroupStart"))?;
    let mut posted = Ok(());
    'ranks: for ((comm, l), step) in comms.iter().zip(local.iter_mut()).zip(steps) {
        for t in &step.sends {
            let (at, n) = (t.offset as usize, t.len as usize);
            let view = l.send[step.slot].slice(at * elem..(at + n) * elem);
            if let Err(e) = comm.send(&view, t.peer as i32) {
                posted = Err(nccl::nccl(e, "ncclSend"));
                break 'ranks;
            }
        }
        for t in &step.recvs {
            let (at, n) = (t.offset as usize, t.len as usize);
            let mut view = l.recv[step.slot].slice_mut(at * elem..(at + n) * elem);
            if let Err(e) = comm.recv(&mut view, t.peer as i32) {
                posted = Err(nccl::nccl(e, "ncclRecv"));
                break 'ranks;
            }
        }
    }
    let ended = group_end().map_err(|e| nccl::nccl(e, "ncclGroupEnd"));
    posted?;
    ended.map(|_| ())
}

/// One move as a permute on `stream`, in at most `blocks_per_sm` blocks per SM
/// where that is set.
pub(super) fn apply<T, S, D>(
    mv: &Move,
    from: &S,
    to: &mut D,
    stream: &CudaStream,
    blocks_per_sm: Option<u32>,
) -> Result<()>
where
    S: SrcArg<T> + ?Sized,
    D: DstArg<T> + ?Sized,
{
    let (dims, perm, src_strides, dst_strides) = mv.permute();
    let us = |x: [u64; 2]| x.map(|v| v as usize);
    let from = from.view();
    let from = from.slice(mv.from.offset as usize..);
    let mut to = to.view_mut();
    let mut to = to.slice_mut(mv.to.offset as usize..);
    let opts = PermuteOptions {
        src_strides: Some(&us(src_strides)),
        dst_strides: Some(&us(dst_strides)),
        stream: Some(stream),
        blocks_per_sm,
        ..PermuteOptions::default()
    };
    permute_with(&from, &mut to, &us(dims), &perm, &opts)
}

/// Packs step 0 and moves the own blocks, then per step: the exchange on the
/// communicators' streams, and on the kernel streams the previous step's places
/// and the next step's packs, each stream waiting for the other's event where
/// it reuses a slot or reads what the other wrote.
pub(super) fn pipeline<T, S, D>(
    comms: &[Comm],
    local: &mut [Local],
    plan: &Plan,
    srcs: &[&S],
    dsts: &mut [&mut D],
) -> Result<()>
where
    S: SrcArg<T> + ?Sized,
    D: DstArg<T> + ?Sized,
{
    let steps = plan.steps();
    for (l, comm) in local.iter().zip(comms) {
        l.kernels.join(&comm.stream())?;
    }
    let step_of = |local: &[Local], k: usize| -> Vec<Step> {
        local.iter().map(|l| plan.step(l.rank, k)).collect()
    };
    let mut cur = (steps > 0).then(|| step_of(local, 0));
    let mut packed = Vec::new();
    for (i, l) in local.iter_mut().enumerate() {
        if let Some(c) = &cur {
            pack::<T, S>(l, &c[i], srcs[i])?;
            packed.push(l.kernels.record_event(None)?);
        }
        if let Some(own) = plan.own(l.rank) {
            apply(&own, srcs[i], &mut *dsts[i], &l.kernels, None)?;
        }
    }
    // Exchanged and not yet placed: the steps and their exchanges' events.
    let mut pending: Option<(Vec<Step>, Vec<CudaEvent>)> = None;
    for k in 0..steps {
        let Some(c) = cur.take() else { break };
        for (comm, ev) in comms.iter().zip(&packed) {
            comm.stream().wait(ev)?;
        }
        exchange(comms, local, &c, std::mem::size_of::<T>())?;
        let done = comms
            .iter()
            .map(|comm| comm.stream().record_event(None))
            .collect::<Result<Vec<_>, _>>()?;
        if let Some((p, evs)) = pending.replace((c, done)) {
            for (i, l) in local.iter().enumerate() {
                l.kernels.wait(&evs[i])?;
                place::<T, D>(l, &p[i], &mut *dsts[i])?;
            }
        }
        packed.clear();
        if k + 1 < steps {
            let n = step_of(local, k + 1);
            for (i, l) in local.iter_mut().enumerate() {
                pack::<T, S>(l, &n[i], srcs[i])?;
                packed.push(l.kernels.record_event(None)?);
            }
            cur = Some(n);
        }
        // This step's piece of the own block, while the exchange runs.
        if let Some((p, _)) = &pending {
            for (i, l) in local.iter().enumerate() {
                if let Some(own) = &p[i].own {
                    apply(own, srcs[i], &mut *dsts[i], &l.kernels, None)?;
                }
            }
        }
    }
    if let Some((p, evs)) = pending {
        for (i, l) in local.iter().enumerate() {
            l.kernels.wait(&evs[i])?;
            place::<T, D>(l, &p[i], &mut *dsts[i])?;
        }
    }
    for (l, comm) in local.iter().zip(comms) {
        comm.stream().join(&l.kernels)?;
    }
    Ok(())
}
