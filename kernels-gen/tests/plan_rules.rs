//! Which kernel a permute plan runs where measured rules meet: the small
//! kernel's reach over large unaligned 1-byte matrices, the 16-wide tile
//! against the gather (`select::tile16`), the sides of 1- and 2-byte folded
//! tiles stepping over each other's axes or gathering, the thin kernel's
//! short matrices against the gather and the tiles, sparse gathers of
//! wide elements against the tiles, and batches of small tall matrices
//! against the tall kernel.

mod common;

use common::permute::check;

use bankfree_gen::select::permute::{pick, plan, plan_kernels, Kind, Permute};
use bankfree_gen::Form;
use bankfree_gen::Strategy as Layouts;

/// The plan's kind and the form and width of the kernel that runs it with
/// both pointers aligned (the swizzled layouts, the attribute's default).
fn runs(dims: &[u64], perm: &[usize], e: u32) -> (Kind, Form, u32) {
    let p = plan(&Permute::new(dims, perm, e)).expect("plans");
    let kernels = plan_kernels(&p, Layouts::Xor).expect("kernels build");
    let g = pick(&kernels, &p.shape)
        .expect("a kernel fits")
        .spec()
        .geometry;
    (p.kind, g.form, g.tile)
}

/// Runs the permute's plan through the simulator: it must move every element
/// like the CPU permute, and move some.
fn simulates(dims: &[u64], perm: &[usize], e: u32) {
    let ran = check(&Permute::new(dims, perm, e)).unwrap_or_else(|err| panic!("{dims:?}: {err}"));
    assert!(ran > 0, "{dims:?}: nothing ran");
}

/// A batch of 1-byte matrices over outer axes whose sides are not multiples
/// of 4 runs the small kernel only up to the matrices its 32-bit build takes
/// (16384 elements); larger ones run what a plain batch of them runs (squat,
/// thin or realign), and simulate like the CPU permute.
#[test]
fn large_unaligned_byte_matrices_over_outer_axes_leave_the_small_kernel() {
    assert_eq!(runs(&[15, 15, 6, 24855], &[2, 0, 3, 1], 1).1, Form::Squat);
    assert_eq!(
        runs(&[60, 2, 7, 9986, 4], &[1, 0, 4, 2, 3], 1).1,
        Form::Thin
    );
    assert_eq!(runs(&[8507, 29, 4, 34], &[2, 1, 3, 0], 1).1, Form::Realign);
    // 15 x 61 matrices stay the small kernel's.
    assert_eq!(runs(&[15, 15, 6, 61], &[2, 0, 3, 1], 1).1, Form::Small);
    for (dims, perm) in [
        (&[3u64, 15, 2, 2000][..], &[2usize, 0, 3, 1][..]),
        (&[2, 2, 3, 2731, 4], &[1, 0, 4, 2, 3]),
    ] {
        simulates(dims, perm, 1);
        let (_, form, _) = runs(dims, perm, 1);
        assert!(
            matches!(form, Form::Squat | Form::Thin),
            "{dims:?}: {form:?}"
        );
    }
}

/// A folded transpose on the 16-wide tile keeps its tiles where the gather
/// would fetch its source sectors several times over: 4-byte elements with
/// 10 to 16 items on the short side (11 where the tall kernel would run it)
/// and at most a quarter of each sector used, 8- and 16-byte ones from 8
/// items and up to three quarters. Shorter sides, sectors used whole and 1-
/// and 2-byte elements gather as before.
#[test]
fn folded_16_wide_tiles_keep_their_tiles_where_the_gather_refetches() {
    let tile16 = (Kind::Transpose, Form::Tile, 16);
    // 11184 x 10 f32, an eighth of each sector gathered.
    assert_eq!(runs(&[5592, 25, 3, 2, 10], &[2, 1, 4, 0, 3], 4), tile16);
    // 232 x 12 f32.
    assert_eq!(
        runs(&[59, 25, 58, 2, 4, 12], &[0, 5, 1, 3, 2, 4], 4),
        tile16
    );
    // 466033 x 9 f64, a quarter.
    assert_eq!(runs(&[466033, 3, 3], &[2, 1, 0], 8), tile16);
    // 8 x 102 f32: the side is short of 10.
    assert_eq!(
        runs(&[2570, 8, 4, 51, 2], &[2, 4, 0, 3, 1], 4).0,
        Kind::Gather
    );
    // 8 x 524288 f64: the gather uses its sectors whole.
    assert_eq!(runs(&[2, 4, 524288], &[2, 1, 0], 8).0, Kind::Gather);
    // 1- and 2-byte elements.
    assert_eq!(runs(&[4, 932067, 9], &[2, 1, 0], 1).0, Kind::Gather);
    assert_eq!(
        runs(&[1089, 22, 14, 5, 10], &[4, 2, 1, 0, 3], 2).0,
        Kind::Gather
    );
    // Where the tall kernel would run it, 4-byte elements keep the tile
    // from 11 items: a box of 10 columns runs the tall kernel, of 12 the
    // tile; 8-byte boxes keep the tile from 8.
    assert_eq!(runs(&[2, 419430, 10], &[2, 1, 0], 4).1, Form::Tall);
    assert_eq!(runs(&[3, 233016, 12], &[2, 1, 0], 4), tile16);
    assert_eq!(runs(&[3, 116508, 12], &[2, 1, 0], 8), tile16);
    // Kept tiles simulate like the CPU permute.
    for (dims, perm, e) in [
        (&[1000u64, 2, 3, 2, 10][..], &[2usize, 1, 4, 0, 3][..], 4u32),
        (&[300, 3, 3], &[2, 1, 0], 8),
    ] {
        let p = Permute::new(dims, perm, e);
        assert_eq!(runs(dims, perm, e), tile16, "{dims:?}");
        let ran = check(&p).unwrap_or_else(|err| panic!("{dims:?}: {err}"));
        assert!(ran > 0, "{dims:?}");
    }
}

