//! A crate outside the workspace that depends on `bankfree` by path compiles with
//! the attribute's syntax and each optional parameter (tests/external-crate): `cargo
//! check`, its expansions type-checked and linted with warnings denied (the
//! workspace's own tests build and run the attribute's code).

use std::path::Path;
use std::process::Command;

#[test]
fn an_outside_crate_compiles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = root.join("tests/external-crate/Cargo.toml");
    let out = Command::new(env!("CARGO"))
        .args(["check", "--offline", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", root.join("target/external-crate"))
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "the outside crate does not compile:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
