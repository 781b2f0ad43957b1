//! Every `unsafe` block of the runtime, each with its `// SAFETY:` reason.
//!
//! * probing for the driver library before cudarc touches it (cudarc panics when
//!   libcuda cannot be loaded, so nothing calls it before [`driver_present`]);
//! * NVRTC through its C API, loaded by path with libloading (cudarc's own NVRTC
//!   loader also panics, and only searches the loader's path);
//! * the kernel launch, and the copy that runs calls which move one contiguous
//!   run;
//! * with the `nccl` feature: probing for NCCL before cudarc touches it, the
//!   exchange buffers' bytes seen as elements by the kernels, and ([`peer`]) the
//!   access and the slices through which a kernel writes another GPU's memory.

#[cfg(feature = "nccl")]
pub mod peer;

use cudarc::driver::{CudaFunction, CudaStream, DriverError, LaunchConfig};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;

/// Whether cudarc can load the driver library (libcuda).
pub fn driver_present() -> bool {
    // SAFETY: `is_culib_present` only tries `dlopen` on candidate names and closes
    // what it opened; it calls no driver function.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// Copies `src` into the start of `dst` on `stream` (both of its context).
pub fn copy<T>(
    src: &cudarc::driver::CudaView<'_, T>,
    dst: &mut cudarc::driver::CudaViewMut<'_, T>,
    stream: &cudarc::driver::CudaStream,
) -> Result<(), DriverError> {
    use cudarc::driver::{DevicePtr, DevicePtrMut};
    if dst.len() < src.len() {
        return Err(DriverError(
            cudarc::driver::sys::CUresult::CUDA_ERROR_INVALID_VALUE,
        ));
    }
    stream.context().bind_to_thread()?;
    let bytes = src.len() * std::mem::size_of::<T>();
    let (from, _read) = src.device_ptr(stream);
    let (to, _written) = dst.device_ptr_mut(stream);
    // SAFETY: both pointers are views' own device memory of at least `bytes` bytes
    // (checked above) in `stream`'s context (the caller checked), ordered after
    // their earlier users by the events `device_ptr` waited for; `_read` and
    // `_written` record this copy on them when they drop.
    unsafe { cudarc::driver::result::memcpy_dtod_async(to, from, bytes, stream.cu_stream()) }
}

/// Whether cudarc can load NCCL.
#[cfg(feature = "nccl")]
pub fn nccl_present() -> bool {
    // SAFETY: as in `driver_present`: only `dlopen`s of candidate names.
    unsafe { cudarc::nccl::sys::is_culib_present() }
}

/// An exchange buffer's bytes as elements, for the kernels that pack into it.
#[cfg(feature = "nccl")]
pub fn elems_mut<T>(
    bytes: &mut cudarc::driver::CudaSlice<u8>,
) -> cudarc::driver::CudaViewMut<'_, T> {
    let n = bytes.len() / std::mem::size_of::<T>().max(1);
    // SAFETY: device memory is never read as `T` on the host through this view: the
    // kernels copy whole elements byte for byte, so the buffer holds only bytes of
    // `T` values of the source (or the zeros it was allocated with, which nothing
    // places). The allocation is 256-byte aligned and the length fits the bytes.
    unsafe { bytes.transmute_mut::<T>(n) }.expect("n elements fit the bytes")
}

/// A received buffer's bytes as elements, for the kernels that place them.
#[cfg(feature = "nccl")]
pub fn elems<T>(bytes: &cudarc::driver::CudaSlice<u8>) -> cudarc::driver::CudaView<'_, T> {
    let n = bytes.len() / std::mem::size_of::<T>().max(1);
    // SAFETY: as in `elems_mut`; the bytes are `T` values a peer of the same element
    // type packed (the ranks agree on the type before they exchange).
    unsafe { bytes.transmute::<T>(n) }.expect("n elements fit the bytes")
}

