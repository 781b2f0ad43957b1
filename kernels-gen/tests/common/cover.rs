//! Whole-kernel checks against the CPU reference, and the shapes they run.

use super::noise;
use bankfree_gen::check::sim::{self, Grid, SimError};
use bankfree_gen::ir::shape::{Axis, Outer};
use bankfree_gen::{Kernel, Shape};

/// The simulator's output for `kernel` on `shape` equals the CPU reference,
/// byte for byte, the bytes outside the destination untouched.
pub fn check(kernel: &Kernel, shape: &Shape, grid: Option<Grid>) {
    check_dst_at(kernel, shape, grid, 0);
}

/// [`check`] of `kernel` with one outer batch axis: `shape`'s batch twice,
/// the second `batch` batch strides after the first on each side.
pub fn check_outer(kernel: &Kernel, shape: &Shape) {
    let outer = kernel.with_outer(1).expect("outer axes");
    let s = Shape {
        batch: 2 * shape.batch,
        outer: Outer::new(&[Axis {
            ext: 2,
            src: shape.batch * shape.src_batch_stride,
            dst: shape.batch * shape.dst_batch_stride,
        }])
        .expect("one axis"),
        ..*shape
    };
    check(&outer, &s, None);
}

/// [`check`] with the destination's views `dst_off` elements into its buffer.
pub fn check_dst_at(kernel: &Kernel, shape: &Shape, grid: Option<Grid>, dst_off: u64) {
    let e = kernel.spec().geometry.elem_bytes as usize;
    let src = noise(shape.src_elems().expect("valid shape") as usize * e, 7);
    let poison = noise(shape.dst_elems().expect("valid shape") as usize * e, 99);
    let mut got = poison.clone();
    let mut want = poison;
    sim::reference(shape, e, &src, &mut want).expect("reference");
    if let Err(err) = sim::run_at(kernel, shape, &src, &mut got, grid, dst_off) {
        panic!("{} on {shape:?} at {dst_off}: {err}", kernel.entry_name());
    }
    assert!(
        got == want,
        "{} on {shape:?}: output differs",
        kernel.entry_name()
    );
}

/// The simulator refuses `shape` for `kernel` (`SimError::Unfit`), on buffers of
/// the shape's size.
pub fn refuses(kernel: &Kernel, shape: &Shape) {
    let e = kernel.spec().geometry.elem_bytes as usize;
    let n = shape.src_elems().expect("valid shape") as usize * e;
    let m = shape.dst_elems().expect("valid shape") as usize * e;
    let got = sim::run(kernel, shape, &vec![0; n], &mut vec![0; m], None);
    assert!(matches!(got, Err(SimError::Unfit(_))), "{shape:?}: {got:?}");
}

/// Shapes of every corner: empty, one element, odd sides, batched, pitched.
pub fn small_shapes() -> Vec<Shape> {
    let pitched = Shape {
        src_ld: 12,
        dst_ld: 11,
        src_batch_stride: 9 * 12 + 5,
        dst_batch_stride: 9 * 11 + 3,
        ..Shape::batched(2, 9, 7)
    };
    vec![
        Shape::new(0, 5),
        Shape::new(5, 0),
        Shape::batched(0, 4, 4),
        Shape::new(1, 1),
        Shape::new(1, 13),
        Shape::new(13, 1),
        Shape::new(31, 33),
        Shape::new(33, 31),
        Shape::batched(3, 7, 9),
        pitched,
    ]
}

/// `shape` with its dimensions, pitches and gaps multiplied by `v`.
pub fn scaled(shape: &Shape, v: u32) -> Shape {
    let v = u64::from(v);
    let (rows, cols) = (shape.rows * v, shape.cols * v);
    let (src_ld, dst_ld) = (shape.src_ld * v, shape.dst_ld * v);
    Shape {
        batch: shape.batch,
        rows,
        cols,
        src_ld,
        dst_ld,
        src_batch_stride: (shape.src_batch_stride - shape.rows * shape.src_ld) * v + rows * src_ld,
        dst_batch_stride: (shape.dst_batch_stride - shape.cols * shape.dst_ld) * v + cols * dst_ld,
        outer: Default::default(),
        copy: false,
        fold: Default::default(),
    }
}
