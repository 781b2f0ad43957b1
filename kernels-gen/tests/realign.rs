//! The `realign` kernels run on the simulator over ragged, batched, pitched and
//! offset shapes, at every source phase in a 16-byte vector and every
//! destination phase in a word, in both index builds: the output must equal a
//! plain CPU transpose byte for byte, every aligned load and store must be
//! aligned, and nothing outside the destination may change.

mod common;

use bankfree_gen::check::fit::refusal;
use bankfree_gen::check::index32::proven;
use bankfree_gen::check::sim::{Grid, Offsets};
use bankfree_gen::check::suit::{kernel_suits_at, realign_min_sides, unsuited};
use bankfree_gen::ir::shape::{Axis, Outer};
use bankfree_gen::kernel::geometry::Quotients;
use bankfree_gen::kernel::order::TileOrder;
use bankfree_gen::{emit, Form, Kernel, Model, Shape, Strategy, TransposeSpec};
use common::check_at;

/// [`check_at`] over this file's noise.
fn check(kernel: &Kernel, shape: &Shape, at: Offsets, index32: bool, grid: Option<Grid>) -> u64 {
    check_at(kernel, shape, at, index32, grid, 11)
}

/// [`check`] in the 64-bit build, and in the 32-bit one where it is proven
/// exact for `shape`: the interior tiles of the first.
fn both_builds(kernel: &Kernel, shape: &Shape, at: Offsets) -> u64 {
    let interior = check(kernel, shape, at, false, None);
    if proven(&kernel.spec().geometry, shape) {
        check(kernel, shape, at, true, None);
    }
    interior
}

fn shapes() -> Vec<Shape> {
    let mut out: Vec<Shape> = [
        (1, 1),
        (3, 5),
        (7, 130),
        (130, 7),
        (129, 131),
        (257, 129),
        (131, 258),
        (62, 66),
        // Tail tiles: last rows of tiles with at most 32 positions of each
        // destination row (1-byte: 100 and 236 rows; 2-byte: 62, 129, 130 and
        // the pitched and batched shapes below).
        (100, 133),
        (236, 77),
    ]
    .into_iter()
    .map(|(r, c)| Shape::new(r, c))
    .collect();
    // Pitched both sides, a batch with gaps, and one outer batch axis.
    out.push(Shape {
        src_ld: 141,
        dst_ld: 133,
        ..Shape::new(131, 139)
    });
    let mut batched = Shape::batched(3, 70, 45);
    batched.src_batch_stride += 5;
    batched.dst_batch_stride += 3;
    out.push(batched);
    // Pitched and batched, with 1-byte tail tiles.
    let mut tail = Shape::batched(2, 110, 45);
    (tail.src_ld, tail.dst_ld) = (50, 113);
    (tail.src_batch_stride, tail.dst_batch_stride) = (110 * 50 + 7, 45 * 113 + 3);
    out.push(tail);
    out
}

#[test]
fn realign_kernels_cover_every_element_once() {
    let mut ran = 0;
    for e in [1u32, 2] {
        let kernel = Kernel::build(TransposeSpec::realign(e).expect("valid")).expect("builds");
        assert!(kernel.analyze(Model::Hopper).conflict_free, "{e}-byte");
        let per = u64::from(16 / e);
        let mut interior = 0;
        for shape in shapes() {
            assert!(
                refusal(&kernel.spec().geometry, &shape).is_none(),
                "{shape:?}"
            );
            for src in 0..per {
                for dst in 0..4 {
                    interior += both_builds(&kernel, &shape, Offsets { src, dst });
                    ran += 1;
                }
            }
        }
        // Tiles inside the matrix ran by the body without bounds checks.
        assert!(interior > 0, "{e}-byte: no interior tile");
        // A grid smaller than the tiles and the batch: both loops stride.
        let shape = Shape::batched(3, 300, 261);
        check(
            &kernel,
            &shape,
            Offsets { src: 5, dst: 3 },
            true,
            Some(Grid { x: 2, y: 2 }),
        );
        // Pointers far above 2^32 enter the 32-bit build truncated.
        let far = Offsets {
            src: (1 << 40) + 7,
            dst: (1 << 41) + 1,
        };
        check(&kernel, &Shape::new(133, 71), far, true, None);
        // Outer batch axes.
        let outer = kernel.with_outer(1).expect("outer axes");
        let mut s = Shape::batched(4, 37, 45);
        s.outer = Outer::new(&[Axis {
            ext: 2,
            src: 2 * s.src_batch_stride + 9,
            dst: 2 * s.dst_batch_stride + 1,
        }])
        .expect("one axis");
        check(&outer, &s, Offsets { src: 3, dst: 1 }, false, None);
    }
    assert!(ran >= 2 * 10 * 32, "only {ran} runs");
}

