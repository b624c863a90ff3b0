//! The report's sections on the encounter runs and scenes, and the audit of every game's model
//! calls. Each run is a story told in rows like the sessions' transcript: on the left what the
//! players saw and heard, on the right what happened behind the screen (the checks' DCs, the
//! leaks caught, the replies refused, the model calls with what each model was shown).
//! Everything a person or a model wrote is escaped.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::Value;

use crate::audit::Audit;
use crate::calls::GameCalls;
use crate::ev::{num, opt, s, seq, ty};
use crate::games::{Game, GameRun, Games};
use crate::html::details;
use crate::known::Known;
use crate::svg::esc;
use serde::Serialize;
use troupe_encounter::leaks::Leak;
use troupe_encounter::log::{
    EncounterEvent, Envelope as EncounterEnvelope, ModelCall, Seat, SeatKind,
};
use troupe_encounter::spec::Goal;
use troupe_encounter::tools::CheckCall;
use troupe_rules::D20Roll;
use troupe_scene::{Envelope as SceneEnvelope, SceneEvent, ToolCall};

/// The nav links to the games' sections (with a trailing separator), or "".
pub(crate) fn nav_links(games: &Games) -> String {
    let mut o = String::new();
    if !games.encounters.is_empty() {
        o.push_str("<a href=\"#encounters\">encounter runs</a> · ");
    }
    if !games.scenes.is_empty() {
        o.push_str("<a href=\"#scenes\">scenes</a> · ");
    }
    o
}

/// The nav of a report without sessions.
pub(crate) fn nav(o: &mut String, games: &Games) {
    let links = nav_links(games);
    let _ = write!(
        o,
        "<p class=\"meta\">No Lasers &amp; Feelings sessions in this campaign yet. Sections: <a href=\"#summary\">summary</a> · {}</p>",
        links.trim_end_matches(" · ")
    );
}

fn card(o: &mut String, value: &str, label: &str) {
    let _ = write!(
        o,
        "<div class=\"card\"><b>{}</b><span>{}</span></div>",
        esc(value),
        esc(label)
    );
}

/// The summary of a report without sessions: the runs, their model calls, the audit.
pub(crate) fn summary(o: &mut String, games: &Games, au: &Audit) {
    o.push_str("<h2 id=\"summary\">Summary</h2><div class=\"cards\">");
    card(o, &games.encounters.len().to_string(), "encounter runs");
    card(o, &games.scenes.len().to_string(), "scenes");
    let calls: u32 = au.games.iter().map(|g| g.calls).sum();
    card(o, &calls.to_string(), "model calls");
    card(
        o,
        if au.complete() { "complete" } else { "gaps" },
        "log audit: every model call keeps what it was shown",
    );
    o.push_str("</div>");
    calls_audit(o, au);
}

fn game_name(g: &GameCalls) -> &str {
    match g.game.as_str() {
        "lasers_and_feelings" => "Lasers & Feelings sessions",
        "encounter" => "encounter runs",
        "scene" => "scenes",
        other => other,
    }
}

/// The model calls of every game, and what their logs lack.
pub(crate) fn calls_audit(o: &mut String, au: &Audit) {
    if au.games.is_empty() {
        return;
    }
    o.push_str("<h3 id=\"calls\">Model calls audited, per game</h3><table><tr><th>game</th><th>sessions / runs</th><th>calls</th><th>attempts</th><th>answered</th><th>attempts keeping the request shown</th><th>tokens in</th><th>tokens out</th></tr>");
    for g in &au.games {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{}\">{} of {}</td><td>{}</td><td>{}</td></tr>",
            esc(game_name(g)),
            g.runs,
            g.calls,
            g.attempts,
            g.answered,
            if g.with_request == g.attempts {
                "ok"
            } else {
                "bad"
            },
            g.with_request,
            g.attempts,
            g.tokens_in,
            g.tokens_out
        );
    }
    o.push_str("</table>");
    if au.run_gaps.is_empty() {
        return;
    }
    o.push_str("<p class=\"bad\">The encounters' and scenes' logs have gaps:</p><ul>");
    for g in &au.run_gaps {
        let _ = write!(
            o,
            "<li><a href=\"#{}\">{} run {}, event {}</a>: {}</li>",
            g.game.anchor(g.run, g.seq),
            if g.game == Game::Encounter {
                "encounter"
            } else {
                "scene"
            },
            g.run,
            g.seq,
            esc(&g.what)
        );
    }
    o.push_str("</ul>");
}

