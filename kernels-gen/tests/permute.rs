//! Permutes of random rank (1 to 8), dims, perms, strides and element sizes: the
//! planner's shape must be valid and every kernel it lists that fits the shape,
//! simulated over host bytes, must write exactly what a CPU permute writes.

mod common;

use common::noise;

use bankfree_gen::check::analysis::analyze;
use bankfree_gen::check::fit::{kernel_refusal, Refusal};
use bankfree_gen::check::sim;
use bankfree_gen::hw::bank::Model;
use bankfree_gen::ir::shape::{Axis, Chain, Fold, Shape};
use bankfree_gen::kernel::order::TileOrder;
use bankfree_gen::select::choice::{permute_tile, PERMUTE_TILE16_MAX_SIDE};
use bankfree_gen::select::device::{twin, GpuClass};
use bankfree_gen::select::permute::{
    plan, plan_kernels, plan_tiles, plan_unwidened, Kind, Permute, PermuteError, Plan,
};
use bankfree_gen::Strategy as Layouts;
use bankfree_gen::{Form, Kernel, TransposeSpec};
use proptest::prelude::*;

fn row_major(dims: &[u64]) -> Vec<u64> {
    let mut s = vec![1u64; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * dims[i + 1];
    }
    s
}

/// Strides with `pad` extra elements per axis (a view into a larger tensor).
fn padded(dims: &[u64], pad: &[u64]) -> Vec<u64> {
    let mut s = vec![1u64; dims.len()];
    let mut step = 1;
    for i in (0..dims.len()).rev() {
        s[i] = step;
        step = step * dims[i] + pad[i] * step;
    }
    s
}

