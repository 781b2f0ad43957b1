//! One step's work on a rank: the packs and places (generated kernels, through
//! the run-time permute) on the kernel stream, the exchange as one NCCL group.

use super::nccl;
use crate::error::Result;
use crate::ffi::{elems, elems_mut};
use crate::launch::{DstArg, SrcArg};
use crate::permute::{permute_with, PermuteOptions};
use bankfree_gen::select::dist::{Move, Step};
use cudarc::driver::{CudaSlice, CudaStream};
use cudarc::nccl::{group_end, group_start, Comm};
use std::sync::Arc;

/// One communicator's rank, second stream and exchange buffers.
pub(super) struct Local {
    pub rank: usize,
    pub kernels: Arc<CudaStream>,
    pub send: [CudaSlice<u8>; 2],
    pub recv: [CudaSlice<u8>; 2],
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
        apply(mv, src, &mut slot, &l.kernels)?;
    }
    Ok(())
}

/// A step's places: received pieces copied into the result at its pitch.
pub(super) fn place<T, D: DstArg<T> + ?Sized>(l: &Local, step: &Step, dst: &mut D) -> Result<()> {
    let slot = elems::<T>(&l.recv[step.slot]);
    for mv in &step.places {
        apply(mv, &slot, dst, &l.kernels)?;
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

/// One local move as a permute on `stream`.
pub(super) fn apply<T, S, D>(mv: &Move, from: &S, to: &mut D, stream: &CudaStream) -> Result<()>
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
        strategy: None,
    };
    permute_with(&from, &mut to, &us(dims), &perm, &opts)
}
