//! N-d permutes on the GPU: random permutations of ranks 2 to 8, element sizes {1,
//! 2, 4, 8, 12, 16, 20, 24, 28, 32, 48, 64}, contiguous, strided (views into larger tensors) and offset
//! views, each compared bit-exact with a CPU permute over the whole destination
//! buffer (poisoned first, so bytes outside the permuted elements must stay);
//! zero extents, which move nothing; a call of more than 2^32 elements; the
//! attribute. Run on a GPU with `--include-ignored`.

mod common;

use bankfree::cudarc::driver::{CudaContext, CudaStream, DeviceRepr, ValidAsZeroBits};
use bankfree::{permute_with, PermuteOptions};
use common::{Words, F3, F4, F5, F6, F7};
use std::sync::Arc;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn row_major(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * dims[i + 1];
    }
    s
}

fn padded(dims: &[usize], pad: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; dims.len()];
    let mut step = 1;
    for i in (0..dims.len()).rev() {
        s[i] = step;
        step = step * dims[i] + pad[i] * step;
    }
    s
}

fn span(dims: &[usize], strides: &[usize]) -> usize {
    1 + dims
        .iter()
        .zip(strides)
        .map(|(d, s)| (d - 1) * s)
        .sum::<usize>()
}

struct Case {
    dims: Vec<usize>,
    perm: Vec<usize>,
    src_strides: Option<Vec<usize>>,
    dst_strides: Option<Vec<usize>>,
    offset: usize,
}

fn cases() -> Vec<Case> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut out = Vec::new();
    // The layouts, scaled down, then random ones.
    for (dims, perm) in [
        (vec![4usize, 300, 8, 64], vec![0usize, 2, 1, 3]),
        (vec![2, 100, 3, 8, 64], vec![2, 0, 3, 1, 4]),
        (vec![4, 64, 28, 28], vec![0, 2, 3, 1]),
        (vec![4, 28, 28, 64], vec![0, 3, 1, 2]),
        (vec![540, 960, 3], vec![2, 0, 1]),
        (vec![16, 16, 16, 16, 16], vec![4, 3, 2, 1, 0]),
        (vec![8, 7, 6, 5, 4, 3, 32], vec![6, 2, 0, 4, 1, 5, 3]),
        // Small matrices (15 x 32) batched over two axes in a different order on
        // each side: the small kernel with an outer axis.
        (vec![23, 15, 151, 32], vec![2, 0, 3, 1]),
        // Matrices of 2 rows batched over two axes, each destination run at its
        // own phase against the vector: the strip kernel with an outer axis.
        (vec![2, 7, 2, 59_917], vec![1, 0, 3, 2]),
        // Tiles of 2 rows, of 6 by 10 and matrices of 39 x 6: gathers (the
        // last, of 4 bytes or more, the folded tall kernel). Then 1-byte
        // columns of 20011 rows, past the plain small kernel's matrices.
        (vec![2, 65_537, 2], vec![2, 1, 0]),
        (vec![5, 2, 20_011, 2], vec![3, 1, 0, 2]),
        (vec![7, 3, 46, 2, 51, 11], vec![4, 2, 0, 5, 1, 3]),
        (vec![21, 6, 9, 3, 39, 6], vec![3, 5, 2, 0, 1, 4]),
    ] {
        out.push(Case {
            dims,
            perm,
            src_strides: None,
            dst_strides: None,
            offset: 0,
        });
    }
    // A short innermost axis kept in place: its blocks move as wider elements
    // where both pointers start on them (offset 0 and 4), else as the
    // permute's own (offset 1). Then a long outer axis over short inner ones
    // the permute reorders: one source run of columns over several axes, the
    // thin kernel's folded columns (1- and 2-byte elements), at any phase.
    for (dims, perm, offsets) in [
        (
            vec![51usize, 5, 2, 300, 2],
            vec![3usize, 0, 1, 2, 4],
            [0, 1, 4],
        ),
        (vec![37, 400, 14, 2], vec![0, 2, 1, 3], [0, 1, 4]),
        (vec![3000, 40, 3], vec![1, 0, 2], [0, 1, 4]),
        (vec![600, 70, 4], vec![1, 0, 2], [0, 1, 4]),
        (vec![30_011, 5, 2], vec![2, 1, 0], [0, 1, 3]),
        (vec![20_000, 2, 3, 2], vec![3, 2, 1, 0], [0, 1, 3]),
        (vec![3, 9_001, 4, 2], vec![0, 3, 2, 1], [0, 1, 3]),
        // Folded sides of at most 16 items: the 16-wide tile. Then batches of
        // matrices shorter than a thin sub-tile, their columns folded: gathers.
        (
            vec![3, 20, 27, 5, 12, 13],
            vec![1, 5, 2, 3, 4, 0],
            [0, 1, 3],
        ),
        (vec![16, 5_000, 10], vec![2, 1, 0], [0, 1, 3]),
        (vec![6, 2, 12_710, 11], vec![3, 1, 2, 0], [0, 1, 3]),
        (vec![2_000, 40, 6, 3], vec![0, 3, 2, 1], [0, 1, 3]),
        (vec![300, 400, 4, 5], vec![0, 3, 2, 1], [0, 1, 3]),
        // Gathers of whole source rows of 5 elements (4 and 8 bytes): the tall
        // kernel, its rows folded past a tile.
        (vec![40, 3, 50, 37, 5], vec![1, 4, 2, 0, 3], [0, 1, 3]),
        // Pitches divisible by 4, ragged tiles: the wordvec kernel for
        // elements of an odd number of words or 8-byte units where the
        // pointers start on 16 bytes (offsets 0 and 4), the tiles where they
        // do not (offset 1).
        (vec![200, 96], vec![1, 0], [0, 1, 4]),
        (vec![3, 132, 68], vec![0, 2, 1], [0, 1, 4]),
        // Blocks of more than 16 bytes kept innermost (5 f32 or f64, 20 u8 or
        // u16, 18 u16): the wordvec kernel of the widened elements where both
        // pointers start on 16 bytes, the permute's own elements elsewhere
        // (offset 1; offset 4 of u16, 8 bytes; offset 8 of 2-byte elements is 16).
        (vec![200, 96, 5], vec![1, 0, 2], [0, 1, 4]),
        (vec![64, 40, 20], vec![1, 0, 2], [0, 1, 4]),
        (vec![64, 96, 18], vec![1, 0, 2], [0, 1, 8]),
    ] {
        for offset in offsets {
            out.push(Case {
                dims: dims.clone(),
                perm: perm.clone(),
                src_strides: None,
                dst_strides: None,
                offset,
            });
        }
    }
    for i in 0..60 {
        let rank = 2 + (i % 7);
        let budget = 1u64 << 21;
        let mut dims = Vec::new();
        let mut total = 1u64;
        for _ in 0..rank {
            let cap = (budget / total).clamp(1, 70);
            let d = 1 + rng.below(cap) as usize;
            total *= d as u64;
            dims.push(d);
        }
        let mut perm: Vec<usize> = (0..rank).collect();
        for k in (1..rank).rev() {
            perm.swap(k, rng.below(k as u64 + 1) as usize);
        }
        let kind = i % 4;
        let pad = |rng: &mut Rng| (0..rank).map(|_| rng.below(3) as usize).collect::<Vec<_>>();
        let out_dims: Vec<usize> = perm.iter().map(|&a| dims[a]).collect();
        let src_strides = (kind == 1 || kind == 3).then(|| padded(&dims, &pad(&mut rng)));
        let dst_strides = (kind == 2 || kind == 3).then(|| padded(&out_dims, &pad(&mut rng)));
        out.push(Case {
            dims,
            perm,
            src_strides,
            dst_strides,
            offset: if kind == 3 { 1 + (i % 5) } else { 0 },
        });
    }
    out
}

