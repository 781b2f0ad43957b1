//! The crate's layering, checked: every `crate::...` path in a module's code names
//! a module of its own layer or a lower one, and no two modules import each other,
//! directly or round a longer cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first (`lib.rs` re-exports them all and is above them).
const LAYERS: [&str; 7] = ["memo", "ir", "hw", "kernel", "check", "render", "select"];

fn rank(top: &str) -> usize {
    LAYERS
        .iter()
        .position(|l| *l == top)
        .unwrap_or(LAYERS.len())
}

/// Every `.rs` file of the library (not the CLI, not this test), as its module
/// path: `kernel/mod.rs` is `kernel`, `kernel/spec.rs` is `kernel::spec`.
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("src is readable").flatten() {
            let path = entry.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "bin") {
                    stack.push(path);
                }
                continue;
            }
            let rel = path.strip_prefix(src).expect("under src");
            let mut parts: Vec<String> = rel
                .iter()
                .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
                .collect();
            if parts.last().is_some_and(|l| l == "mod") {
                parts.pop();
            }
            let name = parts.join("::");
            if name != "lib" && name != "layering" {
                out.insert(name, path);
            }
        }
    }
    out
}

/// The `crate::` paths of a file's code (comments left out), each cut at its first
/// segment that is not a module: `crate::kernel::spec::Strategy` is `kernel::spec`.
fn imports(text: &str, mods: &BTreeMap<String, PathBuf>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + "crate::".len()..];
            // `crate::{a::x, b}`: each item of the group.
            let paths: Vec<&str> = match rest.strip_prefix('{') {
                Some(group) => group.split('}').next().unwrap_or("").split(',').collect(),
                None => vec![rest],
            };
            for p in paths {
                let segs: Vec<&str> = p
                    .trim()
                    .split("::")
                    .map(|s| {
                        s.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                            .next()
                            .unwrap_or("")
                    })
                    .collect();
                let mut module = String::new();
                for s in segs {
                    let next = if module.is_empty() {
                        s.to_string()
                    } else {
                        format!("{module}::{s}")
                    };
                    if !mods.contains_key(&next) {
                        break;
                    }
                    module = next;
                }
                // A root item (`crate::Kernel`) goes through lib.rs, above every layer.
                out.insert(if module.is_empty() {
                    "lib".into()
                } else {
                    module
                });
            }
        }
    }
    out
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mods = modules(&src);
    mods.iter()
        .map(|(name, path)| {
            let text = std::fs::read_to_string(path).expect("source is readable");
            let mut deps = imports(&text, &mods);
            deps.remove(name);
            (name.clone(), deps)
        })
        .collect()
}

fn top(module: &str) -> &str {
    module.split("::").next().unwrap_or(module)
}

#[test]
fn modules_import_only_their_own_layer_and_lower_ones() {
    let g = graph();
    assert!(g.len() > 20, "found only {:?}", g.keys());
    let mut wrong = Vec::new();
    for (module, deps) in &g {
        for d in deps {
            if rank(top(d)) > rank(top(module)) {
                wrong.push(format!("{module} (layer {}) uses {d}", top(module)));
            }
        }
    }
    assert!(wrong.is_empty(), "upward imports:\n{}", wrong.join("\n"));
}

#[test]
fn no_two_modules_import_each_other() {
    let g = graph();
    // Depth-first search with colours: reaching a module still on the stack is a cycle.
    fn visit<'a>(
        m: &'a str,
        g: &'a BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<&'a str, bool>,
        stack: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        match state.get(m) {
            Some(true) => return None,
            Some(false) => {
                let at = stack.iter().position(|s| *s == m).unwrap_or(0);
                let mut cycle: Vec<String> = stack[at..].iter().map(|s| s.to_string()).collect();
                cycle.push(m.to_string());
                return Some(cycle);
            }
            None => {}
        }
        state.insert(m, false);
        stack.push(m);
        for d in g.get(m).into_iter().flatten() {
            if let Some(c) = visit(d, g, state, stack) {
                return Some(c);
            }
        }
        stack.pop();
        state.insert(m, true);
        None
    }
    let mut state = BTreeMap::new();
    for m in g.keys() {
        if let Some(cycle) = visit(m, &g, &mut state, &mut Vec::new()) {
            panic!("import cycle: {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn the_check_sees_upward_imports_and_cycles() {
    let mods: BTreeMap<String, PathBuf> = ["ir", "ir::expr", "kernel", "kernel::spec"]
        .into_iter()
        .map(|m| (m.to_string(), PathBuf::new()))
        .collect();
    let found = imports(
        "use crate::kernel::spec::{Strategy, X};\n// crate::hw in a comment\nuse crate::{ir::expr::Expr, Kernel};",
        &mods,
    );
    let want: BTreeSet<String> = ["kernel::spec", "ir::expr", "lib"].map(String::from).into();
    assert_eq!(found, want);
    assert!(rank("kernel") > rank("ir") && rank("lib") > rank("select"));
}
