//! `troupe stats`: the metrics as a readable terminal table.

use std::fmt::Write;

use crate::ev::Roster;
use crate::game_score::GameModelScore;
use crate::scorecard::{ModelScore, RunRow};
use crate::{Audit, Flag, Metrics};

pub fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".into(), |v| format!("{:.1}%", v * 100.0))
}

/// The stats as text. `title` says what was measured ("session 2", "campaign, 3 sessions").
/// One section after another, in the order a reader asks about a session.
pub fn render_stats(
    title: &str,
    m: &Metrics,
    audit: &Audit,
    flags: &[Flag],
    roster: &Roster,
) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "troupe stats — {title}");
    let _ = writeln!(o);
    unreadable(&mut o, m);
    turns(&mut o, m);
    validation(&mut o, m);
    model_calls(&mut o, m);
    latency(&mut o, m);
    tokens_by_agent(&mut o, m, roster);
    party(&mut o, m, roster);
    dice(&mut o, m);
    completeness(&mut o, audit);
    flagged(&mut o, flags);
    o
}

/// Rows of a known kind that did not read: said first, since no figure below counts them.
fn unreadable(o: &mut String, m: &Metrics) {
    if m.unreadable.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "Unreadable events (counted in no figure below; the log is damaged there)"
    );
    for u in &m.unreadable {
        let _ = writeln!(
            o,
            "  session {}, event {}: {} (unreadable: {})",
            u.session, u.seq, u.event_type, u.error
        );
    }
    let _ = writeln!(o);
}

/// One figure: its label in a column, its value after.
fn row(o: &mut String, k: &str, v: String) {
    let _ = writeln!(o, "  {k:<38} {v}");
}

fn turns(o: &mut String, m: &Metrics) {
    let _ = writeln!(o, "Turns");
    row(o, "turns completed", m.turns.to_string());
    if m.turns_started > m.turns {
        row(
            o,
            "turns started, not completed",
            (m.turns_started - m.turns).to_string(),
        );
    }
}

fn validation(o: &mut String, m: &Metrics) {
    let v = &m.validation;
    let _ = writeln!(o, "\nValidation (overreach check)");
    row(o, "actions checked", v.actions.to_string());
    row(
        o,
        "failure rate, first pass",
        format!(
            "{} ({} of {})",
            pct(v.first_pass_rate()),
            v.first_pass_failures,
            v.actions
        ),
    );
    row(
        o,
        "failure rate, after retries",
        format!(
            "{} ({} of {})",
            pct(v.final_rate()),
            v.final_failures,
            v.actions
        ),
    );
    row(
        o,
        "retries / auto-corrected / to the GM",
        format!(
            "{} / {} / {}",
            v.retries, v.auto_corrected, v.flagged_for_gm
        ),
    );
}

fn model_calls(o: &mut String, m: &Metrics) {
    let mc = &m.model;
    let _ = writeln!(o, "\nModel calls");
    row(
        o,
        "calls (attempts)",
        format!("{} ({})", mc.calls, mc.attempts),
    );
    row(
        o,
        "retries (of which JSON repairs)",
        format!("{} ({})", mc.retries, mc.repairs),
    );
    row(o, "attempts that errored", mc.errors.to_string());
    row(o, "phases failed (gave up)", mc.failed_phases.to_string());
    row(
        o,
        "tokens in / out",
        format!("{} / {}", mc.tokens.input, mc.tokens.output),
    );
    if m.turns > 0 {
        row(
            o,
            "tokens per completed turn (in / out)",
            format!(
                "{:.0} / {:.0}",
                mc.tokens.input as f64 / f64::from(m.turns),
                mc.tokens.output as f64 / f64::from(m.turns)
            ),
        );
    }
}

