//! A crate outside the workspace that depends on `bankfree` by path builds with the
//! attribute's syntax and each optional parameter (tests/external-crate).

use std::path::Path;
use std::process::Command;

#[test]
fn an_outside_crate_builds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = root.join("tests/external-crate/Cargo.toml");
    let out = Command::new(env!("CARGO"))
        .args(["build", "--offline", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", root.join("target/external-crate"))
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "the outside crate did not build:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
