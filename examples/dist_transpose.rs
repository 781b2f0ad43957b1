//! The transpose of a matrix sharded by rows over every visible GPU, through
//! `bankfree::dist`: checks every rank's result against a CPU transpose and
//! times it against a bare NCCL all-to-all of the same bytes (same run, medians
//! over CUDA-event-timed runs, alternating the two).
//!
//! ```text
//! cargo run --release --features nccl --example dist_transpose -- \
//!     [--shape ROWSxCOLS] [--elem 1|4|16] [--uneven] [--iters N] [--gpus N] [--processes] [--step-mb N]
//!     [--route peer|nccl]
//! ```
//! * One process drives every GPU (`Comm::from_devices`), or with `--processes`
//!   one process per GPU (`Comm::from_rank`): the example starts them itself and
//!   passes the NCCL id in `BANKFREE_DIST_ID`.
//! * The transposer takes the peer route where it can (one process, peer access
//!   between the GPUs) and NCCL otherwise; `--route` asks for one, and the
//!   output names the route each run took.
//! * `--uneven` splits rows and columns unevenly (rank `r` gets a share growing
//!   with `r + 1`, columns the other way round).
//! * With one GPU it runs the one-rank case and says so. Without a GPU or NCCL it
//!   says what is missing and exits with status 2.

use bankfree::cudarc::driver::sys::CUevent_flags;
use bankfree::cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use bankfree::cudarc::nccl::ReduceOp;
use bankfree::dist::{self, Comm, Id, Layout, Route, Transposer};
use std::process::{Command, ExitCode};
use std::sync::Arc;

