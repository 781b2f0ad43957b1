//! What the runtime needs to know of one generated kernel.

use bankfree_gen::check::index32::{INDEX64_DEFINE, INDEX64_SUFFIX};
use bankfree_gen::kernel::geometry::{Quotients, THIN_MAX_COLS};
use bankfree_gen::kernel::order::TileOrder;
use bankfree_gen::kernel::squat::SQUAT_MAX_ROWS;
use bankfree_gen::select::device::{twin, GpuClass};
use bankfree_gen::{emit, Form, Geometry, Kernel};
use sha2::{Digest, Sha256};
use std::sync::{Arc, OnceLock};

/// A generated kernel: its CUDA C and the launch facts the glue needs.
///
/// Built from a [`Kernel`] ([`KernelSource::from_kernel`]), so the source is what
/// the generator emitted for the geometry the launcher checks shapes and sizes
/// the grid with. The fields are private: safe code cannot pair a source with
/// launch facts it was not generated for.
#[derive(Clone, Debug)]
pub struct KernelSource {
    entry: Arc<str>,
    source: Arc<str>,
    geometry: Geometry,
    shared_bytes: u32,
    /// Outer batch axes: the parameters after the seven scalars.
    outer: u8,
    /// Further axes of the folded tile sides (rows, columns): the parameters
    /// after the outer axes'.
    fold: [u8; 2],
    /// A small kernel's wider quotients (`Kernel::with_quotients`): a shape
    /// fact the fit checks.
    quotients: Quotients,
    index64: bool,
    /// SHA-256 of the source: what the in-memory cache keys a loaded kernel by.
    digest: [u8; 32],
    /// The 64-bit build, made on first use and shared by clones.
    build64: Arc<OnceLock<KernelSource>>,
    /// The generator's kernel, where the source is its emission: what its
    /// twins for other GPU classes are built from.
    kernel: Option<Arc<Kernel>>,
    /// What GPUs of each class ([`GpuClass::ALL`], in order) run instead
    /// (`bankfree_gen::select::device::twin`), made on first use and shared by
    /// clones (`None` where the kernel runs as it is).
    twins: Arc<[OnceLock<Option<KernelSource>>; GpuClass::ALL.len()]>,
    /// A `thin` kernel's entry points, one per width of source
    /// ([`KernelSource::for_width`]), indexed by the width: made on first use
    /// and shared by clones (empty for every other kernel).
    widths: Arc<[OnceLock<Option<KernelSource>>]>,
    /// A `realign` kernel's twin that takes its tiles down the columns
    /// ([`KernelSource::in_order`]), made on first use and shared by clones.
    columns: Arc<OnceLock<Option<KernelSource>>>,
    /// A `thin` width's twin that splits its column words between two warps
    /// ([`KernelSource::split_for`]), made on first use and shared by clones.
    split: Arc<OnceLock<Option<KernelSource>>>,
}

impl PartialEq for KernelSource {
    fn eq(&self, other: &Self) -> bool {
        self.digest == other.digest
            && self.entry == other.entry
            && self.geometry == other.geometry
            && self.shared_bytes == other.shared_bytes
            && self.outer == other.outer
            && self.fold == other.fold
            && self.quotients == other.quotients
            && self.index64 == other.index64
    }
}

impl Eq for KernelSource {}

impl KernelSource {
    /// The kernel's CUDA C, as `bankfree-gen` emits it.
    pub fn from_kernel(k: &Kernel) -> KernelSource {
        KernelSource {
            kernel: Some(Arc::new(k.clone())),
            ..KernelSource::new(
                k.entry_name().into(),
                emit(k).into(),
                k.spec().geometry,
                k.shared_bytes() as u32,
                (k.outer(), k.fold(), k.quotients()),
                false,
            )
        }
    }

    /// A source the caller vouches for.
    ///
    /// # Safety
    /// `source` must define the `extern "C"` kernel `entry` with the parameters
    /// the launcher passes, and that kernel must touch only the elements a
    /// transpose of `geometry` over the launched shape reads and writes, with at
    /// most `shared_bytes` of shared memory: the launcher checks buffers and
    /// shapes against `geometry` alone.
    // An unsafe contract, not an unsafe operation: the body is safe code.
    #[allow(unsafe_code)]
    pub unsafe fn from_parts(
        entry: &str,
        source: &str,
        geometry: Geometry,
        shared_bytes: u32,
    ) -> KernelSource {
        KernelSource::new(
            entry.into(),
            source.into(),
            geometry,
            shared_bytes,
            (0, [0, 0], Quotients::Narrow),
            false,
        )
    }

