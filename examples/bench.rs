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
//! `--random`) runs the given cases of `E`-byte elements instead, the defaults
//! only, as for drawn cases:
//! `bench -- --shape 1:2694950x11 --shape 2:4096x32x48 --alternatives`.
#![allow(unsafe_code)] // a 12-byte element type (and cuBLAS `geam`, bench/geam.rs)

use bankfree::cudarc::driver::{CudaContext, CudaSlice, CudaStream, DeviceRepr, ValidAsZeroBits};
use bankfree::gen::check::fit::refusal;
use bankfree::gen::select::choice::auto_kernels;
use bankfree::gen::{Kernel, Shape, Strategy, TransposeSpec};
use bankfree::runtime::{autotune, probe, transpose, transpose_first, KernelSource};
use std::process::ExitCode;
use std::sync::Arc;

#[path = "common/mod.rs"]
mod common;
use common::{cpu_transpose, interleaved_ms, noise};
#[path = "bench/draw.rs"]
mod draw;
#[path = "bench/geam.rs"]
mod geam;
use geam::Geam;
#[path = "bench/variants.rs"]
mod variants;
use variants::{alternatives, variants};
#[path = "bench/random.rs"]
mod random;

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Default)]
struct F3([u32; 3]);
// SAFETY: three u32, `repr(C)`, no padding; all-zero bits are a valid value.
unsafe impl DeviceRepr for F3 {}
// SAFETY: as above.
unsafe impl ValidAsZeroBits for F3 {}

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

#[allow(clippy::too_many_arguments)]
fn case<T>(
    opts: &Opts,
    stream: &Arc<CudaStream>,
    geam: Option<&Geam>,
    name: &str,
    shape: Shape,
    make: impl Fn(u64) -> T,
    rows: &mut Vec<Row>,
) -> Res<()>
where
    T: DeviceRepr + ValidAsZeroBits + Copy + PartialEq + std::fmt::Debug + 'static,
{
    if !opts.wants(name) {
        return Ok(());
    }
    let sweep = opts.sweep;
    let e = std::mem::size_of::<T>();
    let n = shape.src_elems().map_err(err)? as usize;
    let bytes = n * e;
    let copies = (4 * L2_BYTES).div_ceil(bytes).clamp(1, 64);
    let host: Vec<T> = noise(n, &make);
    let mut want = vec![make(0); n];
    cpu_transpose(&shape, &host, &mut want);
    let first = stream.clone_htod(&host).map_err(err)?;
    let mut srcs = vec![first];
    for _ in 1..copies {
        let mut s = stream.alloc_zeros::<T>(n).map_err(err)?;
        stream.memcpy_dtod(&srcs[0], &mut s).map_err(err)?;
        srcs.push(s);
    }
    let mut dst = stream.alloc_zeros::<T>(n).map_err(err)?;
    let check = |dst: &CudaSlice<T>, what: &str| -> Res<()> {
        if stream.clone_dtoh(dst).map_err(err)? == want {
            Ok(())
        } else {
            Err(format!("{name} {what}: wrong result"))
        }
    };
    // Every implementation is checked, then all are timed interleaved with the copy.
    let mut timed = vec![("cudaMemcpy D2D".to_string(), Impl::Memcpy)];
    let every = if opts.random.is_some() || !opts.given.is_empty() {
        if opts.alternatives {
            alternatives(e as u32)?
        } else {
            Vec::new()
        }
    } else {
        variants(e as u32, sweep)?
    };
    for (what, spec) in every {
        let Ok(kernel) = Kernel::build(spec) else {
            continue; // refused by the generator (shared memory, no conflict-free layout)
        };
        let k = KernelSource::from_kernel(&kernel);
        if refusal(k.geometry(), &shape).is_some() {
            continue;
        }
        timed.push((what, Impl::One(k)));
    }
    // What the attribute runs: the generator's fast variant first, its spec after.
    let mut lists = Vec::new();
    for strategy in [Strategy::Pad(None), Strategy::Xor] {
        let spec = TransposeSpec::new(32, e as u32, strategy).map_err(err)?;
        let list: Vec<KernelSource> = auto_kernels(&Kernel::build(spec).map_err(err)?)
            .iter()
            .map(KernelSource::from_kernel)
            .collect();
        let s = if strategy == Strategy::Xor {
            "swizzle"
        } else {
            "pad"
        };
        timed.push((
            format!("bankfree {s} (attribute default)"),
            Impl::List(list.clone()),
        ));
        lists.push((s, list));
    }
    if let (Some(_), 4 | 8, 1) = (geam, e, shape.batch) {
        timed.push(("cuBLAS geam".into(), Impl::Geam));
    }
    let run = |imp: &Impl, src: &CudaSlice<T>, dst: &mut CudaSlice<T>| -> Res<()> {
        match imp {
            Impl::Memcpy => stream.memcpy_dtod(src, dst).map_err(err),
            Impl::One(k) => transpose(k, src, dst, &shape, None).map_err(err),
            Impl::List(l) => transpose_first(l, src, dst, &shape, None).map_err(err),
            Impl::Geam => match geam {
                Some(g) => g.run(stream, src, dst, shape.rows as usize, shape.cols as usize),
                None => Err("no cuBLAS".into()),
            },
        }
    };
    let time = |timed: &[(String, Impl)], dst: &mut CudaSlice<T>| -> Res<Vec<f64>> {
        for (what, imp) in &timed[1..] {
            stream.memset_zeros(dst).map_err(err)?;
            run(imp, &srcs[0], dst)?;
            check(dst, what)?;
        }
        interleaved_ms(stream, timed.len(), ROUNDS, BATCH, |k, i| {
            run(&timed[k].1, &srcs[i % copies], dst)
        })
    };
    let ms = time(&timed, &mut dst)?;
    let mut row = |what: &str, ms: f64, memcpy: f64| {
        rows.push(Row {
            case: name.into(),
            what: what.into(),
            ms,
            gbs: 2.0 * bytes as f64 / ms / 1e6,
            ratio: memcpy / ms,
        });
    };
    for ((what, _), &t) in timed.iter().zip(&ms) {
        row(what, t, ms[0]);
    }
    // Drawn and given cases time the defaults only: a tuning recorded here would
    // be what later cases of its call class run.
    if opts.random.is_some() || !opts.given.is_empty() {
        return Ok(());
    }
    // The same lists after `autotune` timed them on this call, against the copy again.
    let mut tuned = vec![("cudaMemcpy D2D".to_string(), Impl::Memcpy)];
    for (s, list) in lists {
        let tunings =
            autotune(|| transpose_first(&list, &srcs[0], &mut dst, &shape, None)).map_err(err)?;
        let winner = tunings
            .first()
            .map_or("(one kernel fits)".to_string(), |t| {
                t.winner
                    .trim_start_matches("bankfree_transpose_")
                    .to_string()
            });
        tuned.push((format!("bankfree {s} autotuned {winner}"), Impl::List(list)));
    }
    let ms = time(&tuned, &mut dst)?;
    for ((what, _), &t) in tuned.iter().zip(&ms).skip(1) {
        row(what, t, ms[0]);
    }
    Ok(())
}

/// One timed implementation of a case.
enum Impl {
    Memcpy,
    One(KernelSource),
    List(Vec<KernelSource>),
    Geam,
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
