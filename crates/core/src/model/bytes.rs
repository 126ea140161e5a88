//! Exact bytes in JSON: a string when the bytes are UTF-8, an array of numbers when they are
//! not. Both read back to the same bytes, so argv, environments and paths survive a snapshot
//! exactly, and stay readable in the common case.

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

/// Bytes that serialise as a string when they can, and as numbers when they cannot.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ByteString(pub Vec<u8>);

impl Serialize for ByteString {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(&self.0) {
            Ok(text) => s.serialize_str(text),
            Err(_) => s.collect_seq(self.0.iter()),
        }
    }
}

impl<'de> Deserialize<'de> for ByteString {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ByteString;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or an array of bytes")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ByteString, E> {
                Ok(ByteString(v.as_bytes().to_vec()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ByteString, A::Error> {
                let mut out = Vec::new();
                while let Some(b) = seq.next_element::<u8>()? {
                    out.push(b);
                }
                Ok(ByteString(out))
            }
        }
        d.deserialize_any(V)
    }
}

impl From<&[u8]> for ByteString {
    fn from(b: &[u8]) -> Self {
        ByteString(b.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_stays_text_and_odd_bytes_survive() {
        let t = ByteString(b"PATH=/usr/bin".to_vec());
        assert_eq!(serde_json::to_string(&t).unwrap(), "\"PATH=/usr/bin\"");
        let odd = ByteString(vec![b'a', 0xff, 0]);
        let json = serde_json::to_string(&odd).unwrap();
        assert_eq!(json, "[97,255,0]");
        assert_eq!(serde_json::from_str::<ByteString>(&json).unwrap(), odd);
        assert_eq!(
            serde_json::from_str::<ByteString>("\"é\"").unwrap().0,
            "é".as_bytes()
        );
        assert!(serde_json::from_str::<ByteString>("[256]").is_err());
    }
}
