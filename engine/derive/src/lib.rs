//! Derives for lanegraph's world traits: `Component`, `Resource`, `StateHash` and
//! `SoaComponent`.
//!
//! Owns: turning a struct (or, for `StateHash`, an enum) into the impls a game would otherwise
//! write by hand. Must never: emit code that compiles but is wrong (a field silently left out of
//! the hash, a non-`f32` field in a field-SoA layout): every such case is a compile error with
//! its span on the offending item and a "fix:" line.
//!
//! The generated code names the traits through `::lanegraph::...`, so it works in any crate that
//! depends on `lanegraph` (the runtime aliases itself as `lanegraph` for its own tests). Use the
//! re-exports, `lanegraph::world::{Component, Resource, StateHash}` and
//! `lanegraph::simd::SoaComponent`: each is both the trait and its derive.

#![deny(unreachable_pub, missing_docs)]

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{parse_macro_input, Data, DeriveInput, Fields, LitStr};

/// `#[derive(Component)]`: implements `lanegraph::world::Component` and the metadata the runtime
/// reads through `lanegraph::hooks::ComponentMeta`.
///
/// Options, all optional, in `#[component(...)]`:
/// - `name = "Position"`: the stable name (default: the type's name).
/// - `domains(TRANSFORM, PHYSICS)`: the change domains a mutation bumps; a bare name is a
///   built-in `Domain` constant, a path (`crate::MY_DOMAIN`) is any `Domain` constant. Default:
///   every domain, which is always correct and only costs cache invalidations.
///
/// - `all_f32`: every field is made of `f32`s (a `Vec3` of them, say), for the layout advisor.
///
/// `ALL_F32` is otherwise derived from the field types (true when every field is spelt `f32`).
#[proc_macro_derive(Component, attributes(component))]
pub fn derive_component(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand_named_trait(
        &input,
        "component",
        quote!(::lanegraph::world::Component),
        quote!(::lanegraph::hooks::ComponentMeta),
        true,
    )
    .unwrap_or_else(syn::Error::into_compile_error)
    .into()
}

/// `#[derive(Resource)]`: implements `lanegraph::world::Resource` and
/// `lanegraph::hooks::ResourceMeta`.
///
/// Options in `#[resource(...)]`, as for `Component`: `name = "..."` and `domains(...)`.
#[proc_macro_derive(Resource, attributes(resource))]
pub fn derive_resource(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand_named_trait(
        &input,
        "resource",
        quote!(::lanegraph::world::Resource),
        quote!(::lanegraph::hooks::ResourceMeta),
        false,
    )
    .unwrap_or_else(syn::Error::into_compile_error)
    .into()
}

