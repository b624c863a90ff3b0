//! Reading one logged event as its game's own type, whatever troupe wrote it.
//!
//! A log is a published format and outlives the build that reads it: a newer troupe writes
//! event kinds this one has never heard of, and an older reader must still read the rest of the
//! log. So a row is read as [`Known::Event`] (the game's `Envelope`, typed), as
//! [`Known::Unknown`] (a kind this build does not know: kept whole, never an error), or as
//! [`Known::Malformed`] (a kind this build does know whose fields do not read as that kind).
//!
//! The last is not folded into "unknown": a known kind that does not read is damage or a
//! writer's bug, and dropping it silently would make every figure after it quietly wrong. A
//! reader keeps it with the reason and says so: a fold that needs every event (an encounter's
//! rounds) gives up where it would guess, a reader that shows events shows it as unreadable.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// One logged event (a row of a game's log, envelope and event together), read as `E`.
#[derive(Clone, Debug, PartialEq)]
pub enum Known<E> {
    /// A kind this build knows, read whole.
    Event(E),
    /// A kind this build does not know (written by a newer troupe): its kind and the whole row.
    Unknown { event_type: String, body: Value },
    /// A kind this build knows (or a row with no kind at all) that does not read as `E`: the
    /// row and why, so that the reader can say so instead of skipping it.
    Malformed {
        event_type: String,
        body: Value,
        error: String,
    },
}

impl<E: DeserializeOwned> Known<E> {
    /// Read one row. `E` is a game's envelope, whose event is tagged by `event_type`.
    pub fn read(row: &Value) -> Known<E> {
        let event_type = row
            .get("event_type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        match E::deserialize(row) {
            Ok(event) => Known::Event(event),
            Err(e) if !event_type.is_empty() && names_unknown_kind(&e, &event_type) => {
                Known::Unknown {
                    event_type,
                    body: row.clone(),
                }
            }
            Err(e) => Known::Malformed {
                event_type,
                body: row.clone(),
                error: e.to_string(),
            },
        }
    }

    /// Every row, in order.
    pub fn read_all(rows: &[Value]) -> Vec<Known<E>> {
        rows.iter().map(Known::read).collect()
    }
}

impl<E> Known<E> {
    /// The event, when its kind is known and it read.
    pub fn event(&self) -> Option<&E> {
        match self {
            Known::Event(e) => Some(e),
            _ => None,
        }
    }
}

impl<E: Clone> Known<E> {
    /// Every event this build knows, in order (a newer troupe's kinds left out), for a reader
    /// whose fold needs every event it knows; `Err` with the first row of a known kind that
    /// does not read: its kind and why.
    pub fn all_known(read: &[Known<E>]) -> Result<Vec<E>, (&str, &str)> {
        let mut known = Vec::with_capacity(read.len());
        for row in read {
            match row {
                Known::Event(e) => known.push(e.clone()),
                Known::Unknown { .. } => {}
                Known::Malformed {
                    event_type, error, ..
                } => return Err((event_type, error)),
            }
        }
        Ok(known)
    }
}

/// Whether serde refused the row because its tag is not one of `E`'s kinds. Serde reports an
/// unknown tag of an internally tagged enum through `de::Error::unknown_variant`, whose message
/// begins "unknown variant `KIND`"; it names the row's own kind, so a bad tag deeper in a known
/// kind (a nested enum's) is not taken for it. The tests pin the wording on every game's log.
fn names_unknown_kind(e: &serde_json::Error, kind: &str) -> bool {
    e.to_string()
        .starts_with(&format!("unknown variant `{kind}`"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Clone, Debug, PartialEq, Deserialize)]
    #[serde(tag = "event_type", rename_all = "snake_case")]
    enum Ev {
        Rolled { value: u32 },
        Said { mood: Mood },
    }

    #[derive(Clone, Debug, PartialEq, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Mood {
        Calm,
    }

    #[derive(Clone, Debug, PartialEq, Deserialize)]
    struct Env {
        seq: u64,
        #[serde(flatten)]
        event: Ev,
    }

    #[test]
    fn a_known_kind_reads_as_its_type() {
        let row = json!({"seq": 3, "event_type": "rolled", "value": 5, "added_later": true});
        assert_eq!(
            Known::<Env>::read(&row),
            Known::Event(Env {
                seq: 3,
                event: Ev::Rolled { value: 5 }
            })
        );
    }

    #[test]
    fn a_kind_this_build_does_not_know_reads_as_unknown_with_its_row() {
        let row = json!({"seq": 4, "event_type": "weather_changed", "sky": "red"});
        assert_eq!(
            Known::<Env>::read(&row),
            Known::Unknown {
                event_type: "weather_changed".into(),
                body: row.clone()
            }
        );
    }

    /// A known kind with a field that does not read, a nested enum's unknown word included
    /// (it names a variant, but not the row's kind), and a row with no kind: malformed, with
    /// why, never unknown and never dropped.
    #[test]
    fn a_known_kind_that_does_not_read_is_malformed_not_unknown() {
        for row in [
            json!({"seq": 5, "event_type": "rolled", "value": "five"}),
            json!({"seq": 6, "event_type": "said", "mood": "furious"}),
            json!({"seq": 7}),
        ] {
            match Known::<Env>::read(&row) {
                Known::Malformed { body, error, .. } => {
                    assert_eq!(body, row);
                    assert!(!error.is_empty());
                }
                other => panic!("{row}: {other:?}"),
            }
        }
    }

    /// The events a fold may use: a newer troupe's kind left out, the first damaged known
    /// kind refused with its kind and why.
    #[test]
    fn all_known_leaves_out_the_unknown_and_refuses_the_damaged() {
        let rows = [
            json!({"seq": 1, "event_type": "rolled", "value": 5}),
            json!({"seq": 2, "event_type": "weather_changed", "sky": "red"}),
            json!({"seq": 3, "event_type": "rolled", "value": 6}),
        ];
        let read = Known::<Env>::read_all(&rows);
        let seqs: Vec<u64> = Known::all_known(&read)
            .unwrap()
            .iter()
            .map(|e| e.seq)
            .collect();
        assert_eq!(seqs, [1, 3]);

        let damaged = [
            rows[0].clone(),
            json!({"seq": 4, "event_type": "rolled", "value": "x"}),
        ];
        let read = Known::<Env>::read_all(&damaged);
        let (kind, why) = Known::all_known(&read).unwrap_err();
        assert_eq!(kind, "rolled");
        assert!(!why.is_empty());
    }
}