/// The scorecard per model of the encounter runs and scenes (nothing without their calls).
pub(crate) fn model_scores(o: &mut String, games: &Games) {
    let rows = crate::game_scorecard(games);
    if rows.is_empty() {
        return;
    }
    o.push_str("<h3 id=\"game-models\">Scorecard per model: encounter runs and scenes</h3><table><tr><th>game</th><th>model</th><th>runs</th><th>calls</th><th>attempts</th><th>attempts without reply</th><th>tokens in</th><th>tokens out</th><th>tokens per call</th><th>latency per call</th></tr>");
    for r in &rows {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&r.game),
            esc(&r.model),
            r.runs,
            r.calls,
            r.attempts,
            r.failed_attempts,
            r.tokens_in,
            r.tokens_out,
            r.tokens_per_call
                .map_or_else(|| "n/a".into(), |v| format!("{v:.0}")),
            r.latency_ms_per_call
                .map_or_else(|| "n/a".into(), |v| format!("{v:.0} ms")),
        );
    }
    o.push_str("</table>");
}

fn row(o: &mut String, anchor: &str, tag: &str, said: &str, mind: &str) {
    let _ = write!(
        o,
        "<div class=\"row\" id=\"{anchor}\"><div class=\"tag {tag}\">{tag}</div><div class=\"said\">{said}</div><div class=\"mind\">{mind}</div></div>"
    );
}

fn quote(text: &str) -> String {
    format!("<blockquote>{}</blockquote>", esc(text))
}

fn pre(v: &Value) -> String {
    format!(
        "<pre>{}</pre>",
        esc(&serde_json::to_string_pretty(v).unwrap_or_default())
    )
}

/// A model call's attempts: figures, the request's messages, the reply.
fn attempts(summary: &str, attempts: &[Value]) -> String {
    let mut body = String::new();
    if attempts.is_empty() {
        body.push_str(
            "<p class=\"bad\">No attempt records: what the model was shown is not in the log.</p>",
        );
    }
    for a in attempts {
        let u = a.get("usage").unwrap_or(&Value::Null);
        let _ = write!(
            body,
            "<p class=\"meta\">attempt {} · {} · {} ms · {} → {} tokens{}</p>",
            num(a, "attempt"),
            esc(s(a, "provider")),
            num(a, "latency_ms"),
            num(u, "input_tokens"),
            num(u, "output_tokens"),
            opt(a, "error").map_or_else(String::new, |e| format!(" · error: {}", esc(e)))
        );
        for m in a
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let _ = write!(
                body,
                "<p class=\"meta\">{}</p><pre>{}</pre>",
                esc(s(m, "role")),
                esc(s(m, "content"))
            );
        }
        let _ = write!(
            body,
            "<p class=\"meta\">reply</p><pre>{}</pre>",
            esc(opt(a, "reply").unwrap_or("(none)"))
        );
    }
    details(summary, &body)
}

fn list(items: impl IntoIterator<Item = String>) -> String {
    let mut o = String::from("<ul>");
    for i in items {
        let _ = write!(o, "<li>{}</li>", esc(&i));
    }
    o.push_str("</ul>");
    o
}

// ---- encounters ------------------------------------------------------------------------

/// One section per encounter run.
pub(crate) fn encounters(o: &mut String, runs: &[GameRun]) {
    if runs.is_empty() {
        return;
    }
    o.push_str("<h2 id=\"encounters\">Encounter runs</h2><p class=\"meta\">Prepared encounters (seed 003) with an AI GM. Left: the story as the players saw and heard it. Right: behind the screen — checks and their DCs, the GM's narrations caught telling a secret (sent back, or withheld when the rewrite told it again), replies refused, and every model call with the request it was shown.</p>");
    for run in runs {
        encounter_run(o, run);
    }
}

fn encounter_run(o: &mut String, run: &GameRun) {
    let read: Vec<Known<EncounterEnvelope>> = Known::read_all(&run.events);
    let started = read
        .iter()
        .find_map(|k| match k.event().map(|env| &env.event) {
            Some(EncounterEvent::Started { spec, seed, .. }) => Some((spec.title.as_str(), *seed)),
            _ => None,
        });
    let _ = write!(
        o,
        "<div class=\"turn\" id=\"encounter{}\"><h3>Encounter run {}: {} <span class=\"meta\">{}</span></h3><p class=\"meta\">started {} · seed {} · {}{}</p>",
        run.number,
        run.number,
        esc(started
            .map(|(title, _)| title)
            .filter(|t| !t.is_empty())
            .unwrap_or(&run.id)),
        esc(&run.id),
        esc(&run.started_at),
        started.map_or(0, |(_, seed)| seed),
        if run.ended {
            "resolved"
        } else {
            "not resolved"
        },
        if run.undone > 0 {
            format!(" · {} events taken back by undo", run.undone)
        } else {
            String::new()
        }
    );
    let seats = seats_of(&read);
    seat_table(o, &seats);
    scorecard(o, run.scorecard.as_ref());
    tokens(o, &read);
    story(o, run, &read, &seats);
    o.push_str("</div>");
}

