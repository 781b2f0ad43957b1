//! What the runtime costs, measured on GPU 0:
//!
//! 1. time to the first launch in a process with an empty disk cache (NVRTC
//!    compile) and in a second process that finds the CUBIN on disk;
//! 2. host time per launch, memory-cached, through `bankfree::runtime::transpose`
//!    against a raw cudarc launch of the same kernel with the same arguments
//!    (10,000 launches each, medians of 7 alternating rounds), and through
//!    `transpose_first` over the list a `tile = auto` attribute function holds;
//! 3. host time per `bankfree::permute` call on a small rank-5 permute (16^5 f32),
//!    against `transpose_first` over its plan's kernels, planned once.
//!
//! `cargo run --release --example runtime_overhead`
#![allow(unsafe_code)] // the raw cudarc launch this measures against is `unsafe`

use bankfree::cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use bankfree::cudarc::nvrtc::Ptx;
use bankfree::gen::select::choice::auto_kernels;
use bankfree::gen::select::permute::{plan, plan_kernels, Permute};
use bankfree::gen::{Kernel, Shape, Strategy, TransposeSpec};
use bankfree::runtime::compiler::{compile, Format};
use bankfree::runtime::{probe, stats, transpose, transpose_first, KernelSource};
use std::process::{Command, ExitCode};
use std::time::Instant;

fn kernel() -> KernelSource {
    let spec = TransposeSpec::new(32, 4, Strategy::Xor).expect("a valid spec");
    KernelSource::from_kernel(&Kernel::build(spec).expect("builds"))
}

/// Child mode: time the first `transpose` call of this process.
fn first_launch() -> Result<(), String> {
    let stream = CudaContext::new(0)
        .map_err(|e| e.to_string())?
        .default_stream();
    let src = stream
        .clone_htod(&vec![1u32; 64 * 64])
        .map_err(|e| e.to_string())?;
    let mut dst = stream
        .alloc_zeros::<u32>(64 * 64)
        .map_err(|e| e.to_string())?;
    let k = kernel();
    stream.synchronize().map_err(|e| e.to_string())?;
    let t = Instant::now();
    transpose(&k, &src, &mut dst, &Shape::new(64, 64), None).map_err(|e| e.to_string())?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    stream.synchronize().map_err(|e| e.to_string())?;
    let s = stats();
    println!(
        "FIRST {ms:.3} compiles={} disk_hits={}",
        s.compiles, s.disk_hits
    );
    Ok(())
}

fn child(dir: &std::path::Path) -> Result<(f64, String), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .arg("--first-launch")
        .env("BANKFREE_CACHE_DIR", dir)
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = text
        .lines()
        .find(|l| l.starts_with("FIRST"))
        .ok_or(format!(
            "child said: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        ))?;
    let ms: f64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .ok_or("bad child output")?;
    Ok((ms, line.to_string()))
}

fn launches() -> Result<(f64, f64, f64), String> {
    const N: usize = 10_000;
    let ctx = CudaContext::new(0).map_err(|e| e.to_string())?;
    let stream = ctx.default_stream();
    let k = kernel();
    let shape = Shape::new(32, 32);
    let src = stream
        .clone_htod(&vec![1u32; 1024])
        .map_err(|e| e.to_string())?;
    let mut dst = stream.alloc_zeros::<u32>(1024).map_err(|e| e.to_string())?;
    transpose(&k, &src, &mut dst, &shape, None).map_err(|e| e.to_string())?; // load it

    // The same kernel loaded straight through cudarc, for the raw launch.
    let (major, minor) = ctx.compute_capability().map_err(|e| e.to_string())?;
    let bin = compile(
        k.source(),
        k.entry(),
        (major * 10 + minor) as u32,
        Format::Cubin,
    )
    .map_err(|e| e.to_string())?;
    let module = ctx
        .load_module(Ptx::from_binary(bin.bytes))
        .map_err(|e| e.to_string())?;
    let func = module.load_function(k.entry()).map_err(|e| e.to_string())?;
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    };
    let scalars = [1u32, 32, 32, 32, 32, 1024, 1024]; // the 32-bit build's parameters

    let list: Vec<KernelSource> = auto_kernels(
        &Kernel::build(TransposeSpec::new(32, 4, Strategy::Xor).expect("spec")).expect("builds"),
    )
    .iter()
    .map(KernelSource::from_kernel)
    .collect();
    transpose_first(&list, &src, &mut dst, &shape, None).map_err(|e| e.to_string())?; // load it
    let mut ours = Vec::new();
    let mut raw = Vec::new();
    let mut first = Vec::new();
    for _ in 0..7 {
        stream.synchronize().map_err(|e| e.to_string())?;
        let t = Instant::now();
        for _ in 0..N {
            transpose_first(&list, &src, &mut dst, &shape, None).map_err(|e| e.to_string())?;
        }
        stream.synchronize().map_err(|e| e.to_string())?;
        first.push(t.elapsed().as_secs_f64() * 1e6 / N as f64);

        stream.synchronize().map_err(|e| e.to_string())?;
        let t = Instant::now();
        for _ in 0..N {
            transpose(&k, &src, &mut dst, &shape, None).map_err(|e| e.to_string())?;
        }
        stream.synchronize().map_err(|e| e.to_string())?;
        ours.push(t.elapsed().as_secs_f64() * 1e6 / N as f64);

        let t = Instant::now();
        for _ in 0..N {
            let mut b = stream.launch_builder(&func);
            b.arg(&src).arg(&mut dst);
            for s in &scalars {
                b.arg(s);
            }
            // SAFETY: the generated kernel's parameters (src, dst, seven u32) over
            // 32 x 32 elements, which both 1024-element buffers hold.
            unsafe { b.launch(cfg) }.map_err(|e| e.to_string())?;
        }
        stream.synchronize().map_err(|e| e.to_string())?;
        raw.push(t.elapsed().as_secs_f64() * 1e6 / N as f64);
    }
    ours.sort_by(f64::total_cmp);
    raw.sort_by(f64::total_cmp);
    first.sort_by(f64::total_cmp);
    Ok((ours[3], raw[3], first[3]))
}

