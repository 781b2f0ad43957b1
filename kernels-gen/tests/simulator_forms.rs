//! The simulator on the strip, packed tall and planar kernels, and on tiles
//! taken down the columns: its output must equal a plain CPU transpose, byte
//! for byte, with bytes outside the destination untouched.

mod common;

use common::cover::{check, check_dst_at, check_outer, refuses, scaled, small_shapes};

use bankfree_gen::check::sim::Grid;
use bankfree_gen::ir::shape::{Axis, Outer};
use bankfree_gen::kernel::grid::grid;
use bankfree_gen::kernel::order::TileOrder;
use bankfree_gen::{Form, Kernel, Shape, Strategy, TransposeSpec};

#[test]
fn strip_kernels_cover_every_element_once() {
    let mut ran = 0;
    for e in [1, 2, 4, 8, 12, 16, 36] {
        let spec = TransposeSpec::strip(e).expect("every element size has a strip kernel");
        let kernel = Kernel::build(spec).expect("builds");
        let chunk = u64::from(spec.geometry.small_chunk());
        for rows in [2, 3, 8, 13, 32] {
            // A partial chunk, and a few chunks whose last vector is partly outside.
            for cols in [1, 7, 3 * chunk / rows + 5] {
                check(&kernel, &Shape::new(rows, cols), None);
                // A pitched source.
                let pitched = Shape {
                    src_ld: cols + 3,
                    ..Shape::new(rows, cols)
                };
                check(&kernel, &pitched, Some(Grid { x: 2, y: 1 }));
                ran += 1;
            }
        }
        // Batches: matrices back to back, then with gaps on both sides (the
        // destination's a whole number of vectors), the batch loop striding over
        // a grid one block high.
        let v = u64::from(spec.geometry.vec);
        for (rows, cols) in [(2, 3 * chunk / 2 + 5), (7, 40), (32, 9)] {
            let mat = rows * cols;
            check(&kernel, &Shape::batched(3, rows, cols), None);
            let gapped = Shape {
                src_ld: cols + 1,
                src_batch_stride: rows * (cols + 1) + 3,
                dst_batch_stride: mat.next_multiple_of(v) + v,
                ..Shape::batched(3, rows, cols)
            };
            check(&kernel, &gapped, Some(Grid { x: 2, y: 2 }));
            // A permute's batch over two more axes, ordered differently on
            // each side.
            let k = kernel
                .with_outer(2)
                .expect("a strip kernel takes outer axes");
            let axes = [
                Axis {
                    ext: 2,
                    src: 3 * gapped.src_batch_stride,
                    dst: 3 * 3 * gapped.dst_batch_stride,
                },
                Axis {
                    ext: 3,
                    src: 3 * 2 * gapped.src_batch_stride,
                    dst: 3 * gapped.dst_batch_stride,
                },
            ];
            let outer = Shape {
                batch: 3 * 2 * 3,
                outer: Outer::new(&axes).expect("two axes"),
                ..gapped
            };
            check(&k, &outer, None);
            check(&k, &outer, Some(Grid { x: 3, y: 4 }));
            ran += 1;
            // Destination runs at every phase against the vector: the pointer
            // and the batch strides off vector boundaries.
            let off = Shape {
                dst_batch_stride: mat + 1,
                ..gapped
            };
            for dst_off in 0..v {
                check_dst_at(&kernel, &off, None, dst_off);
                check_dst_at(&k, &outer, Some(Grid { x: 2, y: 1 }), dst_off);
            }
        }
        let mut pitched_dst = Shape::new(4, 100);
        pitched_dst.dst_ld = 5;
        for shape in [Shape::new(33, 100), Shape::new(1, 100), pitched_dst] {
            refuses(&kernel, &shape);
        }
    }
    assert!(ran >= 7 * 5 * 3 + 7 * 3, "only {ran} shapes");
}

