//! The distributed transpose's plan, run by a CPU model of the whole exchange with
//! P simulated ranks (1 to 8, any uneven split, empty parts included): every
//! rank's result must equal its rows of a CPU transpose, by the steps of the
//! exchange and by the peer route alike, and every move must stay in its buffers
//! and be a permute the planner takes.

use bankfree_gen::check::fit::kernel_refusal;
use bankfree_gen::check::sim;
use bankfree_gen::select::dist::{Buffer, DistError, Layout, Move, Plan};
use bankfree_gen::select::permute::{plan as plan_permute, plan_kernels, Kind, Permute};
use bankfree_gen::Strategy as Layouts;
use proptest::prelude::*;

/// Source bytes of rank `rank`: element `(r, c)` of the whole matrix holds bytes
/// derived from its global index, so a misplaced element shows.
fn source(layout: &Layout, rank: usize, elem: usize) -> Vec<u8> {
    let (r0, cols) = (layout.row_start(rank), layout.cols());
    let mut out = Vec::with_capacity(layout.src_len(rank) as usize * elem);
    for r in 0..layout.rows_of(rank) {
        for c in 0..cols {
            let id = ((r0 + r) * cols + c).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            out.extend((0..elem).map(|b| (id >> (8 * (b % 8))) as u8 ^ b as u8));
        }
    }
    out
}

/// Rank `rank`'s rows of the whole matrix's transpose, from the sources.
fn expected(layout: &Layout, srcs: &[Vec<u8>], rank: usize, elem: usize) -> Vec<u8> {
    let (rows, cols) = (layout.rows(), layout.cols());
    let mut out = vec![0u8; layout.dst_len(rank) as usize * elem];
    for i in 0..layout.cols_of(rank) {
        let c = layout.col_start(rank) + i;
        for r in 0..rows {
            let owner = (0..layout.ranks())
                .find(|&p| r < layout.row_start(p) + layout.rows_of(p))
                .expect("a row has an owner");
            let s = ((r - layout.row_start(owner)) * cols + c) as usize * elem;
            let d = (i * rows + r) as usize * elem;
            out[d..d + elem].copy_from_slice(&srcs[owner][s..s + elem]);
        }
    }
    out
}

struct Rank {
    src: Vec<u8>,
    dst: Vec<u8>,
    send: [Vec<u8>; 2],
    recv: [Vec<u8>; 2],
}

/// How a move runs on host bytes: `Move::run_host`, or the simulated kernel of
/// its permute.
type Exec = fn(&Move, &[u8], &mut [u8], usize);

fn host(mv: &Move, from: &[u8], to: &mut [u8], elem: usize) {
    mv.run_host(from, to, elem);
}

/// The move as the runtime runs it: its permute planned, the first listed kernel
/// that fits the planned call, simulated over the buffers from the move's offsets.
fn kernel(mv: &Move, from: &[u8], to: &mut [u8], elem: usize) {
    let (dims, perm, src_strides, dst_strides) = mv.permute();
    let request = Permute {
        src_strides: Some(src_strides.to_vec()),
        dst_strides: Some(dst_strides.to_vec()),
        ..Permute::new(&dims, &perm, elem as u32)
    };
    let planned = plan_permute(&request).expect("the planner takes every move");
    if planned.kind == Kind::Empty {
        return;
    }
    let kernels = plan_kernels(&planned, Layouts::Xor).expect("kernels build");
    let k = kernels
        .iter()
        .find(|k| kernel_refusal(&k.spec().geometry, k.quotients(), &planned.shape).is_none())
        .expect("the last kernel runs every call of its kind");
    let (a, b) = (mv.from.offset as usize * elem, mv.to.offset as usize * elem);
    sim::run(k, &planned.shape, &from[a..], &mut to[b..], None).expect("the simulation runs");
}

impl Rank {
    fn run(&mut self, mv: &Move, slot: usize, elem: usize, plan: &Plan, rank: usize, exec: Exec) {
        // The slots were sized by `send_len` and `recv_len`.
        let len = |b: Buffer| match b {
            Buffer::Src => plan.layout().src_len(rank),
            Buffer::Dst => plan.layout().dst_len(rank),
            Buffer::Send => (self.send[slot].len() / elem) as u64,
            Buffer::Recv => (self.recv[slot].len() / elem) as u64,
        };
        assert!(
            mv.from_end() <= len(mv.from.buffer),
            "{mv:?} reads past its buffer"
        );
        assert!(
            mv.to_end() <= len(mv.to.buffer),
            "{mv:?} writes past its buffer"
        );
        let from = match mv.from.buffer {
            Buffer::Src => self.src.clone(),
            Buffer::Recv => self.recv[slot].clone(),
            other => panic!("a move reads {other:?}"),
        };
        let to = match mv.to.buffer {
            Buffer::Dst => &mut self.dst,
            Buffer::Send => &mut self.send[slot],
            other => panic!("a move writes {other:?}"),
        };
        exec(mv, &from, to, elem);
    }
}

