//! The kernel as data: every address it uses, built once from a spec and a layout.
//!
//! A [`Kernel`] is a list of [`Move`]s separated by `__syncthreads()`: the shared
//! strategies have two (global source -> shared tile, shared tile -> global
//! destination), `naive` has one (source -> destination). Each move is a guard and
//! two [`Place`]s whose indices are [`Expr`]s. The emitter prints them, the
//! simulator runs them and the analyzer evaluates their shared indices for every
//! lane; none of them has an address formula of its own.
//!
//! The loops around the moves are fixed and shared by all three: a grid-stride
//! loop over batches (`blockIdx.y`), a grid-stride loop over tiles (`blockIdx.x`,
//! so there is no 65,535 limit on any side), the unrolled loop `j` over the
//! `tile / block_rows` rows each thread moves, and for word-array elements the
//! loop `k` over their 32-bit words.
//!
//! This layer builds a kernel for a given layout ([`Kernel::with_layout`]);
//! resolving `pad` and `swizzle` to a layout asks the analyzer, one layer up
//! ([`Kernel::build`], in [`crate::check::resolve`]).
//!
//! ```
//! use bankfree_gen::{kernel::layout::Layout, Kernel, Strategy, TransposeSpec};
//! let k = Kernel::with_layout(TransposeSpec::new(32, 4, Strategy::Pad(None))?, Layout::Pad(1))?;
//! assert_eq!(k.shared_bytes(), 32 * 33 * 4);
//! assert_eq!(k.entry_name(), "bankfree_transpose_t32_r8_e4_pad1");
//! # Ok::<(), bankfree_gen::SpecError>(())
//! ```

pub(crate) mod batch;
mod copy;
pub(crate) mod fold;
pub mod form;
pub mod geometry;
pub mod grid;
pub mod interleave;
pub mod launch;
pub mod layout;
pub mod limits;
pub mod moves;
mod name;
pub(crate) mod narrow;
pub mod order;
mod planar;
pub mod quotients;
pub mod realign;
mod small;
pub mod spec;
pub mod squat;
pub mod stage;
pub mod thin;
mod tile;
pub(crate) mod tiling;
pub mod unit;
mod valid;
mod variant;
pub mod wordvec;

pub use variant::Variant;

use crate::ir::expr::{Env, Expr, Var};
use crate::ir::guard::Less;
use crate::kernel::geometry::{Form, Quotients, Unit};
use crate::kernel::interleave::interleave_stage_vectors;
use crate::kernel::layout::Layout;
use crate::kernel::moves::{Interior, Mem, Move};
use crate::kernel::order::TileOrder;
use crate::kernel::realign::Realign;
use crate::kernel::spec::{SpecError, TransposeSpec};
use crate::kernel::squat::{squat_stage_words, Squat};
use crate::kernel::thin::{thin_stage_words, Thin};

#[cfg(doc)]
use crate::kernel::moves::Place;

/// A spec with its strategy resolved and every address built.
///
/// Its fields are read through accessors and never written from outside this
/// crate: every `Kernel` comes from [`Kernel::build`], [`Kernel::with_layout`] or
/// [`Variant::kernel`], which check the spec and layout, so what the emitter prints
/// is what the fit checks and the launch geometry were computed for.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub(crate) spec: TransposeSpec,
    pub(crate) layout: Layout,
    pub(crate) unit: Unit,
    pub(crate) words: u32,
    pub(crate) shared_rows: u32,
    pub(crate) outer: u8,
    pub(crate) fold: [u8; 2],
    pub(crate) quotients: Quotients,
    pub(crate) order: TileOrder,
    pub(crate) kernel_lets: Vec<Expr>,
    pub(crate) batch_lets: Vec<Expr>,
    pub(crate) tile_lets: Vec<Expr>,
    pub(crate) ntiles: Expr,
    pub(crate) more: Less,
    pub(crate) moves: Vec<Move>,
    /// The body of the tiles inside the matrix, where the kernel has one.
    pub(crate) interior: Option<Box<Interior>>,
    /// A `realign` kernel's expressions beyond its moves.
    pub(crate) realign: Option<Box<Realign>>,
    /// A `thin` kernel's expressions (it has no moves).
    pub(crate) thin: Option<Box<Thin>>,
    /// A `squat` kernel's expressions (it has no moves).
    pub(crate) squat: Option<Box<Squat>>,
    /// A `thin` or `squat` kernel's one width ([`Kernel::with_width`]); `None` emits an
    /// entry point per width.
    pub(crate) width: Option<u32>,
}

impl Kernel {
    /// The kernel for an explicit layout (no search, no size check), after the
    /// same checks as [`Variant::kernel`]: a valid spec and a layout its strategy
    /// can resolve to.
    pub fn with_layout(spec: TransposeSpec, layout: Layout) -> Result<Kernel, SpecError> {
        Variant { spec, layout }.kernel()
    }

    /// Builds the kernel for a layout already checked against the spec.
    pub(crate) fn assemble(spec: TransposeSpec, layout: Layout) -> Kernel {
        Kernel::assemble_outer(spec, layout, 0, [0, 0], Quotients::Narrow, TileOrder::Rows)
    }

    /// The further axes of its folded tile sides, rows then columns
    /// ([`Kernel::with_fold`]).
    pub fn fold(&self) -> [u8; 2] {
        self.fold
    }

