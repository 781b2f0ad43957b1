//! An image transpose: read an 8-bit grayscale, RGB or RGBA PNG or JPEG,
//! transpose it on the GPU, write the result, and check it against a CPU transpose.
//! With no argument (or an empty IN) it makes a 1920 x 1080 RGB test image.
//!
//! `cargo run --release --features images --example image_transpose [-- IN.png [OUT.png]]`
//! (the feature adds the PNG and JPEG decoders).
//!
//! Grayscale moves as 1-byte elements and RGBA as 4-byte ones. RGB (3 bytes, not an
//! element size bankfree supports) is widened to RGBA for the GPU and narrowed back.

use bankfree::cudarc::driver::{CudaContext, CudaSlice};
use bankfree::gen::{check::sim::transpose_elems, Shape};
use bankfree::runtime::probe;
use bankfree::tiled_transpose;
use image::{DynamicImage, GrayImage, RgbImage, RgbaImage};
use std::process::ExitCode;
use std::time::Instant;

#[tiled_transpose(strategy = swizzle)]
fn transpose_gray(
    src: &CudaSlice<u8>,
    dst: &mut CudaSlice<u8>,
    rows: usize,
    cols: usize,
) -> bankfree::Result<()>;

#[tiled_transpose(strategy = swizzle)]
fn transpose_rgba(
    src: &CudaSlice<u32>,
    dst: &mut CudaSlice<u32>,
    rows: usize,
    cols: usize,
) -> bankfree::Result<()>;

fn test_image() -> DynamicImage {
    let img = RgbImage::from_fn(1920, 1080, |x, y| {
        let checker = if (x / 64 + y / 64) % 2 == 0 { 255 } else { 64 };
        image::Rgb([(x * 255 / 1919) as u8, (y * 255 / 1079) as u8, checker])
    });
    DynamicImage::ImageRgb8(img)
}

/// Transposes `pixels` (rows x cols) on the GPU; returns the result and the GPU time.
fn gpu<T: bankfree::cudarc::driver::DeviceRepr + bankfree::Element + Default>(
    pixels: &[T],
    rows: usize,
    cols: usize,
    f: fn(&CudaSlice<T>, &mut CudaSlice<T>, usize, usize) -> bankfree::Result<()>,
) -> Result<(Vec<T>, f64), String> {
    let stream = CudaContext::new(0)
        .map_err(|e| e.to_string())?
        .default_stream();
    let src = stream.clone_htod(pixels).map_err(|e| e.to_string())?;
    let mut dst = stream
        .clone_htod(&vec![T::default(); pixels.len()])
        .map_err(|e| e.to_string())?;
    f(&src, &mut dst, rows, cols).map_err(|e| e.to_string())?; // compile or load, once
    stream.synchronize().map_err(|e| e.to_string())?;
    let t = Instant::now();
    f(&src, &mut dst, rows, cols).map_err(|e| e.to_string())?;
    stream.synchronize().map_err(|e| e.to_string())?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    Ok((stream.clone_dtoh(&dst).map_err(|e| e.to_string())?, ms))
}

fn check<T: Copy + PartialEq>(
    pixels: &[T],
    got: &[T],
    rows: usize,
    cols: usize,
) -> Result<(), String> {
    let mut want = pixels.to_vec();
    transpose_elems(&Shape::new(rows as u64, cols as u64), pixels, &mut want)
        .map_err(|e| e.to_string())?;
    if want == got {
        Ok(())
    } else {
        Err("the GPU transpose differs from the CPU transpose".into())
    }
}

fn run(input: Option<&str>, output: &str) -> Result<(), String> {
    let img = match input {
        Some(path) => image::open(path).map_err(|e| format!("cannot read {path}: {e}"))?,
        None => test_image(),
    };
    let (w, h) = (img.width() as usize, img.height() as usize);
    let (rows, cols) = (h, w); // an image is `height` rows of `width` pixels
    let out: DynamicImage = match img {
        DynamicImage::ImageLuma8(g) => {
            let (t, ms) = gpu(g.as_raw(), rows, cols, transpose_gray)?;
            check(g.as_raw(), &t, rows, cols)?;
            println!("{w} x {h} grayscale: transposed on the GPU in {ms:.3} ms, checked");
            DynamicImage::ImageLuma8(GrayImage::from_raw(h as u32, w as u32, t).ok_or("bad size")?)
        }
        DynamicImage::ImageRgb8(_) | DynamicImage::ImageRgba8(_) => {
            let rgb = matches!(img, DynamicImage::ImageRgb8(_));
            let rgba = img.to_rgba8();
            let px: Vec<u32> = rgba
                .as_raw()
                .chunks_exact(4)
                .map(|p| u32::from_le_bytes([p[0], p[1], p[2], p[3]]))
                .collect();
            let (t, ms) = gpu(&px, rows, cols, transpose_rgba)?;
            check(&px, &t, rows, cols)?;
            let bytes: Vec<u8> = t.iter().flat_map(|p| p.to_le_bytes()).collect();
            let out = RgbaImage::from_raw(h as u32, w as u32, bytes).ok_or("bad size")?;
            println!(
                "{w} x {h} {}: transposed on the GPU in {ms:.3} ms, checked",
                if rgb { "RGB" } else { "RGBA" }
            );
            if rgb {
                DynamicImage::ImageRgb8(DynamicImage::ImageRgba8(out).to_rgb8())
            } else {
                DynamicImage::ImageRgba8(out)
            }
        }
        other => {
            return Err(format!(
                "{:?} images are not supported: use 8-bit grayscale, RGB or RGBA",
                other.color()
            ))
        }
    };
    out.save(output)
        .map_err(|e| format!("cannot write {output}: {e}"))?;
    println!("wrote {output} ({} x {})", out.width(), out.height());
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(e) = probe() {
        eprintln!("not run on a GPU: {e}");
        return ExitCode::from(2);
    }
    let output = args.get(1).map_or("transposed.png", String::as_str);
    match run(
        args.first().map(String::as_str).filter(|s| !s.is_empty()),
        output,
    ) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
