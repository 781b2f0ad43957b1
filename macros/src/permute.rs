//! `#[tiled_permute(perm = [...], strategy = pad | swizzle)]`: parse, validate (every
//! error at once, spanned), expand into a call of the runtime's planned permute.

use crate::ast::{
    check_header, check_required, named_params, slice_elem, stream_or_unexpected, Item,
};
use crate::attr;
use crate::ctxt::Ctxt;
use bankfree_gen::select::permute::{check_perm, MAX_RANK};
use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::{Expr, Lit, Meta, Type};

const EXPECTED: &str = "expected `perm = [..]` and optionally `strategy = pad | swizzle`";
const NAMES: &str = "src, dst, dims and optionally src_strides, dst_strides, stream";

/// The attribute's arguments.
struct Args {
    perm: Option<(Vec<usize>, TokenStream)>,
    /// `true` for `pad`, `false` for `swizzle` (the default).
    pad: bool,
}

fn parse_args(cx: &Ctxt, attr: TokenStream) -> Args {
    let mut args = Args {
        perm: None,
        pad: false,
    };
    let mut seen = Vec::new();
    for (name, meta) in attr::metas(cx, attr, EXPECTED) {
        seen.push(name.clone());
        match (name.as_str(), &meta) {
            ("perm", Meta::NameValue(nv)) => args.perm = perm(cx, &nv.value),
            ("strategy", Meta::NameValue(nv)) => {
                match nv.value.to_token_stream().to_string().as_str() {
                    "pad" => args.pad = true,
                    "swizzle" => args.pad = false,
                    other => cx.error(
                        &nv.value,
                        format!("strategy `{other}`: a permute's tiles take `pad` or `swizzle`"),
                    ),
                }
            }
            ("perm" | "strategy", _) => cx.error(
                &meta,
                format!("`{name}` needs a value, as in `{name} = ...`"),
            ),
            _ => cx.error(
                meta.path(),
                format!("unknown argument `{name}`; {EXPECTED}"),
            ),
        }
    }
    if args.perm.is_none() && !seen.iter().any(|s| s == "perm") {
        cx.error_at(
            Span::call_site(),
            "missing `perm = [..]`: output axis i is input axis perm[i], as in `perm = [0, 2, 3, 1]`",
        );
    }
    args
}

/// `[0, 2, 3, 1]`: a permutation of `0..N`, `N` from 1 to 8.
fn perm(cx: &Ctxt, e: &Expr) -> Option<(Vec<usize>, TokenStream)> {
    let Expr::Array(a) = e else {
        cx.error(
            e,
            "`perm` takes an array of axes, as in `perm = [0, 2, 3, 1]`",
        );
        return None;
    };
    let mut out = Vec::new();
    for x in &a.elems {
        match x {
            Expr::Lit(l) => match &l.lit {
                Lit::Int(i) => match i.base10_parse::<usize>() {
                    Ok(v) => out.push(v),
                    Err(_) => cx.error(x, "an axis must be a small integer"),
                },
                _ => cx.error(x, "an axis must be an integer literal"),
            },
            _ => cx.error(x, "an axis must be an integer literal"),
        }
    }
    let n = out.len();
    if n == 0 || n > MAX_RANK {
        cx.error(
            e,
            format!("`perm` has {n} axes: a permute takes 1 to {MAX_RANK}"),
        );
        return None;
    }
    if let Err(why) = check_perm(&out) {
        cx.error(e, why);
        return None;
    }
    Some((out, e.to_token_stream()))
}

/// `[usize; N]` with a literal `N`: `Some(N)`.
fn usize_array(ty: &Type) -> Option<usize> {
    let Type::Array(a) = ty else { return None };
    if !crate::ast::is_usize(&a.elem) {
        return None;
    }
    match &a.len {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => i.base10_parse().ok(),
            _ => None,
        },
        _ => None,
    }
}

