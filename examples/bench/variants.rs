//! The kernels the benchmark times on a case: each strategy, the vector
//! variants (every tile and thread-row shape with `--sweep`), the other forms,
//! and the attribute's list, each kernel alone (`--alternatives`).

use super::{err, Res};
use bankfree::gen::kernel::geometry::allowed_vecs;
use bankfree::gen::kernel::grid::ALL_STRATEGIES;
use bankfree::gen::select::choice::auto_kernels;
use bankfree::gen::{Form, Kernel, Strategy, TransposeSpec};

/// The kernels a case times: each strategy at tile 32 with one element per step,
/// then the vector variants; `sweep` adds other tiles and thread rows.
pub fn variants(e: u32, sweep: bool) -> Res<Vec<(String, TransposeSpec)>> {
    let mut out = Vec::new();
    for strategy in ALL_STRATEGIES {
        out.push((
            format!("bankfree {strategy}"),
            TransposeSpec::new(32, e, strategy).map_err(err)?,
        ));
    }
    let shapes: &[(u32, u32)] = if sweep {
        &[
            (16, 4),
            (16, 8),
            (16, 16),
            (32, 2),
            (32, 4),
            (32, 8),
            (32, 16),
            (64, 2),
            (64, 4),
            (64, 8),
            (64, 16),
        ]
    } else {
        &[(32, 8)]
    };
    let vecs: Vec<u32> = if sweep {
        allowed_vecs(e)
    } else {
        allowed_vecs(e).into_iter().filter(|&v| v > 1).collect()
    };
    for vec in vecs {
        for &(tile, rows) in shapes {
            for strategy in [Strategy::Pad(None), Strategy::Xor] {
                let spec = TransposeSpec::new(tile, e, strategy)
                    .and_then(|s| s.with_block_rows(rows))
                    .and_then(|s| s.with_vec(vec))
                    .map_err(err)?;
                let s = if strategy == Strategy::Xor {
                    "swizzle"
                } else {
                    "pad"
                };
                out.push((format!("bankfree {s} t{tile}x{rows} v{vec}"), spec));
            }
        }
    }
    // The other forms: skew tiles (every shape), tall and wide chunks (narrow shapes).
    for &(tile, rows) in &[(32, 8), (64, 8), (32, 16), (64, 16)][..if sweep { 4 } else { 2 }] {
        for strategy in [Strategy::Pad(None), Strategy::Xor] {
            if let Ok(spec) = TransposeSpec::new(tile, e, strategy)
                .and_then(|s| s.with_block_rows(rows))
                .and_then(|s| s.with_form(Form::Skew))
            {
                out.push((format!("bankfree {strategy} skew t{tile}x{rows}"), spec));
            }
        }
    }
    for form in [Form::Tall, Form::Wide] {
        if let Ok(spec) =
            TransposeSpec::new(32, e, Strategy::Pad(None)).and_then(|s| s.with_form(form))
        {
            out.push((format!("bankfree pad {form}"), spec));
        }
    }
    out.push((
        "bankfree small".into(),
        TransposeSpec::small(e).map_err(err)?,
    ));
    Ok(out)
}

/// Every kernel the attribute's `swizzle` list holds, each to be timed alone.
pub fn alternatives(e: u32) -> Res<Vec<(String, TransposeSpec)>> {
    let spec = TransposeSpec::new(32, e, Strategy::Xor).map_err(err)?;
    Ok(auto_kernels(&Kernel::build(spec).map_err(err)?)
        .iter()
        .map(|k| {
            let name = k.entry_name();
            let short = name.trim_start_matches("bankfree_transpose_").to_string();
            (format!("alt {short}"), *k.spec())
        })
        .collect())
}
