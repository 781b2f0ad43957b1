//! The simulator runs every spec of the grid on many shapes; its output must equal a
//! plain CPU transpose, byte for byte, with bytes outside the destination untouched.

mod common;

use common::cover::{check, check_dst_at, refuses, scaled, small_shapes};
use common::noise;

use bankfree_gen::check::fit::refusal;
use bankfree_gen::check::index32::proven;
use bankfree_gen::check::sim::{self, Grid, SimError};
use bankfree_gen::ir::expr::{Env, Var};
use bankfree_gen::kernel::grid::{grid, ALL_STRATEGIES};
use bankfree_gen::kernel::moves::Mem;
use bankfree_gen::{Form, Kernel, Shape, Strategy, TransposeSpec};

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
                check_dst_at(&kernel, shape, None, off);
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
