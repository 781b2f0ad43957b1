//! `bankfree-gen permute`, as a person or a script would call it.

mod common;

use common::cli::{json, ok, run};

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
    // The launch's arguments after `src` and `dst`: batch, rows, cols, src_ld,
    // dst_ld and the batch strides, then the outer axis's extent and strides.
    let launch_args: Vec<u64> = v["args"]
        .as_array()
        .expect("args is an array")
        .iter()
        .filter_map(|a| a.as_u64())
        .collect();
    assert_eq!(launch_args[..7], [64, 256, 3136, 3136, 256, 802816, 802816]);
    // `gen` prints the CUDA C of that same kernel, with a parameter per argument.
    let mut gen = args.to_vec();
    gen.push("gen");
    let c = ok(&gen);
    assert!(c.contains(&format!("{kernel}(")), "{c}");
    let params = c
        .split(&format!("{kernel}("))
        .nth(1)
        .and_then(|r| r.split(')').next());
    let commas = params.map_or(0, |p| p.matches(',').count());
    assert_eq!(commas + 1, 2 + launch_args.len(), "{params:?}");

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
    // A squat call (rows off 16-byte vectors, which the interleave kernel
    // needs): its height's entry point, and the grid the runtime caps.
    let text = ok(&[
        "permute",
        "--dims",
        "3,8294401",
        "--perm",
        "1,0",
        "--elem-bytes",
        "1",
    ]);
    assert!(
        text.contains(
            "entry point: bankfree_transpose_t32_r8_e1_v4_pad0_squat_w3 (this call's height)"
        ),
        "{text}"
    );
    assert!(
        text.contains("caps grid.x at 16 blocks an SM, 2112 on"),
        "{text}"
    );
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