/// `#[derive(StateHash)]`: feeds every field to the state hash in declaration order.
///
/// `#[state_hash(skip)]` on a field leaves it out (caches and diagnostics are not state). Enums
/// feed the variant's index (`u32`) and then its fields. Generic parameters get a `StateHash`
/// bound.
#[proc_macro_derive(StateHash, attributes(state_hash))]
pub fn derive_state_hash(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand_state_hash(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// `#[derive(SoaComponent)]`: the field-SoA layout of a struct of named `f32` fields, one
/// column per field in declaration order.
#[proc_macro_derive(SoaComponent)]
pub fn derive_soa_component(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand_soa(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// The options shared by `#[component(...)]` and `#[resource(...)]`.
struct NameAndDomains {
    name: Option<LitStr>,
    domains: Option<Vec<TokenStream2>>,
    /// `all_f32`: the author vouches that every field is made of `f32`s (e.g. a `Vec3`), which
    /// the derive cannot see through a field's type name.
    all_f32: bool,
}

fn parse_name_and_domains(input: &DeriveInput, attr: &str) -> syn::Result<NameAndDomains> {
    let mut out = NameAndDomains {
        name: None,
        domains: None,
        all_f32: false,
    };
    for a in input.attrs.iter().filter(|a| a.path().is_ident(attr)) {
        a.parse_nested_meta(|meta| {
            if meta.path.is_ident("name") {
                let lit: LitStr = meta.value()?.parse()?;
                if lit.value().is_empty() {
                    return Err(syn::Error::new(
                        lit.span(),
                        "the name is empty; fix: give a non-empty, stable name",
                    ));
                }
                out.name = Some(lit);
                Ok(())
            } else if meta.path.is_ident("domains") {
                // Parsed by hand rather than with `parse_nested_meta`, which rejects `domains()`
                // (the empty set, a legitimate choice for a component no cache watches).
                let content;
                syn::parenthesized!(content in meta.input);
                let paths = content.parse_terminated(syn::Path::parse_mod_style, syn::Token![,])?;
                let list = paths
                    .iter()
                    .map(|p| {
                        if p.segments.len() == 1 && p.leading_colon.is_none() {
                            quote_spanned!(p.span()=> ::lanegraph::world::Domain::#p)
                        } else {
                            quote!(#p)
                        }
                    })
                    .collect();
                out.domains = Some(list);
                Ok(())
            } else if attr == "component" && meta.path.is_ident("all_f32") {
                out.all_f32 = true;
                Ok(())
            } else {
                Err(meta.error(format!(
                    "unknown `{attr}` option; fix: use `name = \"...\"`, `domains(...)`{}",
                    if attr == "component" {
                        " or `all_f32`"
                    } else {
                        ""
                    }
                )))
            }
        })?;
    }
    Ok(out)
}

fn expand_named_trait(
    input: &DeriveInput,
    attr: &str,
    trait_path: TokenStream2,
    meta_path: TokenStream2,
    with_all_f32: bool,
) -> syn::Result<TokenStream2> {
    let opts = parse_name_and_domains(input, attr)?;
    let ident = &input.ident;
    let name = opts
        .name
        .unwrap_or_else(|| LitStr::new(&ident.to_string(), ident.span()));
    let domains = match opts.domains {
        None => quote!(::lanegraph::world::DomainSet::ALL),
        Some(list) => quote!(::lanegraph::world::DomainSet::EMPTY #(.with(#list))*),
    };
    let all_f32 = if with_all_f32 {
        let all = opts.all_f32
            || match &input.data {
                Data::Struct(s) => !s.fields.is_empty() && s.fields.iter().all(|f| is_f32(&f.ty)),
                _ => false,
            };
        quote!(const ALL_F32: bool = #all;)
    } else {
        quote!()
    };
    let (impl_g, ty_g, where_c) = input.generics.split_for_impl();
    // Snapshots copy values through `Clone` when the type has it: chosen at compile time by
    // autoref method resolution (the `&&Probe` receiver matches the `Clone` impl first, the
    // fallback one step later), which needs a concrete `Self`: generic types keep the default.
    let copy_rows = if with_all_f32 {
        // Components only: a whole column copied at once.
        quote! {
            fn snapshot_copy_rows(
            ) -> ::core::option::Option<::lanegraph::world::CopyRows<Self>> {
                #[allow(unused_imports)]
                use ::lanegraph::world::__snapshot_probe::{ViaClone as _, ViaNothing as _};
                (&&::lanegraph::world::__snapshot_probe::Probe::<Self>::new()).copy_rows_fn()
            }
        }
    } else {
        quote!()
    };
    let use_soa = if with_all_f32 {
        // Components only: a savegame reloads a field-SoA column field-SoA when the type can be.
        quote! {
            fn use_field_soa_fn(
            ) -> ::core::option::Option<::lanegraph::world::__UseFieldSoa> {
                #[allow(unused_imports)]
                use ::lanegraph::world::__snapshot_probe::{ViaRows as _, ViaSoa as _};
                (&&::lanegraph::world::__snapshot_probe::Probe::<Self>::new()).use_field_soa_fn()
            }
            #[inline(always)]
            fn soa_read(
                row: ::lanegraph::world::__SoaRow<'_>,
            ) -> ::core::option::Option<Self> {
                #[allow(unused_imports)]
                use ::lanegraph::world::__snapshot_probe::{ViaRows as _, ViaSoa as _};
                (&&::lanegraph::world::__snapshot_probe::Probe::<Self>::new()).soa_read(row)
            }
            #[inline(always)]
            fn soa_write(&self, row: ::lanegraph::world::__SoaRowMut<'_>) -> bool {
                #[allow(unused_imports)]
                use ::lanegraph::world::__snapshot_probe::{ViaRows as _, ViaSoa as _};
                (&&::lanegraph::world::__snapshot_probe::Probe::<Self>::new()).soa_write(self, row)
            }
        }
    } else {
        quote!()
    };
    // A `static` in a generic impl would be shared by every instantiation: only concrete types
    // get a dense id.
    let dense_key = if with_all_f32 {
        quote! {
            fn dense_key() -> ::core::option::Option<&'static ::lanegraph::world::__DenseKey> {
                static KEY: ::lanegraph::world::__DenseKey = ::lanegraph::world::__DenseKey::new();
                ::core::option::Option::Some(&KEY)
            }
        }
    } else {
        quote!()
    };
    let snapshot = if input.generics.params.is_empty() {
        quote! {
            #dense_key
            fn snapshot_clone() -> ::core::option::Option<fn(&Self) -> Self> {
                #[allow(unused_imports)]
                use ::lanegraph::world::__snapshot_probe::{ViaClone as _, ViaNothing as _};
                (&&::lanegraph::world::__snapshot_probe::Probe::<Self>::new()).clone_fn()
            }
            #copy_rows
            #use_soa
        }
    } else {
        quote!()
    };
    let schema = LitStr::new(&schema_of(input), ident.span());
    Ok(quote! {
        impl #impl_g #trait_path for #ident #ty_g #where_c {}
        impl #impl_g #meta_path for #ident #ty_g #where_c {
            const NAME: &'static str = #name;
            const DOMAINS: ::lanegraph::world::DomainSet = #domains;
            #all_f32
            #snapshot
            fn schema() -> &'static str {
                #schema
            }
        }
    })
}

/// The type's shape as savegames compare it: its fields' names and types, in order
/// (`Pos{x:f32,y:f32}`, `Hp(i32)`, `Kind{A,B(u32)}`), with the types as written. Two versions of
/// a type with the same shape string read each other's saves without migration.
fn schema_of(input: &DeriveInput) -> String {
    fn fields(f: &Fields) -> String {
        let ty = |t: &syn::Type| quote!(#t).to_string().replace(' ', "");
        match f {
            Fields::Named(n) => {
                let list: Vec<String> = n
                    .named
                    .iter()
                    .map(|f| {
                        let name = f.ident.as_ref().map(|i| i.to_string()).unwrap_or_default();
                        format!("{name}:{}", ty(&f.ty))
                    })
                    .collect();
                format!("{{{}}}", list.join(","))
            }
            Fields::Unnamed(u) => {
                let list: Vec<String> = u.unnamed.iter().map(|f| ty(&f.ty)).collect();
                format!("({})", list.join(","))
            }
            Fields::Unit => String::new(),
        }
    }
    let body = match &input.data {
        Data::Struct(s) => fields(&s.fields),
        Data::Enum(e) => {
            let list: Vec<String> = e
                .variants
                .iter()
                .map(|v| format!("{}{}", v.ident, fields(&v.fields)))
                .collect();
            format!("{{{}}}", list.join(","))
        }
        Data::Union(u) => fields(&Fields::Named(u.fields.clone())),
    };
    format!("{}{body}", input.ident)
}

fn is_f32(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.qself.is_none() && p.path.is_ident("f32"))
}

/// Whether a field carries `#[state_hash(skip)]`; any other option is an error.
fn skipped(field: &syn::Field) -> syn::Result<bool> {
    let mut skip = false;
    for a in field
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("state_hash"))
    {
        a.parse_nested_meta(|meta| {
            if meta.path.is_ident("skip") {
                skip = true;
                Ok(())
            } else {
                Err(meta.error("unknown `state_hash` option; fix: the only option is `skip`"))
            }
        })?;
    }
    Ok(skip)
}

/// The statements hashing `fields`, bound to the names `bind(i, field)` gives.
fn hash_fields(
    fields: &Fields,
    bind: impl Fn(usize, &syn::Field) -> TokenStream2,
) -> syn::Result<Vec<TokenStream2>> {
    let mut out = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        if skipped(f)? {
            continue;
        }
        let b = bind(i, f);
        out.push(quote_spanned!(f.ty.span()=>
            ::lanegraph::world::StateHash::hash_state(#b, __lanegraph_h);
        ));
    }
    Ok(out)
}

/// A pattern binding every field of `fields` to `__f{i}`.
fn bind_pattern(fields: &Fields) -> TokenStream2 {
    let names = (0..fields.len()).map(|i| format_ident!("__f{}", i));
    match fields {
        Fields::Named(n) => {
            let idents = n.named.iter().map(|f| f.ident.as_ref());
            quote!({ #(#idents: #names),* })
        }
        Fields::Unnamed(_) => quote!(( #(#names),* )),
        Fields::Unit => quote!(),
    }
}

fn expand_state_hash(input: &DeriveInput) -> syn::Result<TokenStream2> {
    let ident = &input.ident;
    let body = match &input.data {
        Data::Struct(s) => {
            let stmts = hash_fields(&s.fields, |i, f| match &f.ident {
                Some(name) => quote!(&self.#name),
                None => {
                    let idx = syn::Index::from(i);
                    quote!(&self.#idx)
                }
            })?;
            quote!(#(#stmts)*)
        }
        Data::Enum(e) => {
            let mut arms = Vec::new();
            for (index, v) in e.variants.iter().enumerate() {
                let vname = &v.ident;
                let index = u32::try_from(index).map_err(|_| {
                    syn::Error::new(v.span(), "more than u32::MAX variants cannot be hashed")
                })?;
                let pat = bind_pattern(&v.fields);
                let stmts = hash_fields(&v.fields, |i, _| {
                    let n = format_ident!("__f{}", i);
                    quote!(#n)
                })?;
                arms.push(quote! {
                    #[allow(unused_variables)]
                    Self::#vname #pat => {
                        ::lanegraph::world::StateHash::hash_state(&#index, __lanegraph_h);
                        #(#stmts)*
                    }
                });
            }
            if arms.is_empty() {
                quote!(match *self {})
            } else {
                quote!(match self { #(#arms)* })
            }
        }
        Data::Union(u) => {
            return Err(syn::Error::new(
                u.union_token.span,
                "a union cannot derive StateHash: which field is live is unknown; \
                 fix: implement `StateHash` by hand",
            ))
        }
    };
    let mut generics = input.generics.clone();
    for p in generics.type_params_mut() {
        p.bounds
            .push(syn::parse_quote!(::lanegraph::world::StateHash));
    }
    let (impl_g, ty_g, where_c) = generics.split_for_impl();
    Ok(quote! {
        impl #impl_g ::lanegraph::world::StateHash for #ident #ty_g #where_c {
            #[inline]
            fn hash_state(&self, __lanegraph_h: &mut ::lanegraph::world::StateHasher) {
                #body
            }
        }
    })
}

fn expand_soa(input: &DeriveInput) -> syn::Result<TokenStream2> {
    let ident = &input.ident;
    let fields = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(n) if !n.named.is_empty() => &n.named,
            other => {
                return Err(syn::Error::new(
                    if other.is_empty() {
                        ident.span()
                    } else {
                        other.span()
                    },
                    "SoaComponent needs a struct with named `f32` fields (one column each); \
                     fix: name the fields, or keep this component AoS",
                ))
            }
        },
        _ => {
            return Err(syn::Error::new(
                Span::call_site(),
                "SoaComponent needs a struct with named `f32` fields; \
                 fix: keep this type AoS (derive `Component` only)",
            ))
        }
    };
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new(
            input.generics.span(),
            "SoaComponent cannot be generic; fix: derive it on a concrete struct",
        ));
    }
    for f in fields {
        if !is_f32(&f.ty) {
            return Err(syn::Error::new(
                f.ty.span(),
                "every field of a field-SoA component must be `f32` (each is one column of \
                 f32x8 lanes); fix: make it `f32`, or keep this component AoS",
            ));
        }
    }
    let names: Vec<_> = fields.iter().filter_map(|f| f.ident.as_ref()).collect();
    let strs = names.iter().map(|n| n.to_string());
    let idx = 0..names.len();
    let idx2 = 0..names.len();
    let idx3 = 0..names.len();
    let idx4 = 0..names.len();
    let count = names.len();
    let vis = &input.vis;
    let fields_ident = syn::Ident::new(&format!("{ident}Fields"), ident.span());
    let doc = format!(
        "The rows of every field of a field-SoA `{ident}`, one mutable slice each, by name \
         (from `#[derive(SoaComponent)]`; `SoaMut::fields`)."
    );
    let field_docs = names
        .iter()
        .map(|n| format!("The rows of `{n}`."))
        .collect::<Vec<_>>();
    Ok(quote! {
        #[doc = #doc]
        #vis struct #fields_ident<'a> {
            #( #[doc = #field_docs] pub #names: &'a mut [f32], )*
        }
        impl ::lanegraph::simd::SoaFields for #ident {
            type Mut<'a> = #fields_ident<'a>;
            fn fields_mut(
                table: &mut ::lanegraph::simd::SoaTable,
            ) -> ::core::option::Option<#fields_ident<'_>> {
                if table.field_names() != <Self as ::lanegraph::simd::SoaComponent>::FIELDS {
                    return ::core::option::Option::None;
                }
                let [#(#names),*] = table.fields_mut::<#count>().ok()?;
                ::core::option::Option::Some(#fields_ident { #(#names),* })
            }
        }
        const _: () = ::core::assert!(
            #count <= ::lanegraph::simd::MAX_FIELDS,
            "a field-SoA component has more fields than lanegraph::simd::MAX_FIELDS"
        );
        impl ::lanegraph::simd::SoaComponent for #ident {
            const FIELDS: &'static [&'static str] = &[#(#strs),*];
            #[inline]
            fn write(&self, out: &mut [f32]) {
                #( out[#idx] = self.#names; )*
            }
            #[inline]
            fn read(fields: &[f32]) -> Self {
                #ident { #( #names: fields[#idx2] ),* }
            }
            #[inline(always)]
            fn read_with(mut field: impl FnMut(usize) -> f32) -> Self {
                #ident { #( #names: field(#idx3) ),* }
            }
            #[inline(always)]
            fn write_with(&self, mut field: impl FnMut(usize, f32)) {
                #( field(#idx4, self.#names); )*
            }
        }
    })
}
