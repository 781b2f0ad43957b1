//! A test that cannot fail proves nothing: these break a kernel's moves (which
//! only this crate can do) and watch the simulator catch each break.

use crate::check::sim::{self, SimError};
use crate::ir::guard::Guard;
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
        let set = |k: &mut Kernel, g| {
            if let Some(r) = k.realign.as_deref_mut() {
                r.interior = g;
            }
        };
        catches_weaker(&good, &r.interior, set, &shape, &format!("{e}-byte"));
    }
}

#[test]
fn the_analyzer_needs_the_realign_rotation_and_the_simulator_does_not() {
    use crate::check::analysis::analyze;
    use crate::hw::bank::Model;
    use crate::ir::expr::{Expr, Var};
    use crate::kernel::geometry::REALIGN_PITCH;
    for e in [1u32, 2] {
        let good = Kernel::build(TransposeSpec::realign(e).expect("valid")).expect("builds");
        assert!(analyze(&good, Model::Hopper).conflict_free, "{e}-byte");
        // The same layout without the rotation: words at `shared(c, w)` as they are.
        let mut bad = good.clone();
        let at = |c: Expr, w: Expr| good.layout.shared_index(REALIGN_PITCH, c, w);
        let (c, b1) = (good.moves[1].lets[1].clone(), good.moves[1].lets[5].clone());
        bad.moves[1].from.index = at(c.clone(), b1.clone());
        let cpl = i64::from(good.spec.geometry.realign_cols());
        if let Some(r) = bad.realign.as_deref_mut() {
            r.next = (1..=4).map(|i| at(c.clone(), b1.clone() + i)).collect();
            let (l, band) = (r.lane[0].clone(), r.lane[1].clone());
            bad.moves[0].to.index = at(l * cpl + Expr::var(Var::K), band);
        }
        // It still transposes right: the rotation only moves words within a
        // column, the same way for its store and its loads.
        let side = u64::from(good.spec.geometry.tile_elems());
        let shape = Shape::new(3 * side + 7, 2 * side + 5);
        let n = (shape.rows * shape.cols) as usize * e as usize;
        let src: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
        let (mut want, mut got) = (vec![0u8; n], vec![0u8; n]);
        sim::reference(&shape, e as usize, &src, &mut want).expect("reference");
        sim::run(&bad, &shape, &src, &mut got, None).expect("the mutant runs");
        assert_eq!(got, want, "{e}-byte");
        // But the 4 rows a warp writes read the same banks.
        let report = analyze(&bad, Model::Hopper);
        assert!(!report.conflict_free, "{e}-byte: {}", report.verdict());
    }
}

#[test]
fn the_simulator_catches_a_tail_tile_that_misses_a_row_or_an_element() {
    use crate::ir::expr::{Expr, Var};
    use crate::ir::guard::Less;
    use crate::kernel::realign::TAIL_SPAN;
    for e in [1u32, 2] {
        let good = Kernel::build(TransposeSpec::realign(e).expect("valid")).expect("builds");
        let g = good.spec.geometry;
        let (side, sector) = (i64::from(g.tile_elems()), i64::from(g.sector_elems()));
        // The most rows a tail tile takes: two rows of tiles and `TAIL_SPAN -
        // sector` positions.
        let most = (2 * side + TAIL_SPAN - sector) as u64;
        let run = |k: &Kernel, rows: u64| {
            let shape = Shape::new(rows, 2 * side as u64 + 3);
            let n = (shape.rows * shape.cols) as usize * e as usize;
            let src: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
            let (mut want, mut got) = (vec![0u8; n], vec![0u8; n]);
            sim::reference(&shape, e as usize, &src, &mut want).expect("reference");
            sim::run(k, &shape, &src, &mut got, None).map(|_| got == want)
        };
        assert_eq!(run(&good, most - 1), Ok(true), "{e}-byte");
        assert_eq!(run(&good, most), Ok(true), "{e}-byte");
        assert_eq!(run(&good, most + 1), Ok(true), "{e}-byte");
        // The tail tile's elements read one element off: wrong or caught.
        let mut bad = good.clone();
        if let Some(r) = bad.realign.as_deref_mut() {
            r.tail_move.from.index = r.tail_move.from.index.clone() + 1;
        }
        // (One row fewer than the most: an odd destination pitch, so the rows'
        // windows start at every phase and the tail tile has elements to move.)
        assert_ne!(
            run(&bad, most - 1),
            Ok(true),
            "{e}-byte: the tail tile did not run"
        );
        // A tail guard that takes one row more leaves that row's last position
        // unwritten (no lane holds it).
        let mut bad = good.clone();
        if let Some(r) = bad.realign.as_deref_mut() {
            let tile_r = r.tail.0[0].1.clone(); // `0 < tile_r`
            r.tail.0[1] = Less(
                Expr::var(Var::Rows),
                tile_r * side + (TAIL_SPAN - sector + 2),
            );
        }
        assert!(
            matches!(
                run(&bad, most + 1),
                Err(SimError::WriteCount { count: 0, .. })
            ),
            "{e}-byte"
        );
    }
}

