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
    static CLASSES: PerDevice<GpuClass> = OnceLock::new();
    per_device(&CLASSES, ctx, || forced().unwrap_or_else(|| measured(ctx)))
}

/// A value per device (by ordinal), read once.
type PerDevice<T> = OnceLock<RwLock<HashMap<usize, T>>>;

fn per_device<T: Copy>(cell: &PerDevice<T>, ctx: &Arc<CudaContext>, read: impl FnOnce() -> T) -> T {
    let map = cell.get_or_init(Default::default);
    let id = ctx.ordinal();
    if let Some(v) = map.read().ok().and_then(|m| m.get(&id).copied()) {
        return v;
    }
    let v = read();
    if let Ok(mut m) = map.write() {
        m.insert(id, v);
    }
    v
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
    static COUNTS: PerDevice<Option<u32>> = OnceLock::new();
    per_device(&COUNTS, ctx, || {
        ctx.attribute(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .ok()
            .and_then(|v| u32::try_from(v).ok())
    })
}

/// The environment variable that turns programmatic dependent launches off
/// (`0`): kernels then wait for the one before them to finish before they start.
pub const PROGRAMMATIC_VAR: &str = "BANKFREE_PROGRAMMATIC_LAUNCH";

/// Whether kernels launch on `ctx`'s GPU as programmatic dependents of the
/// kernel before them in the stream: on compute capability 9.0 and later
/// (where the generated kernels' `griddepcontrol.wait` holds them until it
/// ends), unless [`PROGRAMMATIC_VAR`] is `0`. Read once per device.
pub fn programmatic(ctx: &Arc<CudaContext>) -> bool {
    static ON: PerDevice<bool> = OnceLock::new();
    per_device(&ON, ctx, || {
        std::env::var(PROGRAMMATIC_VAR).map_or(true, |v| v != "0")
            && ctx
                .attribute(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
                .is_ok_and(|major| major >= 9)
    })
}

/// The environment variable that keeps thin calls on the unsplit kernel when
/// it is `0` ([`thin_split_on`]).
pub const THIN_SPLIT_VAR: &str = "BANKFREE_THIN_SPLIT";

/// Whether a thin call of fewer tiles than the GPU holds twice over may run
/// the kernel that splits its column words between two warps
/// (`bankfree_gen::select::split::thin_split`): unless [`THIN_SPLIT_VAR`] is
/// `0`, to compare the two in one process. Read once.
pub fn thin_split_on() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var(THIN_SPLIT_VAR).map_or(true, |v| v != "0"))
}

fn measured(ctx: &Arc<CudaContext>) -> GpuClass {
    bandwidth_per_sm(ctx).map_or(GpuClass::default(), GpuClass::nearest)
}
