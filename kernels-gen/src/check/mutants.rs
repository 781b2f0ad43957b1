//! A test that cannot fail proves nothing: these break a kernel's moves (which
//! only this crate can do) and watch the simulator catch each break.

use crate::check::sim::{self, SimError};
use crate::ir::shape::Shape;
use crate::kernel::spec::{Strategy, TransposeSpec};
use crate::kernel::Kernel;

#[test]
fn the_simulator_catches_wrong_indices() {
    let good = Kernel::build(TransposeSpec::new(32, 4, Strategy::Pad(None)).expect("valid"))
        .expect("builds");
    let shape = Shape::new(40, 50);
    // Bytes that differ between neighbours (a prime period), so a misplaced one shows.
    let src: Vec<u8> = (0..2000 * 4).map(|i| (i % 251) as u8).collect();
    let mut dst = vec![0u8; 2000 * 4];
    assert!(sim::run(&good, &shape, &src, &mut dst, None).is_ok());

    // 1. Shared read at the wrong place: reads what this tile never wrote.
    let mut bad = good.clone();
    bad.moves[1].from.index = bad.moves[1].from.index.clone() + 1;
    assert!(sim::run(&bad, &shape, &src, &mut dst, None).is_err());

    // 2. Reading the tile untransposed: runs, but the output is wrong.
    let mut bad = good.clone();
    bad.moves[1].from.index = bad.moves[0].to.index.clone();
    let mut want = vec![0u8; 2000 * 4];
    sim::reference(&shape, 4, &src, &mut want).expect("reference");
    if sim::run(&bad, &shape, &src, &mut dst, None).is_ok() {
        assert_ne!(dst, want);
    }

    // 3. A guard dropped: writes past the matrix are caught.
    let mut bad = good.clone();
    bad.moves[1].guard.0.clear();
    assert!(sim::run(&bad, &shape, &src, &mut dst, None).is_err());

    // 4. Every element written twice.
    let mut bad = good;
    let first = bad.moves[1].clone();
    bad.moves.push(first);
    assert!(matches!(
        sim::run(&bad, &shape, &src, &mut dst, None),
        Err(SimError::WriteCount { count: 2, .. })
    ));
}

#[test]
fn the_simulator_catches_an_interior_guard_that_lets_an_edge_tile_in() {
    use crate::ir::guard::Guard;
    for e in [1u32, 2] {
        let good = Kernel::build(TransposeSpec::realign(e).expect("valid")).expect("builds");
        let side = u64::from(good.spec.geometry.tile_elems());
        // Three tile rows and columns, the middle one interior; ragged edges.
        let shape = Shape::new(3 * side - 5, 3 * side - 3);
        let n = (shape.rows * shape.cols) as usize * e as usize;
        let src: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
        let mut dst = vec![0u8; n];
        let stats = sim::run(&good, &shape, &src, &mut dst, None).expect("the kernel runs");
        assert!(stats.interior > 0, "{e}-byte: no tile ran unguarded");
        let r = good.realign.as_deref().expect("a realign kernel");
        // Each bound of the interior guard dropped in turn, and none at all.
        let mut weaker: Vec<Guard> = (0..r.interior.0.len())
            .map(|i| {
                let mut g = r.interior.clone();
                g.0.remove(i);
                g
            })
            .collect();
        weaker.push(Guard::default());
        for (i, guard) in weaker.into_iter().enumerate() {
            let mut bad = good.clone();
            if let Some(r) = bad.realign.as_deref_mut() {
                r.interior = guard;
            }
            let got = sim::run(&bad, &shape, &src, &mut dst, None);
            assert!(
                matches!(got, Err(SimError::Interior { .. })),
                "{e}-byte, mutant {i}: {got:?}"
            );
        }
    }
}