struct Args {
    rows: u64,
    cols: u64,
    elem: usize,
    uneven: bool,
    iters: usize,
    gpus: Option<usize>,
    processes: bool,
    step_mb: u64,
    route: Option<Route>,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        rows: 32768,
        cols: 32768,
        elem: 4,
        uneven: false,
        iters: 20,
        gpus: None,
        processes: false,
        step_mb: dist::STEP_BYTES >> 20,
        route: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        let num = |v: String| {
            v.parse::<u64>()
                .map_err(|_| format!("{flag}: `{v}` is not a count"))
        };
        match flag.as_str() {
            "--shape" => {
                let v = value()?;
                let (r, c) = v
                    .split_once('x')
                    .ok_or(format!("--shape {v}: write ROWSxCOLS"))?;
                (a.rows, a.cols) = (num(r.into())?, num(c.into())?);
            }
            "--elem" => a.elem = num(value()?)? as usize,
            "--iters" => a.iters = num(value()?)?.max(1) as usize,
            "--gpus" => a.gpus = Some(num(value()?)? as usize),
            "--step-mb" => a.step_mb = num(value()?)?.max(1),
            "--uneven" => a.uneven = true,
            "--processes" => a.processes = true,
            "--route" => {
                a.route = Some(match value()?.as_str() {
                    "peer" => Route::Peer,
                    "nccl" => Route::Nccl,
                    v => return Err(format!("--route {v}: write peer or nccl")),
                })
            }
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if ![1, 4, 16].contains(&a.elem) {
        return Err(format!(
            "--elem {}: this example moves 1-, 4- or 16-byte elements",
            a.elem
        ));
    }
    Ok(a)
}

fn layout(a: &Args, ranks: usize) -> Result<Layout, String> {
    if !a.uneven {
        return Layout::even(a.rows, a.cols, ranks).map_err(|e| e.to_string());
    }
    let weights: u64 = (1..=ranks as u64).sum();
    let share = |n: u64, w: u64| n * w / weights;
    let mut rows: Vec<u64> = (0..ranks as u64).map(|r| share(a.rows, r + 1)).collect();
    let mut cols: Vec<u64> = (0..ranks as u64)
        .map(|r| share(a.cols, ranks as u64 - r))
        .collect();
    rows[ranks - 1] += a.rows - rows.iter().sum::<u64>();
    cols[0] += a.cols - cols.iter().sum::<u64>();
    Layout::new(&rows, &cols).map_err(|e| e.to_string())
}

#[path = "common/pattern.rs"]
mod pattern;
use pattern::Pattern;

/// Host chunks of up to this many elements move between host and GPU.
const CHUNK: u64 = 1 << 26;

/// Fills rank `r`'s source with its rows of the pattern.
fn fill<T: Pattern>(s: &Arc<CudaStream>, l: &Layout, r: usize) -> Result<CudaSlice<T>, String> {
    let e = |x: bankfree::cudarc::driver::DriverError| x.to_string();
    let n = l.src_len(r);
    let mut buf = s.alloc_zeros::<T>(n as usize).map_err(e)?;
    let base = l.row_start(r) * l.cols();
    let mut host = vec![T::default(); CHUNK.min(n) as usize];
    for at in (0..n).step_by(CHUNK as usize) {
        let len = CHUNK.min(n - at) as usize;
        par_fill(&mut host[..len], |k| T::at(base + at + k as u64));
        s.memcpy_htod(
            &host[..len],
            &mut buf.slice_mut(at as usize..at as usize + len),
        )
        .map_err(e)?;
    }
    s.synchronize().map_err(e)?;
    Ok(buf)
}

fn par_fill<T: Send>(out: &mut [T], f: impl Fn(usize) -> T + Sync) {
    let per = out.len().div_ceil(16).max(1);
    std::thread::scope(|sc| {
        for (c, part) in out.chunks_mut(per).enumerate() {
            let f = &f;
            sc.spawn(move || {
                part.iter_mut()
                    .enumerate()
                    .for_each(|(k, x)| *x = f(c * per + k))
            });
        }
    });
}

/// Checks rank `r`'s result against the transpose of the pattern: its row `i` is
/// source column `col_start(r) + i`. Returns the number of wrong elements.
fn verify<T: Pattern>(
    s: &Arc<CudaStream>,
    l: &Layout,
    r: usize,
    dst: &CudaSlice<T>,
) -> Result<u64, String> {
    let e = |x: bankfree::cudarc::driver::DriverError| x.to_string();
    let (n, rows, cols) = (l.dst_len(r), l.rows(), l.cols());
    let mut host = vec![T::default(); CHUNK.min(n) as usize];
    let mut wrong = 0;
    for at in (0..n).step_by(CHUNK as usize) {
        let len = CHUNK.min(n - at) as usize;
        s.memcpy_dtoh(&dst.slice(at as usize..at as usize + len), &mut host[..len])
            .map_err(e)?;
        s.synchronize().map_err(e)?;
        let per = len.div_ceil(16).max(1);
        wrong += std::thread::scope(|sc| {
            let hs: Vec<_> = host[..len]
                .chunks(per)
                .enumerate()
                .map(|(c, part)| {
                    sc.spawn(move || {
                        let mut bad = 0u64;
                        for (k, v) in part.iter().enumerate() {
                            let i = at + (c * per + k) as u64;
                            let (row, col) = (l.col_start(r) + i / rows, i % rows);
                            bad += u64::from(*v != T::at(col * cols + row));
                        }
                        bad
                    })
                })
                .collect();
            hs.into_iter()
                .map(|h| h.join().unwrap_or(u64::MAX))
                .sum::<u64>()
        });
    }
    Ok(wrong)
}

/// Every rank of this process: its stream, source and result.
struct Ranks<T> {
    streams: Vec<Arc<CudaStream>>,
    srcs: Vec<CudaSlice<T>>,
    dsts: Vec<CudaSlice<T>>,
}

/// Waits for every local rank, then (across processes) for every rank.
fn barrier(comms: &[Comm], world: usize) -> Result<(), String> {
    for c in comms {
        c.stream().synchronize().map_err(|e| e.to_string())?;
    }
    if comms.len() < world {
        let s = comms[0].stream();
        let one = s.clone_htod(&[1.0f32]).map_err(|e| e.to_string())?;
        let mut sum = s.alloc_zeros::<f32>(1).map_err(|e| e.to_string())?;
        comms[0]
            .all_reduce(&one, &mut sum, &ReduceOp::Sum)
            .map_err(|e| format!("{e:?}"))?;
        s.synchronize().map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Median ms of `f` over the ranks of this process (the slowest rank per run).
fn timed(
    comms: &[Comm],
    world: usize,
    times: &mut Vec<f64>,
    f: impl FnOnce() -> bankfree::Result<()>,
) -> Result<(), String> {
    let e = |x: bankfree::cudarc::driver::DriverError| x.to_string();
    barrier(comms, world)?;
    let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
    let starts = comms
        .iter()
        .map(|c| c.stream().record_event(flags))
        .collect::<Result<Vec<_>, _>>()
        .map_err(e)?;
    f().map_err(|x| x.to_string())?;
    let mut ms = 0f64;
    for (c, a) in comms.iter().zip(&starts) {
        let b = c.stream().record_event(flags).map_err(e)?;
        b.synchronize().map_err(e)?;
        ms = ms.max(f64::from(a.elapsed_ms(&b).map_err(e)?));
    }
    times.push(ms);
    Ok(())
}

fn median(mut t: Vec<f64>) -> f64 {
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

fn run<T: Pattern>(
    a: &Args,
    comms: &[Comm],
    mut ranks: Ranks<T>,
    layout: &Layout,
) -> Result<bool, String> {
    let world = layout.ranks();
    let mut t = Transposer::<T>::with_step_bytes(comms, layout, a.step_mb << 20)
        .map_err(|e| e.to_string())?;
    if let Some(route) = a.route {
        t = t.with_route(route).map_err(|e| e.to_string())?;
    }
    // Medians of: the transpose, the bare all-to-all, the exchange of the peer
    // chunks alone; timed in turn, the transpose last (its result is checked).
    let mut times: [Vec<f64>; 3] = Default::default();
    for i in 0..a.iters + 2 {
        let srcs: Vec<&CudaSlice<T>> = ranks.srcs.iter().collect();
        let mut dsts: Vec<&mut CudaSlice<T>> = ranks.dsts.iter_mut().collect();
        let mut warm: [Vec<f64>; 3] = Default::default();
        let [o, b, p] = if i < 2 { &mut warm } else { &mut times };
        if world > 1 {
            timed(comms, world, b, || t.all_to_all(&srcs, &mut dsts))?;
            timed(comms, world, p, || t.peer_exchange(&srcs, &mut dsts))?;
        }
        timed(comms, world, o, || t.run(&srcs, &mut dsts))?;
    }
    let [ours, bare, peers] = times;
    let mut ok = true;
    for (i, comm) in comms.iter().enumerate() {
        let r = comm.rank();
        let wrong = verify(&ranks.streams[i], layout, r, &ranks.dsts[i])?;
        ok &= wrong == 0;
        println!(
            "rank {r}: {} x {} of the source -> {} x {} of the result: {}",
            layout.rows_of(r),
            layout.cols(),
            layout.cols_of(r),
            layout.rows(),
            if wrong == 0 {
                "bit-exact".to_string()
            } else {
                format!("{wrong} WRONG elements")
            }
        );
    }
    if comms[0].rank() == 0 {
        let gb = (layout.rows() * layout.cols() * a.elem as u64) as f64 / 1e9;
        let m = median(ours);
        let route = match t.route() {
            Some(Route::Peer) => "peer route",
            _ => "NCCL route",
        };
        print!(
            "{world} rank(s), {} x {} of {}-byte elements ({gb:.2} GB): transpose ({route}) {m:.3} ms",
            layout.rows(),
            layout.cols(),
            a.elem
        );
        if world > 1 {
            let (b, p) = (median(bare), median(peers));
            println!(
                "; bare NCCL all-to-all of the same bytes {b:.3} ms: ratio {:.3}; \
                 its peer chunks alone {p:.3} ms: ratio {:.3}",
                m / b,
                m / p
            );
        } else {
            println!(" (one rank: no exchange)");
        }
    }
    Ok(ok)
}

fn alloc<T: Pattern>(
    streams: Vec<Arc<CudaStream>>,
    comms: &[Comm],
    layout: &Layout,
) -> Result<Ranks<T>, String> {
    let mut srcs = Vec::new();
    let mut dsts = Vec::new();
    for (s, c) in streams.iter().zip(comms) {
        srcs.push(fill::<T>(s, layout, c.rank())?);
        dsts.push(
            s.alloc_zeros::<T>(layout.dst_len(c.rank()) as usize)
                .map_err(|e| e.to_string())?,
        );
    }
    Ok(Ranks {
        streams,
        srcs,
        dsts,
    })
}

fn go(
    a: &Args,
    comms: &[Comm],
    streams: Vec<Arc<CudaStream>>,
    layout: &Layout,
) -> Result<bool, String> {
    match a.elem {
        1 => run::<u8>(a, comms, alloc(streams, comms, layout)?, layout),
        4 => run::<u32>(a, comms, alloc(streams, comms, layout)?, layout),
        _ => run::<[u32; 4]>(a, comms, alloc(streams, comms, layout)?, layout),
    }
}

fn hex(id: &Id) -> String {
    id.internal()
        .iter()
        .map(|b| format!("{:02x}", *b as u8))
        .collect()
}

fn unhex(s: &str) -> Option<Id> {
    let mut out = [0 as std::ffi::c_char; 128];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()? as std::ffi::c_char;
    }
    Some(Id::uninit(out))
}

fn main() -> ExitCode {
    let a = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let missing = bankfree::runtime::probe()
        .err()
        .or_else(|| dist::check_nccl().err());
    if let Some(e) = missing {
        eprintln!("cannot run the distributed transpose here: {e}");
        return ExitCode::from(2);
    }
    match main_with(&a) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main_with(a: &Args) -> Result<bool, String> {
    let e = |x: bankfree::Error| x.to_string();
    let count = CudaContext::device_count().map_err(|x| x.to_string())? as usize;
    let world = a.gpus.unwrap_or(count).min(count).max(1);
    if world == 1 {
        println!("one GPU visible: running the one-rank case (a local transpose, no exchange)");
    }
    let layout = layout(a, world)?;
    let stream = |i: usize| {
        CudaContext::new(i)
            .map_err(|x| x.to_string())
            .and_then(|c| c.new_stream().map_err(|x| x.to_string()))
    };
    if let (Ok(rank), Ok(id)) = (
        std::env::var("BANKFREE_DIST_RANK"),
        std::env::var("BANKFREE_DIST_ID"),
    ) {
        let rank: usize = rank
            .parse()
            .map_err(|_| "BANKFREE_DIST_RANK is not a number")?;
        let id = unhex(&id).ok_or("BANKFREE_DIST_ID is not 256 hex digits")?;
        let s = stream(rank)?;
        let comm = dist::rank_comm(s.clone(), rank, world, id).map_err(e)?;
        return go(a, std::slice::from_ref(&comm), vec![s], &layout);
    }
    if a.processes && world > 1 {
        let id = hex(&dist::unique_id().map_err(e)?);
        let exe = std::env::current_exe().map_err(|x| x.to_string())?;
        let children: Vec<_> = (0..world)
            .map(|r| {
                Command::new(&exe)
                    .args(std::env::args().skip(1))
                    .env("BANKFREE_DIST_RANK", r.to_string())
                    .env("BANKFREE_DIST_ID", &id)
                    .spawn()
                    .map_err(|x| x.to_string())
            })
            .collect::<Result<_, _>>()?;
        let mut ok = true;
        for mut c in children {
            ok &= c.wait().map_err(|x| x.to_string())?.success();
        }
        return Ok(ok);
    }
    let streams = (0..world).map(stream).collect::<Result<Vec<_>, _>>()?;
    let comms = dist::local_comms(streams.clone()).map_err(e)?;
    go(a, &comms, streams, &layout)
}
