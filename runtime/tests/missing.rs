//! Without a driver or without NVRTC the public API returns errors, never panics.
//! (This file is its own process: NVRTC is looked up once per process.)

use bankfree_runtime::compiler::{compile, Format};
use bankfree_runtime::{probe, Error};

#[test]
fn missing_nvrtc_and_driver_are_errors() {
    // An explicit BANKFREE_NVRTC is used alone, so this process has no NVRTC.
    std::env::set_var("BANKFREE_NVRTC", "/nonexistent/libnvrtc.so.13");
    let e = compile(
        "extern \"C\" __global__ void k() {}",
        "k",
        90,
        Format::Cubin,
    )
    .unwrap_err();
    match &e {
        Error::NvrtcNotFound { searched } => {
            assert!(searched.contains("/nonexistent/libnvrtc.so.13"))
        }
        other => panic!("expected NvrtcNotFound, got {other:?}"),
    }
    let msg = e.to_string();
    assert!(
        msg.contains("pip install nvidia-cuda-nvrtc") && msg.contains("BANKFREE_NVRTC"),
        "{msg}"
    );

    // The driver: CI machines have none; a GPU machine has one, where probe() then
    // reports NVRTC missing instead (this process has none).
    match probe() {
        Err(Error::DriverNotFound { .. }) => {
            let msg = probe().unwrap_err().to_string();
            assert!(msg.contains("Install the NVIDIA driver"), "{msg}");
        }
        Err(Error::NvrtcNotFound { .. }) | Err(Error::NoDevice { .. }) => {}
        other => panic!("expected an error, got {other:?}"),
    }
}
