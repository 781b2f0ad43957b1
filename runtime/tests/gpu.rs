//! On a CUDA GPU: compile, cache, launch, and compare with a CPU transpose.
//! Run there with `--include-ignored`.
#![allow(unsafe_code)] // an upgraded pointer

mod common;

use bankfree_gen::{Kernel, Shape, Strategy, TransposeSpec};
use bankfree_runtime::{stats, transpose, transpose_first, Error, KernelSource};
use common::{check, kernel, reference, shapes, stream, Rng, F3};
use cudarc::driver::CudaContext;
use sha2::Digest;

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_strategy_and_element_size() {
    let s = stream();
    for strategy in [
        Strategy::Naive,
        Strategy::None,
        Strategy::Pad(None),
        Strategy::Xor,
        Strategy::Rotate,
    ] {
        for shape in shapes() {
            check(&s, &kernel(32, 1, strategy), &shape, |x| x as u8);
            check(&s, &kernel(32, 2, strategy), &shape, |x| x as u16);
            check(&s, &kernel(32, 4, strategy), &shape, |x| x as u32);
            check(&s, &kernel(32, 8, strategy), &shape, |x| x);
            check(&s, &kernel(32, 12, strategy), &shape, |x| {
                F3([x as u32, (x >> 21) as u32, (x >> 40) as u32])
            });
            check(&s, &kernel(32, 16, strategy), &shape, |x| {
                u128::from(x) << 64 | u128::from(!x)
            });
        }
    }
    check(
        &s,
        &kernel(32, 4, Strategy::Xor),
        &Shape::new(1 << 21, 3),
        |x| x as u32,
    );
    check(
        &s,
        &kernel(32, 4, Strategy::Xor),
        &Shape::new(3, 1 << 21),
        |x| x as u32,
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn other_tiles_and_dynamic_shared_memory() {
    let s = stream();
    // 64 x 64 x 16 bytes = 64 KB: dynamic shared memory with a raised limit.
    let big = kernel(64, 16, Strategy::Xor);
    assert!(big.shared_bytes() > 48 * 1024);
    for shape in shapes() {
        check(&s, &big, &shape, |x| u128::from(x) * 3);
        check(&s, &kernel(8, 4, Strategy::Xor), &shape, |x| x as u32);
        check(&s, &kernel(16, 2, Strategy::Rotate), &shape, |x| x as u16);
        check(&s, &kernel(64, 1, Strategy::Pad(None)), &shape, |x| x as u8);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn views_streams_and_errors() {
    let s = stream();
    let k = kernel(32, 4, Strategy::Pad(None));
    let shape = Shape::new(50, 40);
    let host: Vec<u32> = (0..2000 + 17).map(|i| i * 7 + 1).collect();
    let src = s.clone_htod(&host).expect("upload");
    let mut dst = s.alloc_zeros::<u32>(2000 + 5).expect("alloc");
    // Offset views, and an explicit second stream of the same context.
    let other = s.context().new_stream().expect("stream");
    {
        let view = src.slice(17..);
        let mut out = dst.slice_mut(5..);
        transpose(&k, &view, &mut out, &shape, Some(&*other)).expect("launch");
    }
    other.synchronize().expect("sync");
    let got = s.clone_dtoh(&dst).expect("download");
    let mut want = vec![0u32; 2005];
    reference(&shape, &host[17..], &mut want[5..]);
    assert_eq!(got, want);

    // Errors before any launch; nothing written.
    let mut small = s.alloc_zeros::<u32>(1999).expect("alloc");
    let e = transpose(&k, &src, &mut small, &shape, None).unwrap_err();
    assert!(matches!(e, Error::Shape(_)), "{e}");
    // Source and destination of different types do not type-check; a type of the
    // wrong size for the kernel is an error.
    let mut bytes = s.alloc_zeros::<u8>(4000).expect("alloc");
    let src8 = s.alloc_zeros::<u8>(4000).expect("alloc");
    let e = transpose(&k, &src8, &mut bytes, &Shape::new(50, 40), None).unwrap_err();
    assert!(
        matches!(
            e,
            Error::ElementSize {
                kernel_bytes: 4,
                rust_bytes: 1,
                ..
            }
        ),
        "{e}"
    );
    let poison = s.clone_htod(&[0xDEADu32; 8]).expect("upload");
    let mut out = poison.clone();
    transpose(&k, &src, &mut out, &Shape::new(0, 8), None).expect("empty is Ok");
    assert_eq!(s.clone_dtoh(&out).expect("download"), vec![0xDEADu32; 8]);
}

/// A `CudaSlice` upgraded from another library's pointer can start anywhere: the
/// vector kernel is refused for it (its address, not its type, is checked), the
/// `vec = 1` kernel runs, and the context survives.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_misaligned_upgraded_slice_runs_the_scalar_kernel() {
    use cudarc::driver::DevicePtr;
    let s = stream();
    let spec = TransposeSpec::new(32, 4, Strategy::Pad(None)).expect("spec");
    let fast = bankfree_gen::select::choice::fast_kernel(&spec).expect("f32 has a vec kernel");
    assert!(fast.spec().geometry.vec > 1);
    let vec = KernelSource::from_kernel(&fast);
    let scalar = kernel(32, 4, Strategy::Pad(None));
    let shape = Shape::new(64, 96);
    let n = 64 * 96;
    let host: Vec<u32> = (0..n as u32 + 1).map(|i| i * 3 + 1).collect();
    let whole = s.clone_htod(&host).expect("upload");
    let mut out = s.alloc_zeros::<u32>(n).expect("alloc");
    let base = whole.device_ptr(&s).0;
    // SAFETY: `whole` holds n + 1 elements, so base + 4 bytes holds n; the upgraded
    // slice is leaked below, before `whole` is freed, so nothing is freed twice.
    let src = unsafe { s.upgrade_device_ptr::<u32>(base + 4, n) };
    let e = transpose(&vec, &src, &mut out, &shape, None).unwrap_err();
    assert!(matches!(e, Error::Unfit { .. }), "{e}");
    transpose_first(&[vec, scalar], &src, &mut out, &shape, None).expect("scalar kernel");
    s.synchronize().expect("the context survives");
    let mut want = vec![0u32; n];
    reference(&shape, &host[1..], &mut want);
    assert_eq!(s.clone_dtoh(&out).expect("download"), want);
    let _ = src.leak();
}

/// A batch of small 12-byte matrices written through destination views that
/// start 0 to 3 elements into an allocation: the small kernel gathers words, and
/// stores 16-byte vectors only where the view's address allows (every phase of a
/// word in a vector); every element lands once, and nothing beside the view is
/// touched.
#[test]
#[ignore = "needs a CUDA GPU"]
fn small_kernels_of_word_arrays_store_at_every_dst_phase() {
    let s = stream();
    let small = Kernel::build(TransposeSpec::small(12).expect("spec")).expect("builds");
    assert!(small.spec().geometry.gathers_words());
    let k = KernelSource::from_kernel(&small);
    for shape in [
        Shape::batched(2049, 5, 7),
        Shape::batched(77, 33, 31),
        Shape::batched(1, 2, 2),
    ] {
        let n = usize::try_from(shape.dst_elems().expect("shape")).expect("fits");
        let mut rng = Rng(0x5DEE_CE66 ^ shape.batch);
        let mut f3 = || F3([rng.next() as u32, rng.next() as u32, rng.next() as u32]);
        let host: Vec<F3> = (0..n).map(|_| f3()).collect();
        let poison: Vec<F3> = (0..n + 3).map(|_| f3()).collect();
        let src = s.clone_htod(&host).expect("upload");
        for off in 0..4 {
            let mut whole = s.clone_htod(&poison).expect("upload");
            let mut view = whole.slice_mut(off..off + n);
            transpose(&k, &src, &mut view, &shape, None)
                .unwrap_or_else(|e| panic!("{shape:?} at +{off}: {e}"));
            let got = s.clone_dtoh(&whole).expect("download");
            let mut want = poison.clone();
            reference(&shape, &host, &mut want[off..off + n]);
            assert!(got == want, "{shape:?} at +{off}: wrong result");
        }
    }
}

/// Buffers of another context are refused before anything asks them for an
/// address (that would make a stream wait on, or record, another context's
/// events): both contexts keep working afterwards.
#[test]
#[ignore = "needs a CUDA GPU"]
fn buffers_of_another_context_are_refused_before_any_stream_call() {
    let s = stream();
    let other = CudaContext::new_non_primary(0, 0).expect("a second context on GPU 0");
    let o = other.default_stream();
    // A second stream in each context turns on cudarc's event tracking between them.
    let (_s2, _o2) = (
        s.context().new_stream().expect("stream"),
        other.new_stream().expect("stream"),
    );
    let k = kernel(32, 4, Strategy::Pad(None));
    let ks = [k.clone(), kernel(32, 4, Strategy::Xor)];
    let shape = Shape::new(64, 48);
    let host: Vec<u32> = (0..64 * 48).collect();
    let src = s.clone_htod(&host).expect("upload");
    let mut dst = o.alloc_zeros::<u32>(64 * 48).expect("alloc");
    for launch_on in [None, Some(&*s), Some(&*o)] {
        let e = transpose(&k, &src, &mut dst, &shape, launch_on).unwrap_err();
        assert!(matches!(e, Error::Context { .. }), "{e}");
        let e = transpose_first(&ks, &src, &mut dst, &shape, launch_on).unwrap_err();
        assert!(matches!(e, Error::Context { .. }), "{e}");
    }
    let mut want = vec![0u32; 64 * 48];
    reference(&shape, &host, &mut want);
    let mut out = s.alloc_zeros::<u32>(64 * 48).expect("alloc");
    transpose(&k, &src, &mut out, &shape, None).expect("the first context works");
    assert_eq!(s.clone_dtoh(&out).expect("download"), want);
    let src2 = o.clone_htod(&host).expect("upload");
    transpose_first(&ks, &src2, &mut dst, &shape, None).expect("the second context works");
    assert_eq!(o.clone_dtoh(&dst).expect("download"), want);
}

/// Run by `a_fresh_process_loads_from_the_disk_cache`.
#[test]
#[ignore = "helper: started as a child process"]
fn gpu_child() {
    if std::env::var_os("BANKFREE_CACHE_DIR").is_none()
        || std::env::var_os("BF_GPU_CHILD").is_none()
    {
        return;
    }
    let s = stream();
    let k = kernel(32, 4, Strategy::Xor);
    let t = std::time::Instant::now();
    check(&s, &k, &Shape::new(300, 200), |x| x as u32);
    let st = stats();
    println!(
        "CHILD compiles={} disk_hits={} first_call_ms={:.1}",
        st.compiles,
        st.disk_hits,
        t.elapsed().as_secs_f64() * 1e3
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_fresh_process_loads_from_the_disk_cache() {
    let dir = std::env::temp_dir().join(format!("bankfree-gpu-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let run = || {
        let out = std::process::Command::new(std::env::current_exe().expect("exe"))
            .args(["--ignored", "--exact", "gpu_child", "--nocapture"])
            .env("BANKFREE_CACHE_DIR", &dir)
            .env("BF_GPU_CHILD", "1")
            .output()
            .expect("child");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let line = text
            .lines()
            .find(|l| l.starts_with("CHILD"))
            .unwrap_or("")
            .to_string();
        eprintln!("{line}");
        line
    };
    assert!(run().starts_with("CHILD compiles=1 disk_hits=0"));
    assert!(run().starts_with("CHILD compiles=0 disk_hits=1"));
    // An entry with a valid checksum that the driver refuses (not a CUBIN) is
    // read once, dropped and compiled again; the next process reads the new one.
    let mut poisoned = 0;
    for entry in std::fs::read_dir(&dir).expect("cache folder").flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "bfbin") {
            let mut data = std::fs::read(&path).expect("entry");
            let garbage = b"not a CUBIN, but its checksum is right".to_vec();
            data.truncate(57);
            data[49..57].copy_from_slice(&(garbage.len() as u64).to_le_bytes());
            data.extend_from_slice(&sha2::Sha256::digest(&garbage));
            data.extend_from_slice(&garbage);
            std::fs::write(&path, data).expect("poison");
            poisoned += 1;
        }
    }
    assert_eq!(poisoned, 1);
    assert!(run().starts_with("CHILD compiles=1 disk_hits=1"));
    assert!(run().starts_with("CHILD compiles=0 disk_hits=1"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn calls_past_two_to_the_32_elements_run_the_64_bit_build() {
    // 65,568 x 65,536 bytes: 2^32 + 2^21 elements, so the 32-bit build cannot run it
    // (its last indices would wrap) and the launcher takes the 64-bit one.
    let s = stream();
    let (rows, cols) = (65_568u64, 65_536u64);
    let shape = Shape::new(rows, cols);
    let k = kernel(32, 1, Strategy::Pad(None));
    assert!(!bankfree_gen::check::index32::proven(k.geometry(), &shape));
    let value = |r: u64, c: u64| (r.wrapping_mul(0x9E37) ^ c.wrapping_mul(0x85EB) ^ (r >> 9)) as u8;
    let host: Vec<u8> = (0..rows * cols)
        .map(|i| value(i / cols, i % cols))
        .collect();
    let src = s.clone_htod(&host).expect("upload 4 GiB");
    drop(host);
    let mut dst = s
        .alloc_zeros::<u8>((rows * cols) as usize)
        .expect("alloc 4 GiB");
    transpose(&k, &src, &mut dst, &shape, None).expect("runs");
    let got = s.clone_dtoh(&dst).expect("download");
    // dst (c, r) = src (r, c): every element of the first and last 40 rows and
    // columns of src, and a spread of 2^24 others.
    let mut rng = Rng(7);
    let edges = (0..40)
        .chain(rows - 40..rows)
        .flat_map(|r| (0..cols).map(move |c| (r, c)));
    let edges_c = (0..40)
        .chain(cols - 40..cols)
        .flat_map(|c| (0..rows).map(move |r| (r, c)));
    let spread = (0..1 << 24).map(|_| (rng.next() % rows, rng.next() % cols));
    for (r, c) in edges.chain(edges_c).chain(spread) {
        let at = (c * rows + r) as usize;
        assert_eq!(got[at], value(r, c), "dst[{c}][{r}]");
    }
}
