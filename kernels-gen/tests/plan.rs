//! The permute planner's choices: which plan a permute gets (copy, transpose,
//! gather), on what shape, and which kernels its list runs. The kernels
//! themselves are simulated against a CPU permute in `tests/permute.rs`.

use bankfree_gen::check::fit::Refusal;
use bankfree_gen::check::suit::unsuited;
use bankfree_gen::ir::shape::Shape;
use bankfree_gen::select::permute::{plan, plan_tiles, plan_unwidened, Kind, Permute};
use bankfree_gen::TransposeSpec;

#[test]
fn the_issue_shapes_plan_as_documented() {
    let cases: [(&[u64], &[usize], u32, Kind); 6] = [
        (&[8, 2048, 32, 128], &[0, 2, 1, 3], 2, Kind::Copy),
        (&[8, 2048, 3, 32, 128], &[2, 0, 3, 1, 4], 2, Kind::Copy),
        (&[64, 256, 56, 56], &[0, 2, 3, 1], 2, Kind::Transpose),
        (&[2160, 3840, 3], &[2, 0, 1], 1, Kind::Transpose),
        (&[16, 16, 16, 16, 16], &[4, 3, 2, 1, 0], 4, Kind::Transpose),
        (
            &[8, 7, 6, 5, 4, 3, 32],
            &[6, 2, 0, 4, 1, 5, 3],
            4,
            Kind::Transpose,
        ),
    ];
    for (dims, perm, e, kind) in cases {
        let p = plan(&Permute::new(dims, perm, e)).expect("plans");
        assert_eq!(p.kind, kind, "{dims:?} {perm:?}");
    }
    // HWC -> CHW: H and W merge into one 8294400 x 3 transpose.
    let p = plan(&Permute::new(&[2160, 3840, 3], &[2, 0, 1], 1)).expect("plans");
    assert_eq!(
        (p.shape.rows, p.shape.cols, p.shape.batch),
        (8_294_400, 3, 1)
    );
    // The rank-5 reversal folds a second axis into each tile side (contiguous in
    // the buffer that side runs along): 16 transposes of 256 x 256.
    let p = plan(&Permute::new(&[16; 5], &[4, 3, 2, 1, 0], 4)).expect("plans");
    assert_eq!(
        (p.shape.batch, p.shape.rows, p.shape.cols, p.shape.outer.n),
        (16, 256, 256, 0)
    );
    assert_eq!(p.shape.fold.counts(), [1, 1]);
    // The rank-7 case: rows 5 x 3 x 7 (destination-contiguous), cols 32.
    let p = plan(&Permute::new(
        &[8, 7, 6, 5, 4, 3, 32],
        &[6, 2, 0, 4, 1, 5, 3],
        4,
    ))
    .expect("plans");
    assert_eq!((p.shape.rows, p.shape.cols, p.shape.batch), (105, 32, 192));
    assert_eq!(p.shape.fold.counts(), [2, 0]);
    // NHWC -> NCHW with 3 channels: no axis continues C in the source, so no
    // fold; the narrow kernels take the 3-column side.
    let p = plan(&Permute::new(&[4, 50, 60, 3], &[0, 3, 1, 2], 1)).expect("plans");
    assert_eq!((p.shape.cols, p.shape.fold.counts()), (3, [0, 0]));
}

#[test]
fn copies_take_rows_along_an_axis_that_fills_a_chunk() {
    // Blocks of 2: along the destination's innermost other axis (2 items) a
    // batch item would be 8 bytes, so the rows run along the longest axis.
    // (`plan` widens it: a transpose of 2 x 4194000 4-byte blocks; where a
    // pointer is off 4 bytes it gathers, its blocks not whole 16-byte vectors.)
    let request = Permute::new(&[2, 4660, 15, 60, 2], &[1, 2, 3, 0, 4], 2);
    let wide = plan(&request).expect("plans");
    assert_eq!((wide.kind, wide.elem_bytes), (Kind::Transpose, 4));
    assert_eq!((wide.shape.rows, wide.shape.cols), (2, 4_194_000));
    assert_eq!(plan_unwidened(&request).expect("plans").kind, Kind::Gather);
    let p = plan_tiles(&request).expect("plans");
    assert_eq!(p.kind, Kind::Copy);
    assert_eq!(
        (p.shape.rows, p.shape.cols, p.shape.batch),
        (4_194_000, 2, 2)
    );
    assert_eq!((p.shape.src_ld, p.shape.dst_ld), (2, 4));
    // Items of 2048 x 256 bytes fill chunks: rows stay destination-innermost.
    let p = plan(&Permute::new(&[8, 2048, 32, 128], &[0, 2, 1, 3], 2)).expect("plans");
    assert_eq!((p.shape.rows, p.shape.dst_ld), (2048, 128));
}