    fn new(
        entry: Arc<str>,
        source: Arc<str>,
        geometry: Geometry,
        shared_bytes: u32,
        (outer, fold, quotients): (u8, [u8; 2], Quotients),
        index64: bool,
    ) -> KernelSource {
        KernelSource {
            digest: Sha256::digest(source.as_bytes()).into(),
            entry,
            source,
            geometry,
            shared_bytes,
            outer,
            fold,
            quotients,
            index64,
            build64: Arc::default(),
            kernel: None,
            twins: Arc::default(),
            columns: Arc::default(),
            split: Arc::default(),
            widths: if geometry.has_widths() {
                (0..=THIN_MAX_COLS.max(u64::from(SQUAT_MAX_ROWS)))
                    .map(|_| OnceLock::new())
                    .collect()
            } else {
                Arc::default()
            },
        }
    }

    /// The `extern "C"` entry point.
    pub fn entry(&self) -> &str {
        &self.entry
    }

    /// Every `extern "C"` entry point the source defines: [`KernelSource::entry`],
    /// or a `thin` kernel's one per width ([`KernelSource::for_width`] launches
    /// the call's).
    pub fn entries(&self) -> Vec<String> {
        let suffix = if self.index64 { INDEX64_SUFFIX } else { "" };
        match &self.kernel {
            Some(k) => k
                .entry_points()
                .iter()
                .map(|e| format!("{}{suffix}", e.entry_name()))
                .collect(),
            None => vec![self.entry.to_string()],
        }
    }

    /// The CUDA C.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// What one block moves and how: the launcher sizes the grid and checks the
    /// shape with it.
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// Whether it stores on any `dst` pointer (`Kernel::aligns_dst`): a source
    /// the caller vouches for stores vectors where its geometry says.
    pub fn aligns_dst(&self) -> bool {
        self.kernel
            .as_ref()
            .map_or(self.geometry.aligns_dst(), |k| k.aligns_dst())
    }

    /// Shared memory per block, in bytes.
    pub fn shared_bytes(&self) -> u32 {
        self.shared_bytes
    }

    /// Outer batch axes the kernel takes (`Kernel::with_outer`): the shapes it
    /// runs have as many.
    pub fn outer(&self) -> u8 {
        self.outer
    }

    /// Further axes of its folded tile sides, rows then columns
    /// (`Kernel::with_fold`): the shapes it runs fold as many.
    pub fn fold(&self) -> [u8; 2] {
        self.fold
    }

    /// Which of a small kernel's divisions are wider than plain 32-bit ones
    /// (`Kernel::with_quotients`).
    pub fn quotients(&self) -> Quotients {
        self.quotients
    }

    /// Whether this is the source's 64-bit build ([`KernelSource::index64`]); the
    /// launcher runs the 32-bit build where it provably computes the same
    /// ([`bankfree_gen::check::index32`]) and this one otherwise.
    pub fn is_index64(&self) -> bool {
        self.index64
    }

    /// SHA-256 of the source.
    pub(crate) fn digest(&self) -> &[u8; 32] {
        &self.digest
    }

    /// This kernel as GPUs of `class` run it: a tile, skew or wordvec kernel
    /// built with the default rules becomes its twin where the measured rules
    /// for `class` differ ([`bankfree_gen::select::device::twin`]: tiles taken
    /// down the columns, a narrower skew tile or one down the columns, the
    /// skew tile in place of a
    /// 12-byte wordvec kernel); any other kernel, one built in the other
    /// order, and one vouched for by [`KernelSource::from_parts`], runs as it is.
    pub fn for_class(&self, class: GpuClass) -> &KernelSource {
        self.for_gpu(|| class)
    }

