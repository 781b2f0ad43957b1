//! The `bankfree-gen` binary, as a person or a script would call it.

mod common;

use common::cli::{json, ok, run};

#[test]
fn gen_prints_cuda_c() {
    let c = ok(&[
        "gen",
        "--tile",
        "32",
        "--strategy",
        "pad",
        "--elem-bytes",
        "4",
        "--block-rows",
        "8",
    ]);
    assert!(c.contains("extern \"C\" __global__ void __launch_bounds__(256)"));
    assert!(c.contains("bankfree_transpose_t32_r8_e4_pad1("));
    assert!(c.contains("__shared__ unsigned int tile[1056];"));
    assert!(c.contains("// analyzer: hopper model: conflict-free"));
}

#[test]
fn banks_json_has_the_documented_fields() {
    let v = json(&[
        "banks",
        "--tile",
        "32",
        "--strategy",
        "none",
        "--elem-bytes",
        "4",
        "--json",
    ]);
    assert_eq!(v["conflict_free"], false);
    let inst = v["instructions"].as_array().expect("a list");
    assert_eq!(inst.len(), 2);
    assert_eq!(inst[1]["wavefronts"].as_u64(), Some(32));
    assert_eq!(inst[1]["ideal"].as_u64(), Some(1));
    let v = json(&[
        "banks",
        "--strategy",
        "swizzle",
        "--elem-bytes",
        "2",
        "--json",
    ]);
    assert_eq!(v["conflict_free"], true);
    assert!(v["instructions"]
        .as_array()
        .is_some_and(|a| a.iter().all(|i| i["wavefronts"] == i["ideal"])));
}

#[test]
fn banks_text_and_svg() {
    let text = ok(&["banks", "--strategy", "pad(2)"]);
    assert!(
        text.contains("2-way bank conflict on the shared load"),
        "{text}"
    );
    assert!(text.contains("bank    0   1   2"));
    let dir = std::env::temp_dir().join(format!("bankfree-gen-svg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("map.svg");
    ok(&[
        "banks",
        "--strategy",
        "swizzle(rotate)",
        "--svg",
        path.to_str().expect("utf-8 path"),
    ]);
    let svg = std::fs::read_to_string(&path).expect("svg written");
    assert!(svg.starts_with("<svg") && svg.contains("conflict-free"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn access_reproduces_gpu_facts() {
    // The table in ../shared/notes/gpu-facts.md, through the command line.
    let facts = [
        ("4", "lane", 1),
        ("4", "33*lane", 1),
        ("4", "32*lane", 32),
        ("2", "32*lane", 16),
        ("2", "33*lane", 1),
        ("1", "32*lane", 8),
        ("1", "33*lane", 1),
        ("8", "lane", 2),
        ("8", "33*lane", 2),
        ("8", "32*lane", 32),
        ("8", "lane^16", 2),
        ("16", "lane", 4),
        ("16", "8*lane", 32),
    ];
    for (bytes, index, want) in facts {
        let v = json(&["access", "--elem-bytes", bytes, "--index", index, "--json"]);
        assert_eq!(v["wavefronts"].as_u64(), Some(want), "{bytes}-byte {index}");
        assert!(v["ideal"].as_u64().is_some());
    }
    // A permutation of 0..31: conflict-free; its even lanes alone at stride 2 are 2-way.
    let v = json(&[
        "access",
        "--elem-bytes",
        "4",
        "--index",
        "(lane&1)*16 + lane/2",
        "--json",
    ]);
    assert_eq!(v["wavefronts"].as_u64(), Some(1));
    let v = json(&[
        "access",
        "--elem-bytes",
        "4",
        "--index",
        "(lane&1)*16 + lane*2",
        "--json",
    ]);
    assert_eq!(v["wavefronts"].as_u64(), Some(2));
    let v = json(&[
        "access",
        "--elem-bytes",
        "4",
        "--index",
        "lane*31",
        "--lanes",
        "31",
        "--model",
        "legacy16",
        "--json",
    ]);
    assert_eq!(v["lanes"].as_array().map(Vec::len), Some(31));
}

#[test]
fn occupancy_reproduces_the_shared_memory_example() {
    let text = ok(&[
        "occupancy",
        "--arch",
        "sm_75",
        "--threads",
        "256",
        "--smem-bytes",
        "16640",
    ]);
    assert!(text.contains("-> 3 blocks"), "{text}");
    let v = json(&[
        "occupancy",
        "--arch",
        "sm_75",
        "--threads",
        "256",
        "--smem-bytes",
        "16384",
        "--json",
    ]);
    assert_eq!(v["blocks"].as_u64(), Some(4));
    let v = json(&[
        "occupancy",
        "--arch",
        "sm_10",
        "--threads",
        "256",
        "--regs",
        "11",
        "--json",
    ]);
    assert_eq!(v["blocks"].as_u64(), Some(2));
}

#[test]
fn gen_prints_a_thin_kernels_entry_points() {
    let args = [
        "gen",
        "--form",
        "thin",
        "--elem-bytes",
        "2",
        "--strategy",
        "pad",
    ];
    let all = ok(&args);
    for cols in [2, 17, 32] {
        assert!(all.contains(&format!(
            "bankfree_transpose_t32_r8_e2_v2_pad0_thin_w{cols}("
        )));
    }
    let one = ok(&[&args[..], &["--width", "17"]].concat());
    assert_eq!(one.matches("__global__").count(), 1);
    assert!(one.contains("constexpr bf_index cols = 17;"));
}

#[test]
fn bad_input_exits_2_with_a_message() {
    let cases: &[&[&str]] = &[
        &["gen", "--tile", "48"],
        &["gen", "--strategy", "padd"],
        &["gen", "--width", "5"],
        &[
            "gen",
            "--form",
            "thin",
            "--elem-bytes",
            "1",
            "--strategy",
            "pad",
            "--width",
            "41",
        ],
        &["gen", "--elem-bytes", "6"],
        &["gen", "--block-rows", "3"],
        &[
            "gen",
            "--tile",
            "8",
            "--strategy",
            "pad",
            "--block-rows",
            "8",
        ],
        &[
            "gen",
            "--tile",
            "64",
            "--elem-bytes",
            "64",
            "--strategy",
            "none",
        ],
        &["banks", "--model", "fermi"],
        &["access", "--elem-bytes", "3", "--index", "lane"],
        &["access", "--elem-bytes", "4", "--index", "lane +"],
        &["access", "--elem-bytes", "4", "--index", "x"],
        &["access", "--elem-bytes", "4", "--index", "lane - 1"],
        &["access", "--elem-bytes", "4", "--index", "lane / 0"],
        &[
            "access",
            "--elem-bytes",
            "4",
            "--index",
            "9223372036854775807 * lane",
        ],
        &[
            "access",
            "--elem-bytes",
            "4",
            "--index",
            "lane",
            "--lanes",
            "33",
        ],
        &["occupancy", "--arch", "sm_99", "--threads", "256"],
        &["occupancy", "--arch", "sm_90", "--threads", "4096"],
        &["frobnicate"],
        &["gen", "--tile"],
        &[],
    ];
    for args in cases {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(err.len() > 20, "{args:?}: {err}");
    }
    let o = run(&[
        "gen",
        "--tile",
        "8",
        "--strategy",
        "pad",
        "--block-rows",
        "8",
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("use `strategy = swizzle`"));
}
