//! N-d permutes at run time: the generator's planner
//! ([`bankfree_gen::select::permute`]) picks a transpose or copy with a multi-axis
//! batch, and the kernels it lists are generated once per process and launched
//! like the attribute's.

use crate::error::Result;
use crate::kernel::KernelSource;
use crate::launch::{transpose_first, DstArg, SrcArg};
use bankfree_gen::select::permute::{plan, plan_kernels, Kind, Permute};
use bankfree_gen::Strategy;
use cudarc::driver::CudaStream;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// How a permute is laid out and run: strides (in elements, each in its own
/// tensor's axis order; row-major when `None`), the stream (else `dst`'s) and the
/// shared-tile strategy of its transposes (`Strategy::Xor`, the default, or
/// `Strategy::Pad(None)`).
#[derive(Clone, Copy, Debug, Default)]
pub struct PermuteOptions<'a> {
    pub src_strides: Option<&'a [usize]>,
    pub dst_strides: Option<&'a [usize]>,
    pub stream: Option<&'a CudaStream>,
    pub strategy: Option<Strategy>,
}

/// Permutes `src` (extents `dims`) into `dst`: output axis `i` is input axis
/// `perm[i]`, both tensors contiguous and row-major. See [`permute_with`].
pub fn permute<T, S, D>(src: &S, dst: &mut D, dims: &[usize], perm: &[usize]) -> Result<()>
where
    S: SrcArg<T> + ?Sized,
    D: DstArg<T> + ?Sized,
{
    permute_with(src, dst, dims, perm, &PermuteOptions::default())
}

/// [`permute`] with strides, a stream and a strategy.
///
/// Checks the permutation, the strides (no two elements of either tensor in one
/// place) and both buffers' lengths before anything runs; an extent of 0 returns
/// `Ok` without launching. Allocates no device memory and never synchronizes.
pub fn permute_with<T, S, D>(
    src: &S,
    dst: &mut D,
    dims: &[usize],
    perm: &[usize],
    opts: &PermuteOptions<'_>,
) -> Result<()>
where
    S: SrcArg<T> + ?Sized,
    D: DstArg<T> + ?Sized,
{
    let to64 = |x: &[usize]| x.iter().map(|&v| v as u64).collect::<Vec<u64>>();
    let elem_bytes = u32::try_from(std::mem::size_of::<T>()).unwrap_or(u32::MAX);
    let request = Permute {
        dims: to64(dims),
        perm: perm.to_vec(),
        src_strides: opts.src_strides.map(to64),
        dst_strides: opts.dst_strides.map(to64),
        elem_bytes,
    };
    let planned = plan(&request)?;
    if planned.kind == Kind::Empty {
        return Ok(());
    }
    let strategy = opts.strategy.unwrap_or(Strategy::Xor);
    let kernels = kernels_for(&planned, elem_bytes, strategy)?;
    transpose_first(&kernels, src, dst, &planned.shape, opts.stream)
}

/// The kernels of a plan's kind, element size, strategy and outer axes, generated
/// once per process.
fn kernels_for(
    planned: &bankfree_gen::select::permute::Plan,
    elem_bytes: u32,
    strategy: Strategy,
) -> Result<Arc<[KernelSource]>> {
    type Key = (Kind, u32, Strategy, u8, [u8; 2]);
    static LISTS: Mutex<Option<HashMap<Key, Arc<[KernelSource]>>>> = Mutex::new(None);
    let shape = &planned.shape;
    let key = (
        planned.kind,
        elem_bytes,
        strategy,
        shape.outer.n,
        shape.fold.counts(),
    );
    let lookup = |lists: &Option<HashMap<Key, Arc<[KernelSource]>>>| {
        lists.as_ref().and_then(|m| m.get(&key).cloned())
    };
    if let Some(found) = lookup(&LISTS.lock().unwrap_or_else(|p| p.into_inner())) {
        return Ok(found);
    }
    // Built outside the lock: two threads may build the same list once each.
    let built: Arc<[KernelSource]> = plan_kernels(planned, elem_bytes, strategy)?
        .iter()
        .map(KernelSource::from_kernel)
        .collect();
    let mut lists = LISTS.lock().unwrap_or_else(|p| p.into_inner());
    Ok(lists
        .get_or_insert_with(HashMap::new)
        .entry(key)
        .or_insert(built)
        .clone())
}