/// Host time per call of a 16^5 f32 reversal: `permute`, and `transpose_first`
/// over the same plan and kernels made once (medians of 7 rounds of 10,000).
fn permute_launches() -> Result<(f64, f64), String> {
    const N: usize = 10_000;
    let dims = [16usize; 5];
    let perm = [4usize, 3, 2, 1, 0];
    let stream = CudaContext::new(0)
        .map_err(|e| e.to_string())?
        .default_stream();
    let n = dims.iter().product();
    let src = stream
        .clone_htod(&vec![1f32; n])
        .map_err(|e| e.to_string())?;
    let mut dst = stream.alloc_zeros::<f32>(n).map_err(|e| e.to_string())?;
    let request = Permute::new(&dims.map(|d| d as u64), &perm, 4);
    let planned = plan(&request).map_err(|e| e.to_string())?;
    let list: Vec<KernelSource> = plan_kernels(&planned, Strategy::Xor)
        .map_err(|e| e.to_string())?
        .iter()
        .map(KernelSource::from_kernel)
        .collect();
    bankfree::permute(&src, &mut dst, &dims, &perm).map_err(|e| e.to_string())?; // load it
    let (mut whole, mut listed) = (Vec::new(), Vec::new());
    for _ in 0..7 {
        stream.synchronize().map_err(|e| e.to_string())?;
        let t = Instant::now();
        for _ in 0..N {
            bankfree::permute(&src, &mut dst, &dims, &perm).map_err(|e| e.to_string())?;
        }
        stream.synchronize().map_err(|e| e.to_string())?;
        whole.push(t.elapsed().as_secs_f64() * 1e6 / N as f64);

        let t = Instant::now();
        for _ in 0..N {
            transpose_first(&list, &src, &mut dst, &planned.shape, None)
                .map_err(|e| e.to_string())?;
        }
        stream.synchronize().map_err(|e| e.to_string())?;
        listed.push(t.elapsed().as_secs_f64() * 1e6 / N as f64);
    }
    whole.sort_by(f64::total_cmp);
    listed.sort_by(f64::total_cmp);
    Ok((whole[3], listed[3]))
}

fn main() -> ExitCode {
    if std::env::args().any(|a| a == "--first-launch") {
        return match first_launch() {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if let Err(e) = probe() {
        eprintln!("not run on a GPU: {e}");
        return ExitCode::from(2);
    }
    let run = || -> Result<(), String> {
        let dir = std::env::temp_dir().join(format!("bankfree-overhead-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (cold, cold_line) = child(&dir)?;
        let (warm, warm_line) = child(&dir)?;
        let _ = std::fs::remove_dir_all(&dir);
        println!("first launch, empty disk cache:   {cold:9.3} ms   ({cold_line})");
        println!("first launch, second process:     {warm:9.3} ms   ({warm_line})");
        println!(
            "cold / disk-cached:               {:9.1}x (target >= 20x)",
            cold / warm
        );
        let (ours, raw, first) = launches()?;
        println!("memory-cached launch, bankfree:   {ours:9.3} us per launch (10,000 launches, median of 7)");
        println!("raw cudarc launch, same kernel:   {raw:9.3} us per launch");
        println!(
            "bankfree / raw:                   {:9.3}  (target <= 1.2)",
            ours / raw
        );
        println!(
            "attribute list (transpose_first): {first:9.3} us per launch ({:.3} x raw)",
            first / raw
        );
        let (whole, listed) = permute_launches()?;
        println!("permute, 16^5 f32 reversed:       {whole:9.3} us per call");
        println!("  its plan's list, planned once:  {listed:9.3} us per call");
        Ok(())
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