/// A buffer's elements as bytes, for the bare exchange NCCL sends.
#[cfg(feature = "nccl")]
pub fn bytes_of<'a, T>(v: &'a cudarc::driver::CudaView<'a, T>) -> cudarc::driver::CudaView<'a, u8> {
    let n = v.len() * std::mem::size_of::<T>();
    // SAFETY: every byte of device memory is a valid `u8`; the view covers exactly
    // the elements' bytes and is only read by NCCL on the device.
    unsafe { v.transmute::<u8>(n) }.expect("the bytes of the elements fit")
}

/// A buffer's elements as bytes NCCL receives into.
#[cfg(feature = "nccl")]
pub fn bytes_of_mut<'a, T>(
    v: &'a mut cudarc::driver::CudaViewMut<'a, T>,
) -> cudarc::driver::CudaViewMut<'a, u8> {
    let n = v.len() * std::mem::size_of::<T>();
    // SAFETY: NCCL writes whole elements' bytes that a peer of the same element
    // type sent from its `T` values (the ranks agree on the type first); the host
    // never sees the bytes as `T` until they are whole values again.
    unsafe { v.transmute_mut::<u8>(n) }.expect("the bytes of the elements fit")
}

/// Loads a shared library by path and keeps it loaded for the life of the process,
/// so that later `dlopen`s of its soname (NVRTC's of its builtins) find it.
pub fn preload(path: &Path) -> Result<(), String> {
    // SAFETY: loading runs the library's initializers; the NVIDIA libraries we load
    // here have no initializers with preconditions, and we never unload them.
    let lib = unsafe { libloading::Library::new(path) }.map_err(|e| e.to_string())?;
    std::mem::forget(lib);
    Ok(())
}

type Prog = *mut c_void;
type Res = c_int;

/// The NVRTC C API, resolved from one loaded library.
pub struct Nvrtc {
    _lib: libloading::Library,
    version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> Res,
    num_archs: unsafe extern "C" fn(*mut c_int) -> Res,
    archs: unsafe extern "C" fn(*mut c_int) -> Res,
    create: unsafe extern "C" fn(
        *mut Prog,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> Res,
    destroy: unsafe extern "C" fn(*mut Prog) -> Res,
    compile: unsafe extern "C" fn(Prog, c_int, *const *const c_char) -> Res,
    log_size: unsafe extern "C" fn(Prog, *mut usize) -> Res,
    log: unsafe extern "C" fn(Prog, *mut c_char) -> Res,
    cubin_size: unsafe extern "C" fn(Prog, *mut usize) -> Res,
    cubin: unsafe extern "C" fn(Prog, *mut c_char) -> Res,
    ptx_size: unsafe extern "C" fn(Prog, *mut usize) -> Res,
    ptx: unsafe extern "C" fn(Prog, *mut c_char) -> Res,
    error_string: unsafe extern "C" fn(Res) -> *const c_char,
}

/// What one compilation produced.
pub struct Output {
    /// `NVRTC_SUCCESS` or the error's name.
    pub result: Result<(), String>,
    pub log: String,
    pub cubin: Option<Vec<u8>>,
    pub ptx: Option<Vec<u8>>,
}

macro_rules! sym {
    ($lib:expr, $name:literal) => {
        // SAFETY: the symbol is NVRTC's documented C function of this name; the
        // field type it is stored in is that function's C signature.
        *unsafe { $lib.get($name) }
            .map_err(|e| format!("{}: {e}", String::from_utf8_lossy($name)))?
    };
}

impl Nvrtc {
    /// Opens the library at `path` and resolves the functions bankfree uses.
    pub fn open(path: &Path) -> Result<Nvrtc, String> {
        // SAFETY: as in `preload`.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| e.to_string())?;
        Ok(Nvrtc {
            version: sym!(lib, b"nvrtcVersion"),
            num_archs: sym!(lib, b"nvrtcGetNumSupportedArchs"),
            archs: sym!(lib, b"nvrtcGetSupportedArchs"),
            create: sym!(lib, b"nvrtcCreateProgram"),
            destroy: sym!(lib, b"nvrtcDestroyProgram"),
            compile: sym!(lib, b"nvrtcCompileProgram"),
            log_size: sym!(lib, b"nvrtcGetProgramLogSize"),
            log: sym!(lib, b"nvrtcGetProgramLog"),
            cubin_size: sym!(lib, b"nvrtcGetCUBINSize"),
            cubin: sym!(lib, b"nvrtcGetCUBIN"),
            ptx_size: sym!(lib, b"nvrtcGetPTXSize"),
            ptx: sym!(lib, b"nvrtcGetPTX"),
            error_string: sym!(lib, b"nvrtcGetErrorString"),
            _lib: lib,
        })
    }

