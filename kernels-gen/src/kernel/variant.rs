//! A kernel's variants: the spec and layout a user crate names it by
//! ([`Variant`]), and the same kernel with outer batch axes, a width's entry
//! point, wider quotients, folded tile sides or another tile order, each checked
//! against what its form can run.

use crate::ir::expr::{Expr, Var, MAX_OUTER};
use crate::kernel::batch::batch_base;
use crate::kernel::copy::copy_moves;
use crate::kernel::geometry::{Form, Quotients};
use crate::kernel::interleave::{interleave_moves, interleave_widths};
use crate::kernel::layout::{swizzle_candidates, Layout, MAX_PAD};
use crate::kernel::narrow::{narrow_moves, packed_swizzle, packed_tall_moves};
use crate::kernel::order::TileOrder;
use crate::kernel::planar::planar_moves;
use crate::kernel::realign::{realign_moves, realign_swizzle};
use crate::kernel::small::{small_moves, strip_moves, WideMagics};
use crate::kernel::spec::{SpecError, Strategy, TransposeSpec};
use crate::kernel::squat::{squat_exprs, squat_widths};
use crate::kernel::thin::{thin_exprs, widths_of};
use crate::kernel::tile::tile_moves;
use crate::kernel::tiling::tiling;
use crate::kernel::wordvec::wordvec_moves;
use crate::kernel::{batch, fold, Kernel};

/// A spec with its strategy resolved to a layout: everything a kernel is built
/// from, in a few bytes. The attribute writes these into the user's crate and the
/// runtime builds and emits the kernel on first use.
///
/// ```
/// use bankfree_gen::{kernel::{layout::Layout, Variant}, Strategy, TransposeSpec};
/// let v = Variant { spec: TransposeSpec::new(32, 4, Strategy::Pad(None))?, layout: Layout::Pad(1) };
/// assert_eq!(v.kernel()?.entry_name(), "bankfree_transpose_t32_r8_e4_pad1");
/// assert!(Variant { layout: Layout::Pad(99), ..v }.kernel().is_err());
/// # Ok::<(), bankfree_gen::SpecError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Variant {
    pub spec: TransposeSpec,
    pub layout: Layout,
}

impl Variant {
    /// The kernel, after checking that the spec is valid and the layout is one the
    /// spec's strategy can resolve to (so a hand-made value cannot index outside
    /// the shared tile).
    pub fn kernel(&self) -> Result<Kernel, SpecError> {
        self.spec.validate()?;
        let tile = self.spec.geometry.tile;
        let ok = match (self.spec.strategy, self.layout) {
            // A thin kernel's stage pitch is the width itself.
            (Strategy::Pad(None) | Strategy::Pad(Some(0)) | Strategy::None, Layout::Pad(n))
                if self.spec.geometry.has_widths() =>
            {
                n == 0
            }
            (Strategy::Naive, Layout::Direct) | (Strategy::Rotate, Layout::Rotate) => true,
            (Strategy::None, Layout::Pad(0)) => true,
            (Strategy::Pad(Some(n)), Layout::Pad(m)) => n == m,
            (Strategy::Pad(None), Layout::Pad(n)) => n <= MAX_PAD,
            (Strategy::Xor, Layout::Xor(z)) if self.spec.geometry.packs() => {
                z == packed_swizzle(&self.spec.geometry)
            }
            (Strategy::Xor, Layout::Xor(z)) if self.spec.geometry.realigns() => {
                z == realign_swizzle(&self.spec.geometry)
            }
            (Strategy::Xor, Layout::Xor(z)) => swizzle_candidates(tile).contains(&z),
            _ => false,
        };
        if !ok {
            return Err(SpecError::Layout {
                layout: self.layout.to_string(),
                strategy: self.spec.strategy,
            });
        }
        Ok(Kernel::assemble(self.spec, self.layout))
    }
}

impl Kernel {
    /// This kernel with `outer` outer batch axes ([`crate::ir::shape::Outer`]): the
    /// same tile, its batch item's start a multi-index over the axes' extents and
    /// strides (extra kernel parameters). A `small` kernel finds each element's
    /// item per thread.
    ///
    /// ```
    /// use bankfree_gen::{Kernel, Strategy, TransposeSpec};
    /// let k = Kernel::build(TransposeSpec::new(32, 4, Strategy::Pad(None))?)?.with_outer(2)?;
    /// assert_eq!(k.entry_name(), "bankfree_transpose_t32_r8_e4_pad1_o2");
    /// assert!(bankfree_gen::emit(&k).contains("dst_stride2"));
    /// # Ok::<(), bankfree_gen::SpecError>(())
    /// ```
    pub fn with_outer(&self, outer: u8) -> Result<Kernel, SpecError> {
        if outer > MAX_OUTER {
            return Err(SpecError::Outer {
                outer,
                form: self.spec.geometry.form,
            });
        }
        Ok(Kernel::assemble_outer(
            self.spec,
            self.layout,
            outer,
            self.fold,
            self.quotients,
            self.order,
        ))
    }

