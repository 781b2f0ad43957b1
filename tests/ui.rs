//! The attribute from a user's crate (trybuild builds each case as a crate outside
//! the workspace that depends on `bankfree`): what must build builds and runs
//! (`tests/ui/pass`), and each compile-fail case fails with its expected messages
//! (`tests/ui/fail/*.stderr`, tied to the workspace's rustc 1.95).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
