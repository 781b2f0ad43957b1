//! `bankfree-macros`: the `#[tiled_transpose]` attribute and `#[derive(Element)]`.
//!
//! Parse (`attr`, `ast`) -> validate (every error at once, spanned, through
//! `ctxt::Ctxt`) -> expand. The decisions (which kernel, whether it conflicts) are
//! `bankfree-gen`'s; this crate reports them. Use it through the `bankfree` crate:
//!
//! ```ignore
//! use bankfree::cudarc::driver::CudaSlice;
//! use bankfree::tiled_transpose;
//!
//! /// Transposes a `rows x cols` f32 matrix into `dst` (`cols x rows`).
//! #[tiled_transpose(tile = 32, strategy = pad)]
//! pub fn transpose_f32(src: &CudaSlice<f32>, dst: &mut CudaSlice<f32>, rows: usize, cols: usize) -> bankfree::Result<()>;
//! ```

mod ast;
mod attr;
mod ctxt;
mod element;
mod expand;
mod permute;

use proc_macro::TokenStream;

/// Generates a bank-conflict-free tiled transpose for a function signature.
///
/// Arguments: `tile = auto | 8 | 16 | 32 | 64` (default `auto`: the generator's
/// measured variant first, see `bankfree_gen::select::choice`), `strategy = naive | none | pad |
/// pad(N) | swizzle | swizzle(xor) | swizzle(rotate)` (default `swizzle`),
/// `block_rows = N`, and the flag `allow_conflicts` to build a layout the bank
/// analyzer finds conflicting. See the `bankfree` crate for the parameters.
#[proc_macro_attribute]
pub fn tiled_transpose(attr: TokenStream, item: TokenStream) -> TokenStream {
    run(attr.into(), item.into()).into()
}

/// Generates an N-d permute for a function signature: `perm = [...]` (output
/// axis `i` is input axis `perm[i]`, rank 1 to 8) and optionally `strategy = pad |
/// swizzle` (default `swizzle`). Parameters by name: `src`, `dst`, `dims: [usize;
/// N]` and optionally `src_strides`, `dst_strides` (`[usize; N]`, in elements, each
/// in its own tensor's axis order) and `stream`. See the `bankfree` crate.
#[proc_macro_attribute]
pub fn tiled_permute(attr: TokenStream, item: TokenStream) -> TokenStream {
    permute::run(attr.into(), item.into()).into()
}

/// Implements `bankfree::Element` (and cudarc's `DeviceRepr` and `ValidAsZeroBits`)
/// for a `#[repr(C)]` or `#[repr(transparent)]` struct whose fields are all
/// `Element`s and that has no padding; anything else is a compile error at the
/// offending item. See `bankfree::Element`.
#[proc_macro_derive(Element)]
pub fn derive_element(item: TokenStream) -> TokenStream {
    let input = match syn::parse::<syn::DeriveInput>(item) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error().into(),
    };
    let cx = ctxt::Ctxt::default();
    let out = element::derive(&cx, &input);
    match cx.check() {
        Ok(()) => out.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// The whole attribute on `proc_macro2` tokens (so tests can call it).
fn run(attr: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    let cx = ctxt::Ctxt::default();
    let args = attr::parse(&cx, attr);
    let item: ast::Item = match syn::parse2(item) {
        Ok(i) => i,
        Err(e) => {
            let msg =
                format!("#[tiled_transpose] goes on a function signature ending with `;`: {e}");
            return syn::Error::new(e.span(), msg).to_compile_error();
        }
    };
    let params = ast::check(&cx, &item);
    let out = match &params {
        Some(p) if cx.is_empty() => expand::expand(&cx, &args, &item, p),
        _ => proc_macro2::TokenStream::new(),
    };
    match cx.check() {
        Ok(()) => out,
        Err(e) => {
            let mut ts = e.to_compile_error();
            ts.extend(expand::fallback(&item));
            ts
        }
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    const GENERIC_TOKEN_BOUND: usize = 14_200;
    const GENERIC_TEXT_BOUND: usize = 90_000;

    fn pretty(ts: proc_macro2::TokenStream) -> String {
        prettyplease::unparse(&syn::parse2(ts).expect("the expansion is a file of items"))
    }

    #[test]
    fn expansion_pad_f32() {
        insta::assert_snapshot!(pretty(super::run(
            quote!(tile = 32, strategy = pad),
            quote! {
                /// The user's docs are kept.
                pub fn transpose_f32(src: &CudaSlice<f32>, dst: &mut CudaSlice<f32>, rows: usize, cols: usize) -> bankfree::Result<()>;
            }
        )));
    }

    #[test]
    fn expansion_every_optional_parameter_u8() {
        insta::assert_snapshot!(pretty(super::run(
            quote!(strategy = swizzle, block_rows = 4),
            quote! {
                pub(crate) fn t_u8(src: &CudaView<'_, u8>, dst: &mut CudaViewMut<'_, u8>, batch: usize, rows: usize,
                                   cols: usize, src_ld: usize, dst_ld: usize, stream: &CudaStream) -> Result<(), bankfree::Error>;
            }
        )));
    }

    #[test]
    fn expansion_auto_u8_vec_kernel_then_fallback() {
        insta::assert_snapshot!(pretty(super::run(
            quote!(tile = auto, strategy = pad),
            quote! {
                fn t(src: &CudaSlice<u8>, dst: &mut CudaSlice<u8>, rows: usize, cols: usize) -> bankfree::Result<()>;
            },
        )));
    }

    fn tokens(ts: proc_macro2::TokenStream) -> usize {
        ts.into_iter()
            .map(|t| match t {
                proc_macro2::TokenTree::Group(g) => 1 + tokens(g.stream()),
                _ => 1,
            })
            .sum()
    }

    /// What rustc must type-check for a generic `T: Element` function: one entry
    /// per element size, each a few kernel variants (no CUDA C). A change that
    /// grows it past the bound should say why in review.
    #[test]
    fn a_generic_expansion_stays_small() {
        let ts = super::run(
            quote!(),
            quote! {
                pub fn t<T: bankfree::Element>(src: &CudaSlice<T>, dst: &mut CudaSlice<T>, rows: usize, cols: usize) -> bankfree::Result<()>;
            },
        );
        let (n, bytes) = (tokens(ts.clone()), ts.to_string().len());
        assert!(n <= GENERIC_TOKEN_BOUND, "{n} tokens");
        assert!(n > GENERIC_TOKEN_BOUND / 2, "{n} tokens: lower the bound");
        // A token can be a long string: the text is bounded too.
        assert!(bytes <= GENERIC_TEXT_BOUND, "{bytes} bytes");
        eprintln!("{n} tokens, {bytes} bytes");
        assert!(
            bytes > GENERIC_TEXT_BOUND / 2,
            "{bytes} bytes: lower the bound"
        );
    }

    #[test]
    fn expansion_with_errors_keeps_the_signature() {
        insta::assert_snapshot!(pretty(super::run(
            quote!(tile = 48, strategy = none),
            quote! {
                fn broken(src: &CudaSlice<f64>, dst: &mut CudaSlice<f64>, rows: usize, cols: usize) -> bankfree::Result<()>;
            }
        )));
    }
}