/// The whole attribute.
pub fn run(attr: TokenStream, item: TokenStream) -> TokenStream {
    let cx = Ctxt::default();
    let args = parse_args(&cx, attr);
    let item: Item = match syn::parse2(item) {
        Ok(i) => i,
        Err(e) => {
            let msg = format!("#[tiled_permute] goes on a function signature ending with `;`: {e}");
            return syn::Error::new(e.span(), msg).to_compile_error();
        }
    };
    let out = check(&cx, &args, &item)
        .filter(|_| cx.is_empty())
        .map(|p| expand(&args, &item, &p))
        .unwrap_or_default();
    match cx.check() {
        Ok(()) => out,
        Err(e) => {
            let mut ts = e.to_compile_error();
            ts.extend(crate::expand::fallback_named(&item, "#[tiled_permute]"));
            ts
        }
    }
}

struct Params {
    elem: Type,
    src_strides: bool,
    dst_strides: bool,
    stream: bool,
}

fn check(cx: &Ctxt, args: &Args, item: &Item) -> Option<Params> {
    check_header(cx, item, "#[tiled_permute]");
    let rank = args.perm.as_ref().map(|(p, _)| p.len());
    let mut src = None;
    let mut dst = None;
    let mut p = Params {
        elem: syn::parse_quote!(()),
        src_strides: false,
        dst_strides: false,
        stream: false,
    };
    let params = named_params(cx, item, "#[tiled_permute]", NAMES);
    for &(ident, ty) in &params {
        let name = ident.to_string();
        match name.as_str() {
            "src" => src = slice_elem(cx, "src", ty, false),
            "dst" => dst = slice_elem(cx, "dst", ty, true).map(|e| (e, ty.clone())),
            "dims" | "src_strides" | "dst_strides" => {
                let what = if name == "dims" {
                    "the source's extents"
                } else {
                    "strides in elements"
                };
                match (usize_array(ty), rank) {
                    (None, _) => cx.error(
                        ty,
                        format!("`{name}` must be `[usize; N]` ({what}), N = the length of `perm`"),
                    ),
                    (Some(n), Some(r)) if n != r => cx.error(
                        ty,
                        format!("`{name}` has {n} axes but `perm` has {r}: write `{name}: [usize; {r}]`"),
                    ),
                    (Some(n), None) if n > MAX_RANK => cx.error(
                        ty,
                        format!("`{name}` has {n} axes: a permute takes 1 to {MAX_RANK}"),
                    ),
                    _ => {}
                }
                match name.as_str() {
                    "src_strides" => p.src_strides = true,
                    "dst_strides" => p.dst_strides = true,
                    _ => {}
                }
            }
            _ => p.stream |= stream_or_unexpected(cx, ident, ty, NAMES),
        }
    }
    let required = [
        ("src", "&CudaSlice<T>"),
        ("dst", "&mut CudaSlice<T>"),
        ("dims", "[usize; N]"),
    ];
    p.elem = check_required(cx, item, &params, &required, src, dst)?;
    Some(p)
}

fn expand(args: &Args, item: &Item, p: &Params) -> TokenStream {
    let Item {
        attrs, vis, sig, ..
    } = item;
    let elem = &p.elem;
    let perm = args
        .perm
        .as_ref()
        .map(|(v, _)| v.clone())
        .unwrap_or_default();
    let n = perm.len();
    let opt = |present: bool, name: &str| {
        let id = syn::Ident::new(name, Span::call_site());
        if present {
            quote!(::core::option::Option::Some(&#id[..]))
        } else {
            quote!(::core::option::Option::None)
        }
    };
    let (ss, ds) = (
        opt(p.src_strides, "src_strides"),
        opt(p.dst_strides, "dst_strides"),
    );
    let stream = crate::expand::stream_arg(p.stream);
    let pad = args.pad;
    let doc = format!(
        " bankfree: permute {perm:?} (output axis i is input axis perm[i]), planned per call: a copy \
         of blocks contiguous on both sides, or a batch of {} transposes proven conflict-free.",
        if pad { "padded" } else { "swizzled" }
    );
    quote! {
        #(#attrs)*
        #[doc = ""]
        #[doc = #doc]
        #vis #sig {
            fn __bankfree_element<E: ::bankfree::Element>() {}
            __bankfree_element::<#elem>();
            const PERM: [usize; #n] = [#(#perm),*];
            ::bankfree::__private::permute::<#elem, _, _>(src, dst, &dims[..], &PERM, #ss, #ds, #stream, #pad)
        }
    }
}
