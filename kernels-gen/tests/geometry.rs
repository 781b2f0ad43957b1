//! A kernel's geometry: its units, skew depths and sector phases.

use bankfree_gen::kernel::geometry::{all_elem_bytes, Form, Geometry, Unit};

#[test]
fn units() {
    let g = |elem_bytes, vec| Geometry {
        form: Form::Tile,
        tile: 32,
        block_rows: 8,
        elem_bytes,
        vec,
        split: false,
    };
    assert_eq!(g(12, 1).unit(), (Unit::U32, 3));
    assert_eq!(g(16, 1).unit(), (Unit::U128, 1));
    assert_eq!(g(1, 4).unit(), (Unit::U32, 4));
    assert_eq!(all_elem_bytes().len(), 18);
}

#[test]
fn skew_tiles_are_64_rows_deep() {
    let skew = |tile| Geometry {
        form: Form::Skew,
        tile,
        block_rows: 8,
        elem_bytes: 4,
        vec: 1,
        split: false,
    };
    assert_eq!((skew(32).skew_depth(), skew(32).shared_rows()), (2, 71));
    assert_eq!((skew(64).skew_depth(), skew(64).shared_rows()), (1, 71));
}

#[test]
fn the_sector_phase_says_which_elements_start_on_sectors() {
    for elem_bytes in [1, 2, 4, 8, 12, 16, 20, 24, 28, 32, 36, 48, 60, 64] {
        let g = Geometry {
            form: Form::Skew,
            tile: 32,
            block_rows: 8,
            elem_bytes,
            vec: 1,
            split: false,
        };
        let (s, (d, m)) = (g.sector_elems(), g.sector_phase());
        assert_eq!(s * elem_bytes % 32, 0, "{elem_bytes}-byte period");
        // Every pointer the element's alignment allows, every position.
        for address in (0..256).map(|k| k * d) {
            for i in 0..64 {
                let on_sector = (address + i * elem_bytes) % 32 == 0;
                assert_eq!(
                    (i + address / d * m) % s == 0,
                    on_sector,
                    "{elem_bytes}-byte elements at {address} + {i}"
                );
            }
        }
    }
    let twelve = Geometry {
        form: Form::Skew,
        tile: 32,
        block_rows: 8,
        elem_bytes: 12,
        vec: 1,
        split: false,
    };
    assert_eq!((twelve.sector_elems(), twelve.sector_phase()), (8, (4, 3)));
}
