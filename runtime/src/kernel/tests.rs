//! The kernel sources' twins and entry points, without a GPU.

use super::*;
use bankfree_gen::{select, Strategy, TransposeSpec};

fn kernel() -> KernelSource {
    let spec = TransposeSpec::new(32, 4, Strategy::Xor).expect("valid");
    KernelSource::from_kernel(&Kernel::build(spec).expect("builds"))
}

#[test]
#[allow(unsafe_code)]
fn one_entry_name_with_two_sources_is_two_kernels() {
    let k = kernel();
    // SAFETY: compared only, never launched.
    let other = unsafe {
        KernelSource::from_parts(
            k.entry(),
            &format!("{}\n// edited", k.source()),
            *k.geometry(),
            k.shared_bytes(),
        )
    };
    assert_eq!(other.entry(), k.entry());
    assert_ne!(other.digest(), k.digest(), "the memory cache's key");
    assert_ne!(other, k);
    assert_eq!(kernel(), k);
}

#[test]
fn the_64_bit_build_is_made_once_and_shared_by_clones() {
    let k = kernel();
    let wide = k.index64();
    assert!(wide.is_index64() && !k.is_index64());
    assert_eq!(wide.entry(), format!("{}{INDEX64_SUFFIX}", k.entry()));
    assert!(wide
        .source()
        .starts_with(&format!("#define {INDEX64_DEFINE}\n")));
    assert!(std::ptr::eq(wide, k.index64()));
    assert!(std::ptr::eq(wide, k.clone().index64()));
    assert!(std::ptr::eq(wide.index64(), wide));
}

#[test]
#[allow(unsafe_code)]
fn each_class_runs_the_tile_order_its_rule_gives() {
    let vec = KernelSource::from_kernel(
        &select::choice::fast_kernel(&TransposeSpec::new(32, 4, Strategy::Xor).expect("valid"))
            .expect("f32 has a vector kernel"),
    );
    // The H100 class runs the kernel as built, the H200 class its twin (made
    // once, shared by clones), whose 64-bit build is its own.
    assert!(std::ptr::eq(vec.for_class(GpuClass::H100), &vec));
    let down = vec.for_class(GpuClass::H200);
    assert_eq!(down.entry(), format!("{}_tc", vec.entry()));
    assert_eq!(down.geometry(), vec.geometry());
    assert!(down.source().contains("tile_c = t / tiles_y"));
    assert!(std::ptr::eq(down, vec.clone().for_class(GpuClass::H200)));
    assert!(std::ptr::eq(down.for_class(GpuClass::H200), down));
    assert!(down.index64().entry().ends_with("_tc_i64"));
    assert!(std::ptr::eq(
        vec.index64().for_class(GpuClass::H200),
        vec.index64()
    ));
    // Kernels the rule keeps in row order, one built in the other order, and a
    // source vouched for by hand run as they are on both classes.
    let small = KernelSource::from_kernel(
        &Kernel::build(TransposeSpec::small(4).expect("valid")).expect("builds"),
    );
    let skew_of = |e: u32| {
        let spec = TransposeSpec::new(32, e, Strategy::Xor).expect("valid");
        let k = select::choice::shape_kernels(&spec)
            .into_iter()
            .find(|k| k.spec().geometry.form == bankfree_gen::Form::Skew)
            .expect("a skew kernel");
        KernelSource::from_kernel(&k)
    };
    // The 8-byte skew tile is 64 wide on both classes, and goes down the
    // columns on the H200 class.
    let skew = skew_of(8);
    assert_eq!(skew.geometry().tile, 64);
    assert!(std::ptr::eq(skew.for_class(GpuClass::H100), &skew));
    let skew_down = skew.for_class(GpuClass::H200);
    assert_eq!(skew_down.entry(), format!("{}_tc", skew.entry()));
    assert_eq!(skew_down.geometry(), skew.geometry());
    let built = Kernel::build(TransposeSpec::new(32, 8, Strategy::Xor).expect("valid"))
        .and_then(|k| k.with_order(TileOrder::Columns))
        .expect("builds");
    let columns = KernelSource::from_kernel(&built);
    let k = kernel();
    // SAFETY: compared only, never launched.
    let vouched = unsafe {
        KernelSource::from_parts(
            vec.entry(),
            vec.source(),
            *vec.geometry(),
            vec.shared_bytes(),
        )
    };
    for s in [&small, &columns, &vouched] {
        for class in GpuClass::ALL {
            assert!(std::ptr::eq(s.for_class(class), s), "{} {class}", s.entry());
        }
    }
    // The scalar f32 tile keeps row order; the 8-byte one goes down the columns.
    assert!(std::ptr::eq(k.for_class(GpuClass::H200), &k));
    let f64_tile = KernelSource::from_kernel(
        &Kernel::build(TransposeSpec::new(32, 8, Strategy::Xor).expect("valid")).expect("builds"),
    );
    assert!(f64_tile.for_class(GpuClass::H200).entry().ends_with("_tc"));
    // The 4-byte skew tile is 64 wide as built and on the H100 class, 32 wide
    // and down the columns on the H200 class; its twin has its own 64-bit
    // build and no twin.
    let f32_skew = skew_of(4);
    assert_eq!(f32_skew.geometry().tile, 64);
    assert!(std::ptr::eq(f32_skew.for_class(GpuClass::H100), &f32_skew));
    let narrow = f32_skew.for_class(GpuClass::H200);
    assert_eq!(narrow.geometry().tile, 32);
    assert_eq!(narrow.geometry().form, bankfree_gen::Form::Skew);
    assert!(narrow.entry().contains("_t32_"), "{}", narrow.entry());
    assert!(narrow.entry().ends_with("_tc"), "{}", narrow.entry());
    assert!(std::ptr::eq(
        narrow,
        f32_skew.clone().for_class(GpuClass::H200)
    ));
    assert!(std::ptr::eq(narrow.for_class(GpuClass::H200), narrow));
    assert!(std::ptr::eq(
        f32_skew.index64().for_class(GpuClass::H200),
        f32_skew.index64()
    ));
}

