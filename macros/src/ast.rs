//! The annotated item: a function without a body whose parameters are recognised by
//! name and type.

use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::parse::{Parse, ParseStream};
use syn::{
    Attribute, FnArg, GenericArgument, Pat, PathArguments, ReturnType, Signature, Type, Visibility,
};

/// `attrs vis fn name(...) -> R;` or, wrongly, with a body.
pub struct Item {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub sig: Signature,
    pub body: Option<TokenStream>,
}

impl Parse for Item {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        let sig: Signature = input.parse()?;
        let body = if input.peek(syn::Token![;]) {
            input.parse::<syn::Token![;]>()?;
            None
        } else {
            let block: syn::Block = input.parse()?;
            Some(block.into_token_stream())
        };
        Ok(Item {
            attrs,
            vis,
            sig,
            body,
        })
    }
}

/// What the glue needs to know of the signature.
pub struct Params {
    /// The element type, from `src`.
    pub elem: Type,
    pub batch: bool,
    pub src_ld: bool,
    pub dst_ld: bool,
    pub stream: bool,
}

const NAMES: &str = "src, dst, rows, cols and optionally batch, src_ld, dst_ld, stream";

/// The element type of `&CudaSlice<T>` / `&CudaView<'_, T>` (`mutable` false) or
/// `&mut CudaSlice<T>` / `&mut CudaViewMut<'_, T>` (`mutable` true).
pub(crate) fn slice_elem(cx: &Ctxt, name: &str, ty: &Type, mutable: bool) -> Option<Type> {
    let want = if mutable {
        "`&mut CudaSlice<T>` or `&mut CudaViewMut<'_, T>`"
    } else {
        "`&CudaSlice<T>` or `&CudaView<'_, T>`"
    };
    let Type::Reference(r) = ty else {
        cx.error(ty, format!("`{name}` must be {want}"));
        return None;
    };
    match (mutable, r.mutability.is_some()) {
        (false, true) => {
            cx.error(
                ty,
                format!("`{name}` is only read: take it as {want}, without `mut`"),
            );
            return None;
        }
        (true, false) => {
            cx.error(ty, format!("`{name}` is written: take it as {want}"));
            return None;
        }
        _ => {}
    }
    let Type::Path(p) = &*r.elem else {
        cx.error(ty, format!("`{name}` must be {want}"));
        return None;
    };
    let seg = p.path.segments.last()?;
    let ok_names: &[&str] = if mutable {
        &["CudaSlice", "CudaViewMut"]
    } else {
        &["CudaSlice", "CudaView"]
    };
    if !ok_names.iter().any(|n| seg.ident == n) {
        cx.error(
            &r.elem,
            format!("`{name}` must be {want}, not `{}`", seg.ident),
        );
        return None;
    }
    let PathArguments::AngleBracketed(args) = &seg.arguments else {
        cx.error(
            &r.elem,
            format!(
                "`{}` needs its element type, as in `{}<f32>`",
                seg.ident, seg.ident
            ),
        );
        return None;
    };
    let elem = args.args.iter().find_map(|a| match a {
        GenericArgument::Type(t) => Some(t.clone()),
        _ => None,
    });
    if elem.is_none() {
        cx.error(&r.elem, format!("`{}` needs its element type", seg.ident));
    }
    elem
}

pub(crate) fn is_usize(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.is_ident("usize"))
}

/// A parameter both attributes treat alike: `stream` (its type checked; `true`),
/// or else an unexpected name, reported with the parameters `names` lists.
pub fn stream_or_unexpected(cx: &Ctxt, ident: &syn::Ident, ty: &Type, names: &str) -> bool {
    if ident != "stream" {
        cx.error(
            ident,
            format!("unexpected parameter `{ident}`: parameters are {names}"),
        );
        return false;
    }
    if !is_stream(ty) {
        cx.error(ty, "`stream` must be `&CudaStream` (or `&Arc<CudaStream>`)");
    }
    true
}

