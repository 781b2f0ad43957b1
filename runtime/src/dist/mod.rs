//! The transpose of a matrix sharded by rows across GPUs, over NCCL (the `nccl`
//! feature).
//!
//! Rank `r` holds `layout.rows_of(r)` consecutive rows of a `rows x cols` matrix
//! (row-major, `cols` wide) and gets `layout.cols_of(r)` consecutive rows of its
//! transpose (row-major, `rows` wide). The plan is
//! [`bankfree_gen::select::dist`]'s: the blocks for other ranks go in a few
//! steps of at most [`STEP_BYTES`] (the first and the last small): transposed
//! into a send buffer by the generated kernels, exchanged with grouped NCCL sends
//! and receives, and copied into place; each rank's own block is transposed
//! straight into place a piece per step. A step's exchange runs on the
//! communicator's stream (of the highest priority, where [`local_comms`] or
//! [`rank_comm`] made it) while the kernels of the steps around it run on a
//! second stream. Pass all the communicators of one world, or this process's
//! share of one.
//!
//! Both set-ups run the same code:
//! * one process driving every GPU: pass all communicators
//!   ([`local_comms`], cudarc's `Comm::from_devices`) and one source and result
//!   per rank;
//! * one process per GPU: pass its one communicator ([`rank_comm`], cudarc's
//!   `Comm::from_rank`); the ranks then check, with one small all-gather, that
//!   they all pass the same layout and element type and that none refused its
//!   buffers, and all return the same error otherwise (none hangs).
//!
//! ```no_run
//! use bankfree_runtime::dist::{local_comms, Layout, Transposer};
//! use cudarc::driver::CudaContext;
//! let n = CudaContext::device_count()? as usize;
//! let streams = (0..n).map(|i| Ok(CudaContext::new(i)?.default_stream()))
//!     .collect::<Result<Vec<_>, cudarc::driver::DriverError>>()?;
//! let comms = local_comms(streams.clone())?;
//! let layout = Layout::even(4096, 1000, n)?;
//! let srcs = (0..n).map(|r| streams[r].alloc_zeros::<f32>(layout.src_len(r) as usize))
//!     .collect::<Result<Vec<_>, _>>()?;
//! let mut dsts = (0..n).map(|r| streams[r].alloc_zeros::<f32>(layout.dst_len(r) as usize))
//!     .collect::<Result<Vec<_>, _>>()?;
//! let mut t = Transposer::<f32>::new(&comms, &layout)?;
//! t.run(&srcs.iter().collect::<Vec<_>>(), &mut dsts.iter_mut().collect::<Vec<_>>())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod nccl;
mod steps;

pub use bankfree_gen::select::dist::{DistError, Layout, STEP_BYTES};
pub use cudarc::nccl::{Comm, Id};
pub use nccl::{check as check_nccl, local_comms, rank_comm, unique_id};

use crate::error::{Error, Result};
use crate::ffi::{bytes_of, bytes_of_mut};
use crate::launch::{DstArg, SrcArg};
use bankfree_gen::select::dist::{Plan, Step};
use cudarc::driver::CudaEvent;
use cudarc::nccl::{group_end, group_start};
use std::marker::PhantomData;
use steps::{apply, exchange, kernel_stream, pack, place, Local};

/// A distributed transpose of one layout and element type, with its exchange
/// buffers (two slots of up to about [`STEP_BYTES`] each for sending and for
/// receiving per rank), for repeated calls.
pub struct Transposer<'c, T> {
    comms: &'c [Comm],
    plan: Plan,
    local: Vec<Local>,
    _elem: PhantomData<fn() -> T>,
}

fn mismatch(detail: String) -> Error {
    Error::DistMismatch { detail }
}

impl<'c, T> Transposer<'c, T> {
    /// Plans `layout` for the ranks of `comms` (all of a world's communicators, or
    /// this process's share of them) and allocates their exchange buffers.
    pub fn new(comms: &'c [Comm], layout: &Layout) -> Result<Self> {
        Self::with_step_bytes(comms, layout, STEP_BYTES)
    }