#[test]
fn a_thin_kernel_runs_the_entry_point_of_the_calls_width() {
    let thin = KernelSource::from_kernel(
        &Kernel::build(TransposeSpec::thin(1).expect("valid")).expect("builds"),
    );
    let entries = thin.entries();
    assert_eq!(entries.len(), 39);
    for e in &entries {
        assert!(thin.source().contains(&format!("{e}(")), "{e}");
    }
    assert!(thin.index64().entries()[0].ends_with("_w2_i64"));
    let w11 = thin.for_width(11);
    assert_eq!(w11.entries(), [w11.entry()]);
    assert_eq!(w11.entry(), format!("{}_w11", thin.entry()));
    assert!(w11.source().contains(&format!("{}(", w11.entry())));
    assert!(w11.shared_bytes() < thin.shared_bytes(), "its own stage");
    assert!(std::ptr::eq(w11, thin.clone().for_width(11)), "made once");
    assert!(std::ptr::eq(w11.for_width(11), w11));
    assert_eq!(w11.for_width(13).entry(), format!("{}_w13", thin.entry()));
    // The 64-bit build runs the width's 64-bit build.
    let wide = thin.index64().for_width(11);
    assert!(wide.is_index64());
    assert_eq!(
        wide.entry(),
        format!("{}_w11{INDEX64_SUFFIX}", thin.entry())
    );
    // Widths it does not take (the fit check refuses them) and other kernels.
    for cols in [0, 41, 64, u64::MAX] {
        assert!(std::ptr::eq(thin.for_width(cols), &thin), "{cols}");
    }
    let k = kernel();
    assert!(std::ptr::eq(k.for_width(11), &k));
}

#[test]
fn a_thin_width_runs_its_split_twin_where_the_call_asks_for_it() {
    let thin = KernelSource::from_kernel(
        &Kernel::build(TransposeSpec::thin(1).expect("valid")).expect("builds"),
    );
    let w28 = thin.for_width(28);
    assert!(std::ptr::eq(w28.split_for(|_| false), w28));
    let split = w28.split_for(|k| k.width() == Some(28));
    assert_eq!(split.entry(), format!("{}_split_w28", thin.entry()));
    assert!(split.geometry().split);
    assert!(split.shared_bytes() < w28.shared_bytes(), "half the stage");
    assert!(std::ptr::eq(split, w28.split_for(|_| true)), "made once");
    // The 64-bit build's twin is the twin's 64-bit build.
    assert!(w28.index64().split_for(|_| true).is_index64());
    // A width the split kernel is not built for, and other kernels.
    let w12 = thin.for_width(12);
    assert!(std::ptr::eq(w12.split_for(|_| true), w12));
    let k = kernel();
    assert!(std::ptr::eq(k.split_for(|_| true), &k));
}
