//! Who sits where at a Lasers & Feelings table, from the command line over the campaign file:
//! the GM's seat, the characters people play, and the session's spend limit.

use std::path::Path;

use anyhow::bail;
use troupe_campaign::{Campaign, GmSeatKind, Scenario, SeatTaker};
use troupe_rules::roll_seed;

/// Who sits where, from the command line (over the campaign file's `gm` and `seat` fields).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct SeatArgs {
    /// Who runs the game: person (you, at the terminal or with --gm-script) or ai
    #[arg(long, value_name = "person|ai")]
    pub gm: Option<GmChoice>,
    /// Play this character yourself at the terminal (its agent id; repeat for a hot seat)
    #[arg(long = "human", value_name = "AGENT")]
    pub humans: Vec<String>,
    /// End the session once this turn is played
    #[arg(long)]
    pub turns: Option<u32>,
    #[command(flatten)]
    pub spend: SpendArgs,
}

/// A session's spend limit from the command line, over the campaign file's
/// `spend_limit.session`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct SpendArgs {
    /// Stop the session, saved, once its model calls have cost this many US dollars (at the
    /// campaign file's prices, else troupe's list prices); `troupe resume` continues it
    #[arg(long, value_name = "USD", value_parser = parse_usd)]
    pub max_spend: Option<f64>,
    /// Stop the session, saved, once its model calls have used this many tokens (input plus
    /// output); `troupe resume` continues it
    #[arg(long, value_name = "TOKENS", value_parser = parse_tokens)]
    pub max_tokens: Option<u64>,
}

fn parse_usd(text: &str) -> Result<f64, String> {
    match text.trim().trim_start_matches('$').parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(format!(
            "\"{text}\" is not an amount of US dollars above 0 (e.g. 2.50)"
        )),
    }
}

fn parse_tokens(text: &str) -> Result<u64, String> {
    match text.trim().replace('_', "").parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "\"{text}\" is not a number of tokens above 0 (e.g. 200000)"
        )),
    }
}

/// Sets the session's spend limit (the command line over the campaign file), if any. A dollar

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GmChoice {
    Person,
    Ai,
}

/// Seat the table as asked: the GM's seat and the characters people play. An AI GM without a
/// scenario gets an adventure rolled on the rulebook's threat tables with the session seed (it
/// is recorded with the campaign in the session's first event).
pub fn seat_table(
    campaign: &mut Campaign,
    seats: &SeatArgs,
    gm_script: Option<&Path>,
    seed: u64,
) -> anyhow::Result<()> {
    match seats.gm {
        Some(GmChoice::Ai) => campaign.gm.seat = GmSeatKind::Ai,
        Some(GmChoice::Person) => campaign.gm.seat = GmSeatKind::Person,
        None => {}
    }
    if campaign.gm.seat == GmSeatKind::Ai && gm_script.is_some() {
        bail!(
            "--gm-script plays a person's GM inputs; with an AI GM (--gm ai or \"gm\": {{\"seat\": \"ai\"}}) leave it out"
        );
    }
    for agent in &seats.humans {
        let ids: Vec<String> = campaign
            .seats
            .iter()
            .map(|x| x.player.agent_id.clone())
            .collect();
        let Some(seat) = campaign
            .seats
            .iter_mut()
            .find(|x| &x.player.agent_id == agent)
        else {
            bail!(
                "--human {agent}: no such agent in the campaign; agents: {}",
                ids.join(", ")
            );
        };
        seat.taken_by = SeatTaker::Human;
    }
    if campaign.gm.seat == GmSeatKind::Ai && campaign.gm.scenario.is_none() {
        let adventure = troupe_rules::roll_adventure(roll_seed(seed, u64::MAX));
        // The AI GM's private material: a person in a character's seat does not read it.
        if campaign
            .seats
            .iter()
            .any(|x| x.taken_by == SeatTaker::Human)
        {
            println!(
                "The AI GM has rolled an adventure on the rulebook's threat tables (its secret: \
                 the players find it out in play)."
            );
        } else {
            println!(
                "Adventure (rolled on the rulebook's threat tables, dice {:?}): {}",
                adventure.faces,
                adventure.premise()
            );
        }
        campaign.gm.scenario = Some(Scenario {
            text: adventure.premise(),
            notes: Vec::new(),
        });
    }
    Ok(())
}