    /// `(major, minor)`.
    pub fn version(&self) -> (i32, i32) {
        let (mut a, mut b) = (0, 0);
        // SAFETY: two valid out-pointers.
        unsafe { (self.version)(&mut a, &mut b) };
        (a, b)
    }

    /// The `sm_XY` numbers (`XY`) this NVRTC can compile for.
    pub fn supported_archs(&self) -> Vec<i32> {
        let mut n = 0;
        // SAFETY: a valid out-pointer.
        if unsafe { (self.num_archs)(&mut n) } != 0 || n <= 0 {
            return Vec::new();
        }
        let mut v = vec![0; n as usize];
        // SAFETY: `v` holds the `n` ints NVRTC writes.
        if unsafe { (self.archs)(v.as_mut_ptr()) } != 0 {
            return Vec::new();
        }
        v
    }

    fn err(&self, r: Res) -> String {
        // SAFETY: nvrtcGetErrorString returns a static NUL-terminated string.
        let p = unsafe { (self.error_string)(r) };
        if p.is_null() {
            return format!("NVRTC error {r}");
        }
        // SAFETY: non-null, NUL-terminated, static.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    fn bytes(
        &self,
        prog: Prog,
        size: unsafe extern "C" fn(Prog, *mut usize) -> Res,
        get: unsafe extern "C" fn(Prog, *mut c_char) -> Res,
    ) -> Option<Vec<u8>> {
        let mut n = 0usize;
        // SAFETY: `prog` is a live program; `n` a valid out-pointer.
        if unsafe { size(prog, &mut n) } != 0 || n == 0 {
            return None;
        }
        let mut buf = vec![0u8; n];
        // SAFETY: `buf` holds the `n` bytes NVRTC writes.
        (unsafe { get(prog, buf.as_mut_ptr().cast()) } == 0).then_some(buf)
    }

    /// Compiles `source` with `options`; returns CUBIN and/or PTX and the log.
    pub fn compile(&self, source: &str, name: &str, options: &[String]) -> Output {
        let fail = |m: String| Output {
            result: Err(m),
            log: String::new(),
            cubin: None,
            ptx: None,
        };
        let (Ok(src), Ok(name)) = (CString::new(source), CString::new(name)) else {
            return fail("the source or its name contains a NUL byte".into());
        };
        let opts: Vec<CString> = match options.iter().map(|o| CString::new(o.as_str())).collect() {
            Ok(v) => v,
            Err(_) => return fail("an option contains a NUL byte".into()),
        };
        let ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        let mut prog: Prog = std::ptr::null_mut();
        // SAFETY: valid out-pointer, NUL-terminated source and name, no headers.
        let r = unsafe {
            (self.create)(
                &mut prog,
                src.as_ptr(),
                name.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        if r != 0 {
            return fail(self.err(r));
        }
        // SAFETY: live program; `ptrs` holds `ptrs.len()` NUL-terminated strings that outlive the call.
        let r = unsafe { (self.compile)(prog, ptrs.len() as c_int, ptrs.as_ptr()) };
        let log = self
            .bytes(prog, self.log_size, self.log)
            .map(|b| {
                String::from_utf8_lossy(&b)
                    .trim_end_matches('\0')
                    .trim()
                    .to_string()
            })
            .unwrap_or_default();
        let out = if r == 0 {
            Output {
                result: Ok(()),
                log,
                cubin: self.bytes(prog, self.cubin_size, self.cubin),
                ptx: self.bytes(prog, self.ptx_size, self.ptx),
            }
        } else {
            Output {
                result: Err(self.err(r)),
                log,
                cubin: None,
                ptx: None,
            }
        };
        // SAFETY: `prog` was created above and is destroyed once.
        unsafe { (self.destroy)(&mut prog) };
        out
    }
}

/// The process's effective user id (who owns what it creates).
#[cfg(unix)]
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions, cannot fail and touches no memory of ours.
    unsafe { libc::geteuid() }
}

/// The driver's CUDA version, e.g. 13000 for 13.0 (the driver must be present).
pub fn driver_version() -> Result<i32, DriverError> {
    let mut v: c_int = 0;
    // SAFETY: called only with a context open (so cudarc has loaded the driver);
    // `v` is a valid out-pointer.
    let r = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) };
    match r {
        cudarc::driver::sys::CUresult::CUDA_SUCCESS => Ok(v),
        e => Err(DriverError(e)),
    }
}

