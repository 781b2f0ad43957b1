//! N-d permutes on GPU 0: attention's head swaps, a fused QKV split, NCHW <-> NHWC,
//! HWC -> CHW and two high-rank reversals. Each case is checked bit-exact against a
//! CPU permute, then timed against a `cudaMemcpy` device-to-device of the same bytes
//! (interleaved, medians of CUDA-event-timed rounds; inputs rotate among enough
//! copies to exceed the L2 cache, so small cases time memory, not the cache).
//!
//! `cargo run --release --example permute [-- --case TEXT]...`
//! `cargo run --release --example permute -- --random N [--seed S] [--cases FILE]`
//! `cargo run --release --example permute -- --shape E:DIMS:PERM... [--cases FILE]`
//!
//! `--random` draws `N` permutes instead (ranks 3 to 6, extents 2 to 64 but one
//! axis that brings the tensor to about 32 MB, element sizes 1, 2, 4 and 8
//! bytes); `--shape` runs the permutes it names, e.g. `--shape 1:3355443x5x2:2,1,0`
//! (`E`-byte elements, the source's extents, the permutation). `--cases` writes
//! the cases run as JSON. `--plans` prints each case's plan and first kernel
//! instead of running it, with no GPU (what a planner change touches: diff two
//! builds' output over the same draws). Otherwise, without a GPU it says what is
//! missing and exits with 2.
//! `scripts/gpu/peers.py --permute [--cases FILE]` times torch's
//! `y.copy_(x.permute(p))` on the same cases.

mod common;

use bankfree::cudarc::driver::{CudaContext, CudaSlice, CudaStream, DeviceRepr, ValidAsZeroBits};
use bankfree::gen::select::permute::{pick, plan, plan_kernels, Permute, Plan};
use bankfree::gen::Strategy;
use bankfree::half::f16;
use std::process::ExitCode;
use std::sync::Arc;

type Res<T> = Result<T, String>;

/// The cases: name, dims, perm, element size.
const CASES: [(&str, &[usize], &[usize], usize); 8] = [
    (
        "[B,S,H,D]->[B,H,S,D] f16",
        &[8, 2048, 32, 128],
        &[0, 2, 1, 3],
        2,
    ),
    (
        "[B,H,S,D]->[B,S,H,D] f16",
        &[8, 32, 2048, 128],
        &[0, 2, 1, 3],
        2,
    ),
    ("QKV split f16", &[8, 2048, 3, 32, 128], &[2, 0, 3, 1, 4], 2),
    ("NCHW->NHWC f16", &[64, 256, 56, 56], &[0, 2, 3, 1], 2),
    ("NHWC->NCHW f32", &[64, 56, 56, 256], &[0, 3, 1, 2], 4),
    ("HWC->CHW u8", &[2160, 3840, 3], &[2, 0, 1], 1),
    (
        "16^5 reversed f32",
        &[16, 16, 16, 16, 16],
        &[4, 3, 2, 1, 0],
        4,
    ),
    (
        "rank 7 f32",
        &[8, 7, 6, 5, 4, 3, 32],
        &[6, 2, 0, 4, 1, 5, 3],
        4,
    ),
];

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn row_major(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * dims[i + 1];
    }
    s
}

/// The CPU permute.
fn cpu_permute<T: Copy>(dims: &[usize], perm: &[usize], src: &[T], dst: &mut [T]) {
    let out: Vec<usize> = perm.iter().map(|&a| dims[a]).collect();
    let (ss, ds) = (row_major(dims), row_major(&out));
    // Destination stride of each source axis.
    let mut dst_of = vec![0usize; dims.len()];
    for (i, &a) in perm.iter().enumerate() {
        dst_of[a] = ds[i];
    }
    let mut idx = vec![0usize; dims.len()];
    let (mut s, mut d) = (0usize, 0usize);
    for _ in 0..src.len() {
        dst[d] = src[s];
        for a in (0..dims.len()).rev() {
            idx[a] += 1;
            s += ss[a];
            d += dst_of[a];
            if idx[a] < dims[a] {
                break;
            }
            s -= ss[a] * dims[a];
            d -= dst_of[a] * dims[a];
            idx[a] = 0;
        }
    }
}

