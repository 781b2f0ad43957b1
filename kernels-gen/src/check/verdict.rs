//! A kernel's bank verdict under the hopper model, without analysing it again
//! where it was proven ahead of time.
//!
//! The analysis of a large kernel takes seconds in an unoptimized build, and a
//! proc-macro always runs unoptimized in its user's crate. So the verdicts and
//! resolved layouts of every kernel the attribute and the runtime use by default
//! (the kernels of [`crate::select::table::specs`]) are written down in
//! `proven.in`: [`Kernel::build`] takes a layout from there instead of searching,
//! and [`Kernel::verdict`] a verdict instead of analysing. `bankfree-gen proven`
//! writes the file and a test recomputes every line of it.
//!
//! ```
//! use bankfree_gen::{check::verdict::lookup, Kernel, Model, Strategy, TransposeSpec};
//! let spec = TransposeSpec::new(32, 4, Strategy::Xor)?;
//! assert!(lookup(&spec).is_some()); // the attribute's default spec for f32
//! let k = Kernel::build(spec)?;
//! assert!(k.verdict().conflict_free);
//! assert_eq!(k.verdict().text, k.analyze(Model::Hopper).verdict());
//! # Ok::<(), bankfree_gen::SpecError>(())
//! ```

use crate::hw::bank::Model;
use crate::kernel::geometry::{Form, Geometry};
use crate::kernel::layout::{Layout, Swizzle};
use crate::kernel::spec::{Strategy, TransposeSpec};
use crate::kernel::Kernel;
use std::borrow::Cow;

/// One kernel proven ahead of time: its spec, the layout the strategy resolves to
/// and the analyzer's verdict on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proven {
    pub spec: TransposeSpec,
    pub layout: Layout,
    pub conflict_free: bool,
    pub verdict: &'static str,
}

/// Whether a kernel is conflict-free, and the analyzer's one-line verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub conflict_free: bool,
    pub text: Cow<'static, str>,
}

#[allow(clippy::too_many_arguments)]
const fn p(
    form: Form,
    tile: u32,
    block_rows: u32,
    elem_bytes: u32,
    vec: u32,
    strategy: Strategy,
    layout: Layout,
    conflict_free: bool,
    verdict: &'static str,
) -> Proven {
    Proven {
        spec: TransposeSpec {
            geometry: Geometry {
                form,
                tile,
                block_rows,
                elem_bytes,
                vec,
                split: false,
            },
            strategy,
        },
        layout,
        conflict_free,
        verdict,
    }
}

/// [`p`]'s kernel as a `thin` kernel that splits its column words
/// ([`Geometry::split`]).
const fn s(mut x: Proven) -> Proven {
    x.spec.geometry.split = true;
    x
}

const fn z(b: u32, m: u32, s: u32) -> Layout {
    Layout::Xor(Swizzle { b, m, s })
}

/// The kernels proven ahead of time (`bankfree-gen proven` writes the file).
#[rustfmt::skip]
pub const PROVEN: &[Proven] = {
    use {Form as F, Layout as L, Strategy as S};
    include!("proven.in")
};

/// The proven entry for `spec`, if it is one of [`PROVEN`].
pub fn lookup(spec: &TransposeSpec) -> Option<&'static Proven> {
    PROVEN.iter().find(|p| p.spec == *spec)
}

impl Kernel {
    /// The hopper-model verdict: from [`PROVEN`] where this kernel is there, else
    /// from [`Kernel::analyze`].
    pub fn verdict(&self) -> Verdict {
        match lookup(&self.spec) {
            Some(p) if p.layout == self.layout => Verdict {
                conflict_free: p.conflict_free,
                text: Cow::Borrowed(p.verdict),
            },
            _ => {
                let r = self.analyze(Model::Hopper);
                Verdict {
                    conflict_free: r.conflict_free,
                    text: Cow::Owned(r.verdict()),
                }
            }
        }
    }
}
