//! Whether a kernel can run a call, and whether its form is meant for it: checked
//! without allocating (the runtime asks on every launch), with a [`Refusal`] that
//! names the reason only when one is shown.
//!
//! ```
//! use bankfree_gen::{check::fit::refusal, Form, Geometry, Shape};
//! let g = Geometry { form: Form::Tall, tile: 32, block_rows: 8, elem_bytes: 4, vec: 1 };
//! assert_eq!(refusal(&g, &Shape::new(1 << 22, 3)), None);
//! let r = refusal(&g, &Shape::new(1 << 22, 33)).expect("33 columns are too many");
//! assert_eq!(r.to_string(), "cols = 33: a tall kernel takes at most 32 cols; a tile kernel runs it");
//! ```

use crate::ir::shape::Shape;
use crate::kernel::geometry::{Form, Geometry, MAX_NARROW};
use std::fmt;

/// Why a kernel does not run (or is not meant for) a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A `vec > 1` kernel and a dimension, pitch or batch stride not divisible by it.
    Vec {
        name: &'static str,
        value: u64,
        vec: u32,
    },
    /// A narrow side above [`MAX_NARROW`].
    TooWide {
        form: Form,
        side: &'static str,
        n: u64,
    },
    /// The flat side of a narrow kernel not stored as one run.
    NotOneRun {
        form: Form,
        side: &'static str,
        n: u64,
        ld_name: &'static str,
        ld: u64,
        run: &'static str,
    },
    /// A skew kernel and destination rows that start on sectors already.
    Aligned { row_bytes: u64 },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Refusal::Vec { name, value, vec } => write!(
                f,
                "{name} = {value} is not a multiple of vec = {vec}; a vec = 1 kernel runs it"
            ),
            Refusal::TooWide { form, side, n } => write!(
                f,
                "{side} = {n}: a {form} kernel takes at most {MAX_NARROW} {side}; a tile kernel runs it"
            ),
            Refusal::NotOneRun {
                form,
                side,
                n,
                ld_name,
                ld,
                run,
            } => write!(
                f,
                "{ld_name} = {ld} is not {side} = {n}: a {form} kernel needs the {run} stored as one run; a tile kernel runs it"
            ),
            Refusal::Aligned { row_bytes } => write!(
                f,
                "dst rows of {row_bytes} bytes start on 32-byte sectors: a tile kernel writes them whole"
            ),
        }
    }
}

/// Why a kernel moving `vec x vec` blocks cannot run `shape`, if it cannot: every
/// dimension, pitch and (with more than one matrix) batch stride must divide by `vec`.
pub fn vec_refusal(vec: u32, shape: &Shape) -> Option<Refusal> {
    if vec <= 1 {
        return None;
    }
    let fields = [
        ("rows", shape.rows),
        ("cols", shape.cols),
        ("src_ld", shape.src_ld),
        ("dst_ld", shape.dst_ld),
        ("src_batch_stride", shape.src_batch_stride),
        ("dst_batch_stride", shape.dst_batch_stride),
    ];
    fields
        .into_iter()
        .filter(|(name, _)| !(name.ends_with("batch_stride") && shape.batch <= 1))
        .find(|(_, value)| !value.is_multiple_of(u64::from(vec)))
        .map(|(name, value)| Refusal::Vec { name, value, vec })
}

/// Why a kernel of this geometry cannot run `shape`, if it cannot.
pub fn refusal(g: &Geometry, shape: &Shape) -> Option<Refusal> {
    if let Some(r) = vec_refusal(g.vec, shape) {
        return Some(r);
    }
    let form = g.form;
    let narrow = |side, n: u64, ld_name, ld: u64, run| {
        if n > MAX_NARROW {
            Some(Refusal::TooWide { form, side, n })
        } else if ld != n {
            Some(Refusal::NotOneRun {
                form,
                side,
                n,
                ld_name,
                ld,
                run,
            })
        } else {
            None
        }
    };
    match form {
        Form::Tile | Form::Skew => None,
        Form::Tall => narrow("cols", shape.cols, "src_ld", shape.src_ld, "source rows"),
        Form::Wide => narrow(
            "rows",
            shape.rows,
            "dst_ld",
            shape.dst_ld,
            "destination rows",
        ),
    }
}

/// Why `shape` is not what this form is for, if it is not (the runtime's
/// `transpose_first` skips kernels whose form does not suit a call): `skew`
/// suits destinations whose rows (or matrices) do not start on 32-byte sectors,
/// the narrow forms the shapes they fit, `tile` every shape.
pub fn unsuited(g: &Geometry, shape: &Shape) -> Option<Refusal> {
    if let Some(r) = refusal(g, shape) {
        return Some(r);
    }
    let e = u64::from(g.elem_bytes);
    // `n * e` modulo 32 without the product, which may not fit 64 bits.
    let aligned = |n: u64| ((n % 32) * e).is_multiple_of(32);
    let skew_not_needed = g.form == Form::Skew
        && aligned(shape.dst_ld)
        && (shape.batch <= 1 || aligned(shape.dst_batch_stride));
    skew_not_needed.then_some(Refusal::Aligned {
        row_bytes: shape.dst_ld.saturating_mul(e),
    })
}
