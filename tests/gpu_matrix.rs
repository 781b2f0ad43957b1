//! The GPU test matrix: every strategy x tile x vec x element size {1, 2, 4, 8, 12, 16} x
//! shapes {1x1, 1x7, 7x1, 31x33, 1920x1080, 8191x8193, 2^21x3, 3x2^21}, plus batched,
//! pitched (with gaps) and offset-view cases; and the skew, tall and wide kernels on
//! the same shapes and on narrow ones (sides 1 to 32, batched, pitched, offset), the
//! planar kernels on rows in blocks of 16 bytes, the interleave kernels on
//! columns in blocks of 16 bytes, the realign kernels on odd sides,
//! pitches and views, and on a matrix wide enough that they take its tiles down
//! the columns. Random inputs, the output poisoned before every run, every
//! element of the destination buffer compared bit-exact. Run on a GPU with
//! `--include-ignored` (`BANKFREE_MATRIX_ONLY=_tall,_wide` runs the kernels whose
//! entry names contain one of those parts, with the rest of the list;
//! `BANKFREE_MATRIX_SHAPES=odd,offset` the shapes whose names contain one of them;
//! `BANKFREE_MATRIX_SIZES=12,16` the element sizes of those bytes).

mod common;

use bankfree::cudarc::driver::{CudaContext, CudaStream, DeviceRepr, ValidAsZeroBits};
use bankfree::gen::check::fit::refusal;
use bankfree::gen::kernel::geometry::{allowed_vecs, TILES};
use bankfree::gen::kernel::grid::ALL_STRATEGIES;
use bankfree::gen::Form;
use bankfree::gen::SpecError;
use bankfree::gen::{check::sim::transpose_elems, Kernel, Shape, Strategy, TransposeSpec};
use bankfree::runtime::{transpose, transpose_first, Error, KernelSource};
use common::F3;
use std::sync::Arc;

