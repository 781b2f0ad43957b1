//! The expansion: the chosen kernels as `static` variants, the launch glue, one doc
//! paragraph.

use crate::ast::{known_size, Item, Params};
use crate::attr::Args;
use crate::ctxt::Ctxt;
use bankfree_gen::check::refusal::SQUAT_HEIGHTS;
use bankfree_gen::check::verdict::Verdict;
use bankfree_gen::kernel::geometry::{all_elem_bytes, elem_bytes_ok, THIN_MAX_COLS};
use bankfree_gen::kernel::layout::Layout;
use bankfree_gen::select::choice::auto_kernels;
use bankfree_gen::{Form, Kernel, SpecError, Strategy, TransposeSpec, ELEM_SIZES};
use proc_macro2::TokenStream;
use quote::quote;
use std::fmt;

/// Why the attribute builds no kernel for an element size.
enum Refused {
    /// A spec field out of range (tile, block_rows, element size).
    Spec(SpecError),
    /// No layout of the strategy works for this element size.
    Strategy {
        strategy: Strategy,
        elem_bytes: u32,
        why: SpecError,
    },
    /// The analyzer found a bank conflict and `allow_conflicts` is not set.
    Conflict {
        strategy: Strategy,
        elem_bytes: u32,
        tile: u32,
        verdict: Verdict,
    },
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Spec(e) => e.fmt(f),
            Refused::Strategy {
                strategy,
                elem_bytes,
                why,
            } => write!(
                f,
                "strategy = {strategy} with {elem_bytes}-byte elements: {why}"
            ),
            Refused::Conflict {
                strategy,
                elem_bytes,
                tile,
                verdict,
            } => {
                write!(
                    f,
                    "strategy = {strategy} has bank conflicts with {elem_bytes}-byte elements at tile {tile}: {}",
                    verdict.text
                )?;
                f.write_str(
                    "; use `strategy = pad` or `strategy = swizzle` (proven conflict-free), \
                     or add `allow_conflicts` to build it anyway",
                )
            }
        }
    }
}

/// The kernel for one element size, or why there is none.
fn kernel_for(args: &Args, elem_bytes: u32) -> Result<(Kernel, Verdict), Refused> {
    let spec = TransposeSpec::new(args.tile, elem_bytes, args.strategy).map_err(Refused::Spec)?;
    let spec = match args.block_rows {
        Some((r, _)) => spec.with_block_rows(r).map_err(Refused::Spec)?,
        None => spec,
    };
    let k = Kernel::build(spec).map_err(|e| match e {
        SpecError::NoPad { .. }
        | SpecError::NoSwizzle { .. }
        | SpecError::SharedTooLarge { .. } => Refused::Strategy {
            strategy: args.strategy,
            elem_bytes,
            why: e,
        },
        other => Refused::Spec(other),
    })?;
    let verdict = k.verdict();
    if !verdict.conflict_free && !args.allow_conflicts {
        return Err(Refused::Conflict {
            strategy: args.strategy,
            elem_bytes,
            tile: args.tile,
            verdict,
        });
    }
    Ok((k, verdict))
}

