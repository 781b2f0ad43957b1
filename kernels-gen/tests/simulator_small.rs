//! The simulator on the small kernels (dense batches of small matrices, their
//! quotients, vector stores and chunks taken down the columns): its output must
//! equal a plain CPU transpose, byte for byte, with bytes outside the
//! destination untouched.

mod common;

use common::cover::{check, check_dst_at, refuses};
use common::noise;

use bankfree_gen::check::fit::kernel_refusal;
use bankfree_gen::check::sim::{self, Grid};
use bankfree_gen::ir::shape::{Axis, Outer};
use bankfree_gen::kernel::geometry::Quotients;
use bankfree_gen::kernel::order::TileOrder;
use bankfree_gen::{Kernel, Shape, Strategy, TransposeSpec};

/// `k` in each order its chunk can be taken in: along the rows, and down the
/// columns where it gathers vectors of single elements.
fn orders(k: Kernel) -> Vec<Kernel> {
    let down = k.with_order(TileOrder::Columns).ok();
    std::iter::once(k).chain(down).collect()
}

#[test]
fn small_kernels_cover_every_element_once() {
    let mut ran = 0;
    // Every vector width, the 16-byte element and two word arrays.
    for e in [1, 2, 4, 8, 12, 16, 36] {
        let spec = TransposeSpec::small(e).expect("every element size has a small kernel");
        for kernel in orders(Kernel::build(spec).expect("builds")) {
            let chunk = u64::from(spec.geometry.small_chunk());
            for (rows, cols) in [
                (2, 2),
                (3, 3),
                (2, 25),
                (25, 2),
                (5, 17),
                (33, 31),
                (64, 64),
            ] {
                let mat = rows * cols;
                // One matrix, a partial chunk, and runs of a few chunks whose last vector
                // is partly outside (totals not a multiple of the vector).
                for batch in [1, 3, (2 * chunk + 5) / mat + 1, (3 * chunk) / mat + 2] {
                    let shape = Shape::batched(batch, rows, cols);
                    check(&kernel, &shape, None);
                    ran += 1;
                }
                // The tile loop striding over a small grid.
                let shape = Shape::batched(3 * chunk / mat + 1, rows, cols);
                check(&kernel, &shape, Some(Grid { x: 2, y: 1 }));
            }
            // The largest matrices it takes, and what it refuses.
            check(&kernel, &Shape::batched(2, 128, 128), None);
            let mut pitched = Shape::batched(2, 4, 4);
            pitched.dst_batch_stride = 17;
            let mut pitched_rows = Shape::batched(2, 4, 4);
            pitched_rows.dst_ld = 5;
            pitched_rows.dst_batch_stride = 20;
            for shape in [
                pitched,
                pitched_rows,
                Shape::batched(4, 1, 9),
                Shape::batched(2, 129, 128),
            ] {
                refuses(&kernel, &shape);
            }
            // Any source layout: pitched rows, gaps between matrices, and a permute's
            // batch over several axes whose source order differs from the
            // destination's (the destination one dense run).
            for (rows, cols) in [(5, 17), (15, 32), (3, 3)] {
                let mat = rows * cols;
                let src_ld = cols + 3;
                let span = rows * src_ld + 2;
                let gapped = Shape {
                    src_ld,
                    src_batch_stride: span,
                    ..Shape::batched(3 * chunk / mat + 2, rows, cols)
                };
                check(&kernel, &gapped, Some(Grid { x: 2, y: 1 }));
                for exts in [&[4u64][..], &[2, 3]] {
                    let outer = exts.len() as u8;
                    let k = kernel
                        .with_outer(outer)
                        .expect("a small kernel takes outer axes");
                    let e0 = 5;
                    let items: u64 = exts.iter().product();
                    let (mut axes, mut src, mut dst) = (vec![], span, mat * e0);
                    for &ext in exts {
                        axes.push(Axis { ext, src, dst });
                        src *= ext;
                        dst *= ext;
                    }
                    let shape = Shape {
                        src_ld,
                        // Axis 0 outermost in the source, innermost in the destination.
                        src_batch_stride: src,
                        outer: Outer::new(&axes).expect("at most two axes"),
                        ..Shape::batched(e0 * items, rows, cols)
                    };
                    check(&k, &shape, None);
                    check(&k, &shape, Some(Grid { x: 3, y: 1 }));
                    ran += 1;
                    // A destination that is not one run, and an axis of one item
                    // (no exact quotient by its extent).
                    let mut gap = shape;
                    gap.outer.axes[exts.len() - 1].dst += 1;
                    let one = Shape {
                        batch: items,
                        ..shape
                    };
                    for shape in [gap, one] {
                        refuses(&k, &shape);
                    }
                }
            }
        }
    }
    assert!(ran >= 12 * 7 * 4, "only {ran} shapes");
}