    /// Which of its per-element divisions are wider than plain 32-bit quotients
    /// ([`Kernel::with_quotients`]).
    pub fn quotients(&self) -> Quotients {
        self.quotients
    }

    /// The order its blocks take its tiles in ([`Kernel::with_order`]).
    pub fn order(&self) -> TileOrder {
        self.order
    }

    /// Whether it gathers a vector's units but stores each alone to the
    /// destination (a `small` kernel whose chunk is taken down its columns,
    /// [`TileOrder`]): a move to `dst` packs its units without storing them as
    /// one vector.
    pub fn stores_units(&self) -> bool {
        self.moves
            .iter()
            .any(|m| m.to.mem == Mem::Dst && m.pack.as_ref().is_some_and(|p| !p.whole))
    }

    /// Whether it stores on any `dst` pointer: what [`crate::kernel::geometry::Geometry::aligns_dst`]
    /// says of its geometry, or it stores no vectors ([`Kernel::stores_units`]).
    pub fn aligns_dst(&self) -> bool {
        self.spec.geometry.aligns_dst() || self.stores_units()
    }

    /// The spec this kernel was built from.
    pub fn spec(&self) -> &TransposeSpec {
        &self.spec
    }

    /// The layout of its shared tile.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The unit a thread moves at a time.
    pub fn unit(&self) -> Unit {
        self.unit
    }

    /// Units per thread step: 1, the 32-bit words of a word-array element, or the
    /// `vec` rows of a block (`Var::K` runs over them).
    pub fn words(&self) -> u32 {
        self.words
    }

    /// Units a thread moves per step of `mv` under `env`: the source's columns
    /// of a planar kernel, the source's rows in an interleave kernel's
    /// register transpose (`Var::K` runs over them), else [`Kernel::words`].
    pub fn step_units(&self, mv: &Move, env: &Env) -> u32 {
        let per_call = match self.spec.geometry.form {
            Form::Planar => Some(Var::Cols),
            Form::Interleave if mv.transpose => Some(Var::Rows),
            _ => None,
        };
        per_call.map_or(self.words, |v| {
            u32::try_from(env.get(v)).unwrap_or(u32::MAX)
        })
    }

    /// Rows of the shared tile (for the narrow forms, of the chunk seen as rows of
    /// `tile` units).
    pub fn shared_rows(&self) -> u32 {
        self.shared_rows
    }

    /// Named values over the kernel parameters (`tiles_x`, `ntiles`).
    pub fn kernel_lets(&self) -> &[Expr] {
        &self.kernel_lets
    }

    /// Outer batch axes ([`Kernel::with_outer`]).
    pub fn outer(&self) -> u8 {
        self.outer
    }

    /// Named values per batch item (the multi-index of outer batch axes).
    pub fn batch_lets(&self) -> &[Expr] {
        &self.batch_lets
    }

    /// Named values per tile (`tile_r`, `tile_c`).
    pub fn tile_lets(&self) -> &[Expr] {
        &self.tile_lets
    }

    /// Tiles per matrix (the launcher's grid).
    pub fn ntiles(&self) -> &Expr {
        &self.ntiles
    }

    /// The tile loop's condition (`t < ntiles`, or its division-free equivalent).
    pub fn more(&self) -> &Less {
        &self.more
    }

    /// The moves, with a barrier between consecutive ones.
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// The body of its tiles that lie inside the matrix, with fewer bounds
    /// checks (`None`: every tile runs [`Kernel::moves`] as they are).
    pub fn interior(&self) -> Option<&Interior> {
        self.interior.as_deref()
    }

    /// A `realign` kernel's expressions beyond its moves (`None` for the other
    /// forms).
    pub fn realign(&self) -> Option<&Realign> {
        self.realign.as_deref()
    }

    /// A `thin` kernel's expressions (`None` for the other forms).
    pub fn thin(&self) -> Option<&Thin> {
        self.thin.as_deref()
    }

    /// A `squat` kernel's expressions (`None` for the other forms).
    pub fn squat(&self) -> Option<&Squat> {
        self.squat.as_deref()
    }

    /// The spec and layout this kernel was built from.
    pub fn variant(&self) -> Variant {
        Variant {
            spec: self.spec,
            layout: self.layout,
        }
    }

    /// Shared memory per block, in bytes.
    pub fn shared_bytes(&self) -> u64 {
        if let (Some(w), Form::Interleave) = (self.width, self.spec.geometry.form) {
            return u64::from(interleave_stage_vectors(&self.spec.geometry, w)) * 16;
        }
        if let Some(w) = self.width {
            let words = if self.squat.is_some() {
                squat_stage_words(w)
            } else {
                thin_stage_words(w, self.spec.geometry.thin_subtile_blocks())
            };
            return u64::from(words) * 4;
        }
        // Word arrays keep a plane per word; a packed chunk holds elements.
        let g = &self.spec.geometry;
        let planes = if g.packs() || g.realigns() || g.has_widths() || g.wordvecs() {
            1
        } else {
            self.words
        };
        self.spec.geometry.shared_units(self.layout)
            * u64::from(planes)
            * u64::from(self.unit.bytes())
    }

    /// Units in the shared array.
    pub fn shared_units(&self) -> u64 {
        self.shared_bytes() / u64::from(self.unit.bytes())
    }
}
