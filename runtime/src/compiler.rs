//! CUDA C to CUBIN (or PTX) with NVRTC, with or without a device.
//!
//! ```no_run
//! use bankfree_runtime::compiler::{compile, Format};
//! let bin = compile("extern \"C\" __global__ void k() {}", "k", 90, Format::Cubin)?;
//! assert!(!bin.bytes.is_empty());
//! # Ok::<(), bankfree_runtime::Error>(())
//! ```

use crate::discover;
use crate::error::{Error, Result};

/// What NVRTC produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Machine code for one `sm_XY`: loads without a JIT.
    Cubin,
    /// PTX for `compute_XY`: the driver compiles it at load time.
    Ptx,
}

/// A compiled kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binary {
    pub format: Format,
    /// `XY` of `sm_XY` / `compute_XY`.
    pub arch: u32,
    pub bytes: Vec<u8>,
    /// NVRTC's log (ptxas' resource report included).
    pub log: String,
}

/// The options bankfree compiles with.
pub fn options(arch: u32, format: Format) -> Vec<String> {
    let target = match format {
        Format::Cubin => format!("--gpu-architecture=sm_{arch}"),
        Format::Ptx => format!("--gpu-architecture=compute_{arch}"),
    };
    vec![target, "--std=c++17".into(), "--ptxas-options=-v".into()]
}

/// The NVRTC version, `(major, minor)`.
pub fn nvrtc_version() -> Result<(i32, i32)> {
    Ok(discover::nvrtc()?.version())
}

/// The target for a device of compute capability `arch` (`XY`): CUBIN when NVRTC
/// knows the architecture, else PTX for the newest one it knows below it.
pub fn target_for(arch: u32) -> Result<(u32, Format)> {
    let archs = discover::nvrtc()?.supported_archs();
    if archs.is_empty() || archs.contains(&(arch as i32)) {
        return Ok((arch, Format::Cubin));
    }
    match archs.iter().copied().filter(|&a| a as u32 <= arch).max() {
        Some(a) => Ok((a as u32, Format::Ptx)),
        None => Ok((arch, Format::Cubin)),
    }
}

/// Compiles `source` (entry `entry`, used for messages) for `arch`.
pub fn compile(source: &str, entry: &str, arch: u32, format: Format) -> Result<Binary> {
    let nvrtc = discover::nvrtc()?;
    let opts = options(arch, format);
    let out = nvrtc.compile(source, &format!("{entry}.cu"), &opts);
    let fail = |reason: String, log: String| Error::Compile {
        entry: entry.into(),
        reason,
        options: opts.clone(),
        log,
        source_code: source.into(),
    };
    if let Err(reason) = out.result {
        return Err(fail(reason, out.log));
    }
    let bytes = match format {
        Format::Cubin => out.cubin,
        Format::Ptx => out.ptx,
    };
    match bytes {
        Some(bytes) => Ok(Binary {
            format,
            arch,
            bytes,
            log: out.log,
        }),
        None => Err(fail(format!("NVRTC returned no {format:?}"), out.log)),
    }
}
