//! The tall kernel with folded rows: the plans that take it (gathers of whole
//! source rows that use little of each sector), simulated against the CPU
//! permute, and its bank proof.

mod common;

use common::permute::{check, check_plan, padded};

use bankfree_gen::check::analysis::analyze;
use bankfree_gen::check::index32::runs;
use bankfree_gen::hw::bank::Model;
use bankfree_gen::select::permute::{pick, plan, plan_kernels, plan_tiles, Kind, Permute};
use bankfree_gen::Strategy as Layouts;
use bankfree_gen::{Form, Kernel, TransposeSpec};

/// A transpose the planner would gather, using less than
/// `TALL_MAX_SECTOR_USE` of each source sector, whose rows the source stores as
/// runs of whole rows of its short inner side: the rows fold on past a tile and
/// the tall kernel, its rows folded, runs first (`[a, x, r, c] -> [x, c, a,
/// r]`), through row-major tensors and strided views alike.
#[test]
fn gathers_of_whole_source_rows_run_the_folded_tall_kernel() {
    for (dims, perm, e, rows) in [
        (vec![70u64, 5, 39, 6], vec![1usize, 3, 0, 2], 4u32, 70 * 39),
        (vec![30, 4, 2, 37, 5], vec![1, 4, 2, 0, 3], 8, 37 * 30 * 2),
        (vec![50, 3, 40, 7], vec![3, 1, 0, 2], 4, 40 * 50 * 3),
        (vec![90, 3, 40, 5], vec![1, 3, 0, 2], 8, 90 * 40),
    ] {
        let p = Permute::new(&dims, &perm, e);
        assert_eq!(
            plan_tiles(&p).expect("plans").shape.rows,
            dims[perm[perm.len() - 1]]
        );
        let pad: Vec<u64> = (0..dims.len() as u64).map(|i| (i + 1) % 2).collect();
        runs_folded_tall(p, rows, Layouts::Xor, &pad);
    }
    // Where the gather uses a third of each sector (3 columns of 8 bytes), it
    // stays a gather; 1- and 2-byte elements never fold for the tall kernel
    // (theirs packs words).
    let p = plan(&Permute::new(&[30, 4, 2, 37, 3], &[1, 4, 2, 0, 3], 8)).expect("plans");
    assert_eq!(p.kind, Kind::Gather);
    let p = plan(&Permute::new(&[70, 5, 39, 6], &[1, 3, 0, 2], 2)).expect("plans");
    assert_eq!(p.shape.rows, 39);
}

/// That `p` plans a transpose of `rows` rows whose first kernel is the tall
/// one, and that the plan, simulated, matches the CPU permute, as does the
/// permute of views padded by `pad` elements past each axis.
fn runs_folded_tall(p: Permute, rows: u64, layouts: Layouts, pad: &[u64]) {
    let (dims, perm) = (p.dims.clone(), p.perm.clone());
    let planned = plan(&p).expect("plans");
    assert_eq!(planned.kind, Kind::Transpose, "{dims:?} {perm:?}");
    assert_eq!(planned.shape.rows, rows, "{dims:?} {perm:?}");
    let kernels = plan_kernels(&planned, layouts).expect("kernels build");
    assert_eq!(
        kernels[0].spec().geometry.form,
        Form::Tall,
        "{dims:?} {perm:?}"
    );
    let ran = check_plan(&p, plan(&p)).unwrap_or_else(|err| panic!("{dims:?}: {err}"));
    assert!(ran > 0, "{dims:?} {perm:?}");
    let out: Vec<u64> = perm.iter().map(|&a| dims[a]).collect();
    let strided = Permute {
        src_strides: Some(padded(&dims, pad)),
        dst_strides: Some(padded(&out, pad)),
        ..p
    };
    check(&strided).unwrap_or_else(|err| panic!("strided {dims:?} {perm:?}: {err}"));
}

