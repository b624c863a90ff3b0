//! A bench's results: one table per model in Markdown, the same numbers in JSON. Every result
//! names the suite's version and the seed; the clock's numbers sit apart from the scores
//! (`timing` beside `scores`), so two runs of one seed can be compared byte for byte without
//! them.

use std::fmt::Write as _;

use serde::Serialize;

use crate::SUITE_NAME;
use crate::score::{Scores, Timing};
use crate::stats::{Estimate, Pair, SKILLS, compare, estimates, skill};

/// Every model's results.
#[derive(Clone, Debug, Serialize)]
pub struct Bench {
    pub suite: &'static str,
    pub suite_version: String,
    pub seed: u64,
    /// No model judges anything: every score is counted from the logs.
    pub judge: Option<String>,
    /// The scenarios played, with their family and seed (a generated suite).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scenarios: Vec<ScenarioInfo>,
    /// The models that are baselines (the scripted players, the embedded model).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub baselines: Vec<String>,
    pub models: Vec<ModelResult>,
    /// Every pair of models, skill by skill (suite 2.0).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pairwise: Vec<Pair>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ScenarioInfo {
    pub id: String,
    pub family: String,
    pub seed: Option<u64>,
}

/// One family's skills (those with items in it).
#[derive(Clone, Debug, Serialize)]
pub struct FamilyResult {
    pub family: String,
    pub skills: Vec<Estimate>,
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
    /// Each skill with its 95 % interval over scenarios (suite 2.0).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<Estimate>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by_family: Vec<FamilyResult>,
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
            skills: Vec::new(),
            by_family: Vec::new(),
            timing,
        }
    }

    /// The skills with their intervals, overall and per family of `scenarios`.
    fn analyse(&mut self, scenarios: &[ScenarioInfo]) {
        let all: Vec<&Scores> = self.by_scenario.iter().map(|s| &s.scores).collect();
        self.skills = estimates(&all);
        let mut families: Vec<&str> = scenarios.iter().map(|s| s.family.as_str()).collect();
        families.dedup();
        self.by_family = families
            .into_iter()
            .map(|f| {
                let mine: Vec<&Scores> = self
                    .by_scenario
                    .iter()
                    .zip(scenarios)
                    .filter(|(_, info)| info.family == f)
                    .map(|(s, _)| &s.scores)
                    .collect();
                let skills = estimates(&mine).into_iter().filter(|e| e.items > 0);
                FamilyResult {
                    family: f.to_string(),
                    skills: skills.collect(),
                }
            })
            .collect();
    }
}

impl Bench {
    /// Suite 2.0's statistics: every model's skills with intervals, and every pair compared.
    pub fn analyse(&mut self) {
        for m in &mut self.models {
            m.analyse(&self.scenarios);
        }
        let per: Vec<(&str, Vec<&Scores>)> = self
            .models
            .iter()
            .map(|m| {
                (
                    m.model.as_str(),
                    m.by_scenario.iter().map(|s| &s.scores).collect(),
                )
            })
            .collect();
        let mut pairs = Vec::new();
        for (i, a) in per.iter().enumerate() {
            for b in &per[i + 1..] {
                pairs.extend(compare((a.0, &a.1), (b.0, &b.1)));
            }
        }
        self.pairwise = pairs;
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

/// One table per model (suite 1.0), or the skills with intervals, the pairwise comparisons
/// and the families (a generated suite).
pub fn render_markdown(bench: &Bench) -> String {
    if bench.models.iter().any(|m| !m.skills.is_empty()) {
        return render_skills(bench);
    }
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

fn estimate(e: &Estimate) -> String {
    match (e.value, e.low, e.high) {
        (Some(v), Some(l), Some(h)) => format!("{v:.2} [{l:.2}, {h:.2}] n={}", e.items),
        _ => "–".into(),
    }
}

fn render_skills(bench: &Bench) -> String {
    let items: u32 = bench.models.first().map_or(0, |m| {
        m.skills
            .iter()
            .filter(|e| e.skill != "replies_valid")
            .map(|e| e.items)
            .sum()
    });
    let mut out = format!(
        "# {SUITE_NAME}: suite {}, seed {}\n\n{} scenarios; {items} scored items for `{}` (replies aside). \
         Each cell: the value [95 % bootstrap interval over scenarios] n=items. Judge: none \
         (every score is counted from the logs; docs/bench.md). Baselines: {}.\n\n",
        bench.suite_version,
        bench.seed,
        bench.scenarios.len(),
        bench.models.first().map_or("", |m| m.model.as_str()),
        if bench.baselines.is_empty() {
            "none".to_string()
        } else {
            bench.baselines.join(", ")
        },
    );
    let names: Vec<&str> = bench.models.iter().map(|m| m.model.as_str()).collect();
    let _ = writeln!(
        out,
        "| skill | {} |\n|---|{}",
        names.join(" | "),
        "---|".repeat(names.len())
    );
    for (i, sk) in SKILLS.iter().enumerate() {
        let cells: Vec<String> = bench
            .models
            .iter()
            .map(|m| m.skills.get(i).map_or("–".into(), estimate))
            .collect();
        let _ = writeln!(out, "| {} | {} |", sk.title, cells.join(" | "));
    }
    out.push_str(&pairwise_table(&bench.pairwise));
    out.push_str(&family_table(bench));
    out.push_str(&timing_table(bench));
    out
}

fn pairwise_table(pairs: &[Pair]) -> String {
    if pairs.is_empty() {
        return String::new();
    }
    let mut out = "\n## Pairwise (A minus B, same scenarios)\n\n| A | B | skill | difference [95 %] | clear? |\n|---|---|---|---|---|\n".to_string();
    for p in pairs {
        let title = skill(p.skill).map_or(p.skill, |s| s.title);
        let diff = match (p.difference, p.low, p.high) {
            (Some(d), Some(l), Some(h)) => format!("{d:+.2} [{l:+.2}, {h:+.2}]"),
            _ => "–".into(),
        };
        let clear = p
            .better
            .as_ref()
            .map_or("no".to_string(), |b| format!("yes: `{b}`"));
        let _ = writeln!(
            out,
            "| `{}` | `{}` | {title} | {diff} | {clear} |",
            p.a, p.b
        );
    }
    out
}

fn family_table(bench: &Bench) -> String {
    let mut out = "\n## By family\n\n| family | model | skills |\n|---|---|---|\n".to_string();
    for m in &bench.models {
        for f in &m.by_family {
            let cells: Vec<String> = f
                .skills
                .iter()
                .map(|e| {
                    format!(
                        "{} {}",
                        skill(e.skill).map_or(e.skill, |s| s.title),
                        estimate(e)
                    )
                })
                .collect();
            let _ = writeln!(
                out,
                "| {} | `{}` | {} |",
                f.family,
                m.model,
                cells.join("; ")
            );
        }
    }
    out
}

fn timing_table(bench: &Bench) -> String {
    let mut out = "\n## Cost (apart from the scores)\n\n| model | sessions | turns | tokens | tokens / turn | wall s (sessions summed) | failed runs |\n|---|---|---|---|---|---|---|\n".to_string();
    for m in &bench.models {
        let s = &m.scores;
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {:.1} | {} |",
            m.model,
            s.sessions,
            s.turns,
            s.tokens,
            s.tokens_per_turn.map_or("–".into(), |x| format!("{x:.0}")),
            m.timing.total.wall_ms as f64 / 1000.0,
            m.failed_runs.len()
        );
    }
    out
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
            judge: None,
            scenarios: Vec::new(),
            baselines: Vec::new(),
            models: vec![m],
            pairwise: Vec::new(),
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