/// The whole exchange on host bytes: own blocks, then every step's packs on every
/// rank, its transfers (each send paired with the receive of the same step and
/// pair), and its places.
fn model(plan: &Plan, elem: usize, exec: Exec) -> Vec<Vec<u8>> {
    let layout = plan.layout();
    let p = layout.ranks();
    let mut ranks: Vec<Rank> = (0..p)
        .map(|r| Rank {
            src: source(layout, r, elem),
            dst: vec![0xA5; layout.dst_len(r) as usize * elem],
            send: [0, 1].map(|_| vec![0; plan.send_len(r) as usize * elem]),
            recv: [0, 1].map(|_| vec![0; plan.recv_len(r) as usize * elem]),
        })
        .collect();
    for (r, rank) in ranks.iter_mut().enumerate() {
        if let Some(own) = plan.own(r) {
            rank.run(&own, 0, elem, plan, r, exec);
        }
    }
    for k in 0..plan.steps() {
        let steps: Vec<_> = (0..p).map(|r| plan.step(r, k)).collect();
        for (r, s) in steps.iter().enumerate() {
            assert_eq!(s.packs.len(), s.sends.len());
            for mv in &s.packs {
                ranks[r].run(mv, s.slot, elem, plan, r, exec);
            }
        }
        for (q, s) in steps.iter().enumerate() {
            for t in &s.recvs {
                let sent: Vec<_> = steps[t.peer].sends.iter().filter(|x| x.peer == q).collect();
                assert_eq!(sent.len(), 1, "one send from {} to {q} in step {k}", t.peer);
                assert_eq!(sent[0].len, t.len, "a send and its receive agree on length");
                let bytes = ranks[t.peer].send[s.slot]
                    [sent[0].offset as usize * elem..(sent[0].offset + t.len) as usize * elem]
                    .to_vec();
                let at = t.offset as usize * elem;
                ranks[q].recv[s.slot][at..at + bytes.len()].copy_from_slice(&bytes);
            }
            let sent_here: usize = steps
                .iter()
                .map(|x| x.sends.iter().filter(|t| t.peer == q).count())
                .sum();
            assert_eq!(sent_here, s.recvs.len(), "every send to {q} is received");
        }
        for (r, s) in steps.iter().enumerate() {
            for mv in s.places.iter().chain(&s.own) {
                ranks[r].run(mv, s.slot, elem, plan, r, exec);
            }
        }
    }
    ranks.into_iter().map(|r| r.dst).collect()
}

/// The peer route on host bytes: every block in one move from its rank's
/// source straight into its rank's result, each write bounded by that result.
fn peer(plan: &Plan, elem: usize, exec: Exec) -> Vec<Vec<u8>> {
    let layout = plan.layout();
    let p = layout.ranks();
    let srcs: Vec<_> = (0..p).map(|r| source(layout, r, elem)).collect();
    let mut dsts: Vec<_> = (0..p)
        .map(|r| vec![0xA5; layout.dst_len(r) as usize * elem])
        .collect();
    for (from, src) in srcs.iter().enumerate() {
        for (to, dst) in dsts.iter_mut().enumerate() {
            let Some(mv) = plan.block(from, to) else {
                assert!(layout.rows_of(from) * layout.cols_of(to) == 0);
                continue;
            };
            assert_eq!((mv.from.buffer, mv.to.buffer), (Buffer::Src, Buffer::Dst));
            assert!(
                mv.from_end() <= layout.src_len(from),
                "{mv:?} reads past its source"
            );
            assert!(
                mv.to_end() <= layout.dst_len(to),
                "{mv:?} writes past its result"
            );
            exec(&mv, src, dst, elem);
        }
    }
    dsts
}

fn check(layout: &Layout, elem: usize, step_bytes: u64) -> Result<(), TestCaseError> {
    check_with(layout, elem, step_bytes, host)
}

fn check_with(
    layout: &Layout,
    elem: usize,
    step_bytes: u64,
    exec: Exec,
) -> Result<(), TestCaseError> {
    let plan = Plan::new(layout, elem as u64, step_bytes).expect("a valid layout plans");
    let srcs: Vec<_> = (0..layout.ranks())
        .map(|r| source(layout, r, elem))
        .collect();
    for (route, got) in [
        ("steps", model(&plan, elem, exec)),
        ("peer", peer(&plan, elem, exec)),
    ] {
        for (r, dst) in got.iter().enumerate() {
            prop_assert!(
                *dst == expected(layout, &srcs, r, elem),
                "rank {r} of {layout:?} by {route}"
            );
        }
    }
    // Every move is a permute the planner takes (the runtime runs them as such).
    let mut moves = Vec::new();
    for r in 0..layout.ranks() {
        moves.extend(plan.own(r));
        moves.extend((0..layout.ranks()).filter_map(|q| plan.block(r, q)));
        for k in 0..plan.steps() {
            let s = plan.step(r, k);
            moves.extend(s.packs.into_iter().chain(s.places).chain(s.own));
        }
    }
    for mv in moves {
        let (dims, perm, src_strides, dst_strides) = mv.permute();
        let mut request = Permute::new(&dims, &perm, elem as u32);
        request.src_strides = Some(src_strides.to_vec());
        request.dst_strides = Some(dst_strides.to_vec());
        if [1, 2, 4, 8, 12, 16].contains(&elem) {
            prop_assert!(plan_permute(&request).is_ok(), "{mv:?}");
        }
    }
    Ok(())
}

