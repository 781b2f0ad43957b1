//! Permutes of random rank (1 to 8), dims, perms, strides and element sizes: the
//! planner's shape must be valid and every kernel it lists that fits the shape,
//! simulated over host bytes, must write exactly what a CPU permute writes.

mod common;

use common::permute::{check, check_plan, padded};

use bankfree_gen::check::fit::{kernel_refusal, Refusal};
use bankfree_gen::ir::shape::{Axis, Chain, Fold, Shape};
use bankfree_gen::select::choice::{permute_tile, PERMUTE_TILE16_MAX_SIDE};
use bankfree_gen::select::permute::{plan, plan_kernels, plan_tiles, Kind, Permute};
use bankfree_gen::Form;
use bankfree_gen::Strategy as Layouts;
use proptest::prelude::*;

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
fn blocks_past_a_vector_widen_only_into_the_wordvec_kernel() {
    use bankfree_gen::select::permute::pick;
    // [68, 40, b] -> [40, 68, b] with blocks of 20 to 64 bytes (5 f32, 3 f64, 7
    // f32, 4 f64, 5 f64, 18 u16, 36 u8, 12 f32, 8 f64): a transpose of the
    // blocks that the wordvec kernel runs, its pointers on 16 bytes.
    for (b, e) in [
        (5u64, 4u32),
        (3, 8),
        (7, 4),
        (4, 8),
        (5, 8),
        (18, 2),
        (36, 1),
        (12, 4),
        (8, 8),
    ] {
        let p = Permute::new(&[68, 40, b], &[1, 0, 2], e);
        let w = plan(&p).expect("plans");
        let wide = b as u32 * e;
        assert_eq!(
            (w.kind, w.elem_bytes, w.unit, w.align()),
            (Kind::Transpose, wide, b, 16),
            "{b} x {e} bytes"
        );
        let kernels = plan_kernels(&w, Layouts::Xor).expect("kernels build");
        let first = pick(&kernels, &w.shape).map(|k| k.spec().geometry.form);
        assert_eq!(first, Some(Form::Wordvec), "{b} x {e} bytes");
        assert!(check(&p).expect("simulates") > 0, "{b} x {e} bytes");
    }
    // The permute's own elements: blocks the wordvec kernel ran slower than
    // that (9 f32, 7 f64, 15 f32), a block of 68 bytes, a pitch of 39 blocks
    // (rows off 16 bytes) and one of 40 padded by 1 element.
    for (dims, e, src_strides) in [
        ([68u64, 40, 9], 4u32, None),
        ([68, 40, 7], 8, None),
        ([68, 40, 15], 4, None),
        ([68, 40, 17], 4, None),
        ([68, 39, 5], 4, None),
        ([68, 40, 5], 4, Some(vec![40 * 5 + 1, 5, 1])),
    ] {
        let p = Permute {
            src_strides,
            ..Permute::new(&dims, &[1, 0, 2], e)
        };
        let w = plan(&p).expect("plans");
        assert_eq!((w.unit, w.align()), (1, u64::from(e)), "{p:?}");
        assert!(check(&p).expect("simulates") > 0, "{p:?}");
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