#[test]
fn bad_permutes_are_named() {
    let err =
        |dims: &[u64], perm: &[usize]| plan(&Permute::new(dims, perm, 4)).unwrap_err().to_string();
    assert!(err(&[2, 3], &[0, 0]).contains("not a permutation"));
    assert!(err(&[2, 3], &[1]).contains("1 entries but dims has 2"));
    assert!(err(&[], &[]).contains("rank 0"));
    assert!(err(&[2; 9], &[0, 1, 2, 3, 4, 5, 6, 7, 8]).contains("rank 9"));
    let mut p = Permute::new(&[4, 4], &[1, 0], 4);
    p.dst_strides = Some(vec![1, 1]);
    let e = plan(&p).unwrap_err().to_string();
    assert!(e.contains("overlap"), "{e}");
    p.dst_strides = Some(vec![1]);
    assert!(plan(&p)
        .unwrap_err()
        .to_string()
        .contains("dst_strides has 1 entries"));
}

#[test]
fn batches_of_matrices_shorter_than_a_thin_sub_tile_gather() {
    // [B, R, 6, 3] -> [B, 3, 6, R]: R rows of 18 folded columns per item.
    let planned = |e: u32, rows: u64| {
        let batch = (8 << 20) / (rows * 18 * u64::from(e));
        let p = plan(&Permute::new(&[batch, rows, 6, 3], &[0, 3, 2, 1], e)).expect("plans");
        (p.kind, batch)
    };
    // Below half a sub-tile the thin kernel refuses them.
    for (e, rows, min) in [(1u32, 5u64, 496u64), (1, 495, 496), (2, 247, 248)] {
        let (kind, batch) = planned(e, rows);
        assert_eq!(kind, Kind::Gather, "{e}-byte {rows} rows");
        let thin = TransposeSpec::thin(e).expect("thin spec").geometry;
        let tiled = plan_tiles(&Permute::new(&[batch, rows, 6, 3], &[0, 3, 2, 1], e))
            .expect("plans")
            .shape;
        assert_eq!(
            unsuited(&thin, &tiled),
            Some(Refusal::ShortItems { rows, min }),
            "{e}-byte {rows} rows"
        );
        // A batch of plain matrices of the same sides keeps it.
        let plain = Shape {
            batch,
            ..Shape::new(rows, 18)
        };
        assert_eq!(unsuited(&thin, &plain), None, "{e}-byte {rows} rows");
    }
    // Half a sub-tile to a whole one: gathered where the gather uses its
    // sectors well (this layout); a whole sub-tile or more: the thin kernel.
    for (e, rows, kind) in [
        (1u32, 991u64, Kind::Gather),
        (2, 495, Kind::Gather),
        (1, 992, Kind::Transpose),
        (2, 496, Kind::Transpose),
    ] {
        assert_eq!(planned(e, rows).0, kind, "{e}-byte {rows} rows");
    }
    // A twelfth of each source sector gathered: the thin kernel.
    let p = plan(&Permute::new(&[9, 22, 25, 282, 12], &[0, 4, 2, 1, 3], 2)).expect("plans");
    assert_eq!(p.kind, Kind::Transpose);
}

