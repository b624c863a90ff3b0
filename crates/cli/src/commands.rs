//! Slash commands, available at every GM prompt.

use troupe_engine::{StoryMark, WhisperScope};
use troupe_rules::DiceExpr;

const WHISPER_USAGE: &str = "usage: /whisper AGENT|all --player-only|--character-only|--both TEXT";

fn whisper(arg: &str) -> Result<Command, String> {
    let mut parts = arg.split_whitespace();
    let (Some(to), Some(flag)) = (parts.next(), parts.next()) else {
        return Err(WHISPER_USAGE.into());
    };
    let scope = match flag {
        "--player-only" => WhisperScope::PlayerOnly,
        "--character-only" => WhisperScope::CharacterOnly,
        "--both" => WhisperScope::Both,
        other => return Err(format!("{other} is not a scope. {WHISPER_USAGE}")),
    };
    let text = parts.collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return Err(format!("what should be whispered? {WHISPER_USAGE}"));
    }
    let to = (!to.eq_ignore_ascii_case("all")).then(|| to.to_string());
    Ok(Command::Whisper { to, scope, text })
}

pub const HELP: &str = "\
Commands (at any prompt):
  /roll NdM+K   roll dice, e.g. /roll 2d6+3, /roll d20, /roll 1d6-1
  /success      the next roll succeeds (2 successes), whatever the dice say
  /fail         the next roll fails (0 successes), whatever the dice say
  /whisper AGENT|all --player-only|--character-only|--both TEXT
                tell one AI (or the whole table) something in private: the player
                only (its strategy; never any character), the character only, or both
  /scene [TITLE]  end the scene here (what was played goes into memory)
  /time DAYS    let days pass in the story, e.g. /time 3 (the in-game day moves on)
  /info         character sheets, ship, day, turn and phase
  /help         this list
  /quit         save and end the session";

#[derive(Debug, PartialEq)]
pub enum Command {
    Roll(DiceExpr),
    /// `to: None` is the whole table.
    Whisper {
        to: Option<String>,
        scope: WhisperScope,
        text: String,
    },
    Success,
    Fail,
    /// `/scene` or `/time`.
    Mark(StoryMark),
    Info,
    Help,
    Quit,
}

/// A slash command, an error to show, or None for ordinary input.
pub fn parse(line: &str) -> Option<Result<Command, String>> {
    let line = line.trim();
    let rest = line.strip_prefix('/')?;
    let (name, arg) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    Some(match name.to_ascii_lowercase().as_str() {
        "roll" if arg.trim().is_empty() => Err("/roll needs dice, e.g. /roll 2d6+3".into()),
        "roll" => arg
            .trim()
            .parse()
            .map(Command::Roll)
            .map_err(|e| format!("{e}")),
        "whisper" => whisper(arg),
        "scene" => Ok(Command::Mark(StoryMark::scene_ended(Some(arg)))),
        "time" => StoryMark::parse_days(arg)
            .map(|days| Command::Mark(StoryMark::TimePassed { days }))
            .map_err(|e| format!("/time needs {e}")),
        "success" => Ok(Command::Success),
        "fail" => Ok(Command::Fail),
        "info" => Ok(Command::Info),
        "help" => Ok(Command::Help),
        "quit" | "exit" => Ok(Command::Quit),
        other => Err(format!("unknown command /{other}. {HELP}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse() {
        assert_eq!(parse("/quit"), Some(Ok(Command::Quit)));
        assert_eq!(parse("  /SUCCESS "), Some(Ok(Command::Success)));
        assert!(matches!(parse("/roll 2d6+3"), Some(Ok(Command::Roll(_)))));
        assert_eq!(parse("I open the door"), None);
    }

    #[test]
    fn the_gm_ends_scenes_and_lets_days_pass() {
        let mark = |m| Some(Ok(Command::Mark(m)));
        assert_eq!(parse("/scene"), mark(StoryMark::SceneEnded { title: None }));
        assert_eq!(
            parse("/scene  The heist "),
            mark(StoryMark::SceneEnded {
                title: Some("The heist".into())
            })
        );
        assert_eq!(parse("/time 3"), mark(StoryMark::TimePassed { days: 3 }));
        assert_eq!(
            parse("/time 14 days"),
            mark(StoryMark::TimePassed { days: 14 })
        );
        for bad in ["/time", "/time 0", "/time -2", "/time soon", "/time 99999"] {
            let Some(Err(msg)) = parse(bad) else {
                panic!("{bad}")
            };
            assert!(msg.contains("/time needs a number of days"), "{bad}: {msg}");
            assert!(msg.contains("e.g. 3"), "{bad}: {msg}");
        }
    }

    #[test]
    fn bad_commands_explain_themselves() {
        let Some(Err(msg)) = parse("/roll") else {
            panic!()
        };
        assert!(msg.contains("2d6+3"));
        let Some(Err(msg)) = parse("/dance") else {
            panic!()
        };
        assert!(msg.contains("unknown command /dance") && msg.contains("/roll"));
        assert!(matches!(parse("/roll banana"), Some(Err(_))));
    }

    #[test]
    fn whispers_parse_with_a_scope() {
        assert_eq!(
            parse("/whisper kai --player-only The captain  is a spy."),
            Some(Ok(Command::Whisper {
                to: Some("kai".into()),
                scope: WhisperScope::PlayerOnly,
                text: "The captain is a spy.".into()
            }))
        );
        assert!(matches!(
            parse("/whisper ALL --both hi"),
            Some(Ok(Command::Whisper { to: None, .. }))
        ));
        for bad in [
            "/whisper",
            "/whisper kai",
            "/whisper kai --loud x",
            "/whisper kai --both",
        ] {
            let Some(Err(msg)) = parse(bad) else {
                panic!("{bad}")
            };
            assert!(msg.contains("/whisper AGENT"), "{bad}: {msg}");
        }
    }
}
