//! The `thin` kernels run on the simulator over every width they take, with
//! rows around their tiles' edges, pitched destinations, batches and outer
//! axes, at every source phase in a 16-byte vector and every destination phase
//! in a word, in both index builds: the output must equal a plain CPU transpose
//! byte for byte, every vector load and word store must be aligned, and nothing
//! outside the destination may change.

mod common;

use bankfree_gen::check::fit::{refusal, Refusal};
use bankfree_gen::check::sim::{self, Grid, Offsets};
use bankfree_gen::check::suit::{kernel_suits_at, thin_vec_cols, unsuited};
use bankfree_gen::ir::expr::{Env, Var};
use bankfree_gen::ir::shape::{Axis, Outer};
use bankfree_gen::kernel::geometry::Quotients;
use bankfree_gen::kernel::thin::{
    split_min_cols, thin_subtiles, warp_steps, widths_of, THIN_MAX_COLS,
};
use bankfree_gen::{Kernel, Model, Shape, TransposeSpec};
use common::check_at;

/// [`check_at`] over this file's noise.
fn check(kernel: &Kernel, shape: &Shape, at: Offsets, index32: bool, grid: Option<Grid>) -> u64 {
    check_at(kernel, shape, at, index32, grid, 21)
}

fn thin(e: u32) -> Kernel {
    Kernel::build(TransposeSpec::thin(e).expect("valid")).expect("builds")
}

/// `one`, a kernel of one width, on less than a tile of `tile` rows, a tile
/// and a ragged edge, three tiles and more, with a pitched destination, at two
/// source and destination phases (at every pair on the largest shape where
/// `all_phases`), in both index builds. Returns the tiles run without bounds
/// checks.
fn every_edge_and_phase(one: &Kernel, tile: u64, all_phases: bool) -> u64 {
    let e = one.spec().geometry.elem_bytes;
    let (per, vec) = (u64::from(16 / e), u64::from(4 / e));
    let cols = u64::from(one.width().expect("one width"));
    let mut interior = 0;
    for rows in [1, 5, tile - 1, tile + 3, 3 * tile + 7] {
        let shape = Shape {
            dst_ld: rows + 2 * (cols % 3),
            ..Shape::new(rows, cols)
        };
        assert_eq!(refusal(&one.spec().geometry, &shape), None);
        let phases: Vec<(u64, u64)> = if all_phases && rows == 3 * tile + 7 {
            (0..per)
                .flat_map(|s| (0..vec).map(move |d| (s, d)))
                .collect()
        } else {
            vec![(cols % per, rows % vec), (per - 1, 0)]
        };
        for (s, d) in phases {
            for index32 in [false, true] {
                interior += check(one, &shape, Offsets { src: s, dst: d }, index32, None);
            }
        }
    }
    interior
}

#[test]
fn thin_kernels_cover_every_element_once_at_every_width_and_phase() {
    for e in [1u32, 2] {
        let kernel = thin(e);
        assert!(kernel.analyze(Model::Hopper).conflict_free, "{e}-byte");
        let vec = u64::from(4 / e);
        let tile = 248 * vec;
        for cols in 2..=THIN_MAX_COLS as u32 {
            // The entry point the runtime launches for this width, and its
            // tile's rows (its sub-tiles').
            let one = kernel.with_width(cols).expect("a thin width");
            let tile = tile * u64::from(thin_subtiles(cols));
            assert!(
                every_edge_and_phase(&one, tile, cols == 31 || cols == 32) > 0,
                "{e}-byte, {cols} columns: no tile ran the unchecked body"
            );
        }
        // Width 2 stages 4 sub-tiles a tile: batches of them on a grid of one
        // block a row, each block taking several tiles.
        let two = kernel.with_width(2).expect("a thin width");
        let mut batched2 = Shape::batched(3, 4 * 2 * tile + 11, 2);
        batched2.src_batch_stride += 3;
        batched2.dst_batch_stride += 1;
        check(
            &two,
            &batched2,
            Offsets { src: 7, dst: 1 },
            true,
            Some(Grid { x: 1, y: 2 }),
        );
        // Batches with gaps and an outer axis, on a grid smaller than the work.
        let mut batched = Shape::batched(3, tile + 5, 13);
        batched.src_batch_stride += 7;
        batched.dst_batch_stride += 3;
        let even = kernel.with_width(24).expect("a thin width");
        let mut batched24 = Shape::batched(3, tile + 5, 24);
        batched24.src_batch_stride += 5;
        check(&even, &batched24, Offsets { src: 3, dst: 1 }, true, None);
        let small = Some(Grid { x: 1, y: 2 });
        check(&kernel, &batched, Offsets { src: 5, dst: 1 }, false, small);
        let outer = kernel.with_outer(1).expect("outer axes");
        let mut s = Shape::batched(4, tile + 5, 13);
        s.outer = Outer::new(&[Axis {
            ext: 2,
            src: 3 * s.src_batch_stride + 1,
            dst: 3 * s.dst_batch_stride + 1,
        }])
        .expect("one axis");
        check(&outer, &s, Offsets { src: 3, dst: 0 }, true, None);
    }
}