#[test]
fn small_kernels_of_word_arrays_store_vectors_where_dst_is_aligned() {
    // Word arrays gather the destination's words: whole 16-byte vectors where
    // the pointer starts on one (its position counted in words), word by word at
    // every other pointer, and every element once either way.
    for e in [12, 20, 24, 36, 64] {
        let kernel = Kernel::build(TransposeSpec::small(e).expect("valid")).expect("builds");
        let g = kernel.spec().geometry;
        assert!(g.gathers_words() && g.vec == 4, "{e}-byte: {g:?}");
        for (batch, rows, cols) in [(37, 5, 17), (3, 33, 31), (200, 3, 3)] {
            let shape = Shape::batched(batch, rows, cols);
            let words = batch * rows * cols * u64::from(e / 4);
            let (src, mut dst) = (
                noise((batch * rows * cols) as usize * e as usize, 3),
                vec![0u8; (batch * rows * cols) as usize * e as usize],
            );
            for dst_off in 0..4 {
                check_dst_at(&kernel, &shape, None, dst_off);
                let stats =
                    sim::run_at(&kernel, &shape, &src, &mut dst, None, dst_off).expect("runs");
                assert_eq!(stats.unit_writes, words, "{e}-byte at {dst_off}");
                let want = if dst_off == 0 { words / 4 } else { 0 };
                assert_eq!(stats.vector_writes, want, "{e}-byte at {dst_off}");
            }
        }
    }
}

#[test]
fn small_kernels_down_the_columns_store_units_at_any_pointer() {
    // Taken down the columns, a thread's units lie 32 positions apart: none is
    // stored as a vector, so every destination pointer takes the kernel and
    // every element is written once. Along the rows the same kernel stores
    // vectors, and the simulator refuses it off their alignment.
    for e in [1, 2, 4, 8] {
        let rows = Kernel::build(TransposeSpec::small(e).expect("valid")).expect("builds");
        let down = rows
            .with_order(TileOrder::Columns)
            .expect("vectors of elements");
        assert!(down.stores_units() && down.aligns_dst() && !rows.aligns_dst());
        assert!(down.entry_name().ends_with("_tc"), "{}", down.entry_name());
        let vec = u64::from(rows.spec().geometry.vec);
        for (batch, r, c) in [(37, 5, 17), (3, 33, 31), (200, 3, 3), (1, 2, 2)] {
            let shape = Shape::batched(batch, r, c);
            let n = (batch * r * c) as usize * e as usize;
            let (src, mut dst) = (noise(n, 5), vec![0u8; n]);
            for dst_off in 0..vec {
                check_dst_at(&down, &shape, None, dst_off);
                let stats =
                    sim::run_at(&down, &shape, &src, &mut dst, None, dst_off).expect("runs");
                assert_eq!(stats.unit_writes, batch * r * c, "{e}-byte at {dst_off}");
                assert_eq!(stats.vector_writes, 0, "{e}-byte at {dst_off}");
            }
            let at_one = sim::run_at(&rows, &shape, &src, &mut dst, None, 1);
            assert!(
                at_one.is_err() || batch * r * c < vec,
                "{e}-byte: {at_one:?}"
            );
        }
    }
    // Single elements and word arrays have no columns to take.
    let one = TransposeSpec::small(4)
        .and_then(|s| s.with_vec(1))
        .expect("valid");
    for spec in [one, TransposeSpec::small(12).expect("valid")] {
        let k = Kernel::build(spec).expect("builds");
        assert!(
            k.with_order(TileOrder::Columns).is_err(),
            "{}",
            k.entry_name()
        );
    }
}

