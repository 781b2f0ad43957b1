//! Helpers the examples share: CUDA-event medians and a CPU transpose.

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

/// `dst` = `src` transposed, on the CPU (the reference).
pub fn cpu_transpose<T: Copy>(s: &Shape, src: &[T], dst: &mut [T]) {
    // The examples size their buffers from the shape, so this cannot fail.
    let _ = bankfree::gen::sim::transpose_elems(s, src, dst);
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
