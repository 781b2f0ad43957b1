//! Which measured class ([`GpuClass`]) the GPU of a context belongs to, read once
//! per device from the driver.
//!
//! The class is the one whose peak DRAM bandwidth per SM is nearest the GPU's
//! (memory clock, bus width and SM count as the driver reports them);
//! `BANKFREE_GPU_CLASS=h100` or `h200` sets it instead, to compare the classes'
//! defaults on one GPU or to pin them (another value is ignored, with a warning
//! through `log`). A GPU whose attributes cannot be read
//! takes the default class, [`GpuClass::H100`].

use bankfree_gen::select::device::GpuClass;
use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::CudaContext;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

/// The environment variable that sets the class of every GPU.
pub const CLASS_VAR: &str = "BANKFREE_GPU_CLASS";

/// The class the launcher picks defaults for on `ctx`'s GPU.
pub fn class(ctx: &Arc<CudaContext>) -> GpuClass {
    // Keyed by the device's ordinal: the class is the GPU's, whatever context
    // runs on it (a context's handle may be reused by another device's).
    static CLASSES: OnceLock<RwLock<HashMap<usize, GpuClass>>> = OnceLock::new();
    let map = CLASSES.get_or_init(Default::default);
    let id = ctx.ordinal();
    if let Some(c) = map.read().ok().and_then(|m| m.get(&id).copied()) {
        return c;
    }
    let c = forced().unwrap_or_else(|| measured(ctx));
    if let Ok(mut m) = map.write() {
        m.insert(id, c);
    }
    c
}

/// The class `BANKFREE_GPU_CLASS` names, if it is set; a value that names no class
/// is ignored with one warning through `log`.
fn forced() -> Option<GpuClass> {
    let value = std::env::var(CLASS_VAR).ok()?;
    match value.parse() {
        Ok(c) => Some(c),
        Err(why) => {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| {
                log::warn!("bankfree: {CLASS_VAR}: {why}; using the class the GPU's memory bandwidth per SM gives");
            });
            None
        }
    }
}

/// Peak DRAM bandwidth per SM of `ctx`'s GPU in GB/s, where the driver reports
/// what it is computed from.
pub fn bandwidth_per_sm(ctx: &Arc<CudaContext>) -> Option<f64> {
    let read = |a: Attr| ctx.attribute(a).ok().and_then(|v| u64::try_from(v).ok());
    GpuClass::bandwidth_per_sm_of(
        read(Attr::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)?,
        read(Attr::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?,
        read(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
    )
}

/// The SM count of `ctx`'s GPU, read once per device (`None` where the driver
/// does not report it).
pub fn sm_count(ctx: &Arc<CudaContext>) -> Option<u32> {
    static COUNTS: OnceLock<RwLock<HashMap<usize, Option<u32>>>> = OnceLock::new();
    let map = COUNTS.get_or_init(Default::default);
    let id = ctx.ordinal();
    if let Some(n) = map.read().ok().and_then(|m| m.get(&id).copied()) {
        return n;
    }
    let n = ctx
        .attribute(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .ok()
        .and_then(|v| u32::try_from(v).ok());
    if let Ok(mut m) = map.write() {
        m.insert(id, n);
    }
    n
}

fn measured(ctx: &Arc<CudaContext>) -> GpuClass {
    bandwidth_per_sm(ctx).map_or(GpuClass::default(), GpuClass::nearest)
}
