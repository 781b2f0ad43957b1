//! The classic transposes side by side: an 8192 x 8192 f32 transpose with no
//! shared memory (naive), a shared tile with bank conflicts (none), padding (pad),
//! the rotation swizzle `(x + y) % 32` and the XOR swizzle; each checked against a
//! CPU transpose and printed with its bank analyzer verdict, GB/s and the ratio to
//! cudaMemcpy device-to-device of the same bytes, measured in the same run.
//!
//! `cargo run --release --example strategies`

use bankfree::cudarc::driver::CudaContext;
use bankfree::gen::{Kernel, Model, Shape, Strategy, TransposeSpec};
use bankfree::runtime::{probe, transpose, KernelSource};
use std::process::ExitCode;

#[path = "common/mod.rs"]
mod common;
use common::{cpu_transpose, median_ms, noise};

const N: usize = 8192;

fn run() -> Result<(), String> {
    let e = |x: bankfree::cudarc::driver::DriverError| x.to_string();
    let stream = CudaContext::new(0).map_err(e)?.default_stream();
    let shape = Shape::new(N as u64, N as u64);
    let host: Vec<f32> = noise(N * N, |x| (x >> 40) as f32 * 1.1);
    let mut want = vec![0f32; N * N];
    cpu_transpose(&shape, &host, &mut want);
    let src = stream.clone_htod(&host).map_err(e)?;
    let mut dst = stream.alloc_zeros::<f32>(N * N).map_err(e)?;
    let bytes = 2.0 * (N * N * 4) as f64;
    let memcpy = median_ms(&stream, 30, |_| {
        stream.memcpy_dtod(&src, &mut dst).map_err(e)
    })?;
    println!(
        "{:<44} {:>9} {:>8} {:>10}  bank analyzer",
        "kernel (8192 x 8192 f32)", "ms", "GB/s", "vs memcpy"
    );
    println!(
        "{:<44} {:>9.3} {:>8.0} {:>10.2}",
        "cudaMemcpy device-to-device",
        memcpy,
        bytes / memcpy / 1e6,
        1.0
    );
    let classics = [
        (Strategy::Naive, "1. transposeNaive"),
        (Strategy::None, "2. transposeShared (tile[32][32])"),
        (Strategy::Pad(None), "3. transposeNobankconf (tile[32][33])"),
        (Strategy::Rotate, "4. ..._nopading ((x + y) % 32)"),
        (Strategy::Xor, "5. XOR swizzle (x ^ y)"),
    ];
    for (strategy, label) in classics {
        let kernel = Kernel::build(TransposeSpec::new(32, 4, strategy).map_err(|x| x.to_string())?)
            .map_err(|x| x.to_string())?;
        let verdict = kernel.analyze(Model::Hopper).verdict();
        let k = KernelSource::from_kernel(&kernel);
        transpose(&k, &src, &mut dst, &shape, None).map_err(|x| x.to_string())?;
        if stream.clone_dtoh(&dst).map_err(e)? != want {
            return Err(format!("{label}: Calculation error."));
        }
        let ms = median_ms(&stream, 30, |_| {
            transpose(&k, &src, &mut dst, &shape, None).map_err(|x| x.to_string())
        })?;
        let short: String = verdict.chars().take(40).collect();
        println!(
            "{label:<44} {ms:>9.3} {:>8.0} {:>10.2}  {short}",
            bytes / ms / 1e6,
            memcpy / ms
        );
    }
    println!("every result checked against a CPU transpose: OK.");
    Ok(())
}

fn main() -> ExitCode {
    if let Err(x) = probe() {
        eprintln!("not run on a GPU: {x}");
        return ExitCode::from(2);
    }
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(x) => {
            eprintln!("error: {x}");
            ExitCode::FAILURE
        }
    }
}
