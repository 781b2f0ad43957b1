//! N-d permutes at run time: the generator's planner
//! ([`bankfree_gen::select::permute`]) picks a transpose or copy with a multi-axis
//! batch, and the kernels it lists are generated once per process and launched
//! like the attribute's.

use crate::buffer::{DstArg, SrcArg};
use crate::error::{Error, Result, Unfit};
use crate::kernel::KernelSource;
use crate::launch::{transpose_units, On};
use bankfree_gen::memo::FxMap;
use bankfree_gen::select::permute::{plan, plan_kernels, plan_unwidened, Kind, Permute, MAX_RANK};
use bankfree_gen::{Shape, Strategy};
use cudarc::driver::CudaStream;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

/// How a permute is laid out and run: strides (in elements, each in its own
/// tensor's axis order; row-major when `None`), the stream (else `dst`'s), the
/// shared-tile strategy of its transposes (`Strategy::Xor`, the default, or
/// `Strategy::Pad(None)`) and, where set, at most `blocks_per_sm` blocks per SM:
/// the same work in fewer blocks, leaving the rest of the GPU to kernels queued on
/// other streams (the distributed transpose runs its writes to other GPUs so,
/// beside a local transpose).
#[derive(Clone, Copy, Debug, Default)]
pub struct PermuteOptions<'a> {
    pub src_strides: Option<&'a [usize]>,
    pub dst_strides: Option<&'a [usize]>,
    pub stream: Option<&'a CudaStream>,
    pub strategy: Option<Strategy>,
    pub blocks_per_sm: Option<u32>,
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
    let elem_bytes = u32::try_from(std::mem::size_of::<T>()).unwrap_or(u32::MAX);
    let strategy = opts.strategy.unwrap_or(Strategy::Xor);
    let planned = planned(dims, perm, opts, elem_bytes, strategy)?;
    let Some(call) = &*planned else {
        return Ok(()); // an extent of 0: nothing to move
    };
    let at = On {
        stream: opts.stream,
        blocks_per_sm: opts.blocks_per_sm,
    };
    let Some(plain) = &call.plain else {
        return transpose_units(&call.kernels, src, dst, &call.shape, at, 1);
    };
    // Widened: the buffers are checked against the permute's own elements (the
    // same bytes), so that an error counts in them; a pointer off the wider
    // element runs the plain plan.
    plain.0.check_buffers(src.len() as u64, dst.len() as u64)?;
    match transpose_units(&call.kernels, src, dst, &call.shape, at, call.unit) {
        Err(Error::Unfit {
            why: Unfit::Unit { .. },
            ..
        }) => transpose_units(&plain.1, src, dst, &plain.0, at, 1),
        done => done,
    }
}

/// A planned call: its shape and kernels, `unit` of the permute's elements to
/// each of theirs, and where that is more than one the plan on the permute's
/// own elements (`None`: nothing to move).
pub(crate) type Planned = Option<Call>;

pub(crate) struct Call {
    pub kind: Kind,
    pub shape: Shape,
    pub kernels: Arc<[KernelSource]>,
    pub unit: u64,
    plain: Option<(Shape, Arc<[KernelSource]>)>,
}

/// A call's request in a fixed-size key (no allocation to look it up); `None` for
/// requests the planner refuses (rank above 8, lengths that differ), which are
/// planned, and refused, every time.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Request {
    rank: u8,
    elem_bytes: u32,
    strategy: Strategy,
    dims: [u64; MAX_RANK],
    perm: [u8; MAX_RANK],
    src_strides: Option<[u64; MAX_RANK]>,
    dst_strides: Option<[u64; MAX_RANK]>,
}

