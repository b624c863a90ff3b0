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
use crate::svg::esc;

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

fn array<'a>(e: &'a Value, field: &str) -> &'a [Value] {
    e.get(field)
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
}

/// `[[key, value], …]` as "key: value" lines.
fn pairs(e: &Value, field: &str) -> Vec<String> {
    array(e, field)
        .iter()
        .map(|p| {
            let part = |i: usize| p.get(i).and_then(Value::as_str).unwrap_or("");
            format!("{}: {}", part(0), part(1))
        })
        .collect()
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
    let started = run.events.iter().find(|e| ty(e) == "started");
    let spec = started.and_then(|e| e.get("spec")).unwrap_or(&Value::Null);
    let _ = write!(
        o,
        "<div class=\"turn\" id=\"encounter{}\"><h3>Encounter run {}: {} <span class=\"meta\">{}</span></h3><p class=\"meta\">started {} · seed {} · {}{}</p>",
        run.number,
        run.number,
        esc(opt(spec, "title").unwrap_or(&run.id)),
        esc(&run.id),
        esc(&run.started_at),
        started.map_or(0, |e| num(e, "seed")),
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
    let seats = seats_of(&run.events);
    seat_table(o, &seats);
    scorecard(o, run.scorecard.as_ref());
    tokens(o, &run.events);
    story(o, run, &seats);
    o.push_str("</div>");
}

/// Every seat of a run: those at the table when it started, then each that joined mid-run
/// (`seat_joined`, marked with the event it joined at), each with who played it last (a seat
/// handed between a person and an AI player, `seat_handed`, says so).
fn seats_of(events: &[Value]) -> Vec<Value> {
    let mut seats: Vec<Value> = Vec::new();
    for e in events {
        match ty(e) {
            "started" => seats.extend(array(e, "seats").iter().cloned()),
            "seat_joined" => {
                if let Some(seat) = e.get("seat") {
                    let mut seat = seat.clone();
                    if let Some(o) = seat.as_object_mut() {
                        o.insert("joined_at".into(), seq(e).into());
                    }
                    seats.push(seat);
                }
            }
            "seat_handed" => {
                let id = s(e, "seat");
                let person = e.get("person").and_then(Value::as_bool).unwrap_or(false);
                if let Some(o) = seats
                    .iter_mut()
                    .find(|x| s(x, "id") == id)
                    .and_then(Value::as_object_mut)
                {
                    o.insert("kind".into(), if person { "person" } else { "ai" }.into());
                    o.insert("handed".into(), true.into());
                }
            }
            _ => {}
        }
    }
    seats
}

fn seat_table(o: &mut String, seats: &[Value]) {
    if seats.is_empty() {
        return;
    }
    o.push_str("<table><tr><th>character</th><th>played by</th><th>seat</th></tr>");
    for seat in seats {
        let mut how = if s(seat, "kind") == "person" {
            "a person"
        } else {
            "an AI player"
        }
        .to_string();
        if seat.get("handed").is_some() {
            how.push_str(" (handed over during the run)");
        }
        if let Some(at) = seat.get("joined_at").and_then(Value::as_u64) {
            how.push_str(&format!(", joined mid-run (event {at})"));
        }
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(s(seat, "character")),
            esc(s(seat, "player")),
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
fn tokens(o: &mut String, events: &[Value]) {
    let mut by: BTreeMap<&str, (u32, u64, u64)> = BTreeMap::new();
    for e in events {
        let who = match ty(e) {
            "gm_called" => "the GM",
            "player_called" => "the AI players",
            _ => continue,
        };
        let call = e.get("call").unwrap_or(&Value::Null);
        let t = by.entry(who).or_default();
        *t = (
            t.0 + 1,
            t.1.saturating_add(num(call, "tokens_in")),
            t.2.saturating_add(num(call, "tokens_out")),
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
struct Seats<'a>(&'a [Value]);

impl Seats<'_> {
    fn character(&self, id: &str) -> String {
        self.0
            .iter()
            .find(|seat| s(seat, "id") == id)
            .map_or(id, |seat| s(seat, "character"))
            .to_string()
    }
}

fn story(o: &mut String, run: &GameRun, seats: &[Value]) {
    let seats = Seats(seats);
    let mut pending = String::new();
    for e in &run.events {
        if ty(e) == "check_emitted" {
            pending = s(e.get("check").unwrap_or(&Value::Null), "what").to_string();
        }
        let Some((tag, said, mind)) = encounter_event(e, &seats, &pending) else {
            continue;
        };
        row(o, &run.game.anchor(run.number, seq(e)), tag, &said, &mind);
    }
}

/// An encounter event as (tag, what the players saw, what happened behind the screen).
fn encounter_event(
    e: &Value,
    seats: &Seats,
    pending: &str,
) -> Option<(&'static str, String, String)> {
    let none = String::new();
    Some(match ty(e) {
        "started" => return None,
        "narrated" => ("GM", quote(s(e, "text")), facts(e)),
        "player_acted" => (
            "IC",
            format!(
                "<b>{}</b>{}",
                esc(&seats.character(s(e, "seat"))),
                quote(s(e, "text"))
            ),
            none,
        ),
        "check_emitted" => (
            "DICE",
            none,
            check(e.get("check").unwrap_or(&Value::Null), seats),
        ),
        "check_rolled" => rolled(e, seats, pending),
        "leak_caught" => ("LEAK", none, leaks(e)),
        "gm_rejected" => ("LOG", none, rejected(e)),
        "action_sent_back" => ("LOG", none, sent_back(e, seats)),
        "gm_called" | "player_called" => ("LOG", none, model_call(e)),
        "scene_acted" => scene_acted(e),
        "recalled" => (
            "LOG",
            none,
            format!("<b>The GM recalled</b>{}", list(pairs(e, "facts"))),
        ),
        "goal_registered" => ("LOG", none, goal(e)),
        "resolved" => resolved(e),
        other => ("LOG", none, details(other, &pre(e))),
    })
}

fn facts(e: &Value) -> String {
    let f = pairs(e, "facts");
    if f.is_empty() {
        return String::new();
    }
    format!("<b>Facts settled</b>{}", list(f))
}

fn check(c: &Value, seats: &Seats) -> String {
    format!(
        "<b>Check</b> for {}: DC {}{}, modifier {}, {}{}",
        esc(&seats.character(s(c, "player"))),
        num(c, "dc"),
        opt(c, "skill").map_or_else(String::new, |k| format!(" ({})", esc(k))),
        c.get("modifier").and_then(Value::as_i64).unwrap_or(0),
        esc(s(c, "edge")),
        quote(s(c, "what"))
    )
}

fn rolled(e: &Value, seats: &Seats, what: &str) -> (&'static str, String, String) {
    let r = e.get("roll").unwrap_or(&Value::Null);
    let success = r.get("success").and_then(Value::as_bool).unwrap_or(false);
    let dice: Vec<String> = array(r, "dice").iter().map(Value::to_string).collect();
    let said = format!(
        "{} rolls for {}: {} (<span class=\"{}\">{}</span>)",
        esc(&seats.character(s(e, "seat"))),
        esc(what),
        r.get("total").and_then(Value::as_i64).unwrap_or(0),
        if success { "ok" } else { "bad" },
        if success { "success" } else { "failure" }
    );
    let mind = format!(
        "d20 [{}], kept {}, against DC {}",
        esc(&dice.join(", ")),
        num(r, "kept"),
        r.get("dc").and_then(Value::as_i64).unwrap_or(0)
    );
    ("DICE", said, mind)
}

fn leaks(e: &Value) -> String {
    let withheld = e.get("withheld").and_then(Value::as_bool).unwrap_or(false);
    let items = array(e, "leaks").iter().map(|l| {
        format!(
            "{}: {}{}",
            s(l, "kind"),
            s(l, "detail"),
            opt(l, "place").map_or_else(String::new, |p| format!(" (in {p})"))
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

fn rejected(e: &Value) -> String {
    let mut o = format!(
        "<b class=\"bad\">GM reply refused</b>{}",
        list(
            array(e, "problems")
                .iter()
                .filter_map(Value::as_str)
                .map(String::from)
        )
    );
    if let Some(reply) = opt(e, "reply") {
        o.push_str(&details(
            "the refused reply",
            &format!("<pre>{}</pre>", esc(reply)),
        ));
    }
    o
}

fn sent_back(e: &Value, seats: &Seats) -> String {
    format!(
        "<b>{}'s action sent back</b> (it said what happens){}<p class=\"meta\">{}</p>",
        esc(&seats.character(s(e, "seat"))),
        quote(s(e, "text")),
        esc(s(e, "feedback"))
    )
}

fn model_call(e: &Value) -> String {
    let c = e.get("call").unwrap_or(&Value::Null);
    let summary = format!(
        "model call: {} ({}), {} ms, {} → {} tokens, {} attempt{}",
        s(c, "purpose"),
        s(c, "agent"),
        num(c, "latency_ms"),
        num(c, "tokens_in"),
        num(c, "tokens_out"),
        array(c, "attempts").len(),
        if array(c, "attempts").len() == 1 {
            ""
        } else {
            "s"
        }
    );
    attempts(&summary, array(c, "attempts"))
}

fn scene_acted(e: &Value) -> (&'static str, String, String) {
    let applied = e.get("applied").and_then(Value::as_bool).unwrap_or(false);
    let call = details(
        "the GM's tool call",
        &pre(e.get("call").unwrap_or(&Value::Null)),
    );
    if applied {
        ("SCENE", quote(s(e, "outcome")), call)
    } else {
        let mind = format!(
            "<b class=\"bad\">Scene engine refused</b>{}{call}",
            quote(s(e, "outcome"))
        );
        ("SCENE", String::new(), mind)
    }
}

fn goal(e: &Value) -> String {
    let g = e.get("goal").unwrap_or(&Value::Null);
    format!(
        "<b>Goal registered</b> ({}): {}",
        if e.get("primary").and_then(Value::as_bool) == Some(true) {
            "primary"
        } else {
            "secondary"
        },
        esc(&format!("{} — {}", s(g, "id"), s(g, "label")))
    )
}

fn resolved(e: &Value) -> (&'static str, String, String) {
    (
        "PARTY",
        format!("<b>Resolved</b>{}", quote(s(e, "summary"))),
        format!(
            "goal {} · summary written to {}",
            esc(s(e, "goal")),
            esc(s(e, "file"))
        ),
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
    let started = run.events.iter().find(|e| ty(e) == "scene_started");
    let def = started.and_then(|e| e.get("scene")).unwrap_or(&Value::Null);
    let _ = write!(
        o,
        "<div class=\"turn\" id=\"scene{}\"><h3>Scene {}: {}</h3><p class=\"meta\">goal: {} · started {} · seed {} · {}{}</p>",
        run.number,
        run.number,
        esc(&run.id),
        esc(s(def, "goal")),
        esc(&run.started_at),
        started.map_or(0, |e| num(e, "seed")),
        if run.ended { "ended" } else { "not ended" },
        if run.undone > 0 {
            format!(" · {} events taken back by undo", run.undone)
        } else {
            String::new()
        }
    );
    let names: BTreeMap<&str, &str> = array(def, "entities")
        .iter()
        .map(|e| (s(e, "id"), s(e, "name")))
        .collect();
    let polished: BTreeMap<u64, &str> = run
        .events
        .iter()
        .filter(|e| ty(e) == "narration_polished" && opt(e, "refused").is_none())
        .map(|e| (num(e, "of"), s(e, "text")))
        .collect();
    for e in &run.events {
        if let Some((tag, said, mind)) = scene_event(e, &names, &polished) {
            row(o, &run.game.anchor(run.number, seq(e)), tag, &said, &mind);
        }
    }
    o.push_str("</div>");
}

/// A scene event as (tag, what was said and narrated, what happened behind it).
fn scene_event(
    e: &Value,
    names: &BTreeMap<&str, &str>,
    polished: &BTreeMap<u64, &str>,
) -> Option<(&'static str, String, String)> {
    let none = String::new();
    let who = |e: &Value| {
        let id = s(e, "actor");
        esc(names.get(id).copied().unwrap_or(id))
    };
    Some(match ty(e) {
        "scene_started" => return None,
        "tool_applied" => {
            let narration = polished.get(&seq(e)).copied().unwrap_or(s(e, "narration"));
            let said = format!(
                "<b>{}&gt;</b> {}{}",
                who(e),
                esc(s(e, "input")),
                quote(narration)
            );
            ("SCENE", said, tool_call(e))
        }
        "rejected" => (
            "LOG",
            format!("<b>{}&gt;</b> {}", who(e), esc(s(e, "input"))),
            format!(
                "<b class=\"bad\">Refused</b>: {}{}",
                esc(s(e, "reason")),
                tool_call(e)
            ),
        ),
        "model_called" => {
            let summary = format!(
                "model call: {} ({}), {} attempt{}",
                s(e, "purpose"),
                s(e, "agent"),
                array(e, "attempts").len(),
                if array(e, "attempts").len() == 1 {
                    ""
                } else {
                    "s"
                }
            );
            ("LOG", none, attempts(&summary, array(e, "attempts")))
        }
        "planner_replied" => (
            "LOG",
            none,
            details(
                &format!("the planner ({}) answered", s(e, "model")),
                &pre(e.get("reply")?),
            ),
        ),
        "narration_polished" => polish(e)?,
        "noted" => (
            "NOTE",
            none,
            format!(
                "<b>GM note</b> on {}{}",
                esc(s(e, "card")),
                quote(s(e, "text"))
            ),
        ),
        "truth_changed" => (
            "NOTE",
            none,
            esc(&format!(
                "{} fact {}: {} → {}",
                s(e, "card"),
                num(e, "index"),
                s(e, "from"),
                s(e, "to")
            )),
        ),
        "scene_ended" => (
            "PARTY",
            "<b>The scene ended</b>".to_string(),
            format!("{} changes handed to the world", array(e, "deltas").len()),
        ),
        other => ("LOG", none, details(other, &pre(e))),
    })
}

fn tool_call(e: &Value) -> String {
    let call = e.get("call").unwrap_or(&Value::Null);
    details(&format!("tool {}", s(call, "tool")), &pre(call))
}

/// A refused polish (a used one shows in place of the template narration).
fn polish(e: &Value) -> Option<(&'static str, String, String)> {
    let refused = opt(e, "refused")?;
    Some((
        "LOG",
        String::new(),
        format!(
            "<b class=\"bad\">Polish not used</b>: {}{}",
            esc(refused),
            quote(s(e, "text"))
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

    #[test]
    fn every_text_of_an_encounter_and_a_scene_is_escaped() {
        let games = Games {
            encounters: vec![run(
                Game::Encounter,
                vec![
                    json!({"seq": 0, "event_type": "started", "seed": 1,
                      "spec": {"title": HOSTILE},
                      "seats": [{"id": "p1", "character": HOSTILE, "player": HOSTILE, "kind": "person"}]}),
                    json!({"seq": 1, "event_type": "narrated", "text": HOSTILE, "facts": [[HOSTILE, HOSTILE]]}),
                    json!({"seq": 2, "event_type": "player_acted", "seat": "p1", "text": HOSTILE}),
                    json!({"seq": 3, "event_type": "leak_caught", "withheld": false,
                      "leaks": [{"kind": "dc", "detail": HOSTILE}]}),
                    json!({"seq": 4, "event_type": "gm_called", "call": {"agent": "gm",
                      "purpose": "encounter_gm", "attempts": [{"attempt": 1,
                      "messages": [{"role": "user", "content": HOSTILE}], "reply": HOSTILE}]}}),
                ],
            )],
            scenes: vec![run(
                Game::Scene,
                vec![
                    json!({"seq": 0, "event_type": "scene_started", "seed": 2,
                      "scene": {"goal": HOSTILE, "entities": [{"id": "w", "name": HOSTILE}]}}),
                    json!({"seq": 1, "event_type": "tool_applied", "actor": "w", "input": HOSTILE,
                      "narration": HOSTILE, "call": {"tool": "move", "args": {"to": HOSTILE}}}),
                    json!({"seq": 2, "event_type": "brand_new", "x": HOSTILE}),
                ],
            )],
        };
        let html = crate::render_report("t", &[], &games);
        assert!(!html.contains("<img"), "unescaped markup in the report");
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
        for anchor in [
            "encounter1-ev-1",
            "encounter1-ev-3",
            "scene1-ev-1",
            "scene1-ev-2",
        ] {
            assert!(html.contains(&format!("id=\"{anchor}\"")), "{anchor}");
        }
        assert!(html.contains("Leak caught"));
        assert!(html.contains("The GM&#39;s scorecard") || html.contains("The GM's scorecard"));
        // No sessions: their sections are left out, not shown empty.
        assert!(!html.contains("id=\"consensus\""));
        assert!(html.contains("id=\"encounters\"") && html.contains("id=\"scenes\""));
    }

    /// Issue 46: a seat that joined mid-run was left out of the seat table (and its actions
    /// were shown under its id, not its character's name).
    #[test]
    fn the_seat_table_has_the_seats_that_joined_mid_run() {
        let games = Games {
            encounters: vec![run(
                Game::Encounter,
                vec![
                    json!({"seq": 0, "event_type": "started", "seed": 1, "spec": {"title": "t"},
                      "seats": [{"id": "p1", "character": "Mara", "player": "Mara", "kind": "person"},
                                {"id": "p2", "character": "Rook", "player": "AI", "kind": "ai"}]}),
                    json!({"seq": 5, "event_type": "seat_joined",
                      "seat": {"id": "p3", "character": "Jo-char", "player": "Jo", "kind": "person"}}),
                    json!({"seq": 6, "event_type": "player_acted", "seat": "p3", "text": "I wave"}),
                    json!({"seq": 7, "event_type": "seat_handed", "seat": "p1", "person": false}),
                ],
            )],
            scenes: Vec::new(),
        };
        let html = crate::render_report("t", &[], &games);
        let table = html.split("<th>seat</th></tr>").nth(1).unwrap();
        let table = table.split("</table>").next().unwrap();
        let rows: Vec<&str> = table.split("<tr>").filter(|r| !r.is_empty()).collect();
        assert_eq!(rows.len(), 3, "{table}");
        assert!(rows[2].contains("Jo-char") && rows[2].contains("<td>Jo</td>"));
        assert!(rows[2].contains("joined mid-run (event 5)"), "{}", rows[2]);
        assert!(
            rows[0].contains("an AI player (handed over during the run)"),
            "{}",
            rows[0]
        );
        // The joined seat's action is shown under its character's name.
        assert!(html.contains("<b>Jo-char</b>"), "the story names p3");
    }
}