/// A folded transpose of 1- or 2-byte elements that would run the 16-wide
/// tile, its short side stopped by an axis the other side holds, steps over
/// that axis: the side folds on with the axis past it, and the tile is
/// 32-wide. Where there is nothing to step over the 16-wide tile stays, and
/// the stepped plans simulate like the CPU permute.
#[test]
fn short_sides_of_byte_tiles_step_over_the_other_sides_axes() {
    // [a, 19, 9, 2, 2] -> [9, 2, 19, a, 2] u8: the columns (the source's
    // innermost 2) stopped at the rows' 2; past it, 9 and 19 join them.
    let shape = |dims: &[u64], perm: &[usize], e: u32| {
        let s = plan(&Permute::new(dims, perm, e)).expect("plans").shape;
        (s.batch, s.rows, s.cols)
    };
    let tile32 = (Kind::Transpose, Form::Tile, 32);
    let (a, perm) = (&[49056u64, 19, 9, 2, 2][..], &[2usize, 4, 1, 0, 3][..]);
    assert_eq!(runs(a, perm, 1), tile32);
    assert_eq!(shape(a, perm, 1), (1, 98112, 342));
    // 2-byte: 14 x 8 tiles over a batch of 149730 -> one 149730 x 112.
    let (b, perm_b) = (&[7u64, 2139, 8, 10, 14][..], &[2usize, 4, 0, 1, 3][..]);
    assert_eq!(runs(b, perm_b, 2), tile32);
    assert_eq!(shape(b, perm_b, 2), (1, 149730, 112));
    // Nothing to step over: a box of 13 columns keeps the 16-wide tile.
    assert_eq!(
        runs(&[3, 4300, 13], &[2, 1, 0], 2),
        (Kind::Transpose, Form::Tile, 16)
    );
    for (dims, perm, e) in [
        (&[300u64, 19, 9, 2, 2][..], perm, 1u32),
        (&[7, 100, 8, 10, 14], perm_b, 2),
        (&[7, 32, 2, 8, 16], &[2, 4, 1, 3, 0], 2),
    ] {
        assert_eq!(runs(dims, perm, e), tile32, "{dims:?}");
        simulates(dims, perm, e);
    }
}