    /// This `thin` kernel for sources of `cols` columns alone: one entry point
    /// (`<entry>_w<cols>`) whose width is a constant, its stage sized for that
    /// width. Unspecialized, a thin kernel's source holds an entry point per
    /// width ([`crate::kernel::thin::thin_widths`]); the runtime launches the
    /// one of the call's width. Each has its own registers: one kernel that
    /// switched on the width took the widest case's (255, spilling).
    ///
    /// ```
    /// use bankfree_gen::{emit, Kernel, TransposeSpec};
    /// let k = Kernel::build(TransposeSpec::thin(1)?)?.with_width(11)?;
    /// assert_eq!(k.entry_name(), "bankfree_transpose_t32_r8_e1_v4_pad0_thin_w11");
    /// assert!(emit(&k).contains("constexpr bf_index cols = 11;"));
    /// assert!(Kernel::build(TransposeSpec::thin(1)?)?.with_width(41).is_err());
    /// # Ok::<(), bankfree_gen::SpecError>(())
    /// ```
    pub fn with_width(&self, cols: u32) -> Result<Kernel, SpecError> {
        let g = &self.spec.geometry;
        let widths = if g.thins() {
            widths_of(g)
        } else if g.squats() {
            squat_widths()
        } else if g.form == Form::Interleave {
            interleave_widths()
        } else {
            return Err(SpecError::Width { cols, form: g.form });
        };
        if !widths.contains(&cols) {
            return Err(SpecError::WidthRange {
                cols,
                form: g.form,
                first: *widths.start(),
                last: *widths.end(),
            });
        }
        Ok(Kernel {
            width: Some(cols),
            ..self.clone()
        })
    }

    /// A `thin` kernel's one width, if it has one ([`Kernel::with_width`]).
    pub fn width(&self) -> Option<u32> {
        self.width
    }

    /// The kernels whose `extern "C"` entry points [`crate::emit`] writes for
    /// this one: a `thin` kernel of no one width has one per width, each its
    /// [`Kernel::with_width`]; any other kernel, itself.
    ///
    /// ```
    /// use bankfree_gen::{emit, Kernel, TransposeSpec};
    /// let k = Kernel::build(TransposeSpec::thin(2)?)?;
    /// let src = emit(&k);
    /// let entries = k.entry_points();
    /// assert_eq!(entries.len(), 39);
    /// assert!(entries.iter().all(|e| src.contains(&format!("{}(", e.entry_name()))));
    /// assert_eq!(entries[0].entry_points(), [entries[0].clone()]);
    /// # Ok::<(), bankfree_gen::SpecError>(())
    /// ```
    pub fn entry_points(&self) -> Vec<Kernel> {
        if self.width.is_some() {
            return vec![self.clone()];
        }
        let widths: Vec<u32> = match (&self.thin, &self.squat) {
            (Some(_), _) => widths_of(&self.spec.geometry).collect(),
            (_, Some(_)) => squat_widths().collect(),
            _ if self.spec.geometry.form == Form::Interleave => interleave_widths().collect(),
            _ => return vec![self.clone()],
        };
        widths
            .into_iter()
            .filter_map(|c| self.with_width(c).ok())
            .collect()
    }