fn shapes() -> Vec<(&'static str, Shape, usize)> {
    // (name, shape, element offset of the views into src and dst)
    vec![
        ("1x1", Shape::new(1, 1), 0),
        ("1x7", Shape::new(1, 7), 0),
        ("7x1", Shape::new(7, 1), 0),
        ("31x33", Shape::new(31, 33), 0),
        ("1920x1080", Shape::new(1920, 1080), 0),
        ("8191x8193", Shape::new(8191, 8193), 0),
        ("2^21x3", Shape::new(1 << 21, 3), 0),
        ("3x2^21", Shape::new(3, 1 << 21), 0),
        ("batch 5 of 37x41", Shape::batched(5, 37, 41), 0),
        (
            "pitched batch with gaps",
            Shape {
                src_ld: 75,
                dst_ld: 50,
                src_batch_stride: 45 * 75 + 11,
                dst_batch_stride: 70 * 50 + 7,
                ..Shape::batched(3, 45, 70)
            },
            0,
        ),
        ("offset views 33x65", Shape::new(33, 65), 13),
        // For the vec kernels: shapes they fit, and an offset that leaves some of them
        // unaligned (those fall back to a vec = 1 kernel).
        ("batch 4 of 36x44", Shape::batched(4, 36, 44), 0),
        (
            "pitched batch with gaps, multiples of 4",
            Shape {
                src_ld: 76,
                dst_ld: 52,
                src_batch_stride: 44 * 76 + 12,
                dst_batch_stride: 68 * 52 + 8,
                ..Shape::batched(3, 44, 68)
            },
            0,
        ),
        ("offset views 32x64", Shape::new(32, 64), 2),
        // For the tall and wide kernels: narrow sides 1 to 32, batches, a pitched
        // strided side, chunks that end inside the matrix, offset views.
        ("100000x1", Shape::new(100_000, 1), 0),
        ("1x100000", Shape::new(1, 100_000), 0),
        ("9000x32", Shape::new(9000, 32), 0),
        ("32x9000", Shape::new(32, 9000), 0),
        ("batch 3 of 1000x7", Shape::batched(3, 1000, 7), 0),
        ("batch 3 of 7x1000", Shape::batched(3, 7, 1000), 0),
        (
            "tall, pitched dst",
            Shape {
                dst_ld: 5003,
                dst_batch_stride: 6 * 5003 + 5,
                ..Shape::batched(2, 5000, 6)
            },
            0,
        ),
        (
            "wide, pitched src",
            Shape {
                src_ld: 5001,
                src_batch_stride: 6 * 5001 + 3,
                ..Shape::batched(2, 6, 5000)
            },
            0,
        ),
        ("offset views 3000x5", Shape::new(3000, 5), 3),
        // Odd lengths, so 1- and 2-byte tall kernels shift each destination row's
        // window; a batch whose source stride is off the word for 1 byte; views whose
        // source stays word-aligned while the destination does not.
        ("12345x17", Shape::new(12_345, 17), 0),
        ("batch 2 of 4001x6", Shape::batched(2, 4001, 6), 0),
        ("offset views 2001x3", Shape::new(2001, 3), 4),
        // Odd and even widths over several runs of a thin kernel's rows, a
        // pitched destination, a batch, and views off every boundary.
        ("100003x31", Shape::new(100_003, 31), 0),
        ("70001x32", Shape::new(70_001, 32), 0),
        // The thin kernel's widest sources, at pointer phases off the vector.
        ("offset views 20001x37", Shape::new(20_001, 37), 3),
        ("offset views 30001x40", Shape::new(30_001, 40), 6),
        ("offset views 20001x10", Shape::new(20_001, 10), 5),
        (
            "pitched 7001x9",
            Shape {
                dst_ld: 7005,
                ..Shape::new(7001, 9)
            },
            0,
        ),
        ("batch 3 of 2999x13", Shape::batched(3, 2999, 13), 0),
        ("offset views 30001x21", Shape::new(30_001, 21), 7),
        // Widths whose tiles stage several sub-tiles (2 to 4 columns).
        ("1000003x2", Shape::new(1_000_003, 2), 0),
        (
            "pitched 30001x2",
            Shape {
                dst_ld: 30_011,
                ..Shape::new(30_001, 2)
            },
            0,
        ),
        ("offset views 40001x3", Shape::new(40_001, 3), 5),
        ("batch 3 of 9001x4", Shape::batched(3, 9001, 4), 0),
        // The same for the squat kernels: heights over several runs of a tile's
        // columns, a pitched source, a batch, and views off every boundary.
        ("31x100003", Shape::new(31, 100_003), 0),
        ("32x70001", Shape::new(32, 70_001), 0),
        ("offset views 10x20001", Shape::new(10, 20_001), 5),
        (
            "pitched 9x7001",
            Shape {
                src_ld: 7005,
                ..Shape::new(9, 7001)
            },
            0,
        ),
        ("batch 3 of 13x2999", Shape::batched(3, 13, 2999), 0),
        ("offset views 21x30001", Shape::new(21, 30_001), 7),
        // Rows on word boundaries (funnel shifts of 0 and of a whole word): a
        // batch, and views off a vector's boundary but on a word's.
        ("batch 3 of 5x40000", Shape::batched(3, 5, 40_000), 0),
        ("offset views 3x60004", Shape::new(3, 60_004), 4),
        // For the small kernels: tiny and small matrices in long batches (runs whose
        // last vector is partly outside), and offset views that leave the vector
        // stores unaligned (those fall back to the tile kernel).
        ("batch 100003 of 3x3", Shape::batched(100_003, 3, 3), 0),
        ("batch 5001 of 2x25", Shape::batched(5001, 2, 25), 0),
        ("batch 777 of 25x2", Shape::batched(777, 25, 2), 0),
        ("batch 131 of 63x61", Shape::batched(131, 63, 61), 0),
        (
            "offset views batch 999 of 5x7",
            Shape::batched(999, 5, 7),
            3,
        ),
        // For the strip kernels: a few rows, one of them pitched, an offset view.
        ("2x1000003", Shape::new(2, 1_000_003), 0),
        (
            "pitched src 13x5000",
            Shape {
                src_ld: 5003,
                ..Shape::new(13, 5000)
            },
            0,
        ),
        ("offset views 5x3001", Shape::new(5, 3001), 3),
        // Batches of them: matrices back to back (each destination run starting
        // at its own phase against the vector), and with gaps on both sides.
        ("batch 5 of 2x40001", Shape::batched(5, 2, 40_001), 0),
        (
            "batch 3 of 7x9000, gaps",
            Shape {
                src_ld: 9001,
                src_batch_stride: 7 * 9001 + 5,
                dst_batch_stride: 7 * 9000 + 3,
                ..Shape::batched(3, 7, 9000)
            },
            1,
        ),
        // For the planar kernels: rows in blocks of 16 bytes, 1 to 8 columns, a
        // batch with gaps and a pitched destination, an aligned offset view.
        ("65536x3", Shape::new(65_536, 3), 0),
        ("2^20x1", Shape::new(1 << 20, 1), 0),
        ("offset views 8192x8", Shape::new(8192, 8), 16),
        (
            "batch 3 of 4096x5, gaps, pitched dst",
            Shape {
                src_batch_stride: 4096 * 5 + 32,
                dst_ld: 4112,
                dst_batch_stride: 5 * 4112 + 16,
                ..Shape::batched(3, 4096, 5)
            },
            0,
        ),
        // For the interleave kernels: columns in blocks of 16 bytes, 1 to 8
        // rows, a batch with gaps and a pitched source, an aligned offset view.
        ("3x65536", Shape::new(3, 65_536), 0),
        ("offset views 8x8192", Shape::new(8, 8192), 16),
        (
            "batch 3 of 5x4096, gaps, pitched src",
            Shape {
                src_ld: 4112,
                src_batch_stride: 5 * 4112 + 16,
                dst_batch_stride: 4096 * 5 + 32,
                ..Shape::batched(3, 5, 4096)
            },
            0,
        ),
        // Odd sides, for every element size; for the realign kernels also odd
        // views (every source phase in a vector across the rows), a pitched
        // batch with gaps, and a batch of matrices smaller than their tile.
        ("1001x999", Shape::new(1001, 999), 0),
        ("offset views odd 515x1029", Shape::new(515, 1029), 7),
        (
            "odd pitched batch with gaps",
            Shape {
                src_ld: 301,
                dst_ld: 263,
                src_batch_stride: 259 * 301 + 5,
                dst_batch_stride: 299 * 263 + 3,
                ..Shape::batched(3, 259, 299)
            },
            1,
        ),
        ("batch 9 of 67x45", Shape::batched(9, 67, 45), 0),
        // 1-byte realign kernels run long sources of 33 to 511 columns too;
        // with many tiles across, they take them down the columns.
        ("offset views odd 3001x67", Shape::new(3001, 67), 5),
        ("offset views odd 37x8999", Shape::new(37, 8999), 3),
        // Rows that end a little before a multiple of the realign tile: its last
        // row of tiles moves their last positions element by element (so do
        // 1001x999 for 1-byte and 515x1029 for 2-byte elements).
        ("offset views odd 250x1031", Shape::new(250, 1031), 5),
        (
            "odd pitched batch with gaps 250x1031",
            Shape {
                src_ld: 1033,
                dst_ld: 253,
                src_batch_stride: 250 * 1033 + 7,
                dst_batch_stride: 1031 * 253 + 5,
                ..Shape::batched(2, 250, 1031)
            },
            1,
        ),
        // Thin calls of fewer tiles than the GPU holds run the kernel that
        // splits its column words between two warps (1-byte from 21 columns,
        // 2-byte from 19): an odd number of column steps (the second half's
        // last past the width), a pitched destination, offset views, a batch.
        (
            "offset views odd thin 5003x25",
            Shape {
                dst_ld: 5007,
                ..Shape::new(5003, 25)
            },
            3,
        ),
        (
            "odd thin batch with gaps 3x2001x23",
            Shape {
                src_batch_stride: 2001 * 23 + 9,
                dst_batch_stride: 23 * 2001 + 4,
                ..Shape::batched(3, 2001, 23)
            },
            0,
        ),
    ]
}

