//! Loaded kernels per CUDA context, compiled once however many threads ask.

use crate::compiler::{self, Binary, Format};
use crate::disk::{DiskCache, Key};
use crate::error::{Error, Result};
use crate::kernel::KernelSource;
use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute};
use cudarc::driver::{CudaContext, CudaFunction};
use cudarc::nvrtc::Ptx;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

static COMPILES: AtomicU64 = AtomicU64::new(0);
static DISK_HITS: AtomicU64 = AtomicU64::new(0);
static MEMORY_HITS: AtomicU64 = AtomicU64::new(0);

/// How kernels were obtained in this process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// NVRTC compilations.
    pub compiles: u64,
    /// Binaries read from the disk cache.
    pub disk_hits: u64,
    /// Launches that found their kernel loaded.
    pub memory_hits: u64,
}

/// The counters so far.
pub fn stats() -> Stats {
    Stats {
        compiles: COMPILES.load(Ordering::Relaxed),
        disk_hits: DISK_HITS.load(Ordering::Relaxed),
        memory_hits: MEMORY_HITS.load(Ordering::Relaxed),
    }
}

/// The process's disk cache, configured from the environment on first use.
pub fn disk() -> &'static DiskCache {
    static DISK: OnceLock<DiskCache> = OnceLock::new();
    DISK.get_or_init(DiskCache::from_env)
}

/// The disk-cache key of a kernel for a target (no NVRTC call: the build is
/// identified by its file).
fn key_for(k: &KernelSource, arch: u32, format: Format) -> Result<Key> {
    let identity = &crate::discover::locate()?.identity;
    Ok(Key::new(
        k.source(),
        &compiler::options(arch, format),
        arch,
        format,
        identity,
    ))
}

/// Binaries compiled or read in this process, by key: a key is compiled once
/// however many threads ask for it at once.
type Binaries = Mutex<HashMap<Key, Arc<OnceLock<Result<Binary>>>>>;

fn binaries() -> &'static Binaries {
    static B: OnceLock<Binaries> = OnceLock::new();
    B.get_or_init(Default::default)
}

/// Compiles through the disk cache: a hit costs no NVRTC call, and concurrent
/// requests for one key share one compile.
pub fn binary(disk: &DiskCache, k: &KernelSource, arch: u32, format: Format) -> Result<Binary> {
    let key = key_for(k, arch, format)?;
    let slot = binaries()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(key)
        .or_default()
        .clone();
    let result = slot
        .get_or_init(|| {
            if let Some(b) = disk.get(&key) {
                DISK_HITS.fetch_add(1, Ordering::Relaxed);
                return Ok(b);
            }
            let b = compiler::compile(k.source(), k.entry(), arch, format)?;
            COMPILES.fetch_add(1, Ordering::Relaxed);
            disk.put(&key, &b);
            Ok(b)
        })
        .clone();
    if result.is_err() {
        binaries()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&key);
    }
    result
}

/// The binary if this process or the disk cache already has it (no NVRTC call).
fn cached(disk: &DiskCache, k: &KernelSource, arch: u32, format: Format) -> Result<Option<Binary>> {
    let key = key_for(k, arch, format)?;
    let known = binaries()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&key)
        .cloned();
    if let Some(Ok(b)) = known.as_ref().and_then(|slot| slot.get()) {
        return Ok(Some(b.clone()));
    }
    Ok(disk.get(&key).inspect(|_| {
        DISK_HITS.fetch_add(1, Ordering::Relaxed);
    }))
}

/// Drops a binary from this process and the disk cache.
fn forget(disk: &DiskCache, k: &KernelSource, arch: u32, format: Format) -> Result<()> {
    let key = key_for(k, arch, format)?;
    binaries()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&key);
    disk.remove(&key);
    Ok(())
}

/// A kernel ready to launch.
pub(crate) struct Loaded {
    pub func: CudaFunction,
}

type Slot = Arc<OnceLock<Result<Arc<Loaded>>>>;
/// Per context (its `CUcontext`), per source (its SHA-256): two sources under one
/// entry name never share a binary.
type Map = HashMap<usize, HashMap<[u8; 32], Slot>>;

