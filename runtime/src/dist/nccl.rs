//! NCCL without panics: finding it, making communicators, and the check that
//! every rank of a call passes the same layout and element type.

use crate::error::{Error, Result};
use crate::ffi;
use cudarc::driver::CudaStream;
use cudarc::nccl::{result::NcclError, Comm, Id};
use std::path::PathBuf;
use std::sync::Arc;

/// That NCCL can be loaded; else [`Error::NcclNotFound`] with the names tried and
/// any `libnccl.so.2` found where the loader did not look for it.
pub fn check() -> Result<()> {
    if ffi::nccl_present() {
        return Ok(());
    }
    let searched = cudarc::get_lib_name_candidates("nccl").join(", ");
    let found: Vec<String> = places()
        .into_iter()
        .map(|d| d.join("libnccl.so.2"))
        .filter(|f| f.is_file())
        .map(|f| f.display().to_string())
        .collect();
    let found = if found.is_empty() {
        String::new()
    } else {
        format!(" (found {}, not under those names)", found.join(", "))
    };
    Err(Error::NcclNotFound { searched, found })
}

/// Folders where NCCL is often installed: `LD_LIBRARY_PATH`, the system's, the
/// CUDA toolkit's and pip wheels' (`nvidia-nccl-cu13`, also torch's).
fn places() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("LD_LIBRARY_PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    for d in [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib64",
        "/usr/local/cuda/lib64",
    ] {
        dirs.push(d.into());
    }
    let roots = ["/usr/local/lib", "/usr/lib", "/opt/conda/lib"];
    for root in roots
        .iter()
        .map(PathBuf::from)
        .chain(std::env::var_os("VIRTUAL_ENV").map(|v| PathBuf::from(v).join("lib")))
    {
        for py in std::fs::read_dir(&root).into_iter().flatten().flatten() {
            for site in ["site-packages", "dist-packages"] {
                dirs.push(py.path().join(site).join("nvidia/nccl/lib"));
            }
        }
    }
    dirs
}

/// An NCCL failure as an error.
pub(crate) fn nccl(e: NcclError, during: &'static str) -> Error {
    Error::Nccl {
        code: e.0 as i32,
        name: format!("{:?}", e.0),
        during,
    }
}

/// A stream of the highest priority on `stream`'s GPU, for a communicator: the
/// GPU then dispatches the exchange's blocks ahead of the pack and place kernels
/// queued beside it, instead of after their last block.
fn comm_stream(stream: &Arc<CudaStream>) -> Result<Arc<CudaStream>> {
    let ctx = stream.context();
    ctx.bind_to_thread()?;
    let (_, greatest) = cudarc::driver::result::stream::get_priority_range()?;
    let own = ctx.new_stream_with_priority(greatest)?;
    own.join(stream)?;
    Ok(own)
}

/// One communicator per stream's GPU, all in this process (rank `i` is
/// `streams[i]`'s GPU), after checking that NCCL can be loaded. Each gets a
/// high-priority stream of its own on that GPU, which first waits for the work
/// queued on the given stream.
pub fn local_comms(streams: Vec<Arc<CudaStream>>) -> Result<Vec<Comm>> {
    check()?;
    let own = streams
        .iter()
        .map(comm_stream)
        .collect::<Result<Vec<_>>>()?;
    Comm::from_devices(own).map_err(|e| nccl(e, "ncclCommInitAll"))
}

/// A new unique id for [`rank_comm`]: make it on one rank and pass its bytes
/// ([`Id::internal`]) to the others.
pub fn unique_id() -> Result<Id> {
    check()?;
    Id::new().map_err(|e| nccl(e, "ncclGetUniqueId"))
}

/// This process's communicator of `world` ranks, as rank `rank` on `stream`'s GPU
/// (on a high-priority stream of its own, as in [`local_comms`]).
pub fn rank_comm(stream: Arc<CudaStream>, rank: usize, world: usize, id: Id) -> Result<Comm> {
    check()?;
    if rank >= world || i32::try_from(world).is_err() {
        return Err(Error::DistMismatch {
            detail: format!("rank {rank} of {world} ranks: a rank is 0 to world - 1"),
        });
    }
    let stream = comm_stream(&stream)?;
    // NCCL takes the rank's GPU from the calling thread's current context.
    stream.context().bind_to_thread()?;
    Comm::from_rank(stream, rank, world, id).map_err(|e| nccl(e, "ncclCommInitRank"))
}

