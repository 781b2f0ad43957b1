//! The `wordvec` kernels run on the simulator over ragged, pitched, batched and
//! outer-axis shapes, in both tile orders and both index builds: the output
//! must equal a plain CPU transpose byte for byte, every vector load and store
//! must be aligned and contiguous, and nothing outside the destination may
//! change. Their refusals name the pitch or stride that breaks the vectors.

mod common;

use bankfree_gen::check::fit::refusal;
use bankfree_gen::check::index32::proven;
use bankfree_gen::check::sim::{self, Grid, Offsets};
use bankfree_gen::ir::shape::{Axis, Outer};
use bankfree_gen::kernel::order::TileOrder;
use bankfree_gen::{emit, Form, Kernel, Model, Shape, Strategy, TransposeSpec};
use common::check_at;

/// Every element size the form takes: an odd number of 32-bit words or of
/// 8-byte units, or several 16-byte units.
const SIZES: [u32; 13] = [12, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64];

/// `n` rounded up to a multiple of 4 (a pitch whose rows start on 16 bytes).
fn up4(n: u64) -> u64 {
    n.div_ceil(4) * 4
}

/// A `rows x cols` matrix whose pitches are the sides rounded up to 4, plus
/// `extra` each.
fn pitched(rows: u64, cols: u64, extra: u64) -> Shape {
    Shape {
        src_ld: up4(cols) + extra,
        dst_ld: up4(rows) + extra,
        ..Shape::new(rows, cols)
    }
}

fn shapes() -> Vec<Shape> {
    let mut out: Vec<Shape> = [(1, 1), (3, 5), (31, 33), (33, 31), (70, 45), (97, 130)]
        .into_iter()
        .map(|(r, c)| pitched(r, c, 0))
        .collect();
    out.push(Shape::new(64, 96));
    out.push(pitched(45, 70, 8));
    // A batch with gaps between its matrices.
    let mut batched = pitched(37, 41, 4);
    batched.batch = 3;
    batched.src_batch_stride = 37 * batched.src_ld + 12;
    batched.dst_batch_stride = 41 * batched.dst_ld + 4;
    out.push(batched);
    out
}

/// [`check_at`] in the 64-bit build, and in the 32-bit one where it is proven
/// exact for `shape`.
fn both_builds(kernel: &Kernel, shape: &Shape, grid: Option<Grid>) {
    let at = Offsets::default();
    check_at(kernel, shape, at, false, grid, 5);
    if proven(&kernel.spec().geometry, shape) {
        check_at(kernel, shape, at, true, grid, 5);
    }
}

#[test]
fn wordvec_kernels_cover_every_element_once() {
    let mut ran = 0;
    for e in SIZES {
        let rows = Kernel::build(TransposeSpec::wordvec(e).expect("valid")).expect("builds");
        assert!(rows.analyze(Model::Hopper).conflict_free, "{e}-byte");
        let cols = rows
            .with_order(TileOrder::Columns)
            .expect("wordvec takes both");
        assert!(
            cols.entry_name().ends_with("_wordvec_tc"),
            "{}",
            cols.entry_name()
        );
        assert_ne!(emit(&cols), emit(&rows));
        for kernel in [&rows, &cols] {
            for shape in shapes() {
                assert!(
                    refusal(&kernel.spec().geometry, &shape).is_none(),
                    "{shape:?}"
                );
                both_builds(kernel, &shape, None);
                ran += 1;
            }
            // A grid smaller than the tiles and the batch: both loops stride.
            let mut s = pitched(100, 70, 0);
            s.batch = 3;
            s.src_batch_stride = 100 * s.src_ld;
            s.dst_batch_stride = 70 * s.dst_ld;
            both_builds(kernel, &s, Some(Grid { x: 2, y: 2 }));
            // An outer batch axis.
            let outer = kernel.with_outer(1).expect("outer axes");
            let mut s = pitched(37, 45, 0);
            s.batch = 2;
            s.src_batch_stride = 37 * s.src_ld;
            s.dst_batch_stride = 45 * s.dst_ld;
            s.outer = Outer::new(&[Axis {
                ext: 2,
                src: 2 * s.src_batch_stride + 8,
                dst: 2 * s.dst_batch_stride + 4,
            }])
            .expect("one axis");
            check_at(&outer, &s, Offsets::default(), false, None, 7);
        }
    }
    assert!(ran >= 10 * 2 * 9, "only {ran} runs");
}

/// Interior vectors go whole: a 64 x 96 matrix of 12-byte elements is 6 tiles of
/// 32 destination rows of 24 vectors, every one stored at once.
#[test]
fn wordvec_kernels_store_whole_vectors_inside_the_matrix() {
    let kernel = Kernel::build(TransposeSpec::wordvec(12).expect("valid")).expect("builds");
    let shape = Shape::new(64, 96);
    let src = vec![7u8; 64 * 96 * 12];
    let mut dst = vec![0u8; 64 * 96 * 12];
    let stats = sim::run_offsets(
        &kernel,
        &shape,
        &src,
        &mut dst,
        None,
        Offsets::default(),
        true,
    )
    .expect("runs");
    assert_eq!(stats.vector_writes, 6 * 32 * 24);
    assert_eq!(stats.unit_writes, 64 * 96 * 3);
}

#[test]
fn wordvec_kernels_refuse_rows_off_16_bytes_and_other_elements() {
    let g = TransposeSpec::wordvec(12).expect("valid").geometry;
    // Pitches and batch strides must keep every row's run on 16 bytes.
    for (shape, name) in [
        (Shape::new(33, 35), "src_ld"),
        (
            Shape {
                dst_ld: 34,
                ..pitched(33, 35, 0)
            },
            "dst_ld",
        ),
    ] {
        let r = refusal(&g, &shape).expect("refused");
        assert!(r.to_string().contains(name), "{r}");
    }
    let mut batched = pitched(8, 8, 0);
    batched.batch = 2;
    batched.src_batch_stride = 66;
    assert!(refusal(&g, &batched)
        .expect("refused")
        .to_string()
        .contains("src_batch_stride"));
    // A 24-byte element's rows start on 16 bytes at even pitches.
    let g24 = TransposeSpec::wordvec(24).expect("valid").geometry;
    assert_eq!(g24.vec, 2);
    assert!(refusal(&g24, &pitched(33, 35, 2)).is_none());
    assert!(refusal(&g24, &Shape::new(33, 35)).is_some());
    // Elements of one unit take other forms.
    for e in [4, 8, 16] {
        assert!(TransposeSpec::wordvec(e).is_err(), "{e}");
    }
    let swizzled =
        TransposeSpec::new(32, 12, Strategy::Xor).and_then(|s| s.with_form(Form::Wordvec));
    let why = swizzled.expect_err("pad only").to_string();
    assert!(why.contains("strategy = pad"), "{why}");
}
