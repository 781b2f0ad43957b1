//! The benchmark: for each element size and shape, in one process, cudaMemcpy
//! device-to-device of the same bytes, every strategy, and cuBLAS `geam` (f32, f64).
//! Every implementation's output is checked against a CPU transpose first. Then all
//! of a case are timed interleaved with the copy: 30 rounds, each timing 10
//! back-to-back calls of every implementation in turn between two CUDA events (so
//! launch latency overlaps the previous call, as in a pipeline, and clock drift
//! hits all alike); a row is the median per call. Inputs are rotated among enough
//! buffers to exceed the L2 cache. The autotuned rows are timed after `autotune`,
//! against the copy again. Prints a table (ratio = memcpy time / time) and writes
//! JSON.
//!
//! `cargo run --release --example bench [-- --json bench.json] [--sweep] [--case TEXT]...`
//! (`--case` keeps only the cases whose name contains TEXT: `--case f32 --case u8`).
//!
//! `... --example bench -- --random N --seed S [--shapes shapes.json]` instead draws N
//! shapes per class (both sides >= 64, one side <= 32, batches of small matrices;
//! 1- to 16-byte elements, 8 to 64 MB each), times the attribute's defaults against
//! the copy on each, and prints every case's ratio and each class's median and
//! worst against its target. `--shapes` writes the drawn cases as JSON for
//! `scripts/gpu/peers.py --shapes`; `--alternatives` also times each kernel of the
//! attribute's list that fits a case alone, under the case's line; `--ladder`
//! (with or without `--random`) replaces the draw with batches of growing matrices
//! for every element size (what the planner's rule for the `small` form was
//! measured on). `--shape E:RxC` or `E:BxRxC` (repeatable, with or without
//! `--random`) runs the given cases of `E`-byte elements instead (1, 2, 4, 8,
//! 12 or 16 bytes, or a multiple of 4 from 20 to 64), the defaults only, as for
//! drawn cases:
//! `bench -- --shape 1:2694950x11 --shape 2:4096x32x48 --alternatives`.
#![allow(unsafe_code)] // element types of words (and cuBLAS `geam`, bench/geam.rs)

use bankfree::cudarc::driver::{CudaContext, DeviceRepr, ValidAsZeroBits};
use bankfree::gen::Shape;
use bankfree::runtime::probe;
use std::process::ExitCode;

#[path = "common/mod.rs"]
mod common;
#[path = "bench/draw.rs"]
mod draw;
#[path = "bench/geam.rs"]
mod geam;
use geam::Geam;
#[path = "bench/case.rs"]
mod case;
#[path = "bench/random.rs"]
mod random;
#[path = "bench/variants.rs"]
mod variants;
use case::case;

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Default)]
struct F3([u32; 3]);
// SAFETY: three u32, `repr(C)`, no padding; all-zero bits are a valid value.
unsafe impl DeviceRepr for F3 {}
// SAFETY: as above.
unsafe impl ValidAsZeroBits for F3 {}

/// An element of `N` 32-bit words, for `--shape` cases of 20 to 64 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Words<const N: usize>([u32; N]);
// SAFETY: `N` u32, `repr(C)`, no padding; all-zero bits are a valid value.
unsafe impl<const N: usize> DeviceRepr for Words<N> {}
// SAFETY: as above.
unsafe impl<const N: usize> ValidAsZeroBits for Words<N> {}

impl<const N: usize> Words<N> {
    /// The element `x` makes: each word a different slice of its bits.
    fn of(x: u64) -> Self {
        Words(std::array::from_fn(|i| (x >> (i % 40)) as u32 ^ i as u32))
    }
}

const L2_BYTES: usize = 50 << 20;
/// Rounds of interleaved timing, and back-to-back calls timed per round.
const ROUNDS: usize = 30;
const BATCH: usize = 10;

struct Row {
    case: String,
    what: String,
    ms: f64,
    gbs: f64,
    ratio: f64,
}

type Res<T> = Result<T, String>;

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// What to run: `--sweep`, the `--case` filters, and `--random N --seed S`.
struct Opts {
    sweep: bool,
    only: Vec<String>,
    /// Drawn cases: the attribute's defaults only, no variants, no tuning.
    random: Option<(usize, u64)>,
    /// With `--random`: also each kernel of the attribute's list that fits a case,
    /// timed alone (`--alternatives`), to see what the planner chose between.
    alternatives: bool,
    /// A fixed ladder of batched shapes instead of a draw (with or without `--random`).
    ladder: bool,
    /// `--shape` cases instead of a draw.
    given: Vec<draw::Case>,
}

impl Opts {
    fn wants(&self, case: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|o| case.contains(o.as_str()))
    }
}

