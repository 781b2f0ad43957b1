//! The CPU permute and the simulation of a permute's planned kernels against
//! it, shared by the permute tests.

use super::noise;
use bankfree_gen::check::fit::kernel_refusal;
use bankfree_gen::check::sim;
use bankfree_gen::kernel::order::TileOrder;
use bankfree_gen::select::device::{twin, GpuClass};
use bankfree_gen::select::permute::{
    plan, plan_kernels, plan_tiles, plan_unwidened, Kind, Permute, PermuteError, Plan,
};
use bankfree_gen::Kernel;
use bankfree_gen::Strategy as Layouts;
use proptest::prelude::*;

pub fn row_major(dims: &[u64]) -> Vec<u64> {
    let mut s = vec![1u64; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * dims[i + 1];
    }
    s
}

/// Strides with `pad` extra elements per axis (a view into a larger tensor).
pub fn padded(dims: &[u64], pad: &[u64]) -> Vec<u64> {
    let mut s = vec![1u64; dims.len()];
    let mut step = 1;
    for i in (0..dims.len()).rev() {
        s[i] = step;
        step = step * dims[i] + pad[i] * step;
    }
    s
}

/// Elements a tensor of `dims` and `strides` spans.
pub fn span(dims: &[u64], strides: &[u64]) -> u64 {
    if dims.contains(&0) {
        return 0;
    }
    1 + dims
        .iter()
        .zip(strides)
        .map(|(d, s)| (d - 1) * s)
        .sum::<u64>()
}

/// The CPU permute, element by element.
pub fn reference(p: &Permute, src: &[u8], dst: &mut [u8]) {
    let e = p.elem_bytes as usize;
    let rank = p.dims.len();
    let ss = p.src_strides.clone().unwrap_or_else(|| row_major(&p.dims));
    let out: Vec<u64> = p.perm.iter().map(|&a| p.dims[a]).collect();
    let ds = p.dst_strides.clone().unwrap_or_else(|| row_major(&out));
    let total: u64 = p.dims.iter().product();
    let mut idx = vec![0u64; rank];
    for _ in 0..total {
        let s: u64 = (0..rank).map(|a| idx[a] * ss[a]).sum();
        let d: u64 = (0..rank).map(|i| idx[p.perm[i]] * ds[i]).sum();
        let (s, d) = (s as usize * e, d as usize * e);
        dst[d..d + e].copy_from_slice(&src[s..s + e]);
        for a in (0..rank).rev() {
            idx[a] += 1;
            if idx[a] < p.dims[a] {
                break;
            }
            idx[a] = 0;
        }
    }
}

/// Simulates the kernels of `p`'s plan, of its tiled plan (a transpose or
/// copy) where it gathers, and of its plain plan where it widens (what runs
/// where a pointer is off the wider element).
pub fn check(p: &Permute) -> Result<usize, TestCaseError> {
    let planned = plan(p);
    let tiles = match &planned {
        Ok(x) if x.kind == Kind::Gather => check_plan(p, plan_tiles(p))?,
        _ => 0,
    };
    let plain = match &planned {
        Ok(x) if x.unit > 1 => {
            prop_assert_eq!(u64::from(p.elem_bytes) * x.unit, u64::from(x.elem_bytes));
            check_plan(p, plan_unwidened(p))?
        }
        _ => 0,
    };
    Ok(check_plan(p, planned)? + tiles + plain)
}

/// Simulates every kernel of the plan `planned` of `p` that fits its shape.
pub fn check_plan(
    p: &Permute,
    planned: Result<Plan, PermuteError>,
) -> Result<usize, TestCaseError> {
    let planned = match planned {
        Ok(x) => x,
        Err(PermuteError::Shape(e)) => {
            // Only strides of our making that overlap may be refused.
            return Err(TestCaseError::fail(format!("{p:?}: {e}")));
        }
        Err(e) => return Err(TestCaseError::fail(format!("{p:?}: {e}"))),
    };
    let e = p.elem_bytes as usize;
    let out: Vec<u64> = p.perm.iter().map(|&a| p.dims[a]).collect();
    let ss = p.src_strides.clone().unwrap_or_else(|| row_major(&p.dims));
    let ds = p.dst_strides.clone().unwrap_or_else(|| row_major(&out));
    let (n, m) = (span(&p.dims, &ss) as usize, span(&out, &ds) as usize);
    if planned.kind == Kind::Empty {
        return Ok(0);
    }
    // The plan counts in its own elements, `unit` of the permute's each.
    let unit = planned.unit as usize;
    prop_assert!(
        planned.shape.src_elems()? as usize * unit <= n,
        "{planned:?}"
    );
    prop_assert!(
        planned.shape.dst_elems()? as usize * unit <= m,
        "{planned:?}"
    );
    let src = noise(n * e, 3);
    let poison = noise(m * e, 5);
    let mut want = poison.clone();
    reference(p, &src, &mut want);
    let mut ran = 0;
    for strategy in [Layouts::Xor, Layouts::Pad(None)] {
        let kernels = plan_kernels(&planned, strategy)
            .map_err(|e| TestCaseError::fail(format!("{p:?}: {e}")))?;
        prop_assert!(!kernels.is_empty());
        // The last kernel of a list runs every shape of its kind.
        let last = kernels.last().expect("listed");
        let fits = |k: &Kernel| {
            kernel_refusal(&k.spec().geometry, k.quotients(), &planned.shape).is_none()
        };
        prop_assert!(fits(last));
        // Each tile kernel also in the other order its blocks may take the tiles,
        // and the twins other GPU classes run.
        let down = kernels
            .iter()
            .filter_map(|k| k.with_order(TileOrder::Columns).ok())
            .chain(kernels.iter().filter_map(|k| twin(GpuClass::H200, k)));
        for k in kernels.iter().cloned().chain(down) {
            if !fits(&k) {
                continue;
            }
            let mut got = poison.clone();
            sim::run(&k, &planned.shape, &src, &mut got, None).map_err(|err| {
                TestCaseError::fail(format!("{} on {p:?}: {err}", k.entry_name()))
            })?;
            prop_assert!(got == want, "{} on {:?}: output differs", k.entry_name(), p);
            ran += 1;
        }
    }
    Ok(ran)
}
