//! The attribute's arguments: `tile = 32 | auto, strategy = pad(2), block_rows = 8, allow_conflicts`.

use crate::ctxt::Ctxt;
use bankfree_gen::kernel::geometry::TILES;
use bankfree_gen::Strategy;
use proc_macro2::{Span, TokenStream};
use syn::punctuated::Punctuated;
use syn::{Expr, Lit, Meta, Token};

pub struct Args {
    pub tile: u32,
    /// `tile` and `block_rows` left to the generator (`tile = auto`, or neither
    /// given): it may run its measured fastest variant first.
    pub auto: bool,
    pub strategy: Strategy,
    /// The `strategy` value's tokens, to span errors over all of `pad(2)` (empty
    /// for the default: errors then point at the attribute).
    pub strategy_at: TokenStream,
    pub block_rows: Option<(u32, Span)>,
    pub allow_conflicts: bool,
}

const EXPECTED: &str =
    "expected `tile = auto | 8 | 16 | 32 | 64`, `strategy = ...`, `block_rows = N` or `allow_conflicts`";

fn int(cx: &Ctxt, name: &str, e: &Expr) -> Option<u32> {
    if let Expr::Lit(l) = e {
        if let Lit::Int(i) = &l.lit {
            return match i.base10_parse::<u32>() {
                Ok(v) => Some(v),
                Err(_) => {
                    cx.error(e, format!("`{name}` is too large"));
                    None
                }
            };
        }
    }
    cx.error(e, format!("`{name}` takes an integer, as in `{name} = 8`"));
    None
}

fn is_auto(e: &Expr) -> bool {
    matches!(e, Expr::Path(p) if p.path.is_ident("auto"))
}

fn strategy(cx: &Ctxt, e: &Expr) -> Option<Strategy> {
    let text = quote::quote!(#e).to_string();
    match text.parse::<Strategy>() {
        Ok(s) => Some(s),
        Err(err) => {
            cx.error(e, err);
            None
        }
    }
}

/// The arguments as `(name, meta)`, each name once; malformed arguments, paths
/// that are not a name and repeated names are reported (`expected` says what is
/// accepted).
pub fn metas(cx: &Ctxt, attr: TokenStream, expected: &str) -> Vec<(String, Meta)> {
    let metas =
        match syn::parse::Parser::parse2(Punctuated::<Meta, Token![,]>::parse_terminated, attr) {
            Ok(m) => m,
            Err(e) => {
                cx.syn(syn::Error::new(
                    e.span(),
                    format!("malformed arguments: {e}; {expected}"),
                ));
                return Vec::new();
            }
        };
    let mut out: Vec<(String, Meta)> = Vec::new();
    for meta in metas {
        let path = meta.path();
        let Some(name) = path.get_ident().map(ToString::to_string) else {
            cx.error(path, format!("unknown argument; {expected}"));
            continue;
        };
        if out.iter().any(|(n, _)| *n == name) {
            cx.error(path, format!("duplicate argument `{name}`: give it once"));
            continue;
        }
        out.push((name, meta));
    }
    out
}

pub fn parse(cx: &Ctxt, attr: TokenStream) -> Args {
    let mut args = Args {
        tile: 32,
        auto: true,
        strategy: Strategy::Xor,
        strategy_at: TokenStream::new(),
        block_rows: None,
        allow_conflicts: false,
    };
    for (name, meta) in metas(cx, attr, EXPECTED) {
        let path = meta.path();
        match (name.as_str(), &meta) {
            ("tile", Meta::NameValue(nv)) if is_auto(&nv.value) => {}
            ("tile", Meta::NameValue(nv)) => {
                args.auto = false;
                if let Some(v) = int(cx, "tile", &nv.value) {
                    if TILES.contains(&v) {
                        args.tile = v;
                    } else {
                        cx.error(
                            &nv.value,
                            format!("tile = {v}: the tile side must be auto, 8, 16, 32 or 64"),
                        );
                    }
                }
            }
            ("strategy", Meta::NameValue(nv)) => {
                if let Some(s) = strategy(cx, &nv.value) {
                    args.strategy = s;
                    args.strategy_at = quote::ToTokens::to_token_stream(&nv.value);
                }
            }
            ("block_rows", Meta::NameValue(nv)) => {
                args.auto = false;
                if let Some(v) = int(cx, "block_rows", &nv.value) {
                    args.block_rows = Some((v, syn::spanned::Spanned::span(&nv.value)));
                }
            }
            ("allow_conflicts", Meta::Path(_)) => args.allow_conflicts = true,
            ("allow_conflicts", _) => cx.error(
                &meta,
                "`allow_conflicts` is a flag: write `allow_conflicts` alone",
            ),
            ("tile" | "strategy" | "block_rows", _) => cx.error(
                &meta,
                format!("`{name}` needs a value, as in `{name} = ...`"),
            ),
            _ => cx.error(path, format!("unknown argument `{name}`; {EXPECTED}")),
        }
    }
    args
}