/// A seat of a run as the report shows it: who plays it (last), and how it came to the table.
struct SeatRow<'a> {
    id: &'a str,
    character: &'a str,
    player: &'a str,
    person: bool,
    /// Handed between a person and an AI player during the run.
    handed: bool,
    /// The event it joined at, for a seat that joined mid-run.
    joined_at: Option<u64>,
}

impl<'a> SeatRow<'a> {
    fn of(seat: &'a Seat, joined_at: Option<u64>) -> SeatRow<'a> {
        SeatRow {
            id: &seat.id,
            character: &seat.character,
            player: &seat.player,
            person: seat.kind == SeatKind::Person,
            handed: false,
            joined_at,
        }
    }
}

/// Every seat of a run: those at the table when it started, then each that joined mid-run
/// (`seat_joined`, marked with the event it joined at), each with who played it last (a seat
/// handed between a person and an AI player, `seat_handed`, says so).
fn seats_of(read: &[Known<EncounterEnvelope>]) -> Vec<SeatRow<'_>> {
    let mut seats: Vec<SeatRow> = Vec::new();
    for env in read.iter().filter_map(Known::event) {
        match &env.event {
            EncounterEvent::Started { seats: at, .. } => {
                seats.extend(at.iter().map(|seat| SeatRow::of(seat, None)));
            }
            EncounterEvent::SeatJoined { seat } => seats.push(SeatRow::of(seat, Some(env.seq))),
            EncounterEvent::SeatHanded { seat, person } => {
                if let Some(row) = seats.iter_mut().find(|x| x.id == seat) {
                    row.person = *person;
                    row.handed = true;
                }
            }
            _ => {}
        }
    }
    seats
}

fn seat_table(o: &mut String, seats: &[SeatRow]) {
    if seats.is_empty() {
        return;
    }
    o.push_str("<table><tr><th>character</th><th>played by</th><th>seat</th></tr>");
    for seat in seats {
        let mut how = if seat.person {
            "a person"
        } else {
            "an AI player"
        }
        .to_string();
        if seat.handed {
            how.push_str(" (handed over during the run)");
        }
        if let Some(at) = seat.joined_at {
            how.push_str(&format!(", joined mid-run (event {at})"));
        }
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(seat.character),
            esc(seat.player),
            esc(&how)
        );
    }
    o.push_str("</table>");
}

/// The GM's scorecard, as the encounter crate computes it.
fn scorecard(o: &mut String, scores: Option<&Value>) {
    let Some(c) = scores else {
        o.push_str("<p class=\"empty\">No GM scorecard for this run.</p>");
        return;
    };
    let n = |k: &str| num(c, k).to_string();
    let f = |k: &str| format!("{:.0}", c.get(k).and_then(Value::as_f64).unwrap_or(0.0));
    o.push_str("<p><b>The GM's scorecard</b></p><div class=\"cards\">");
    card(o, &n("rounds"), "rounds of player actions");
    card(o, &n("gm_turns"), "GM replies shown");
    card(o, &n("gm_calls"), "GM model calls");
    card(
        o,
        &format!("{} / {}", n("refused_by_schema"), n("refused_by_engine")),
        "replies refused: by the schema / by the engine's checks",
    );
    card(o, &n("leaks_caught"), "narrations caught leaking");
    card(
        o,
        &format!("{} / {}", n("rewrites"), n("withheld")),
        "leaks rewritten cleanly / withheld",
    );
    card(
        o,
        &format!("{} of {}", n("successes"), n("checks")),
        "checks succeeded",
    );
    card(o, &n("actions_sent_back"), "AI players' actions sent back");
    if num(c, "people_actions_flagged") > 0 {
        card(
            o,
            &n("people_actions_flagged"),
            "people's actions flagged (they rephrase)",
        );
    }
    card(
        o,
        &format!(
            "{} / {}",
            f("tokens_in_per_gm_turn"),
            f("tokens_out_per_gm_turn")
        ),
        "tokens in / out per GM reply",
    );
    card(
        o,
        &format!("{} ms", n("median_gm_latency_ms")),
        "median GM call",
    );
    o.push_str("</div>");
}

