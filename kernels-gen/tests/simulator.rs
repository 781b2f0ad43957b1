//! The simulator runs every spec of the grid on many shapes; its output must equal a
//! plain CPU transpose, byte for byte, with bytes outside the destination untouched.

mod common;

use common::noise;

use bankfree_gen::check::fit::{kernel_refusal, refusal};
use bankfree_gen::check::index32::proven;
use bankfree_gen::check::sim::{self, Grid, SimError};
use bankfree_gen::ir::expr::{Env, Var};
use bankfree_gen::ir::shape::{Axis, Outer};
use bankfree_gen::kernel::geometry::Quotients;
use bankfree_gen::kernel::grid::{grid, ALL_STRATEGIES};
use bankfree_gen::kernel::moves::Mem;
use bankfree_gen::kernel::order::TileOrder;
use bankfree_gen::{Form, Kernel, Shape, Strategy, TransposeSpec};

fn check(kernel: &Kernel, shape: &Shape, grid: Option<Grid>) {
    check_at(kernel, shape, grid, 0);
}

fn check_at(kernel: &Kernel, shape: &Shape, grid: Option<Grid>, dst_off: u64) {
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
fn refuses(kernel: &Kernel, shape: &Shape) {
    let e = kernel.spec().geometry.elem_bytes as usize;
    let n = shape.src_elems().expect("valid shape") as usize * e;
    let m = shape.dst_elems().expect("valid shape") as usize * e;
    let got = sim::run(kernel, shape, &vec![0; n], &mut vec![0; m], None);
    assert!(matches!(got, Err(SimError::Unfit(_))), "{shape:?}: {got:?}");
}

fn small_shapes() -> Vec<Shape> {
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
fn scaled(shape: &Shape, v: u32) -> Shape {
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

fn grid_for_tile(tile: u32) {
    let mut strategies = ALL_STRATEGIES.to_vec();
    strategies.push(Strategy::Pad(Some(3)));
    let shapes = small_shapes();
    let mut ran = 0;
    for spec in grid(&strategies)
        .into_iter()
        .filter(|s| s.geometry.tile == tile && s.geometry.form == Form::Tile)
    {
        // Specs the generator refuses (too much shared memory, no conflict-free
        // padding) are covered by the analyzer tests.
        let Ok(kernel) = Kernel::build(spec) else {
            continue;
        };
        if spec.geometry.vec > 1 {
            // The same shapes in blocks of vec x vec; one that does not divide is refused.
            for shape in &shapes {
                check(&kernel, &scaled(shape, spec.geometry.vec), None);
            }
            let odd = Shape::new(
                u64::from(spec.geometry.vec) + 1,
                u64::from(spec.geometry.vec),
            );
            refuses(&kernel, &odd);
        } else {
            for shape in &shapes {
                check(&kernel, shape, None);
            }
        }
        ran += 1;
    }
    assert!(ran > 100, "tile {tile}: only {ran} specs ran");
}

#[test]
fn grid_tile_8() {
    grid_for_tile(8);
}

#[test]
fn grid_tile_16() {
    grid_for_tile(16);
}

#[test]
fn grid_tile_32() {
    grid_for_tile(32);
}

#[test]
fn grid_tile_64() {
    grid_for_tile(64);
}

/// Every skew spec of the grid on the small shapes and on pitched ones whose rows
/// start anywhere in a sector, at every destination offset in a sector.
#[test]
fn skew_tiles_cover_every_element_once() {
    let mut strategies = ALL_STRATEGIES.to_vec();
    strategies.push(Strategy::Pad(Some(3)));
    let mut shapes = small_shapes();
    shapes.push(Shape::new(70, 65));
    shapes.push(Shape {
        dst_ld: 101,
        dst_batch_stride: 101 * 45 + 3,
        ..Shape::batched(2, 99, 45)
    });
    let mut ran = 0;
    for spec in grid(&strategies)
        .into_iter()
        .filter(|s| s.geometry.form == Form::Skew)
    {
        let Ok(kernel) = Kernel::build(spec) else {
            continue;
        };
        // Every residue of the destination's address for the padded kernel the
        // attribute lists; the first and last for the other strategies (their
        // shift arithmetic is the same expression).
        let sector = u64::from(spec.geometry.sector_elems());
        let offsets: Vec<u64> = if spec.strategy == Strategy::Pad(None) {
            (0..sector).collect()
        } else {
            vec![0, sector - 1]
        };
        for off in offsets {
            for shape in &shapes {
                check_at(&kernel, shape, None, off);
            }
        }
        check(
            &kernel,
            &Shape::batched(3, 40, 70),
            Some(Grid { x: 3, y: 2 }),
        );
        ran += 1;
    }
    assert!(ran >= 30, "only {ran} skew specs ran");
}

#[test]
fn narrow_chunks_cover_every_element_once() {
    let strategies = [Strategy::None, Strategy::Pad(None), Strategy::Pad(Some(3))];
    let mut ran = 0;
    // Every element size with the padding the attribute's search picks; other
    // paddings (the same expressions with another literal) for a scalar and a
    // word-array size.
    for spec in grid(&strategies).into_iter().filter(|s| {
        matches!(s.geometry.form, Form::Tall | Form::Wide)
            && (s.strategy == Strategy::Pad(None) || matches!(s.geometry.elem_bytes, 4 | 12))
    }) {
        let Ok(kernel) = Kernel::build(spec) else {
            continue;
        };
        let tall = spec.geometry.form == Form::Tall;
        let chunk = u64::from(spec.geometry.chunk_elems());
        for n in [1, 2, 3, 6, 7, 8, 17, 24, 32] {
            // Long sides: one partial chunk, and a few chunks with a partial last one.
            for long in [1, 45, 3 * (chunk / n / 32 * 32) + 5] {
                let (rows, cols) = if tall { (long, n) } else { (n, long) };
                check(&kernel, &Shape::new(rows, cols), None);
            }
            // Batched, with a gap between matrices and a pitched strided side.
            let mut shape = Shape::batched(2, if tall { 70 } else { n }, if tall { n } else { 70 });
            if tall {
                shape.dst_ld = 73;
                shape.src_batch_stride += 5;
                shape.dst_batch_stride = 73 * n + 2;
            } else {
                shape.src_ld = 75;
                shape.src_batch_stride = 75 * n + 1;
                shape.dst_batch_stride += 4;
            }
            check(&kernel, &shape, Some(Grid { x: 1, y: 1 }));
            check(&kernel, &shape, None);
        }
        // Too wide a narrow side, and a flat side that is not one run: refused.
        let wide = if tall {
            Shape::new(4, 33)
        } else {
            Shape::new(33, 4)
        };
        let mut flat = if tall {
            Shape::new(4, 3)
        } else {
            Shape::new(3, 4)
        };
        if tall {
            flat.src_ld = 4;
            flat.src_batch_stride = 16;
        } else {
            flat.dst_ld = 4;
            flat.dst_batch_stride = 16;
        }
        for shape in [wide, flat] {
            refuses(&kernel, &shape);
        }
        ran += 1;
    }
    assert!(ran >= 30, "only {ran} narrow specs ran");
}

#[test]
fn images_of_many_tiles() {
    // Ragged on both sides, 9 x 16 tiles of 32: every interior and edge case of a
    // large image (the GPU matrix runs full-size images on the device).
    let image = Shape::new(270, 481);
    // Divisible by 2 and 4 for the vector kernels, ragged against their tiles.
    let vec_image = Shape::new(268, 484);
    for strategy in [
        Strategy::Naive,
        Strategy::None,
        Strategy::Pad(None),
        Strategy::Xor,
        Strategy::Rotate,
    ] {
        for e in [1, 4, 12] {
            let k =
                Kernel::build(TransposeSpec::new(32, e, strategy).expect("valid")).expect("builds");
            check(&k, &image, None);
        }
        if strategy != Strategy::Naive {
            for (e, v) in [(1, 4), (2, 2), (4, 2)] {
                let spec = TransposeSpec::new(32, e, strategy).and_then(|s| s.with_vec(v));
                let k = Kernel::build(spec.expect("valid")).expect("builds");
                check(&k, &vec_image, None);
            }
        }
    }
    let k =
        Kernel::build(TransposeSpec::new(64, 2, Strategy::Xor).expect("valid")).expect("builds");
    check(&k, &Shape::new(481, 270), None);
}

#[test]
fn grid_stride_loops_cover_every_tile_and_batch() {
    // Fewer blocks than tiles and batches, as past 2^31 - 1 tiles or 65,535 batches.
    let k =
        Kernel::build(TransposeSpec::new(16, 4, Strategy::Xor).expect("valid")).expect("builds");
    for grid in [
        Grid { x: 1, y: 1 },
        Grid { x: 3, y: 2 },
        Grid { x: 100, y: 100 },
    ] {
        check(&k, &Shape::batched(5, 40, 70), Some(grid));
    }
    let mut dst = vec![0u8; 16];
    assert!(matches!(
        sim::run(
            &k,
            &Shape::new(2, 2),
            &[0; 16],
            &mut dst,
            Some(Grid { x: 0, y: 1 })
        ),
        Err(SimError::EmptyGrid(_))
    ));
}

#[test]
fn bad_buffers_are_errors_not_panics() {
    let k =
        Kernel::build(TransposeSpec::new(32, 4, Strategy::Xor).expect("valid")).expect("builds");
    let mut dst = vec![0u8; 4 * 12];
    let e = sim::run(&k, &Shape::new(3, 4), &[0; 4 * 11], &mut dst, None).unwrap_err();
    assert!(e.to_string().starts_with("src holds 11 elements"), "{e}");
    let e = sim::run(&k, &Shape::new(3, 4), &[0; 48], &mut dst[..44], None).unwrap_err();
    assert!(e.to_string().starts_with("dst holds 11 elements"), "{e}");
}

#[test]
fn indices_are_64_bit() {
    // The last element of a 3 x (2^31 + 5) matrix lies past 2^32: the expressions
    // must compute it exactly: the launcher runs the 64-bit build (every index
    // `unsigned long long`) for such a call, as its 32-bit arithmetic would wrap.
    let k =
        Kernel::build(TransposeSpec::new(32, 2, Strategy::Xor).expect("valid")).expect("builds");
    let (rows, cols) = (3i64, (1i64 << 31) + 5);
    let mut env = Env::default();
    env.set(Var::Rows, rows);
    env.set(Var::Cols, cols);
    env.set(Var::SrcLd, cols);
    env.set(Var::DstLd, rows);
    let tiles_x = (cols + 31) / 32;
    // Thread (tx, ty) = (4, 2) in the last tile column, j = 0: source (2, cols - 1).
    env.set(Var::Tile, tiles_x - 1);
    env.set(Var::Tx, (cols - 1) % 32);
    env.set(Var::Ty, 2);
    let load = &k.moves()[0];
    assert!(load.guard.eval(&env).expect("evaluates"));
    assert_eq!(load.from.index.eval(&env), Ok(2 * cols + cols - 1));
    assert_eq!(load.from.mem, Mem::Src);
    // The store phase writes destination (cols - 1, 2) = (cols - 1) * rows + 2.
    env.set(Var::Ty, (cols - 1) % 32);
    env.set(Var::Tx, 2);
    let store = &k.moves()[1];
    assert!(store.guard.eval(&env).expect("evaluates"));
    assert_eq!(store.to.index.eval(&env), Ok((cols - 1) * rows + 2));
    let shape = Shape::new(rows as u64, cols as u64);
    assert!(!proven(&k.spec().geometry, &shape));
    env.index32 = true;
    assert_ne!(store.to.index.eval(&env), Ok((cols - 1) * rows + 2));
    // Below 2^32 elements the 32-bit build runs.
    assert!(proven(&k.spec().geometry, &Shape::new(3, 1 << 30)));
    let c = bankfree_gen::emit(&k);
    assert!(c.contains("typedef unsigned long long bf_index;"));
    assert!(c.contains("const bf_index out_row = "));
    assert!(!c.contains(" int "), "no 32-bit signed index math");
}

#[test]
fn both_index_builds_agree_with_the_reference() {
    // Where the launcher may run the 32-bit build, the simulator runs it (every
    // test above); here both builds run the same calls and must both be exact. The
    // skew kernels' pointer address is past 2^32 and enters the 32-bit build
    // truncated.
    let shapes = [
        Shape::new(31, 33),
        Shape::new(200, 3),
        Shape::new(3, 200),
        Shape {
            src_ld: 70,
            dst_ld: 50,
            ..Shape::batched(2, 45, 41)
        },
    ];
    for form in [Form::Tile, Form::Skew, Form::Tall, Form::Wide] {
        for e in [1, 2, 4, 8, 12, 16] {
            let Ok(spec) =
                TransposeSpec::new(32, e, Strategy::Pad(None)).and_then(|s| s.with_form(form))
            else {
                continue;
            };
            let k = Kernel::build(spec).expect("builds");
            for shape in shapes
                .iter()
                .filter(|s| refusal(&spec.geometry, s).is_none())
            {
                let shape = Shape {
                    src_batch_stride: shape.src_ld * shape.rows + 7,
                    dst_batch_stride: shape.dst_ld * shape.cols + 5,
                    ..*shape
                };
                assert!(proven(&spec.geometry, &shape), "{shape:?}");
                let e = e as usize;
                let src = noise(shape.src_elems().expect("valid") as usize * e, 3);
                let mut want = noise(shape.dst_elems().expect("valid") as usize * e, 4);
                let mut got = [want.clone(), want.clone()];
                sim::reference(&shape, e, &src, &mut want).expect("reference");
                for (out, index32) in got.iter_mut().zip([false, true]) {
                    let off = (1u64 << 40) + 3;
                    if let Err(err) = sim::run_as(&k, &shape, &src, out, None, off, index32) {
                        panic!("{} on {shape:?} (32-bit {index32}): {err}", k.entry_name());
                    }
                    assert!(
                        *out == want,
                        "{} on {shape:?} (32-bit {index32})",
                        k.entry_name()
                    );
                }
            }
        }
    }
}

#[test]
fn small_kernels_cover_every_element_once() {
    let mut ran = 0;
    // Every vector width, the 16-byte element and two word arrays.
    for e in [1, 2, 4, 8, 12, 16, 36] {
        let spec = TransposeSpec::small(e).expect("every element size has a small kernel");
        let kernel = Kernel::build(spec).expect("builds");
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
    assert!(ran >= 7 * 7 * 4, "only {ran} shapes");
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
                check_at(&kernel, &shape, None, dst_off);
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
        for q in [Quotients::Items, Quotients::Wide, Quotients::Any] {
            let wide = plain
                .with_quotients(q)
                .expect("a small kernel has wide twins");
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
        for q in [Quotients::Wide, Quotients::Any] {
            let wide = plain.with_quotients(q).expect("a twin");
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
                check_at(&kernel, &off, None, dst_off);
                check_at(&k, &outer, Some(Grid { x: 2, y: 1 }), dst_off);
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
                    check_at(&kernel, &Shape::new(long, n), None, dst_off);
                }
                ran += 1;
            }
            check_at(&kernel, &Shape::new(2 * chunk + 5, n), None, n % v);
            ran += 1;
            // Batched (source matrices on words), a gap between matrices, and
            // odd destination pitches and strides.
            let mut shape = Shape::batched(2, 301, n);
            shape.src_batch_stride = (shape.src_batch_stride + 5).next_multiple_of(v);
            shape.dst_ld = 310;
            shape.dst_batch_stride = 310 * n + 3;
            check_at(&kernel, &shape, Some(Grid { x: 1, y: 2 }), 1);
            check_at(&kernel, &shape, None, v - 1);
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
            let outer = Kernel::build(spec)
                .and_then(|k| k.with_outer(1))
                .expect("outer axes");
            let mut s = Shape {
                outer: bankfree_gen::ir::shape::Outer::new(&[bankfree_gen::ir::shape::Axis {
                    ext: 2,
                    src: 3 * shape.src_batch_stride,
                    dst: 3 * shape.dst_batch_stride,
                }])
                .expect("one axis"),
                ..shape
            };
            s.batch = 6;
            check(&outer, &s, None);
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
                check_at(&kernel, shape, None, 0);
                check_at(&kernel, shape, None, sector - 1);
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
