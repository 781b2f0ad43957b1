//! Support for the code `#[tiled_transpose]` expands to. Not a public API: names and
//! signatures here change whenever the attribute's expansion does.

pub use bankfree_gen::kernel::layout::{Layout, Swizzle};
pub use bankfree_gen::kernel::Variant;
pub use bankfree_gen::{Form, Geometry, Strategy, TransposeSpec};
use bankfree_runtime::KernelSource;
use std::sync::OnceLock;

/// Compiles only for `T: Element`: `#[derive(Element)]` calls it once per field,
/// spanned at the field's type.
pub fn is_element<T: crate::Element>() {}

use bankfree_gen::Shape;

/// The launch shape from the glue's `usize` arguments.
pub fn shape(
    batch: usize,
    rows: usize,
    cols: usize,
    src_ld: Option<usize>,
    dst_ld: Option<usize>,
) -> Shape {
    let (rows, cols) = (rows as u64, cols as u64);
    let src_ld = src_ld.map_or(cols, |v| v as u64);
    let dst_ld = dst_ld.map_or(rows, |v| v as u64);
    Shape {
        batch: batch as u64,
        rows,
        cols,
        src_ld,
        dst_ld,
        src_batch_stride: rows.saturating_mul(src_ld),
        dst_batch_stride: cols.saturating_mul(dst_ld),
        outer: Default::default(),
        copy: false,
        fold: Default::default(),
    }
}

/// The kernels the attribute chose for one element size, in the order the runtime
/// tries them, as variants: their CUDA C is emitted on first use.
pub struct Entry {
    elem_bytes: usize,
    variants: &'static [Variant],
    sources: OnceLock<crate::Result<Vec<KernelSource>>>,
}

impl Entry {
    pub const fn new(elem_bytes: usize, variants: &'static [Variant]) -> Entry {
        Entry {
            elem_bytes,
            variants,
            sources: OnceLock::new(),
        }
    }

    /// The kernels' sources, emitted once per process.
    fn sources(&'static self) -> crate::Result<&'static [KernelSource]> {
        let built = self.sources.get_or_init(|| {
            self.variants
                .iter()
                .map(|v| Ok(KernelSource::from_kernel(&v.kernel()?)))
                .collect()
        });
        match built {
            Ok(list) => Ok(list),
            Err(e) => Err(e.clone()),
        }
    }
}

/// The compile-time check for element types whose size the attribute could not see:
/// `problems` lists `(size, message)`, an empty message where the kernel is fine.
/// Evaluated in a `const`, a panic here is a compile error with that message.
pub const fn check(problems: &[(usize, &str)], elem_bytes: usize, unsupported: &'static str) {
    let mut i = 0;
    while i < problems.len() {
        if problems[i].0 == elem_bytes {
            if !problems[i].1.is_empty() {
                panic!("{}", problems[i].1);
            }
            return;
        }
        i += 1;
    }
    panic!("{}", unsupported);
}

/// The kernels for an element size (the compile-time [`check`] admits only sizes
/// that have some; an error, not a panic, all the same).
pub fn pick(table: &'static [Entry], elem_bytes: usize) -> crate::Result<&'static [KernelSource]> {
    table
        .iter()
        .find(|e| e.elem_bytes == elem_bytes && !e.variants.is_empty())
        .ok_or(crate::Error::ElementSize {
            entry: "#[tiled_transpose] function".into(),
            kernel_bytes: 0,
            rust_bytes: elem_bytes,
        })?
        .sources()
}

/// The body `#[tiled_transpose]` writes with `tile = auto`.
pub use bankfree_runtime::transpose_auto;

/// The body `#[tiled_permute]` writes: the runtime's planned permute.
#[allow(clippy::too_many_arguments)]
pub fn permute<T, S, D>(
    src: &S,
    dst: &mut D,
    dims: &[usize],
    perm: &[usize],
    src_strides: Option<&[usize]>,
    dst_strides: Option<&[usize]>,
    stream: Option<&cudarc::driver::CudaStream>,
    pad: bool,
) -> crate::Result<()>
where
    S: bankfree_runtime::SrcArg<T> + ?Sized,
    D: bankfree_runtime::DstArg<T> + ?Sized,
{
    let opts = bankfree_runtime::PermuteOptions {
        src_strides,
        dst_strides,
        stream,
        strategy: Some(if pad {
            Strategy::Pad(None)
        } else {
            Strategy::Xor
        }),
        blocks_per_sm: None,
    };
    bankfree_runtime::permute_with(src, dst, dims, perm, &opts)
}