impl Request {
    fn new(
        dims: &[usize],
        perm: &[usize],
        opts: &PermuteOptions<'_>,
        elem_bytes: u32,
        strategy: Strategy,
    ) -> Option<Request> {
        let rank = dims.len();
        if rank > MAX_RANK || perm.len() != rank {
            return None;
        }
        let fill = |x: &[usize]| -> Option<[u64; MAX_RANK]> {
            let mut a = [0; MAX_RANK];
            (x.len() == rank).then(|| {
                a.iter_mut().zip(x).for_each(|(a, &v)| *a = v as u64);
                a
            })
        };
        let strides = |s: Option<&[usize]>| s.map(|s| fill(s).ok_or(())).transpose().ok();
        let mut p = [0u8; MAX_RANK];
        for (p, &v) in p.iter_mut().zip(perm) {
            *p = u8::try_from(v).ok()?;
        }
        Some(Request {
            rank: rank as u8,
            elem_bytes,
            strategy,
            dims: fill(dims)?,
            perm: p,
            src_strides: strides(opts.src_strides)?,
            dst_strides: strides(opts.dst_strides)?,
        })
    }
}

/// The plan and kernels of a call, made once per request and process (a call's
/// host time is what bounds small permutes: planning took a tenth of it).
pub(crate) fn planned(
    dims: &[usize],
    perm: &[usize],
    opts: &PermuteOptions<'_>,
    elem_bytes: u32,
    strategy: Strategy,
) -> Result<Arc<Planned>> {
    static PLANS: RwLock<Option<FxMap<Request, Arc<Planned>>>> = RwLock::new(None);
    const CAP: usize = 1 << 12;
    let key = Request::new(dims, perm, opts, elem_bytes, strategy);
    if let Some(k) = &key {
        if let Some(found) = PLANS.read().ok().and_then(|m| m.as_ref()?.get(k).cloned()) {
            return Ok(found);
        }
    }
    let to64 = |x: &[usize]| x.iter().map(|&v| v as u64).collect::<Vec<u64>>();
    let request = Permute {
        dims: to64(dims),
        perm: perm.to_vec(),
        src_strides: opts.src_strides.map(to64),
        dst_strides: opts.dst_strides.map(to64),
        elem_bytes,
    };
    let p = plan(&request)?;
    let made = Arc::new(match p.kind {
        Kind::Empty => None,
        _ => Some(Call {
            kind: p.kind,
            shape: p.shape,
            kernels: kernels_for(&p, strategy)?,
            unit: p.unit,
            plain: if p.unit > 1 {
                let q = plan_unwidened(&request)?;
                Some((q.shape, kernels_for(&q, strategy)?))
            } else {
                None
            },
        }),
    });
    if let (Some(k), Ok(mut m)) = (key, PLANS.write()) {
        let m = m.get_or_insert_with(FxMap::default);
        if m.len() >= CAP {
            m.clear(); // run-time shapes cannot grow it without bound
        }
        m.insert(k, made.clone());
    }
    Ok(made)
}

