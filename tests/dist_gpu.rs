//! The distributed transpose on GPUs (`--features nccl`; run with
//! `--include-ignored`). `one_rank_*` needs one GPU; `two_ranks_*` needs two and
//! fails with a message on fewer. Every result is compared bit-exact with a CPU
//! transpose of the whole matrix, for 1-, 4- and 16-byte elements, even and
//! uneven splits, empty parts, and in both set-ups: one process driving both GPUs
//! (`Comm::from_devices`) and one communicator per thread (`Comm::from_rank`, as a
//! process per GPU would). One process takes both routes: the peer route (which
//! `two_ranks_one_process` needs the two GPUs to allow) and NCCL.

#![cfg(feature = "nccl")]

use bankfree::cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use bankfree::dist::{self, Comm, Layout, Route, Transposer};
use bankfree::Error;
use std::sync::Arc;

#[path = "../examples/common/pattern.rs"]
mod pattern;
use pattern::Pattern;

fn gpus() -> usize {
    CudaContext::device_count().expect("a CUDA driver") as usize
}

fn streams(n: usize) -> Vec<Arc<CudaStream>> {
    assert!(gpus() >= n, "this test needs {n} GPUs, {} visible", gpus());
    (0..n)
        .map(|i| {
            CudaContext::new(i)
                .expect("works on a GPU machine")
                .new_stream()
                .expect("works on a GPU machine")
        })
        .collect()
}

fn source<T: Pattern>(s: &Arc<CudaStream>, l: &Layout, r: usize) -> CudaSlice<T> {
    let base = l.row_start(r) * l.cols();
    let host: Vec<T> = (0..l.src_len(r)).map(|i| T::at(base + i)).collect();
    s.clone_htod(&host).expect("works on a GPU machine")
}

/// Rank `r`'s result, checked against the transpose of the pattern; `extra`
/// poisoned elements past its part must stay as they were.
fn check<T: Pattern>(s: &Arc<CudaStream>, l: &Layout, r: usize, dst: &CudaSlice<T>, extra: usize) {
    let got = s.clone_dtoh(dst).expect("works on a GPU machine");
    let (rows, cols) = (l.rows(), l.cols());
    for i in 0..l.cols_of(r) {
        for row in 0..rows {
            let c = l.col_start(r) + i;
            let at = (i * rows + row) as usize;
            assert_eq!(
                got[at],
                T::at(row * cols + c),
                "rank {r} of {l:?}: result ({i}, {row})"
            );
        }
    }
    let tail = &got[l.dst_len(r) as usize..];
    assert_eq!(tail.len(), extra);
    assert!(
        tail.iter().all(|x| *x == T::at(u64::MAX)),
        "rank {r} wrote past its part"
    );
}

fn results<T: Pattern>(s: &Arc<CudaStream>, l: &Layout, r: usize, extra: usize) -> CudaSlice<T> {
    s.clone_htod(&vec![T::at(u64::MAX); l.dst_len(r) as usize + extra])
        .expect("works on a GPU machine")
}

/// One process drives every rank of `layout`, by `route`.
fn one_process<T: Pattern>(layout: &Layout, route: Route) {
    let n = layout.ranks();
    let st = streams(n);
    let comms = dist::local_comms(st.clone()).expect("works on a GPU machine");
    let srcs: Vec<CudaSlice<T>> = (0..n).map(|r| source(&st[r], layout, r)).collect();
    let mut dsts: Vec<CudaSlice<T>> = (0..n).map(|r| results(&st[r], layout, r, 5)).collect();
    let mut t = Transposer::<T>::new(&comms, layout)
        .and_then(|t| t.with_route(route))
        .unwrap_or_else(|e| panic!("{route:?} route: {e}"));
    for _ in 0..2 {
        // Twice: the exchange buffers are reused.
        let srcs: Vec<_> = srcs.iter().collect();
        t.run(&srcs, &mut dsts.iter_mut().collect::<Vec<_>>())
            .expect("works on a GPU machine");
        assert_eq!(t.route(), Some(route));
    }
    for r in 0..n {
        check(&st[r], layout, r, &dsts[r], 5);
    }
}

