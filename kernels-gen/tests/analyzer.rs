//! The bank analyzer against measured facts (../shared/notes/gpu-facts.md), the
//! classic worked examples of bank conflicts, and every spec of the grid.

use bankfree_gen::hw::bank::analyze;
use bankfree_gen::kernel::geometry::all_elem_bytes;
use bankfree_gen::kernel::grid::grid;
use bankfree_gen::kernel::launch::MAX_SHARED_BYTES;
use bankfree_gen::kernel::layout::{Layout, MAX_PAD};
use bankfree_gen::{Kernel, Model, SpecError, Strategy, TransposeSpec};

/// Wavefronts and ideal of `elem[f(lane)]` for the first `lanes` lanes.
fn cost(model: Model, bytes: u32, lanes: u64, f: impl Fn(u64) -> u64) -> (u32, u32) {
    let addrs: Vec<Option<u64>> = (0..32)
        .map(|l| (l < lanes).then(|| f(l) * u64::from(bytes)))
        .collect();
    let a = analyze(model, bytes, &addrs).expect("valid access");
    (a.wavefronts, a.ideal)
}

#[test]
fn reproduces_the_h100_measurements() {
    // (bytes, pattern, wavefronts) as ncu counted them on the H100.
    type Fact = (u32, &'static str, fn(u64) -> u64, u32);
    let table: [Fact; 11] = [
        (4, "f[lane]", |l| l, 1),
        (4, "f[33*lane]", |l| 33 * l, 1),
        (4, "f[32*lane]", |l| 32 * l, 32),
        (2, "h[32*lane]", |l| 32 * l, 16),
        (2, "h[33*lane]", |l| 33 * l, 1),
        (1, "c[32*lane]", |l| 32 * l, 8),
        (1, "c[33*lane]", |l| 33 * l, 1),
        (8, "d[lane]", |l| l, 2),
        (8, "d[33*lane]", |l| 33 * l, 2),
        (8, "d[32*lane]", |l| 32 * l, 32),
        (8, "d[lane^16]", |l| l ^ 16, 2),
    ];
    for (bytes, name, f, want) in table {
        assert_eq!(cost(Model::Hopper, bytes, 32, f).0, want, "{name}");
    }
    assert_eq!(cost(Model::Hopper, 16, 32, |l| l), (4, 4), "v[lane]");
    assert_eq!(cost(Model::Hopper, 16, 32, |l| 8 * l).0, 32, "v[8*lane]");
    // identical 16-byte addresses merge: fewer than 4 wavefronts.
    assert!(cost(Model::Hopper, 16, 32, |_| 0).0 < 4);
    // lanes in one 32-bit word never conflict
    assert_eq!(cost(Model::Hopper, 1, 32, |l| l), (1, 1));
    assert_eq!(cost(Model::Hopper, 2, 32, |l| l / 2), (1, 1));
}

#[test]
fn stride_tables_of_the_classic_write_ups() {
    // tile[threadIdx.x][0] with float tile[32][32]: addresses 0, 128, ... 3968, all bank 0.
    let lanes = |cols: u64, n: u64| {
        let addrs: Vec<Option<u64>> = (0..32).map(|l| (l < n).then_some(l * cols * 4)).collect();
        analyze(Model::Hopper, 4, &addrs).expect("valid")
    };
    let a = lanes(32, 32);
    let addrs: Vec<u64> = a.lanes.iter().map(|h| h.addr).collect();
    assert_eq!(&addrs[..3], &[0, 128, 256]);
    assert_eq!(addrs[31], 3968);
    assert!(a.lanes.iter().all(|h| h.bank == 0));
    assert_eq!(a.wavefronts, 32);
    // float tile[32][33]: 0, 132, 264 ... 4092 in banks 0, 1, 2 ... 31.
    let a = lanes(33, 32);
    assert_eq!(a.lanes[1].addr, 132);
    assert_eq!(a.lanes[31].addr, 4092);
    let banks: Vec<u64> = a.lanes.iter().map(|h| h.bank).collect();
    assert_eq!(banks, (0..32).collect::<Vec<_>>());
    assert_eq!(a.wavefronts, 1);
    // float tile[31][31], 31 threads: 0, 124, 248, 372 ... 3720 in banks 0, 31, 30, 29 ... 2.
    let a = lanes(31, 31);
    assert_eq!(a.lanes.len(), 31);
    let got: Vec<(u64, u64)> = a.lanes.iter().map(|h| (h.addr, h.bank)).collect();
    assert_eq!(&got[..4], &[(0, 0), (124, 31), (248, 30), (372, 29)]);
    assert_eq!(got[30], (3720, 2));
    assert_eq!(a.wavefronts, 1);
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[test]
fn odd_strides_are_conflict_free() {
    // With m banks, stride s (in words) and n lanes: no conflict iff n <= m / gcd(m, s).
    for (model, m) in [(Model::Hopper, 32u64), (Model::Legacy16, 16)] {
        for s in 1..=64u64 {
            for n in 1..=m {
                let (wf, ideal) = cost(model, 4, n, |l| s * l);
                let free = n <= m / gcd(m, s);
                assert_eq!(wf <= ideal, free, "{model} s={s} n={n}: {wf} vs {ideal}");
            }
        }
    }
}

#[test]
fn legacy_16_bank_examples() {
    let l16 = Model::Legacy16;
    assert_eq!(cost(l16, 4, 32, |l| l), (2, 2), "float s[tid]");
    assert_eq!(cost(l16, 4, 32, |l| 3 * l), (2, 2), "float s[3*tid]");
    // double s[tid]: two 32-bit requests per half-warp, each 2-way.
    assert_eq!(cost(l16, 8, 32, |l| l), (8, 4), "double s[tid]: 2-way");
    // char s[tid]: four lanes per word: 4-way; char s[4*tid]: free.
    assert_eq!(cost(l16, 1, 32, |l| l), (8, 2), "char s[tid]: 4-way");
    assert_eq!(cost(l16, 1, 32, |l| 4 * l), (2, 2), "char s[4*tid]");
    // struct {float x, y, z} read word by word: stride 3, free; {float x, y}: stride 2, 2-way.
    let words = |stride: u64, k: u64| {
        let addrs: Vec<Option<u64>> = (0..32).map(|l| Some((stride * l + k) * 4)).collect();
        analyze(l16, 4, &addrs).expect("valid").wavefronts
    };
    assert!((0..3).all(|k| words(3, k) == 2), "float3 struct is free");
    assert!((0..2).all(|k| words(2, k) == 4), "float2 struct is 2-way");
}

#[test]
fn every_pad_and_swizzle_is_proven_or_refused_truthfully() {
    let mut built = 0;
    for spec in grid(&[Strategy::Pad(None), Strategy::Xor]) {
        match Kernel::build(spec) {
            Ok(k) => {
                let r = k.analyze(Model::Hopper);
                assert!(r.conflict_free, "{spec:?}: {}", r.verdict());
                assert!(r.errors.is_empty());
                // A realign kernel's write reads five words of a column.
                let shared = if k.realign().is_some() { 6 } else { 2 };
                assert_eq!(r.instructions.len(), shared, "{spec:?}");
                // `pad` is the smallest: every smaller padding conflicts.
                if let Layout::Pad(n) = k.layout() {
                    for smaller in 0..n {
                        let k = Kernel::with_layout(spec, Layout::Pad(smaller)).expect("valid");
                        assert!(!k.conflict_free(Model::Hopper), "{spec:?} pad {smaller}");
                    }
                }
                built += 1;
            }
            Err(SpecError::SharedTooLarge { .. }) => {}
            Err(SpecError::NoPad { .. }) => {
                assert_eq!(spec.strategy, Strategy::Pad(None));
                for n in 0..=MAX_PAD {
                    let k = Kernel::with_layout(spec, Layout::Pad(n)).expect("valid");
                    assert!(!k.conflict_free(Model::Hopper), "{spec:?} pad {n}");
                }
            }
            Err(e) => panic!("{spec:?}: {e}"),
        }
    }
    assert!(built > 600, "only {built} specs built");
}

#[test]
fn the_swizzle_fits_wherever_the_unpadded_tile_fits() {
    for spec in grid(&[Strategy::Xor]) {
        let unpadded = TransposeSpec {
            strategy: Strategy::None,
            ..spec
        };
        let plain = Kernel::with_layout(unpadded, Layout::Pad(0)).expect("valid");
        let fits = plain.shared_bytes() <= MAX_SHARED_BYTES;
        assert_eq!(Kernel::build(spec).is_ok(), fits, "{spec:?}");
    }
}

#[test]
fn pad_n_follows_the_stride_rule() {
    // 4-byte elements, tile 32: row stride 32 + n words is conflict-free iff it is odd.
    for n in 0..=MAX_PAD {
        let spec = TransposeSpec::new(32, 4, Strategy::Pad(Some(n))).expect("valid");
        let k = Kernel::build(spec).expect("fits");
        assert_eq!(
            k.analyze(Model::Hopper).conflict_free,
            n % 2 == 1,
            "pad({n})"
        );
    }
    // pad(2) is 2-way on the transposed read.
    let k = Kernel::build(TransposeSpec::new(32, 4, Strategy::Pad(Some(2))).expect("valid"))
        .expect("fits");
    let r = k.analyze(Model::Hopper);
    assert_eq!(
        (r.instructions[1].wavefronts, r.instructions[1].ideal),
        (2, 1)
    );
    assert!(r
        .verdict()
        .starts_with("2-way bank conflict on the shared load"));
}

#[test]
fn none_conflicts_as_the_write_ups_say() {
    let k = Kernel::build(TransposeSpec::new(32, 4, Strategy::None).expect("valid")).expect("fits");
    let r = k.analyze(Model::Hopper);
    assert!(!r.conflict_free);
    let (store, load) = (&r.instructions[0], &r.instructions[1]);
    assert_eq!((store.kind, store.wavefronts), ("store", 1));
    assert_eq!((load.kind, load.wavefronts, load.ideal), ("load", 32, 1));
    assert_eq!(load.mean_wavefronts(), 32.0);
    // 8-byte: 16-way per half-warp (gpu-facts: `[32][32]` is 16-way for doubles).
    let k = Kernel::build(TransposeSpec::new(32, 8, Strategy::None).expect("valid")).expect("fits");
    let i = &k.analyze(Model::Hopper).instructions[1];
    assert_eq!((i.wavefronts, i.ideal), (32, 2));
}

#[test]
fn naive_has_no_shared_instruction() {
    for e in all_elem_bytes() {
        let k = Kernel::build(TransposeSpec::new(32, e, Strategy::Naive).expect("valid"))
            .expect("builds");
        let r = k.analyze(Model::Hopper);
        assert!(r.instructions.is_empty() && r.conflict_free);
        assert_eq!(k.shared_bytes(), 0);
    }
}

#[test]
fn pad_amounts_are_computed_per_element_size() {
    // One 32-bit word of padding per row at tile 32: 4 bytes, 2 halves, 1 word or wider.
    let pad =
        |e| match Kernel::build(TransposeSpec::new(32, e, Strategy::Pad(None)).expect("valid")) {
            Ok(k) => k.layout(),
            Err(err) => panic!("{err}"),
        };
    assert_eq!(pad(1), Layout::Pad(4));
    assert_eq!(pad(2), Layout::Pad(2));
    for e in [4, 8, 12, 16, 64] {
        assert_eq!(pad(e), Layout::Pad(1), "{e}-byte");
    }
}

#[test]
fn the_proven_table_is_what_the_analyzer_computes() {
    let want = bankfree_gen::select::table::render();
    let have = include_str!("../src/check/proven.in");
    let first = want
        .lines()
        .zip(have.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(want.lines().count().min(have.lines().count()));
    assert!(
        want == have,
        "kernels-gen/src/check/proven.in differs from what the analyzer computes, first at line {}:\n  computed: {:?}\n  the file: {:?}\nRun `cargo run --release -p bankfree-gen -- proven > kernels-gen/src/check/proven.in` and review the diff.",
        first + 1,
        want.lines().nth(first),
        have.lines().nth(first)
    );
}