/// Taking its tiles down the columns, a realign kernel moves the same tiles:
/// every shape at source phases across a vector and both ends of a word on
/// the destination, in both builds, and with fewer blocks than tiles.
#[test]
fn realign_kernels_down_the_columns_cover_every_element_once() {
    let mut ran = 0;
    for e in [1u32, 2] {
        let rows = Kernel::build(TransposeSpec::realign(e).expect("valid")).expect("builds");
        let kernel = rows
            .with_order(TileOrder::Columns)
            .expect("realign takes both");
        assert!(
            kernel.entry_name().ends_with("_tc"),
            "{}",
            kernel.entry_name()
        );
        assert_ne!(emit(&kernel), emit(&rows));
        assert!(kernel.analyze(Model::Hopper).conflict_free, "{e}-byte");
        let per = u64::from(16 / e);
        let mut interior = 0;
        for shape in shapes() {
            for (src, dst) in [(0, 0), (1, 3), (per - 1, 1)] {
                interior += both_builds(&kernel, &shape, Offsets { src, dst });
                ran += 1;
            }
        }
        assert!(interior > 0, "{e}-byte: no interior tile");
        let grid = Some(Grid { x: 3, y: 2 });
        check(
            &kernel,
            &Shape::batched(3, 300, 261),
            Offsets { src: 5, dst: 3 },
            true,
            grid,
        );
    }
    assert!(ran >= 2 * 10 * 3, "only {ran} runs");
}

#[test]
fn the_planner_runs_realign_kernels_on_large_shapes_no_vec_kernel_takes() {
    for e in [1u32, 2] {
        let g = TransposeSpec::realign(e).expect("valid").geometry;
        // Any shape runs when asked for ...
        assert!(refusal(&g, &Shape::new(8192, 4096)).is_none());
        // ... but the planner leaves the vec kernels theirs,
        let why = unsuited(&g, &Shape::new(8192, 4096)).expect("unsuited");
        assert!(why.to_string().contains("4 x 4 blocks"), "{why}");
        // and the matrices with fewer rows or columns than the planner's
        // minimum to the 64-wide tile (1-byte) or the skew tile (2-byte).
        let (min, min_cols) = realign_min_sides(e);
        let why = unsuited(&g, &Shape::new(min - 1, 5001)).expect("unsuited");
        assert!(
            why.to_string().contains(&format!("rows = {}", min - 1)),
            "{why}"
        );
        assert!(unsuited(&g, &Shape::new(min + 1, 5001)).is_none());
        let why = unsuited(&g, &Shape::batched(100, 1025, min_cols - 1)).expect("unsuited");
        assert!(
            why.to_string()
                .contains(&format!("cols = {}", min_cols - 1)),
            "{why}"
        );
        assert!(unsuited(&g, &Shape::batched(100, 1025, min_cols + 1)).is_none());
        // A pitch off the vector on a large matrix is the realign kernel's.
        let pitched = Shape {
            src_ld: 8193,
            ..Shape::new(8192, 4096)
        };
        assert!(unsuited(&g, &pitched).is_none());
        assert!(unsuited(&g, &Shape::new(4097, 4095)).is_none());
        // A pointer off the vec kernels' vector gives it their shapes too.
        let aligned = Shape::new(8192, 4096);
        let suits = |at| kernel_suits_at(&g, Quotients::Narrow, &aligned, at);
        assert!(!suits((0, 0)) && !suits((4096, 256)));
        assert!(suits((1, 0)) && suits((0, 2 * u64::from(e))));
        // A short side stays the 64-tile's whatever the pointers.
        assert!(!kernel_suits_at(
            &g,
            Quotients::Narrow,
            &Shape::new(min - 1, 4096),
            (1, 0)
        ));
    }
    for strategy in [Strategy::Pad(None), Strategy::Rotate, Strategy::Naive] {
        let bad = TransposeSpec::new(32, 1, strategy).and_then(|s| s.with_form(Form::Realign));
        let err = bad.expect_err("a realign kernel swizzles").to_string();
        assert!(err.contains("realign"), "{err}");
    }
}