/// A batch of plain matrices whose rows hold at most 192 bytes, which the
/// thin kernel would run one matrix a block, gathers where its columns are
/// few and runs the tiles, no narrow kernel, from 15 columns of 1-byte
/// elements and 26 of 2-byte ones; longer rows keep the thin kernel. The
/// gathered and tiled plans simulate like the CPU permute.
#[test]
fn short_rows_of_thin_batches_gather() {
    // 46 x 4 f16 matrices (92 bytes a row), 37 x 5 and 54 x 11 u8 ones.
    assert_eq!(runs(&[2337, 39, 46, 4], &[3, 1, 0, 2], 2).0, Kind::Gather);
    assert_eq!(runs(&[4218, 43, 37, 5], &[1, 3, 0, 2], 1).0, Kind::Gather);
    assert_eq!(
        runs(&[13, 4, 1086, 54, 11], &[4, 0, 2, 1, 3], 1).0,
        Kind::Gather
    );
    // 37 x 27 and 48 x 24 u8, 34 x 26 f16: the tiles (48 x 24 would run the
    // tall kernel, 34 x 26 the thin one); 45 x 20 f16 gathers.
    let tiled = |dims: &[u64], perm: &[usize], e: u32| {
        let (kind, form, _) = runs(dims, perm, e);
        assert_eq!(kind, Kind::Transpose, "{dims:?}");
        assert!(
            matches!(form, Form::Tile | Form::Skew),
            "{dims:?}: {form:?}"
        );
        let p = plan(&Permute::new(dims, perm, e)).expect("plans");
        let narrow = plan_kernels(&p, Layouts::Xor)
            .expect("kernels build")
            .iter()
            .any(|k| matches!(k.spec().geometry.form, Form::Thin | Form::Tall));
        assert!(!narrow, "{dims:?}: a narrow kernel in the list");
    };
    tiled(&[37, 26, 34, 37, 27], &[1, 4, 2, 0, 3], 1);
    tiled(&[11, 2647, 48, 24], &[3, 1, 0, 2], 1);
    tiled(&[50, 27, 14, 2, 17, 26], &[1, 2, 5, 0, 3, 4], 2);
    assert_eq!(
        runs(&[3, 12, 6, 86, 45, 20], &[3, 1, 5, 2, 0, 4], 2).0,
        Kind::Gather
    );
    for (dims, perm, e) in [
        (&[20u64, 19, 51, 39][..], &[3usize, 1, 0, 2][..], 1u32),
        (&[9, 3, 48, 24], &[3, 1, 0, 2], 1),
        (&[50, 3, 2, 2, 17, 26], &[1, 2, 5, 0, 3, 4], 2),
    ] {
        tiled(dims, perm, e);
        simulates(dims, perm, e);
    }
    // 435 x 35 u8 and 230 x 38 f16 keep the thin kernel.
    assert_eq!(
        runs(&[25, 11, 8, 435, 35], &[2, 4, 0, 1, 3], 1).1,
        Form::Thin
    );
    assert_eq!(
        runs(&[147, 13, 5, 46, 38], &[1, 4, 0, 2, 3], 2).1,
        Form::Thin
    );
    let (dims, perm) = (&[40u64, 9, 46, 4][..], &[3usize, 1, 0, 2][..]);
    assert_eq!(runs(dims, perm, 2).0, Kind::Gather);
    simulates(dims, perm, 2);
}

/// Longer rows of small matrices gather too, up to 2400 bytes a matrix
/// (`gather::THIN_GATHER_MAX_MATRIX_BYTES`): 99 x 4 and 149 x 6 f16 and 348 x 6
/// u8; 239 x 7 and 110 x 12 f16 (3346 and 2640 bytes) keep the thin kernel.
#[test]
fn small_matrices_of_longer_rows_gather() {
    for (dims, perm, e) in [
        (
            &[34u64, 5, 31, 8, 99, 4][..],
            &[3usize, 5, 1, 2, 0, 4][..],
            2u32,
        ),
        (&[18, 52, 10, 2, 149, 6], &[3, 2, 5, 1, 0, 4], 2),
        (&[11, 1460, 29, 12, 6], &[4, 1, 0, 2, 3], 1),
    ] {
        assert_eq!(runs(dims, perm, e).0, Kind::Gather, "{dims:?}");
    }
    assert_eq!(
        runs(&[15, 37, 18, 239, 7], &[2, 4, 0, 1, 3], 2).1,
        Form::Thin
    );
    assert_eq!(
        runs(&[11, 18, 62, 55, 2, 12], &[5, 2, 0, 1, 3, 4], 2).1,
        Form::Thin
    );
    let (dims, perm) = (&[12u64, 9, 99, 4][..], &[3usize, 1, 0, 2][..]);
    assert_eq!(runs(dims, perm, 2).0, Kind::Gather);
    simulates(dims, perm, 2);
}

/// A transpose that would step over gathers where its gather uses a fifth of
/// each source sector or more (`permute::STEP_GATHER_MIN_USE`); below, it
/// steps over. The gathered plans simulate like the CPU permute.
#[test]
fn stepping_tiles_gather_where_the_gather_uses_a_fifth_of_each_sector() {
    assert_eq!(runs(&[13, 516222, 5], &[2, 1, 0], 1).0, Kind::Gather);
    assert_eq!(
        runs(&[7, 15, 45, 5, 355, 2], &[0, 5, 3, 2, 4, 1], 2).0,
        Kind::Gather
    );
    // A twelfth of each sector: the stepped 32-wide tile.
    assert_eq!(
        runs(&[18157, 22, 6, 14], &[1, 3, 0, 2], 1),
        (Kind::Transpose, Form::Tile, 32)
    );
    for (dims, perm, e) in [
        (&[13u64, 900, 5][..], &[2usize, 1, 0][..], 1u32),
        (&[7, 15, 45, 5, 3, 2], &[0, 5, 3, 2, 4, 1], 2),
    ] {
        assert_eq!(runs(dims, perm, e).0, Kind::Gather, "{dims:?}");
        simulates(dims, perm, e);
    }
}

