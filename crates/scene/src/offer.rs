//! How every surface opens a scene's table, and the table commands its asks offer.

use troupe_seat::offer::{FileOption, Offer, OptionKind, StartOption};

/// Scenes (seed 004): the engine keeps the truth, a model proposes, narration comes from facts.
pub const OFFER: Offer = Offer {
    game: "scene",
    command: "scene",
    title: "Scenes (seed 004)",
    file: FileOption {
        name: "file",
        help: "The scene file, in the campaign directory",
        required: true,
    },
    options: &[StartOption {
        name: "speaker",
        help: "Who speaks for the characters: a person or an AI (the GM can hand over later)",
        kind: OptionKind::Choice(&[("person", "a person"), ("ai", "an AI")]),
        default: "person",
    }],
    table_commands: &[
        ("state", "What your character perceives (a scene)"),
        ("undo", "Take back the last turn (the GM)"),
        ("gm", "The GM's view of a scene (the GM)"),
        ("effects", "A scene's effects as JSON (the GM)"),
        ("note", "A note on a scene's card (the GM)"),
        ("promote", "Promote a scene's card (the GM)"),
        ("end", "End the scene (the GM)"),
        ("quit", "Stop the scene, saved"),
    ],
};