#[test]
fn copies_of_blocks_off_the_destination_sectors_gather() {
    // Blocks of 80 bytes share sectors with other batch items' blocks.
    for (dims, perm, e) in [
        (vec![29u64, 1205, 12, 10], vec![2usize, 1, 0, 3], 8u32),
        (vec![29, 14463, 20], vec![1, 0, 2], 4),
        (vec![7, 59918, 40], vec![1, 0, 2], 2),
    ] {
        let p = plan(&Permute::new(&dims, &perm, e)).expect("plans");
        assert_eq!(p.kind, Kind::Gather, "{dims:?} {perm:?} {e}-byte");
        assert_eq!(
            plan_tiles(&Permute::new(&dims, &perm, e))
                .expect("plans")
                .kind,
            Kind::Copy
        );
    }
    // Whole sectors: copies.
    for (dims, perm, e) in [
        (vec![29u64, 18078, 16], vec![1usize, 0, 2], 4u32),
        (vec![7, 37449, 16], vec![1, 0, 2], 8),
        (vec![29, 9039, 64], vec![1, 0, 2], 2),
    ] {
        let p = plan(&Permute::new(&dims, &perm, e)).expect("plans");
        assert_eq!(p.kind, Kind::Copy, "{dims:?} {perm:?} {e}-byte");
    }
}

#[test]
fn half_filled_tiles_of_2_and_4_byte_elements_gather_where_sectors_are_used_whole() {
    assert_kinds(vec![
        (vec![37, 3, 75573], vec![2, 1, 0], 4, Kind::Gather),
        (
            vec![38, 3, 7, 467, 3, 15],
            vec![3, 1, 2, 5, 4, 0],
            2,
            Kind::Gather,
        ),
        (vec![5825, 60, 6, 3], vec![0, 3, 2, 1], 4, Kind::Gather),
        // 8-byte tiles of the same fill stay tiles.
        (
            vec![39, 23, 8, 5, 3, 38],
            vec![0, 4, 2, 5, 1, 3],
            8,
            Kind::Transpose,
        ),
        (
            vec![716, 5, 13, 3, 30],
            vec![0, 2, 4, 3, 1],
            8,
            Kind::Transpose,
        ),
        // Rows of 150 whose last pieces split sectors, but a batch of 4-byte
        // matrices: tiles.
        (vec![2330, 150, 6, 3], vec![0, 3, 2, 1], 4, Kind::Transpose),
        // Rows of 99, but one element of a sector used per visit: tiles.
        (vec![11, 1323, 9, 64], vec![1, 3, 0, 2], 4, Kind::Transpose),
    ]);
}

#[test]
fn a_padded_folded_short_side_keeps_a_conflict_free_tile() {
    use bankfree_gen::select::permute::plan_kernels;
    use bankfree_gen::Strategy;
    // 9720 x 13, its rows folded: the 16-wide tile where padding makes it
    // conflict-free, else the 32-wide one; swizzled, always the 16-wide one.
    let dims = [6u64, 66, 27, 5, 12, 13];
    let perm = [1usize, 5, 2, 3, 4, 0];
    for e in [1u32, 2, 4, 8, 16] {
        let p = plan_tiles(&Permute::new(&dims, &perm, e)).expect("plans");
        assert_eq!(p.tile().0, 16, "{e}-byte");
        for strategy in [Strategy::Pad(None), Strategy::Xor] {
            let list = plan_kernels(&p, strategy).expect("kernels build");
            let last = list.last().expect("a tile");
            let g = last.spec().geometry;
            assert!(last.verdict().conflict_free, "{e}-byte {strategy:?}");
            // No padding spreads the 4-byte 16-wide tile's two rows a warp.
            let want = if e == 4 && strategy != Strategy::Xor {
                32
            } else {
                16
            };
            assert_eq!(g.tile, want, "{e}-byte {strategy:?}");
        }
    }
}