/// One communicator per thread (`from_rank`); each thread passes its own layout
/// (the same for a correct call) and result length. Returns each rank's outcome.
fn per_rank<T: Pattern>(layouts: &[Layout], short: Option<usize>) -> Vec<Result<(), Error>> {
    let n = layouts.len();
    let st = streams(n);
    let id = dist::unique_id().expect("works on a GPU machine");
    std::thread::scope(|sc| {
        let hs: Vec<_> = (0..n)
            .map(|r| {
                let (s, l) = (st[r].clone(), &layouts[r]);
                sc.spawn(move || {
                    let comm: Comm = dist::rank_comm(s.clone(), r, n, id)?;
                    let src = source::<T>(&s, l, r);
                    let cut = usize::from(short == Some(r));
                    let mut dst = s
                        .alloc_zeros::<T>(l.dst_len(r) as usize - cut)
                        .expect("works on a GPU machine");
                    let comms = std::slice::from_ref(&comm);
                    let e = Transposer::<T>::new(comms, l)?
                        .with_route(Route::Peer)
                        .err();
                    let e = e.expect("the peer route needs every rank in one process");
                    assert!(e.to_string().contains("ranks in this process"), "{e}");
                    Transposer::<T>::new(comms, l)?.run(&[&src], &mut [&mut dst])?;
                    s.synchronize().expect("works on a GPU machine");
                    let full = results::<T>(&s, l, r, 0);
                    let mut full = full;
                    s.memcpy_dtod(&dst, &mut full)
                        .expect("works on a GPU machine");
                    check(&s, l, r, &full, 0);
                    Ok(())
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("no rank panics"))
            .collect()
    })
}

fn layouts() -> Vec<Layout> {
    vec![
        Layout::even(1000, 777, 2).expect("works on a GPU machine"),
        Layout::new(&[300, 701], &[500, 277]).expect("works on a GPU machine"),
        Layout::new(&[0, 64], &[64, 0]).expect("works on a GPU machine"),
        Layout::new(&[33, 1], &[1, 2000]).expect("works on a GPU machine"),
    ]
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn one_rank_is_a_local_transpose() {
    for l in [
        Layout::even(1000, 777, 1).expect("works on a GPU machine"),
        Layout::even(4099, 3, 1).expect("works on a GPU machine"),
        Layout::even(0, 5, 1).expect("works on a GPU machine"),
    ] {
        for route in [Route::Peer, Route::Nccl] {
            one_process::<u8>(&l, route);
            one_process::<u32>(&l, route);
            one_process::<[u32; 4]>(&l, route);
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn two_ranks_one_process() {
    for route in [Route::Peer, Route::Nccl] {
        for l in layouts() {
            one_process::<u8>(&l, route);
            one_process::<u32>(&l, route);
            one_process::<[u32; 4]>(&l, route);
        }
        // Each rank sends about 450 MB: by NCCL, in steps of STEP_BYTES.
        one_process::<[u32; 4]>(
            &Layout::new(&[4000, 4500], &[7000, 5000]).expect("works on a GPU machine"),
            route,
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn two_ranks_one_communicator_per_thread() {
    for l in layouts() {
        for r in per_rank::<u8>(&[l.clone(), l.clone()], None) {
            r.expect("works on a GPU machine");
        }
        for r in per_rank::<[u32; 4]>(&[l.clone(), l.clone()], None) {
            r.expect("works on a GPU machine");
        }
    }
    let big = Layout::new(&[4000, 4500], &[7000, 5000]).expect("works on a GPU machine");
    for r in per_rank::<u32>(&[big.clone(), big], None) {
        r.expect("works on a GPU machine");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn two_ranks_refuse_together_instead_of_hanging() {
    let (a, b) = (
        Layout::even(100, 60, 2).expect("works on a GPU machine"),
        Layout::even(100, 61, 2).expect("works on a GPU machine"),
    );
    for r in per_rank::<u32>(&[a.clone(), b], None) {
        let e = r.expect_err("the ranks' layouts differ").to_string();
        assert!(e.contains("layout"), "{e}");
    }
    let out = per_rank::<u32>(&[a.clone(), a], Some(1));
    let e1 = out[1]
        .clone()
        .expect_err("rank 1's result is short")
        .to_string();
    assert!(e1.contains("rank 1's result holds"), "{e1}");
    let e0 = out[0]
        .clone()
        .expect_err("rank 0 learns that rank 1 refused")
        .to_string();
    assert!(e0.contains("rank 1 refused"), "{e0}");
}