    /// [`Transposer::new`] with steps of about `step_bytes` sent per rank instead
    /// of [`STEP_BYTES`] (every rank must pass the same).
    pub fn with_step_bytes(comms: &'c [Comm], layout: &Layout, step_bytes: u64) -> Result<Self> {
        let elem = std::mem::size_of::<T>() as u64;
        let plan = Plan::new(layout, elem, step_bytes)?;
        if comms.is_empty() {
            return Err(mismatch(
                "no communicator was given; pass at least one".into(),
            ));
        }
        let mut seen = vec![false; layout.ranks()];
        let mut local = Vec::with_capacity(comms.len());
        for comm in comms {
            let (rank, world) = (comm.rank(), comm.world_size());
            if world != layout.ranks() {
                return Err(mismatch(format!(
                    "a communicator of {world} ranks for a layout of {} ranks; split rows and columns over {world} ranks",
                    layout.ranks()
                )));
            }
            if std::mem::replace(&mut seen[rank], true) {
                return Err(mismatch(format!(
                    "rank {rank} was given twice; pass each communicator once"
                )));
            }
            let kernels = kernel_stream(&comm.stream())?;
            let slot = |n: u64| kernels.alloc_zeros::<u8>((n * elem).max(1) as usize);
            local.push(Local {
                rank,
                send: [slot(plan.send_len(rank))?, slot(plan.send_len(rank))?],
                recv: [slot(plan.recv_len(rank))?, slot(plan.recv_len(rank))?],
                kernels,
            });
        }
        Ok(Transposer {
            comms,
            plan,
            local,
            _elem: PhantomData,
        })
    }

    pub fn layout(&self) -> &Layout {
        self.plan.layout()
    }

    /// Transposes: `srcs[i]` and `dsts[i]` are the source rows and result rows of
    /// the rank of `comms[i]`, each at least [`Layout::src_len`] and
    /// [`Layout::dst_len`] elements long, on that communicator's GPU. Returns once
    /// everything is queued; it is ordered on each communicator's stream (and the
    /// buffers' own streams wait for it where they are used next).
    pub fn run<S, D>(&mut self, srcs: &[&S], dsts: &mut [&mut D]) -> Result<()>
    where
        S: SrcArg<T> + ?Sized,
        D: DstArg<T> + ?Sized,
    {
        self.agree(srcs, dsts)?;
        self.pipeline(srcs, dsts)
    }

    /// The bare exchange of the same bytes, with no kernels: rank `p`'s source, cut
    /// in rank order into one chunk per rank (`rows_of(p) * cols_of(q)` elements
    /// for rank `q`, its own included), lands in every rank's result in rank
    /// order. An all-to-all: the yardstick [`Transposer::run`] is measured
    /// against. The result holds the chunks as sent, not transposed.
    pub fn all_to_all<S, D>(&mut self, srcs: &[&S], dsts: &mut [&mut D]) -> Result<()>
    where
        S: SrcArg<T> + ?Sized,
        D: DstArg<T> + ?Sized,
    {
        self.exchange_chunks(srcs, dsts, true)
    }

    /// [`Transposer::all_to_all`] without each rank's own chunk: only the bytes
    /// that cross between GPUs, which is all [`Transposer::run`] exchanges.
    pub fn peer_exchange<S, D>(&mut self, srcs: &[&S], dsts: &mut [&mut D]) -> Result<()>
    where
        S: SrcArg<T> + ?Sized,
        D: DstArg<T> + ?Sized,
    {
        self.exchange_chunks(srcs, dsts, false)
    }

