//! Server-sent events, as far as the OpenAI and Anthropic streams use them: `data:` lines,
//! joined per event, events ended by a blank line. `event:` names are skipped (both formats
//! repeat the type inside the data), and so are comments (`: keep-alive`), `id:` and `retry:`.
//!
//! Written here rather than taken from a crate: this subset is a few dozen lines, and the
//! crates that parse it (eventsource-stream and its kin) want reqwest's `stream` feature and a
//! futures `Stream` where a loop over `Response::chunk` does.

/// Splits a byte stream into the data of its events, whatever the chunk boundaries.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    /// Bytes of a line not yet ended (a chunk may end mid-line, even mid-character).
    line: Vec<u8>,
    /// The `data:` lines of the event being read.
    data: Vec<String>,
}

impl SseParser {
    /// Feeds bytes; returns the data of each event they completed, in order.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut events = Vec::new();
        for &b in bytes {
            if b != b'\n' {
                self.line.push(b);
                continue;
            }
            let line = std::mem::take(&mut self.line);
            let line = line.strip_suffix(b"\r").unwrap_or(&line);
            if let Some(event) = self.end_line(&String::from_utf8_lossy(line)) {
                events.push(event);
            }
        }
        events
    }

    /// The stream ended: the data of an event the server did not end with a blank line.
    pub(crate) fn finish(&mut self) -> Option<String> {
        let line = std::mem::take(&mut self.line);
        if !line.is_empty() {
            let _ = self.end_line(&String::from_utf8_lossy(&line));
        }
        self.dispatch()
    }

    fn end_line(&mut self, line: &str) -> Option<String> {
        if line.is_empty() {
            return self.dispatch();
        }
        if let Some(value) = line.strip_prefix("data:") {
            self.data
                .push(value.strip_prefix(' ').unwrap_or(value).to_string());
        }
        None
    }

    fn dispatch(&mut self) -> Option<String> {
        if self.data.is_empty() {
            return None;
        }
        Some(std::mem::take(&mut self.data).join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_survive_any_chunking() {
        let stream = "event: a\ndata: {\"x\":\"é\"}\n\n: keep-alive\n\ndata: one\r\ndata: two\r\n\r\ndata: [DONE]\n\n";
        let whole = SseParser::default().feed(stream.as_bytes());
        assert_eq!(whole, ["{\"x\":\"é\"}", "one\ntwo", "[DONE]"]);
        for size in 1..8 {
            let mut parser = SseParser::default();
            let pieces: Vec<String> = stream
                .as_bytes()
                .chunks(size)
                .flat_map(|c| parser.feed(c))
                .collect();
            assert_eq!(pieces, whole, "chunks of {size} bytes");
            assert_eq!(parser.finish(), None);
        }
    }

    #[test]
    fn an_unterminated_last_event_is_handed_over_at_the_end() {
        let mut parser = SseParser::default();
        assert!(parser.feed(b"data: {\"a\":1}\n\ndata: tail").len() == 1);
        assert_eq!(parser.finish().as_deref(), Some("tail"));
    }
}