#[test]
fn short_destination_rows_whose_tiles_split_sectors_gather() {
    use bankfree_gen::select::gather::splits_sectors;
    assert_kinds(vec![
        // Rows of 33 to 256 items, each one's last piece sharing a sector with
        // the next row's first, and 4 or more of a sector's elements used per
        // visit: a gather.
        (vec![33, 254200, 2], vec![2, 1, 0], 2, Kind::Gather),
        (vec![36, 155344, 6], vec![2, 1, 0], 1, Kind::Gather),
        (vec![47, 89240, 2], vec![2, 1, 0], 4, Kind::Gather),
        (vec![250, 60000, 2], vec![2, 1, 0], 2, Kind::Gather),
        // A batch of 1-byte matrices whose axis is outermost in both buffers.
        (vec![8, 36, 19418, 6], vec![0, 3, 2, 1], 1, Kind::Gather),
        // A batch axis between the matrices' axes in the destination: tiles.
        (
            vec![56, 11, 238, 19, 3, 4],
            vec![1, 3, 4, 2, 5, 0],
            1,
            Kind::Transpose,
        ),
        // A batch of 4-byte matrices: tiles.
        (vec![64, 47, 1394, 2], vec![0, 3, 2, 1], 4, Kind::Transpose),
        // A plain 2-byte matrix of 33 to 128 rows that split sectors gathers;
        // of 130 rows, whole-sector rows, a batch or 4-byte elements, tiles.
        (vec![66, 254203], vec![1, 0], 2, Kind::Gather),
        (vec![60, 9020, 31], vec![1, 2, 0], 2, Kind::Gather),
        (vec![130, 129056], vec![1, 0], 2, Kind::Transpose),
        (vec![80, 209716], vec![1, 0], 2, Kind::Transpose),
        (vec![2, 66, 254203], vec![0, 2, 1], 2, Kind::Transpose),
        (vec![101, 83056], vec![1, 0], 4, Kind::Transpose),
        // Past 256 rows the split pieces are too few: tiles.
        (vec![257, 60000, 2], vec![2, 1, 0], 2, Kind::Transpose),
        // Pieces of whole sectors: tiles.
        (vec![80, 69905, 3], vec![2, 1, 0], 2, Kind::Transpose),
        (vec![200, 13981, 3], vec![2, 1, 0], 4, Kind::Transpose),
        // 8-byte elements: tiles however they split.
        (vec![65, 21509, 3], vec![2, 1, 0], 8, Kind::Transpose),
        // 2.7 of a sector's 8 elements used per visit: tiles.
        (vec![55, 50840, 3], vec![2, 1, 0], 4, Kind::Transpose),
        // Rows folded over three axes, one element of a sector per visit.
        (
            vec![8, 7, 6, 5, 4, 3, 32],
            vec![6, 2, 0, 4, 1, 5, 3],
            4,
            Kind::Transpose,
        ),
    ]);
    // The split itself, on the tiled plans.
    let tiled = |dims: &[u64], e: u32| {
        plan_tiles(&Permute::new(dims, &[2, 1, 0], e))
            .expect("plans")
            .shape
    };
    assert!(splits_sectors(&tiled(&[33, 254200, 2], 2), 2));
    assert!(!splits_sectors(&tiled(&[80, 69905, 3], 2), 2));
    // 1-byte rows of 80: their last pieces of 16 bytes split sectors.
    assert!(splits_sectors(&tiled(&[80, 69905, 3], 1), 1));
    // 32 rows fit one tile; folded rows are not split.
    assert!(!splits_sectors(&tiled(&[32, 254200, 3], 2), 2));
    assert!(!splits_sectors(&tiled(&[3, 254200, 33], 2), 2));
}

/// Asserts the kind [`plan`] gives each permute: dims, perm, element bytes.
fn assert_kinds(cases: Vec<(Vec<u64>, Vec<usize>, u32, Kind)>) {
    for (dims, perm, e, kind) in cases {
        let p = plan(&Permute::new(&dims, &perm, e)).expect("plans");
        assert_eq!(p.kind, kind, "{dims:?} {perm:?} {e}-byte");
    }
}

