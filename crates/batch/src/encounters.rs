//! The encounter runs' figures: the GM's scorecard of each run (`troupe encounter stats`), and
//! every run's of a campaign beside its sessions' metrics (`troupe stats`, `troupe report`).

use std::path::Path;

/// The encounter's runs, as its commands speak of them.
pub const GAME: crate::runs::Game = crate::runs::Game {
    name: "encounter",
    starts: "`troupe encounter run SPEC`",
};

/// The GM's scorecard of one run.
pub fn scorecard(events: &[troupe_encounter::log::Envelope]) -> anyhow::Result<serde_json::Value> {
    Ok(serde_json::to_value(troupe_encounter::score::scorecard(
        events,
    ))?)
}

/// Every encounter run's scorecard in a campaign directory (none when it has no runs), for
/// `troupe stats` and `troupe report`.
pub fn all_scorecards(dir: &Path) -> anyhow::Result<Vec<serde_json::Value>> {
    crate::runs::every_card(dir, &GAME, scorecard)
}

/// The scorecards as a table.
pub fn render_scorecards(cards: &[serde_json::Value]) -> String {
    let mut out = String::from(
        "Encounter runs: the GM's scorecard\n\
         run  spec                          rounds resolved gm-turns refused(schema/engine) \
         leaks rewrites withheld checks tokens-in/turn tokens-out/turn median-ms\n",
    );
    for c in cards {
        let n = |k: &str| c[k].as_u64().unwrap_or(0);
        let f = |k: &str| c[k].as_f64().unwrap_or(0.0);
        out.push_str(&format!(
            "{:>3}  {:<29} {:>6} {:>8} {:>8} {:>10}/{:<11} {:>5} {:>8} {:>8} {:>6} {:>14.0} {:>15.0} {:>9}\n",
            n("run"),
            c["spec"].as_str().unwrap_or_default(),
            n("rounds"),
            if c["resolved"] == true { "yes" } else { "no" },
            n("gm_turns"),
            n("refused_by_schema"),
            n("refused_by_engine"),
            n("leaks_caught"),
            n("rewrites"),
            n("withheld"),
            n("checks"),
            f("tokens_in_per_gm_turn"),
            f("tokens_out_per_gm_turn"),
            n("median_gm_latency_ms"),
        ));
    }
    out
}