    fn exchange_chunks<S, D>(&mut self, srcs: &[&S], dsts: &mut [&mut D], own: bool) -> Result<()>
    where
        S: SrcArg<T> + ?Sized,
        D: DstArg<T> + ?Sized,
    {
        self.agree(srcs, dsts)?;
        let layout = self.plan.layout();
        let e = std::mem::size_of::<T>();
        group_start().map_err(|e| nccl::nccl(e, "ncclGroupStart"))?;
        let mut posted = Ok(());
        'ranks: for ((comm, src), dst) in self.comms.iter().zip(srcs).zip(dsts.iter_mut()) {
            let (p, src) = (comm.rank(), src.view());
            let mut dst = dst.view_mut();
            let (src, mut dst) = (bytes_of(&src), bytes_of_mut(&mut dst));
            for q in (0..layout.ranks()).filter(|&q| own || q != p) {
                // An empty chunk is skipped on both sides alike.
                let at = (layout.rows_of(p) * layout.col_start(q)) as usize * e;
                let n = (layout.rows_of(p) * layout.cols_of(q)) as usize * e;
                let sent = match n {
                    0 => Ok(()),
                    _ => comm.send(&src.slice(at..at + n), q as i32),
                };
                let at = (layout.row_start(q) * layout.cols_of(p)) as usize * e;
                let n = (layout.rows_of(q) * layout.cols_of(p)) as usize * e;
                let got = match n {
                    0 => Ok(()),
                    _ => comm
                        .recv(&mut dst.slice_mut(at..at + n), q as i32)
                        .map(|_| ()),
                };
                if let Err(e) = sent.and(got) {
                    posted = Err(nccl::nccl(e, "ncclSend/ncclRecv"));
                    break 'ranks;
                }
            }
        }
        let ended = group_end().map_err(|e| nccl::nccl(e, "ncclGroupEnd"));
        posted?;
        ended.map(|_| ())
    }

    /// This process's checks and, where the world spans other processes, every
    /// rank's agreement on the layout, the element type and that none refused.
    fn agree<S, D>(&self, srcs: &[&S], dsts: &[&mut D]) -> Result<()>
    where
        S: SrcArg<T> + ?Sized,
        D: DstArg<T> + ?Sized,
    {
        let checked = self.check(srcs, dsts);
        let world = self.plan.layout().ranks();
        if self.comms.len() < world {
            let layout = self.plan.layout();
            let words = (0..world).flat_map(|r| [layout.rows_of(r), layout.cols_of(r)]);
            let terms = nccl::Terms {
                elem_bytes: std::mem::size_of::<T>() as u64,
                type_hash: nccl::fnv(std::any::type_name::<T>().bytes()),
                layout_hash: nccl::fnv(words.flat_map(u64::to_le_bytes)),
                failed: u64::from(checked.is_err()),
            };
            // This rank's own reason first; else whatever the ranks found.
            let agreed = nccl::agree(self.comms, terms);
            return checked.and(agreed);
        }
        checked
    }

    /// This process's own checks: one buffer of the right length per rank, on its
    /// communicator's GPU.
    fn check<S, D>(&self, srcs: &[&S], dsts: &[&mut D]) -> Result<()>
    where
        S: SrcArg<T> + ?Sized,
        D: DstArg<T> + ?Sized,
    {
        let n = self.comms.len();
        if srcs.len() != n || dsts.len() != n {
            return Err(mismatch(format!(
                "{} sources and {} results for {n} communicators; pass one of each per communicator",
                srcs.len(),
                dsts.len()
            )));
        }
        let layout = self.plan.layout();
        for (i, comm) in self.comms.iter().enumerate() {
            let r = comm.rank();
            let lens = [
                ("source", srcs[i].len(), layout.src_len(r), srcs[i].stream()),
                ("result", dsts[i].len(), layout.dst_len(r), dsts[i].stream()),
            ];
            for (what, len, need, stream) in lens {
                if (len as u64) < need {
                    return Err(mismatch(format!(
                        "rank {r}'s {what} holds {len} elements but its part of the layout needs {need}"
                    )));
                }
                if stream.context().cu_ctx() != comm.context().cu_ctx() {
                    return Err(mismatch(format!(
                        "rank {r}'s {what} lives on another GPU or context than its communicator"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Packs step 0 and moves the own blocks, then per step: the exchange on the
    /// communicators' streams, and on the kernel streams the previous step's places
    /// and the next step's packs, each stream waiting for the other's event where
    /// it reuses a slot or reads what the other wrote.
    fn pipeline<S, D>(&mut self, srcs: &[&S], dsts: &mut [&mut D]) -> Result<()>
    where
        S: SrcArg<T> + ?Sized,
        D: DstArg<T> + ?Sized,
    {
        let steps = self.plan.steps();
        for (l, comm) in self.local.iter().zip(self.comms) {
            l.kernels.join(&comm.stream())?;
        }
        let plan = &self.plan;
        let step_of = |local: &[Local], k: usize| -> Vec<Step> {
            local.iter().map(|l| plan.step(l.rank, k)).collect()
        };
        let mut cur = (steps > 0).then(|| step_of(&self.local, 0));
        let mut packed = Vec::new();
        for (i, l) in self.local.iter_mut().enumerate() {
            if let Some(c) = &cur {
                pack::<T, S>(l, &c[i], srcs[i])?;
                packed.push(l.kernels.record_event(None)?);
            }
            if let Some(own) = plan.own(l.rank) {
                apply(&own, srcs[i], &mut *dsts[i], &l.kernels)?;
            }
        }
        // Exchanged and not yet placed: the steps and their exchanges' events.
        let mut pending: Option<(Vec<Step>, Vec<CudaEvent>)> = None;
        for k in 0..steps {
            let Some(c) = cur.take() else { break };
            for (comm, ev) in self.comms.iter().zip(&packed) {
                comm.stream().wait(ev)?;
            }
            exchange(self.comms, &mut self.local, &c, std::mem::size_of::<T>())?;
            let done = self
                .comms
                .iter()
                .map(|comm| comm.stream().record_event(None))
                .collect::<Result<Vec<_>, _>>()?;
            if let Some((p, evs)) = pending.replace((c, done)) {
                for (i, l) in self.local.iter().enumerate() {
                    l.kernels.wait(&evs[i])?;
                    place::<T, D>(l, &p[i], &mut *dsts[i])?;
                }
            }
            packed.clear();
            if k + 1 < steps {
                let n = step_of(&self.local, k + 1);
                for (i, l) in self.local.iter_mut().enumerate() {
                    pack::<T, S>(l, &n[i], srcs[i])?;
                    packed.push(l.kernels.record_event(None)?);
                }
                cur = Some(n);
            }
            // This step's piece of the own block, while the exchange runs.
            if let Some((p, _)) = &pending {
                for (i, l) in self.local.iter().enumerate() {
                    if let Some(own) = &p[i].own {
                        apply(own, srcs[i], &mut *dsts[i], &l.kernels)?;
                    }
                }
            }
        }
        if let Some((p, evs)) = pending {
            for (i, l) in self.local.iter().enumerate() {
                l.kernels.wait(&evs[i])?;
                place::<T, D>(l, &p[i], &mut *dsts[i])?;
            }
        }
        for (l, comm) in self.local.iter().zip(self.comms) {
            comm.stream().join(&l.kernels)?;
        }
        Ok(())
    }
}

/// Transposes once: [`Transposer::new`] then [`Transposer::run`] (the exchange
/// buffers are allocated and freed in the call; keep a `Transposer` for many).
pub fn transpose<T, S, D>(
    comms: &[Comm],
    srcs: &[&S],
    dsts: &mut [&mut D],
    layout: &Layout,
) -> Result<()>
where
    S: SrcArg<T> + ?Sized,
    D: DstArg<T> + ?Sized,
{
    Transposer::<T>::new(comms, layout)?.run(srcs, dsts)
}