/// A generated kernel's parameters after its two pointers: `u32` values for its
/// 32-bit build, `u64` for its 64-bit one.
pub enum Scalars<'a> {
    Narrow(&'a [u32]),
    Wide(&'a [u64]),
}

/// Launches a generated kernel on `stream`: its parameters are `ptrs` (`src`,
/// `dst`), then `scalars`. With `programmatic` it launches as a programmatic
/// dependent of the stream's previous kernel
/// (`CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`): it may start
/// before that kernel ends, and waits for it before its first memory access.
pub fn launch(
    stream: &CudaStream,
    func: &CudaFunction,
    cfg: LaunchConfig,
    ptrs: [u64; 2],
    scalars: Scalars<'_>,
    programmatic: bool,
) -> Result<(), DriverError> {
    use cudarc::driver::sys;
    stream.context().bind_to_thread()?;
    let mut params: Vec<*mut c_void> = ptrs
        .iter()
        .map(|p| p as *const u64 as *mut c_void)
        .collect();
    match scalars {
        Scalars::Narrow(s) => params.extend(s.iter().map(|v| v as *const u32 as *mut c_void)),
        Scalars::Wide(s) => params.extend(s.iter().map(|v| v as *const u64 as *mut c_void)),
    }
    let mut value = sys::CUlaunchAttributeValue { pad: [0; 64] };
    value.programmaticStreamSerializationAllowed = 1;
    let mut attr = sys::CUlaunchAttribute {
        id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
        pad: [0; 4],
        value,
    };
    let config = sys::CUlaunchConfig {
        gridDimX: cfg.grid_dim.0,
        gridDimY: cfg.grid_dim.1,
        gridDimZ: cfg.grid_dim.2,
        blockDimX: cfg.block_dim.0,
        blockDimY: cfg.block_dim.1,
        blockDimZ: cfg.block_dim.2,
        sharedMemBytes: cfg.shared_mem_bytes,
        hStream: stream.cu_stream(),
        attrs: &mut attr,
        numAttrs: 1,
    };
    // A plain launch takes `cuLaunchKernel`: a driver too old to have
    // `cuLaunchKernelEx` (cudarc panics on a missing symbol) runs no sm_90 GPU.
    // SAFETY: the only caller (`launch::run`) passes the generated kernel's
    // parameters in order (`src`, `dst`, then the used entries of
    // `Shape::params`: the seven scalars and the outer axes', as many as the
    // kernel takes (`launch::why_unfit` checked that): u32 for the 32-bit build,
    // which runs only where `check::index32::proven` showed every index fits,
    // u64 for the 64-bit one); `params` points at values that outlive the call.
    // It checked with overflow-free arithmetic that both buffers hold every
    // element the shape addresses, took both addresses from their buffers on
    // this stream (ordered after their earlier users), and sized the grid, block
    // and dynamic shared memory from the same spec; the kernel only reads `src`
    // and writes `dst` inside those bounds. A programmatic launch changes only
    // when the kernel may start: every generated kernel waits
    // (`griddepcontrol.wait`) before its first memory access for the kernel
    // before it to finish and its writes to show.
    unsafe {
        if programmatic {
            sys::cuLaunchKernelEx(
                &config,
                func.cu_function(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
            .result()
        } else {
            cudarc::driver::result::launch_kernel(
                func.cu_function(),
                cfg.grid_dim,
                cfg.block_dim,
                cfg.shared_mem_bytes,
                stream.cu_stream(),
                &mut params,
            )
        }
    }
}
