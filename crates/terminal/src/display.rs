//! The story as it happens, in the terminal; a spinner while an AI thinks.

use troupe_agents::GM_AGENT;
use troupe_engine::{CallWatch, Watch};
use troupe_lasers::lines::{self, Audience, Kind, Line};
use troupe_lasers::{Envelope, Event, Session};

use crate::info::player_name;
use crate::spinner::Thinking;

pub struct Story {
    /// Echo the GM's own inputs (when they come from a script, nobody typed them).
    pub echo_gm: bool,
    /// Who reads this terminal: the GM's seat (everything), or, when an AI runs the game, the
    /// people playing characters here, who read what their seats' pages would and no more.
    reader: Reader,
    thinking: Thinking,
    /// A turn's header, shown with the turn's first line (a session that ends before the
    /// turn has any shows none).
    turn_header: Option<String>,
}

/// Who reads the story at this terminal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reader {
    /// The GM's seat (or someone watching an all-AI table): every line.
    Gm,
    /// People in these characters' seats (agent ids): the lines those seats may read.
    Seats(Vec<String>),
}

impl Reader {
    /// The reader of a table: its people, when the GM is an AI and people play characters
    /// here; else the GM's seat.
    pub fn of(campaign: &troupe_campaign::Campaign) -> Reader {
        let people: Vec<String> = campaign
            .seats
            .iter()
            .filter(|x| x.taken_by == troupe_campaign::SeatTaker::Human)
            .map(|x| x.player.agent_id.clone())
            .collect();
        if campaign.gm.seat == troupe_campaign::GmSeatKind::Ai && !people.is_empty() {
            Reader::Seats(people)
        } else {
            Reader::Gm
        }
    }

    pub fn reads(&self, audience: &Audience) -> bool {
        match self {
            Reader::Gm => audience.includes(lines::GM),
            Reader::Seats(agents) => agents.iter().any(|a| audience.includes(a)),
        }
    }
}

impl Story {
    pub fn new(echo_gm: bool, reader: Reader) -> Self {
        Story {
            echo_gm,
            reader,
            thinking: Thinking::naming(&[(GM_AGENT, "The GM")]),
            turn_header: None,
        }
    }
}

impl Story {
    /// Before a resumed session goes on: where it stopped (its state), and the events of the
    /// interrupted turn so far.
    pub fn recap(&mut self, s: &Session, last_turn: &[Envelope]) {
        let from = last_turn
            .iter()
            .rposition(|e| matches!(e.event, Event::TurnStarted))
            .unwrap_or(0);
        println!(
            "== Resuming {} — session {} ==",
            s.campaign.as_ref().map(|c| c.name.as_str()).unwrap_or(""),
            s.number
        );
        let echo = self.echo_gm;
        self.echo_gm = true;
        for e in last_turn.get(from..).unwrap_or_default() {
            self.on_event(s, e);
        }
        self.echo_gm = echo;
    }
}

/// The spinner, as at every game's table ("Zara is reacting… 143 tokens").
impl CallWatch for Story {
    fn thinking(&mut self, agent: &str, doing: &str) {
        self.thinking.thinking(agent, doing);
    }
    fn progress(&mut self, agent: &str, progress: &troupe_llm::Progress) {
        self.thinking.progress(agent, progress);
    }
    fn idle(&mut self) {
        self.thinking.idle();
    }
}

impl Watch<Session, Envelope> for Story {
    fn paused(&mut self, events: u64) {
        troupe_engine::pause::announce(events);
    }

    fn on_event(&mut self, s: &Session, env: &Envelope) {
        if !self.echo_gm && typed_by_gm(&env.event) {
            return;
        }
        if matches!(env.event, Event::SessionEnded { .. }) {
            self.turn_header = None;
        }
        for line in lines::render(env, s) {
            if !self.reader.reads(&line.audience) {
                continue;
            }
            let text = styled(&line, s);
            // The GM at this terminal is asked for the turn's narration under its own heading;
            // anyone else reads the header with the turn's first line.
            if line.kind == Kind::Turn && self.echo_gm {
                self.turn_header = Some(text);
                continue;
            }
            if let Some(header) = self.turn_header.take() {
                self.thinking.println(&header);
            }
            self.thinking.println(&text);
        }
    }
}

/// The GM's own words, which the GM at this terminal just typed (a script's are echoed). A
/// whisper is shown: its line says whom it reached, which confirms it was sent.
fn typed_by_gm(event: &Event) -> bool {
    matches!(
        event,
        Event::GmNarration { .. }
            | Event::GmAnswers { .. }
            | Event::GmReviewedAction { .. }
            | Event::GmAdjudication { .. }
            | Event::LaserFeelingsAnswer { .. }
            | Event::GmOutcome { .. }
            | Event::GmOoc { .. }
    )
}

/// A line as the terminal shows it: framed, prefixed or indented by its kind, a private line
/// marked with the seat it is for (the GM at the terminal reads them all), its aside after it.
fn styled(line: &Line, s: &Session) -> String {
    let text = match &line.aside {
        Some(aside) => format!("{} ({aside})", line.text),
        None => line.text.clone(),
    };
    let text = match &line.audience {
        Audience::Seat(agent) | Audience::Own(agent) => {
            format!("({} only) {text}", player_name(s, agent))
        }
        Audience::Table | Audience::Players | Audience::Gm => text,
    };
    match line.kind {
        Kind::Session => format!("\n== {text} =="),
        Kind::Turn => format!("\n──── {text} ────"),
        Kind::Mark => format!("── {text} ──"),
        Kind::Gm => format!("GM: {text}"),
        Kind::Ooc | Kind::Consensus => format!("[OOC] {text}"),
        Kind::Problem => format!("  ! {text}"),
        Kind::Recalled => format!("    · {text}"),
        Kind::Setup | Kind::Roll | Kind::Check | Kind::Memory | Kind::Model | Kind::Notice => {
            format!("  {text}")
        }
        Kind::Question
        | Kind::Plan
        | Kind::Directive
        | Kind::Attempt
        | Kind::Speech
        | Kind::Ruling
        | Kind::Insight
        | Kind::Decision
        | Kind::Seat
        | Kind::Whisper => text,
    }
}
