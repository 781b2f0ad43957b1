//! One case of the benchmark: every implementation checked against a CPU
//! transpose, then timed interleaved with a same-bytes `cudaMemcpy`, and (for
//! the benchmark's own cases) the attribute's lists again after `autotune`.

use super::common::{cpu_transpose, interleaved_ms, noise};
use super::geam::Geam;
use super::variants::{alternatives, variants};
use super::{err, Opts, Res, Row, BATCH, L2_BYTES, ROUNDS};
use bankfree::cudarc::driver::{CudaSlice, CudaStream, DeviceRepr, ValidAsZeroBits};
use bankfree::gen::check::fit::refusal;
use bankfree::gen::select::choice::auto_kernels;
use bankfree::gen::{Kernel, Shape, Strategy, TransposeSpec};
use bankfree::runtime::{autotune, transpose, transpose_auto, transpose_first, KernelSource};
use std::sync::Arc;

/// Checks and times case `name` of `shape`, its elements made by `make`, into
/// `rows`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn case<T>(
    opts: &Opts,
    stream: &Arc<CudaStream>,
    geam: Option<&Geam>,
    name: &str,
    shape: Shape,
    make: impl Fn(u64) -> T,
    rows: &mut Vec<Row>,
) -> Res<()>
where
    T: DeviceRepr + ValidAsZeroBits + Copy + PartialEq + std::fmt::Debug + 'static,
{
    if !opts.wants(name) {
        return Ok(());
    }
    let sweep = opts.sweep;
    let e = std::mem::size_of::<T>();
    let n = shape.src_elems().map_err(err)? as usize;
    let bytes = n * e;
    let copies = (4 * L2_BYTES).div_ceil(bytes).clamp(1, 64);
    let host: Vec<T> = noise(n, &make);
    let mut want = vec![make(0); n];
    cpu_transpose(&shape, &host, &mut want);
    let first = stream.clone_htod(&host).map_err(err)?;
    let mut srcs = vec![first];
    for _ in 1..copies {
        let mut s = stream.alloc_zeros::<T>(n).map_err(err)?;
        stream.memcpy_dtod(&srcs[0], &mut s).map_err(err)?;
        srcs.push(s);
    }
    let mut dst = stream.alloc_zeros::<T>(n).map_err(err)?;
    let check = |dst: &CudaSlice<T>, what: &str| -> Res<()> {
        if stream.clone_dtoh(dst).map_err(err)? == want {
            Ok(())
        } else {
            Err(format!("{name} {what}: wrong result"))
        }
    };
    // Every implementation is checked, then all are timed interleaved with the copy.
    let mut timed = vec![("cudaMemcpy D2D".to_string(), Impl::Memcpy)];
    let every = if opts.random.is_some() || !opts.given.is_empty() {
        if opts.alternatives {
            alternatives(e as u32)?
        } else {
            Vec::new()
        }
    } else {
        variants(e as u32, sweep)?
    };
    for (what, spec) in every {
        let Ok(kernel) = Kernel::build(spec) else {
            continue; // refused by the generator (shared memory, no conflict-free layout)
        };
        let k = KernelSource::from_kernel(&kernel);
        if refusal(k.geometry(), &shape).is_some() {
            continue;
        }
        timed.push((what, Impl::One(k)));
    }
    // What the attribute runs: the generator's fast variant first, its spec after.
    let mut lists = Vec::new();
    for strategy in [Strategy::Pad(None), Strategy::Xor] {
        let spec = TransposeSpec::new(32, e as u32, strategy).map_err(err)?;
        let list: Vec<KernelSource> = auto_kernels(&Kernel::build(spec).map_err(err)?)
            .iter()
            .map(KernelSource::from_kernel)
            .collect();
        let s = if strategy == Strategy::Xor {
            "swizzle"
        } else {
            "pad"
        };
        timed.push((
            format!("bankfree {s} (attribute default)"),
            Impl::List(list.clone()),
        ));
        lists.push((s, list));
    }
    if let (Some(_), 4 | 8, 1) = (geam, e, shape.batch) {
        timed.push(("cuBLAS geam".into(), Impl::Geam));
    }
    let run = |imp: &Impl, src: &CudaSlice<T>, dst: &mut CudaSlice<T>| -> Res<()> {
        match imp {
            Impl::Memcpy => stream.memcpy_dtod(src, dst).map_err(err),
            Impl::One(k) => transpose(k, src, dst, &shape, None).map_err(err),
            // What a `tile = auto` function runs.
            Impl::List(l) => transpose_auto(l, src, dst, &shape, None).map_err(err),
            Impl::Geam => match geam {
                Some(g) => g.run(stream, src, dst, shape.rows as usize, shape.cols as usize),
                None => Err("no cuBLAS".into()),
            },
        }
    };
    let time = |timed: &[(String, Impl)], dst: &mut CudaSlice<T>| -> Res<Vec<f64>> {
        for (what, imp) in &timed[1..] {
            stream.memset_zeros(dst).map_err(err)?;
            run(imp, &srcs[0], dst)?;
            check(dst, what)?;
        }
        interleaved_ms(stream, timed.len(), ROUNDS, BATCH, |k, i| {
            run(&timed[k].1, &srcs[i % copies], dst)
        })
    };
    let ms = time(&timed, &mut dst)?;
    let mut row = |what: &str, ms: f64, memcpy: f64| {
        rows.push(Row {
            case: name.into(),
            what: what.into(),
            ms,
            gbs: 2.0 * bytes as f64 / ms / 1e6,
            ratio: memcpy / ms,
        });
    };
    for ((what, _), &t) in timed.iter().zip(&ms) {
        row(what, t, ms[0]);
    }
    // Drawn and given cases time the defaults only: a tuning recorded here would
    // be what later cases of its call class run.
    if opts.random.is_some() || !opts.given.is_empty() {
        return Ok(());
    }
    // The same lists after `autotune` timed them on this call, against the copy again.
    let mut tuned = vec![("cudaMemcpy D2D".to_string(), Impl::Memcpy)];
    for (s, list) in lists {
        let tunings =
            autotune(|| transpose_first(&list, &srcs[0], &mut dst, &shape, None)).map_err(err)?;
        let winner = tunings
            .first()
            .map_or("(one kernel fits)".to_string(), |t| {
                t.winner
                    .trim_start_matches("bankfree_transpose_")
                    .to_string()
            });
        tuned.push((format!("bankfree {s} autotuned {winner}"), Impl::List(list)));
    }
    let ms = time(&tuned, &mut dst)?;
    for ((what, _), &t) in tuned.iter().zip(&ms).skip(1) {
        row(what, t, ms[0]);
    }
    Ok(())
}

/// One timed implementation of a case.
enum Impl {
    Memcpy,
    One(KernelSource),
    List(Vec<KernelSource>),
    Geam,
}