    /// This `small` kernel with wider quotients ([`Quotients`]): each thread
    /// finds its elements' batch items over the outer axes by
    /// [`Expr::quot_exact`], exact for batches of up to 2^31 items
    /// ([`Quotients::Items`]), and also their matrices and columns by it, for
    /// matrices of up to [`Quotients::max_elems`] elements
    /// ([`Quotients::Wide`]), or all three by [`Expr::quot64`], exact for every
    /// batch ([`Quotients::Any`]), where the plain 32-bit quotients need `batch x
    /// extent` below 2^32 and at most 16384 elements (at a few more instructions
    /// per element).
    ///
    /// ```
    /// use bankfree_gen::{kernel::geometry::Quotients, Kernel, TransposeSpec};
    /// let k = Kernel::build(TransposeSpec::small(4)?)?.with_outer(1)?;
    /// let items = k.with_quotients(Quotients::Items)?;
    /// assert!(items.entry_name().ends_with("_small_o1_qx"));
    /// assert!(bankfree_gen::emit(&items).contains("__clz"));
    /// assert!(k.with_quotients(Quotients::Wide)?.entry_name().ends_with("_qxm"));
    /// assert!(k.with_quotients(Quotients::Any)?.entry_name().ends_with("_q64m"));
    /// # Ok::<(), bankfree_gen::SpecError>(())
    /// ```
    pub fn with_quotients(&self, quotients: Quotients) -> Result<Kernel, SpecError> {
        let g = &self.spec.geometry;
        if g.form != Form::Small && quotients != Quotients::Narrow {
            return Err(SpecError::Quotients { form: g.form });
        }
        Ok(Kernel::assemble_outer(
            self.spec,
            self.layout,
            self.outer,
            self.fold,
            quotients,
            self.order,
        ))
    }

    /// This kernel with folded tile sides ([`crate::ir::shape::Fold`]): its source
    /// rows run over `rows + 1` axes and its columns over `cols + 1`, each index
    /// split into its multi-index (extra kernel parameters). The scalar `tile`
    /// form folds both sides, the `thin` form its columns (a source stored as
    /// one run whose columns are several axes; each column's destination row is
    /// the split's offset), the `tall` form of single elements its rows (each
    /// row's offsets the split's; the chunk's rows read one by one); at most
    /// [`MAX_FOLD`](crate::ir::expr::MAX_FOLD) more axes per side.
    ///
    /// ```
    /// use bankfree_gen::{Kernel, Strategy, TransposeSpec};
    /// let k = Kernel::build(TransposeSpec::new(32, 4, Strategy::Xor)?)?.with_fold(1, 2)?;
    /// assert_eq!(k.entry_name(), "bankfree_transpose_t32_r8_e4_xor505_f12");
    /// assert!(bankfree_gen::emit(&k).contains("col_dst2"));
    /// // A thin kernel's columns over two axes; its rows do not fold.
    /// let thin = Kernel::build(TransposeSpec::thin(1)?)?;
    /// assert_eq!(thin.with_fold(0, 1)?.fold(), [0, 1]);
    /// assert!(thin.with_fold(1, 0).is_err());
    /// // A tall kernel's rows over three axes; its columns do not fold.
    /// let spec = TransposeSpec::new(32, 4, Strategy::Pad(None))?.with_form(bankfree_gen::Form::Tall)?;
    /// let tall = Kernel::build(spec)?;
    /// assert_eq!(tall.with_fold(2, 0)?.entry_name(), "bankfree_transpose_t32_r8_e4_pad1_tall_f20");
    /// assert!(tall.with_fold(0, 1).is_err());
    /// # Ok::<(), bankfree_gen::SpecError>(())
    /// ```
    pub fn with_fold(&self, rows: u8, cols: u8) -> Result<Kernel, SpecError> {
        let g = &self.spec.geometry;
        if !fold::folds(g, rows, cols) {
            return Err(SpecError::Fold {
                rows,
                cols,
                form: g.form,
                vec: g.vec,
            });
        }
        Ok(Kernel::assemble_outer(
            self.spec,
            self.layout,
            self.outer,
            [rows, cols],
            self.quotients,
            self.order,
        ))
    }

    /// This `thin` kernel splitting each lane's column words between two warps
    /// ([`crate::Geometry::split`]): tiles of half the rows, the same width,
    /// outer axes and folded columns.
    ///
    /// ```
    /// use bankfree_gen::{Kernel, TransposeSpec};
    /// let k = Kernel::build(TransposeSpec::thin(1)?)?.with_width(28)?.with_split()?;
    /// assert_eq!(k.entry_name(), "bankfree_transpose_t32_r8_e1_v4_pad0_thin_split_w28");
    /// assert!(k.spec().geometry.split && k.width() == Some(28));
    /// # Ok::<(), bankfree_gen::SpecError>(())
    /// ```
    pub fn with_split(&self) -> Result<Kernel, SpecError> {
        let k = Kernel::assemble_outer(
            self.spec.with_split()?,
            self.layout,
            self.outer,
            self.fold,
            self.quotients,
            self.order,
        );
        match self.width {
            Some(cols) => k.with_width(cols),
            None => Ok(k),
        }
    }

