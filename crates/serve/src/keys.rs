//! Seat keys: 128 random bits per seat link, kept only as their SHA-256. A key is shown once,
//! in the link printed when the table opens, and is never written to a log, an event or a file.

use sha2::{Digest, Sha256};

/// A fresh key: 16 bytes from the operating system's generator, as 32 hex digits.
pub fn new_key() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)?;
    Ok(hex(&bytes))
}

/// What is stored of a key.
pub fn hash(key: &str) -> String {
    hex(&Sha256::digest(key.as_bytes()))
}

/// Whether a presented key is the one whose hash is stored. Compares hashes, so the time taken
/// says nothing about the key.
pub fn matches(presented: &str, stored_hash: &str) -> bool {
    let h = hash(presented);
    h.len() == stored_hash.len()
        && h.bytes()
            .zip(stored_hash.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_128_random_bits_and_only_its_hash_matches() {
        let (a, b) = (new_key().unwrap_or_default(), new_key().unwrap_or_default());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
        let stored = hash(&a);
        assert_ne!(stored, a);
        assert!(matches(&a, &stored));
        assert!(!matches(&b, &stored));
        assert!(!matches("", &stored));
    }
}
