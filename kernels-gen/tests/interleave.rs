//! The `interleave` kernels: the simulator's output equals a plain CPU
//! transpose byte for byte at every height, on partial tiles, over a grid that
//! strides, pitched and batched sources and an outer batch axis; the fit
//! refuses what its vectors cannot move; the analyzer proves every height.

mod common;

use common::cover::{check, check_outer, refuses};

use bankfree_gen::check::refusal::Refusal;
use bankfree_gen::check::sim::Grid;
use bankfree_gen::check::suit::unsuited;
use bankfree_gen::{Kernel, Model, Shape, TransposeSpec};

fn interleave(e: u32) -> (TransposeSpec, Kernel) {
    let spec = TransposeSpec::interleave(e).expect("1- and 2-byte interleave kernels are valid");
    (spec, Kernel::build(spec).expect("builds"))
}

#[test]
fn interleave_kernels_cover_every_element_once() {
    let mut ran = 0;
    for e in [1u32, 2] {
        let (spec, kernel) = interleave(e);
        let v = u64::from(spec.geometry.vec);
        let chunk = u64::from(spec.geometry.threads());
        for rows in 1..=8 {
            // One block, a partial tile, and a few tiles with a partial last one
            // (over a grid that strides).
            for blocks in [1, 37, 2 * chunk + 5] {
                check(&kernel, &Shape::new(rows, blocks * v), None);
                ran += 1;
            }
            check(
                &kernel,
                &Shape::new(rows, (chunk + 3) * v),
                Some(Grid { x: 1, y: 1 }),
            );
            // Batched with gaps, a pitched source, and one outer batch axis.
            let mut shape = Shape::batched(3, rows, 40 * v);
            shape.src_ld = 43 * v;
            shape.src_batch_stride = shape.src_ld * rows + v;
            shape.dst_batch_stride += 2 * v;
            check(&kernel, &shape, Some(Grid { x: 1, y: 2 }));
            check_outer(&kernel, &shape);
            ran += 3;
            // Columns, pitch or a stride off the vector, a pitched destination:
            // refused.
            for bad in [
                Shape::new(rows, 40 * v + 1),
                Shape {
                    src_ld: 40 * v + 1,
                    ..Shape::new(rows, 40 * v)
                },
                Shape {
                    dst_batch_stride: shape.dst_batch_stride + 1,
                    ..shape
                },
                Shape {
                    dst_ld: rows + 1,
                    ..Shape::new(rows, 40 * v)
                },
            ] {
                refuses(&kernel, &bad);
            }
        }
        refuses(&kernel, &Shape::new(9, 40 * v));
    }
    assert!(ran >= 2 * 8 * 6, "only {ran} shapes");
}

#[test]
fn every_height_is_conflict_free_and_narrow_matrices_go_elsewhere() {
    for e in [1u32, 2] {
        let (spec, kernel) = interleave(e);
        let report = kernel.analyze(Model::Hopper);
        assert!(report.conflict_free, "{}", report.verdict());
        // Both moves touch the stage: the interleaved store and the ordered load.
        assert_eq!(report.instructions.len(), 2);
        let g = spec.geometry;
        let v = u64::from(g.vec);
        let narrow = Shape::new(3, 255 * v);
        assert!(matches!(
            unsuited(&g, &narrow),
            Some(Refusal::FewCols { .. })
        ));
        assert_eq!(unsuited(&g, &Shape::new(3, 256 * v)), None);
    }
    assert!(TransposeSpec::interleave(4).is_err());
}