/// The kernels of a plan's kind, element size, strategy and outer axes, generated
/// once per process.
fn kernels_for(
    planned: &bankfree_gen::select::permute::Plan,
    strategy: Strategy,
) -> Result<Arc<[KernelSource]>> {
    type Key = (Kind, u32, Strategy, u8, [u8; 2], (u32, u32));
    static LISTS: Mutex<Option<HashMap<Key, Arc<[KernelSource]>>>> = Mutex::new(None);
    let shape = &planned.shape;
    let key = (
        planned.kind,
        planned.elem_bytes,
        strategy,
        shape.outer.n,
        shape.fold.counts(),
        planned.tile(),
    );
    let lookup = |lists: &Option<HashMap<Key, Arc<[KernelSource]>>>| {
        lists.as_ref().and_then(|m| m.get(&key).cloned())
    };
    if let Some(found) = lookup(&LISTS.lock().unwrap_or_else(|p| p.into_inner())) {
        return Ok(found);
    }
    // Built outside the lock: two threads may build the same list once each.
    let built: Arc<[KernelSource]> = plan_kernels(planned, strategy)?
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

#[cfg(test)]
mod tests {
    use super::*;

    fn opts<'a>(src: Option<&'a [usize]>, dst: Option<&'a [usize]>) -> PermuteOptions<'a> {
        PermuteOptions {
            src_strides: src,
            dst_strides: dst,
            ..PermuteOptions::default()
        }
    }

    fn call(p: &Arc<Planned>) -> (&Shape, &Arc<[KernelSource]>) {
        let c = Option::as_ref(p).expect("a call to make");
        (&c.shape, &c.kernels)
    }

    #[test]
    fn a_request_is_planned_once_and_keyed_by_all_it_holds() {
        let (dims, perm) = ([6, 5, 4], [2, 0, 1]);
        let get = |o: &PermuteOptions<'_>, e| planned(&dims, &perm, o, e, Strategy::Xor).unwrap();
        let plain = get(&opts(None, None), 4);
        assert!(Arc::ptr_eq(&plain, &get(&opts(None, None), 4)));
        // Row-major strides given explicitly plan the same call, under their own key.
        let row_major = get(&opts(Some(&[20, 4, 1]), None), 4);
        assert!(!Arc::ptr_eq(&plain, &row_major));
        assert_eq!(call(&plain).0, call(&row_major).0);
        let padded = get(&opts(Some(&[40, 8, 1]), None), 4);
        assert_ne!(call(&plain).0, call(&padded).0);
        let bytes = get(&opts(None, None), 1);
        let (a, b) = (&call(&plain).1, &call(&bytes).1);
        assert_ne!(a[0].geometry().elem_bytes, b[0].geometry().elem_bytes);
        // An extent of 0 plans nothing to move.
        assert!(
            planned(&[3, 0], &[1, 0], &opts(None, None), 4, Strategy::Xor)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn a_widened_request_keeps_its_plain_plan_for_other_pointers() {
        // [a, b, 2] f16 -> [b, a, 2]: 4-byte blocks, one element each.
        let p = planned(
            &[510, 300, 2],
            &[1, 0, 2],
            &opts(None, None),
            2,
            Strategy::Xor,
        )
        .unwrap();
        let c = Option::as_ref(&p).expect("a call to make");
        assert_eq!(c.unit, 2);
        assert!(c.kernels.iter().all(|k| k.geometry().elem_bytes == 4));
        let (shape, kernels) = c.plain.as_ref().expect("the plain plan");
        assert!(kernels.iter().all(|k| k.geometry().elem_bytes == 2));
        // Both count the same bytes.
        assert_eq!(shape.src_elems().unwrap(), 2 * c.shape.src_elems().unwrap());
        assert_eq!(shape.dst_elems().unwrap(), 2 * c.shape.dst_elems().unwrap());
        // Blocks of 3 f16 are no element size: not widened.
        let p = planned(
            &[510, 300, 3],
            &[1, 0, 2],
            &opts(None, None),
            2,
            Strategy::Xor,
        )
        .unwrap();
        assert_eq!(Option::as_ref(&p).expect("a call").unit, 1);
    }

    #[test]
    fn requests_the_planner_refuses_have_no_key_and_stay_errors() {
        let o = opts(None, None);
        let key = |d: &[usize], p: &[usize], o: &PermuteOptions<'_>| {
            Request::new(d, p, o, 4, Strategy::Xor)
        };
        assert!(key(&[2; 9], &[0, 1, 2, 3, 4, 5, 6, 7, 8], &o).is_none());
        assert!(key(&[2, 3], &[0], &o).is_none());
        assert!(key(&[2, 3], &[1, 300], &o).is_none());
        assert!(key(&[2, 3], &[1, 0], &opts(Some(&[3]), None)).is_none());
        assert!(key(&[2, 3], &[1, 0], &o).is_some());
        for _ in 0..2 {
            assert!(planned(&[2, 3], &[0, 0], &o, 4, Strategy::Xor).is_err());
            assert!(planned(
                &[2, 3],
                &[1, 0],
                &opts(None, Some(&[1, 1])),
                4,
                Strategy::Xor
            )
            .is_err());
        }
    }
}
