//! cuBLAS `geam` as the benchmark's peer for f32 and f64 (loaded only where
//! the library is found).
#![allow(unsafe_code)] // cuBLAS `geam` has only a raw binding

use super::Res;
use bankfree::cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use std::sync::Arc;

/// cuBLAS `geam` transposing a row-major `rows x cols` matrix (column-major: C = A^T).
pub struct Geam {
    handle: bankfree::cudarc::cublas::CudaBlas,
}

impl Geam {
    pub fn new(stream: &Arc<CudaStream>) -> Option<Geam> {
        // SAFETY: only tries to load the library; cudarc panics if it is absent, so ask first.
        if !unsafe { bankfree::cudarc::cublas::sys::is_culib_present() } {
            return None;
        }
        bankfree::cudarc::cublas::CudaBlas::new(stream.clone())
            .ok()
            .map(|handle| Geam { handle })
    }

    pub fn run<T: 'static>(
        &self,
        stream: &CudaStream,
        src: &CudaSlice<T>,
        dst: &mut CudaSlice<T>,
        rows: usize,
        cols: usize,
    ) -> Res<()> {
        use bankfree::cudarc::cublas::sys::{
            cublasDgeam, cublasOperation_t as Op, cublasSgeam, cublasStatus_t,
        };
        let (m, n) = (rows as i32, cols as i32);
        let (a, _ga) = src.device_ptr(stream);
        let (c, _gc) = dst.device_ptr_mut(stream);
        let h = *self.handle.handle();
        let status = match std::mem::size_of::<T>() {
            // SAFETY: A is rows x cols row-major (= cols x rows column-major, lda = cols);
            // C receives cols x rows row-major (= rows x cols column-major, ldc = rows);
            // beta = 0 and B = C, which geam allows; both buffers hold rows * cols.
            4 => unsafe {
                cublasSgeam(
                    h,
                    Op::CUBLAS_OP_T,
                    Op::CUBLAS_OP_N,
                    m,
                    n,
                    &1.0,
                    a as *const f32,
                    n,
                    &0.0,
                    c as *const f32,
                    m,
                    c as *mut f32,
                    m,
                )
            },
            // SAFETY: as above, for f64.
            8 => unsafe {
                cublasDgeam(
                    h,
                    Op::CUBLAS_OP_T,
                    Op::CUBLAS_OP_N,
                    m,
                    n,
                    &1.0,
                    a as *const f64,
                    n,
                    &0.0,
                    c as *const f64,
                    m,
                    c as *mut f64,
                    m,
                )
            },
            _ => return Err("geam: f32 and f64 only".into()),
        };
        if status == cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            Ok(())
        } else {
            Err(format!("geam: {status:?}"))
        }
    }
}