fn map() -> &'static RwLock<Map> {
    static MAP: OnceLock<RwLock<Map>> = OnceLock::new();
    MAP.get_or_init(Default::default)
}

/// The loaded kernel for `ctx`, loading it (once) on first use.
pub(crate) fn function(ctx: &Arc<CudaContext>, k: &KernelSource) -> Result<Arc<Loaded>> {
    let id = ctx.cu_ctx() as usize;
    let found = map()
        .read()
        .ok()
        .and_then(|m| m.get(&id)?.get(k.digest())?.get().cloned());
    if let Some(Ok(l)) = found {
        MEMORY_HITS.fetch_add(1, Ordering::Relaxed);
        return Ok(l);
    }
    let slot: Slot = {
        let mut m = map().write().unwrap_or_else(|p| p.into_inner());
        m.entry(id)
            .or_default()
            .entry(*k.digest())
            .or_default()
            .clone()
    };
    // Every thread asking for this kernel waits on the same cell: one compile.
    let result = slot.get_or_init(|| load(ctx, k).map(Arc::new)).clone();
    if result.is_err() {
        // Let a later call try again (the driver or the disk may have recovered).
        if let Ok(mut m) = map().write() {
            if let Some(per_ctx) = m.get_mut(&id) {
                per_ctx.remove(k.digest());
            }
        }
    }
    result
}

fn load(ctx: &Arc<CudaContext>, k: &KernelSource) -> Result<Loaded> {
    let (major, minor) = ctx
        .compute_capability()
        .map_err(|e| Error::cuda(e, "reading the compute capability"))?;
    let device_arch = (major * 10 + minor) as u32;
    // A cached CUBIN for this very GPU needs no NVRTC at all; only a miss asks
    // NVRTC which target it can produce.
    let (mut bin, from_cache) = match cached(disk(), k, device_arch, Format::Cubin)? {
        Some(b) => (b, true),
        None => {
            let (arch, format) = compiler::target_for(device_arch)?;
            (binary(disk(), k, arch, format)?, false)
        }
    };
    let mut loaded = ctx.load_module(ptx_of(&bin));
    if loaded.is_err() && from_cache {
        // A cached entry the driver refuses is dropped and compiled again.
        forget(disk(), k, bin.arch, bin.format)?;
        let (arch, format) = compiler::target_for(device_arch)?;
        bin = binary(disk(), k, arch, format)?;
        loaded = ctx.load_module(ptx_of(&bin));
    }
    let module = match loaded {
        Ok(m) => m,
        // The driver refused the CUBIN (too old for it, say): PTX, JIT-compiled by the driver.
        Err(_) if bin.format == Format::Cubin => {
            let ptx = binary(disk(), k, bin.arch, Format::Ptx)?;
            ctx.load_module(ptx_of(&ptx))
                .map_err(|e| Error::cuda(e, "loading the kernel's PTX"))?
        }
        Err(e) => return Err(Error::cuda(e, "loading the kernel")),
    };
    let func = module
        .load_function(k.entry())
        .map_err(|e| Error::cuda(e, "finding the kernel's entry point"))?;
    if bankfree_gen::kernel::launch::dynamic_shared_bytes(u64::from(k.shared_bytes())) > 0 {
        let allowed = ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
            .map_err(|e| Error::cuda(e, "reading the shared-memory limit"))?;
        if (allowed as u32) < k.shared_bytes() {
            return Err(Error::SharedMemory {
                entry: k.entry().to_string(),
                needed: k.shared_bytes(),
                allowed: allowed as u32,
                device: ctx.name().unwrap_or_else(|_| "this GPU".into()),
            });
        }
        // Set once here, not per launch.
        func.set_attribute(
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            k.shared_bytes() as i32,
        )
        .map_err(|e| Error::cuda(e, "raising the dynamic shared-memory limit"))?;
    }
    Ok(Loaded { func })
}

fn ptx_of(bin: &Binary) -> Ptx {
    match bin.format {
        Format::Cubin => Ptx::from_binary(bin.bytes.clone()),
        Format::Ptx => Ptx::from_src(
            String::from_utf8_lossy(&bin.bytes)
                .trim_end_matches('\0')
                .to_string(),
        ),
    }
}
