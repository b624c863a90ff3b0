//! An encounter run played online, in-process: [`EncounterGame`] on a scripted surface (no pages,
//! no server), the AI GM and the AI players from the smithy's recorded replies, Mara's person
//! from a script. What a game sends a surface is the whole of what the pages may show, so the
//! walls are checked here: Mara's whisper and an action sent back reach their own seat alone
//! (not the GM link's person: the GM is the model), the AI GM's drafts reach no page, and the
//! encounter's secret never reaches a line.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};
use troupe_campaign::CampaignDir;
use troupe_encounter::log::EncounterEvent;
use troupe_encounter::table::online::EncounterGame;
use troupe_encounter::table::start::{Opening, SeatSpec, begin, campaign_in, window_of};
use troupe_engine::surface::{Audience, Draft, GM, Playable, ScriptedSurface, Surface, WATCH};
use troupe_llm::{ChatModel, Gateway, ReplayModel, RetryPolicy, TokioSleeper};
use troupe_memory::MemoryStore;
use troupe_seat::Answer;

fn examples() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// The examples' party as the campaign, and a smithy run begun with Mara a person at p1 and two
/// AI players (as `troupe serve --encounter encounters/smithy.yaml --players human:Mara,ai,ai
/// --seed 12` begins it): the game that plays it on its recorded replies.
fn smithy(dir: &Path) -> Box<EncounterGame> {
    std::fs::copy(examples().join("party.json"), dir.join("campaign.json")).unwrap();
    let text = std::fs::read_to_string(examples().join("encounters/smithy.yaml")).unwrap();
    let spec = troupe_encounter::check::check(&text).unwrap();
    let replies = examples().join("encounters/smithy.replay.jsonl");
    let model: Arc<dyn ChatModel> = Arc::new(ReplayModel::from_file(replies).unwrap());
    let cdir = CampaignDir::new(dir);
    let memory = MemoryStore::open(&cdir.db()).unwrap();
    let players = vec![
        SeatSpec::Person {
            name: Some("Mara".into()),
        },
        SeatSpec::Ai { agent: None },
        SeatSpec::Ai { agent: None },
    ];
    let campaign = campaign_in(&cdir);
    let opening = Opening {
        spec: &spec,
        scene: None,
        players: &players,
        seed: 12,
        window: window_of(model.as_ref()),
        campaign: campaign.as_ref(),
    };
    let begun = begin(&cdir, &memory, opening).unwrap();
    Box::new(EncounterGame {
        store: begun.store,
        run: begun.run,
        gateway: Gateway::new(model, RetryPolicy::default(), Arc::new(TokioSleeper)),
        prompts: troupe_encounter::prompt::embedded().clone(),
        rounds: None,
        finish: Box::new(|_, _| Ok(())),
        gm: true,
    })
}

fn mara(values: &[(&str, &str)]) -> (String, Answer) {
    let values: Map<String, Value> = values
        .iter()
        .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
        .collect();
    ("p1".into(), Answer::Decide { values })
}

fn whisper(text: &str) -> (String, Answer) {
    let values = Map::from_iter([("text".to_string(), Value::String(text.into()))]);
    let name = "whisper".into();
    ("p1".into(), Answer::Command { name, values })
}