#[test]
fn wide_quotients_split_any_batch_and_long_matrices() {
    // A batch whose inner axis has 65537 items and `batch * extent` past 2^32: a
    // 32-bit quotient by 65537 is off by one from item 65536 on, so the plain
    // small kernel refuses it and its exact and 64-bit twins run it, in both
    // index builds.
    for e in [1, 4] {
        let plain = Kernel::build(TransposeSpec::small(e).expect("valid"))
            .and_then(|k| k.with_outer(1))
            .expect("a small kernel takes outer axes");
        let (rows, cols, e0, e1) = (2u64, 1u64, 65537u64, 3u64);
        let mat = rows * cols;
        let shape = Shape {
            // Axis 0 outermost in the source, innermost in the destination.
            src_batch_stride: e1 * mat,
            outer: Outer::new(&[Axis {
                ext: e1,
                src: mat,
                dst: mat * e0,
            }])
            .expect("one axis"),
            ..Shape::batched(e0 * e1, rows, cols)
        };
        refuses(&plain, &shape);
        // Past 2^31 items the exact quotients' sum would need a 33rd bit: only
        // the all-64-bit twin takes such a batch.
        let huge = Shape {
            src_batch_stride: e1 * mat,
            outer: Outer::new(&[Axis {
                ext: e1,
                src: mat,
                dst: mat << 31,
            }])
            .expect("one axis"),
            ..Shape::batched(e1 << 31, rows, cols)
        };
        let g = plain.spec().geometry;
        for q in [Quotients::Items, Quotients::Wide] {
            assert!(kernel_refusal(&g, q, &huge).is_some(), "{q:?}");
        }
        assert!(kernel_refusal(&g, Quotients::Any, &huge).is_none());
        for wide in [Quotients::Items, Quotients::Wide, Quotients::Any]
            .into_iter()
            .flat_map(|q| {
                orders(
                    plain
                        .with_quotients(q)
                        .expect("a small kernel has wide twins"),
                )
            })
        {
            check(&wide, &shape, None);
            let src = noise(shape.src_elems().expect("valid") as usize * e as usize, 3);
            for index32 in [false, true] {
                let mut got = vec![0u8; src.len()];
                let mut want = got.clone();
                sim::reference(&shape, e as usize, &src, &mut want).expect("reference");
                sim::run_as(&wide, &shape, &src, &mut got, None, 0, index32).expect("runs");
                assert!(got == want, "{}: index32 {index32}", wide.entry_name());
            }
        }
    }
    // Matrices past the plain kernel's 16384 elements: one column of 65537 rows
    // (a permute's gather; a 32-bit quotient by 65537 is off at 65536), batched, the
    // source rows 3 apart.
    for e in [1, 2, 8] {
        let plain = Kernel::build(TransposeSpec::small(e).expect("valid")).expect("builds");
        let items = plain.with_quotients(Quotients::Items).expect("a twin");
        let shape = Shape {
            src_ld: 3,
            src_batch_stride: 1,
            ..Shape::batched(3, 65537, 1)
        };
        refuses(&plain, &shape);
        refuses(&items, &shape);
        for wide in [Quotients::Wide, Quotients::Any]
            .into_iter()
            .flat_map(|q| orders(plain.with_quotients(q).expect("a twin")))
        {
            check(&wide, &shape, None);
            check(&wide, &shape, Some(Grid { x: 2, y: 1 }));
        }
        // A column within a chunk of 2^31 elements: its positions plus a chunk
        // would need the exact quotients' 33rd bit, so only the 64-bit twin takes it.
        let g = plain.spec().geometry;
        for (rows, exact) in [((1 << 31) - (1 << 14), true), ((1 << 31) - 1, false)] {
            let long = Shape {
                src_ld: 3,
                src_batch_stride: 1,
                ..Shape::batched(1, rows, 1)
            };
            let wide = kernel_refusal(&g, Quotients::Wide, &long);
            assert_eq!(wide.is_none(), exact, "{rows} rows: {wide:?}");
            assert!(kernel_refusal(&g, Quotients::Any, &long).is_none());
        }
    }
    let tile =
        Kernel::build(TransposeSpec::new(32, 4, Strategy::Xor).expect("valid")).expect("builds");
    assert!(tile.with_quotients(Quotients::Items).is_err());
    assert!(tile.with_quotients(Quotients::Narrow).is_ok());
}