pub(crate) fn is_stream(ty: &Type) -> bool {
    let Type::Reference(r) = ty else { return false };
    if r.mutability.is_some() {
        return false;
    }
    let Type::Path(p) = &*r.elem else {
        return false;
    };
    let Some(seg) = p.path.segments.last() else {
        return false;
    };
    if seg.ident == "CudaStream" {
        return true;
    }
    // `&Arc<CudaStream>` derefs to `&CudaStream`.
    matches!(&seg.arguments, PathArguments::AngleBracketed(a) if seg.ident == "Arc"
        && a.args.iter().any(|g| matches!(g, GenericArgument::Type(Type::Path(t)) if t.path.segments.last().is_some_and(|s| s.ident == "CudaStream"))))
}

/// `bankfree::Result<()>` or `Result<(), bankfree::Error>` (any path to them).
pub(crate) fn returns_result(ret: &ReturnType) -> bool {
    let ReturnType::Type(_, ty) = ret else {
        return false;
    };
    let Type::Path(p) = &**ty else { return false };
    let Some(seg) = p.path.segments.last() else {
        return false;
    };
    if seg.ident != "Result" {
        return false;
    }
    let PathArguments::AngleBracketed(a) = &seg.arguments else {
        return false;
    };
    let types: Vec<&Type> = a
        .args
        .iter()
        .filter_map(|g| match g {
            GenericArgument::Type(t) => Some(t),
            _ => None,
        })
        .collect();
    let unit = |t: &Type| matches!(t, Type::Tuple(tt) if tt.elems.is_empty());
    match types.as_slice() {
        [ok] => unit(ok) && p.path.segments.len() > 1,
        [ok, Type::Path(e)] => {
            unit(ok) && e.path.segments.last().is_some_and(|s| s.ident == "Error")
        }
        _ => false,
    }
}

/// Checks what every attribute of this crate refuses in a signature: a body,
/// `const`, `async`, `unsafe`, an ABI, `...`, a return type other than
/// `bankfree::Result<()>`. `attr` names the attribute in the messages.
pub fn check_header(cx: &Ctxt, item: &Item, attr: &str) {
    let sig = &item.sig;
    if let Some(b) = &item.body {
        cx.error(
            b,
            format!("remove the body: `{attr}` writes it; end the signature with `;`"),
        );
    }
    if let Some(t) = &sig.constness {
        cx.error(
            t,
            format!(
                "a `{attr}` function cannot be `const` (it launches a GPU kernel): remove `const`"
            ),
        );
    }
    if let Some(t) = &sig.asyncness {
        cx.error(t, format!("a `{attr}` function cannot be `async` (the launch is already asynchronous on its stream): remove `async`"));
    }
    if let Some(t) = &sig.unsafety {
        cx.error(t, format!("a `{attr}` function cannot be `unsafe` (every input is checked before the launch): remove `unsafe`"));
    }
    if let Some(abi) = &sig.abi {
        cx.error(abi, format!("a `{attr}` function cannot be `extern`: remove the ABI; it is a Rust function that launches a kernel"));
    }
    if let Some(v) = &sig.variadic {
        cx.error(
            v,
            format!("a `{attr}` function cannot be variadic: remove `...`"),
        );
    }
    if !returns_result(&sig.output) {
        match &sig.output {
            ReturnType::Default => {
                cx.error(&sig.ident, "add the return type `-> bankfree::Result<()>`")
            }
            ReturnType::Type(_, ty) => cx.error(
                ty,
                "the return type must be `bankfree::Result<()>` or `Result<(), bankfree::Error>`",
            ),
        }
    }
}