/// The tokens the run's GM and players spent.
fn tokens(o: &mut String, read: &[Known<EncounterEnvelope>]) {
    let mut by: BTreeMap<&str, (u32, u64, u64)> = BTreeMap::new();
    for env in read.iter().filter_map(Known::event) {
        let (who, call) = match &env.event {
            EncounterEvent::GmCalled { call, .. } => ("the GM", call),
            EncounterEvent::PlayerCalled { call } => ("the AI players", call),
            _ => continue,
        };
        let t = by.entry(who).or_default();
        *t = (
            t.0 + 1,
            t.1.saturating_add(call.tokens_in),
            t.2.saturating_add(call.tokens_out),
        );
    }
    let parts: Vec<String> = by
        .iter()
        .map(|(who, (calls, i, out))| format!("{who}: {calls} calls, {i} tokens in, {out} out"))
        .collect();
    let _ = write!(
        o,
        "<p class=\"meta\">Tokens: {}.</p>",
        if parts.is_empty() {
            "no model calls (a person or a script was the GM)".to_string()
        } else {
            esc(&parts.join("; "))
        }
    );
}

/// Who plays a seat: its character's name.
struct Seats<'a>(&'a [SeatRow<'a>]);

impl Seats<'_> {
    fn character(&self, id: &str) -> String {
        self.0
            .iter()
            .find(|seat| seat.id == id)
            .map_or(id, |seat| seat.character)
            .to_string()
    }
}

fn story(o: &mut String, run: &GameRun, read: &[Known<EncounterEnvelope>], seats: &[SeatRow]) {
    let seats = Seats(seats);
    let mut pending = String::new();
    for (k, row_as_logged) in read.iter().zip(&run.events) {
        if let Some(EncounterEvent::CheckEmitted { check }) = k.event().map(|env| &env.event) {
            pending.clone_from(&check.what);
        }
        let Some((tag, said, mind)) = encounter_event(k, row_as_logged, &seats, &pending) else {
            continue;
        };
        row(
            o,
            &run.game.anchor(run.number, seq(row_as_logged)),
            tag,
            &said,
            &mind,
        );
    }
}

/// An encounter event as (tag, what the players saw, what happened behind the screen). The row
/// as logged is shown whole where the report shows JSON (the GM's tool call on the scene, a
/// kind it does not show).
fn encounter_event(
    k: &Known<EncounterEnvelope>,
    row_as_logged: &Value,
    seats: &Seats,
    pending: &str,
) -> Option<(&'static str, String, String)> {
    let none = String::new();
    let Some(env) = k.event() else {
        return Some(("LOG", none, as_logged(k, row_as_logged)));
    };
    Some(match &env.event {
        EncounterEvent::Started { .. } => return None,
        EncounterEvent::Narrated {
            text,
            facts: settled,
        } => ("GM", quote(text), facts(settled)),
        EncounterEvent::PlayerActed { seat, text } => (
            "IC",
            format!("<b>{}</b>{}", esc(&seats.character(seat)), quote(text)),
            none,
        ),
        EncounterEvent::CheckEmitted { check: c } => ("DICE", none, check(c, seats)),
        EncounterEvent::CheckRolled { seat, roll } => rolled(seat, roll, seats, pending),
        EncounterEvent::LeakCaught {
            leaks: found,
            withheld,
        } => ("LEAK", none, leaks(found, *withheld)),
        EncounterEvent::GmRejected { problems, reply } => {
            ("LOG", none, rejected(problems, reply.as_deref()))
        }
        EncounterEvent::ActionSentBack {
            seat,
            text,
            feedback,
        } => ("LOG", none, sent_back(seat, text, feedback, seats)),
        EncounterEvent::GmCalled { call, .. } | EncounterEvent::PlayerCalled { call } => {
            ("LOG", none, model_call(call))
        }
        EncounterEvent::SceneActed {
            applied, outcome, ..
        } => scene_acted(*applied, outcome, row_as_logged),
        EncounterEvent::Recalled { facts } => (
            "LOG",
            none,
            format!("<b>The GM recalled</b>{}", list(pairs(facts))),
        ),
        EncounterEvent::GoalRegistered { goal: g, primary } => ("LOG", none, goal(g, *primary)),
        EncounterEvent::Resolved {
            goal,
            summary,
            file,
            ..
        } => resolved(goal, summary, file),
        EncounterEvent::SeatJoined { .. }
        | EncounterEvent::HeldDelivered { .. }
        | EncounterEvent::SeatHanded { .. }
        | EncounterEvent::Whispered { .. }
        | EncounterEvent::Undone { .. } => ("LOG", none, as_logged(k, row_as_logged)),
    })
}