/// A tall kernel with folded rows moves its chunk through shared memory as
/// the unfolded kernel does (only its global offsets change), so the
/// analyzer finds the same instructions, conflict-free, for every element size.
#[test]
fn folded_tall_kernels_keep_the_unfolded_bank_proof() {
    for e in [4u32, 8, 12, 16, 24] {
        let spec = TransposeSpec::new(32, e, Layouts::Pad(None))
            .and_then(|s| s.with_form(Form::Tall))
            .expect("tall spec");
        let plain = Kernel::build(spec).expect("builds");
        let want = analyze(&plain, Model::Hopper);
        assert!(
            want.conflict_free && want.errors.is_empty(),
            "{e}: {}",
            want.verdict()
        );
        for rows in 1..=2 {
            let folded = plain.with_fold(rows, 0).expect("tall rows fold");
            let got = analyze(&folded, Model::Hopper);
            assert!(
                got.errors.is_empty(),
                "{}: {:?}",
                folded.entry_name(),
                got.errors
            );
            assert_eq!(
                got.instructions,
                want.instructions,
                "{}",
                folded.entry_name()
            );
        }
    }
}

/// A box (`[a, j, b] -> [b, j, a]` with `a` and `b` short, `j` continuing
/// both inner sides) that the planner would gather runs the folded tall
/// kernel with `j` in its rows, with a batch of further axes too, through
/// row-major tensors and strided views alike; a box whose tile plan does not
/// gather keeps its tiles, and one whose matrices span fewer than
/// `BOX_MIN_CHUNKS` of the tall kernel's chunks stays a gather.
#[test]
fn gathered_boxes_run_the_folded_tall_kernel() {
    for (dims, perm, e, rows, cols) in [
        (vec![5u64, 400, 9], vec![2usize, 1, 0], 4u32, 5 * 400, 9),
        (vec![3, 400, 7], vec![2, 1, 0], 8, 3 * 400, 7),
        (vec![8, 260, 8], vec![2, 1, 0], 4, 8 * 260, 8),
        (
            vec![5, 5, 2, 200, 9],
            vec![4, 0, 2, 3, 1],
            4,
            5 * 2 * 200,
            9,
        ),
        (vec![6, 3, 620, 9], vec![0, 3, 2, 1], 4, 3 * 620, 9),
        (vec![3, 4, 100, 7], vec![3, 1, 2, 0], 8, 3 * 4 * 100, 7),
        (vec![2, 5, 3, 400, 9], vec![4, 2, 0, 3, 1], 4, 5 * 400, 9),
    ] {
        let p = Permute::new(&dims, &perm, e);
        assert_eq!(
            plan(&p).expect("plans").shape.cols,
            cols,
            "{dims:?} {perm:?}"
        );
        let pad: Vec<u64> = (0..dims.len() as u64).map(|i| i % 2 + 1).collect();
        runs_folded_tall(p, rows, Layouts::Pad(None), &pad);
    }
    // Tiles 23 columns wide stay tiles; matrices of 500 x 9 stay gathers;
    // boxes of 4-byte elements with 10 to 16 columns that a gather would use
    // a quarter of each sector of keep their 16-wide tiles
    // (`select::tile16`); 1- and 2-byte boxes never run the tall kernel (it
    // packs words): they gather down the columns of their chunks, or keep
    // their tiles.
    let tiles = |dims: &[u64], perm: &[usize], e: u32| {
        let p = plan(&Permute::new(dims, perm, e)).expect("plans");
        let k = plan_kernels(&p, Layouts::Pad(None)).expect("kernels build");
        (p.kind, k[0].spec().geometry.form)
    };
    assert_eq!(
        tiles(&[6, 60787, 23], &[2, 1, 0], 4),
        (Kind::Transpose, Form::Tile)
    );
    assert_eq!(tiles(&[40, 5, 100, 9], &[0, 3, 2, 1], 4).0, Kind::Gather);
    for (dims, perm) in [
        (&[27u64, 784, 12, 3, 11][..], &[4usize, 0, 1, 3, 2][..]),
        (&[5, 280, 12], &[2, 1, 0]),
    ] {
        let p = plan(&Permute::new(dims, perm, 4)).expect("plans");
        let k = plan_kernels(&p, Layouts::Xor).expect("kernels build");
        let g = pick(&k, &p.shape).expect("a kernel fits").spec().geometry;
        assert_eq!((p.kind, g.form, g.tile), (Kind::Transpose, Form::Tile, 16));
    }
    assert_eq!(
        tiles(&[4, 466033, 9], &[2, 1, 0], 2),
        (Kind::Gather, Form::Small)
    );
    assert_eq!(
        tiles(&[5, 139810, 12], &[2, 1, 0], 2),
        (Kind::Transpose, Form::Tile)
    );
    assert_eq!(
        tiles(&[5, 83886, 20], &[2, 1, 0], 2),
        (Kind::Transpose, Form::Tile)
    );
    assert_eq!(tiles(&[3, 399457, 7], &[2, 1, 0], 1).0, Kind::Gather);
}