fn split(max_ranks: usize) -> impl Strategy<Value = Vec<u64>> {
    prop::collection::vec(prop_oneof![Just(0u64), 1u64..9, 9u64..40], 1..=max_ranks)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn any_split_over_1_to_8_ranks_transposes(
        rows in split(8),
        cols_seed in prop::collection::vec(0u64..30, 8),
        elem in prop::sample::select(vec![1usize, 2, 4, 12, 16]),
        step in prop::sample::select(vec![1u64, 7, 64, 300, 1 << 20]),
    ) {
        let cols: Vec<u64> = cols_seed[..rows.len()].to_vec();
        let layout = Layout::new(&rows, &cols).expect("same rank counts");
        check(&layout, elem, step * elem as u64)?;
    }
}

#[test]
fn even_splits_both_band_shapes_and_graded_steps() {
    // Wide blocks go in column bands, narrow ones in row bands; steps grow from
    // an eighth of a full step to a full one and shrink again at the end.
    for (rows, cols, ranks, step) in [
        (64, 48, 4, 16),
        (1000, 3, 2, 40),
        (5, 2000, 3, 100),
        (17, 1, 1, 4),
        (33, 31, 8, 4),
        (4000, 4000, 2, 1 << 18),
    ] {
        let layout = Layout::even(rows, cols, ranks).unwrap();
        check(&layout, 4, step * 4).unwrap();
        let plan = Plan::new(&layout, 4, step * 4).unwrap();
        let sent: Vec<u64> = (0..plan.steps())
            .map(|k| plan.step(0, k).sends.iter().map(|t| t.len).sum())
            .collect();
        // A step sends at most a full step, plus a line of each block for rounding.
        let line = rows.max(cols).div_ceil(ranks as u64);
        for (k, n) in sent.iter().enumerate() {
            assert!(
                *n <= step + line * ranks as u64,
                "{rows}x{cols}/{ranks}: step {k} sends {n}"
            );
        }
        if rows.min(cols) >= 100 * plan.steps() as u64 && plan.steps() >= 8 {
            let (first, mid) = (sent[0] as f64, sent[plan.steps() / 2] as f64);
            assert!(
                first < mid / 4.0,
                "{rows}x{cols}/{ranks}: the first step is small: {sent:?}"
            );
            assert!(
                sent[plan.steps() - 1] as f64 <= first * 1.5 + line as f64,
                "{sent:?}"
            );
        }
    }
}

#[test]
fn the_moves_run_as_the_simulated_kernels_of_their_permutes() {
    // The exchange with every pack, place and own piece run by the generated
    // kernel the runtime would launch, simulated: uneven and empty parts, several
    // steps, both band shapes, element sizes 1, 2, 4, 12 and 16.
    let layouts = [
        Layout::new(&[37, 0, 21], &[5, 40, 0]).unwrap(),
        Layout::even(70, 45, 2).unwrap(),
        Layout::new(&[3, 60], &[50, 1]).unwrap(),
    ];
    for layout in &layouts {
        for elem in [1, 2, 4, 12, 16] {
            check_with(layout, elem, 200 * elem as u64, kernel)
                .unwrap_or_else(|e| panic!("{layout:?}, {elem}-byte: {e}"));
        }
    }
}

#[test]
fn one_rank_is_one_local_transpose() {
    let plan = Plan::new(&Layout::even(300, 200, 1).unwrap(), 4, 1).unwrap();
    assert_eq!(plan.steps(), 0);
    let own = plan.own(0).unwrap();
    assert_eq!(
        (own.rows, own.cols, own.from.pitch, own.to.pitch),
        (300, 200, 200, 300)
    );
}

#[test]
fn bad_layouts_are_errors() {
    assert_eq!(Layout::new(&[], &[]), Err(DistError::NoRanks));
    assert_eq!(Layout::even(4, 4, 0), Err(DistError::NoRanks));
    assert_eq!(
        Layout::new(&[1, 2], &[3]),
        Err(DistError::Ranks { rows: 2, cols: 1 })
    );
    assert!(matches!(
        Layout::new(&[u64::MAX, 1], &[1, 1]),
        Err(DistError::Overflow { .. })
    ));
    assert!(matches!(
        Layout::new(&[1 << 40], &[1 << 40]),
        Err(DistError::Overflow { .. })
    ));
    assert_eq!(
        Layout::even(4, 4, usize::MAX),
        Err(DistError::TooManyRanks { ranks: usize::MAX })
    );
    let l = Layout::even(4, 4, 2).unwrap();
    assert_eq!(Plan::new(&l, 0, 1 << 20), Err(DistError::ElemBytes));
    // A step size too small for the matrix is raised to keep the steps bounded.
    let big = Plan::new(&Layout::even(1 << 20, 1 << 20, 2).unwrap(), 4, 1).unwrap();
    assert_eq!(big.steps(), 1 << 16);
}
