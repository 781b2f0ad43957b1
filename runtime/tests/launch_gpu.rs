//! On a CUDA GPU: how kernels are launched, checked bit-exact against a CPU
//! transpose: tiles taken down the columns, calls chained as programmatic
//! dependents and captured in a graph, and the split thin kernel of small
//! calls. Run there with `--include-ignored`.
#![allow(unsafe_code)] // a captured stream's event tracking turned off

mod common;

use bankfree_gen::{Kernel, Shape, Strategy, TransposeSpec};
use bankfree_runtime::{transpose, KernelSource};
use common::{check, kernel, shapes, stream, Rng, F3};
use cudarc::driver::CudaContext;

/// Tile kernels taking their tiles down the columns (the H200 class's order, and
/// wide calls' of the realign kernels), built explicitly so that they run
/// whatever this GPU's class and shape: every default tile, skew and realign
/// kernel of each element size, on the suite's shapes and larger ragged and
/// batched ones, bit-exact; and the class the launcher reads is one of the
/// measured ones.
#[test]
#[ignore = "needs a CUDA GPU"]
fn tiles_taken_down_the_columns_are_exact() {
    use bankfree_gen::kernel::order::TileOrder;
    use bankfree_gen::select::choice::auto_kernels;
    use bankfree_gen::Form;
    let s = stream();
    let class = bankfree_runtime::device::class(s.context());
    assert!(bankfree_gen::select::device::GpuClass::ALL.contains(&class));
    // Tiles over several rows and columns of tiles each way, ragged and pitched.
    let mut shapes = shapes();
    shapes.extend([Shape::new(1000, 777), Shape::batched(3, 130, 260)]);
    let mut ran = 0;
    for e in [1u32, 2, 4, 8, 12, 16] {
        let spec = TransposeSpec::new(32, e, Strategy::Pad(None)).expect("spec");
        let list = auto_kernels(&Kernel::build(spec).expect("builds"));
        for k in list.iter().filter(|k| {
            matches!(
                k.spec().geometry.form,
                Form::Tile | Form::Skew | Form::Realign
            )
        }) {
            let down = k.with_order(TileOrder::Columns).expect("tile forms");
            let src = KernelSource::from_kernel(&down);
            assert!(src.entry().ends_with("_tc"), "{}", src.entry());
            for shape in &shapes {
                if bankfree_gen::check::fit::refusal(src.geometry(), shape).is_some() {
                    continue;
                }
                match e {
                    1 => check(&s, &src, shape, |x| x as u8),
                    2 => check(&s, &src, shape, |x| x as u16),
                    4 => check(&s, &src, shape, |x| x as u32),
                    8 => check(&s, &src, shape, |x| x),
                    12 => check(&s, &src, shape, |x| {
                        F3([x as u32, (x >> 20) as u32, (x >> 40) as u32])
                    }),
                    _ => check(&s, &src, shape, |x| u128::from(x) << 64 | u128::from(!x)),
                }
                ran += 1;
            }
        }
    }
    assert!(ran >= 20, "only {ran} runs");
}

/// Calls back to back, each reading what the one before it wrote: on sm_90 and
/// later each kernel launches as a programmatic dependent of the one before
/// and may start while it drains, so a kernel that read before its wait would
/// read stale data here. Then the same round trips captured in a CUDA graph
/// and replayed.
#[test]
#[ignore = "needs a CUDA GPU"]
fn chained_calls_and_captured_graphs_are_exact() {
    use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
    let ctx = CudaContext::new(0).expect("GPU 0");
    // SAFETY: every buffer below lives on the one stream `s`, which orders all
    // their uses (a captured stream cannot wait on events recorded outside it).
    unsafe { ctx.disable_event_tracking() };
    let s = ctx.new_stream().expect("a stream that can be captured");
    let (there, back) = (Shape::new(1027, 2049), Shape::new(2049, 1027));
    let n = there.src_elems().expect("shape") as usize;
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let host: Vec<u32> = (0..n).map(|_| rng.next() as u32).collect();
    let mut q = s.clone_htod(&host).expect("upload");
    let mut p = s.alloc_zeros::<u32>(n).expect("alloc");
    for k in [
        kernel(32, 4, Strategy::Pad(None)),
        kernel(64, 4, Strategy::Xor),
    ] {
        // Each round trip: p = q^T, then q = p^T, which must give q back.
        let trip = |p: &mut _, q: &mut _| {
            transpose(&k, &*q, p, &there, None).expect("there");
            transpose(&k, &*p, q, &back, None).expect("back");
        };
        for _ in 0..16 {
            trip(&mut p, &mut q);
        }
        assert_eq!(s.clone_dtoh(&q).expect("download"), host, "{}", k.entry());
        s.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .expect("capture");
        for _ in 0..4 {
            trip(&mut p, &mut q);
        }
        let graph = s
            .end_capture(CUgraphInstantiate_flags(0))
            .expect("instantiate")
            .expect("a graph");
        s.memcpy_htod(&vec![0u32; n], &mut p).expect("clear p");
        for _ in 0..3 {
            graph.launch().expect("replay");
        }
        assert_eq!(
            s.clone_dtoh(&q).expect("download"),
            host,
            "{} replayed",
            k.entry()
        );
    }
}

/// Every width the split thin kernel is built for, through the runtime: calls
/// of a few tiles (which take the split twin) with pitched destinations, and
/// one of as many tiles as the GPU holds twice over (which keeps the unsplit
/// kernel), each compared whole with a CPU transpose.
#[test]
#[ignore = "needs a CUDA GPU"]
fn thin_calls_of_every_split_width_are_exact() {
    use bankfree_gen::kernel::thin::{split_min_cols, THIN_MAX_COLS};
    use bankfree_gen::select::split::thin_split;
    let s = stream();
    let sms = bankfree_runtime::device::sm_count(s.context()).expect("SM count");
    for e in [1u32, 2] {
        let thin = Kernel::build(TransposeSpec::thin(e).expect("spec")).expect("builds");
        let src = KernelSource::from_kernel(&thin);
        for cols in split_min_cols(e)..=THIN_MAX_COLS as u32 {
            let rows = 3001 + 7 * u64::from(cols);
            let one = thin.with_width(cols).expect("a thin width");
            assert!(thin_split(&one, 1, rows, sms), "{e}-byte {cols}");
            let shape = Shape {
                dst_ld: rows + u64::from(cols % 5),
                ..Shape::new(rows, u64::from(cols))
            };
            match e {
                1 => check(&s, &src, &shape, |x| x as u8),
                _ => check(&s, &src, &shape, |x| x as u16),
            }
        }
        let cols = 31;
        let rows = 2 * u64::from(sms) * 4 * 124 * u64::from(4 / e) * 2;
        assert!(!thin_split(
            &thin.with_width(cols).expect("width"),
            1,
            rows,
            sms
        ));
        match e {
            1 => check(&s, &src, &Shape::new(rows, u64::from(cols)), |x| x as u8),
            _ => check(&s, &src, &Shape::new(rows, u64::from(cols)), |x| x as u16),
        }
    }
}