/// A box of one matrix, whose rows lie a source plane apart (`src_ld` 1677720,
/// so `rows * src_ld` is past 2^32), runs the tall kernel's 32-bit build: it
/// never steps the batch stride past its matrix.
#[test]
fn a_box_of_one_matrix_runs_the_32_bit_build() {
    let planned = plan(&Permute::new(&[5, 139810, 9], &[2, 1, 0], 4)).expect("plans");
    assert_eq!(planned.shape.batch, 1);
    assert!(planned.shape.rows * planned.shape.src_ld >= 1 << 32);
    let kernels = plan_kernels(&planned, Layouts::Pad(None)).expect("kernels build");
    let k = pick(&kernels, &planned.shape).expect("a kernel fits");
    assert_eq!(k.spec().geometry.form, Form::Tall);
    assert!(runs(&k.spec().geometry, &planned.shape));
}

/// Boxes drawn at random (`[p, a, q, j, b]` with short `a` and `b`, batch axes
/// `p` and `q` of 1 to 3 items placed on either side of `b` in the
/// destination, 4- to 16-byte elements, row-major or padded views, `j` long
/// enough for the tall kernel's chunks): every listed kernel of the plan that
/// fits, simulated, writes what the CPU permute writes, and the draw runs the
/// tall kernel on some of them.
#[test]
fn drawn_boxes_permute_like_the_cpu() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |n: u64| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % n
    };
    let mut tall = 0;
    for _ in 0..8 {
        let e = [4u32, 8, 12, 16][next(4) as usize];
        let (a, b) = (2 + next(10), 2 + next(15));
        let (p, q) = (1 + next(3), 1 + next(2));
        // About four to five of the tall kernel's 16 KB chunks per matrix.
        let j = (4 * 4096 * 4 / u64::from(e)).div_ceil(a * b) + next(200);
        let dims = vec![p, a, q, j, b];
        let perm = if next(2) == 0 {
            vec![4usize, 2, 0, 3, 1]
        } else {
            vec![2, 4, 0, 3, 1]
        };
        let mut case = Permute::new(&dims, &perm, e);
        if next(2) == 0 {
            let out: Vec<u64> = perm.iter().map(|&x| dims[x]).collect();
            let pad: Vec<u64> = (0..5).map(|_| next(3)).collect();
            case.src_strides = Some(padded(&dims, &pad));
            case.dst_strides = Some(padded(&out, &pad));
        }
        let planned = plan(&case).expect("plans");
        let kernels = plan_kernels(&planned, Layouts::Pad(None)).expect("kernels build");
        if pick(&kernels, &planned.shape).is_some_and(|k| k.spec().geometry.form == Form::Tall) {
            tall += 1;
        }
        let ran = check(&case).unwrap_or_else(|err| panic!("{case:?}: {err}"));
        assert!(ran > 0, "{case:?}");
    }
    assert!(tall > 0, "no drawn box ran the tall kernel");
}