/// `(key, value)` pairs as "key: value" lines.
fn pairs(facts: &[(String, String)]) -> Vec<String> {
    facts.iter().map(|(k, v)| format!("{k}: {v}")).collect()
}

fn facts(settled: &[(String, String)]) -> String {
    let f = pairs(settled);
    if f.is_empty() {
        return String::new();
    }
    format!("<b>Facts settled</b>{}", list(f))
}

/// A tag as the log writes it (`advantage`, `dc`, …): the word a person reads in the report.
fn word(tag: &impl Serialize) -> String {
    match serde_json::to_value(tag) {
        Ok(Value::String(w)) => w,
        _ => String::new(),
    }
}

fn check(c: &CheckCall, seats: &Seats) -> String {
    format!(
        "<b>Check</b> for {}: DC {}{}, modifier {}, {}{}",
        esc(&seats.character(&c.player)),
        c.dc,
        c.skill
            .as_deref()
            .filter(|k| !k.is_empty())
            .map_or_else(String::new, |k| format!(" ({})", esc(k))),
        c.modifier,
        esc(&word(&c.edge)),
        quote(&c.what)
    )
}

fn rolled(seat: &str, r: &D20Roll, seats: &Seats, what: &str) -> (&'static str, String, String) {
    let dice: Vec<String> = r.dice.iter().map(u32::to_string).collect();
    let said = format!(
        "{} rolls for {}: {} (<span class=\"{}\">{}</span>)",
        esc(&seats.character(seat)),
        esc(what),
        r.total,
        if r.success { "ok" } else { "bad" },
        if r.success { "success" } else { "failure" }
    );
    let mind = format!(
        "d20 [{}], kept {}, against DC {}",
        esc(&dice.join(", ")),
        r.kept,
        r.dc
    );
    ("DICE", said, mind)
}

fn leaks(found: &[Leak], withheld: bool) -> String {
    let items = found.iter().map(|l| {
        format!(
            "{}: {}{}",
            word(&l.kind),
            l.detail,
            l.place
                .as_deref()
                .filter(|p| !p.is_empty())
                .map_or_else(String::new, |p| format!(" (in {p})"))
        )
    });
    format!(
        "<b class=\"bad\">Leak caught</b>: the narration was {}{}",
        if withheld {
            "shown with the leaking sentences withheld (the rewrite leaked again)"
        } else {
            "not shown and sent back for a rewrite"
        },
        list(items)
    )
}

fn rejected(problems: &[String], reply: Option<&str>) -> String {
    let mut o = format!(
        "<b class=\"bad\">GM reply refused</b>{}",
        list(problems.iter().cloned())
    );
    if let Some(reply) = reply.filter(|r| !r.is_empty()) {
        o.push_str(&details(
            "the refused reply",
            &format!("<pre>{}</pre>", esc(reply)),
        ));
    }
    o
}

fn sent_back(seat: &str, text: &str, feedback: &str, seats: &Seats) -> String {
    format!(
        "<b>{}'s action sent back</b> (it said what happens){}<p class=\"meta\">{}</p>",
        esc(&seats.character(seat)),
        quote(text),
        esc(feedback)
    )
}

fn model_call(c: &ModelCall) -> String {
    let summary = format!(
        "model call: {} ({}), {} ms, {} → {} tokens, {} attempt{}",
        c.purpose,
        c.agent,
        c.latency_ms,
        c.tokens_in,
        c.tokens_out,
        c.attempts.len(),
        if c.attempts.len() == 1 { "" } else { "s" }
    );
    attempts(&summary, &c.attempts)
}

/// The GM's tool call on the scene engine, shown as logged.
fn scene_acted(
    applied: bool,
    outcome: &str,
    row_as_logged: &Value,
) -> (&'static str, String, String) {
    let call = details(
        "the GM's tool call",
        &pre(row_as_logged.get("call").unwrap_or(&Value::Null)),
    );
    if applied {
        ("SCENE", quote(outcome), call)
    } else {
        let mind = format!(
            "<b class=\"bad\">Scene engine refused</b>{}{call}",
            quote(outcome)
        );
        ("SCENE", String::new(), mind)
    }
}

fn goal(g: &Goal, primary: bool) -> String {
    format!(
        "<b>Goal registered</b> ({}): {}",
        if primary { "primary" } else { "secondary" },
        esc(&format!("{} — {}", g.id, g.label))
    )
}

fn resolved(goal: &str, summary: &str, file: &str) -> (&'static str, String, String) {
    (
        "PARTY",
        format!("<b>Resolved</b>{}", quote(summary)),
        format!("goal {} · summary written to {}", esc(goal), esc(file)),
    )
}

// ---- scenes ----------------------------------------------------------------------------

