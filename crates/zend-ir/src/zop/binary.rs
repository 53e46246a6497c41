//! A serde `Deserializer` adapter that bounds what corrupt binary input can make the decoder
//! do: nesting deeper than a limit is an error (no stack overflow), and the element counts a
//! sequence claims only size the first allocation up to a small cap (no huge allocation from
//! a tiny file). Everything else is forwarded to the wrapped deserializer unchanged.

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};
use std::fmt;

/// The most elements a claimed length may pre-allocate.
const MAX_PREALLOC: usize = 64;

/// Nesting so far: `named` counts entries into the model's recursive types (every cycle in
/// the model goes through one of them), `nest` every sequence, map, enum and option.
#[derive(Copy, Clone)]
pub(crate) struct Depth {
    pub named: usize,
    pub nest: usize,
    /// Op_arrays open (the text form's [`MAX_FUNC_NESTING`](super::MAX_FUNC_NESTING)).
    pub funcs: usize,
}

/// The model types through which every recursion passes.
const RECURSIVE_TYPES: &[&str] = &["Literal", "Ast", "ZendType", "OpArray"];

/// Most recursive-type levels: the text parser's [`MAX_DEPTH`](super::MAX_DEPTH) plus the
/// levels the binary form counts that the text form does not (the main op_array's own
/// level and a literal's own level).
pub(crate) const NAMED_LIMIT: usize = super::MAX_DEPTH + 2;

/// Most generic nesting levels: at most four per recursive-type level, plus the fixed
/// structure around them. A backstop in case the model grows a recursion not listed above.
pub(crate) const NEST_LIMIT: usize = 4 * (NAMED_LIMIT + 1) + 32;

fn enter_named<E: de::Error>(d: Depth, name: &str) -> Result<Depth, E> {
    if !RECURSIVE_TYPES.contains(&name) {
        return Ok(d);
    }
    if d.named >= NAMED_LIMIT {
        return Err(E::custom(format_args!(
            "nesting deeper than {} levels",
            super::MAX_DEPTH
        )));
    }
    let mut funcs = d.funcs;
    if name == "OpArray" {
        if funcs >= super::MAX_FUNC_NESTING {
            return Err(E::custom(format_args!(
                "op_arrays nested deeper than {} levels",
                super::MAX_FUNC_NESTING
            )));
        }
        funcs += 1;
    }
    Ok(Depth {
        named: d.named + 1,
        nest: d.nest,
        funcs,
    })
}

/// Wraps a deserializer at nesting `d`.
pub(crate) struct Limited<D> {
    pub inner: D,
    pub d: Depth,
}

struct Wrap<V> {
    inner: V,
    d: Depth,
}

impl<V> Wrap<V> {
    fn deeper<E: de::Error>(&self) -> Result<Depth, E> {
        if self.d.nest >= NEST_LIMIT {
            Err(E::custom(format_args!(
                "nesting deeper than {NEST_LIMIT} serde levels"
            )))
        } else {
            Ok(Depth {
                nest: self.d.nest + 1,
                ..self.d
            })
        }
    }
}

macro_rules! forward_deserialize {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
            self.inner.$method(Wrap { inner: visitor, d: self.d })
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Limited<D> {
    type Error = D::Error;

    forward_deserialize!(
        deserialize_any deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32
        deserialize_i64 deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32
        deserialize_u64 deserialize_u128 deserialize_f32 deserialize_f64 deserialize_char
        deserialize_str deserialize_string deserialize_bytes deserialize_byte_buf
        deserialize_option deserialize_unit deserialize_seq deserialize_map
        deserialize_identifier deserialize_ignored_any
    );

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let d = self.d;
        self.inner
            .deserialize_unit_struct(name, Wrap { inner: visitor, d })
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let d = self.d;
        self.inner
            .deserialize_newtype_struct(name, Wrap { inner: visitor, d })
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let d = self.d;
        self.inner
            .deserialize_tuple(len, Wrap { inner: visitor, d })
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let d = self.d;
        self.inner
            .deserialize_tuple_struct(name, len, Wrap { inner: visitor, d })
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let d = enter_named(self.d, name)?;
        self.inner
            .deserialize_struct(name, fields, Wrap { inner: visitor, d })
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let d = enter_named(self.d, name)?;
        self.inner
            .deserialize_enum(name, variants, Wrap { inner: visitor, d })
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

macro_rules! forward_visit {
    ($($method:ident($ty:ty))*) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<Self::Value, E> {
            self.inner.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    forward_visit!(
        visit_bool(bool) visit_i8(i8) visit_i16(i16) visit_i32(i32) visit_i64(i64)
        visit_i128(i128) visit_u8(u8) visit_u16(u16) visit_u32(u32) visit_u64(u64)
        visit_u128(u128) visit_f32(f32) visit_f64(f64) visit_char(char) visit_str(&str)
        visit_borrowed_str(&'de str) visit_string(String) visit_bytes(&[u8])
        visit_borrowed_bytes(&'de [u8]) visit_byte_buf(Vec<u8>)
    );

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.inner.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.inner.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, inner: D) -> Result<Self::Value, D::Error> {
        let d = self.deeper()?;
        self.inner.visit_some(Limited { inner, d })
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, inner: D) -> Result<Self::Value, D::Error> {
        let d = self.deeper()?;
        self.inner.visit_newtype_struct(Limited { inner, d })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        let d = self.deeper()?;
        self.inner.visit_seq(Wrap { inner: seq, d })
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let d = self.deeper()?;
        self.inner.visit_map(Wrap { inner: map, d })
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        let d = self.deeper()?;
        self.inner.visit_enum(Wrap { inner: data, d })
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Wrap<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.inner.deserialize(Limited {
            inner: d,
            d: self.d,
        })
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Wrap<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Self::Error> {
        self.inner.next_element_seed(Wrap {
            inner: seed,
            d: self.d,
        })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint().map(|n| n.min(MAX_PREALLOC))
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Wrap<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        self.inner.next_key_seed(Wrap {
            inner: seed,
            d: self.d,
        })
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<T::Value, Self::Error> {
        self.inner.next_value_seed(Wrap {
            inner: seed,
            d: self.d,
        })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint().map(|n| n.min(MAX_PREALLOC))
    }
}

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for Wrap<A> {
    type Error = A::Error;
    type Variant = Wrap<A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, Self::Variant), Self::Error> {
        let d = self.d;
        let (value, variant) = self.inner.variant_seed(Wrap { inner: seed, d })?;
        Ok((value, Wrap { inner: variant, d }))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Wrap<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), Self::Error> {
        self.inner.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<T::Value, Self::Error> {
        let d = self.d;
        self.inner.newtype_variant_seed(Wrap { inner: seed, d })
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let d = self.d;
        self.inner.tuple_variant(len, Wrap { inner: visitor, d })
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let d = self.d;
        self.inner
            .struct_variant(fields, Wrap { inner: visitor, d })
    }
}

/// Deserializes `T` through [`Limited`], as a seed for `bincode::Options::deserialize_seed`.
pub(crate) struct LimitedSeed<T> {
    pub _marker: std::marker::PhantomData<T>,
}

impl<'de, T: de::Deserialize<'de>> DeserializeSeed<'de> for LimitedSeed<T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        T::deserialize(Limited {
            inner: d,
            d: Depth {
                named: 0,
                nest: 0,
                funcs: 0,
            },
        })
    }
}