    /// [`KernelSource::for_class`], asking `class` only for a kernel that may have
    /// a twin (the launcher's path: most kernels never look the GPU up).
    pub(crate) fn for_gpu(&self, class: impl FnOnce() -> GpuClass) -> &KernelSource {
        let Some(k) = &self.kernel else {
            return self;
        };
        if self.index64
            || k.order() != TileOrder::Rows
            || !matches!(self.geometry.form, Form::Tile | Form::Skew | Form::Wordvec)
        {
            return self;
        }
        let class = class();
        let Some(slot) = GpuClass::ALL
            .iter()
            .position(|c| *c == class)
            .and_then(|i| self.twins.get(i))
        else {
            return self;
        };
        slot.get_or_init(|| twin(class, k).map(|t| KernelSource::from_kernel(&t)))
            .as_ref()
            .unwrap_or(self)
    }

    /// This kernel as it runs sources of `cols` columns: a `thin` kernel's
    /// entry point for that width (`Kernel::with_width`: its own registers and
    /// stage); any other kernel, a width a thin kernel does not take (its fit
    /// check refuses the call), and one vouched for by
    /// [`KernelSource::from_parts`], as it is.
    pub fn for_width(&self, cols: u64) -> &KernelSource {
        let (Some(k), Some(slot)) = (
            &self.kernel,
            usize::try_from(cols).ok().and_then(|c| self.widths.get(c)),
        ) else {
            return self;
        };
        if k.width().map(u64::from) == Some(cols) {
            return self;
        }
        slot.get_or_init(|| {
            let c = u32::try_from(cols).ok()?;
            Some(self.same_build(&k.with_width(c).ok()?))
        })
        .as_ref()
        .unwrap_or(self)
    }

    /// `k`, a variant of this kernel, in this source's build: the 64-bit build
    /// of `k`'s source where this is a 64-bit build.
    fn same_build(&self, k: &Kernel) -> KernelSource {
        let one = KernelSource::from_kernel(k);
        if self.index64 {
            one.index64().clone()
        } else {
            one
        }
    }

    /// This kernel taking its tiles in the order `order` gives
    /// (`bankfree_gen::select::device::realign_order`, asked only here): a
    /// `realign` kernel built along the rows becomes its twin down the columns
    /// where that order is [`TileOrder::Columns`] (the 64-bit build's, for a
    /// 64-bit build); any other kernel, and one vouched for by
    /// [`KernelSource::from_parts`], runs as it is.
    pub(crate) fn in_order(&self, order: impl FnOnce() -> TileOrder) -> &KernelSource {
        let Some(k) = &self.kernel else {
            return self;
        };
        if !self.geometry.realigns() || k.order() != TileOrder::Rows {
            return self;
        }
        if order() != TileOrder::Columns {
            return self;
        }
        self.columns
            .get_or_init(|| Some(self.same_build(&k.with_order(TileOrder::Columns).ok()?)))
            .as_ref()
            .unwrap_or(self)
    }

    /// A `thin` width's twin that splits each lane's column words between two
    /// warps (`Kernel::with_split`), where `wants` says the call should run it
    /// (`bankfree_gen::select::split::thin_split`); any other kernel, as it is.
    pub(crate) fn split_for(&self, wants: impl FnOnce(&Kernel) -> bool) -> &KernelSource {
        let Some(k) = &self.kernel else {
            return self;
        };
        if !self.geometry.thins() || !wants(k) {
            return self;
        }
        self.split
            .get_or_init(|| Some(self.same_build(&k.with_split().ok()?)))
            .as_ref()
            .unwrap_or(self)
    }

    /// The 64-bit build of this kernel: the same source compiled with
    /// `BANKFREE_INDEX64` defined, entry point `<entry>_i64`. Made once and
    /// shared by every clone.
    pub fn index64(&self) -> &KernelSource {
        if self.index64 {
            return self;
        }
        self.build64.get_or_init(|| KernelSource {
            // What a thin kernel's widths are built from.
            kernel: self.kernel.clone(),
            ..KernelSource::new(
                format!("{}{INDEX64_SUFFIX}", self.entry).into(),
                format!("#define {INDEX64_DEFINE}\n{}", self.source).into(),
                self.geometry,
                self.shared_bytes,
                (self.outer, self.fold, self.quotients),
                true,
            )
        })
    }
}

#[cfg(test)]
mod tests;