#[test]
fn the_simulator_catches_a_skew_interior_guard_that_lets_an_edge_tile_in() {
    use crate::kernel::geometry::Form;
    use crate::kernel::order::TileOrder;
    // Every element size of the skew tiles (those of 2 and 12 bytes have no
    // interior body), both widths, 8 and 16 thread rows.
    let specs = [2u32, 4, 8, 12, 16].into_iter().flat_map(|e| {
        [(32, 8), (64, 8), (32, 16)].map(|(t, rows)| {
            TransposeSpec::new(t, e, Strategy::Pad(None))
                .and_then(|s| s.with_form(Form::Skew))
                .and_then(|s| s.with_block_rows(rows))
                .expect("valid")
        })
    });
    for (spec, order) in specs.flat_map(|s| TileOrder::ALL.map(|o| (s, o))) {
        let e = spec.geometry.elem_bytes;
        let good = (Kernel::build(spec).and_then(|k| k.with_order(order))).expect("builds");
        let g = good.spec.geometry;
        let (deep, t) = (u64::from(g.skew_rows()), u64::from(g.tile));
        // Three tile rows and columns, the middle one interior; ragged edges.
        let shape = Shape::new(3 * deep - 5, 3 * t - 3);
        let n = (shape.rows * shape.cols) as usize * e as usize;
        let src: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
        let mut dst = vec![0u8; n];
        let stats = sim::run(&good, &shape, &src, &mut dst, None).expect("the kernel runs");
        let Some(inside) = good.interior().map(|i| i.guard.clone()) else {
            assert!(matches!(e, 2 | 12), "{spec:?}: no interior body");
            assert_eq!(stats.interior, 0);
            continue;
        };
        assert!(stats.interior > 0, "{spec:?} {order:?}: no interior tile");
        let set = |k: &mut Kernel, g| {
            if let Some(i) = k.interior.as_deref_mut() {
                i.guard = g;
            }
        };
        catches_weaker(&good, &inside, set, &shape, &format!("{spec:?} {order:?}"));
    }
}

/// Runs `good` on `shape` with each mutant of its interior guard `interior`
/// (each bound dropped in turn, and all), put in place by `set`, and asserts
/// that the simulator catches every one running an edge tile unguarded.
fn catches_weaker(
    good: &Kernel,
    interior: &Guard,
    set: impl Fn(&mut Kernel, Guard),
    shape: &Shape,
    what: &str,
) {
    let n = (shape.rows * shape.cols) as usize * good.spec.geometry.elem_bytes as usize;
    let src: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
    let mut dst = vec![0u8; n];
    let mut mutants: Vec<Guard> = (0..interior.0.len())
        .map(|i| {
            let mut w = interior.clone();
            w.0.remove(i);
            w
        })
        .collect();
    mutants.push(Guard::default());
    for (i, guard) in mutants.into_iter().enumerate() {
        let mut bad = good.clone();
        set(&mut bad, guard);
        let got = sim::run(&bad, shape, &src, &mut dst, None);
        assert!(
            matches!(got, Err(SimError::Interior { .. })),
            "{what}, mutant {i}: {got:?}"
        );
    }
}
