use super::*;

fn axis(ext: u64, src: u64, dst: u64) -> Axis {
    Axis { ext, src, dst }
}

#[test]
fn sector_use_counts_the_near_elements_of_a_sector() {
    // [18, 5, 372827] -> [372827, 5, 18] u8: the source's innermost axis is
    // 90 apart in the destination, a sector's 32 elements in one chunk.
    let near = [
        axis(18, 1864135, 1),
        axis(5, 372827, 18),
        axis(372827, 1, 90),
    ];
    assert_eq!(sector_use(&near, 1, 16384), 1.0);
    // Its innermost axis outermost in the destination: each byte apart.
    let far = [axis(8, 303, 1), axis(303, 1, 110592)];
    assert_eq!(sector_use(&far, 1, 16384), 1.0 / 32.0);
    // 3 items far apart, then an axis near: a third of each sector.
    let third = [
        axis(19, 1766022, 1),
        axis(588674, 3, 19),
        axis(3, 1, 11184806),
    ];
    assert!((sector_use(&third, 1, 16384) - 1.0 / 3.0).abs() < 1e-9);
    // 4-byte elements: 8 to a sector.
    assert_eq!(sector_use(&far, 4, 4096), 1.0 / 8.0);
}

#[test]
fn a_gather_writes_the_destination_in_order() {
    // Destination order: the 5-axis, the 7-axis, the 3-axis.
    let axes = [axis(3, 35, 35), axis(5, 7, 1), axis(7, 1, 5)];
    let s = gather_shape(&axes).expect("dense destination");
    assert_eq!((s.rows, s.cols, s.batch), (5, 1, 21));
    assert_eq!((s.src_ld, s.dst_ld), (7, 5));
    assert_eq!((s.src_batch_stride, s.dst_batch_stride), (1, 5));
    assert_eq!(s.outer.n, 1);
    // A gap in the destination, or a destination-innermost axis too long.
    assert!(gather_shape(&[axis(3, 35, 36), axis(5, 7, 1), axis(7, 1, 5)]).is_none());
    assert!(gather_shape(&[axis(2, 1, 1 << 20), axis(1 << 20, 2, 1)]).is_some());
    assert!(gather_shape(&[axis(2, 1, 1 << 32), axis(1 << 32, 2, 1)]).is_none());
}
