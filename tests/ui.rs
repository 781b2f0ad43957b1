//! Compile-fail cases of `#[tiled_transpose]` and `#[derive(Element)]`, each with
//! its expected messages (`tests/ui/fail/*.stderr`, tied to the workspace's rustc
//! 1.95). What must build is built by `tests/external.rs` and the doc tests.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
}
