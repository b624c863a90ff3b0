//! How every surface opens an encounter's table, and the table commands its asks offer.

use troupe_seat::offer::{FileOption, Offer, OptionKind, StartOption};

/// Encounters (seed 003): an AI GM runs a prepared encounter for people and AI players.
pub const OFFER: Offer = Offer {
    game: "encounter",
    command: "encounter",
    title: "Encounters (seed 003)",
    file: FileOption {
        name: "spec",
        help: "The encounter spec, a file in the campaign directory",
        required: true,
    },
    options: &[StartOption {
        name: "players",
        help: "Who sits: human:NAME, ai, ai:AGENT, comma-separated",
        kind: OptionKind::List,
        default: "",
    }],
    table_commands: &[
        ("whisper", "Whisper to the GM"),
        ("undo", "Take back the last round (the GM)"),
    ],
};