/// The kernel as a `Variant` literal: its spec and layout (the runtime emits its
/// CUDA C on first use).
fn variant_tokens(k: &Kernel) -> TokenStream {
    let private = quote!(::bankfree::__private);
    let ident = |name: &str| syn::Ident::new(name, proc_macro2::Span::call_site());
    let form = ident(match k.spec().geometry.form {
        Form::Tile => "Tile",
        Form::Skew => "Skew",
        Form::Tall => "Tall",
        Form::Wide => "Wide",
        Form::Small => "Small",
        Form::Strip => "Strip",
        Form::Copy => "Copy",
        Form::Planar => "Planar",
        Form::Interleave => "Interleave",
        Form::Realign => "Realign",
        Form::Thin => "Thin",
        Form::Squat => "Squat",
        Form::Wordvec => "Wordvec",
    });
    let strategy = match k.spec().strategy {
        Strategy::Naive => quote!(Naive),
        Strategy::None => quote!(None),
        Strategy::Pad(None) => quote!(Pad(::core::option::Option::None)),
        Strategy::Pad(Some(n)) => quote!(Pad(::core::option::Option::Some(#n))),
        Strategy::Xor => quote!(Xor),
        Strategy::Rotate => quote!(Rotate),
    };
    let layout = match k.layout() {
        Layout::Direct => quote!(Direct),
        Layout::Pad(n) => quote!(Pad(#n)),
        Layout::Xor(z) => {
            let (b, m, s) = (z.b, z.m, z.s);
            quote!(Xor(#private::Swizzle { b: #b, m: #m, s: #s }))
        }
        Layout::Rotate => quote!(Rotate),
    };
    let g = &k.spec().geometry;
    let (tile, rows, elem, vec, split) = (g.tile, g.block_rows, g.elem_bytes, g.vec, g.split);
    quote! {
        #private::Variant {
            spec: #private::TransposeSpec {
                geometry: #private::Geometry {
                    form: #private::Form::#form,
                    tile: #tile,
                    block_rows: #rows,
                    elem_bytes: #elem,
                    vec: #vec,
                    split: #split,
                },
                strategy: #private::Strategy::#strategy,
            },
            layout: #private::Layout::#layout,
        }
    }
}

fn doc_line(k: &Kernel, v: &Verdict) -> String {
    format!(
        " bankfree: {}; bank analyzer (hopper): {}.",
        k.describe(),
        v.text
    )
}

/// The kernels for one element size, in the order the runtime tries them: with
/// `tile = auto` the generator's list ([`auto_kernels`]), else `k` alone; and their
/// doc lines.
fn with_fast(args: &Args, k: &Kernel, v: &Verdict) -> (Vec<TokenStream>, Vec<String>) {
    if !args.auto {
        return (vec![variant_tokens(k)], vec![doc_line(k, v)]);
    }
    let list = auto_kernels(k);
    let mut docs = Vec::new();
    for (i, x) in list.iter().enumerate() {
        let what = match (x.spec().geometry.form, x.spec().geometry.vec) {
            (Form::Tile, 1) if i + 1 == list.len() && i > 0 => " Otherwise it runs:".to_string(),
            (Form::Tile, 1) if i + 1 < list.len() => format!(
                " For matrices at least {t} x {t} it runs:",
                t = x.spec().geometry.tile
            ),
            (Form::Tile, 1) => " It runs:".to_string(),
            (Form::Tile, _) => {
                " Where the shape and pointers allow its vectors, it runs:".to_string()
            }
            (Form::Small, _) => " For batches of small matrices it runs:".to_string(),
            (Form::Strip, _) => " For matrices of a few rows it runs:".to_string(),
            (Form::Planar, _) => {
                " For matrices of a few columns whose destination rows start on 16 bytes it runs:"
                    .to_string()
            }
            (Form::Interleave, _) => {
                " For wide matrices of a few rows stored in 16-byte runs, whose destination is one run, it runs:"
                    .to_string()
            }
            (Form::Realign, _) => {
                " For shapes and pointers no vector kernel takes it runs:".to_string()
            }
            (Form::Thin, _) => {
                format!(" For matrices of 2 to {THIN_MAX_COLS} columns stored as one run it runs:")
            }
            (Form::Squat, _) => {
                format!(
                    " For wide matrices whose destination is one run ({SQUAT_HEIGHTS}) it runs:"
                )
            }
            (form, _) => format!(" For {form} shapes it runs:"),
        };
        docs.push(what);
        docs.push(doc_line(x, &x.verdict()));
    }
    (list.iter().map(variant_tokens).collect(), docs)
}

/// The function with its generated body; errors go to `cx`.
pub fn expand(cx: &Ctxt, args: &Args, item: &Item, p: &Params) -> TokenStream {
    let Item {
        attrs, vis, sig, ..
    } = item;
    let elem = &p.elem;
    let some = |present: bool, name: &str| -> TokenStream {
        let id = syn::Ident::new(name, proc_macro2::Span::call_site());
        if present {
            quote!(::core::option::Option::Some(#id))
        } else {
            quote!(::core::option::Option::None)
        }
    };
    let batch = if p.batch {
        quote!(batch)
    } else {
        quote!(1usize)
    };
    let (src_ld, dst_ld) = (some(p.src_ld, "src_ld"), some(p.dst_ld, "dst_ld"));
    let stream = stream_arg(p.stream);

    let (table, doc, check, item_check) = match known_size(elem) {
        Some(bytes) => match kernel_for(args, bytes) {
            Ok((k, v)) => {
                let (variants, docs) = with_fast(args, &k, &v);
                let size = bytes as usize;
                let table = quote! {
                    static KERNELS: [::bankfree::__private::Entry; 1] =
                        [::bankfree::__private::Entry::new(#size, &[#(#variants),*])];
                };
                (table, docs, quote!(), quote!())
            }
            Err(why) => {
                if args.strategy_at.is_empty() {
                    cx.error_at(proc_macro2::Span::call_site(), why);
                } else {
                    cx.error(&args.strategy_at, why);
                }
                return quote!();
            }
        },
        None => {
            // The size is only known to the compiler: one entry per supported size,
            // and a compile-time check of the actual one.
            let mut rows = Vec::new();
            let mut problems = Vec::new();
            let mut docs = Vec::new();
            for bytes in all_elem_bytes() {
                let b = bytes as usize;
                match kernel_for(args, bytes) {
                    Ok((k, v)) => {
                        let (variants, d) = with_fast(args, &k, &v);
                        docs.extend(d);
                        rows.push(quote!(::bankfree::__private::Entry::new(#b, &[#(#variants),*])));
                        problems.push(quote!((#b, "")));
                    }
                    Err(why) => {
                        let msg = why.to_string();
                        problems.push(quote!((#b, #msg)));
                    }
                }
            }
            // Sizes no kernel exists for get their own message, naming the size.
            for b in 1..=64usize {
                if !elem_bytes_ok(b as u32) {
                    let msg = format!(
                        "bankfree: element size {b} bytes is not supported: use an element of {ELEM_SIZES} \
                         (pad the type, or split it into planes)"
                    );
                    problems.push(quote!((#b, #msg)));
                }
            }
            let n = rows.len();
            let unsupported = format!(
                "bankfree: the element type is larger than 64 bytes, the largest supported: \
                 use an element of {ELEM_SIZES}"
            );
            let table =
                quote! { static KERNELS: [::bankfree::__private::Entry; #n] = [#(#rows),*]; };
            let checked = quote! {
                ::bankfree::__private::check(&[#(#problems),*], ::core::mem::size_of::<#elem>(), #unsupported)
            };
            // A concrete type is checked by an item-level const (evaluated by `cargo
            // check` too); a generic one when the function is instantiated.
            let (check, item_check) = if sig.generics.type_params().next().is_some() {
                (quote!(const { #checked };), quote!())
            } else {
                (quote!(), quote!(const _: () = #checked;))
            };
            if docs.len() > 1 {
                docs.insert(
                    0,
                    format!(
                        " bankfree: one kernel per element size ({} sizes):",
                        docs.len()
                    ),
                );
            }
            (table, docs, quote!(#check), item_check)
        }
    };
    let doc = doc.iter().map(|d| quote!(#[doc = #d]));
    // `tile = auto` runs what the planner picks, a gather included; a named
    // tile runs its kernel.
    let run = if args.auto {
        quote!(::bankfree::__private::transpose_auto::<#elem, _, _>)
    } else {
        quote!(::bankfree::runtime::transpose_first::<#elem, _, _>)
    };
    quote! {
        #item_check
        #(#attrs)*
        #[doc = ""]
        #(#doc)*
        // The attribute defines the parameter list (up to eight).
        #[allow(clippy::too_many_arguments)]
        #vis #sig {
            fn __bankfree_element<E: ::bankfree::Element>() {}
            __bankfree_element::<#elem>();
            #table
            #check
            let kernels = ::bankfree::__private::pick(&KERNELS, ::core::mem::size_of::<#elem>())?;
            let shape = ::bankfree::__private::shape(#batch, rows, cols, #src_ld, #dst_ld);
            #run(kernels, src, dst, &shape, #stream)
        }
    }
}

/// The glue's `Option<&CudaStream>`: the `stream` parameter where the signature has
/// one.
pub fn stream_arg(present: bool) -> TokenStream {
    if present {
        quote!(::core::option::Option::Some(::core::borrow::Borrow::<
            ::bankfree::cudarc::driver::CudaStream,
        >::borrow(stream)))
    } else {
        quote!(::core::option::Option::None)
    }
}

/// When there are errors: the signature with a body that type-checks, so callers
/// get no cascade of errors.
pub fn fallback(item: &Item) -> TokenStream {
    fallback_named(item, "#[tiled_transpose]")
}

/// [`fallback`] for the attribute `name`.
pub fn fallback_named(item: &Item, name: &str) -> TokenStream {
    let msg = format!("{name} reported errors");
    let Item {
        attrs, vis, sig, ..
    } = item;
    let mut sig = sig.clone();
    sig.constness = None;
    sig.asyncness = None;
    sig.unsafety = None;
    sig.abi = None;
    quote! {
        #(#attrs)*
        #[allow(unused_variables, unreachable_code, clippy::diverging_sub_expression)]
        #vis #sig {
            ::core::unimplemented!(#msg)
        }
    }
}