/// A low-fill transpose of 4- and 8-byte elements keeps its tiles where both
/// sides pass one 32-wide tile and its gather would use under 0.3 of each
/// source sector (`gather::sparse_keeps_tiles`); a shorter side gathers.
#[test]
fn sparse_gathers_of_wide_elements_keep_tiles_past_one_tile_a_side() {
    let shape = |dims: &[u64], perm: &[usize], e: u32| {
        let p = plan(&Permute::new(dims, perm, e)).expect("plans");
        (p.kind, p.shape.rows, p.shape.cols)
    };
    assert_eq!(
        shape(&[44, 5295, 36], &[2, 1, 0], 4),
        (Kind::Transpose, 44, 36)
    );
    assert_eq!(
        shape(&[112, 4, 3, 2, 38, 41], &[5, 2, 3, 0, 1, 4], 8),
        (Kind::Transpose, 38, 41)
    );
    assert_eq!(runs(&[3106, 15, 45, 4], &[3, 1, 0, 2], 4).0, Kind::Gather);
    let (dims, perm) = (&[44u64, 50, 36][..], &[2usize, 1, 0][..]);
    assert_eq!(shape(dims, perm, 4).0, Kind::Transpose);
    simulates(dims, perm, 4);
}

/// A box `[a, J, b] -> [b, J, a]` of 1- or 2-byte elements gathers down the
/// columns up to `b * b * elem_bytes` of `LANES_PLAIN_BOX_MAX` where its
/// gather has at most one outer axis, of `LANES_BOX_MAX` where more; past
/// that it runs the tiles.
#[test]
fn plain_boxes_gather_down_the_columns_up_to_their_own_bound() {
    // u8: b of 13 gathers, 16 runs the tiles; u16: b of 9 gathers, 12 tiles.
    assert_eq!(runs(&[6, 430185, 13], &[2, 1, 0], 1).0, Kind::Gather);
    assert_eq!(
        runs(&[7, 299593, 16], &[2, 1, 0], 1),
        (Kind::Transpose, Form::Tile, 16)
    );
    assert_eq!(runs(&[4, 466033, 9], &[2, 1, 0], 2).0, Kind::Gather);
    assert_eq!(runs(&[3, 466033, 12], &[2, 1, 0], 2).0, Kind::Transpose);
    // Over two outer axes, b of 13 and 16 (u8) still gather.
    assert_eq!(runs(&[3, 6, 143395, 13], &[0, 3, 2, 1], 1).0, Kind::Gather);
    assert_eq!(runs(&[6, 4, 87381, 16], &[0, 3, 2, 1], 1).0, Kind::Gather);
}

/// A batch of tall matrices below a third of the tall kernel's chunk (one
/// matrix a block) gathers, or runs the tall kernel on rows folded past a
/// tile where the gather would be sparse; from a third on it keeps the plain
/// tall kernel.
#[test]
fn small_tall_matrices_leave_the_one_matrix_a_block_kernel() {
    use bankfree_gen::ir::shape::Fold;
    let plain_tall = |dims: &[u64], perm: &[usize], e: u32| {
        let p = plan(&Permute::new(dims, perm, e)).expect("plans");
        p.kind == Kind::Transpose
            && p.shape.fold == Fold::NONE
            && runs(dims, perm, e).1 == Form::Tall
    };
    // f64 35 x 8 and 32 x 18 (of 2048), f32 36 x 30 (of 4096): below a third.
    for (dims, perm, e) in [
        (
            &[7u64, 49, 3, 14, 35, 8][..],
            &[3usize, 2, 0, 5, 1, 4][..],
            8,
        ),
        (&[2, 59, 19, 3, 32, 18], &[0, 5, 3, 2, 1, 4], 8),
        (&[107, 4, 18, 36, 30], &[0, 2, 4, 1, 3], 4),
    ] {
        assert!(!plain_tall(dims, perm, e), "{dims:?}");
    }
    // f64 32 x 28, f32 59 x 32 and 372 x 4: a third of the chunk or more.
    for (dims, perm, e) in [
        (&[4u64, 4, 292, 32, 28][..], &[2usize, 4, 0, 1, 3][..], 8),
        (&[8, 36, 14, 59, 32], &[1, 2, 4, 0, 3], 4),
        (&[6, 26, 36, 6, 62, 4], &[1, 5, 2, 0, 3, 4], 4),
    ] {
        assert!(plain_tall(dims, perm, e), "{dims:?}");
    }
}