fn latency(o: &mut String, m: &Metrics) {
    if m.latency.is_empty() {
        return;
    }
    let _ = writeln!(o, "\nResponse time (answered attempts)");
    let _ = writeln!(
        o,
        "  {:<38} {:>6} {:>9} {:>9}",
        "", "calls", "P50 ms", "P95 ms"
    );
    for l in &m.latency {
        let _ = writeln!(
            o,
            "  {:<38} {:>6} {:>9} {:>9}",
            format!("{} {}", l.by, l.key),
            l.count,
            l.p50_ms,
            l.p95_ms
        );
    }
}

fn tokens_by_agent(o: &mut String, m: &Metrics, roster: &Roster) {
    if m.tokens_by_agent.is_empty() {
        return;
    }
    let _ = writeln!(o, "\nTokens per AI (in / out)");
    for (a, t) in &m.tokens_by_agent {
        row(o, &roster.player(a), format!("{} / {}", t.input, t.output));
    }
}

fn party(o: &mut String, m: &Metrics, roster: &Roster) {
    let _ = writeln!(o, "\nParty");
    if m.has_party_discussion {
        for c in &m.consensus {
            let list: Vec<String> = c.outcomes.iter().map(|(k, n)| format!("{k} {n}")).collect();
            row(
                o,
                &format!("consensus, session {}", c.session),
                list.join(", "),
            );
        }
        if m.adopted_by.is_empty() {
            row(o, "adopted plans", "none".into());
        }
        for (a, n) in &m.adopted_by {
            row(
                o,
                &format!("plans adopted from {}", roster.player(a)),
                n.to_string(),
            );
        }
    } else {
        let _ = writeln!(o, "  no party discussion in these sessions");
    }
    for p in &m.pairs {
        row(
            o,
            &format!("{} → {}", roster.player(&p.from), roster.player(&p.to)),
            format!(
                "agree {}, disagree {}, help {}, votes {}",
                p.total.agree, p.total.disagree, p.total.helps, p.total.votes
            ),
        );
    }
}

fn dice(o: &mut String, m: &Metrics) {
    let d = &m.dice;
    let _ = writeln!(o, "\nDice (d6, as rolled, before GM overrides)");
    row(o, "rolls / dice", format!("{} / {}", d.rolls, d.dice()));
    if d.dice() > 0 {
        let faces: Vec<String> = d
            .faces
            .iter()
            .enumerate()
            .map(|(i, n)| format!("{}:{n}", i + 1))
            .collect();
        row(
            o,
            "faces (expected each)",
            format!("{} ({:.1})", faces.join(" "), f64::from(d.dice()) / 6.0),
        );
        if let Some(c) = d.chi_square() {
            row(
                o,
                "chi-square vs fair d6 (5 df; 11.07 = p 0.05)",
                format!("{c:.2}"),
            );
        }
        let outcomes: Vec<String> = d.outcomes.iter().map(|(k, n)| format!("{k} {n}")).collect();
        row(o, "outcomes", outcomes.join(", "));
        row(o, "LASER FEELINGS dice", d.laser_feelings.to_string());
    }
    row(o, "GM overrides", m.gm_overrides.to_string());
}

/// Whether the log holds everything SC-012 asks of it, and the first gaps if not.
fn completeness(o: &mut String, audit: &Audit) {
    let _ = writeln!(o, "\nLog completeness (SC-012)");
    row(
        o,
        "phases started / closed / cut off",
        format!(
            "{} / {} / {}",
            audit.phases_started, audit.phases_closed, audit.phases_interrupted
        ),
    );
    row(
        o,
        "phase transitions checked / turns",
        format!(
            "{} / {} completed",
            audit.transitions, audit.turns_completed
        ),
    );
    row(
        o,
        "model calls logged / answered",
        format!("{} / {}", audit.model_calls, audit.answered_calls),
    );
    row(
        o,
        "AI decisions / backed by a model call",
        format!(
            "{} / {} (+{} typed by the GM)",
            audit.decisions, audit.decisions_from_models, audit.decisions_typed_by_gm
        ),
    );
    row(
        o,
        "action attempts / with a verdict",
        format!(
            "{} / {} (+{} needing none)",
            audit.actions, audit.actions_with_verdict, audit.actions_exempt
        ),
    );
    game_calls(o, audit);
    if audit.complete() {
        row(o, "gaps", "none".into());
        return;
    }
    row(
        o,
        "gaps",
        (audit.gaps.len() + audit.run_gaps.len()).to_string(),
    );
    for g in audit.gaps.iter().take(10) {
        let _ = writeln!(o, "    session {}, event {}: {}", g.session, g.seq, g.what);
    }
    for g in audit.run_gaps.iter().take(10) {
        let _ = writeln!(
            o,
            "    {:?} run {}, event {}: {}",
            g.game, g.run, g.seq, g.what
        );
    }
}

