//! The report: one self-contained HTML file (inline CSS and SVG, no script, nothing fetched).
//! All text from the log is escaped: model output may contain markup.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use serde_json::Value;

use troupe_lasers::Event;
use troupe_llm::AttemptRecord;

use crate::audit::audit_with_games_of;
use crate::cost::costs_of;
use crate::ev::{Roster, event_anchor, seq, session, turn_anchor};
use crate::flags::FlagKind;
use crate::flags::flags_of;
use crate::games::Games;
use crate::games_html;
use crate::lasers::{self, logged_word};
use crate::metrics::metrics_of;
use crate::metrics::{PairCounts, leader};
use crate::scorecard::{runs_of, scorecard_of};
use crate::svg::{self, Edge, Kind, Node, PALETTE, Series, esc};
use crate::text::pct;
use crate::{Audit, Flag, Metrics};

mod describe;

pub(crate) const CSS: &str = r#"
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d1d1f;background:#fafafa;margin:0}
main{max-width:1180px;margin:0 auto;padding:24px}
h1{font-size:26px;margin:0 0 4px}h2{font-size:20px;margin:36px 0 10px;border-bottom:2px solid #ddd;padding-bottom:4px}
h3{font-size:16px;margin:22px 0 8px}
.sub{color:#666;margin:0 0 16px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:10px}
.card{background:#fff;border:1px solid #e2e2e2;border-radius:8px;padding:10px 12px}
.card b{display:block;font-size:22px}.card span{color:#666;font-size:13px}
.chart,.graph{background:#fff;border:1px solid #e2e2e2;border-radius:8px;max-width:100%;height:auto}
.graphs{display:flex;flex-wrap:wrap;gap:10px}
.empty{background:#fff;border:1px dashed #bbb;border-radius:8px;padding:14px;color:#666}
table{border-collapse:collapse;background:#fff;margin:6px 0}td,th{border:1px solid #e2e2e2;padding:4px 8px;text-align:left;vertical-align:top;font-size:14px}
th{background:#f1f1f1}
.turn{background:#fff;border:1px solid #e2e2e2;border-radius:8px;margin:14px 0;padding:4px 14px 10px}
.row{display:grid;grid-template-columns:96px minmax(0,1fr) minmax(0,1fr);gap:12px;padding:6px 0;border-top:1px solid #f0f0f0}
.row:target,.flagged{background:#fff6d6}
.tag{font:600 11px/1.6 ui-monospace,monospace;border-radius:4px;padding:1px 6px;height:fit-content;text-align:center;color:#fff}
.GM{background:#555}.IC{background:#3b6fd8}.OOC{background:#b44bc4}.P2C{background:#2aa3b8}.DICE{background:#c9a227}.NOTE{background:#999}.PARTY{background:#e0703a}.LOG{background:#7a7a7a}.LEAK{background:#b3261e}.SCENE{background:#3a7d5c}
.said blockquote{margin:2px 0;padding-left:10px;border-left:3px solid #ddd}
.mind details{background:#f7f5fb;border-radius:6px;padding:4px 8px;margin-bottom:4px}
.mind summary{cursor:pointer;color:#6a3d9a;font-size:13px}
pre{white-space:pre-wrap;word-break:break-word;font:12px/1.4 ui-monospace,monospace;max-height:320px;overflow:auto;background:#fff;border:1px solid #eee;padding:6px;margin:4px 0}
.bad{color:#b3261e}.ok{color:#1e7d3a}.meta{color:#777;font-size:12px}
a{color:#2557b7}
.badge{display:inline-block;background:#f4c542;color:#222;border-radius:4px;padding:0 5px;font-size:12px;margin-left:6px}
"#;

/// The report for these events (one session or a campaign, in log order).
pub fn render_html(title: &str, events: &[Value]) -> String {
    render_report(title, events, &Games::default())
}

/// The report on the sessions' events and on the campaign's encounter runs and scenes. With
/// no sessions' events, the Lasers & Feelings sections are left out.
pub fn render_report(title: &str, events: &[Value], games: &Games) -> String {
    // Read once, as Lasers & Feelings' events, for every section.
    render_read(title, events, &lasers::read(events), games)
}

/// The report on these events, already read as Lasers & Feelings' (`read`, one per event).
pub(crate) fn render_read(
    title: &str,
    events: &[Value],
    read: &[lasers::Row],
    games: &Games,
) -> String {
    let roster = Roster::from_read(read);
    let m = metrics_of(read);
    let fl = flags_of(read);
    let au = audit_with_games_of(events, read, games);
    let mut r = Report {
        o: String::new(),
        roster: &roster,
        multi: m.sessions.len() > 1,
        read,
    };
    r.page(title, events, games, &m, &fl, &au);
    r.o
}

struct Report<'a> {
    o: String,
    roster: &'a Roster,
    multi: bool,
    /// The sessions' rows read as Lasers & Feelings' events, one per row.
    read: &'a [lasers::Row],
}

fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

impl Report<'_> {
    fn w(&mut self, s: &str) {
        self.o.push_str(s);
    }

    fn turn_label(&self, session: u32, turn: u32) -> String {
        if self.multi {
            format!("s{session} t{turn}")
        } else {
            format!("t{turn}")
        }
    }

    fn page(
        &mut self,
        title: &str,
        events: &[Value],
        games: &Games,
        m: &Metrics,
        fl: &[Flag],
        au: &Audit,
    ) {
        self.head(title, events, games, m);
        if events.is_empty() {
            games_html::nav(&mut self.o, games);
            games_html::summary(&mut self.o, games, au);
            games_html::model_scores(&mut self.o, games);
        } else {
            self.nav(games);
            self.seats();
            self.summary(m, fl, au);
            games_html::calls_audit(&mut self.o, au);
            games_html::model_scores(&mut self.o, games);
            self.sessions(events, m, fl);
        }
        games_html::encounters(&mut self.o, &games.encounters);
        games_html::scenes(&mut self.o, &games.scenes);
        if !events.is_empty() {
            self.transcript(events, fl);
        }
        self.w("</main></body></html>\n");
    }

    fn head(&mut self, title: &str, events: &[Value], games: &Games, m: &Metrics) {
        let _ = write!(
            self.o,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><meta http-equiv=\"Content-Security-Policy\" content=\"default-src &#39;none&#39;; style-src &#39;unsafe-inline&#39;\"><title>{}</title><style>{CSS}</style></head><body><main>",
            esc(title)
        );
        let campaign = self
            .roster
            .campaign
            .clone()
            .unwrap_or_else(|| "troupe".into());
        let _ = write!(
            self.o,
            "<h1>{}</h1><p class=\"sub\">{}</p>",
            esc(&campaign),
            esc(&self.subtitle(title, events, games, m))
        );
    }

    /// What the report covers: its title, the sessions, the games, the events and the GM.
    fn subtitle(&self, title: &str, events: &[Value], games: &Games, m: &Metrics) -> String {
        let n = m.sessions.len();
        let mut parts = vec![title.to_string()];
        if !events.is_empty() || games.is_empty() {
            parts.push(format!("{n} session{}", if n == 1 { "" } else { "s" }));
        }
        if !games.is_empty() && !title.contains(&games.describe()) {
            parts.push(games.describe());
        }
        let run_events: usize = games
            .encounters
            .iter()
            .chain(&games.scenes)
            .map(|r| r.events.len())
            .sum();
        parts.push(format!("{} events", events.len() + run_events));
        if !events.is_empty() {
            parts.push(format!(
                "GM {}",
                self.roster.gm.as_deref().unwrap_or("unknown")
            ));
        }
        parts.join(" · ")
    }

    /// The Lasers & Feelings sessions' sections, before their transcript.
    fn sessions(&mut self, events: &[Value], m: &Metrics, fl: &[Flag]) {
        self.per_turn(m);
        self.validation(m);
        self.consensus(m);
        self.leadership(m);
        self.relationships(m);
        self.dice(m);
        self.scorecard(events);
        self.cost();
        self.flags(fl);
        self.latency(m);
    }

    fn nav(&mut self, games: &Games) {
        self.w("<p class=\"meta\">Sections: <a href=\"#summary\">summary</a> · ");
        self.w(&games_html::nav_links(games));
        self.w("<a href=\"#tokens\">tokens &amp; latency</a> · <a href=\"#validation\">validation</a> · <a href=\"#consensus\">consensus</a> · <a href=\"#leadership\">leadership</a> · <a href=\"#relationships\">relationships</a> · <a href=\"#dice\">dice</a> · <a href=\"#scorecard\">scorecard per model</a> · <a href=\"#cost\">cost</a> · <a href=\"#flags\">flags</a> · <a href=\"#transcript\">transcript</a>. The log's schema: docs/log-schema.md.</p>");
    }

    fn seats(&mut self) {
        if self.roster.seats.is_empty() {
            return;
        }
        self.w("<table><tr><th>AI player</th><th>agent id</th><th>character</th></tr>");
        for (i, s) in self.roster.seats.iter().enumerate() {
            let _ = write!(
                self.o,
                "<tr><td><span style=\"color:{}\">●</span> {}</td><td>{}</td><td>{}</td></tr>",
                color(i),
                esc(&s.player),
                esc(&s.agent),
                esc(&s.character)
            );
        }
        self.w("</table>");
    }

    fn card(&mut self, value: &str, label: &str) {
        let _ = write!(
            self.o,
            "<div class=\"card\"><b>{}</b><span>{}</span></div>",
            esc(value),
            esc(label)
        );
    }

    fn summary(&mut self, m: &Metrics, fl: &[Flag], au: &Audit) {
        self.w("<h2 id=\"summary\">Summary</h2><div class=\"cards\">");
        self.card(&m.turns.to_string(), "turns completed");
        self.card(
            &pct(m.validation.first_pass_rate()),
            "validation failures, first pass",
        );
        self.card(
            &pct(m.validation.final_rate()),
            "validation failures after retries",
        );
        self.card(&m.model.calls.to_string(), "model calls");
        self.card(
            &format!("{} / {}", m.model.retries, m.model.errors),
            "model retries / errored attempts",
        );
        for l in m.latency.iter().filter(|l| l.by == "layer") {
            let (p50, p95) = (l.p50_ms, l.p95_ms);
            let key = l.key.clone();
            self.card(
                &format!("{p50} / {p95} ms"),
                &format!("{key} layer P50 / P95"),
            );
        }
        if m.turns > 0 {
            self.card(
                &format!(
                    "{:.0}",
                    (m.model.tokens.input as f64 + m.model.tokens.output as f64)
                        / f64::from(m.turns)
                ),
                "tokens per turn (in + out)",
            );
        }
        self.card(&fl.len().to_string(), "flagged for review");
        self.card(
            if au.complete() { "complete" } else { "gaps" },
            &format!(
                "log audit: {} phases, {} decisions, {} actions",
                au.phases_started, au.decisions, au.actions
            ),
        );
        self.w("</div>");
        if !au.complete() {
            self.w("<p class=\"bad\">The log has gaps:</p><ul>");
            for g in &au.gaps {
                let _ = write!(
                    self.o,
                    "<li><a href=\"#{}\">session {}, event {}</a>: {}</li>",
                    event_anchor(g.session, g.seq),
                    g.session,
                    g.seq,
                    esc(&g.what)
                );
            }
            self.w("</ul>");
        }
    }

    fn per_turn(&mut self, m: &Metrics) {
        self.w("<h2 id=\"tokens\">Tokens and latency per turn</h2>");
        if m.per_turn.is_empty() {
            self.w("<p class=\"empty\">No model calls in these sessions.</p>");
            return;
        }
        let cats: Vec<String> = m
            .per_turn
            .iter()
            .map(|t| self.turn_label(t.session, t.turn))
            .collect();
        let tin: Vec<f64> = m.per_turn.iter().map(|t| t.tokens.input as f64).collect();
        let tout: Vec<f64> = m.per_turn.iter().map(|t| t.tokens.output as f64).collect();
        let lat: Vec<f64> = m.per_turn.iter().map(|t| t.latency_ms as f64).collect();
        let calls: Vec<f64> = m.per_turn.iter().map(|t| f64::from(t.calls)).collect();
        self.w(&svg::chart(
            Kind::Bars,
            "tokens",
            &cats,
            &[
                Series::new("tokens in", color(0), tin),
                Series::new("tokens out", color(1), tout),
            ],
            None,
        ));
        if lat.iter().all(|l| *l == 0.0) {
            self.w("<p class=\"meta\">Every model call answered at once (0 ms): recorded replies (a replay), not a live model.</p>");
        }
        self.w(&svg::chart(
            Kind::Lines,
            "model time per turn (ms)",
            &cats,
            &[Series::new("model latency, summed (ms)", color(3), lat)],
            None,
        ));
        self.w(&svg::chart(
            Kind::Bars,
            "attempts",
            &cats,
            &[Series::new("model attempts", color(6), calls)],
            None,
        ));
    }

    fn validation(&mut self, m: &Metrics) {
        self.w("<h2 id=\"validation\">Validation failures over time</h2>");
        let turns: Vec<_> = m.per_turn.iter().filter(|t| t.validations > 0).collect();
        if turns.is_empty() {
            self.w("<p class=\"empty\">No actions were checked in these sessions.</p>");
            return;
        }
        let cats: Vec<String> = turns
            .iter()
            .map(|t| self.turn_label(t.session, t.turn))
            .collect();
        self.w(&svg::chart(
            Kind::Bars,
            "verdicts",
            &cats,
            &[
                Series::new(
                    "verdicts",
                    color(2),
                    turns.iter().map(|t| f64::from(t.validations)).collect(),
                ),
                Series::new(
                    "rejected (narrated a result)",
                    color(5),
                    turns
                        .iter()
                        .map(|t| f64::from(t.validation_failures))
                        .collect(),
                ),
            ],
            None,
        ));
        let v = &m.validation;
        let _ = write!(
            self.o,
            "<p>{} actions checked: {} failed the first check ({}), {} still failed after the retries ({}); {} retries, {} auto-corrected, {} sent to the GM.</p>",
            v.actions,
            v.first_pass_failures,
            pct(v.first_pass_rate()),
            v.final_failures,
            pct(v.final_rate()),
            v.retries,
            v.auto_corrected,
            v.flagged_for_gm
        );
    }

    fn consensus(&mut self, m: &Metrics) {
        self.w("<h2 id=\"consensus\">Consensus outcomes per session</h2>");
        if m.consensus.is_empty() {
            self.w("<p class=\"empty\">No party discussion in these sessions: no consensus was reached or sought (the log has no <code>consensus</code> events).</p>");
            return;
        }
        let outcomes: BTreeSet<&String> =
            m.consensus.iter().flat_map(|c| c.outcomes.keys()).collect();
        let cats: Vec<String> = m
            .consensus
            .iter()
            .map(|c| format!("session {}", c.session))
            .collect();
        let series: Vec<Series> = outcomes
            .iter()
            .enumerate()
            .map(|(i, o)| {
                Series::new(
                    o,
                    color(i),
                    m.consensus
                        .iter()
                        .map(|c| f64::from(c.outcomes.get(*o).copied().unwrap_or(0)))
                        .collect(),
                )
            })
            .collect();
        self.w(&svg::chart(Kind::Bars, "discussions", &cats, &series, None));
    }

    fn leadership(&mut self, m: &Metrics) {
        self.w("<h2 id=\"leadership\">Leadership: whose proposals the party adopts</h2>");
        if m.adopted_by.is_empty() {
            let why = if m.has_party_discussion {
                "No proposal was adopted in these sessions."
            } else {
                "No party discussion in these sessions, so no proposals to adopt."
            };
            let _ = write!(self.o, "<p class=\"empty\">{why}</p>");
            return;
        }
        let agents: Vec<String> = self.roster.agents();
        let cats: Vec<String> = agents.iter().map(|a| self.roster.player(a)).collect();
        let sessions: Vec<u32> = m.adopted_by_session.keys().copied().collect();
        let series: Vec<Series> = sessions
            .iter()
            .enumerate()
            .map(|(i, sn)| {
                let by = &m.adopted_by_session[sn];
                Series::new(
                    &format!("session {sn}"),
                    color(i),
                    agents
                        .iter()
                        .map(|a| f64::from(by.get(a).copied().unwrap_or(0)))
                        .collect(),
                )
            })
            .collect();
        self.w(&svg::chart(
            Kind::Bars,
            "plans adopted",
            &cats,
            &series,
            None,
        ));
        self.w("<table><tr><th>session</th><th>leader (most plans adopted)</th></tr>");
        for (sn, by) in &m.adopted_by_session {
            let l = leader(by).map_or_else(|| "tie".into(), |a| self.roster.player(&a));
            let _ = write!(self.o, "<tr><td>{sn}</td><td>{}</td></tr>", esc(&l));
        }
        self.w("</table><h3>Every discussion</h3><table><tr><th>where</th><th>rounds</th><th>outcome</th><th>plan adopted</th><th>proposed by</th><th>did not agree</th></tr>");
        for d in &m.discussions {
            let adopted = d.outcome != "conflicted";
            let _ = write!(
                self.o,
                "<tr><td><a href=\"#{}\">session {}, turn {}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                event_anchor(d.session, d.seq),
                d.session,
                d.turn,
                d.rounds,
                esc(&d.outcome),
                esc(if adopted {
                    d.plan.as_deref().unwrap_or("")
                } else {
                    "(none)"
                }),
                esc(&d
                    .proposer
                    .as_deref()
                    .filter(|_| adopted)
                    .map(|p| self.roster.player(p))
                    .unwrap_or_default()),
                esc(&d
                    .dissent
                    .iter()
                    .map(|a| self.roster.player(a))
                    .collect::<Vec<_>>()
                    .join(", "))
            );
        }
        self.w("</table>");
    }

    fn relationships(&mut self, m: &Metrics) {
        self.w("<h2 id=\"relationships\">Relationships between the AI players</h2>");
        if m.pairs.is_empty() {
            let why = if self.roster.seats.len() < 2 {
                "One AI player at this table: there are no relationships between players to chart."
            } else if m.has_party_discussion {
                "The players neither took sides on each other's proposals nor helped each other."
            } else {
                "No party discussion in these sessions, and no player helped another: no agreement or support to chart."
            };
            let _ = write!(self.o, "<p class=\"empty\">{why}</p>");
            return;
        }
        self.w("<p class=\"meta\">An arrow from A to B: A agreed with B's proposals, voted for B or rolled to help B's character (green, thicker = more), or disagreed with B more than it supported B (red). One graph per stretch of time (each session, or a session's turns), then all of it together.</p><div class=\"graphs\">");
        let agents = self.roster.agents();
        let nodes: Vec<Node> = agents
            .iter()
            .enumerate()
            .map(|(i, a)| Node {
                label: self.roster.player(a),
                color: color(i).into(),
            })
            .collect();
        // One scale for every graph, so arrows compare across stretches of time.
        let max = m
            .pairs
            .iter()
            .map(|p| f64::from(p.total.support() + p.total.disagree))
            .fold(1.0, f64::max);
        for (title, pairs) in self.relationship_views(m) {
            let edges = self.relationship_edges(&agents, &pairs);
            self.w(&svg::graph(&title, &nodes, &edges, max));
        }
        self.w("</div><table><tr><th>from</th><th>to</th><th>agree</th><th>disagree</th><th>help</th><th>votes</th></tr>");
        for p in &m.pairs {
            let _ = write!(
                self.o,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&self.roster.player(&p.from)),
                esc(&self.roster.player(&p.to)),
                p.total.agree,
                p.total.disagree,
                p.total.helps,
                p.total.votes
            );
        }
        self.w("</table>");
    }

    /// The stretches of time the relationships are charted over, each with its pairs: every
    /// session (a campaign) or up to four stretches of turns (one session), then all of it.
    fn relationship_views(&self, m: &Metrics) -> Vec<(String, Vec<PairView>)> {
        let mut views = if self.multi {
            session_views(m)
        } else {
            turn_views(m)
        };
        views.push((
            if self.multi {
                "all sessions".into()
            } else {
                "the whole session".into()
            },
            m.pairs
                .iter()
                .map(|p| (p.from.clone(), p.to.clone(), p.total.clone()))
                .collect(),
        ));
        views
    }

    /// A view's pairs as the graph's arrows (between the seats' nodes, by index in `agents`).
    fn relationship_edges(&self, agents: &[String], pairs: &[PairView]) -> Vec<Edge> {
        let idx = |a: &str| agents.iter().position(|x| x == a);
        pairs
            .iter()
            .filter_map(|(f, t, c)| {
                Some(Edge {
                    from: idx(f)?,
                    to: idx(t)?,
                    weight: f64::from(c.support() + c.disagree),
                    tone: f64::from(c.support()) - f64::from(c.disagree),
                    label: format!(
                        "{} → {}: agree {}, disagree {}, help {}, votes {}",
                        self.roster.player(f),
                        self.roster.player(t),
                        c.agree,
                        c.disagree,
                        c.helps,
                        c.votes
                    ),
                })
            })
            .collect()
    }

    fn dice(&mut self, m: &Metrics) {
        self.w("<h2 id=\"dice\">Dice: observed against a fair d6</h2>");
        let d = &m.dice;
        if d.dice() == 0 {
            self.w("<p class=\"empty\">No dice were rolled in these sessions.</p>");
            return;
        }
        let cats: Vec<String> = (1..=6).map(|f| f.to_string()).collect();
        let expected = f64::from(d.dice()) / 6.0;
        self.w(&svg::chart(
            Kind::Bars,
            "dice",
            &cats,
            &[Series::new(
                "observed",
                color(4),
                d.faces.iter().map(|&n| f64::from(n)).collect(),
            )],
            Some(&Series::new("expected (fair)", "#333", vec![expected; 6])),
        ));
        let chi = d.chi_square().unwrap_or(0.0);
        let _ = write!(
            self.o,
            "<p>{} dice in {} rolls (action and helper rolls as the dice fell, before any GM override). Chi-square against a fair die: {chi:.2} with 5 degrees of freedom ({}; 11.07 is the 5% threshold; with few dice this says little).</p>",
            d.dice(),
            d.rolls,
            if chi > 11.07 {
                "unlikely for fair dice"
            } else {
                "consistent with fair dice"
            }
        );
        self.w("<table><tr><th>outcome</th><th>rolls</th></tr>");
        for (k, n) in &d.outcomes {
            let _ = write!(self.o, "<tr><td>{}</td><td>{n}</td></tr>", esc(k));
        }
        let _ = write!(
            self.o,
            "<tr><td>successes per roll</td><td>{}</td></tr><tr><td>LASER FEELINGS dice</td><td>{}</td></tr></table>",
            d.successes
                .iter()
                .map(|(k, n)| format!("{}{}: {n}", k, if *k == 3 { "+" } else { "" }))
                .collect::<Vec<_>>()
                .join(", "),
            d.laser_feelings
        );
    }

    fn flags(&mut self, fl: &[Flag]) {
        self.w("<h2 id=\"flags\">Flagged for review</h2>");
        if fl.is_empty() {
            self.w("<p class=\"empty\">Nothing unexpected by the rules below.</p>");
        } else {
            self.w("<table><tr><th>where</th><th>what</th><th>who</th><th>detail</th></tr>");
            for f in fl {
                let who = f
                    .agent
                    .as_deref()
                    .map_or_else(String::new, |a| self.roster.player(a));
                let _ = write!(
                    self.o,
                    "<tr><td><a href=\"#{}\">session {}, turn {}</a></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    event_anchor(f.session, f.seq),
                    f.session,
                    f.turn,
                    esc(f.kind.title()),
                    esc(&who),
                    esc(&f.detail)
                );
            }
            self.w("</table>");
        }
        self.w("<h3>The rules</h3><ul>");
        for k in [
            FlagKind::RepeatedValidationFailures,
            FlagKind::DirectiveIgnored,
            FlagKind::LeaderChange,
            FlagKind::SecretRevealed,
            FlagKind::CharacterSecretRevealed,
            FlagKind::GmOverride,
            FlagKind::ModelFailure,
        ] {
            let _ = write!(
                self.o,
                "<li><b>{}</b>: {}</li>",
                esc(k.title()),
                esc(k.rule())
            );
        }
        self.w("</ul>");
    }

    /// The scorecard per model, and for a batch which run each session was.
    fn scorecard(&mut self, events: &[Value]) {
        let card = scorecard_of(self.read);
        if card.is_empty() {
            return;
        }
        self.w("<h2 id=\"scorecard\">Scorecard per model</h2><table><tr><th>model</th><th>sessions</th><th>turns</th><th>actions</th><th>overreach per 100 actions</th><th>GM flags</th><th>flagged for review</th><th>attempts without reply</th><th>failed steps</th><th>tokens per turn</th><th>latency per turn</th></tr>");
        for r in &card {
            let _ = write!(
                self.o,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&r.model),
                r.sessions,
                r.turns,
                r.actions,
                r.overreach_per_100_actions
                    .map_or_else(|| "n/a".into(), |v| format!("{v:.1}")),
                r.gm_flags,
                r.review_flags,
                r.failed_calls,
                r.phases_failed,
                r.tokens_per_turn
                    .map_or_else(|| "n/a".into(), |v| format!("{v:.0}")),
                r.latency_ms_per_turn
                    .map_or_else(|| "n/a".into(), |v| format!("{v:.0} ms")),
            );
        }
        self.w("</table><p class=\"meta\">Overreach: the overreach check's verdicts other than passed, per 100 declared actions. GM flags: the AI GM's output checks that flagged its words (gm_flagged events). Turns: turns completed (a turn cut short still counts its tokens and latency).</p>");
        self.runs(events);
    }

    /// Tokens and money per session, per model and per turn.
    fn cost(&mut self) {
        let c = costs_of(self.read);
        if c.total.calls == 0 {
            return;
        }
        self.w("<h2 id=\"cost\">Cost</h2><table><tr><th></th><th>calls</th><th>tokens in</th><th>cached</th><th>written to cache</th><th>out</th><th>money</th></tr>");
        let row = |o: &mut String, k: &str, s: &crate::cost::Spend| {
            let _ = write!(
                o,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(k),
                s.calls,
                s.input_tokens,
                s.cached_input_tokens,
                s.cache_write_tokens,
                s.output_tokens,
                esc(&s.money())
            );
        };
        row(&mut self.o, "all", &c.total);
        for (sn, s) in &c.per_session {
            row(&mut self.o, &format!("session {sn}"), s);
        }
        for (model, s) in &c.per_model {
            row(&mut self.o, model, s);
        }
        for t in &c.per_turn {
            row(
                &mut self.o,
                &format!("session {}, turn {}", t.session, t.turn),
                &t.spend,
            );
        }
        let _ = write!(
            self.o,
            "</table><p class=\"meta\">Tokens in count whole prompts; cached: read from the provider's prompt cache (billed lower); written: written to it (Anthropic bills these higher). Prices: the campaign file's \"prices\", else troupe's list prices as of {} (check them before relying on them). Local models and recordings cost nothing. Turn 0 is what happened outside a turn.</p>",
            c.prices_taken
        );
    }

    fn runs(&mut self, events: &[Value]) {
        let rows = runs_of(events, self.read);
        if rows.is_empty() {
            return;
        }
        self.w("<h3>Runs</h3><table><tr><th>session</th><th>run (campaign directory)</th><th>its session</th><th>model</th></tr>");
        for r in &rows {
            let _ = write!(
                self.o,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                r.session,
                esc(&r.run),
                r.run_session,
                esc(&r.model)
            );
        }
        self.w("</table>");
    }

    fn latency(&mut self, m: &Metrics) {
        if m.latency.is_empty() {
            return;
        }
        self.w("<h3>Response time by layer and purpose</h3><table><tr><th>by</th><th>key</th><th>answered attempts</th><th>P50 ms</th><th>P95 ms</th></tr>");
        for l in &m.latency {
            let _ = write!(
                self.o,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&l.by),
                esc(&l.key),
                l.count,
                l.p50_ms,
                l.p95_ms
            );
        }
        self.w("</table>");
    }

    // --- transcript ----------------------------------------------------------------------

    fn transcript(&mut self, events: &[Value], fl: &[Flag]) {
        self.w("<h2 id=\"transcript\">Transcript</h2><p class=\"meta\">Left: what was said and done at the table. Right: the reasoning behind it, expandable — each player's private strategy, the character's justification, and the model calls (prompt and raw reply) that produced it.</p>");
        let flagged: BTreeMap<(u32, u64), Vec<&Flag>> =
            fl.iter().fold(BTreeMap::new(), |mut acc, f| {
                acc.entry((f.session, f.seq)).or_default().push(f);
                acc
            });
        let read = self.read;
        let mut t = Transcript::default();
        for (row, k) in events.iter().zip(read) {
            // Every row has its place (and its anchor), whatever its kind: the envelope's.
            let (sn, sq) = (session(row), seq(row));
            t.session(&mut self.o, sn);
            if let Some(env) = k.event() {
                match &env.event {
                    Event::TurnStarted => {
                        t.turn(&mut self.o, sn, env.turn_number, sq);
                        continue;
                    }
                    Event::ModelCall {
                        agent,
                        layer,
                        purpose,
                        record,
                    } => {
                        t.calls.entry(agent.clone()).or_default().push(Call {
                            at: (sn, sq),
                            layer: logged_word(layer),
                            purpose,
                            record,
                        });
                        let _ = write!(self.o, "<span id=\"{}\"></span>", event_anchor(sn, sq));
                        continue;
                    }
                    _ => {}
                }
            }
            let Some((tag, said, mind)) = self.describe(row, k) else {
                let _ = write!(self.o, "<span id=\"{}\"></span>", event_anchor(sn, sq));
                continue;
            };
            // The model calls behind an AI decision go beside it.
            let mut mind = mind;
            if let Some(caller) = k.event().and_then(|env| decision_caller(&env.event))
                && let Some(cs) = t.calls.remove(caller)
            {
                mind.push_str(&model_calls(&cs, &mut t.seen));
            }
            let marks = flagged.get(&(sn, sq));
            let mut badges = String::new();
            for f in marks.into_iter().flatten() {
                let _ = write!(
                    badges,
                    "<a class=\"badge\" href=\"#flags\" title=\"{}\">⚑ {}</a>",
                    esc(&f.detail),
                    esc(f.kind.title())
                );
            }
            let _ = write!(
                self.o,
                "<div class=\"row{}\" id=\"{}\"><div class=\"tag {tag}\">{tag}</div><div class=\"said\">{said}{badges}</div><div class=\"mind\">{mind}</div></div>",
                if marks.is_some() { " flagged" } else { "" },
                event_anchor(sn, sq)
            );
        }
        t.close(&mut self.o);
    }
}

/// One `model_call` attempt waiting for the decision it led to: where it was logged and what
/// it says.
struct Call<'a> {
    at: (u32, u64),
    layer: String,
    purpose: &'a str,
    record: &'a AttemptRecord,
}

/// Where the transcript stands: the session and turn open, the calls not yet shown beside a
/// decision (by agent), and the system prompts already shown in full.
#[derive(Default)]
struct Transcript<'a> {
    session: Option<u32>,
    open_turn: bool,
    calls: BTreeMap<String, Vec<Call<'a>>>,
    seen: BTreeMap<String, (u32, u64)>,
}

impl Transcript<'_> {
    /// A row of session `sn`: a heading when the session changes (closing its last turn).
    fn session(&mut self, o: &mut String, sn: u32) {
        if self.session != Some(sn) {
            self.close(o);
            self.session = Some(sn);
            let _ = write!(o, "<h3 id=\"s{sn}\">Session {sn}</h3>");
        }
    }

    /// A turn begins (closing the one before).
    fn turn(&mut self, o: &mut String, sn: u32, turn: u32, sq: u64) {
        self.close(o);
        self.open_turn = true;
        let _ = write!(
            o,
            "<div class=\"turn\" id=\"{}\"><h3>Turn {turn}</h3><span id=\"{}\"></span>",
            turn_anchor(sn, turn),
            event_anchor(sn, sq)
        );
    }

    fn close(&mut self, o: &mut String) {
        if self.open_turn {
            o.push_str("</div>");
            self.open_turn = false;
        }
    }
}

/// One directed relationship in a view: from, to, what passed between them.
type PairView = (String, String, PairCounts);

/// A campaign's relationships, one view per session.
fn session_views(m: &Metrics) -> Vec<(String, Vec<PairView>)> {
    m.sessions
        .iter()
        .map(|sn| {
            let pairs = m
                .pairs
                .iter()
                .filter_map(|p| {
                    p.by_session
                        .get(sn)
                        .map(|c| (p.from.clone(), p.to.clone(), c.clone()))
                })
                .collect();
            (format!("session {sn}"), pairs)
        })
        .collect()
}

/// One session's relationships over its turns, in up to four stretches (none for one turn).
fn turn_views(m: &Metrics) -> Vec<(String, Vec<PairView>)> {
    let turns: BTreeSet<u32> = m
        .pairs
        .iter()
        .flat_map(|p| p.by_turn.iter().map(|(_, t, _)| *t))
        .collect();
    let turns: Vec<u32> = turns.into_iter().collect();
    if turns.len() <= 1 {
        return Vec::new();
    }
    let mut views = Vec::new();
    for chunk in turns.chunks(turns.len().div_ceil(4)) {
        let (first, last) = (chunk[0], chunk[chunk.len() - 1]);
        let pairs = m
            .pairs
            .iter()
            .filter_map(|p| {
                let mut c = PairCounts::default();
                for (_, t, x) in &p.by_turn {
                    if (first..=last).contains(t) {
                        c.add(x);
                    }
                }
                (c != PairCounts::default()).then(|| (p.from.clone(), p.to.clone(), c))
            })
            .collect();
        let title = if first == last {
            format!("turn {first}")
        } else {
            format!("turns {first}–{last}")
        };
        views.push((title, pairs));
    }
    views
}

/// The events the model calls logged before them are shown beside (the decisions, and what a
/// failed or extraction call led to), with whose calls those are.
fn decision_caller(event: &Event) -> Option<&str> {
    Some(match event {
        Event::PhaseFailed { agent, .. } => agent,
        // The memory's fact extraction.
        Event::MemoryStorage { .. } => "memory",
        _ => return event.decision_agent(),
    })
}

pub(crate) fn details(summary: &str, body: &str) -> String {
    format!(
        "<details><summary>{}</summary>{body}</details>",
        esc(summary)
    )
}

/// The model calls behind a decision: each attempt's figures, prompt and raw reply. A system
/// prompt already shown in full is named, not repeated (`seen`: prompt → where it was shown).
fn model_calls(calls: &[Call], seen: &mut BTreeMap<String, (u32, u64)>) -> String {
    let mut o = String::new();
    for c in calls {
        let r = c.record;
        let summary = format!(
            "model call: {} ({} layer), attempt {}, {} ms, {} → {} tokens{}",
            c.purpose,
            c.layer,
            r.attempt,
            r.latency_ms,
            r.usage.input_tokens,
            r.usage.output_tokens,
            lasers::given(r.error.as_ref()).map_or_else(String::new, |e| format!(", error: {e}"))
        );
        let mut body = format!("<p class=\"meta\">provider {}</p>", esc(&r.provider));
        for m in &r.messages {
            let (role, content) = (m.role.as_str(), m.content.as_str());
            if role == "system"
                && let Some((sn, sq)) = seen.get(content)
            {
                let _ = write!(
                    body,
                    "<p class=\"meta\">system: the same {} characters as in the call beside <a href=\"#{}\">event {sq}</a></p>",
                    content.chars().count(),
                    event_anchor(*sn, *sq)
                );
                continue;
            }
            if role == "system" {
                seen.insert(content.to_string(), c.at);
            }
            let _ = write!(
                body,
                "<p class=\"meta\">{}</p><pre>{}</pre>",
                esc(role),
                esc(content)
            );
        }
        let _ = write!(
            body,
            "<p class=\"meta\">reply</p><pre>{}</pre>",
            esc(lasers::given(r.reply.as_ref()).unwrap_or("(none)"))
        );
        o.push_str(&details(&summary, &body));
    }
    o
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    /// A row read as the game's event (`crate::lasers::rows::row`), at `seq` in `turn`.
    fn ev(seq: u64, turn: u32, v: Value) -> Value {
        let mut v = crate::lasers::rows::row(v);
        let o = v.as_object_mut().unwrap();
        o.insert("seq".into(), json!(seq));
        o.insert("session_number".into(), json!(1));
        o.insert("turn_number".into(), json!(turn));
        v
    }

    #[test]
    fn model_text_is_escaped_and_reasoning_sits_beside_the_action() {
        let events = vec![
            ev(0, 1, json!({"event_type": "turn_started"})),
            ev(
                1,
                1,
                json!({"event_type": "model_call", "agent": "alex", "layer": "character",
                "purpose": "character_action", "attempt": 1, "latency_ms": 12,
                "usage": {"input_tokens": 5, "output_tokens": 2},
                "messages": [{"role": "user", "content": "<script>alert(1)</script>"}], "reply": "{}"}),
            ),
            ev(
                2,
                1,
                json!({"event_type": "character_action", "agent": "alex", "attempt": 1,
                "action": {"action": "I wave <script>alert(2)</script>", "dialogue": "",
                           "task_type": "lasers", "justification": "because & so"}}),
            ),
            ev(
                3,
                1,
                json!({"event_type": "brand_new_event", "detail": "<b>x</b>"}),
            ),
        ];
        let html = render_html("test", &events);
        assert!(!html.contains("<script>"), "unescaped markup");
        assert!(html.contains("&lt;script&gt;alert(1)"));
        assert!(html.contains("because &amp; so"));
        // The call and the justification are in the action's row, in its reasoning column.
        let row = html.split("id=\"s1-ev-2\"").nth(1).unwrap();
        let row = row.split("class=\"row").next().unwrap();
        assert!(row.contains("model call: character_action"));
        assert!(row.contains("justification"));
        // An event type this report does not know is still shown.
        assert!(html.contains("brand_new_event"));
        assert!(html.contains("id=\"s1-turn-1\""));
    }

    #[test]
    fn sections_without_party_events_say_so() {
        let html = render_html("t", &[ev(0, 1, json!({"event_type": "turn_started"}))]);
        assert!(html.contains("No party discussion in these sessions"));
        for id in [
            "summary",
            "tokens",
            "validation",
            "consensus",
            "leadership",
            "relationships",
            "dice",
            "flags",
            "transcript",
        ] {
            assert!(html.contains(&format!("id=\"{id}\"")), "{id}");
        }
    }

    #[test]
    fn flags_link_to_their_event() {
        let events = vec![
            ev(0, 1, json!({"event_type": "turn_started"})),
            ev(
                7,
                1,
                json!({"event_type": "gm_forced_result", "success": true}),
            ),
        ];
        let html = render_html("t", &events);
        assert!(html.contains("href=\"#s1-ev-7\""));
        assert!(html.contains("id=\"s1-ev-7\""));
    }
}
