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