/// What every rank of a call must agree on, and whether its own checks passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Terms {
    pub elem_bytes: u64,
    pub type_hash: u64,
    pub layout_hash: u64,
    /// 0 where this rank's own checks passed, else 1.
    pub failed: u64,
}

const WORDS: usize = 4;

impl Terms {
    fn words(&self) -> [u64; WORDS] {
        [
            self.elem_bytes,
            self.type_hash,
            self.layout_hash,
            self.failed,
        ]
    }
}

/// FNV-1a of some bytes: a hash every process computes the same.
pub(crate) fn fnv(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// Gathers every rank's terms (one small all-gather over this process's
/// communicators, grouped; every rank gets the same answer, so all of them go on
/// or all return the same error).
pub(crate) fn agree(comms: &[Comm], mine: Terms) -> Result<()> {
    let mut bufs = Vec::with_capacity(comms.len());
    for comm in comms {
        let stream = comm.stream();
        let send = stream.clone_htod(&mine.words())?;
        let all = stream.alloc_zeros::<u64>(WORDS * comm.world_size())?;
        bufs.push((send, all));
    }
    cudarc::nccl::group_start().map_err(|e| nccl(e, "ncclGroupStart"))?;
    let mut posted = Ok(());
    for (comm, (send, all)) in comms.iter().zip(bufs.iter_mut()) {
        if let Err(e) = comm.all_gather(send, all) {
            posted = Err(nccl(e, "ncclAllGather of the call's terms"));
            break;
        }
    }
    let ended = cudarc::nccl::group_end().map_err(|e| nccl(e, "ncclGroupEnd"));
    posted?;
    ended?;
    let Some((_, all)) = bufs.first() else {
        return Ok(());
    };
    verdict(&comms[0].stream().clone_dtoh(all)?)
}

/// The call's verdict from every rank's gathered terms (the same on every rank):
/// a rank that refused first, then any term that differs from rank 0's.
fn verdict(all: &[u64]) -> Result<()> {
    let ranks: Vec<&[u64]> = all.chunks(WORDS).collect();
    if let Some(r) = ranks.iter().position(|t| t[3] != 0) {
        return Err(Error::DistMismatch {
            detail: format!("rank {r} refused its buffers or layout (its own call returned the reason); no rank moved data"),
        });
    }
    let what = ["element size", "element type", "layout"];
    for (r, t) in ranks.iter().enumerate() {
        if let Some(i) = (0..3).find(|&i| t[i] != ranks[0][i]) {
            return Err(Error::DistMismatch {
                detail: format!(
                    "rank {r} passed another {} than rank 0; every rank must pass the same layout and element type",
                    what[i]
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_nccl_is_an_error_that_says_how_to_install_it() {
        match check() {
            Ok(()) => assert!(ffi::nccl_present()),
            Err(e) => {
                let msg = e.to_string();
                for part in [
                    "libnccl.so",
                    "pip install nvidia-nccl-cu13",
                    "LD_LIBRARY_PATH",
                ] {
                    assert!(msg.contains(part), "{msg}");
                }
            }
        }
    }

    #[test]
    fn the_verdict_names_the_first_refusal_then_the_first_difference() {
        let ok = Terms {
            elem_bytes: 4,
            type_hash: 7,
            layout_hash: 9,
            failed: 0,
        };
        let all = |ts: &[Terms]| ts.iter().flat_map(Terms::words).collect::<Vec<u64>>();
        assert_eq!(verdict(&all(&[ok, ok, ok])), Ok(()));
        let msg = |ts: &[Terms]| verdict(&all(ts)).expect_err("a mismatch").to_string();
        let refused = Terms { failed: 1, ..ok };
        let other_type = Terms { type_hash: 8, ..ok };
        assert!(msg(&[ok, other_type, refused]).contains("rank 2 refused"));
        assert!(msg(&[ok, other_type, ok]).contains("rank 1 passed another element type"));
        let other_layout = Terms {
            layout_hash: 1,
            ..ok
        };
        assert!(msg(&[ok, ok, other_layout]).contains("rank 2 passed another layout"));
        let other_size = Terms {
            elem_bytes: 2,
            type_hash: 8,
            ..ok
        };
        assert!(msg(&[other_size, ok]).contains("rank 1 passed another element size"));
    }

    #[test]
    fn the_terms_hash_is_the_same_in_every_process() {
        // FNV-1a's published value for "a": processes agree without sharing state.
        assert_eq!(fnv(*b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