/// Elements a tensor of `dims` and `strides` spans.
fn span(dims: &[u64], strides: &[u64]) -> u64 {
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
fn reference(p: &Permute, src: &[u8], dst: &mut [u8]) {
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
fn check(p: &Permute) -> Result<usize, TestCaseError> {
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
fn check_plan(p: &Permute, planned: Result<Plan, PermuteError>) -> Result<usize, TestCaseError> {
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

fn permute_case() -> impl Strategy<Value = Permute> {
    (1usize..=8, any::<u64>())
        .prop_flat_map(|(rank, seed)| {
            (
                proptest::collection::vec(1u64..=5, rank),
                Just((0..rank).collect::<Vec<usize>>()).prop_shuffle(),
                proptest::sample::select(vec![1u32, 2, 4, 8, 12, 16]),
                proptest::collection::vec(0u64..=2, rank),
                proptest::collection::vec(0u64..=2, rank),
                0u8..4,
                Just(seed),
            )
        })
        .prop_filter("small enough to simulate", |(dims, ..)| {
            dims.iter().product::<u64>() <= 2048
        })
        .prop_map(|(dims, perm, elem_bytes, spad, dpad, strided, _)| {
            let out: Vec<u64> = perm.iter().map(|&a| dims[a]).collect();
            Permute {
                src_strides: (strided & 1 == 1).then(|| padded(&dims, &spad)),
                dst_strides: (strided & 2 == 2).then(|| padded(&out, &dpad)),
                dims,
                perm,
                elem_bytes,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]
    #[test]
    fn every_listed_kernel_that_fits_permutes_like_the_cpu(p in permute_case()) {
        prop_assert!(check(&p)? > 0, "no kernel ran {:?}", p);
    }
}

#[test]
fn folded_sides_permute_like_the_cpu() {
    for (dims, perm, e, folds) in [
        (vec![5u64, 6, 7, 3], vec![3usize, 2, 1, 0], 4u32, [0u8, 2u8]),
        (vec![3, 4, 2, 5, 2], vec![4, 3, 2, 1, 0], 1, [1, 2]),
        (
            vec![2, 3, 2, 3, 2, 3, 8],
            vec![6, 2, 0, 4, 1, 5, 3],
            12,
            // The rows take the axes either side could: 27 x 8, not 3 x 48.
            [2, 0],
        ),
        (
            vec![2, 3, 2, 5, 2, 3, 32],
            vec![6, 2, 0, 4, 1, 5, 3],
            4,
            [2, 0],
        ),
        (vec![6, 5, 40], vec![2, 1, 0], 2, [1, 0]),
        (vec![40, 5, 6], vec![2, 1, 0], 16, [0, 1]),
        (vec![6, 4, 5, 3, 7], vec![1, 0, 4, 3, 2], 8, [0, 1]),
    ] {
        // Tiles, though `plan` gathers some of these short sides.
        let p = Permute::new(&dims, &perm, e);
        let planned = plan_tiles(&p).expect("plans");
        assert_eq!(planned.shape.fold.counts(), folds, "{dims:?} {perm:?}");
        // Narrow elements run on fewer thread rows, so more loads are in flight;
        // a side of at most 16 items runs the 16-wide tile.
        let short = planned.shape.rows.min(planned.shape.cols);
        for k in plan_kernels(&planned, Layouts::Xor).expect("kernels build") {
            let g = k.spec().geometry;
            let want = permute_tile(e, short);
            if !g.thins() && g.form != Form::Tall {
                assert_eq!((g.tile, g.block_rows), want, "{}", k.entry_name());
            }
            assert_eq!(want.0 == 16, short <= PERMUTE_TILE16_MAX_SIDE);
        }
        let ran =
            check_plan(&p, plan_tiles(&p)).unwrap_or_else(|err| panic!("{dims:?} {perm:?}: {err}"));
        assert!(ran > 0, "{dims:?} {perm:?}");
        // And through strided views of both tensors.
        let out: Vec<u64> = perm.iter().map(|&a| dims[a]).collect();
        let pad: Vec<u64> = (0..dims.len() as u64).map(|i| i % 2).collect();
        let strided = Permute {
            src_strides: Some(padded(&dims, &pad)),
            dst_strides: Some(padded(&out, &pad)),
            ..p
        };
        check_plan(&strided, plan_tiles(&strided))
            .unwrap_or_else(|err| panic!("strided {dims:?} {perm:?}: {err}"));
        check(&strided).unwrap_or_else(|err| panic!("strided {dims:?} {perm:?}: {err}"));
    }
}

/// A transpose the planner would gather, using less than
/// `TALL_MAX_SECTOR_USE` of each source sector, whose rows the source stores as
/// runs of whole rows of its short inner side: the rows fold on past a tile and
/// the tall kernel, its rows folded, runs first (`[a, x, r, c] -> [x, c, a,
/// r]`), through row-major tensors and strided views alike.
#[test]
fn gathers_of_whole_source_rows_run_the_folded_tall_kernel() {
    for (dims, perm, e, rows) in [
        (vec![70u64, 5, 39, 6], vec![1usize, 3, 0, 2], 4u32, 70 * 39),
        (vec![30, 4, 2, 37, 5], vec![1, 4, 2, 0, 3], 8, 37 * 30 * 2),
        (vec![50, 3, 40, 7], vec![3, 1, 0, 2], 4, 40 * 50 * 3),
        (vec![90, 3, 40, 5], vec![1, 3, 0, 2], 8, 90 * 40),
    ] {
        let p = Permute::new(&dims, &perm, e);
        assert_eq!(
            plan_tiles(&p).expect("plans").shape.rows,
            dims[perm[perm.len() - 1]]
        );
        let planned = plan(&p).expect("plans");
        assert_eq!(planned.kind, Kind::Transpose, "{dims:?} {perm:?}");
        assert_eq!(planned.shape.rows, rows, "{dims:?} {perm:?}");
        let kernels = plan_kernels(&planned, Layouts::Xor).expect("kernels build");
        assert_eq!(
            kernels[0].spec().geometry.form,
            Form::Tall,
            "{dims:?} {perm:?}"
        );
        let ran = check_plan(&p, plan(&p)).unwrap_or_else(|err| panic!("{dims:?}: {err}"));
        assert!(ran > 0, "{dims:?} {perm:?}");
        let out: Vec<u64> = perm.iter().map(|&a| dims[a]).collect();
        let pad: Vec<u64> = (0..dims.len() as u64).map(|i| (i + 1) % 2).collect();
        let strided = Permute {
            src_strides: Some(padded(&dims, &pad)),
            dst_strides: Some(padded(&out, &pad)),
            ..p
        };
        check(&strided).unwrap_or_else(|err| panic!("strided {dims:?} {perm:?}: {err}"));
    }
    // Where the gather uses a third of each sector (3 columns of 8 bytes), it
    // stays a gather; 1- and 2-byte elements never fold for the tall kernel
    // (theirs packs words).
    let p = plan(&Permute::new(&[30, 4, 2, 37, 3], &[1, 4, 2, 0, 3], 8)).expect("plans");
    assert_eq!(p.kind, Kind::Gather);
    let p = plan(&Permute::new(&[70, 5, 39, 6], &[1, 3, 0, 2], 2)).expect("plans");
    assert_eq!(p.shape.rows, 39);
}

#[test]
fn simulated_issue_shapes_scaled_down() {
    for (dims, perm, e) in [
        (vec![2u64, 9, 4, 8], vec![0usize, 2, 1, 3], 2u32),
        (vec![2, 5, 3, 4, 8], vec![2, 0, 3, 1, 4], 2),
        (vec![3, 8, 5, 7], vec![0, 2, 3, 1], 2),
        (vec![3, 5, 6, 9], vec![0, 3, 1, 2], 4),
        (vec![9, 11, 3], vec![2, 0, 1], 1),
        (vec![4, 4, 4, 4, 4], vec![4, 3, 2, 1, 0], 4),
        (vec![2, 3, 2, 3, 2, 3, 8], vec![6, 2, 0, 4, 1, 5, 3], 4),
        (vec![3], vec![0], 12),
        (vec![1, 1], vec![1, 0], 16),
        (vec![5, 0, 3], vec![2, 1, 0], 4),
    ] {
        let p = Permute::new(&dims, &perm, e);
        check(&p).unwrap_or_else(|err| panic!("{dims:?} {perm:?}: {err}"));
    }
}

#[test]
fn short_kept_blocks_run_as_wider_elements() {
    for (dims, perm, e, wide) in [
        (
            vec![51u64, 5, 2, 16, 2],
            vec![3usize, 0, 1, 2, 4],
            2u32,
            4u32,
        ),
        (vec![3, 40, 2], vec![1, 0, 2], 8, 16),
        (vec![5, 33, 3], vec![1, 0, 2], 4, 12),
        (vec![6, 70, 2], vec![1, 0, 2], 1, 2),
        (vec![4, 2, 9, 4], vec![2, 0, 1, 3], 1, 4),
    ] {
        let p = Permute::new(&dims, &perm, e);
        let planned = plan(&p).expect("plans");
        assert_eq!(planned.elem_bytes, wide, "{dims:?} {perm:?}");
        assert_eq!(planned.unit, u64::from(wide / e));
        assert!(check(&p).expect("simulates") > 0, "{dims:?} {perm:?}");
        // Strided views whose strides are whole blocks widen too; the others not.
        let out: Vec<u64> = perm.iter().map(|&a| dims[a]).collect();
        for pad in [u64::from(wide / e), 1] {
            // Rows padded by `pad` elements: whole blocks only where it is one.
            let pads: Vec<u64> = (0..dims.len())
                .map(|i| if i + 1 == dims.len() { pad } else { 0 })
                .collect();
            let v = Permute {
                src_strides: Some(padded(&dims, &pads)),
                dst_strides: Some(padded(&out, &pads)),
                ..p.clone()
            };
            let unit = plan(&v).expect("plans").unit;
            assert_eq!(unit > 1, pad == u64::from(wide / e), "{v:?}");
            assert!(check(&v).expect("simulates") > 0, "{v:?}");
        }
    }
}

#[test]
fn a_strided_view_widens_in_units_of_its_blocks() {
    // [4, 100, 3] f32 -> [100, 4, 3], the source's rows padded to 330.
    let p = Permute {
        src_strides: Some(vec![33000, 330, 1]),
        ..Permute::new(&[4, 100, 3], &[1, 0, 2], 4)
    };
    let w = plan(&p).expect("plans");
    assert_eq!((w.elem_bytes, w.unit), (12, 3));
    let axes: Vec<(u64, u64, u64)> = w.axes.iter().map(|a| (a.ext, a.src, a.dst)).collect();
    assert_eq!(axes, vec![(4, 11000, 1), (100, 110, 4)]);
    assert!(check(&p).expect("simulates") > 0);
    // Padded to 320, no whole number of blocks: the plain plan.
    let p = Permute {
        src_strides: Some(vec![32000, 320, 1]),
        ..Permute::new(&[4, 100, 3], &[1, 0, 2], 4)
    };
    assert_eq!(plan(&p).expect("plans").unit, 1);
}

#[test]
fn a_short_source_run_of_several_axes_runs_the_thin_kernel() {
    use bankfree_gen::select::permute::pick;
    // A long outer axis over short inner ones whose order the permute changes:
    // one source run of up to 32 columns, each column a destination row.
    for (dims, perm, e, folds) in [
        (vec![2100u64, 5, 2], vec![2usize, 1, 0], 1u32, 1u8),
        (vec![1100, 3, 3], vec![2, 1, 0], 2, 1),
        (vec![2000, 2, 3, 2], vec![3, 2, 1, 0], 1, 2),
        (vec![3, 1500, 4, 2], vec![0, 3, 2, 1], 1, 1),
        (vec![700, 7, 4], vec![1, 2, 0], 2, 0),
    ] {
        let p = Permute::new(&dims, &perm, e);
        let planned = plan(&p).expect("plans");
        assert_eq!(planned.kind, Kind::Transpose, "{dims:?} {perm:?}");
        assert_eq!(planned.shape.fold.counts(), [0, folds], "{dims:?} {perm:?}");
        let kernels = plan_kernels(&planned, Layouts::Xor).expect("kernels build");
        let k = pick(&kernels, &planned.shape).expect("one fits");
        assert!(
            k.spec().geometry.thins(),
            "{dims:?} {perm:?}: {}",
            k.entry_name()
        );
        assert!(check(&p).expect("simulates") > 0, "{dims:?} {perm:?}");
    }
    // Folded columns that are not one source run (the planner folds only
    // contiguous ones; a shape made by hand): the thin kernel refuses them.
    let planned = plan(&Permute::new(&[2100, 5, 2], &[2, 1, 0], 1)).expect("plans");
    let kernels = plan_kernels(&planned, Layouts::Xor).expect("kernels build");
    let thin = &kernels[0];
    assert!(thin.spec().geometry.thins());
    let gapped = Shape {
        fold: Fold {
            cols: Chain::new(&[Axis {
                ext: 5,
                src: 3,
                dst: 2100,
            }])
            .expect("one axis"),
            ..planned.shape.fold
        },
        ..planned.shape
    };
    let g = thin.spec().geometry;
    assert_eq!(
        kernel_refusal(&g, thin.quotients(), &gapped),
        Some(Refusal::FoldRun {
            axis: 1,
            stride: 3,
            run: 2
        })
    );
    assert_eq!(kernel_refusal(&g, thin.quotients(), &planned.shape), None);
}

/// A tall kernel with folded rows moves its chunk through shared memory as
/// the unfolded kernel does (only its global offsets change), so the
/// analyzer finds the same instructions, conflict-free, for every element size.
#[test]
fn folded_tall_kernels_keep_the_unfolded_bank_proof() {
    for e in [4u32, 8, 12, 16, 24] {
        let spec = TransposeSpec::new(32, e, Layouts::Pad(None))
            .and_then(|s| s.with_form(Form::Tall))
            .expect("tall spec");
        let plain = Kernel::build(spec).expect("builds");
        let want = analyze(&plain, Model::Hopper);
        assert!(
            want.conflict_free && want.errors.is_empty(),
            "{e}: {}",
            want.verdict()
        );
        for rows in 1..=2 {
            let folded = plain.with_fold(rows, 0).expect("tall rows fold");
            let got = analyze(&folded, Model::Hopper);
            assert!(
                got.errors.is_empty(),
                "{}: {:?}",
                folded.entry_name(),
                got.errors
            );
            assert_eq!(
                got.instructions,
                want.instructions,
                "{}",
                folded.entry_name()
            );
        }
    }
}
