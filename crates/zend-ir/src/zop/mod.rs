//! The `.zop` format: a lossless, readable text form of a [`Script`](crate::Script), and a
//! binary form (bincode).

use crate::model::Script;

/// Magic prefix of the binary form, followed by a format version.
const BINARY_MAGIC: &[u8; 8] = b"ZOPBIN\x00\x01";

/// Why a binary `.zop` could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BinaryError {
    #[error("not a binary .zop file (bad magic)")]
    BadMagic,
    #[error("corrupt binary .zop: {0}")]
    Decode(#[from] bincode::Error),
}

/// Prints a script as `.zop` text.
pub fn print(script: &Script) -> String {
    // Placeholder until the text printer lands: the Debug form keeps the data readable.
    format!("{script:#?}\n")
}

/// Encodes a script in the binary form.
pub fn to_binary(script: &Script) -> Vec<u8> {
    let mut out = BINARY_MAGIC.to_vec();
    bincode::serialize_into(&mut out, script).expect("serializing to a Vec cannot fail");
    out
}

/// Decodes the binary form.
pub fn from_binary(bytes: &[u8]) -> Result<Script, BinaryError> {
    let body = bytes.strip_prefix(BINARY_MAGIC).ok_or(BinaryError::BadMagic)?;
    Ok(bincode::DefaultOptions::new()
        .with_fixint_encoding()
        .allow_trailing_bytes()
        .with_limit(body.len() as u64 * 64 + 1024)
        .deserialize(body)?)
}

use bincode::Options;
