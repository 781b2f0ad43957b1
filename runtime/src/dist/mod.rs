//! The transpose of a matrix sharded by rows across GPUs, over NCCL (the `nccl`
//! feature).
//!
//! Rank `r` holds `layout.rows_of(r)` consecutive rows of a `rows x cols` matrix
//! (row-major, `cols` wide) and gets `layout.cols_of(r)` consecutive rows of its
//! transpose (row-major, `rows` wide). The plan is
//! [`bankfree_gen::select::dist`]'s, by one of two routes ([`Route`]):
//!
//! * **peer**, where one process drives every rank and every GPU can write every
//!   other's memory (peer access, over NVLink or PCIe): each block is transposed
//!   by one kernel from its source straight into its rank's result, on another
//!   GPU's memory where it belongs there; the writes to other GPUs run in a few
//!   blocks per SM ([`PEER_BLOCKS_PER_SM`]) beside the own block. No exchange
//!   buffers, no NCCL traffic.
//! * **NCCL**, everywhere else (one process per GPU, GPUs without peer access,
//!   results the driver does not let the other GPUs write): the blocks for other
//!   ranks go in a few steps of at most [`STEP_BYTES`] (the first and the last
//!   small): transposed into a send buffer by the generated kernels, exchanged
//!   with grouped NCCL sends and receives, and copied into place; each rank's own
//!   block is transposed straight into place a piece per step. A step's exchange
//!   runs on the communicator's stream (of the highest priority, where
//!   [`local_comms`] or [`rank_comm`] made it) while the kernels of the steps
//!   around it run on a second stream.
//!
//! Pass all the communicators of one world, or this process's share of one.
//! Both set-ups run the same code:
//! * one process driving every GPU: pass all communicators
//!   ([`local_comms`], cudarc's `Comm::from_devices`) and one source and result
//!   per rank (the peer route where the GPUs allow it);
//! * one process per GPU: pass its one communicator ([`rank_comm`], cudarc's
//!   `Comm::from_rank`; always the NCCL route); the ranks then check, with one
//!   small all-gather, that they all pass the same layout and element type and
//!   that none refused its buffers, and all return the same error otherwise
//!   (none hangs).
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
mod peer;
mod steps;

pub use bankfree_gen::select::dist::{DistError, Layout, STEP_BYTES};
pub use cudarc::nccl::{Comm, Id};
pub use nccl::{check as check_nccl, local_comms, rank_comm, unique_id};
pub use peer::PEER_BLOCKS_PER_SM;

use crate::buffer::{DstArg, SrcArg};
use crate::error::{Error, Result};
use crate::ffi::{bytes_of, bytes_of_mut};
use bankfree_gen::select::dist::Plan;
use cudarc::driver::CudaStream;
use cudarc::nccl::{group_end, group_start};
use std::marker::PhantomData;
use std::sync::Arc;
use steps::{kernel_stream, pipeline, Local};

/// How a run moves the blocks that change GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Route {
    /// Kernels write the other GPUs' results straight (one process, peer access).
    Peer,
    /// Packs, NCCL's grouped sends and receives in steps, and places.
    Nccl,
}

/// A distributed transpose of one layout and element type, for repeated calls.
/// Where it takes the NCCL route it keeps exchange buffers (two slots of up to
/// about [`STEP_BYTES`] each for sending and for receiving per rank), allocated
/// by the first run that needs them.
pub struct Transposer<'c, T> {
    comms: &'c [Comm],
    plan: Plan,
    local: Vec<Local>,
    /// Where every rank is in this process and every GPU can write every other's
    /// memory: each rank's streams for its writes to the others.
    links: Option<Vec<Vec<Arc<CudaStream>>>>,
    /// The route asked for; `None`: the peer route where it can run, else NCCL.
    asked: Option<Route>,
    last: Option<Route>,
    /// The exchange buffers are sized for the plan.
    reserved: bool,
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
            local.push(Local::new(rank, kernel_stream(&comm.stream())?)?);
        }
        let links = peer::links(comms, layout.ranks())?;
        Ok(Transposer {
            comms,
            plan,
            local,
            links,
            asked: None,
            last: None,
            reserved: false,
            _elem: PhantomData,
        })
    }

    /// Takes `route` on every run: [`Route::Nccl`] always can; [`Route::Peer`]
    /// only where one process drives every rank and every GPU can write every
    /// other's memory (else an error that says which is missing), and a run
    /// whose results the other GPUs may not write is then an error too.
    pub fn with_route(mut self, route: Route) -> Result<Self> {
        if route == Route::Peer && self.links.is_none() {
            let world = self.plan.layout().ranks();
            let why = if self.comms.len() != world {
                format!("it needs all {world} ranks in this process")
            } else {
                "some pair of these GPUs has no peer access".to_string()
            };
            return Err(mismatch(format!(
                "the peer route cannot run here: {why}; take the NCCL route"
            )));
        }
        self.asked = Some(route);
        Ok(self)
    }

    /// The route the last run took (`None` before the first).
    pub fn route(&self) -> Option<Route> {
        self.last
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
        if let (Some(links), false) = (&self.links, self.asked == Some(Route::Nccl)) {
            if peer::run(self.comms, &self.local, links, &self.plan, srcs, dsts)? {
                self.last = Some(Route::Peer);
                return Ok(());
            }
            if self.asked == Some(Route::Peer) {
                return Err(mismatch(
                    "the peer route cannot run: the driver does not let every GPU write the other ranks' results (allocate them with cudarc, or take the NCCL route)".into(),
                ));
            }
        }
        self.last = Some(Route::Nccl);
        if !self.reserved {
            let e = std::mem::size_of::<T>() as u64;
            for l in &mut self.local {
                let (send, recv) = (self.plan.send_len(l.rank), self.plan.recv_len(l.rank));
                l.reserve(send * e, recv * e)?;
            }
            self.reserved = true;
        }
        pipeline(self.comms, &mut self.local, &self.plan, srcs, dsts)
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