    /// This tile kernel taking its tiles in `order` ([`TileOrder`]): the same
    /// tiles, moves and shared accesses, handed to the blocks in another order.
    /// Only the `tile`, `skew` and `realign` forms have rows and columns of tiles;
    /// a `small` kernel gathering vectors of single elements takes its chunk's
    /// positions in either order ([`TileOrder`]).
    pub fn with_order(&self, order: TileOrder) -> Result<Kernel, SpecError> {
        let g = &self.spec.geometry;
        if !order.takes(g) {
            return Err(SpecError::Order { form: g.form });
        }
        Ok(Kernel::assemble_outer(
            self.spec,
            self.layout,
            self.outer,
            self.fold,
            self.quotients,
            order,
        ))
    }

    pub(crate) fn assemble_outer(
        spec: TransposeSpec,
        layout: Layout,
        outer: u8,
        fold: [u8; 2],
        quotients: Quotients,
        order: TileOrder,
    ) -> Kernel {
        let geometry = spec.geometry;
        let (unit, words) = geometry.unit();
        let tiling = tiling(&geometry);
        let vec = i64::from(geometry.vec);
        let per = |x: Var| {
            if vec > 1
                && matches!(
                    geometry.form,
                    Form::Tile | Form::Skew | Form::Copy | Form::Planar | Form::Interleave
                )
            {
                Expr::var(x) / vec
            } else {
                Expr::var(x)
            }
        };
        // A small kernel folds the batch into its tiles: each thread finds its
        // elements' items itself, by the extents' multipliers.
        let (batch, gather_magics) = if geometry.form == Form::Small {
            (batch_base(0, per), batch::magics(outer, quotients))
        } else {
            (batch_base(outer, per), Vec::new())
        };
        let folds = [
            fold::magics(fold::Side::Rows, fold[0]),
            fold::magics(fold::Side::Cols, fold[1]),
        ];
        let mut kernel_lets = tiling.lets.clone();
        kernel_lets.extend(folds.iter().flatten().cloned());
        kernel_lets.extend(gather_magics.iter().cloned());
        let wide = if geometry.form == Form::Small {
            WideMagics::new(&tiling, quotients)
        } else {
            None
        };
        if let Some(w) = &wide {
            kernel_lets.extend([w.mat.clone(), w.rows.clone()]);
        }
        if order == TileOrder::Columns && !kernel_lets.contains(&tiling.tiles_y) {
            kernel_lets.push(tiling.tiles_y.clone());
        }
        let mut realign = None;
        let mut thin = None;
        let mut squat = None;
        let mut interior = None;
        let (tile_lets, moves) = match geometry.form {
            Form::Tall if geometry.packs() => packed_tall_moves(&geometry, layout, &tiling, &batch),
            Form::Tall | Form::Wide => {
                narrow_moves(&geometry, layout, &tiling, words, &batch, &folds[0])
            }
            Form::Tile | Form::Skew => {
                let (lets, moves, i) =
                    tile_moves(&geometry, layout, &tiling, words, &batch, &folds, order);
                interior = i.map(Box::new);
                (lets, moves)
            }
            Form::Small => small_moves(
                &geometry,
                &tiling,
                words,
                &gather_magics,
                wide.as_ref(),
                order,
            ),
            Form::Strip => strip_moves(&geometry, &tiling, words, &batch),
            Form::Copy => copy_moves(&geometry, &tiling, words, &batch),
            Form::Planar => planar_moves(&geometry, &tiling, &batch),
            Form::Interleave => interleave_moves(&geometry, &tiling.mat, &batch),
            Form::Wordvec => wordvec_moves(&geometry, layout, &tiling, &batch, order),
            Form::Realign => {
                let (lets, moves, r) = realign_moves(&geometry, layout, &tiling, &batch, order);
                realign = Some(Box::new(r));
                (lets, moves)
            }
            Form::Thin => {
                let (lets, t) = thin_exprs(&geometry, &batch, &folds[1]);
                thin = Some(Box::new(t));
                (lets, Vec::new())
            }
            Form::Squat => {
                let (lets, q) = squat_exprs(&geometry, &batch);
                squat = Some(Box::new(q));
                (lets, Vec::new())
            }
        };
        Kernel {
            spec,
            layout,
            unit,
            words,
            shared_rows: geometry.shared_rows(),
            outer,
            fold,
            quotients,
            order,
            kernel_lets,
            batch_lets: batch.lets,
            tile_lets,
            ntiles: tiling.ntiles,
            more: tiling.more,
            moves,
            interior,
            realign,
            thin,
            squat,
            width: None,
        }
    }
}