#[test]
fn thin_kernels_take_widths_from_2_to_40_stored_as_one_run() {
    let g = thin(1).spec().geometry;
    for cols in [0, 1, 41, 64] {
        assert_eq!(
            refusal(&g, &Shape::new(5000, cols)),
            Some(Refusal::ThinWidth { cols })
        );
    }
    let pitched = Shape {
        src_ld: 14,
        ..Shape::new(5000, 13)
    };
    let r = refusal(&g, &pitched).expect("refused");
    assert!(r.to_string().contains("src_ld = 14"), "{r}");
    assert!(TransposeSpec::thin(4).is_err());
    // An entry point of one width runs that width alone.
    let w11 = thin(1).with_width(11).expect("a thin width");
    let err = sim::run(
        &w11,
        &Shape::new(5000, 13),
        &[0; 65000],
        &mut [0; 65000],
        None,
    )
    .expect_err("another width");
    assert!(err.to_string().contains("with_width(13)"), "{err}");
    assert!(thin(1).with_width(13).is_ok());
    assert!(Kernel::build(TransposeSpec::realign(1).expect("valid"))
        .expect("builds")
        .with_width(13)
        .is_err());
}

#[test]
fn wide_aligned_sources_go_to_the_vec_kernels_unless_a_skew_tile_comes_first() {
    for e in [1u32, 2] {
        let g = thin(e).spec().geometry;
        let w = thin_vec_cols(e);
        // Sides and pitches multiples of 4, destination rows on sectors.
        let aligned = Shape::new(1 << 20, w);
        assert_eq!(unsuited(&g, &aligned), Some(Refusal::VecRuns { vec: 4 }));
        // Unless a pointer keeps the vec kernels off.
        let suits = |at| kernel_suits_at(&g, Quotients::Narrow, &aligned, at);
        assert!(!suits((0, 0)) && suits((1, 0)) && suits((0, 2)));
        // One column fewer, or rows off the vector: thin's.
        assert_eq!(unsuited(&g, &Shape::new(1 << 20, w - 1)), None);
        assert_eq!(unsuited(&g, &Shape::new((1 << 20) + 1, w)), None);
    }
    // 2-byte destination rows off their sectors: the skew tile would come
    // before the vec kernels, so thin keeps them.
    let g = thin(2).spec().geometry;
    assert_eq!(unsuited(&g, &Shape::new(582_540, 36)), None);
    assert!(unsuited(&thin(1).spec().geometry, &Shape::new(582_540, 40)).is_some());
}

#[test]
fn split_thin_kernels_cover_every_element_once_with_half_the_rows_a_tile() {
    for e in [1u32, 2] {
        let kernel = Kernel::build(
            TransposeSpec::thin(e)
                .and_then(|s| s.with_split())
                .expect("valid"),
        )
        .expect("builds");
        assert!(kernel.analyze(Model::Hopper).conflict_free, "{e}-byte");
        let g = kernel.spec().geometry;
        let vec = u64::from(4 / e);
        // Half a sub-tile of the unsplit kernel's: 4 warps' runs.
        let tile = 124 * vec;
        assert_eq!(u64::from(g.thin_tile_rows()), tile);
        let first = split_min_cols(e);
        assert!(kernel.with_width(first - 1).is_err(), "{e}-byte");
        let narrow = Shape::new(5000, u64::from(first - 1));
        let r = refusal(&g, &narrow).expect("a narrower width is refused");
        assert_eq!(
            r,
            Refusal::SplitWidth {
                cols: u64::from(first - 1),
                first
            }
        );
        assert!(r.to_string().contains("the thin kernel runs it"), "{r}");
        assert_eq!(refusal(&g, &Shape::new(5000, u64::from(first))), None);
        for cols in first..=THIN_MAX_COLS as u32 {
            let one = kernel.with_width(cols).expect("a split width");
            assert!(
                every_edge_and_phase(&one, tile, cols == 31) > 0,
                "{e}-byte, {cols} columns: no interior tile"
            );
        }
        // Batches with gaps on a grid smaller than the work, an odd number of
        // column steps (the second half's last step past the width).
        let cols = if e == 1 { 25 } else { 21 };
        let odd = kernel.with_width(cols).expect("a split width");
        let mut batched = Shape::batched(3, 2 * tile + 5, u64::from(cols));
        batched.src_batch_stride += 7;
        batched.dst_batch_stride += 3;
        check(
            &odd,
            &batched,
            Offsets { src: 5, dst: 1 },
            true,
            Some(Grid { x: 2, y: 2 }),
        );
    }
}

#[test]
fn the_second_half_of_the_warps_starts_where_the_first_half_stops() {
    for e in [1u32, 2] {
        let plain = thin(e);
        assert!(plain.thin().expect("thin").first_step.is_none());
        let k = plain.with_split().expect("splits");
        let g = k.spec().geometry;
        let qs = k.thin().and_then(|t| t.first_step.clone()).expect("split");
        for cols in widths_of(&g) {
            let steps = warp_steps(&g, cols);
            // Two halves cover every step, the first no shorter.
            assert!(2 * steps >= cols.div_ceil(g.vec) && steps < cols.div_ceil(g.vec));
            for ty in 0..g.block_rows {
                let mut env = Env::default();
                env.set(Var::Cols, i64::from(cols));
                env.set(Var::Ty, i64::from(ty));
                let want = if ty < 4 { 0 } else { i64::from(steps) };
                assert_eq!(qs.eval(&env).expect("evaluates"), want, "{cols} {ty}");
            }
        }
    }
}
