//! Collects every error of one attribute, so all are reported at once
//! (serde_derive's `Ctxt`).

use std::cell::RefCell;

#[derive(Default)]
pub struct Ctxt {
    errors: RefCell<Vec<syn::Error>>,
}

impl Ctxt {
    pub fn error(&self, span: impl quote::ToTokens, msg: impl std::fmt::Display) {
        self.errors
            .borrow_mut()
            .push(syn::Error::new_spanned(span, msg));
    }

    pub fn error_at(&self, span: proc_macro2::Span, msg: impl std::fmt::Display) {
        self.errors.borrow_mut().push(syn::Error::new(span, msg));
    }

    pub fn is_empty(&self) -> bool {
        self.errors.borrow().is_empty()
    }

    pub fn syn(&self, e: syn::Error) {
        self.errors.borrow_mut().push(e);
    }

    /// All errors combined, or `Ok` when there were none.
    pub fn check(self) -> Result<(), syn::Error> {
        let mut errs = self.errors.into_inner().into_iter();
        let Some(mut first) = errs.next() else {
            return Ok(());
        };
        for e in errs {
            first.combine(e);
        }
        Err(first)
    }
}
