//! The `bankfree-gen` binary, run as a person or a script would.

use std::process::{Command, Output};

/// The binary's output for `args`.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bankfree-gen"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// Its standard output, after asserting that it succeeded.
pub fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("utf-8")
}

/// Its standard output parsed as JSON.
pub fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&ok(args)).expect("valid JSON")
}
