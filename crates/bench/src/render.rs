//! A bench's results: one table per model in Markdown, the same numbers in JSON. Every result
//! names the suite's version and the seed; the clock's numbers sit apart from the scores
//! (`timing` beside `scores`), so two runs of one seed can be compared byte for byte without
//! them.

use std::fmt::Write as _;

use serde::Serialize;

use crate::SUITE_NAME;
use crate::score::{Scores, Timing};

/// Every model's results.
#[derive(Clone, Debug, Serialize)]
pub struct Bench {
    pub suite: &'static str,
    pub suite_version: String,
    pub seed: u64,
    pub models: Vec<ModelResult>,
}

/// One model's results over the suite.
#[derive(Clone, Debug, Serialize)]
pub struct ModelResult {
    /// The model as it was named to `troupe bench`.
    pub model: String,
    pub suite: &'static str,
    pub suite_version: String,
    pub seed: u64,
    /// Runs that did not finish (their scenario is scored on what was logged, if anything).
    pub failed_runs: Vec<String>,
    pub scores: Scores,
    pub by_scenario: Vec<ScenarioScores>,
    /// What the clock says, kept apart: the only part that differs between runs of one seed.
    pub timing: ModelTiming,
}

#[derive(Clone, Debug, Serialize)]
pub struct ScenarioScores {
    pub scenario: String,
    #[serde(flatten)]
    pub scores: Scores,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct ModelTiming {
    #[serde(flatten)]
    pub total: Timing,
    pub by_scenario: Vec<ScenarioTiming>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ScenarioTiming {
    pub scenario: String,
    #[serde(flatten)]
    pub timing: Timing,
}

impl ModelResult {
    /// A model's result from its scenarios' scores, in the suite's order.
    pub fn new(
        model: &str,
        suite_version: &str,
        seed: u64,
        scenarios: Vec<(String, Scores, Timing)>,
        failed_runs: Vec<String>,
    ) -> ModelResult {
        let mut scores = Scores::default();
        let mut timing = ModelTiming::default();
        let mut by_scenario = Vec::new();
        for (id, s, t) in scenarios {
            scores.add(&s);
            timing.total.add(&t);
            by_scenario.push(ScenarioScores {
                scenario: id.clone(),
                scores: s,
            });
            timing.by_scenario.push(ScenarioTiming {
                scenario: id,
                timing: t,
            });
        }
        scores.finish();
        timing.total.finish(scores.turns);
        ModelResult {
            model: model.to_string(),
            suite: SUITE_NAME,
            suite_version: suite_version.to_string(),
            seed,
            failed_runs,
            scores,
            by_scenario,
            timing,
        }
    }
}

const HEADER: &[&str] = &[
    "scenario",
    "turns",
    "overreach / 100 actions",
    "secrets kept",
    "character secrets kept",
    "directives followed",
    "party decisions",
    "LASER FEELINGS questions",
    "memory answered",
    "valid replies",
    "tokens / turn",
    "s / turn",
];

/// One table per model.
pub fn render_markdown(bench: &Bench) -> String {
    let mut out = format!(
        "# {SUITE_NAME}: suite {}, seed {}\n",
        bench.suite_version, bench.seed
    );
    for m in &bench.models {
        out.push('\n');
        out.push_str(&model_table(m));
    }
    out
}

fn model_table(m: &ModelResult) -> String {
    let mut out = format!(
        "## `{}` (suite {}, seed {})\n\n| {} |\n|{}\n",
        m.model,
        m.suite_version,
        m.seed,
        HEADER.join(" | "),
        "---|".repeat(HEADER.len())
    );
    for (s, t) in m.by_scenario.iter().zip(&m.timing.by_scenario) {
        let _ = writeln!(out, "{}", row(&s.scenario, &s.scores, &t.timing));
    }
    let _ = writeln!(out, "{}", row("**all**", &m.scores, &m.timing.total));
    if !m.failed_runs.is_empty() {
        let _ = writeln!(
            out,
            "\nRuns that failed (scored on what they logged): {}",
            m.failed_runs.join(", ")
        );
    }
    out
}

fn row(name: &str, s: &Scores, t: &Timing) -> String {
    let cells = [
        name.to_string(),
        s.turns.to_string(),
        match s.overreach_per_100_actions {
            Some(rate) => format!("{rate:.1} ({} of {})", s.overreach, s.actions),
            None => "–".into(),
        },
        fraction(s.secrets_kept, s.secrets),
        fraction(s.character_secrets_kept, s.character_secrets),
        fraction(s.directives_followed, s.directives),
        decisions(s),
        fraction(s.insight_questions, s.insights),
        fraction(s.memory_answered, s.memory_questions),
        fraction(s.replies_valid, s.replies),
        s.tokens_per_turn.map_or("–".into(), |x| format!("{x:.0}")),
        t.seconds_per_turn.map_or("–".into(), |x| format!("{x:.1}")),
    ];
    format!("| {} |", cells.join(" | "))
}

fn fraction(n: u32, of: u32) -> String {
    if of == 0 {
        "–".into()
    } else {
        format!("{n}/{of}")
    }
}

/// `2 (unanimous 1, vote 1)`: how many discussions, and how they ended.
fn decisions(s: &Scores) -> String {
    if s.decisions == 0 {
        return "–".into();
    }
    let how: Vec<String> = s
        .decided_by
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    format!("{} ({})", s.decisions, how.join(", "))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn scores(turns: u32, overreach: u32, actions: u32) -> Scores {
        let mut s = Scores {
            turns,
            overreach,
            actions,
            secrets: 1,
            secrets_kept: 1,
            character_secrets: 1,
            tokens: 100,
            ..Scores::default()
        };
        s.finish();
        s
    }

    #[test]
    fn a_model_table_has_a_row_per_scenario_and_the_total() {
        let t = Timing {
            wall_ms: 3000,
            ..Timing::default()
        };
        let m = ModelResult::new(
            "replay:good",
            "1.0",
            7,
            vec![
                ("secrets".into(), scores(2, 1, 2), t.clone()),
                ("party".into(), scores(1, 0, 2), t),
            ],
            vec![],
        );
        assert_eq!(m.scores.overreach_per_100_actions, Some(25.0));
        assert_eq!(m.scores.tokens_per_turn, Some(66.67));
        assert_eq!(m.timing.total.seconds_per_turn, Some(2.0));
        let bench = Bench {
            suite: SUITE_NAME,
            suite_version: "1.0".into(),
            seed: 7,
            models: vec![m],
        };
        let md = render_markdown(&bench);
        assert!(md.contains("## `replay:good` (suite 1.0, seed 7)"), "{md}");
        assert!(
            md.contains("| secrets | 2 | 50.0 (1 of 2) | 1/1 | 0/1 | – |"),
            "{md}"
        );
        assert!(
            md.contains("| **all** | 3 | 25.0 (1 of 4) | 2/2 | 0/2 |"),
            "{md}"
        );
        let json = serde_json::to_value(&bench).unwrap();
        assert_eq!(json["models"][0]["suite_version"], "1.0");
        assert_eq!(json["models"][0]["by_scenario"][1]["scenario"], "party");
        assert_eq!(json["models"][0]["timing"]["wall_ms"], 6000);
        assert!(json["models"][0]["scores"].get("wall_ms").is_none());
    }
}
