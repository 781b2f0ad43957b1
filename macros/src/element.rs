//! `#[derive(Element)]`: the `unsafe impl`s a plain-old-data struct needs, behind
//! checks that make them true.
//!
//! A struct qualifies when it is `#[repr(C)]` or `#[repr(transparent)]`, has no
//! generic parameters, every field is an `Element`, and its size is the sum of its
//! fields' sizes (no padding bytes, which would be copied uninitialized). The first
//! two are checked here, the last two by the code it expands to, each error spanned
//! at the offending item.

use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

/// The derive on `input`; errors go to `cx`.
pub fn derive(cx: &Ctxt, input: &syn::DeriveInput) -> TokenStream {
    let name = &input.ident;
    let fields = match &input.data {
        syn::Data::Struct(s) => &s.fields,
        syn::Data::Enum(e) => {
            cx.error(
                e.enum_token,
                "#[derive(Element)] takes a struct: an enum's bytes are not all valid values \
                 (move it as its integer representation instead)",
            );
            return TokenStream::new();
        }
        syn::Data::Union(u) => {
            cx.error(
                u.union_token,
                "#[derive(Element)] takes a struct: which field of a union holds is not known \
                 (use a struct of its largest field, or a byte array)",
            );
            return TokenStream::new();
        }
    };
    if !has_layout_repr(cx, &input.attrs) {
        cx.error_at(
            name.span(),
            format!(
                "#[derive(Element)] needs a fixed field layout: add #[repr(C)] to `{name}` \
                 (or #[repr(transparent)] for a newtype)"
            ),
        );
    }
    if let Some(p) = input.generics.params.first() {
        cx.error(
            p,
            "#[derive(Element)] takes a struct without generic parameters: \
             derive it on a concrete struct",
        );
    }
    if fields.is_empty() {
        cx.error_at(
            name.span(),
            format!("#[derive(Element)]: `{name}` has no fields, so no bytes to move"),
        );
    }
    if !cx.is_empty() {
        return TokenStream::new();
    }
    let tys: Vec<&syn::Type> = fields.iter().map(|f| &f.ty).collect();
    // Each field's bound is checked at the field's type.
    let field_checks = tys.iter().map(|ty| {
        quote_spanned! {ty.span()=>
            ::bankfree::__private::is_element::<#ty>();
        }
    });
    let padding = format!(
        "#[derive(Element)]: `{name}` has padding bytes (its size is more than the sum of its \
         fields' sizes); reorder the fields from largest to smallest alignment or add explicit \
         fields for the padding"
    );
    let Some((first, rest)) = tys.split_first() else {
        return TokenStream::new(); // refused above: no fields
    };
    let padding_check = quote_spanned! {name.span()=>
        const _: () = ::core::assert!(
            ::core::mem::size_of::<#name>()
                == ::core::mem::size_of::<#first>() #(+ ::core::mem::size_of::<#rest>())*,
            #padding
        );
    };
    quote! {
        const _: () = {
            #[allow(dead_code)]
            fn fields_are_elements() {
                #(#field_checks)*
            }
        };
        #padding_check
        // SAFETY: a `repr(C)` or `repr(transparent)` struct without padding whose
        // fields are all `Element`s (checked above) is valid for any bytes another
        // value of it had, and so for all-zero bytes, and has a C layout.
        #[allow(unsafe_code)]
        unsafe impl ::bankfree::Element for #name {}
        #[allow(unsafe_code)]
        unsafe impl ::bankfree::cudarc::driver::DeviceRepr for #name {}
        #[allow(unsafe_code)]
        unsafe impl ::bankfree::cudarc::driver::ValidAsZeroBits for #name {}
    }
}

/// Whether the attributes hold `#[repr(C)]` or `#[repr(transparent)]` (with any
/// other repr hints beside it).
fn has_layout_repr(cx: &Ctxt, attrs: &[syn::Attribute]) -> bool {
    let mut found = false;
    for a in attrs.iter().filter(|a| a.path().is_ident("repr")) {
        let parsed = a.parse_nested_meta(|m| {
            if m.path.is_ident("C") || m.path.is_ident("transparent") {
                found = true;
            }
            // Skip an argument list such as `align(16)`.
            if m.input.peek(syn::token::Paren) {
                let list;
                syn::parenthesized!(list in m.input);
                list.parse::<TokenStream>()?;
            }
            Ok(())
        });
        if let Err(e) = parsed {
            cx.error_at(a.span(), format!("cannot read this repr: {e}"));
        }
    }
    found
}
