//! The launcher's fit checks for kernels whose vectors need 16-byte rows.

use super::*;
use bankfree_gen::{Kernel, TransposeSpec};

/// A wordvec kernel's vectors need every row's run on 16 bytes: both
/// pointers, the pitches and the batch strides, whatever the element size.
#[test]
fn a_wordvec_kernel_runs_only_rows_that_start_on_16_bytes() {
    for e in [12u64, 20, 24, 60] {
        let k = Kernel::build(TransposeSpec::wordvec(e as u32).expect("valid")).expect("builds");
        let k = KernelSource::from_kernel(&k);
        let shape = Shape::new(64, 96);
        assert_eq!(why_unfit(&k, (0, 16 * e), &shape, 1), None);
        for (at, what) in [((4, 0), "src"), ((16, 8), "dst"), ((e, 0), "src")] {
            match why_unfit(&k, at, &shape, 1) {
                Some(Unfit::Pointer { what: w, bytes: 16 }) => assert_eq!(w, what),
                other => panic!("{e}-byte at {at:?}: {other:?}"),
            }
        }
        for bad in [
            Shape {
                src_ld: 97,
                ..shape
            },
            Shape {
                dst_ld: 67,
                ..shape
            },
            Shape {
                batch: 2,
                src_batch_stride: 64 * 96 + 1,
                ..shape
            },
        ] {
            assert!(
                matches!(why_unfit(&k, (0, 0), &bad, 1), Some(Unfit::Shape(_))),
                "{e}-byte {bad:?}"
            );
        }
    }
}

/// Of 16-byte units (32 to 64-byte elements) any pitch keeps the rows on
/// 16 bytes; the pointers still need them.
#[test]
fn a_wordvec_kernel_of_16_byte_units_needs_only_its_pointers_on_16_bytes() {
    for e in [32u64, 48, 64] {
        let k = Kernel::build(TransposeSpec::wordvec(e as u32).expect("valid")).expect("builds");
        let k = KernelSource::from_kernel(&k);
        let shape = Shape {
            src_ld: 97,
            dst_ld: 67,
            ..Shape::new(64, 96)
        };
        assert_eq!(why_unfit(&k, (e, 16 * e), &shape, 1), None);
        for (at, what) in [((4, 0), "src"), ((16, 8), "dst")] {
            match why_unfit(&k, at, &shape, 1) {
                Some(Unfit::Pointer { what: w, bytes: 16 }) => assert_eq!(w, what),
                other => panic!("{e}-byte at {at:?}: {other:?}"),
            }
        }
    }
}

/// A permute widened to blocks past 16 bytes wants their wordvec kernel
/// only: a pointer off 16 bytes is refused as off the unit, so that the
/// permute runs on its own elements instead; up to 16 bytes, the unit's
/// own alignment.
#[test]
fn blocks_past_16_bytes_need_both_pointers_on_16_bytes() {
    let shape = Shape::new(64, 96);
    for (e, unit) in [(20u32, 5u64), (40, 5), (36, 18)] {
        let k = Kernel::build(TransposeSpec::wordvec(e).expect("valid")).expect("builds");
        let k = KernelSource::from_kernel(&k);
        assert_eq!(why_unfit(&k, (0, 32), &shape, unit), None);
        for (at, what) in [((4, 0), "src"), ((16, 8), "dst")] {
            match why_unfit(&k, at, &shape, unit) {
                Some(Unfit::Unit { what: w, bytes: 16 }) => assert_eq!(w, what),
                other => panic!("{e}-byte at {at:?}: {other:?}"),
            }
        }
    }
    let k = Kernel::build(TransposeSpec::wordvec(12).expect("valid")).expect("builds");
    let k = KernelSource::from_kernel(&k);
    assert!(matches!(
        why_unfit(&k, (4, 0), &shape, 3),
        Some(Unfit::Pointer { bytes: 16, .. })
    ));
}
