//! The `squat` kernels run on the simulator over every height they take, with
//! columns around their tiles' edges, pitched sources, batches and outer axes,
//! at every source phase in a word and every destination phase in a 16-byte
//! vector, in both index builds: the output must equal a plain CPU transpose
//! byte for byte, every word load and vector store must be aligned, and
//! nothing outside the destination may change.

mod common;

use bankfree_gen::check::fit::{refusal, Refusal};
use bankfree_gen::check::sim::{self, Grid, Offsets};
use bankfree_gen::ir::shape::{Axis, Outer};
use bankfree_gen::{Kernel, Model, Shape, TransposeSpec};
use common::check_at;

/// [`check_at`] over this file's noise.
fn check(kernel: &Kernel, shape: &Shape, at: Offsets, index32: bool, grid: Option<Grid>) -> u64 {
    check_at(kernel, shape, at, index32, grid, 23)
}

fn squat(e: u32) -> Kernel {
    Kernel::build(TransposeSpec::squat(e).expect("valid")).expect("builds")
}

#[test]
fn squat_kernels_cover_every_element_once_at_every_height_and_phase() {
    for e in [1u32, 2] {
        let kernel = squat(e);
        let report = kernel.analyze(Model::Hopper);
        assert!(report.conflict_free, "{e}-byte: {}", report.verdict());
        let (per, vec) = (u64::from(16 / e), u64::from(4 / e));
        let tile = 248 * vec;
        let mut interior = 0;
        for rows in 2..=32 {
            // The entry point the runtime launches for this height.
            let one = kernel.with_width(rows as u32).expect("a squat height");
            // Less than a tile, a tile and a ragged edge, three tiles and more.
            for cols in [1, 6, tile - 1, tile + 3, 3 * tile + 7] {
                let shape = Shape {
                    src_ld: cols + 2 * (rows % 3),
                    ..Shape::new(rows, cols)
                };
                assert_eq!(refusal(&kernel.spec().geometry, &shape), None);
                // Every source phase in a word and every destination phase in a
                // vector (the widest heights and shape at every pair).
                let phases: Vec<(u64, u64)> = if (rows == 31 || rows == 32) && cols == 3 * tile + 7
                {
                    (0..vec)
                        .flat_map(|s| (0..per).map(move |d| (s, d)))
                        .collect()
                } else {
                    vec![(cols % vec, rows % per), (vec - 1, per - 1)]
                };
                for (s, d) in phases {
                    let at = Offsets { src: s, dst: d };
                    for index32 in [false, true] {
                        interior += check(&one, &shape, at, index32, None);
                    }
                }
            }
        }
        assert!(interior > 0, "{e}-byte: no tile ran the unchecked body");
        // Batches with gaps and an outer axis, on a grid smaller than the work.
        let mut batched = Shape::batched(3, 13, tile + 5);
        batched.src_batch_stride += 7;
        batched.dst_batch_stride += 3;
        let even = kernel.with_width(24).expect("a squat height");
        let mut batched24 = Shape::batched(3, 24, tile + 5);
        batched24.src_batch_stride += 5;
        check(&even, &batched24, Offsets { src: 3, dst: 1 }, true, None);
        let small = Some(Grid { x: 1, y: 2 });
        check(&kernel, &batched, Offsets { src: 1, dst: 5 }, false, small);
        let outer = kernel.with_outer(1).expect("outer axes");
        let mut s = Shape::batched(4, 13, tile + 5);
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
fn squat_kernels_run_word_aligned_calls_at_every_height() {
    // Source pointer and pitch on word boundaries, batch strides too, and the
    // destination run at every word phase of a vector, at every height:
    // funnel shifts of 0 and of a whole word.
    for e in [1u32, 2] {
        let kernel = squat(e);
        let (per, vec) = (u64::from(16 / e), u64::from(4 / e));
        let tile = 248 * vec;
        let mut interior = 0;
        for rows in 2..=32 {
            let one = kernel.with_width(rows as u32).expect("a squat height");
            for cols in [tile + 3 * vec, 3 * tile + 5] {
                let shape = Shape {
                    src_ld: (cols + rows % 3).next_multiple_of(vec),
                    ..Shape::new(rows, cols)
                };
                for d in [0, vec, per - vec] {
                    let at = Offsets { src: 0, dst: d };
                    interior += check(&one, &shape, at, rows % 2 == 0, None);
                }
            }
        }
        assert!(interior > 0, "{e}-byte: no tile ran the unchecked body");
        let mut batched = Shape::batched(3, 5, 2 * tile + vec);
        batched.src_batch_stride += 3 * vec;
        batched.dst_batch_stride += vec;
        let five = kernel.with_width(5).expect("a squat height");
        check(&five, &batched, Offsets { src: vec, dst: 0 }, true, None);
    }
}

#[test]
fn squat_kernels_take_heights_from_2_to_32_into_one_run() {
    let g = squat(1).spec().geometry;
    for rows in [0, 1, 33, 64] {
        assert_eq!(
            refusal(&g, &Shape::new(rows, 5000)),
            Some(Refusal::SquatWidth { rows })
        );
    }
    let pitched = Shape {
        dst_ld: 14,
        ..Shape::new(13, 5000)
    };
    let r = refusal(&g, &pitched).expect("refused");
    assert!(r.to_string().contains("dst_ld = 14"), "{r}");
    assert!(TransposeSpec::squat(4).is_err());
    // An entry point of one height runs that height alone.
    let w11 = squat(1).with_width(11).expect("a squat height");
    let err = sim::run(
        &w11,
        &Shape::new(13, 5000),
        &[0; 65000],
        &mut [0; 65000],
        None,
    )
    .expect_err("another height");
    assert!(err.to_string().contains("with_width(13)"), "{err}");
}