fn time_case<T>(
    stream: &Arc<CudaStream>,
    name: &str,
    dims: &[usize],
    perm: &[usize],
    make: impl Fn(u64) -> T,
) -> Res<(f64, f64)>
where
    T: DeviceRepr + ValidAsZeroBits + Copy + PartialEq + Unpin + 'static,
{
    let n: usize = dims.iter().product();
    let host = common::noise(n, make);
    let mut want = host.clone();
    cpu_permute(dims, perm, &host, &mut want);
    let bytes = n * std::mem::size_of::<T>();
    // Enough source copies to exceed the L2 cache (50 MB on an H100) four times.
    let copies = (200usize << 20).div_ceil(bytes.max(1)).clamp(1, 64);
    let srcs: Vec<CudaSlice<T>> = (0..copies)
        .map(|_| stream.clone_htod(&host))
        .collect::<Result<_, _>>()
        .map_err(err)?;
    let mut dst = stream.alloc_zeros::<T>(n).map_err(err)?;
    let mut copy_dst = stream.alloc_zeros::<T>(n).map_err(err)?;
    bankfree::permute(&srcs[0], &mut dst, dims, perm).map_err(err)?;
    if stream.clone_dtoh(&dst).map_err(err)? != want {
        return Err(format!("{name}: the GPU permute differs from the CPU's"));
    }
    let times = common::interleaved_ms(stream, 2, 15, 10, |which, i| {
        let src = &srcs[i % copies];
        if which == 0 {
            bankfree::permute(src, &mut dst, dims, perm).map_err(err)
        } else {
            stream.memcpy_dtod(src, &mut copy_dst).map_err(err)
        }
    })?;
    Ok((times[0], times[1]))
}

/// `n` permutes drawn from `seed` (see the module docs).
fn draw(n: usize, seed: u64) -> Vec<Case> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = |m: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % m as u64) as usize
    };
    (0..n)
        .map(|_| {
            let rank = 3 + next(4);
            let e = [1, 2, 4, 8][next(4)];
            let mut dims: Vec<usize> = (0..rank)
                .map(|_| (2f64 * 32f64.powf(next(1000) as f64 / 1000.0)) as usize)
                .collect();
            let big = next(rank);
            let rest: usize = dims
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != big)
                .map(|(_, d)| d)
                .product();
            dims[big] = ((32usize << 20) / (rest * e)).max(2);
            let mut perm: Vec<usize> = (0..rank).collect();
            while perm.iter().enumerate().all(|(i, &p)| i == p) {
                for k in (1..rank).rev() {
                    perm.swap(k, next(k + 1));
                }
            }
            let name = format!("{dims:?} {perm:?} e{e}").replace(' ', "");
            (name, dims, perm, e)
        })
        .collect()
}

type Case = (String, Vec<usize>, Vec<usize>, usize);

/// The case of a `--shape` argument, `E:D0xD1x..:P0,P1,..`.
fn parse_shape(text: &str) -> Res<Case> {
    let bad = |why: &str| format!("--shape {text}: {why} (e.g. `1:3355443x5x2:2,1,0`)");
    let parts: Vec<&str> = text.split(':').collect();
    let [e, dims, perm] = parts.as_slice() else {
        return Err(bad("three parts separated by `:`"));
    };
    let e: usize = e.parse().map_err(|_| bad("element bytes"))?;
    if ![1, 2, 4, 8].contains(&e) {
        return Err(bad("element bytes 1, 2, 4 or 8"));
    }
    let list = |t: &str, sep: char| -> Res<Vec<usize>> {
        t.split(sep)
            .map(|x| x.parse().map_err(|_| bad(&format!("`{x}` is no number"))))
            .collect()
    };
    let (dims, perm) = (list(dims, 'x')?, list(perm, ',')?);
    let name = format!("{dims:?}{perm:?}e{e}").replace(' ', "");
    Ok((name, dims, perm, e))
}

