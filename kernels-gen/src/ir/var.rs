//! The variables an index expression reads: the kernel's threads, loops and
//! parameters ([`Var`]), and one set of their values ([`Env`]).

/// A variable of the kernel (or of an access pattern typed at the command line).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Var {
    /// Lane in the warp (`bankfree-gen access` patterns only).
    Lane,
    /// `threadIdx.x`: the column inside the tile.
    Tx,
    /// `threadIdx.y`: the first row inside the tile this thread handles.
    Ty,
    /// Unrolled loop over the rows a thread handles (`0..tile / block_rows`).
    J,
    /// Loop over the 32-bit words of a word-array element (`0..elem_bytes / 4`).
    K,
    /// Loop over the source rows of a `realign` kernel's block (`0..vec`).
    Row,
    /// Loop over the sub-tiles a `thin` kernel's lane transposes one after
    /// another (`0..thin_subtiles(cols)`).
    Sub,
    /// Linear tile index (grid-stride loop over `blockIdx.x`).
    Tile,
    /// Batch index (grid-stride loop over `blockIdx.y`).
    Batch,
    /// Kernel parameter: number of matrices (a `small` kernel folds them into its
    /// tile loop).
    Batches,
    /// Kernel parameter: number of source rows.
    Rows,
    /// Kernel parameter: number of source columns.
    Cols,
    /// Kernel parameter: source row pitch in elements.
    SrcLd,
    /// Kernel parameter: destination row pitch in elements.
    DstLd,
    /// Kernel parameter: elements between consecutive source matrices.
    SrcBatchStride,
    /// Kernel parameter: elements between consecutive destination matrices.
    DstBatchStride,
    /// The destination pointer's position in elements, modulo the period at which
    /// elements meet 32-byte sectors (its address in elements for power-of-two
    /// sizes; `Geometry::sector_phase`): `skew` and packed `tall` kernels align
    /// their writes with it, and the simulator and analyzer try every residue.
    DstOff,
    /// The source pointer's position in elements (its address over the element
    /// size): a `realign` kernel finds the 16-byte vectors around each source row
    /// with it, and the simulator tries every residue.
    SrcOff,
    /// Kernel parameter of a kernel with outer batch axes: the extent of batch axis
    /// `k` (`0..MAX_OUTER`; axis 0 is the one `SrcBatchStride` strides over). The
    /// outermost axis needs no extent: the batch count bounds it.
    Ext(u8),
    /// Kernel parameter: elements between consecutive source items of outer batch
    /// axis `k` (`1..=MAX_OUTER`).
    SrcStride(u8),
    /// Kernel parameter: elements between consecutive destination items of outer
    /// batch axis `k` (`1..=MAX_OUTER`).
    DstStride(u8),
    /// Kernel parameter of a kernel whose source rows run over several axes
    /// (a folded tile side, [`crate::ir::shape::Chain`]): the extent of row axis
    /// `k` (`0..MAX_FOLD`; the outermost needs none, `rows` bounds it).
    RowExt(u8),
    /// Kernel parameter: elements between consecutive source items of row axis
    /// `k` (`1..=MAX_FOLD`; axis 0 is `src_ld` apart).
    RowSrc(u8),
    /// Kernel parameter: elements between consecutive destination items of row
    /// axis `k` (`1..=MAX_FOLD`; axis 0 is 1 apart).
    RowDst(u8),
    /// Kernel parameter: the extent of column axis `k` (`0..MAX_FOLD`).
    ColExt(u8),
    /// Kernel parameter: elements between consecutive source items of column
    /// axis `k` (`1..=MAX_FOLD`; axis 0 is 1 apart).
    ColSrc(u8),
    /// Kernel parameter: elements between consecutive destination items of
    /// column axis `k` (`1..=MAX_FOLD`; axis 0 is `dst_ld` apart).
    ColDst(u8),
}

/// The most axes a tile side folds in beyond its own (a permute's short inner
/// axes joined into one side of the tile).
pub const MAX_FOLD: u8 = 2;

const FOLD_NAMES: [[&str; MAX_FOLD as usize]; 6] = [
    ["row_ext0", "row_ext1"],
    ["row_src1", "row_src2"],
    ["row_dst1", "row_dst2"],
    ["col_ext0", "col_ext1"],
    ["col_src1", "col_src2"],
    ["col_dst1", "col_dst2"],
];

/// Which of the fold parameters `v` is (row into [`FOLD_NAMES`]) and its axis
/// position there.
fn fold_slot(v: Var) -> Option<(usize, usize)> {
    let m = usize::from(MAX_FOLD);
    let from0 = |k: u8| usize::from(k) % m;
    let from1 = |k: u8| usize::from(k.max(1) - 1) % m;
    Some(match v {
        Var::RowExt(k) => (0, from0(k)),
        Var::RowSrc(k) => (1, from1(k)),
        Var::RowDst(k) => (2, from1(k)),
        Var::ColExt(k) => (3, from0(k)),
        Var::ColSrc(k) => (4, from1(k)),
        Var::ColDst(k) => (5, from1(k)),
        _ => return None,
    })
}

/// The most outer batch axes a kernel takes, beyond the batch axis itself: a rank-8
/// permute copied element by element keeps 7 batch axes besides the one a block
/// moves.
pub const MAX_OUTER: u8 = 6;

