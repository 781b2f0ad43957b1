//! The main job: transpose an 8192 x 8192 f32 matrix of random values on GPU 0 with
//! `pad` and `swizzle` kernels, check it against a CPU transpose, and report GB/s,
//! the ratio to cudaMemcpy device-to-device of the same bytes (same run), and how
//! long the first call (compile or disk-cache hit) and a later call took.
//!
//! Without a driver, a GPU or NVRTC it says what is missing and how to get it,
//! prints the kernels' bank verdicts, and exits with status 2.

use bankfree::cudarc::driver::{CudaContext, CudaSlice};
use bankfree::gen::{Kernel, Model, Shape, Strategy, TransposeSpec};
use bankfree::runtime::{probe, stats};
use bankfree::tiled_transpose;
use std::process::ExitCode;
use std::time::Instant;

#[path = "common/mod.rs"]
mod common;
use common::{cpu_transpose, median_ms, noise};

/// `dst` (cols x rows) = `src` (rows x cols) transposed, through a padded tile.
#[tiled_transpose(tile = auto, strategy = pad)]
fn transpose_pad(
    src: &CudaSlice<f32>,
    dst: &mut CudaSlice<f32>,
    rows: usize,
    cols: usize,
) -> bankfree::Result<()>;

/// The same through an XOR-swizzled tile.
#[tiled_transpose(tile = auto, strategy = swizzle)]
fn transpose_swizzle(
    src: &CudaSlice<f32>,
    dst: &mut CudaSlice<f32>,
    rows: usize,
    cols: usize,
) -> bankfree::Result<()>;

type Transpose = fn(&CudaSlice<f32>, &mut CudaSlice<f32>, usize, usize) -> bankfree::Result<()>;

const N: usize = 8192;

/// The kernels the two functions use, for their verdicts (the attribute proved
/// them conflict-free at compile time; this prints what it found).
fn kernels() -> Result<Vec<(Strategy, Kernel)>, String> {
    [Strategy::Pad(None), Strategy::Xor]
        .into_iter()
        .map(|s| {
            let k = TransposeSpec::new(32, 4, s)
                .and_then(Kernel::build)
                .map_err(|e| e.to_string())?;
            Ok((s, k))
        })
        .collect()
}

fn main() -> ExitCode {
    let ks = match kernels() {
        Ok(k) => k,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    for (s, k) in &ks {
        println!(
            "{:<14} {} ({}, {} B shared): {}",
            s.to_string(),
            k.entry_name(),
            k.layout(),
            k.shared_bytes(),
            k.analyze(Model::Hopper).verdict()
        );
    }
    match probe() {
        Ok(p) => println!("GPU 0: {}", common::gpu_line(&p)),
        Err(e) => {
            eprintln!("\nnot run on a GPU: {e}");
            return ExitCode::from(2);
        }
    }
    match run(&ks) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(ks: &[(Strategy, Kernel)]) -> Result<(), String> {
    let fns: [Transpose; 2] = [transpose_pad, transpose_swizzle];
    let stream = CudaContext::new(0)
        .map_err(|e| e.to_string())?
        .default_stream();
    let host: Vec<f32> = noise(N * N, |x| (x >> 40) as f32 / 16_777_216.0 - 0.5);
    let mut want = vec![0f32; N * N];
    cpu_transpose(&Shape::new(N as u64, N as u64), &host, &mut want);
    let src = stream.clone_htod(&host).map_err(|e| e.to_string())?;
    let mut dst = stream
        .alloc_zeros::<f32>(N * N)
        .map_err(|e| e.to_string())?;
    let mut copy = stream
        .alloc_zeros::<f32>(N * N)
        .map_err(|e| e.to_string())?;
    let bytes = 2.0 * (N * N * 4) as f64;
    let memcpy = median_ms(&stream, 30, |_| {
        stream
            .memcpy_dtod(&src, &mut copy)
            .map_err(|e| e.to_string())
    })?;
    println!(
        "\n{:<14} {:>10} {:>9} {:>10} {:>11} {:>11}",
        "8192x8192 f32", "ms", "GB/s", "vs memcpy", "first call", "later call"
    );
    println!(
        "{:<14} {:>10.3} {:>9.0} {:>10.2}",
        "memcpy D2D",
        memcpy,
        bytes / memcpy / 1e6,
        1.0
    );
    for ((s, k), f) in ks.iter().zip(fns) {
        let before = stats();
        let t0 = Instant::now();
        f(&src, &mut dst, N, N).map_err(|e| e.to_string())?;
        stream.synchronize().map_err(|e| e.to_string())?;
        let first = t0.elapsed().as_secs_f64() * 1e3;
        let how = if stats().compiles > before.compiles {
            "compiled"
        } else {
            "disk cache"
        };
        let got = stream.clone_dtoh(&dst).map_err(|e| e.to_string())?;
        if got != want {
            return Err(format!(
                "{}: the GPU result differs from the CPU transpose",
                k.entry_name()
            ));
        }
        let t1 = Instant::now();
        f(&src, &mut dst, N, N).map_err(|e| e.to_string())?;
        stream.synchronize().map_err(|e| e.to_string())?;
        let later = t1.elapsed().as_secs_f64() * 1e3;
        let ms = median_ms(&stream, 30, |_| {
            f(&src, &mut dst, N, N).map_err(|e| e.to_string())
        })?;
        println!(
            "{:<14} {:>10.3} {:>9.0} {:>10.2} {:>7.1} ms ({how}) {:>7.3} ms",
            s.to_string(),
            ms,
            bytes / ms / 1e6,
            memcpy / ms,
            first,
            later
        );
    }
    println!("results checked against a CPU transpose: equal");
    Ok(())
}