#[test]
fn packed_tall_kernels_cover_every_element_once() {
    let mut ran = 0;
    // The swizzled chunk the attribute uses (`none` is the same expressions
    // without the XOR key).
    for e in [1u32, 2] {
        let spec = TransposeSpec::new(32, e, Strategy::Xor)
            .and_then(|s| s.with_form(Form::Tall))
            .expect("1- and 2-byte tall kernels are valid");
        assert_eq!(spec.geometry.vec, 4 / e);
        let kernel = Kernel::build(spec).expect("builds");
        let v = u64::from(spec.geometry.vec);
        for n in [1, 2, 3, 8, 17, 24, 32] {
            let chunk = (u64::from(spec.geometry.chunk_elems()) / n - v) / (32 * v) * (32 * v);
            // One partial chunk at every destination address modulo the word
            // (each row's window shifts with it), and a few chunks with a
            // partial last one.
            for long in [2, 45] {
                for dst_off in 0..v {
                    check_dst_at(&kernel, &Shape::new(long, n), None, dst_off);
                }
                ran += 1;
            }
            check_dst_at(&kernel, &Shape::new(2 * chunk + 5, n), None, n % v);
            ran += 1;
            // Batched (source matrices on words), a gap between matrices, and
            // odd destination pitches and strides.
            let mut shape = Shape::batched(2, 301, n);
            shape.src_batch_stride = (shape.src_batch_stride + 5).next_multiple_of(v);
            shape.dst_ld = 310;
            shape.dst_batch_stride = 310 * n + 3;
            check_dst_at(&kernel, &shape, Some(Grid { x: 1, y: 2 }), 1);
            check_dst_at(&kernel, &shape, None, v - 1);
            // A source batch stride off the word: refused.
            shape.src_batch_stride += 1;
            refuses(&kernel, &shape);
        }
        for shape in [Shape::new(100, 33), {
            let mut s = Shape::new(100, 3);
            s.src_ld = 4;
            s
        }] {
            refuses(&kernel, &shape);
        }
    }
    assert!(ran >= 2 * 7 * 3, "only {ran} shapes");
}

#[test]
fn planar_kernels_cover_every_element_once() {
    let mut ran = 0;
    for e in [1u32, 2] {
        let spec = TransposeSpec::planar(e).expect("1- and 2-byte planar kernels are valid");
        let kernel = Kernel::build(spec).expect("builds");
        let v = u64::from(spec.geometry.vec);
        let chunk = u64::from(spec.geometry.copy_chunk());
        for cols in 1..=8 {
            // One block, a partial chunk, and a few chunks with a partial last one
            // (over a grid that strides).
            for blocks in [1, 37, 2 * chunk + 5] {
                check(&kernel, &Shape::new(blocks * v, cols), None);
                ran += 1;
            }
            check(
                &kernel,
                &Shape::new((chunk + 3) * v, cols),
                Some(Grid { x: 1, y: 1 }),
            );
            // Batched with gaps, a pitched destination, and one outer batch axis.
            let mut shape = Shape::batched(3, 40 * v, cols);
            shape.src_batch_stride += 2 * v;
            shape.dst_ld = 43 * v;
            shape.dst_batch_stride = shape.dst_ld * cols + v;
            check(&kernel, &shape, Some(Grid { x: 1, y: 2 }));
            check_outer(&kernel, &shape);
            ran += 3;
            // Rows, pitch or a stride off the vector, a pitched source: refused.
            for bad in [
                Shape::new(40 * v + 1, cols),
                Shape {
                    dst_ld: 40 * v + 1,
                    ..Shape::new(40 * v, cols)
                },
                Shape {
                    src_batch_stride: shape.src_batch_stride + 1,
                    ..shape
                },
                Shape {
                    src_ld: cols + 1,
                    ..Shape::new(40 * v, cols)
                },
            ] {
                refuses(&kernel, &bad);
            }
        }
        refuses(&kernel, &Shape::new(40 * v, 9));
    }
    assert!(ran >= 2 * 8 * 6, "only {ran} shapes");
}

/// Tile and skew specs of the grid (one thread-row count per tile, element size
/// and vector width), their blocks taking the tiles down the columns: on ragged,
/// batched and pitched shapes of several tiles each way, at the first and last
/// destination offsets in a sector, and with fewer blocks than tiles.
#[test]
fn tiles_taken_down_the_columns_cover_every_element_once() {
    let mut shapes = small_shapes();
    // The pitched batch, 63 x 49 with its gaps: several tiles each way.
    let pitched = scaled(&shapes[shapes.len() - 1], 7);
    shapes.extend([Shape::new(70, 65), Shape::new(130, 3), pitched]);
    let mut ran = 0;
    for spec in grid(&[Strategy::Pad(None), Strategy::Xor])
        .into_iter()
        .filter(|s| matches!(s.geometry.form, Form::Tile | Form::Skew))
        .filter(|s| s.geometry.block_rows == 8.min(s.geometry.tile))
    {
        let Ok(rows) = Kernel::build(spec) else {
            continue;
        };
        let kernel = rows.with_order(TileOrder::Columns).expect("tile forms");
        let v = spec.geometry.vec;
        let sector = u64::from(spec.geometry.sector_elems());
        for shape in &shapes {
            if v == 1 {
                check_dst_at(&kernel, shape, None, 0);
                check_dst_at(&kernel, shape, None, sector - 1);
            } else {
                check(&kernel, &scaled(shape, v), None);
            }
        }
        check(
            &kernel,
            &scaled(&Shape::batched(3, 70, 40), v),
            Some(Grid { x: 3, y: 2 }),
        );
        ran += 1;
    }
    assert!(ran > 40, "only {ran} specs ran");
}
