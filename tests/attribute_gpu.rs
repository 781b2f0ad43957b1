//! Functions written by `#[tiled_transpose]`, run on a CUDA GPU against a CPU
//! transpose. Run there with `--include-ignored`.

use bankfree::cudarc::driver::{CudaContext, CudaSlice, CudaStream, CudaView, CudaViewMut};
use bankfree::gen::{check::sim::transpose_elems, Shape};
use bankfree::tiled_transpose;

#[tiled_transpose(strategy = pad)]
fn t_f32(
    src: &CudaSlice<f32>,
    dst: &mut CudaSlice<f32>,
    rows: usize,
    cols: usize,
) -> bankfree::Result<()>;

#[tiled_transpose(tile = 64, strategy = swizzle)]
fn t_batched_pitched(
    src: &CudaView<'_, u16>,
    dst: &mut CudaViewMut<'_, u16>,
    batch: usize,
    rows: usize,
    cols: usize,
    src_ld: usize,
    dst_ld: usize,
    stream: &CudaStream,
) -> bankfree::Result<()>;

#[tiled_transpose(tile = 16, strategy = swizzle(xor))]
fn t_generic<T: bankfree::Element>(
    src: &CudaSlice<T>,
    dst: &mut CudaSlice<T>,
    rows: usize,
    cols: usize,
) -> bankfree::Result<()>;

#[tiled_transpose]
fn t_u8_pitched(
    src: &CudaSlice<u8>,
    dst: &mut CudaSlice<u8>,
    rows: usize,
    cols: usize,
    src_ld: usize,
    dst_ld: usize,
) -> bankfree::Result<()>;

#[tiled_transpose]
fn t_f16(
    src: &CudaSlice<bankfree::half::f16>,
    dst: &mut CudaSlice<bankfree::half::f16>,
    rows: usize,
    cols: usize,
) -> bankfree::Result<()>;

fn cpu<T: Copy>(
    src: &[T],
    dst: &mut [T],
    batch: usize,
    rows: usize,
    cols: usize,
    sld: usize,
    dld: usize,
) {
    let shape = Shape {
        src_ld: sld as u64,
        dst_ld: dld as u64,
        src_batch_stride: (rows * sld) as u64,
        dst_batch_stride: (cols * dld) as u64,
        ..Shape::batched(batch as u64, rows as u64, cols as u64)
    };
    transpose_elems(&shape, src, dst).expect("reference");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn attribute_functions_transpose_on_the_gpu() {
    let s = CudaContext::new(0).expect("GPU 0").default_stream();
    let (rows, cols) = (1080, 1920);
    let host: Vec<f32> = (0..rows * cols).map(|i| (i as f32).sin()).collect();
    let src = s.clone_htod(&host).expect("upload");
    let mut dst = s.alloc_zeros::<f32>(rows * cols).expect("alloc");
    t_f32(&src, &mut dst, rows, cols).expect("launch");
    let mut want = vec![0f32; rows * cols];
    cpu(&host, &mut want, 1, rows, cols, cols, rows);
    assert_eq!(s.clone_dtoh(&dst).expect("download"), want);

    let (batch, rows, cols, sld, dld) = (3, 45, 70, 75, 50);
    let host: Vec<u16> = (0..batch * rows * sld)
        .map(|i| (i * 7 + 3) as u16)
        .collect();
    let src = s.clone_htod(&host).expect("upload");
    let mut dst = s
        .clone_htod(&vec![0xBEEFu16; batch * cols * dld])
        .expect("upload");
    t_batched_pitched(
        &src.slice(..),
        &mut dst.slice_mut(..),
        batch,
        rows,
        cols,
        sld,
        dld,
        &s,
    )
    .expect("launch");
    let mut want = vec![0xBEEFu16; batch * cols * dld];
    cpu(&host, &mut want, batch, rows, cols, sld, dld);
    assert_eq!(s.clone_dtoh(&dst).expect("download"), want);

    let host: Vec<u64> = (0..33 * 31).map(|i| i * 0x1_0000_0001).collect();
    let src = s.clone_htod(&host).expect("upload");
    let mut dst = s.alloc_zeros::<u64>(33 * 31).expect("alloc");
    t_generic(&src, &mut dst, 33, 31).expect("launch");
    let mut want = vec![0u64; 33 * 31];
    cpu(&host, &mut want, 1, 33, 31, 31, 33);
    assert_eq!(s.clone_dtoh(&dst).expect("download"), want);
}

/// A `tile = auto` function runs 1-byte matrices of a few dozen to a few hundred
/// rows, and 2-byte ones of up to 128 rows off the sectors, as the permute
/// planner's gather (one dense destination run): with any source pitch, and as
/// tiles where the destination has a pitch of its own; nothing outside the
/// matrix is written either way.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_tile_auto_function_gathers_what_the_planner_gathers() {
    let s = CudaContext::new(0).expect("GPU 0").default_stream();
    let (rows, cols) = (101, 40001);
    for (sld, dld) in [(cols, rows), (cols + 7, rows), (cols, rows + 3)] {
        let host: Vec<u8> = (0..rows * sld).map(|i| (i * 131 + 7) as u8).collect();
        let src = s.clone_htod(&host).expect("upload");
        // 64 guard bytes past the last destination row.
        let n = cols * dld + 64;
        let mut dst = s.clone_htod(&vec![0xA5u8; n]).expect("upload");
        t_u8_pitched(&src, &mut dst, rows, cols, sld, dld).expect("launch");
        let mut want = vec![0xA5u8; n];
        cpu(&host, &mut want, 1, rows, cols, sld, dld);
        assert_eq!(
            s.clone_dtoh(&dst).expect("download"),
            want,
            "src_ld {sld} dst_ld {dld}"
        );
    }
    // 2-byte rows of 66 items (132 bytes, off the sectors) gather too.
    use bankfree::half::f16;
    let (rows, cols) = (66, 30001);
    let host: Vec<f16> = (0..rows * cols).map(|i| f16::from_bits(i as u16)).collect();
    let src = s.clone_htod(&host).expect("upload");
    let mut dst = s.alloc_zeros::<f16>(rows * cols).expect("alloc");
    t_f16(&src, &mut dst, rows, cols).expect("launch");
    let mut want = vec![f16::ZERO; rows * cols];
    cpu(&host, &mut want, 1, rows, cols, cols, rows);
    // Every bit pattern, NaNs included: compared as bits.
    let bits = |v: &[f16]| v.iter().map(|x| x.to_bits()).collect::<Vec<u16>>();
    let got = s.clone_dtoh(&dst).expect("download");
    let wrong = bits(&got)
        .iter()
        .zip(bits(&want))
        .filter(|(a, b)| **a != *b)
        .count();
    assert_eq!(wrong, 0, "{wrong} of {} elements differ", rows * cols);
}