fn noise<T>(n: usize, seed: u64, make: &impl Fn(u64) -> T) -> Vec<T> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            make(x)
        })
        .collect()
}

/// Runs every buildable (strategy, tile) kernel for one element type over every shape.
fn size_class<T>(s: &Arc<CudaStream>, make: impl Fn(u64) -> T) -> (usize, usize)
where
    T: DeviceRepr + ValidAsZeroBits + Copy + PartialEq + std::fmt::Debug,
{
    let e = std::mem::size_of::<T>() as u32;
    // `BANKFREE_MATRIX_SIZES=12,16` keeps those element sizes (to finish a run
    // that a time limit cut short).
    if let Ok(sizes) = std::env::var("BANKFREE_MATRIX_SIZES") {
        if !sizes.split(',').any(|p| p.trim() == e.to_string()) {
            return (0, 0);
        }
    }
    let mut kernels = Vec::new();
    let mut refused = 0;
    for tile in TILES {
        for strategy in ALL_STRATEGIES {
            for vec in allowed_vecs(e) {
                if vec > 1 && strategy == Strategy::Naive {
                    continue;
                }
                let spec = TransposeSpec::new(tile, e, strategy).and_then(|s| s.with_vec(vec));
                match spec.and_then(Kernel::build) {
                    Ok(k) => kernels.push(KernelSource::from_kernel(&k)),
                    // What the attribute refuses at compile time cannot be launched.
                    Err(SpecError::NoPad { .. } | SpecError::SharedTooLarge { .. }) => refused += 1,
                    Err(other) => panic!("{tile} {strategy} {e} vec {vec}: {other}"),
                }
            }
        }
    }
    // The other forms: skew at tiles 32 and 64, tall and wide chunks, small runs.
    for (form, tiles) in [
        (Form::Skew, &[32, 64][..]),
        (Form::Tall, &[32]),
        (Form::Wide, &[32]),
        (Form::Small, &[32]),
        (Form::Strip, &[32]),
        (Form::Planar, &[32]),
        (Form::Interleave, &[32]),
        (Form::Realign, &[32]),
        (Form::Thin, &[32]),
        (Form::Squat, &[32]),
    ] {
        for &tile in tiles {
            for strategy in ALL_STRATEGIES {
                let spec = TransposeSpec::new(tile, e, strategy).and_then(|s| s.with_form(form));
                match spec.and_then(Kernel::build) {
                    Ok(k) => kernels.push(KernelSource::from_kernel(&k)),
                    Err(SpecError::Form { .. }) => {} // not offered for this size or strategy
                    Err(SpecError::NoPad { .. } | SpecError::SharedTooLarge { .. }) => refused += 1,
                    Err(other) => panic!("{form} {tile} {strategy} {e}: {other}"),
                }
            }
        }
    }
    // `BANKFREE_MATRIX_ONLY=_tall,_wide` keeps the kernels whose entry contains one
    // of the comma-separated parts (to rerun the kernels a change touched).
    if let Ok(only) = std::env::var("BANKFREE_MATRIX_ONLY") {
        kernels.retain(|k| only.split(',').any(|p| k.entry().contains(p)));
    }
    let scalar = TransposeSpec::new(32, e, Strategy::Pad(None))
        .and_then(Kernel::build)
        .map(|k| KernelSource::from_kernel(&k))
        .expect("pad builds");
    let mut runs = 0;
    let mut unfit = 0;
    // `BANKFREE_MATRIX_SHAPES=odd,offset` keeps the shapes whose names contain
    // one of the parts (the sanitizers run a few).
    let keep = std::env::var("BANKFREE_MATRIX_SHAPES").ok();
    let shapes = shapes().into_iter().filter(|(name, _, _)| {
        keep.as_ref()
            .is_none_or(|k| k.split(',').any(|p| name.contains(p)))
    });
    for (name, shape, off) in shapes {
        let (ns, nd) = (
            shape.src_elems().expect("shape") as usize + off,
            shape.dst_elems().expect("shape") as usize + off,
        );
        let host = noise(ns, 0x9E37_79B9 ^ ns as u64, &make);
        let poison = noise(nd, 0x51ED_2701 ^ nd as u64, &make);
        let mut want = poison.clone();
        transpose_elems(&shape, &host[off..], &mut want[off..]).expect("reference");
        let src = s.clone_htod(&host).expect("upload");
        let poison_d = s.clone_htod(&poison).expect("upload");
        let mut dst = s.alloc_zeros::<T>(nd).expect("alloc");
        for k in &kernels {
            s.memcpy_dtod(&poison_d, &mut dst).expect("poison");
            // A vec, tall or wide kernel goes first with a vec = 1 tile kernel after
            // it, as the attribute has it; where it cannot run the call, it must say
            // so when asked alone.
            let list = [k.clone(), scalar.clone()];
            let alone =
                k.geometry().vec == 1 && matches!(k.geometry().form, Form::Tile | Form::Skew);
            let list = if alone { &list[..1] } else { &list[..] };
            if off == 0 {
                if refusal(k.geometry(), &shape).is_some() {
                    let alone = transpose(k, &src, &mut dst, &shape, None);
                    assert!(
                        matches!(alone, Err(Error::Unfit { .. })),
                        "{} on {name}: {alone:?}",
                        k.entry()
                    );
                    unfit += 1;
                }
                transpose_first(list, &src, &mut dst, &shape, None)
            } else {
                transpose_first(
                    list,
                    &src.slice(off..),
                    &mut dst.slice_mut(off..),
                    &shape,
                    None,
                )
            }
            .unwrap_or_else(|err| panic!("{} on {name}: {err}", k.entry()));
            let got = s.clone_dtoh(&dst).expect("download");
            assert!(got == want, "{} on {name}: wrong result", k.entry());
            runs += 1;
            // The 64-bit build (what calls of 2^32 units and more run) of the tile-32
            // kernels, on the same call.
            if off == 0 && k.geometry().tile == 32 && refusal(k.geometry(), &shape).is_none() {
                s.memcpy_dtod(&poison_d, &mut dst).expect("poison");
                let wide = k.index64();
                transpose(wide, &src, &mut dst, &shape, None)
                    .unwrap_or_else(|err| panic!("{} on {name}: {err}", wide.entry()));
                let got = s.clone_dtoh(&dst).expect("download");
                assert!(got == want, "{} on {name}: wrong result", wide.entry());
                runs += 1;
            }
        }
    }
    println!("{e}-byte: {runs} runs; vec kernels refused {unfit} unfit calls alone");
    (runs, refused)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_strategy_tile_size_and_shape() {
    let s = CudaContext::new(0).expect("GPU 0").default_stream();
    let mut total = (0, 0);
    let mut add = |(r, f): (usize, usize)| {
        total.0 += r;
        total.1 += f;
    };
    add(size_class(&s, |x| x as u8));
    add(size_class(&s, |x| x as u16));
    add(size_class(&s, |x| x as u32));
    add(size_class(&s, |x| x));
    add(size_class(&s, |x| {
        F3([x as u32, (x >> 21) as u32, (x >> 42) as u32])
    }));
    add(size_class(&s, |x| {
        u128::from(x) << 64 | u128::from(x.rotate_left(17))
    }));
    println!(
        "matrix: {} runs, all bit-exact; {} (strategy, tile, size) specs refused by the generator",
        total.0, total.1
    );
}