fn run(
    filters: &[String],
    random: Option<(usize, u64)>,
    shapes: Vec<Case>,
    cases_out: Option<&str>,
) -> Res<()> {
    let ctx = CudaContext::new(0).map_err(err)?;
    let stream = ctx.default_stream();
    println!(
        "GPU 0: {} (defaults of class {}); ratio = same-bytes cudaMemcpy D2D time / permute time",
        ctx.name().map_err(err)?,
        bankfree::runtime::device::class(&ctx)
    );
    println!(
        "{:<28} {:>10} {:>11} {:>11} {:>7}  plan",
        "case", "MB", "permute ms", "memcpy ms", "ratio"
    );
    let cases = cases_of(random, shapes);
    if let Some(path) = cases_out {
        let json: Vec<String> = cases
            .iter()
            .map(|(n, d, p, e)| {
                format!(
                    "{{\"name\": \"{n}\", \"dims\": {d:?}, \"perm\": {p:?}, \"elem_bytes\": {e}}}"
                )
            })
            .collect();
        std::fs::write(path, format!("[\n{}\n]\n", json.join(",\n"))).map_err(err)?;
    }
    for (name, dims, perm, e) in &cases {
        let (name, dims, perm, e) = (name.as_str(), dims.as_slice(), perm.as_slice(), *e);
        if !filters.is_empty() && !filters.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let (t, c) = match e {
            1 => time_case(&stream, name, dims, perm, |x| x as u8)?,
            2 => time_case(&stream, name, dims, perm, |x| {
                f16::from_f32((x % 2048) as f32)
            })?,
            8 => time_case(&stream, name, dims, perm, |x| x)?,
            _ => time_case(&stream, name, dims, perm, |x| x as u32)?,
        };
        let mb = dims.iter().product::<usize>() * e;
        println!(
            "{name:<28} {:>10.1} {t:>11.4} {c:>11.4} {:>7.3}  {}",
            mb as f64 / 1e6,
            c / t,
            plan_text(&plan_of(dims, perm, e)?),
        );
    }
    Ok(())
}

fn plan_of(dims: &[usize], perm: &[usize], e: usize) -> Res<Plan> {
    let d: Vec<u64> = dims.iter().map(|&x| x as u64).collect();
    plan(&Permute::new(&d, perm, e as u32)).map_err(err)
}

/// A plan in one line: its kind, batch and matrices.
fn plan_text(p: &Plan) -> String {
    let s = p.shape;
    let folded = if s.fold.counts() == [0, 0] {
        String::new()
    } else {
        format!(", folded {:?}", s.fold.counts())
    };
    // A short block kept innermost moves as one wider element.
    let widened = if p.unit > 1 {
        format!(", {}-byte elements", p.elem_bytes)
    } else {
        String::new()
    };
    format!(
        "{:?} batch {} ({} outer axes) of {} x {}{folded}{widened}",
        p.kind, s.batch, s.outer.n, s.rows, s.cols,
    )
}

/// `--plans`: each case's plan and the kernel the runtime runs for it (with
/// both buffers on 16-byte boundaries and no tuning recorded), no GPU.
fn plans(cases: &[Case]) -> Res<()> {
    for (name, dims, perm, e) in cases {
        let p = plan_of(dims, perm, *e)?;
        let kernels = plan_kernels(&p, Strategy::Xor).map_err(err)?;
        let runs = pick(&kernels, &p.shape).map_or_else(|| "-".to_string(), |k| k.entry_name());
        println!("{name:<28} {}  {runs}", plan_text(&p));
    }
    Ok(())
}

/// The cases to run: `--random`'s draw, else the `--shape`s, else the list.
fn cases_of(random: Option<(usize, u64)>, shapes: Vec<Case>) -> Vec<Case> {
    match random {
        Some((n, seed)) => draw(n, seed),
        None if !shapes.is_empty() => shapes,
        None => CASES
            .iter()
            .map(|(n, d, p, e)| (n.to_string(), d.to_vec(), p.to_vec(), *e))
            .collect(),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filters: Vec<String> = args
        .windows(2)
        .filter(|w| w[0] == "--case")
        .map(|w| w[1].clone())
        .collect();
    let value = |flag: &str| args.windows(2).find(|w| w[0] == flag).map(|w| w[1].clone());
    let random = match value("--random").map(|n| n.parse::<usize>()) {
        None => None,
        Some(Ok(n)) => match value("--seed").map_or(Ok(1), |s| s.parse::<u64>()) {
            Ok(seed) => Some((n, seed)),
            Err(e) => {
                eprintln!("error: --seed: {e}");
                return ExitCode::from(2);
            }
        },
        Some(Err(e)) => {
            eprintln!("error: --random: {e}");
            return ExitCode::from(2);
        }
    };
    let shapes: Res<Vec<Case>> = args
        .windows(2)
        .filter(|w| w[0] == "--shape")
        .map(|w| parse_shape(&w[1]))
        .collect();
    let shapes = match shapes {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if args.iter().any(|a| a == "--plans") {
        return match plans(&cases_of(random, shapes)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if let Err(e) = bankfree::runtime::probe() {
        eprintln!("no GPU run: {e}");
        return ExitCode::from(2);
    }
    match run(&filters, random, shapes, value("--cases").as_deref()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
