//! `#[tiled_permute(perm = [...], strategy = pad | swizzle)]`: parse, validate (every
//! error at once, spanned), expand into a call of the runtime's planned permute.

use crate::ast::{is_stream, returns_result, slice_elem, Item};
use crate::ctxt::Ctxt;
use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::punctuated::Punctuated;
use syn::{Expr, FnArg, Lit, Meta, Pat, Token, Type};

/// The most axes a permute takes.
const MAX_RANK: usize = 8;

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
    let metas =
        match syn::parse::Parser::parse2(Punctuated::<Meta, Token![,]>::parse_terminated, attr) {
            Ok(m) => m,
            Err(e) => {
                cx.syn(syn::Error::new(
                    e.span(),
                    format!("malformed arguments: {e}; {EXPECTED}"),
                ));
                return args;
            }
        };
    let mut seen = Vec::new();
    for meta in metas {
        let name = meta.path().get_ident().map(ToString::to_string);
        let Some(name) = name else {
            cx.error(meta.path(), format!("unknown argument; {EXPECTED}"));
            continue;
        };
        if seen.contains(&name) {
            cx.error(
                meta.path(),
                format!("duplicate argument `{name}`: give it once"),
            );
            continue;
        }
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
    let mut sorted = out.clone();
    sorted.sort_unstable();
    if sorted != (0..n).collect::<Vec<_>>() {
        cx.error(
            e,
            format!("`perm` {out:?} is not a permutation of 0..{n}: every axis 0 to {} must appear exactly once", n - 1),
        );
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
    let sig = &item.sig;
    if let Some(b) = &item.body {
        cx.error(
            b,
            "remove the body: `#[tiled_permute]` writes it; end the signature with `;`",
        );
    }
    if let Some(t) = &sig.constness {
        cx.error(
            t,
            "a `#[tiled_permute]` function cannot be `const`: remove `const`",
        );
    }
    if let Some(t) = &sig.asyncness {
        cx.error(
            t,
            "a `#[tiled_permute]` function cannot be `async`: remove `async`",
        );
    }
    if let Some(t) = &sig.unsafety {
        cx.error(t, "a `#[tiled_permute]` function cannot be `unsafe` (every input is checked): remove `unsafe`");
    }
    if !returns_result(&sig.output) {
        cx.error(
            &sig.output,
            "the return type must be `bankfree::Result<()>` or `Result<(), bankfree::Error>`",
        );
    }
    let rank = args.perm.as_ref().map(|(p, _)| p.len());
    let mut src = None;
    let mut dst = None;
    let mut seen = Vec::new();
    let mut p = Params {
        elem: syn::parse_quote!(()),
        src_strides: false,
        dst_strides: false,
        stream: false,
    };
    for arg in &sig.inputs {
        let FnArg::Typed(pt) = arg else {
            cx.error(arg, "a `#[tiled_permute]` function takes no `self`");
            continue;
        };
        let Pat::Ident(pi) = &*pt.pat else {
            cx.error(
                &pt.pat,
                format!("parameters are recognised by name: use {NAMES}"),
            );
            continue;
        };
        let name = pi.ident.to_string();
        if seen.contains(&name) {
            cx.error(
                &pi.ident,
                format!("duplicate parameter `{name}`: give each parameter once"),
            );
            continue;
        }
        seen.push(name.clone());
        let ty = &*pt.ty;
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
            "stream" => {
                if !is_stream(ty) {
                    cx.error(ty, "`stream` must be `&CudaStream` (or `&Arc<CudaStream>`)");
                }
                p.stream = true;
            }
            _ => cx.error(
                &pi.ident,
                format!("unexpected parameter `{name}`: parameters are {NAMES}"),
            ),
        }
    }
    for (name, ty) in [
        ("src", "&CudaSlice<T>"),
        ("dst", "&mut CudaSlice<T>"),
        ("dims", "[usize; N]"),
    ] {
        if !seen.iter().any(|s| s == name) {
            cx.error(&sig.ident, format!("missing parameter `{name}: {ty}`"));
        }
    }
    if let (Some(s), Some((d, dty))) = (&src, &dst) {
        let (a, b) = (
            s.to_token_stream().to_string(),
            d.to_token_stream().to_string(),
        );
        if a != b {
            cx.error(
                dty,
                format!(
                    "`dst` holds `{b}` but `src` holds `{a}`: both must have the same element type"
                ),
            );
        }
    }
    p.elem = src?;
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
    let stream = if p.stream {
        quote!(::core::option::Option::Some(::core::borrow::Borrow::<
            ::bankfree::cudarc::driver::CudaStream,
        >::borrow(stream)))
    } else {
        quote!(::core::option::Option::None)
    };
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