/// `autotune` times every kernel of a `tile = auto` function that can run the call,
/// records the fastest (in the cache folder too, when it is on) and runs it; the
/// output is right during tuning and after it.
#[test]
#[ignore = "needs a CUDA GPU"]
fn autotune_times_the_kernels_that_fit_and_keeps_the_fastest() {
    let s = CudaContext::new(0).expect("GPU 0").default_stream();
    let folder = bankfree::runtime::disk::DiskCache::from_env()
        .dir()
        .map(|d| d.join("tune"));
    // Odd pitches (skew and tile kernels fit), tall and wide (narrow chunks fit
    // too), square (vector kernels fit too).
    for (rows, cols) in [(1023, 1025), (1 << 18, 3), (3, 1 << 18), (1024, 2048)] {
        let host: Vec<f32> = (0..rows * cols).map(|i| (i as f32).cos()).collect();
        let src = s.clone_htod(&host).expect("upload");
        let mut dst = s.alloc_zeros::<f32>(rows * cols).expect("alloc");
        let mut want = vec![0f32; rows * cols];
        cpu(&host, &mut want, 1, rows, cols, cols, rows);

        let tunings = bankfree::autotune(|| t_f32(&src, &mut dst, rows, cols)).expect("autotune");
        assert_eq!(tunings.len(), 1, "{rows}x{cols}: one call, one tuning");
        let t = &tunings[0];
        assert!(t.times.len() >= 2, "{rows}x{cols}: {t:?}");
        // The fastest wins, unless what the call ran untuned is within the margin.
        let fastest = t.times[0].1;
        let winner_ms = t.times.iter().find(|x| x.0 == t.winner).map(|x| x.1);
        assert!(
            winner_ms.is_some_and(|ms| ms <= fastest * (1.0 + bankfree::runtime::tune::MARGIN)),
            "{rows}x{cols}: {t:?}"
        );
        assert!(t.times.windows(2).all(|w| w[0].1 <= w[1].1), "{t:?}");
        assert!(t.times.iter().all(|x| x.1 > 0.0), "{t:?}");
        assert_eq!(
            s.clone_dtoh(&dst).expect("download"),
            want,
            "{rows}x{cols} tuned"
        );
        if let Some(dir) = &folder {
            assert_eq!(
                bankfree::runtime::tune::load(dir, &t.class).as_deref(),
                Some(t.winner.as_str()),
                "{rows}x{cols}: the record in {}",
                dir.display()
            );
        }
        println!("{rows}x{cols}: {} of {:?}", t.winner, t.times);

        // Later calls run the winner; outside `autotune` nothing is timed.
        let mut dst = s.alloc_zeros::<f32>(rows * cols).expect("alloc");
        let again = bankfree::autotune(|| Ok(())).expect("nothing to tune");
        assert!(again.is_empty());
        t_f32(&src, &mut dst, rows, cols).expect("launch");
        assert_eq!(
            s.clone_dtoh(&dst).expect("download"),
            want,
            "{rows}x{cols} after"
        );
    }
}

/// A user's pixel type: derived, allocated with cudarc and transposed with no
/// `unsafe`, every cudarc error converted by `?`.
#[derive(Clone, Copy, Debug, Default, PartialEq, bankfree::Element)]
#[repr(C)]
struct Rgb {
    r: f32,
    g: f32,
    b: f32,
}

#[tiled_transpose(strategy = pad)]
fn t_rgb(
    src: &CudaSlice<Rgb>,
    dst: &mut CudaSlice<Rgb>,
    rows: usize,
    cols: usize,
) -> bankfree::Result<()>;

fn rgb_on_gpu(host: &[Rgb], rows: usize, cols: usize) -> bankfree::Result<Vec<Rgb>> {
    let stream = CudaContext::new(0)?.default_stream();
    let src = stream.clone_htod(host)?;
    let mut dst = stream.alloc_zeros::<Rgb>(host.len())?;
    t_rgb(&src, &mut dst, rows, cols)?;
    Ok(stream.clone_dtoh(&dst)?)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_derived_element_transposes_on_the_gpu() {
    for (rows, cols) in [(1080, 1920), (33, 7), (1, 4097)] {
        let host: Vec<Rgb> = (0..rows * cols)
            .map(|i| Rgb {
                r: i as f32,
                g: -(i as f32),
                b: (i as f32).sqrt(),
            })
            .collect();
        let got = rgb_on_gpu(&host, rows, cols).expect("transposed");
        let mut want = vec![Rgb::default(); host.len()];
        cpu(&host, &mut want, 1, rows, cols, cols, rows);
        assert!(got == want, "{rows} x {cols}");
    }
}