/// The first twenty flags for review (the report lists them all).
fn flagged(o: &mut String, flags: &[Flag]) {
    let _ = writeln!(o, "\nFlagged for review: {}", flags.len());
    for f in flags.iter().take(20) {
        let _ = writeln!(
            o,
            "  session {} turn {} (event {}): {} — {}",
            f.session,
            f.turn,
            f.seq,
            f.kind.title(),
            f.detail
        );
    }
    if flags.len() > 20 {
        let _ = writeln!(o, "  … and {} more (see the report)", flags.len() - 20);
    }
}

/// The scorecard per model as a table, and, for a batch, which run each session was.
pub fn render_scorecard(card: &[ModelScore], runs: &[RunRow]) -> String {
    let mut o = String::new();
    if !runs.is_empty() {
        let _ = writeln!(o, "\nRuns: {}", runs.len());
        for r in runs {
            let _ = writeln!(o, "  session {:<4} {}  ({})", r.session, r.run, r.model);
        }
    }
    let _ = writeln!(o, "\nScorecard per model");
    let width = card
        .iter()
        .map(|r| r.model.chars().count())
        .chain([5])
        .max()
        .unwrap_or(5);
    let _ = writeln!(
        o,
        "  {:<width$}  {:>8} {:>6} {:>8} {:>14} {:>8} {:>8} {:>8} {:>8} {:>11} {:>12} {:>10} {:>7}  cost",
        "model",
        "sessions",
        "turns",
        "actions",
        "overreach/100",
        "GM flags",
        "flagged",
        "no reply",
        "gave up",
        "tokens/turn",
        "latency/turn",
        "cost/turn",
        "cached",
    );
    for r in card {
        let _ = writeln!(
            o,
            "  {:<width$}  {:>8} {:>6} {:>8} {:>14} {:>8} {:>8} {:>8} {:>8} {:>11} {:>12} {:>10} {:>7}  {}",
            r.model,
            r.sessions,
            r.turns,
            r.actions,
            one_decimal(r.overreach_per_100_actions),
            r.gm_flags,
            r.review_flags,
            r.failed_calls,
            r.phases_failed,
            whole(r.tokens_per_turn),
            r.latency_ms_per_turn
                .map_or_else(|| "n/a".into(), |v| format!("{v:.0} ms")),
            r.cost_usd_per_turn
                .map_or_else(|| "n/a".into(), crate::cost::usd),
            pct(r.cached_input_share),
            r.cost,
        );
    }
    let _ = writeln!(
        o,
        "  (overreach/100: verdicts not passed per 100 actions checked; flagged: flags for review; no reply: model attempts without an answer; gave up: failed steps; cached: share of input tokens read from the provider's cache)"
    );
    o
}

/// The stats of a campaign that has played only encounters and scenes: what their logs hold
/// (each game's model calls, the gaps), and none of the Lasers & Feelings sessions' figures,
/// which would all be zeros.
pub fn render_games_stats(title: &str, audit: &Audit) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "troupe stats — {title}");
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "No Lasers & Feelings sessions here: the figures are the encounter runs' and scenes'."
    );
    let _ = writeln!(o, "\nLog completeness");
    game_calls(&mut o, audit);
    let gaps = audit.run_gaps.len();
    let _ = writeln!(
        o,
        "  {:<38} {}",
        "gaps",
        if gaps == 0 {
            "none".to_string()
        } else {
            gaps.to_string()
        }
    );
    for g in audit.run_gaps.iter().take(10) {
        let _ = writeln!(
            o,
            "    {:?} run {}, event {}: {}",
            g.game, g.run, g.seq, g.what
        );
    }
    o
}

