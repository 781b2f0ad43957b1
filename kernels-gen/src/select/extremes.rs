//! The planner's inputs are user numbers: every path they take before a launch,
//! over the kernels the attribute builds, with sizes anywhere in `u64` (the test
//! runs with overflow checks: a panic fails it).

use crate::check::fit::refusal;
use crate::check::index32;
use crate::check::suit::unsuited;
use crate::ir::shape::Shape;
use crate::kernel::geometry::Geometry;
use crate::kernel::launch::launch;
use crate::select::table;

/// Every path a call's numbers take before the launch, with sizes anywhere in
/// `u64` (run with overflow checks: a panic fails the test).
#[test]
fn user_numbers_never_panic() {
    const EDGES: [u64; 16] = [
        0,
        1,
        3,
        32,
        33,
        (1 << 31) - 1,
        1 << 31,
        u32::MAX as u64,
        1 << 32,
        (1 << 32) + 1,
        1 << 62,
        1 << 63,
        i64::MAX as u64,
        u64::MAX - 31,
        u64::MAX - 1,
        u64::MAX,
    ];
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut pick = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        match x % 3 {
            0 => EDGES[(x >> 8) as usize % EDGES.len()],
            1 => (x >> 8) % 100_000,
            _ => x,
        }
    };
    let mut geometries: Vec<Geometry> = table::specs().iter().map(|s| s.geometry).collect();
    geometries.sort_by_key(|g| format!("{g:?}"));
    geometries.dedup();
    let mut launched = 0;
    for _ in 0..2000 {
        let mut shape = Shape {
            batch: pick(),
            rows: pick(),
            cols: pick(),
            src_ld: pick(),
            dst_ld: pick(),
            src_batch_stride: pick(),
            dst_batch_stride: pick(),
            outer: Default::default(),
            copy: false,
            fold: Default::default(),
        };
        if shape.batch.is_multiple_of(2) {
            // Mostly valid: pitches just past a row, strides just past a matrix.
            shape.src_ld = shape.cols.saturating_add(shape.src_ld % 3);
            shape.dst_ld = shape.rows.saturating_add(shape.dst_ld % 3);
            shape.src_batch_stride = shape.rows.saturating_mul(shape.src_ld);
            shape.dst_batch_stride = shape.cols.saturating_mul(shape.dst_ld);
        }
        let checked = shape.check_buffers(u64::MAX, u64::MAX);
        let _ = shape.check_buffers(pick(), pick());
        for g in &geometries {
            let _ = (refusal(g, &shape), unsuited(g, &shape));
            if checked.is_ok() && refusal(g, &shape).is_none() && !shape.is_empty() {
                let _ = index32::runs(g, &shape);
                let l = launch(g, 1 << 16, shape.batch, shape.rows, shape.cols);
                assert!(l.grid.iter().all(|&n| n >= 1), "{g:?} {shape:?}");
                launched += 1;
            }
        }
    }
    assert!(launched > 2000, "{launched} launches reached");
    // The reported case: `dst_ld = 2^62` with f32 tiles is refused, not a panic.
    let huge = Shape {
        dst_ld: 1 << 62,
        ..Shape::new(64, 64)
    };
    assert!(huge.check_buffers(64 * 64, 64 * 64).is_err());
    for g in &geometries {
        let _ = unsuited(g, &huge);
    }
}