/// One section per scene run.
pub(crate) fn scenes(o: &mut String, runs: &[GameRun]) {
    if runs.is_empty() {
        return;
    }
    o.push_str("<h2 id=\"scenes\">Scenes</h2><p class=\"meta\">Scenes played on the scene engine (seed 004). Left: what was said and what the engine narrated. Right: the tool call, why a call was refused, and every model call (the AI player, the planner, the polish) with the request it was shown.</p>");
    for run in runs {
        scene_run(o, run);
    }
}

fn scene_run(o: &mut String, run: &GameRun) {
    let read: Vec<Known<SceneEnvelope>> = Known::read_all(&run.events);
    let started = read
        .iter()
        .find_map(|k| match k.event().map(|env| &env.event) {
            Some(SceneEvent::SceneStarted { scene, seed }) => Some((scene, *seed)),
            _ => None,
        });
    let _ = write!(
        o,
        "<div class=\"turn\" id=\"scene{}\"><h3>Scene {}: {}</h3><p class=\"meta\">goal: {} · started {} · seed {} · {}{}</p>",
        run.number,
        run.number,
        esc(&run.id),
        esc(started.map_or("", |(def, _)| def.goal.as_str())),
        esc(&run.started_at),
        started.map_or(0, |(_, seed)| seed),
        if run.ended { "ended" } else { "not ended" },
        if run.undone > 0 {
            format!(" · {} events taken back by undo", run.undone)
        } else {
            String::new()
        }
    );
    let names: BTreeMap<&str, &str> = started
        .map(|(def, _)| def.entities.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|e| (e.id.as_str(), e.name.as_str()))
        .collect();
    // A polish used in place of its call's narration (a refused one is shown on its own).
    let polished: BTreeMap<u64, &str> = read
        .iter()
        .filter_map(|k| match k.event().map(|env| &env.event) {
            Some(SceneEvent::NarrationPolished {
                of, text, refused, ..
            }) if refusal(refused.as_deref()).is_none() => Some((*of, text.as_str())),
            _ => None,
        })
        .collect();
    for (k, row_as_logged) in read.iter().zip(&run.events) {
        if let Some((tag, said, mind)) = scene_event(k, row_as_logged, &names, &polished) {
            row(
                o,
                &run.game.anchor(run.number, seq(row_as_logged)),
                tag,
                &said,
                &mind,
            );
        }
    }
    o.push_str("</div>");
}

/// A polish's refusal: a reason, never an empty one.
fn refusal(refused: Option<&str>) -> Option<&str> {
    refused.filter(|r| !r.is_empty())
}

/// An event this build cannot show by its kind, as logged: one a newer troupe wrote, shown
/// under its kind, or one of a known kind that does not read, shown as unreadable with why.
fn as_logged(k: &Known<impl Sized>, row_as_logged: &Value) -> String {
    match k {
        Known::Malformed {
            event_type, error, ..
        } => details(
            &format!("{event_type} (unreadable: {error})"),
            &pre(row_as_logged),
        ),
        _ => details(ty(row_as_logged), &pre(row_as_logged)),
    }
}

/// A scene event as (tag, what was said and narrated, what happened behind it). The row as
/// logged is shown whole where the report shows JSON (a tool call, a kind it does not show).
fn scene_event(
    k: &Known<SceneEnvelope>,
    row_as_logged: &Value,
    names: &BTreeMap<&str, &str>,
    polished: &BTreeMap<u64, &str>,
) -> Option<(&'static str, String, String)> {
    let none = String::new();
    let who = |id: &str| esc(names.get(id).copied().unwrap_or(id));
    let Some(env) = k.event() else {
        return Some(("LOG", none, as_logged(k, row_as_logged)));
    };
    Some(match &env.event {
        SceneEvent::SceneStarted { .. } => return None,
        SceneEvent::ToolApplied {
            actor,
            input,
            call,
            narration,
            ..
        } => {
            let narration = polished.get(&env.seq).copied().unwrap_or(narration);
            let said = format!(
                "<b>{}&gt;</b> {}{}",
                who(actor),
                esc(input),
                quote(narration)
            );
            ("SCENE", said, tool_call(call, row_as_logged))
        }
        SceneEvent::Rejected {
            actor,
            input,
            call,
            reason,
            ..
        } => (
            "LOG",
            format!("<b>{}&gt;</b> {}", who(actor), esc(input)),
            format!(
                "<b class=\"bad\">Refused</b>: {}{}",
                esc(reason),
                tool_call(call, row_as_logged)
            ),
        ),
        SceneEvent::ModelCalled {
            agent,
            purpose,
            attempts: tries,
        } => {
            let summary = format!(
                "model call: {purpose} ({agent}), {} attempt{}",
                tries.len(),
                if tries.len() == 1 { "" } else { "s" }
            );
            ("LOG", none, attempts(&summary, tries))
        }
        SceneEvent::PlannerReplied { model, reply, .. } => (
            "LOG",
            none,
            details(&format!("the planner ({model}) answered"), &pre(reply)),
        ),
        SceneEvent::NarrationPolished { text, refused, .. } => polish(refused.as_deref(), text)?,
        SceneEvent::Noted { card, text } => (
            "NOTE",
            none,
            format!("<b>GM note</b> on {}{}", esc(card), quote(text)),
        ),
        SceneEvent::TruthChanged {
            card,
            index,
            from,
            to,
        } => (
            "NOTE",
            none,
            esc(&format!(
                "{card} fact {index}: {} → {}",
                from.as_str(),
                to.as_str()
            )),
        ),
        SceneEvent::SceneEnded { deltas } => (
            "PARTY",
            "<b>The scene ended</b>".to_string(),
            format!("{} changes handed to the world", deltas.len()),
        ),
        SceneEvent::Undone { .. } | SceneEvent::SeatHanded { .. } => {
            ("LOG", none, as_logged(k, row_as_logged))
        }
    })
}

