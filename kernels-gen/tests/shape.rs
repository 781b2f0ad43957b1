//! A transpose call's shape: the index functions the kernels use, the runs a
//! copy takes in place of a kernel, and the buffer sizes a shape needs, checked
//! without overflow.

use bankfree_gen::ir::shape::{Axis, Outer, ShapeError};
use bankfree_gen::Shape;

/// `dense_run` is `Some(n)` exactly where every element goes to its own index
/// on both sides and the indices are `0..n`, by the index functions the
/// kernels use.
#[test]
fn dense_runs_are_exactly_the_calls_that_move_elements_in_place() {
    let mut found = 0;
    for (batch, rows, cols) in [
        (1, 7, 1),
        (3, 5, 1),
        (1, 1, 6),
        (2, 1, 4),
        (2, 3, 4),
        (1, 1, 1),
    ] {
        for copy in [false, true] {
            for (sld, dld, extra) in [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)] {
                let mut s = Shape {
                    copy,
                    ..Shape::batched(batch, rows, cols)
                };
                let (drows, dcols) = s.dst_sides();
                s.src_ld = cols + sld;
                s.dst_ld = dcols + dld;
                s.src_batch_stride = rows * s.src_ld + extra;
                s.dst_batch_stride = drows * s.dst_ld + extra;
                let n = batch * rows * cols;
                let mut in_place = true;
                for b in 0..batch {
                    for r in 0..rows {
                        for c in 0..cols {
                            let (i, j) = (s.src_index(b, r, c), s.dst_index(b, r, c));
                            in_place &= i == j && i < n;
                        }
                    }
                }
                assert_eq!(s.dense_run(), in_place.then_some(n), "{s:?}");
                found += usize::from(in_place);
            }
        }
    }
    assert!(found > 10, "the cases include dense runs ({found})");
    let outer = Outer::new(&[Axis {
        ext: 2,
        src: 40,
        dst: 40,
    }])
    .unwrap();
    let s = Shape {
        outer,
        ..Shape::batched(4, 20, 1)
    };
    assert_eq!(s.dense_run(), Some(80));
    let s = Shape {
        outer: Outer::new(&[Axis {
            ext: 2,
            src: 41,
            dst: 41,
        }])
        .unwrap(),
        ..s
    };
    assert_eq!(s.dense_run(), None);
}

#[test]
fn empty_needs_nothing() {
    for s in [Shape::new(0, 5), Shape::new(5, 0), Shape::batched(0, 3, 3)] {
        assert!(s.is_empty());
        assert_eq!(s.src_elems(), Ok(0));
        assert_eq!(s.check_buffers(0, 0), Ok(()));
    }
}

#[test]
fn pitches_and_batches() {
    let s = Shape {
        src_ld: 10,
        dst_ld: 4,
        src_batch_stride: 40,
        dst_batch_stride: 30,
        ..Shape::batched(2, 3, 7)
    };
    assert_eq!(s.src_elems(), Ok(40 + 2 * 10 + 7));
    assert_eq!(s.dst_elems(), Ok(30 + 6 * 4 + 3));
    let bad = Shape { src_ld: 6, ..s };
    assert_eq!(
        bad.validate(),
        Err(ShapeError::Ld {
            which: "src",
            ld: 6,
            min: 7
        })
    );
    let overlap = Shape {
        dst_batch_stride: 20,
        ..s
    };
    assert!(matches!(
        overlap.validate(),
        Err(ShapeError::BatchStride { which: "dst", .. })
    ));
}

#[test]
fn overflow_is_an_error() {
    let s = Shape::new(u64::MAX, u64::MAX);
    assert!(matches!(s.validate(), Err(ShapeError::Overflow { .. })));
    let s = Shape::batched(u64::MAX, 2, 2);
    assert!(matches!(s.src_elems(), Err(ShapeError::Overflow { .. })));
}

#[test]
fn small_buffers_are_named() {
    let e = Shape::new(4, 4).check_buffers(16, 15).unwrap_err();
    assert!(e.to_string().starts_with("dst holds 15 elements"), "{e}");
}