/// Runs every case for element type `T` (`make` turns noise into values).
fn run_all<T>(stream: &Arc<CudaStream>, make: impl Fn(u64) -> T) -> usize
where
    T: DeviceRepr + ValidAsZeroBits + Copy + PartialEq + std::fmt::Debug + Unpin + 'static,
{
    let mut rng = Rng(12345);
    let mut ran = 0;
    for c in cases() {
        let out_dims: Vec<usize> = c.perm.iter().map(|&a| c.dims[a]).collect();
        let ss = c.src_strides.clone().unwrap_or_else(|| row_major(&c.dims));
        let ds = c
            .dst_strides
            .clone()
            .unwrap_or_else(|| row_major(&out_dims));
        let (n, m) = (
            span(&c.dims, &ss) + c.offset,
            span(&out_dims, &ds) + c.offset,
        );
        let host: Vec<T> = (0..n).map(|_| make(rng.next())).collect();
        let poison: Vec<T> = (0..m).map(|_| make(rng.next())).collect();
        let mut want = poison.clone();
        let rank = c.dims.len();
        let mut idx = vec![0usize; rank];
        for _ in 0..c.dims.iter().product::<usize>() {
            let s: usize = (0..rank).map(|a| idx[a] * ss[a]).sum();
            let d: usize = (0..rank).map(|i| idx[c.perm[i]] * ds[i]).sum();
            want[c.offset + d] = host[c.offset + s];
            for a in (0..rank).rev() {
                idx[a] += 1;
                if idx[a] < c.dims[a] {
                    break;
                }
                idx[a] = 0;
            }
        }
        let src = stream.clone_htod(&host).expect("upload");
        let mut dst = stream.clone_htod(&poison).expect("upload");
        let opts = PermuteOptions {
            src_strides: c.src_strides.as_deref(),
            dst_strides: c.dst_strides.as_deref(),
            ..PermuteOptions::default()
        };
        {
            let sv = src.slice(c.offset..);
            let mut dv = dst.slice_mut(c.offset..);
            permute_with(&sv, &mut dv, &c.dims, &c.perm, &opts)
                .unwrap_or_else(|e| panic!("{:?} {:?}: {e}", c.dims, c.perm));
        }
        let got = stream.clone_dtoh(&dst).expect("download");
        assert!(
            got == want,
            "{}-byte {:?} perm {:?} strides {:?}/{:?} offset {}: output differs",
            std::mem::size_of::<T>(),
            c.dims,
            c.perm,
            c.src_strides,
            c.dst_strides,
            c.offset
        );
        ran += 1;
    }
    ran
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn random_permutes_are_bit_exact_for_every_element_size() {
    let stream = CudaContext::new(0).expect("GPU 0").default_stream();
    let mut ran = 0;
    ran += run_all(&stream, |x| x as u8);
    ran += run_all(&stream, |x| x as u16);
    ran += run_all(&stream, |x| x as u32);
    ran += run_all(&stream, |x| x);
    ran += run_all(&stream, |x| {
        F3([x as u32, (x >> 21) as u32, (x >> 40) as u32])
    });
    ran += run_all(&stream, |x| {
        F4([
            x as u32,
            (x >> 8) as u32,
            (x >> 16) as u32,
            (x >> 32) as u32,
        ])
    });
    ran += run_all(&stream, |x| {
        F5(std::array::from_fn(|i| (x >> (7 * i)) as u32))
    });
    ran += run_all(&stream, |x| {
        F6(std::array::from_fn(|i| (x >> (6 * i)) as u32))
    });
    ran += run_all(&stream, |x| {
        F7(std::array::from_fn(|i| (x >> (5 * i)) as u32))
    });
    // 32, 48 and 64 bytes: square tiles of 16-byte planes.
    ran += run_all(&stream, |x| {
        Words::<8>(std::array::from_fn(|i| (x >> (4 * i)) as u32))
    });
    ran += run_all(&stream, |x| {
        Words::<12>(std::array::from_fn(|i| (x >> (3 * i)) as u32 ^ i as u32))
    });
    ran += run_all(&stream, |x| {
        Words::<16>(std::array::from_fn(|i| (x >> (2 * i)) as u32 ^ i as u32))
    });
    println!("{ran} permutes, all bit-exact");
    assert_eq!(ran, 12 * cases().len());
}

mod attribute {
    use bankfree::cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut};
    use bankfree::half::f16;
    use bankfree::tiled_permute;

    #[tiled_permute(perm = [0, 2, 3, 1])]
    pub fn nchw_to_nhwc(
        src: &CudaSlice<f16>,
        dst: &mut CudaSlice<f16>,
        dims: [usize; 4],
    ) -> bankfree::Result<()>;

    #[tiled_permute(perm = [2, 0, 1], strategy = pad)]
    pub fn generic<T: bankfree::Element>(
        src: &CudaView<'_, T>,
        dst: &mut CudaViewMut<'_, T>,
        dims: [usize; 3],
        src_strides: [usize; 3],
        dst_strides: [usize; 3],
        stream: &CudaStream,
    ) -> bankfree::Result<()>;
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_attribute_permutes_like_the_cpu() {
    use bankfree::half::f16;
    let stream = CudaContext::new(0).expect("GPU 0").default_stream();
    let dims = [3usize, 5, 7, 9];
    let n: usize = dims.iter().product();
    let host: Vec<f16> = (0..n).map(|i| f16::from_f32(i as f32)).collect();
    let src = stream.clone_htod(&host).expect("upload");
    let mut dst = stream.alloc_zeros::<f16>(n).expect("alloc");
    attribute::nchw_to_nhwc(&src, &mut dst, dims).expect("permutes");
    let got = stream.clone_dtoh(&dst).expect("download");
    let (c, h, w) = (dims[1], dims[2], dims[3]);
    for b in 0..dims[0] {
        for ci in 0..c {
            for y in 0..h {
                for x in 0..w {
                    let s = ((b * c + ci) * h + y) * w + x;
                    let d = ((b * h + y) * w + x) * c + ci;
                    assert_eq!(got[d], host[s]);
                }
            }
        }
    }
    // A generic strided one: HWC with a padded row pitch -> CHW.
    let (hh, ww, cc) = (6usize, 11usize, 3usize);
    let src_strides = [(ww + 2) * cc, cc, 1];
    let host: Vec<u32> = (0..hh * (ww + 2) * cc).map(|i| i as u32).collect();
    let src = stream.clone_htod(&host).expect("upload");
    let mut dst = stream.alloc_zeros::<u32>(hh * ww * cc).expect("alloc");
    let dst_strides = [hh * ww, ww, 1];
    {
        let sv = src.slice(..);
        let mut dv = dst.slice_mut(..);
        attribute::generic(
            &sv,
            &mut dv,
            [hh, ww, cc],
            src_strides,
            dst_strides,
            &stream,
        )
        .expect("permutes");
    }
    let got = stream.clone_dtoh(&dst).expect("download");
    for y in 0..hh {
        for x in 0..ww {
            for ch in 0..cc {
                assert_eq!(
                    got[ch * hh * ww + y * ww + x],
                    host[y * src_strides[0] + x * cc + ch]
                );
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn zero_extents_move_nothing_and_keep_dst() {
    let stream = CudaContext::new(0).expect("GPU 0").default_stream();
    // Empty tensors on both sides, of ranks 1 to 4.
    for (dims, perm) in [
        (vec![0usize], vec![0usize]),
        (vec![3, 0, 5], vec![2, 1, 0]),
        (vec![0, 7], vec![1, 0]),
        (vec![2, 3, 4, 0], vec![3, 0, 2, 1]),
    ] {
        let src = stream.alloc_zeros::<f32>(1).expect("alloc");
        let poison = vec![7.5f32; 16];
        let mut dst = stream.clone_htod(&poison).expect("upload");
        permute_with(&src, &mut dst, &dims, &perm, &PermuteOptions::default())
            .unwrap_or_else(|e| panic!("{dims:?} {perm:?}: {e}"));
        assert_eq!(stream.clone_dtoh(&dst).expect("download"), poison);
    }
}

/// `f(start, chunk)` over `out` split in one chunk per core.
fn par_chunks<T: Send>(out: &mut [T], f: impl Fn(usize, &mut [T]) + Sync) {
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get());
    let per = out.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        for (k, chunk) in out.chunks_mut(per).enumerate() {
            let f = &f;
            s.spawn(move || f(k * per, chunk));
        }
    });
}

fn byte_of(i: usize) -> u8 {
    let x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (x >> 56) as u8 ^ (x >> 29) as u8
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn more_than_2_pow_32_elements_are_bit_exact() {
    // 4.5 * 10^9 one-byte elements: a batch of 6 transposes of 25000 x 30000 over
    // two batch axes, past 32-bit element indices.
    let dims = [3usize, 2, 25000, 30000];
    assert!(dims.iter().product::<usize>() > 1 << 32);
    bytes_are_bit_exact(&dims, &[1, 3, 0, 2]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn batches_past_32_bit_item_quotients_are_bit_exact() {
    // 2.8 * 10^6 matrices of 4 x 3 bytes whose batch runs over two axes, the
    // inner one of 133152 items: `batch * extent` is past 2^32, where the small
    // kernel splits its items by exact quotients.
    bytes_are_bit_exact(&[133_152, 21, 4, 3], &[1, 0, 3, 2]);
}

/// Permutes a contiguous byte tensor of `dims` by `perm` on GPU 0 and checks
/// every destination byte against its source byte, on all cores.
fn bytes_are_bit_exact(dims: &[usize], perm: &[usize]) {
    let stream = CudaContext::new(0).expect("GPU 0").default_stream();
    let n: usize = dims.iter().product();
    let mut host = vec![0u8; n];
    par_chunks(&mut host, |start, chunk| {
        for (k, v) in chunk.iter_mut().enumerate() {
            *v = byte_of(start + k);
        }
    });
    let src = stream.clone_htod(&host).expect("upload");
    drop(host);
    let mut dst = stream.alloc_zeros::<u8>(n).expect("alloc");
    permute_with(&src, &mut dst, dims, perm, &PermuteOptions::default()).expect("permutes");
    let got = stream.clone_dtoh(&dst).expect("download");
    let out: Vec<usize> = perm.iter().map(|&a| dims[a]).collect();
    let ss = row_major(dims);
    let wrong = std::sync::atomic::AtomicUsize::new(0);
    let mut got = got;
    par_chunks(&mut got, |start, chunk| {
        // Destination index d -> its output multi-index -> the source index.
        let mut bad = 0;
        for (k, v) in chunk.iter().enumerate() {
            let mut rest = start + k;
            let mut s = 0;
            for i in (0..out.len()).rev() {
                s += (rest % out[i]) * ss[perm[i]];
                rest /= out[i];
            }
            bad += usize::from(*v != byte_of(s));
        }
        wrong.fetch_add(bad, std::sync::atomic::Ordering::Relaxed);
    });
    assert_eq!(wrong.into_inner(), 0, "{dims:?} {perm:?}: elements differ");
}
