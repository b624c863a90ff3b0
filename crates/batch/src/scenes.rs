//! The scene runs' figures: each run's (`troupe scene stats`), and every run's of a campaign
//! beside its sessions' metrics and its encounters' scorecards (`troupe stats`).

use std::path::Path;

use serde_json::Value;

/// The scene's runs, as its commands speak of them.
pub const GAME: crate::runs::Game = crate::runs::Game {
    name: "scene",
    starts: "`troupe scene play FILE`",
};

/// One scene run's figures, from its log: what was played (turns, the character's lines),
/// what the engine did with it (tools applied, calls refused, turns taken back), and what the
/// models did (calls, attempts, tokens, narrations polished and refused).
pub fn figures(events: &[troupe_scene::Envelope]) -> anyhow::Result<Value> {
    use troupe_scene::SceneEvent as E;
    let live = troupe_scene::live(events);
    let mut f = serde_json::json!({});
    let mut n = |k: &str, by: u64| {
        f[k] = (f[k].as_u64().unwrap_or(0) + by).into();
    };
    for k in [
        "turns",
        "tools_applied",
        "refused",
        "undone",
        "model_calls",
        "model_attempts",
        "tokens_in",
        "tokens_out",
        "polished",
        "polish_refused",
    ] {
        n(k, 0);
    }
    let mut turn = 0;
    for env in &live {
        match &env.event {
            E::ToolApplied { turn: t, .. } => {
                n("tools_applied", 1);
                turn = turn.max(*t);
            }
            E::Rejected { turn: t, .. } => {
                n("refused", 1);
                turn = turn.max(*t);
            }
            E::ModelCalled { attempts, .. } => {
                n("model_calls", 1);
                n("model_attempts", attempts.len() as u64);
                for a in attempts {
                    let tokens = |k: &str| a["usage"][k].as_u64().unwrap_or(0);
                    n("tokens_in", tokens("input_tokens"));
                    n("tokens_out", tokens("output_tokens"));
                }
            }
            E::NarrationPolished { refused, .. } => {
                n("polished", 1);
                if refused.is_some() {
                    n("polish_refused", 1);
                }
            }
            _ => {}
        }
    }
    let undone = events
        .iter()
        .filter(|e| matches!(e.event, E::Undone { .. }))
        .count();
    n("undone", undone as u64);
    n("turns", u64::from(turn));
    f["ended"] = live
        .iter()
        .any(|e| matches!(e.event, E::SceneEnded { .. }))
        .into();
    Ok(f)
}

/// The runs' figures as a table.
pub fn render_figures(cards: &[Value]) -> String {
    let mut out = String::from(
        "Scene runs\n\
         run  scene                         turns ended tools refused undone model-calls \
         attempts tokens-in tokens-out polished polish-refused\n",
    );
    for c in cards {
        let n = |k: &str| c[k].as_u64().unwrap_or(0);
        out.push_str(&format!(
            "{:>3}  {:<29} {:>5} {:>5} {:>5} {:>7} {:>6} {:>11} {:>8} {:>9} {:>10} {:>8} {:>14}\n",
            n("run"),
            c["spec"].as_str().unwrap_or_default(),
            n("turns"),
            if c["ended"] == true { "yes" } else { "no" },
            n("tools_applied"),
            n("refused"),
            n("undone"),
            n("model_calls"),
            n("model_attempts"),
            n("tokens_in"),
            n("tokens_out"),
            n("polished"),
            n("polish_refused"),
        ));
    }
    out
}

/// Every scene run's figures in a campaign directory (none when it has no runs), for `troupe
/// stats`.
pub fn all_figures(dir: &Path) -> anyhow::Result<Vec<Value>> {
    crate::runs::every_card(dir, &GAME, figures)
}
