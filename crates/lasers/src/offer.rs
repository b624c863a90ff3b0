//! How every surface opens a Lasers & Feelings table, and the table commands its asks offer.

use troupe_seat::offer::{FileOption, Offer, OptionKind, StartOption};

/// Lasers & Feelings, as the surfaces open it. A person runs the game unless an AI GM is asked
/// for: the game's first table is a GM's with AI players (the web table and Discord alike).
pub const OFFER: Offer = Offer {
    game: "lasers",
    command: "session",
    title: "Lasers & Feelings sessions",
    file: FileOption {
        name: "file",
        help: "The campaign file, in the campaign directory (empty: campaign.json)",
        required: false,
    },
    options: &[
        StartOption {
            name: "gm",
            help: "Who runs it: a person (who takes the GM's seat) or an AI",
            kind: OptionKind::Choice(&[("person", "a person"), ("ai", "an AI")]),
            default: "person",
        },
        StartOption {
            name: "persons",
            help: "Characters people play (agent ids, comma-separated)",
            kind: OptionKind::List,
            default: "",
        },
    ],
    table_commands: &[
        (
            "whisper",
            "Whisper (to the GM, or as the GM: `to scope text`)",
        ),
        ("roll", "Roll dice (the GM: e.g. 2d6+1)"),
        ("success", "The next roll succeeds (the GM)"),
        ("fail", "The next roll fails (the GM)"),
        ("scene", "End the scene (the GM)"),
        ("time", "Let days pass (the GM)"),
        ("undo", "Take back the last decision or round (the GM)"),
        ("end", "End the session (the GM)"),
    ],
};