fn run(json: Option<String>, opts: &Opts) -> Res<()> {
    let p = probe().map_err(err)?;
    let stream = CudaContext::new(0).map_err(err)?.default_stream();
    let geam = Geam::new(&stream);
    if geam.is_none() {
        eprintln!("cuBLAS not found: geam rows are left out (install the CUDA toolkit or `pip install nvidia-cublas`)");
    }
    let g = geam.as_ref();
    let mut rows = Vec::new();
    let sq = Shape::new(8192, 8192);
    case(
        opts,
        &stream,
        g,
        "8192x8192 1-byte",
        sq,
        |x| x as u8,
        &mut rows,
    )?;
    case(
        opts,
        &stream,
        g,
        "8192x8192 2-byte",
        sq,
        |x| x as u16,
        &mut rows,
    )?;
    case(
        opts,
        &stream,
        g,
        "8192x8192 f32",
        sq,
        |x| f32::from_bits(x as u32 & 0x3FFF_FFFF),
        &mut rows,
    )?;
    case(
        opts,
        &stream,
        g,
        "8192x8192 f64",
        sq,
        |x| f64::from_bits(x & 0x3FFF_FFFF_FFFF_FFFF),
        &mut rows,
    )?;
    case(
        opts,
        &stream,
        g,
        "8192x8192 12-byte",
        sq,
        |x| F3([x as u32, (x >> 20) as u32, (x >> 40) as u32]),
        &mut rows,
    )?;
    case(
        opts,
        &stream,
        g,
        "8192x8192 16-byte",
        sq,
        |x| u128::from(x) << 64 | u128::from(!x),
        &mut rows,
    )?;
    case(
        opts,
        &stream,
        g,
        "8191x8193 f32",
        Shape::new(8191, 8193),
        |x| f32::from_bits(x as u32 & 0x3FFF_FFFF),
        &mut rows,
    )?;
    case(
        opts,
        &stream,
        g,
        "4194304x3 f32",
        Shape::new(1 << 22, 3),
        |x| f32::from_bits(x as u32 & 0x3FFF_FFFF),
        &mut rows,
    )?;
    case(
        opts,
        &stream,
        g,
        "3x4194304 f32",
        Shape::new(3, 1 << 22),
        |x| f32::from_bits(x as u32 & 0x3FFF_FFFF),
        &mut rows,
    )?;
    case(
        opts,
        &stream,
        g,
        "64x512x512 f16",
        Shape::batched(64, 512, 512),
        |x| x as u16,
        &mut rows,
    )?;
    case(
        opts,
        &stream,
        g,
        "1080x1920 u8",
        Shape::new(1080, 1920),
        |x| x as u8,
        &mut rows,
    )?;
    case(
        opts,
        &stream,
        g,
        "8294400x3 u8",
        Shape::new(8_294_400, 3),
        |x| x as u8,
        &mut rows,
    )?;
    case(
        opts,
        &stream,
        g,
        "3x8294400 u8",
        Shape::new(3, 8_294_400),
        |x| x as u8,
        &mut rows,
    )?;
    case(
        opts,
        &stream,
        g,
        "4097x4095 u8",
        Shape::new(4097, 4095),
        |x| x as u8,
        &mut rows,
    )?;
    case(
        opts,
        &stream,
        g,
        "4095x4097 f16",
        Shape::new(4095, 4097),
        |x| x as u16,
        &mut rows,
    )?;

    println!("\n{}; per call: median of {ROUNDS} interleaved rounds of {BATCH} back-to-back calls, CUDA events; ratio = memcpy time / time", common::gpu_line(&p));
    println!(
        "{:<20} {:<32} {:>9} {:>8} {:>7}",
        "case", "implementation", "ms", "GB/s", "ratio"
    );
    for r in &rows {
        println!(
            "{:<20} {:<32} {:>9.4} {:>8.0} {:>7.3}",
            r.case, r.what, r.ms, r.gbs, r.ratio
        );
    }
    if let Some(path) = json {
        let items: Vec<String> = rows
            .iter()
            .map(|r| {
                format!(
                    "{{\"case\":\"{}\",\"impl\":\"{}\",\"ms\":{},\"gbps\":{},\"ratio\":{}}}",
                    r.case, r.what, r.ms, r.gbs, r.ratio
                )
            })
            .collect();
        let text = format!(
            "{{\"device\":\"{}\",\"rounds\":{ROUNDS},\"batch\":{BATCH},\"rows\":[{}]}}\n",
            p.device,
            items.join(",")
        );
        std::fs::write(&path, text).map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let json = args
        .iter()
        .position(|a| a == "--json")
        .and_then(|i| args.get(i + 1).cloned());
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let number = |flag: &str| -> Result<Option<u64>, String> {
        value(flag)
            .map(|v| {
                v.parse::<u64>()
                    .map_err(|_| format!("{flag} {v}: expected a whole number"))
            })
            .transpose()
    };
    let random = match (number("--random"), number("--seed")) {
        (Ok(Some(n)), Ok(seed)) if n > 0 => Some((n as usize, seed.unwrap_or(1))),
        (Ok(Some(_)), Ok(_)) => {
            eprintln!("--random N: N must be at least 1");
            return ExitCode::from(2);
        }
        (Ok(None), Ok(_)) => None,
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let given = match args
        .windows(2)
        .filter(|w| w[0] == "--shape")
        .map(|w| draw::parse(&w[1]))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(g) => g,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let opts = Opts {
        sweep: args.iter().any(|a| a == "--sweep"),
        only: args
            .windows(2)
            .filter(|w| w[0] == "--case")
            .map(|w| w[1].clone())
            .collect(),
        random,
        alternatives: args.iter().any(|a| a == "--alternatives"),
        ladder: args.iter().any(|a| a == "--ladder"),
        given,
    };
    // The ladder replaces the draw: it needs no `--random`.
    if let Err(e) = probe() {
        eprintln!("not run on a GPU: {e}");
        return ExitCode::from(2);
    }
    let drawn = opts.ladder || !opts.given.is_empty();
    let result = match (opts.random, drawn) {
        (Some((n, seed)), _) => random::run(&opts, n, seed, value("--shapes")),
        (None, true) => random::run(&opts, 1, 1, value("--shapes")),
        (None, false) => run(json, &opts),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