const EXT_NAMES: [&str; MAX_OUTER as usize] = ["ext0", "ext1", "ext2", "ext3", "ext4", "ext5"];
const SRC_STRIDE_NAMES: [&str; MAX_OUTER as usize] = [
    "src_stride1",
    "src_stride2",
    "src_stride3",
    "src_stride4",
    "src_stride5",
    "src_stride6",
];
const DST_STRIDE_NAMES: [&str; MAX_OUTER as usize] = [
    "dst_stride1",
    "dst_stride2",
    "dst_stride3",
    "dst_stride4",
    "dst_stride5",
    "dst_stride6",
];

/// Slots of [`Env`]: the 18 plain variables, then the outer axes' parameters,
/// then the folded sides'.
pub(crate) const SLOTS: usize = 18 + 3 * MAX_OUTER as usize + 6 * MAX_FOLD as usize;

impl Var {
    /// Every variable, in [`Env`] slot order.
    pub const ALL: [Var; SLOTS] = [
        Var::Lane,
        Var::Tx,
        Var::Ty,
        Var::J,
        Var::K,
        Var::Row,
        Var::Tile,
        Var::Batch,
        Var::Batches,
        Var::Rows,
        Var::Cols,
        Var::SrcLd,
        Var::DstLd,
        Var::SrcBatchStride,
        Var::DstBatchStride,
        Var::DstOff,
        Var::SrcOff,
        Var::Sub,
        Var::Ext(0),
        Var::Ext(1),
        Var::Ext(2),
        Var::Ext(3),
        Var::Ext(4),
        Var::Ext(5),
        Var::SrcStride(1),
        Var::SrcStride(2),
        Var::SrcStride(3),
        Var::SrcStride(4),
        Var::SrcStride(5),
        Var::SrcStride(6),
        Var::DstStride(1),
        Var::DstStride(2),
        Var::DstStride(3),
        Var::DstStride(4),
        Var::DstStride(5),
        Var::DstStride(6),
        Var::RowExt(0),
        Var::RowExt(1),
        Var::RowSrc(1),
        Var::RowSrc(2),
        Var::RowDst(1),
        Var::RowDst(2),
        Var::ColExt(0),
        Var::ColExt(1),
        Var::ColSrc(1),
        Var::ColSrc(2),
        Var::ColDst(1),
        Var::ColDst(2),
    ];

    /// The variables that change between a block's threads and loop trips; the
    /// others stay fixed for a whole tile (see [`Expr::bind`](crate::ir::expr::Expr::bind)).
    pub const PER_THREAD: [Var; 7] = [
        Var::Lane,
        Var::Tx,
        Var::Ty,
        Var::J,
        Var::K,
        Var::Row,
        Var::Sub,
    ];

    /// The name the generated CUDA C uses for this variable.
    pub fn c_name(self) -> &'static str {
        match self {
            Var::Lane => "lane",
            Var::Tx => "tx",
            Var::Ty => "ty",
            Var::J => "j",
            Var::K => "k",
            Var::Row => "rk",
            Var::Sub => "si",
            Var::Tile => "t",
            Var::Batch => "b",
            Var::Batches => "batch",
            Var::Rows => "rows",
            Var::Cols => "cols",
            Var::SrcLd => "src_ld",
            Var::DstLd => "dst_ld",
            Var::SrcBatchStride => "src_batch_stride",
            Var::DstBatchStride => "dst_batch_stride",
            Var::DstOff => "dst_off",
            Var::SrcOff => "src_off",
            Var::Ext(k) => EXT_NAMES[usize::from(k) % EXT_NAMES.len()],
            Var::SrcStride(k) => {
                SRC_STRIDE_NAMES[usize::from(k.max(1) - 1) % SRC_STRIDE_NAMES.len()]
            }
            Var::DstStride(k) => {
                DST_STRIDE_NAMES[usize::from(k.max(1) - 1) % DST_STRIDE_NAMES.len()]
            }
            _ => fold_slot(self).map_or("?", |(i, k)| FOLD_NAMES[i][k]),
        }
    }

    pub(crate) fn slot(self) -> usize {
        let m = usize::from(MAX_OUTER);
        match self {
            Var::Lane => 0,
            Var::Tx => 1,
            Var::Ty => 2,
            Var::J => 3,
            Var::K => 4,
            Var::Row => 5,
            Var::Tile => 6,
            Var::Batch => 7,
            Var::Batches => 8,
            Var::Rows => 9,
            Var::Cols => 10,
            Var::SrcLd => 11,
            Var::DstLd => 12,
            Var::SrcBatchStride => 13,
            Var::DstBatchStride => 14,
            Var::DstOff => 15,
            Var::SrcOff => 16,
            Var::Sub => 17,
            Var::Ext(k) => 18 + usize::from(k) % m,
            Var::SrcStride(k) => 18 + m + usize::from(k.max(1) - 1) % m,
            Var::DstStride(k) => 18 + 2 * m + usize::from(k.max(1) - 1) % m,
            _ => fold_slot(self).map_or(0, |(i, k)| 18 + 3 * m + i * usize::from(MAX_FOLD) + k),
        }
    }
}

/// Values of the variables for one evaluation.
#[derive(Clone, Debug)]
pub struct Env {
    vals: [i64; SLOTS],
    /// Evaluate as the kernel's 32-bit build computes (`bf_index` is `unsigned`):
    /// `+ - * <<` wrap modulo 2^32, every value is an unsigned 32-bit one.
    pub index32: bool,
}

impl Default for Env {
    fn default() -> Env {
        Env {
            vals: [0; SLOTS],
            index32: false,
        }
    }
}

impl Env {
    /// Sets a variable.
    pub fn set(&mut self, var: Var, value: i64) {
        self.vals[var.slot()] = value;
    }

    /// Reads a variable (unset variables are 0).
    pub fn get(&self, var: Var) -> i64 {
        self.vals[var.slot()]
    }
}
