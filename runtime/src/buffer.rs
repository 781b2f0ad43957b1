//! The buffers a launch takes: `src` through [`SrcArg`], `dst` through
//! [`DstArg`], implemented for cudarc's slices and views only.

use cudarc::driver::{
    CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DeviceSlice, SyncOnDrop,
};

/// Implemented only here: a buffer's `len` and the pointer it gives are what the
/// bounds checks trust, so a user type could make a kernel write anywhere.
mod sealed {
    pub trait Sealed {}
    impl<T> Sealed for cudarc::driver::CudaSlice<T> {}
    impl<T> Sealed for cudarc::driver::CudaView<'_, T> {}
    impl<T> Sealed for cudarc::driver::CudaViewMut<'_, T> {}
}

/// A buffer the kernel reads: `CudaSlice`, `CudaView` (sealed: the launcher trusts
/// its length and pointer, so no other type can implement it).
pub trait SrcArg<T>: DeviceSlice<T> + sealed::Sealed {
    /// The device address of the buffer's first element for a launch on
    /// `stream`, which first waits for the buffer's earlier writers; the guard
    /// records the launch as a reader when it drops, after the launch.
    #[doc(hidden)]
    fn ptr<'a>(&'a self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>);
    /// The device address of the buffer's first element.
    #[doc(hidden)]
    fn address(&self, stream: &CudaStream) -> u64;
    /// The whole buffer as a view.
    #[doc(hidden)]
    fn view(&self) -> CudaView<'_, T>;
}

/// A buffer the kernel writes: `CudaSlice`, `CudaViewMut` (sealed, as [`SrcArg`]).
pub trait DstArg<T>: DeviceSlice<T> + sealed::Sealed {
    /// As [`SrcArg::ptr`], for a launch that writes the buffer: it waits for
    /// earlier readers and writers, and records the launch as a writer.
    #[doc(hidden)]
    fn ptr_mut<'a>(&'a mut self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>);
    /// The device address of the buffer's first element.
    #[doc(hidden)]
    fn address(&self, stream: &CudaStream) -> u64;
    /// The whole buffer as a mutable view.
    #[doc(hidden)]
    fn view_mut(&mut self) -> CudaViewMut<'_, T>;
}

// Every kind gives its real address: a `CudaSlice` need not be a whole
// allocation (one upgraded from another library's pointer can start anywhere).
fn address_of<T>(buffer: &impl DevicePtr<T>, stream: &CudaStream) -> u64 {
    buffer.device_ptr(stream).0
}

impl<T> SrcArg<T> for CudaSlice<T> {
    fn ptr<'a>(&'a self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
        self.device_ptr(stream)
    }
    fn address(&self, stream: &CudaStream) -> u64 {
        address_of(self, stream)
    }
    fn view(&self) -> CudaView<'_, T> {
        self.as_view()
    }
}

impl<T> SrcArg<T> for CudaView<'_, T> {
    fn ptr<'a>(&'a self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
        self.device_ptr(stream)
    }
    fn address(&self, stream: &CudaStream) -> u64 {
        address_of(self, stream)
    }
    fn view(&self) -> CudaView<'_, T> {
        self.slice(..)
    }
}

impl<T> DstArg<T> for CudaSlice<T> {
    fn ptr_mut<'a>(&'a mut self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
        self.device_ptr_mut(stream)
    }
    fn address(&self, stream: &CudaStream) -> u64 {
        address_of(self, stream)
    }
    fn view_mut(&mut self) -> CudaViewMut<'_, T> {
        self.as_view_mut()
    }
}

impl<T> DstArg<T> for CudaViewMut<'_, T> {
    fn ptr_mut<'a>(&'a mut self, stream: &'a CudaStream) -> (u64, SyncOnDrop<'a>) {
        self.device_ptr_mut(stream)
    }
    fn address(&self, stream: &CudaStream) -> u64 {
        address_of(self, stream)
    }
    fn view_mut(&mut self) -> CudaViewMut<'_, T> {
        self.slice_mut(..)
    }
}
