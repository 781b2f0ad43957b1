//! The `bankfree-gen` binary, as a person or a script would call it.

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bankfree-gen"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("utf-8")
}

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&ok(args)).expect("valid JSON")
}

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

#[test]
fn permute_shows_the_plan_and_its_kernel() {
    let args = [
        "permute",
        "--dims",
        "64,256,56,56",
        "--perm",
        "0,2,3,1",
        "--elem-bytes",
        "2",
    ];
    let text = ok(&args);
    // H and W merge: three axes, a batch of 64 transposes of 256 x 3136.
    assert!(text.contains("plan: transpose 256 x 3136"), "{text}");
    assert!(text.contains("batch 64 over 1 axes"), "{text}");
    assert!(text.contains("banks (hopper): conflict-free"), "{text}");
    let mut with_json = args.to_vec();
    with_json.push("--json");
    let v = json(&with_json);
    assert_eq!(v["conflict_free"], true);
    assert_eq!(v["plan"], "transpose");
    assert_eq!(v["axes"].as_array().map(Vec::len), Some(3));
    let kernel = v["kernel"].as_str().expect("kernel is a string");
    assert!(kernel.starts_with("bankfree_transpose_"), "{kernel}");
    assert!(v["candidates"]
        .as_array()
        .is_some_and(|c| c.iter().any(|k| k == kernel)));
    assert_eq!(v["launch"]["grid"][1], 64);
    // `gen` prints the CUDA C of that same kernel.
    let mut gen = args.to_vec();
    gen.push("gen");
    let c = ok(&gen);
    assert!(c.contains(&format!("{kernel}(")), "{c}");

    // [B, S, H, D] -> [B, H, S, D]: D stays innermost, a copy with outer axes.
    let v = json(&[
        "permute",
        "--dims",
        "8,2048,32,128",
        "--perm",
        "0,2,1,3",
        "--elem-bytes",
        "2",
        "--json",
    ]);
    assert_eq!(v["plan"], "copy");
    assert!(v["kernel"].as_str().is_some_and(|k| k.contains("copy_o1")));
    // A zero extent: nothing to move, still one object with the two fields.
    let v = json(&["permute", "--dims", "4,0,5", "--perm", "2,1,0", "--json"]);
    assert_eq!(
        (v["plan"].as_str(), v["kernel"].as_str()),
        (Some("empty"), Some("none"))
    );
    assert_eq!(v["conflict_free"], true);
    // Strides: a view of every other source row.
    let v = json(&[
        "permute",
        "--dims",
        "40,50",
        "--perm",
        "1,0",
        "--src-strides",
        "100,1",
        "--json",
    ]);
    assert_eq!(v["shape"]["src_ld"], 100);
}

#[test]
fn permute_names_the_width_entry_and_the_split_twin() {
    // 8 MB of 1-byte rows of 28: the width's entry point, and the split twin
    // on GPUs that hold twice the call's tiles at once.
    let args = [
        "permute",
        "--dims",
        "285715,28",
        "--perm",
        "1,0",
        "--elem-bytes",
        "1",
    ];
    let text = ok(&args);
    assert!(
        text.contains("entry point: bankfree_transpose_t32_r8_e1_v4_pad0_thin_w28 "),
        "{text}"
    );
    assert!(text.contains("_thin_split_w28, whose tiles"), "{text}");
    let mut with_json = args.to_vec();
    with_json.push("--json");
    let v = json(&with_json);
    assert_eq!(v["entry"], "bankfree_transpose_t32_r8_e1_v4_pad0_thin_w28");
    assert_eq!(
        v["split"]["entry"],
        "bankfree_transpose_t32_r8_e1_v4_pad0_thin_split_w28"
    );
    let from = v["split"]["from_sms"].as_u64().expect("an SM count");
    // An H100 (132 SMs) takes the twin for this call, and ten times the rows
    // would need more SMs than it has.
    assert!((2..=132).contains(&from), "{from}");
    let v = json(&[
        "permute",
        "--dims",
        "2857150,28",
        "--perm",
        "1,0",
        "--elem-bytes",
        "1",
        "--json",
    ]);
    assert!(
        v["split"]["from_sms"].as_u64().is_some_and(|n| n > 132),
        "{v}"
    );
    // Below the split widths, and for other kernels, no twin.
    let v = json(&[
        "permute",
        "--dims",
        "400001,20",
        "--perm",
        "1,0",
        "--elem-bytes",
        "1",
        "--json",
    ]);
    assert!(v["split"].is_null(), "{v}");
    assert_eq!(v["entry"], "bankfree_transpose_t32_r8_e1_v4_pad0_thin_w20");
    let v = json(&[
        "permute",
        "--dims",
        "64,256,56,56",
        "--perm",
        "0,2,3,1",
        "--json",
    ]);
    assert!(v["split"].is_null() && v["entry"] == v["kernel"], "{v}");
}

#[test]
fn permute_bad_input_exits_2_naming_the_problem() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["permute", "--dims", "4,5", "--perm", "0,0"],
            "not a permutation",
        ),
        (
            &["permute", "--dims", "4,5", "--perm", "0,2"],
            "not a permutation",
        ),
        (
            &["permute", "--dims", "4,5,6", "--perm", "1,0"],
            "has 2 entries but dims has 3",
        ),
        (&["permute", "--dims", "4,x", "--perm", "1,0"], "--dims"),
        (&["permute", "--dims", "4,-5", "--perm", "1,0"], "--dims"),
        (&["permute", "--perm", "1,0"], "--dims"),
        (
            &[
                "permute",
                "--dims",
                "1,1,1,1,1,1,1,1,1",
                "--perm",
                "0,1,2,3,4,5,6,7,8",
            ],
            "rank 9",
        ),
        (
            &[
                "permute",
                "--dims",
                "4,5",
                "--perm",
                "1,0",
                "--elem-bytes",
                "3",
            ],
            "element size 3",
        ),
        (
            &[
                "permute",
                "--dims",
                "4,5",
                "--perm",
                "1,0",
                "--strategy",
                "naive",
            ],
            "pad or swizzle",
        ),
        (
            &[
                "permute",
                "--dims",
                "4,5",
                "--perm",
                "1,0",
                "--src-strides",
                "1",
            ],
            "src_strides has 1",
        ),
        (
            &[
                "permute",
                "--dims",
                "4,5",
                "--perm",
                "1,0",
                "--dst-strides",
                "1,1",
            ],
            "put two elements",
        ),
    ];
    for (args, says) in cases {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
