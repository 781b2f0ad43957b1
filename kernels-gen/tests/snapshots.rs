//! Snapshots of the emitted CUDA C: any change to generated code shows in review.

use bankfree_gen::{emit, Kernel, Strategy, TransposeSpec};

fn c(tile: u32, elem_bytes: u32, strategy: &str) -> String {
    let strategy: Strategy = strategy.parse().expect("valid strategy");
    emit(
        &Kernel::build(TransposeSpec::new(tile, elem_bytes, strategy).expect("valid"))
            .expect("builds"),
    )
}

#[test]
fn pad_f32() {
    insta::assert_snapshot!(c(32, 4, "pad"));
}

#[test]
fn swizzle_f32() {
    insta::assert_snapshot!(c(32, 4, "swizzle"));
}

#[test]
fn rotate_u8() {
    insta::assert_snapshot!(c(32, 1, "swizzle(rotate)"));
}

#[test]
fn naive_f64() {
    insta::assert_snapshot!(c(32, 8, "naive"));
}

#[test]
fn pad_float3_word_planar() {
    insta::assert_snapshot!(c(32, 12, "pad"));
}

#[test]
fn swizzle_uint4_tile64_dynamic_shared() {
    insta::assert_snapshot!(c(64, 16, "swizzle"));
}

/// A `vec` kernel: `vec x vec` blocks moved as vectors and transposed in registers.
fn cv(tile: u32, elem: u32, strategy: &str, rows: u32, vec: u32) -> String {
    let spec = TransposeSpec::new(tile, elem, strategy.parse().expect("strategy"))
        .and_then(|s| s.with_block_rows(rows))
        .and_then(|s| s.with_vec(vec))
        .expect("valid spec");
    emit(&Kernel::build(spec).expect("builds"))
}

#[test]
fn pad_u8_vec4() {
    insta::assert_snapshot!(cv(32, 1, "pad", 8, 4));
}

#[test]
fn swizzle_f32_vec2_16_rows() {
    insta::assert_snapshot!(cv(32, 4, "swizzle", 16, 2));
}

#[test]
fn small_u8_gathered_vectors() {
    let spec = TransposeSpec::small(1).expect("valid");
    insta::assert_snapshot!(emit(&Kernel::build(spec).expect("builds")));
}

#[test]
fn strip_f16_gathered_vectors() {
    let spec = TransposeSpec::strip(2).expect("valid");
    insta::assert_snapshot!(emit(&Kernel::build(spec).expect("builds")));
}

#[test]
fn small_float3_word_by_word() {
    let spec = TransposeSpec::small(12).expect("valid");
    insta::assert_snapshot!(emit(&Kernel::build(spec).expect("builds")));
}
