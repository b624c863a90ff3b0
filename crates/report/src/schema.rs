//! The event types of the session log, each with a line on what it records. The full schema,
//! field by field, is docs/log-schema.md; a test keeps both in step with the engine.

/// `(event_type, what it records)`, in the order a turn meets them.
pub const EVENT_TYPES: &[(&str, &str)] = &[
    (
        "session_started",
        "a session began: the campaign, dice seed, model",
    ),
    ("session_resumed", "a stopped session was picked up again"),
    ("session_ended", "the session ended, and why"),
    (
        "events_undone",
        "the GM took back a run of events (kept, marked undone)",
    ),
    ("turn_started", "a turn began"),
    ("turn_completed", "a turn ended"),
    ("phase_started", "the turn entered a phase"),
    ("phase_completed", "the phase finished"),
    (
        "phase_failed",
        "an AI's step in the phase failed (model gave up or bad answer)",
    ),
    (
        "gm_failure_decision",
        "the GM's choice after a failure: retry, skip, take over",
    ),
    ("gm_narration", "the GM set the scene"),
    (
        "gm_flagged",
        "a check of the AI GM's words found a problem (sent back or kept)",
    ),
    ("whisper", "the GM told someone something in private"),
    (
        "scene_ended",
        "the GM ended a scene (a memory storage trigger)",
    ),
    (
        "time_passed",
        "the GM let days pass in the story: the in-game day moves on",
    ),
    (
        "seat_handed",
        "a player's seat changed hands: a person took it, or an AI plays it now",
    ),
    (
        "memory_retrieved",
        "what an AI recalled before deciding, with confidence",
    ),
    ("clarifying_questions", "an AI player's questions to the GM"),
    ("gm_answers", "the GM's answers"),
    ("clarification_ended", "the questions are over, and why"),
    (
        "strategic_intent",
        "a player's private strategy, directive and proposal",
    ),
    (
        "ooc_message",
        "a player's out-of-character message with its stance",
    ),
    ("gm_ooc", "the GM spoke into the OOC discussion"),
    (
        "consensus",
        "where the party stands after a discussion round, or how it settled",
    ),
    (
        "discussion_timed_out",
        "the discussion ran out of time: the party votes",
    ),
    (
        "discussion_stalled",
        "a discussion round changed no one's stance: the party votes",
    ),
    ("vote_cast", "a player's ballot in a forced vote"),
    ("directive", "a player's instruction to its character (P2C)"),
    (
        "context_trimmed",
        "a prompt was trimmed to fit the model's context",
    ),
    (
        "character_action",
        "what a character attempts (one per attempt)",
    ),
    ("validation", "the overreach check's verdict on an attempt"),
    (
        "gm_reviewed_action",
        "the GM set an action the validator gave up on",
    ),
    (
        "gm_adjudication",
        "the GM's ruling: roll, revise or no roll",
    ),
    (
        "gm_forced_result",
        "/success or /fail: the GM decided the next roll",
    ),
    (
        "dice_rolled",
        "a roll: pool, seed, faces, successes, outcome",
    ),
    ("gm_roll_override", "the GM kept or changed a roll"),
    ("gm_roll", "a /roll the GM made"),
    (
        "laser_feelings_question",
        "a character's LASER FEELINGS question",
    ),
    ("laser_feelings_answer", "the GM's honest answer"),
    (
        "insight_decision",
        "whether the player changes its action after the insight",
    ),
    ("gm_outcome", "the GM narrated what happened"),
    ("character_reaction", "a character's in-character reaction"),
    (
        "memory_storage",
        "what the memory step stored, or why it waited",
    ),
    (
        "model_call",
        "one model attempt: provider, prompt, reply, tokens, latency, error",
    ),
];

/// The line on what an event type records, if it is one of ours.
pub fn describe(event_type: &str) -> Option<&'static str> {
    EVENT_TYPES
        .iter()
        .find(|(t, _)| *t == event_type)
        .map(|(_, d)| *d)
}
