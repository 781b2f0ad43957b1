//! Functions written by `#[tiled_transpose]`, run on a CUDA GPU against a CPU
//! transpose. Run there with `--include-ignored`.

use bankfree::cudarc::driver::{CudaContext, CudaSlice, CudaStream, CudaView, CudaViewMut};
use bankfree::gen::{sim::transpose_elems, Shape};
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