/// The parameters by name, each once (a receiver, a pattern or a repeated name is
/// reported); `names` lists the accepted ones for the messages.
pub fn named_params<'a>(
    cx: &Ctxt,
    item: &'a Item,
    attr: &str,
    names: &str,
) -> Vec<(&'a syn::Ident, &'a Type)> {
    let mut out: Vec<(&syn::Ident, &Type)> = Vec::new();
    for arg in &item.sig.inputs {
        let pt = match arg {
            FnArg::Receiver(r) => {
                cx.error(r, format!("a `{attr}` function takes no `self`: make it a free function or an associated function without a receiver"));
                continue;
            }
            FnArg::Typed(pt) => pt,
        };
        let Pat::Ident(pi) = &*pt.pat else {
            cx.error(
                &pt.pat,
                format!("parameters are recognised by name: use {names}"),
            );
            continue;
        };
        if out.iter().any(|(i, _)| **i == pi.ident) {
            cx.error(
                &pi.ident,
                format!(
                    "duplicate parameter `{}`: give each parameter once",
                    pi.ident
                ),
            );
            continue;
        }
        out.push((&pi.ident, &*pt.ty));
    }
    out
}

/// Reports each of `required` (name, type) missing from `params`, and `dst` holding
/// another element type than `src`; returns `src`'s element type.
pub fn check_required(
    cx: &Ctxt,
    item: &Item,
    params: &[(&syn::Ident, &Type)],
    required: &[(&str, &str)],
    src: Option<Type>,
    dst: Option<(Type, Type)>,
) -> Option<Type> {
    for (name, ty) in required {
        if !params.iter().any(|(i, _)| *i == name) {
            cx.error(&item.sig.ident, format!("missing parameter `{name}: {ty}`"));
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
    src
}

/// Checks the item; reports every problem to `cx`.
pub fn check(cx: &Ctxt, item: &Item) -> Option<Params> {
    check_header(cx, item, "#[tiled_transpose]");
    let mut src: Option<Type> = None;
    let mut dst: Option<(Type, Type)> = None;
    let mut p = Params {
        elem: syn::parse_quote!(()),
        batch: false,
        src_ld: false,
        dst_ld: false,
        stream: false,
    };
    let params = named_params(cx, item, "#[tiled_transpose]", NAMES);
    for &(ident, ty) in &params {
        let name = ident.to_string();
        match name.as_str() {
            "src" => src = slice_elem(cx, "src", ty, false),
            "dst" => dst = slice_elem(cx, "dst", ty, true).map(|e| (e, ty.clone())),
            "rows" | "cols" | "batch" | "src_ld" | "dst_ld" => {
                if !is_usize(ty) {
                    cx.error(
                        ty,
                        format!("`{name}` must be `usize`: write `{name}: usize`"),
                    );
                }
                match name.as_str() {
                    "batch" => p.batch = true,
                    "src_ld" => p.src_ld = true,
                    "dst_ld" => p.dst_ld = true,
                    _ => {}
                }
            }
            _ => p.stream |= stream_or_unexpected(cx, ident, ty, NAMES),
        }
    }
    let required = [
        ("src", "&CudaSlice<T>"),
        ("dst", "&mut CudaSlice<T>"),
        ("rows", "usize"),
        ("cols", "usize"),
    ];
    p.elem = check_required(cx, item, &params, &required, src, dst)?;
    Some(p)
}

/// The byte size of element types the macro can see: primitives and `half`'s types,
/// and arrays of them with a literal length.
pub fn known_size(ty: &Type) -> Option<u32> {
    match ty {
        Type::Path(p) if p.qself.is_none() => {
            let seg = p.path.segments.last()?;
            if !seg.arguments.is_empty() {
                return None;
            }
            Some(match seg.ident.to_string().as_str() {
                "u8" | "i8" => 1,
                "u16" | "i16" | "f16" | "bf16" => 2,
                "u32" | "i32" | "f32" => 4,
                "u64" | "i64" | "f64" => 8,
                "u128" | "i128" => 16,
                _ => return None,
            })
        }
        Type::Array(a) => {
            let n = match &a.len {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(i),
                    ..
                }) => i.base10_parse::<u32>().ok()?,
                _ => return None,
            };
            known_size(&a.elem)?.checked_mul(n)
        }
        Type::Paren(p) => known_size(&p.elem),
        _ => None,
    }
}
