//! The peer route: with every rank in this process and every GPU able to write
//! every other's memory, each block of the source goes in one kernel from its
//! rank's source straight into its rank's result ([`Plan::block`]). No exchange
//! buffers, no NCCL, and each byte crosses HBM once on each side.
//!
//! On each GPU the blocks for the other GPUs go each on a stream of its own (of
//! the highest priority), all at once, as NCCL's sends do: every GPU then sends
//! to all and receives from all together, and an uneven split shares the links
//! as its loads fall. Together they run in at most [`PEER_BLOCKS_PER_SM`] blocks
//! per SM, and the own block on the kernel stream: a write across the link holds
//! its block far longer than a local one, so a few blocks per SM keep the links
//! busy and leave the rest of the GPU to the own block.

use super::steps::{apply, Local};
use crate::buffer::{DstArg, SrcArg};
use crate::error::Result;
use crate::ffi::peer::{enable, writable, Alias};
use bankfree_gen::select::dist::Plan;
use cudarc::driver::{CudaStream, DevicePtrMut};
use cudarc::nccl::Comm;
use std::sync::Arc;

/// At most this many blocks per SM for the kernels that write other GPUs' memory,
/// shared evenly between them (at least one each). Measured on two H200s over NVLink, a 16-byte 23172 x 23172 transpose
/// took 1.18 times a bare NCCL all-to-all of the same bytes with 1 block per SM,
/// 1.01 to 1.03 with 2 to 4, 0.99 with 6, 0.98 to 1.07 with 8 to 16, 1.08 with 32
/// and 1.15 uncapped (the writes then hold every SM and the own block waits).
pub const PEER_BLOCKS_PER_SM: u32 = 6;

/// Each rank's streams for its writes to the others (`world - 1` a rank), where
/// every GPU of `comms` can write every other's memory (peer access enabled where
/// it can be; one rank writes only its own); `None` where one cannot or the
/// ranks span processes.
pub(super) fn links(comms: &[Comm], world: usize) -> Result<Option<Vec<Vec<Arc<CudaStream>>>>> {
    if comms.len() != world {
        return Ok(None);
    }
    for a in comms {
        for b in comms {
            let (ca, cb) = (a.context(), b.context());
            if ca.cu_ctx() != cb.cu_ctx() && !enable(ca, cb)? {
                return Ok(None);
            }
        }
    }
    let (_, greatest) = cudarc::driver::result::stream::get_priority_range()?;
    let mut all = Vec::with_capacity(world);
    for comm in comms {
        let ctx = comm.context();
        ctx.bind_to_thread()?;
        let streams = (1..world)
            .map(|_| ctx.new_stream_with_priority(greatest))
            .collect::<Result<Vec<_>, _>>()?;
        all.push(streams);
    }
    Ok(Some(all))
}

/// Runs the whole transpose by the peer route; `Ok(false)`, with nothing queued,
/// where some result is not writable from another rank's GPU (then the caller
/// takes the NCCL route). `comms[i]`, `local[i]`, `links[i]`, `srcs[i]` and
/// `dsts[i]` are one rank's, every rank of the world.
pub(super) fn run<T, S, D>(
    comms: &[Comm],
    local: &[Local],
    links: &[Vec<Arc<CudaStream>>],
    plan: &Plan,
    srcs: &[&S],
    dsts: &mut [&mut D],
) -> Result<bool>
where
    S: SrcArg<T> + ?Sized,
    D: DstArg<T> + ?Sized,
{
    let n = comms.len();
    let written_from =
        |i: usize, j: usize| i != j && plan.block(local[i].rank, local[j].rank).is_some();
    for (j, dst) in dsts.iter_mut().enumerate() {
        let mut view = dst.view_mut();
        if (0..n).any(|i| written_from(i, j) && !writable(comms[i].context(), &mut view)) {
            return Ok(false);
        }
    }
    // Each result's earlier users, then this run's: every GPU's writes wait for
    // every result's gate.
    let mut gates = Vec::with_capacity(n);
    for (comm, dst) in comms.iter().zip(dsts.iter_mut()) {
        let stream = comm.stream();
        let _ = dst.view_mut().device_ptr_mut(&stream);
        gates.push(stream.record_event(None)?);
    }
    for (i, (comm, l)) in comms.iter().zip(local).enumerate() {
        l.kernels.join(&comm.stream())?;
        for (j, gate) in gates.iter().enumerate() {
            if written_from(i, j) {
                comm.stream().wait(gate)?;
            }
        }
        if let Some(own) = plan.block(l.rank, l.rank) {
            apply(&own, srcs[i], &mut *dsts[i], &l.kernels, None)?;
        }
    }
    // Rank `r` launches its writes to ranks `r + 1`, `r + 2`, ... (modulo the
    // world) in that order, so that no GPU is every rank's first target.
    let mut at = vec![0; n];
    for (j, l) in local.iter().enumerate() {
        at[l.rank] = j;
    }
    let per = (PEER_BLOCKS_PER_SM / (n as u32).saturating_sub(1).max(1)).max(1);
    let mut done = Vec::with_capacity(n);
    for (i, (comm, l)) in comms.iter().zip(local).enumerate() {
        let stream = comm.stream();
        // Every link starts after the gates, and none waits for another.
        for link in &links[i] {
            link.join(&stream)?;
        }
        for (d, link) in (1..n).zip(&links[i]) {
            let j = at[(l.rank + d) % n];
            let Some(mv) = plan.block(l.rank, local[j].rank) else {
                continue;
            };
            let mut view = dsts[j].view_mut();
            let mut alias = Alias::new(&mut view, link);
            apply(&mv, srcs[i], &mut *alias, link, Some(per))?;
        }
        for link in &links[i] {
            stream.join(link)?;
        }
        done.push(stream.record_event(None)?);
    }
    // Every result is complete on its communicator's stream once the writes into
    // it are; its next users wait for that.
    for (j, (comm, l)) in comms.iter().zip(local).enumerate() {
        let stream = comm.stream();
        for (i, ev) in done.iter().enumerate() {
            if written_from(i, j) {
                stream.wait(ev)?;
            }
        }
        stream.join(&l.kernels)?;
        let _ = dsts[j].view_mut().device_ptr_mut(&stream);
    }
    Ok(true)
}