/// The scorecard per model of the encounter runs and scenes (empty text without rows).
pub fn render_game_scorecard(rows: &[GameModelScore]) -> String {
    let mut o = String::new();
    if rows.is_empty() {
        return o;
    }
    let _ = writeln!(o, "\nScorecard per model: encounter runs and scenes");
    let width = rows
        .iter()
        .map(|r| r.model.chars().count())
        .chain([5])
        .max()
        .unwrap_or(5);
    let _ = writeln!(
        o,
        "  {:<9}  {:<width$}  {:>5} {:>6} {:>8} {:>8} {:>10} {:>11} {:>11} {:>12}",
        "game",
        "model",
        "runs",
        "calls",
        "attempts",
        "no reply",
        "tokens in",
        "tokens out",
        "tokens/call",
        "latency/call",
    );
    for r in rows {
        let _ = writeln!(
            o,
            "  {:<9}  {:<width$}  {:>5} {:>6} {:>8} {:>8} {:>10} {:>11} {:>11} {:>12}",
            r.game,
            r.model,
            r.runs,
            r.calls,
            r.attempts,
            r.failed_attempts,
            r.tokens_in,
            r.tokens_out,
            whole(r.tokens_per_call),
            r.latency_ms_per_call
                .map_or_else(|| "n/a".into(), |v| format!("{v:.0} ms")),
        );
    }
    o
}

fn one_decimal(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".into(), |v| format!("{v:.1}"))
}

fn whole(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".into(), |v| format!("{v:.0}"))
}

/// Each game's model calls: calls, attempts, and attempts that keep the request shown.
fn game_calls(o: &mut String, audit: &Audit) {
    for g in &audit.games {
        let key = format!("{} calls / attempts / with request", g.game);
        let _ = writeln!(
            o,
            "  {key:<38} {} / {} / {}",
            g.calls, g.attempts, g.with_request
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scorecard_table_has_a_row_per_model_and_says_n_a_without_turns() {
        let card = [
            ModelScore {
                model: "openai:gpt-4o-mini".into(),
                sessions: 2,
                turns: 6,
                actions: 8,
                overreach: 1,
                overreach_per_100_actions: Some(12.5),
                tokens_per_turn: Some(1234.4),
                latency_ms_per_turn: Some(850.0),
                ..ModelScore::default()
            },
            ModelScore {
                model: "ollama:llama3.2".into(),
                sessions: 1,
                ..ModelScore::default()
            },
        ];
        let runs = [RunRow {
            session: 1,
            run: "party-seed1-openai-gpt-4o-mini".into(),
            run_session: 1,
            model: "openai:gpt-4o-mini".into(),
        }];
        let text = render_scorecard(&card, &runs);
        let row = |m: &str| {
            text.lines()
                .find(|l| l.contains(m))
                .map(str::split_whitespace)
        };
        let gpt: Vec<&str> = row("  openai:gpt").into_iter().flatten().collect();
        assert_eq!(
            gpt,
            [
                "openai:gpt-4o-mini",
                "2",
                "6",
                "8",
                "12.5",
                "0",
                "0",
                "0",
                "0",
                "1234",
                "850",
                "ms",
                "n/a",
                "n/a"
            ]
        );
        let llama: Vec<&str> = row("ollama").into_iter().flatten().collect();
        assert_eq!(llama[4], "n/a");
        assert_eq!(llama[9..], ["n/a", "n/a", "n/a", "n/a"]);
        assert!(text.contains("session 1    party-seed1-openai-gpt-4o-mini"));
    }
}
