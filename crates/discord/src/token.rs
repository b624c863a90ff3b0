//! The bot's token: read from the environment only, never written to a file, a log or an error
//! message (its `Debug` and `Display` say only that it is hidden).

use std::fmt;

/// The environment variable `troupe discord` reads the token from.
pub const TOKEN_VAR: &str = "TROUPE_DISCORD_TOKEN";

/// A bot token. Only the REST client's `Authorization` header and the gateway's identify read
/// it.
#[derive(Clone)]
pub struct Token(String);

impl Token {
    /// The token in `var`; an error naming the variable (never its value) when it is missing or
    /// blank.
    pub fn from_env(var: &str) -> Result<Token, crate::Error> {
        match std::env::var(var) {
            Ok(t) => Token::new(&t).ok_or(crate::Error::NoToken {
                var: var.to_string(),
            }),
            Err(_) => Err(crate::Error::NoToken {
                var: var.to_string(),
            }),
        }
    }

    /// A token from its text (a leading `Bot ` is taken off); None when blank.
    pub fn new(text: &str) -> Option<Token> {
        let t = text.trim();
        let t = t.strip_prefix("Bot ").unwrap_or(t).trim();
        (!t.is_empty()).then(|| Token(t.to_string()))
    }

    pub(crate) fn header(&self) -> String {
        format!("Bot {}", self.0)
    }

    pub(crate) fn bare(&self) -> String {
        self.0.clone()
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(hidden)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_never_shows_in_debug() {
        let t = Token::new("Bot abc.def.SECRET").unwrap_or_else(|| Token(String::new()));
        assert!(!format!("{t:?}").contains("SECRET"));
        assert_eq!(t.header(), "Bot abc.def.SECRET");
        assert!(Token::new("  ").is_none());
    }
}
