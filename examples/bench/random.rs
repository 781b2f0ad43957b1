//! `bench --random N --seed S` (or `--shape`, `--ladder`): drawn or given cases per
//! class, each timed like a bench case (the attribute's defaults only), and a table
//! per class.

use super::{case, draw, err, Opts, Res, Row, Words, BATCH, F3, ROUNDS};
use bankfree::cudarc::driver::{CudaContext, CudaStream};
use bankfree::runtime::probe;
use std::sync::Arc;

/// [`case`] for a drawn element size, with a plain type of that size.
fn drawn(opts: &Opts, stream: &Arc<CudaStream>, c: &draw::Case, rows: &mut Vec<Row>) -> Res<()> {
    let (name, shape) = (c.name(), c.shape);
    match c.elem_bytes {
        1 => case(opts, stream, None, &name, shape, |x| x as u8, rows),
        2 => case(opts, stream, None, &name, shape, |x| x as u16, rows),
        4 => case(opts, stream, None, &name, shape, |x| x as u32, rows),
        8 => case(opts, stream, None, &name, shape, |x| x, rows),
        12 => case(
            opts,
            stream,
            None,
            &name,
            shape,
            |x| F3([x as u32, (x >> 20) as u32, (x >> 40) as u32]),
            rows,
        ),
        16 => case(opts, stream, None, &name, shape, u128::from, rows),
        20 => case(opts, stream, None, &name, shape, Words::<5>::of, rows),
        24 => case(opts, stream, None, &name, shape, Words::<6>::of, rows),
        28 => case(opts, stream, None, &name, shape, Words::<7>::of, rows),
        32 => case(opts, stream, None, &name, shape, Words::<8>::of, rows),
        36 => case(opts, stream, None, &name, shape, Words::<9>::of, rows),
        40 => case(opts, stream, None, &name, shape, Words::<10>::of, rows),
        44 => case(opts, stream, None, &name, shape, Words::<11>::of, rows),
        48 => case(opts, stream, None, &name, shape, Words::<12>::of, rows),
        52 => case(opts, stream, None, &name, shape, Words::<13>::of, rows),
        56 => case(opts, stream, None, &name, shape, Words::<14>::of, rows),
        60 => case(opts, stream, None, &name, shape, Words::<15>::of, rows),
        64 => case(opts, stream, None, &name, shape, Words::<16>::of, rows),
        e => Err(format!("no element type of {e} bytes in the bench")),
    }
}

/// `--random N --seed S`: N drawn cases per class, a table per class.
pub fn run(opts: &Opts, n: usize, seed: u64, shapes: Option<String>) -> Res<()> {
    let p = probe().map_err(err)?;
    let stream = CudaContext::new(0).map_err(err)?.default_stream();
    let mut rng = draw::Rng::new(seed);
    let mut all = Vec::new();
    let what = if opts.ladder {
        "--ladder".to_string()
    } else if !opts.given.is_empty() {
        "--shape".to_string()
    } else {
        format!("--random {n} --seed {seed}")
    };
    println!(
        "{}; {what}; ratio = memcpy time / time (median of {ROUNDS} interleaved rounds of {BATCH} calls)",
        super::common::gpu_line(&p)
    );
    for class in draw::CLASSES {
        let cases = if !opts.given.is_empty() {
            let given: Vec<draw::Case> = opts
                .given
                .iter()
                .filter(|c| c.class == class)
                .copied()
                .collect();
            if given.is_empty() {
                continue;
            }
            given
        } else if opts.ladder {
            if class != draw::Class::Batch {
                continue;
            }
            draw::ladder()
        } else {
            draw::draw(&mut rng, class, n)
        };
        println!("\n{} (target >= {:.2})", class.name(), class.target());
        println!(
            "{:<28} {:>9} {:>8} {:>8}",
            "case", "memcpy ms", "pad", "swizzle"
        );
        let mut ratios: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        for c in &cases {
            let mut rows = Vec::new();
            drawn(opts, &stream, c, &mut rows)?;
            let ratio = |what: &str| rows.iter().find(|r| r.what.contains(what)).map(|r| r.ratio);
            let (pad, swz) = (ratio("pad (attribute"), ratio("swizzle (attribute"));
            println!(
                "{:<28} {:>9.4} {:>8.3} {:>8.3}",
                c.name(),
                rows[0].ms,
                pad.unwrap_or(f64::NAN),
                swz.unwrap_or(f64::NAN)
            );
            for r in rows.iter().filter(|r| r.what.starts_with("alt ")) {
                println!("    {:<40} {:>8.3}", &r.what[4..], r.ratio);
            }
            ratios[0].extend(pad);
            ratios[1].extend(swz);
            all.push(*c);
        }
        for (what, v) in ["pad", "swizzle"].iter().zip(&ratios) {
            let (median, worst) = draw::median_worst(v);
            println!(
                "{what:<8} median {median:.3}, worst {worst:.3}: {}",
                if worst >= class.target() {
                    "meets the target"
                } else {
                    "below the target"
                }
            );
        }
    }
    if let Some(path) = shapes {
        let items: Vec<String> = all
            .iter()
            .map(|c| {
                format!(
                    "{{\"case\":\"{}\",\"class\":\"{}\",\"elem_bytes\":{},\"batch\":{},\"rows\":{},\"cols\":{}}}",
                    c.name(),
                    c.class.name(),
                    c.elem_bytes,
                    c.shape.batch,
                    c.shape.rows,
                    c.shape.cols
                )
            })
            .collect();
        std::fs::write(&path, format!("[{}]\n", items.join(",")))
            .map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    Ok(())
}
