//! Compile-fail cases of `#[tiled_transpose]`, each with its expected messages
//! (`tests/ui/fail/*.stderr`, tied to the workspace's rustc 1.95).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
}