#[tokio::test]
async fn a_whisper_reaches_its_seat_alone_and_no_secret_reaches_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let game = smithy(dir.path());
    let surface = Arc::new(ScriptedSurface::new([
        whisper("Mara hides a spare key 7f3a"),
        mara(&[("action", "I offer to work the bellows myself")]),
        mara(&[]),
        mara(&[("action", "I keep pumping the bellows")]),
    ]));
    let on: Arc<dyn Surface> = surface.clone();
    let stopped = game.play(on).await;
    assert_eq!(stopped.as_deref(), Ok("the encounter is over"));
    assert_eq!(surface.unanswered(), 0);
    assert!(surface.asked().iter().all(|a| a.ready));
    let updates = surface.updates();
    let lines: Vec<_> = updates.iter().flat_map(|u| u.lines.iter()).collect();
    let whispered = lines
        .iter()
        .find(|l| l.text.contains("7f3a"))
        .expect("the whisper is a line");
    assert_eq!(whispered.kind, "whisper");
    assert_eq!(whispered.audience, Audience::Own("p1".into()));
    for reader in [GM, WATCH, "p2", "p3"] {
        assert!(!whispered.audience.includes(reader), "{reader}");
    }
    // Zara-7's first action said what happens: sent back to her seat alone.
    let sent_back = lines
        .iter()
        .find(|l| l.text.starts_with("Your action was sent back"))
        .expect("an action was sent back");
    assert!(matches!(&sent_back.audience, Audience::Own(s) if s != "p1"));
    assert!(!sent_back.audience.includes(GM));
    let rolled = lines
        .iter()
        .find(|l| l.text.contains("Mara rolls d20 [5, 15] → 15: success"))
        .expect("Mara's roll is a line");
    assert_eq!((rolled.kind, &rolled.audience), ("dice", &Audience::Table));
    // The spec's secret and its DCs are in the GM's prompt only.
    for l in &lines {
        assert!(
            !l.text.contains("SECRET") && !l.text.contains("DC"),
            "{l:?}"
        );
    }
    assert!(lines.windows(2).all(|w| w[0].id < w[1].id));
    let ended = updates.iter().rev().find_map(|u| u.ended.clone());
    assert!(
        matches!(ended, Some(Some(_))),
        "the run resolved: {ended:?}"
    );
    // Mara's sheet is her seat's view: her character, never the encounter's secret.
    let sheet = updates
        .iter()
        .flat_map(|u| u.sheets.iter())
        .rfind(|(s, _)| s == "p1")
        .map(|(_, v)| v.to_string())
        .unwrap_or_default();
    assert!(
        sheet.contains("Mara") && !sheet.contains("SECRET"),
        "{sheet}"
    );
    drop(updates);
    // Every ask a page got, whole as it goes on the wire (the seat's view an AI at that seat
    // makes its prompt of): no GM note and none of the hidden goals.
    for asked in surface.asked() {
        let wire = serde_json::to_string(&asked.ask).unwrap();
        for secret in [
            "SECRET",
            "two inks",
            "The forge burns again",
            "crow on the chimney",
        ] {
            assert!(!wire.contains(secret), "{secret} in {wire}");
        }
    }
    let gm_drafts = surface.drafts().into_iter().filter(|(s, _, _)| s == GM);
    assert!(gm_drafts.into_iter().all(|(_, _, d)| d == Draft::Unshown));
}

/// The smithy's run in `dir` reopened as a new game (a restarted server), on the recorded
/// replies from their start.
fn reopened(dir: &Path, run: u32) -> Box<EncounterGame> {
    let replies = examples().join("encounters/smithy.replay.jsonl");
    let model: Arc<dyn ChatModel> = Arc::new(ReplayModel::from_file(replies).unwrap());
    Box::new(EncounterGame {
        store: troupe_encounter::table::EncounterStore::open(dir).unwrap(),
        run,
        gateway: Gateway::new(model, RetryPolicy::default(), Arc::new(TokioSleeper)),
        prompts: troupe_encounter::prompt::embedded().clone(),
        rounds: None,
        finish: Box::new(|_, _| Ok(())),
        gm: true,
    })
}

/// A person's action that says what happens is sent back once, by the rule an AI player's is
/// (the same event, the same ask): kept in the log, so a table reopened after it asks for the
/// rewrite, and an empty rewrite sends the action as it was, unchecked.
#[tokio::test]
async fn a_persons_sent_back_action_is_asked_again_after_the_table_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let game = smithy(dir.path());
    let run = game.run;
    let overreach = "I punch the factor and he falls to the floor, unconscious";
    let first = Arc::new(ScriptedSurface::new([mara(&[("action", overreach)])]));
    let on: Arc<dyn Surface> = first.clone();
    let _ = game.play(on).await;
    let again = Arc::new(ScriptedSurface::new([mara(&[("action", "")])]));
    let on: Arc<dyn Surface> = again.clone();
    let _ = reopened(dir.path(), run).play(on).await;

    let asked = again.asked();
    let rewrite = &asked
        .iter()
        .find(|a| a.ask.seat == "p1")
        .expect("Mara is asked")
        .ask;
    assert_eq!(rewrite.decision, "action_again");
    assert_eq!(rewrite.shown, vec![format!("You wrote: {overreach}")]);
    assert!(rewrite.error.as_deref().is_some_and(|e| !e.is_empty()));
    let store = troupe_encounter::table::EncounterStore::open(dir.path()).unwrap();
    let maras: Vec<_> = store
        .events(run)
        .unwrap()
        .into_iter()
        .filter_map(|e| match e.event {
            EncounterEvent::ActionSentBack { seat, text, .. } if seat == "p1" => {
                Some(("sent back", text))
            }
            EncounterEvent::PlayerActed { seat, text } if seat == "p1" => Some(("acted", text)),
            _ => None,
        })
        .collect();
    assert_eq!(
        maras,
        [
            ("sent back", overreach.to_string()),
            ("acted", overreach.to_string())
        ]
    );
}
