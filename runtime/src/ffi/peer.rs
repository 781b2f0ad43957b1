//! Kernels that write another GPU's memory: peer access between two GPUs, the
//! driver's word that a buffer is writable from a GPU, and that buffer as a slice
//! of the writing GPU's stream, which the launcher takes like any other.

use cudarc::driver::sys::{
    self, CUmemAccessDesc, CUmemAccess_flags, CUmemLocation, CUmemLocationType,
    CUpointer_attribute, CUresult,
};
use cudarc::driver::{
    CudaContext, CudaSlice, CudaStream, CudaViewMut, DevicePtrMut, DeviceSlice, DriverError,
};
use std::ffi::c_void;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

/// Lets `ctx`'s kernels reach `peer`'s memory; `false` where the two GPUs
/// have no peer path.
pub fn enable(ctx: &Arc<CudaContext>, peer: &Arc<CudaContext>) -> Result<bool, DriverError> {
    let mut can = 0;
    // SAFETY: `can` is a live out-pointer; both ordinals are devices the driver
    // opened contexts on.
    unsafe { sys::cuDeviceCanAccessPeer(&mut can, ctx.cu_device(), peer.cu_device()) }.result()?;
    if can == 0 {
        return Ok(false);
    }
    ctx.bind_to_thread()?;
    // SAFETY: `peer`'s context is alive (the caller holds it); the flags must be 0.
    match unsafe { sys::cuCtxEnablePeerAccess(peer.cu_ctx(), 0) } {
        CUresult::CUDA_SUCCESS | CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => Ok(true),
        e => Err(DriverError(e)),
    }
}

/// Whether kernels on `ctx`'s GPU may write every byte of `view` (memory of
/// another GPU, after [`enable`]). A buffer from a stream-ordered pool (cudarc's
/// allocations) is first made writable by granting `ctx`'s GPU access to its
/// pool; then the driver is asked what access that GPU has at the view's first
/// and last byte. Any failure is a `false`, never a guess.
pub fn writable<T>(ctx: &Arc<CudaContext>, view: &mut CudaViewMut<'_, T>) -> bool {
    let bytes = view.len() * std::mem::size_of::<T>();
    if bytes == 0 {
        return true;
    }
    // The address through the view's own stream: none of the transpose's streams
    // then waits for the view's earlier users here.
    let owner = view.stream().clone();
    let (start, _written) = view.device_ptr_mut(&owner);
    let Ok(device) = i32::try_from(ctx.ordinal()) else {
        return false;
    };
    if ctx.bind_to_thread().is_err() {
        return false;
    }
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: the attribute writes one `CUmemoryPool` handle to a live out-pointer
    // of that type; `start` is a device address of this process.
    let pooled = unsafe {
        sys::cuPointerGetAttribute(
            (&mut pool as *mut sys::CUmemoryPool).cast::<c_void>(),
            CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
            start,
        )
    };
    if pooled == CUresult::CUDA_SUCCESS && !pool.is_null() {
        let desc = CUmemAccessDesc {
            location: CUmemLocation {
                type_: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
                id: device,
            },
            flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        // SAFETY: `pool` is the handle the driver just returned; one descriptor.
        if unsafe { sys::cuMemPoolSetAccess(pool, &desc, 1) } != CUresult::CUDA_SUCCESS {
            return false;
        }
    }
    [start, start + bytes as u64 - 1].into_iter().all(|at| {
        // The driver writes a `CUDA_POINTER_ATTRIBUTE_ACCESS_FLAGS` (a C enum);
        // the wider zeroed word holds it whatever its width.
        let mut flags: u64 = 0;
        // SAFETY: a live out-pointer at least as wide as the attribute's value.
        let asked = unsafe {
            sys::cuPointerGetAttribute(
                (&mut flags as *mut u64).cast::<c_void>(),
                CUpointer_attribute::CU_POINTER_ATTRIBUTE_ACCESS_FLAGS,
                at,
            )
        };
        const READWRITE: u64 = 3;
        asked == CUresult::CUDA_SUCCESS && flags & READWRITE == READWRITE
    })
}

/// A view of another GPU's memory as a slice of `stream`'s context (fresh events
/// of that context; the memory is never freed through it), for as long as the
/// view is borrowed. The caller orders it against the owner's streams.
pub struct Alias<'a, T> {
    slice: ManuallyDrop<CudaSlice<T>>,
    _view: PhantomData<&'a mut T>,
}

impl<'a, T> Alias<'a, T> {
    /// `view` as a slice of `stream`: only after [`writable`] said `stream`'s GPU
    /// may write it.
    pub fn new(view: &'a mut CudaViewMut<'_, T>, stream: &Arc<CudaStream>) -> Alias<'a, T> {
        // As in `writable`: the address through the view's own stream.
        let (len, owner) = (view.len(), view.stream().clone());
        let (ptr, _written) = view.device_ptr_mut(&owner);
        // SAFETY: `ptr..ptr + len` is `view`'s memory, which stays allocated and
        // unaliased while `view` is borrowed (`'a`); the slice is never freed (its
        // drop leaks the pointer back); `stream`'s GPU may write it (`writable`).
        let slice = unsafe { stream.upgrade_device_ptr::<T>(ptr, len) };
        Alias {
            slice: ManuallyDrop::new(slice),
            _view: PhantomData,
        }
    }
}

impl<T> Deref for Alias<'_, T> {
    type Target = CudaSlice<T>;
    fn deref(&self) -> &CudaSlice<T> {
        &self.slice
    }
}

impl<T> DerefMut for Alias<'_, T> {
    fn deref_mut(&mut self) -> &mut CudaSlice<T> {
        &mut self.slice
    }
}

impl<T> Drop for Alias<'_, T> {
    fn drop(&mut self) {
        // SAFETY: taken once, here; the slice gives its pointer back unfreed.
        let slice = unsafe { ManuallyDrop::take(&mut self.slice) };
        slice.leak();
    }
}
