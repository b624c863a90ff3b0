//! Streamed replies: reading a server-sent-event body as it arrives, and making a partial JSON
//! draft readable for a person.

use crate::ProviderError;
use crate::http::{status_error, transport_error};
use crate::sse::SseParser;

/// What a streaming request got back.
pub(crate) enum Streamed {
    /// The server answered with an ordinary body (it ignored `stream: true`, as some proxies
    /// and servers do): the caller parses it as a non-streamed reply.
    Whole(String),
    /// Events were read to the end; `done` is whether the handler saw the format's end mark.
    /// A stream that stops before it is cut off, just like a body that stops short.
    Events { done: bool },
}

/// What an event handler wants next.
pub(crate) enum Flow {
    More,
    /// The format's end mark (`[DONE]`, `message_stop`): stop reading.
    Done,
}

/// Sends a request that asked for a stream. A non-2xx status becomes its provider error as
/// for a whole body; an event-stream body is read chunk by chunk, each event's data handed to
/// `on_event` as soon as it is complete.
pub(crate) async fn send_for_events(
    request: reqwest::RequestBuilder,
    key_env: Option<&str>,
    on_event: &mut (dyn FnMut(&str) -> Result<Flow, ProviderError> + Send),
) -> Result<Streamed, ProviderError> {
    let mut response = request.send().await.map_err(|e| transport_error(&e))?;
    let status = response.status().as_u16();
    let is_stream = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !(200..300).contains(&status) || !is_stream {
        let headers = response.headers().clone();
        let text = response.text().await.map_err(|e| transport_error(&e))?;
        if !(200..300).contains(&status) {
            return Err(status_error(status, &headers, &text, key_env));
        }
        return Ok(Streamed::Whole(text));
    }
    let mut parser = SseParser::default();
    while let Some(chunk) = response.chunk().await.map_err(|e| transport_error(&e))? {
        for data in parser.feed(&chunk) {
            if let Flow::Done = on_event(&data)? {
                return Ok(Streamed::Events { done: true });
            }
        }
    }
    if let Some(data) = parser.finish()
        && let Flow::Done = on_event(&data)?
    {
        return Ok(Streamed::Events { done: true });
    }
    Ok(Streamed::Events { done: false })
}

/// The error for a stream that ended before its end mark.
pub(crate) fn cut_off(received: usize) -> ProviderError {
    ProviderError::Interrupted(format!(
        "the stream ended after {received} characters, before the reply was complete"
    ))
}

/// The text a person can read in a draft that may be a partial JSON object: the string values
/// (not the keys), one per line, escapes decoded, the last one possibly unfinished. Text that
/// is not JSON is returned as it is.
pub fn readable_draft(draft: &str) -> String {
    if !draft.trim_start().starts_with('{') {
        return draft.to_string();
    }
    let mut out = String::new();
    // Containers open around the cursor: true for an object (its strings alternate key, value).
    let mut objects: Vec<bool> = Vec::new();
    let mut expect_key = false;
    let mut chars = draft.chars();
    while let Some(c) = chars.next() {
        match c {
            '{' => {
                objects.push(true);
                expect_key = true;
            }
            '[' => {
                objects.push(false);
                expect_key = false;
            }
            '}' | ']' => {
                objects.pop();
                expect_key = false;
            }
            ',' => expect_key = objects.last().copied().unwrap_or(false),
            ':' => expect_key = false,
            '"' => {
                let value = !expect_key;
                if value && !out.is_empty() && !out.ends_with('\n') {
                    out.push('\n');
                }
                read_string(&mut chars, value.then_some(&mut out));
            }
            _ => {}
        }
    }
    out
}

/// Reads a JSON string's body up to its closing quote (or the end of the draft), appending the
/// decoded text to `out` when given.
fn read_string(chars: &mut std::str::Chars<'_>, mut out: Option<&mut String>) {
    while let Some(c) = chars.next() {
        let decoded = match c {
            '"' => return,
            '\\' => match chars.next() {
                Some('n') => '\n',
                Some('t') => '\t',
                Some('u') => {
                    let hex: String = chars.by_ref().take(4).collect();
                    u32::from_str_radix(&hex, 16)
                        .ok()
                        .and_then(char::from_u32)
                        .unwrap_or('\u{fffd}')
                }
                Some(other) => other,
                None => return,
            },
            c => c,
        };
        if let Some(out) = out.as_deref_mut() {
            out.push(decoded);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_json_draft_reads_as_its_values() {
        let draft = r#"{"action": "I dive for the \"console\"", "dialogue": "Hold on!\nNow", "tags": ["a", "b"], "n": 3, "risk": "hi"#;
        assert_eq!(
            readable_draft(draft),
            "I dive for the \"console\"\nHold on!\nNow\na\nb\nhi"
        );
        assert_eq!(readable_draft(r#"{"act"#), "");
        assert_eq!(readable_draft("plain words"), "plain words");
        assert_eq!(readable_draft(r#"{"x": "caf\u00e9"}"#), "café");
    }
}
