//! The main job: transpose an 8192 x 8192 f32 matrix on GPU 0 with `pad` and
//! `swizzle` kernels.
//!
//! Today this prints what the generator builds for that job (the kernels, their
//! shared memory and the bank analyzer's verdict) and exits with status 2: the GPU
//! runtime (`bankfree-runtime`) that compiles and launches them is not written yet.

use bankfree::gen::{bank::Model, emit::emit, Kernel, Strategy, TransposeSpec};
use std::process::ExitCode;

fn main() -> ExitCode {
    for strategy in [Strategy::Pad(None), Strategy::Xor] {
        let kernel = match TransposeSpec::new(32, 4, strategy).and_then(Kernel::build) {
            Ok(k) => k,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
        let report = kernel.analyze(Model::Hopper);
        println!(
            "{:<16} {} ({}, {} bytes of shared memory per block): {}",
            strategy.to_string(),
            kernel.entry_name(),
            kernel.layout,
            kernel.shared_bytes(),
            report.verdict()
        );
        for i in &report.instructions {
            println!(
                "    shared {:<5} {:<45} {} wavefronts (ideal {})",
                i.kind, i.access, i.wavefronts, i.ideal
            );
        }
        if std::env::var_os("BANKFREE_SHOW_SOURCE").is_some() {
            println!("{}", emit(&kernel));
        }
    }
    eprintln!(
        "\nnot run on a GPU: this build of bankfree has no GPU runtime yet (bankfree-runtime \
         is an empty shell). The kernels above are what it will compile with NVRTC and launch; \
         print their CUDA C with BANKFREE_SHOW_SOURCE=1, or with `cargo run -p bankfree-gen -- gen`."
    );
    ExitCode::from(2)
}
