//! Helpers the examples share: CUDA-event medians, a CPU transpose and GPU 0 in
//! one line.
#![allow(dead_code)] // each example uses part of these helpers

use bankfree::cudarc::driver::CudaStream;
use bankfree::gen::Shape;
use std::sync::Arc;

/// Median of `reps` CUDA-event-timed calls of `f(i)` after 3 warm-ups, in ms.
pub fn median_ms(
    stream: &Arc<CudaStream>,
    reps: usize,
    mut f: impl FnMut(usize) -> Result<(), String>,
) -> Result<f64, String> {
    let e = |x: bankfree::cudarc::driver::DriverError| x.to_string();
    let flags = Some(bankfree::cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    let (a, b) = (
        stream.record_event(flags).map_err(e)?,
        stream.record_event(flags).map_err(e)?,
    );
    for i in 0..3 {
        f(i)?;
    }
    let mut t = Vec::with_capacity(reps);
    for i in 0..reps {
        a.record(stream).map_err(e)?;
        f(i)?;
        b.record(stream).map_err(e)?;
        b.synchronize().map_err(e)?;
        t.push(f64::from(a.elapsed_ms(&b).map_err(e)?));
    }
    t.sort_by(f64::total_cmp);
    Ok(t[reps / 2])
}

/// Interleaved timing of `n` implementations: each of `rounds` rounds times `batch`
/// back-to-back calls `f(which, i)` of every implementation in turn between two
/// CUDA events (after one untimed call), so the queue never drains between calls
/// and slow drift of the clocks hits every implementation alike. Returns each
/// implementation's median time per call, in ms.
pub fn interleaved_ms(
    stream: &Arc<CudaStream>,
    n: usize,
    rounds: usize,
    batch: usize,
    mut f: impl FnMut(usize, usize) -> Result<(), String>,
) -> Result<Vec<f64>, String> {
    let e = |x: bankfree::cudarc::driver::DriverError| x.to_string();
    let flags = Some(bankfree::cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    let (a, b) = (
        stream.record_event(flags).map_err(e)?,
        stream.record_event(flags).map_err(e)?,
    );
    let mut t = vec![Vec::with_capacity(rounds); n];
    let mut i = 0;
    for _ in 0..rounds {
        for (which, times) in t.iter_mut().enumerate() {
            f(which, i)?;
            i += 1;
            a.record(stream).map_err(e)?;
            for _ in 0..batch {
                f(which, i)?;
                i += 1;
            }
            b.record(stream).map_err(e)?;
            b.synchronize().map_err(e)?;
            times.push(f64::from(a.elapsed_ms(&b).map_err(e)?) / batch as f64);
        }
    }
    Ok(t.into_iter()
        .map(|mut v| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        })
        .collect())
}

/// `dst` = `src` transposed, on the CPU (the reference).
pub fn cpu_transpose<T: Copy>(s: &Shape, src: &[T], dst: &mut [T]) {
    // The examples size their buffers from the shape, so this cannot fail.
    let _ = bankfree::gen::check::sim::transpose_elems(s, src, dst);
}

/// Deterministic pseudo-random values, never all zero.
pub fn noise<T>(n: usize, make: impl Fn(u64) -> T) -> Vec<T> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            make(x)
        })
        .collect()
}

/// GPU 0 in one line: name, compute capability, the measured class its defaults
/// are picked for (with its peak memory bandwidth per SM), whether kernels
/// launch as programmatic dependents, whether small thin calls may split their
/// column words between warps, and NVRTC's version.
pub fn gpu_line(p: &bankfree::runtime::Probe) -> String {
    let per_sm = p
        .bandwidth_per_sm
        .map_or(String::new(), |b| format!(", {b:.1} GB/s per SM"));
    let launch = if p.programmatic {
        "programmatic launch"
    } else {
        "plain launch"
    };
    let split = if bankfree::runtime::device::thin_split_on() {
        ""
    } else {
        "; thin kernels unsplit"
    };
    format!(
        "{} (sm_{}{}; defaults of class {}{per_sm}; {launch}{split}), NVRTC {}.{}",
        p.device, p.compute_capability.0, p.compute_capability.1, p.gpu_class, p.nvrtc.0, p.nvrtc.1
    )
}