#[test]
fn boxes_of_short_runs_gather_down_the_columns_of_their_chunks() {
    use bankfree_gen::kernel::order::TileOrder;
    use bankfree_gen::select::permute::plan_kernels;
    use bankfree_gen::Strategy;
    let first = |dims: &[u64], perm: &[usize], e: u32| {
        let p = plan(&Permute::new(dims, perm, e)).expect("plans");
        assert_eq!(p.kind, Kind::Gather, "{dims:?} {perm:?} {e}-byte");
        let list = plan_kernels(&p, Strategy::Xor).expect("kernels build");
        (list[0].order(), list.len())
    };
    // [a, j, b] -> [b, j, a]: runs of `a` shorter than a vector, items `b`
    // elements apart (under a sector), `vec / a` items per lane of 32 bytes or
    // more (64 where `a` divides the vector): down the columns, with its
    // quotients' twins and no single-element kernel (it stores no vectors).
    for (dims, perm, e) in [
        (&[3u64, 798915, 7][..], &[2usize, 1, 0][..], 2),
        (&[2, 932067, 9], &[2, 1, 0], 2),
        (&[3, 1597830, 7], &[2, 1, 0], 1),
        (&[2, 1864135, 9], &[2, 1, 0], 1),
        (&[6, 3, 200000, 7], &[0, 3, 2, 1], 2),
        (&[7, 2, 300000, 9], &[0, 3, 2, 1], 1),
    ] {
        assert_eq!(
            first(dims, perm, e).0,
            TileOrder::Columns,
            "{dims:?} {e}-byte"
        );
    }
    // Boxes that tiles would fill a third to two thirds of, of `b * b *
    // elem_bytes` up to 180 (a plain box) or 320 (a box over two outer axes
    // or more): gathered down the columns in place of the tiles.
    for (dims, perm, e) in [
        (&[5u64, 5, 2, 55924, 12][..], &[4usize, 0, 2, 3, 1][..], 1),
        (&[2, 1525201, 11], &[2, 1, 0], 1),
        (&[6, 4, 87381, 16], &[0, 3, 2, 1], 1),
        (&[60, 7, 6, 21, 37, 17], &[3, 0, 5, 2, 4, 1], 1),
        (&[2, 932067, 9], &[2, 1, 0], 2),
    ] {
        assert_eq!(
            first(dims, perm, e).0,
            TileOrder::Columns,
            "{dims:?} {e}-byte"
        );
        let tiled = plan_tiles(&Permute::new(dims, perm, e)).expect("plans");
        assert_eq!(tiled.kind, Kind::Transpose, "{dims:?}");
    }
    // Longer `b` (plain boxes past 180): the tiles.
    for (dims, perm, e) in [
        (&[6u64, 243148, 23][..], &[2usize, 1, 0][..], 1),
        (&[2, 883011, 19], &[2, 1, 0], 1),
        (&[882, 2, 2, 9, 48, 22], &[5, 2, 1, 0, 4, 3], 1),
        (&[3, 430185, 13], &[2, 1, 0], 2),
        (&[7, 299593, 16], &[2, 1, 0], 1),
        (&[3, 508400, 11], &[2, 1, 0], 2),
    ] {
        let p = plan(&Permute::new(dims, perm, e)).expect("plans");
        assert_eq!(p.kind, Kind::Transpose, "{dims:?} {e}-byte");
    }
    // Items 2 bytes apart (a lane's vector shares its sector with the next
    // lane's), runs of 2 with lanes' vectors 40 bytes apart (each load one
    // source row), long runs one source row apart, items far apart, and 8-byte
    // elements (a vector of 2): along the rows, then single elements.
    for (dims, perm, e) in [
        (&[2u64, 8388608, 2][..], &[2usize, 1, 0][..], 1),
        (&[2, 3355443, 5], &[2, 1, 0], 1),
        (&[4, 932067, 9], &[2, 1, 0], 1),
        (&[28, 40, 29959], &[0, 2, 1], 1),
        (&[4, 3, 2796202], &[2, 1, 0], 1),
        (&[3, 2, 58254, 24], &[2, 3, 1, 0], 4),
        (&[2, 4, 524288], &[2, 1, 0], 8),
    ] {
        let (order, n) = first(dims, perm, e);
        assert_eq!(order, TileOrder::Rows, "{dims:?} {e}-byte");
        assert!(n >= 2, "{dims:?}: {n} kernels");
    }
    // Runs of the source too (`[J, c, a] -> [c, J, a]`): along the rows while
    // lanes' vectors start at most 64 bytes apart in the source, down the
    // columns past that.
    for (dims, perm, e, order) in [
        (
            &[2396745u64, 2, 7][..],
            &[1usize, 0, 2][..],
            1,
            TileOrder::Rows,
        ),
        (&[1198372, 4, 7], &[1, 0, 2], 1, TileOrder::Rows),
        (&[699050, 4, 2, 6], &[2, 0, 1, 3], 1, TileOrder::Rows),
        (&[1198372, 2, 7], &[1, 0, 2], 2, TileOrder::Rows),
        (&[1242756, 9, 3], &[1, 0, 2], 1, TileOrder::Columns),
        (&[1118481, 5, 3], &[1, 0, 2], 2, TileOrder::Columns),
    ] {
        assert_eq!(first(dims, perm, e).0, order, "{dims:?} {e}-byte");
    }
}