/// A tool call: its name, and the call as logged.
fn tool_call(call: &ToolCall, row_as_logged: &Value) -> String {
    details(
        &format!("tool {}", call.name()),
        &pre(row_as_logged.get("call").unwrap_or(&Value::Null)),
    )
}

/// A refused polish (a used one shows in place of the template narration).
fn polish(refused: Option<&str>, text: &str) -> Option<(&'static str, String, String)> {
    let refused = refusal(refused)?;
    Some((
        "LOG",
        String::new(),
        format!(
            "<b class=\"bad\">Polish not used</b>: {}{}",
            esc(refused),
            quote(text)
        ),
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    const HOSTILE: &str = "<img src=x onerror=alert(1)>";

    fn run(game: Game, events: Vec<Value>) -> GameRun {
        GameRun {
            game,
            number: 1,
            id: HOSTILE.into(),
            started_at: "now".into(),
            ended: true,
            events,
            undone: 0,
            scorecard: Some(json!({"run": 1, "gm_turns": 3, "leaks_caught": 1})),
        }
    }

    /// A real encounter run (the smithy, a person and two AI players: checks, a leak caught,
    /// replies refused, an action sent back) and a real scene (the mill, an AI player), as
    /// their logs hold them.
    const ENCOUNTER: &str = include_str!("../tests/data/encounter-smithy.jsonl");
    const SCENE: &str = include_str!("../tests/data/scene-mill.jsonl");

    fn rows(text: &str) -> Vec<Value> {
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn games(encounter: Vec<Value>, scene: Vec<Value>) -> Games {
        Games {
            encounters: vec![run(Game::Encounter, encounter)],
            scenes: vec![run(Game::Scene, scene)],
        }
    }

    #[test]
    fn every_text_of_an_encounter_and_a_scene_is_escaped() {
        let mut encounter = rows(ENCOUNTER);
        encounter[0]["spec"]["title"] = json!(HOSTILE);
        encounter[1]["call"]["attempts"][0]["messages"][0]["content"] = json!(HOSTILE);
        encounter[2]["text"] = json!(HOSTILE);
        encounter[2]["facts"] = json!([[HOSTILE, HOSTILE]]);
        encounter[16]["leaks"][0]["detail"] = json!(HOSTILE);
        let mut scene = rows(SCENE);
        scene[0]["scene"]["goal"] = json!(HOSTILE);
        scene[0]["scene"]["entities"][0]["name"] = json!(HOSTILE);
        scene[2]["input"] = json!(HOSTILE);
        scene[2]["narration"] = json!(HOSTILE);
        scene.push(json!({"seq": 5, "event_type": "brand_new", "x": HOSTILE}));
        let html = crate::render_report("t", &[], &games(encounter, scene));
        assert!(!html.contains("<img"), "unescaped markup in the report");
        assert!(
            !html.contains("<b>bellows"),
            "unescaped markup in the report"
        );
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
        for anchor in [
            "encounter1-ev-1",
            "encounter1-ev-3",
            "encounter1-ev-16",
            "scene1-ev-1",
            "scene1-ev-2",
            "scene1-ev-5",
        ] {
            assert!(html.contains(&format!("id=\"{anchor}\"")), "{anchor}");
        }
        assert!(html.contains("Leak caught") && html.contains("<b>Check</b> for Mara: DC 14"));
        assert!(html.contains("The GM&#39;s scorecard") || html.contains("The GM's scorecard"));
        // No sessions: their sections are left out, not shown empty.
        assert!(!html.contains("id=\"consensus\""));
        assert!(html.contains("id=\"encounters\"") && html.contains("id=\"scenes\""));
    }

    /// The row a kind this build does not know is shown as: its kind, and the row as logged.
    fn newer_row(anchor: &str, newer: &Value) -> String {
        let mut o = String::new();
        row(&mut o, anchor, "LOG", "", &details(ty(newer), &pre(newer)));
        o
    }

    /// A kind a newer troupe writes, in the middle of a real encounter run and a real scene,
    /// is one row of its own (its kind and the row as logged); every other byte of the report's
    /// sections is as without it.
    #[test]
    fn a_newer_event_kind_in_a_recorded_run_changes_nothing_else_in_the_report() {
        let (encounter, scene) = (rows(ENCOUNTER), rows(SCENE));
        let before = crate::render_report("t", &[], &games(encounter.clone(), scene.clone()));
        let newer = |seq: u64| json!({"seq": seq, "event_type": "weather_changed", "sky": "red"});
        let (mut encounter_newer, mut scene_newer) = (encounter.clone(), scene.clone());
        encounter_newer.insert(encounter.len() / 2, newer(900));
        scene_newer.insert(scene.len() / 2, newer(901));
        let after = crate::render_report("t", &[], &games(encounter_newer, scene_newer));
        let (in_encounter, in_scene) = (
            newer_row("encounter1-ev-900", &newer(900)),
            newer_row("scene1-ev-901", &newer(901)),
        );
        assert!(after.contains(&in_encounter) && after.contains(&in_scene));
        // The page's subtitle counts the events logged, the newer two among them; from the
        // summary on, the report is the same byte for byte.
        let from_summary = |html: &str| {
            html.split_once("<h2 id=\"summary\">")
                .unwrap()
                .1
                .to_string()
        };
        let after = from_summary(&after.replace(&in_encounter, "").replace(&in_scene, ""));
        assert!(
            after == from_summary(&before),
            "the report changed beyond the newer rows"
        );
    }

    /// A known kind that does not read is shown as unreadable, with why, never as if its
    /// fields were empty.
    #[test]
    fn a_damaged_known_kind_is_shown_as_unreadable() {
        let mut encounter = rows(ENCOUNTER);
        encounter[14]["roll"] = json!("a broken roll");
        let html = crate::render_report("t", &[], &games(encounter, rows(SCENE)));
        let row = html.split("id=\"encounter1-ev-14\"").nth(1).unwrap();
        let row = row.split("<div class=\"row\"").next().unwrap();
        assert!(row.contains("check_rolled (unreadable: "), "{row}");
        assert!(
            row.contains("a broken roll") && !row.contains("rolls for"),
            "{row}"
        );
    }

    /// Issue 46: a seat that joined mid-run was left out of the seat table (and its actions
    /// were shown under its id, not its character's name).
    #[test]
    fn the_seat_table_has_the_seats_that_joined_mid_run() {
        let mut encounter = rows(ENCOUNTER);
        encounter.splice(
            4..4,
            [
                json!({"seq": 100, "event_type": "seat_joined", "seat": {"id": "p3",
                  "character": "Jo-char", "player": "Jo", "kind": "person", "about": ""}}),
                json!({"seq": 101, "event_type": "player_acted", "seat": "p3", "text": "I wave"}),
                json!({"seq": 102, "event_type": "seat_handed", "seat": "p1", "person": false}),
            ],
        );
        let games = Games {
            encounters: vec![run(Game::Encounter, encounter)],
            scenes: Vec::new(),
        };
        let html = crate::render_report("t", &[], &games);
        let table = html.split("<th>seat</th></tr>").nth(1).unwrap();
        let table = table.split("</table>").next().unwrap();
        let rows: Vec<&str> = table.split("<tr>").filter(|r| !r.is_empty()).collect();
        assert_eq!(rows.len(), 4, "{table}");
        assert!(rows[3].contains("Jo-char") && rows[3].contains("<td>Jo</td>"));
        assert!(
            rows[3].contains("joined mid-run (event 100)"),
            "{}",
            rows[3]
        );
        assert!(
            rows[0].contains("an AI player (handed over during the run)"),
            "{}",
            rows[0]
        );
        assert!(rows[1].contains("Zara-7") && rows[1].contains("an AI player</td>"));
        // The joined seat's action is shown under its character's name.
        assert!(html.contains("<b>Jo-char</b>"), "the story names p3");
    }
}
