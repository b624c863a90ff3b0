//! A readable Markdown transcript of one session, for GMs and researchers.
//!
//! [`render_markdown`] reads the decision events of a log, in log order, and writes what
//! happened at the table: narration, questions, each player's private strategy, the directive
//! to its character, the character's attempts and the overreach checks on them, rulings, dice,
//! LASER FEELINGS, outcomes and reactions. Raw model traffic (`model_call`) is left out.
//!
//! The transcript depends only on what the events say: never on timestamps, latencies, sequence
//! numbers or session ids, and every collection it walks is ordered. A replayed session with the
//! same recorded replies and dice gives a byte-identical transcript.
//!
//! Text written by models or the GM is quoted in blockquotes, one `> ` per line, with any
//! character that could start a Markdown block (`#`, `>`, `-`, `1.` …) escaped, so it can
//! neither end its block nor forge a heading. Short text used inline (questions, answers,
//! flagged excerpts) is folded onto one line and escaped.

use std::collections::BTreeMap;

use troupe_agents::{ActionDecl, Outcome, Stance};
use troupe_campaign::Campaign;
use troupe_rules::{RollResult, TaskType, helper_succeeded};
use troupe_validator::Verdict;

use crate::lines;
use crate::{
    Envelope, Event, FailureChoice, Phase, RollOverride, RollPurpose, Ruling, VerdictResult,
};

/// The session as a Markdown document. Deterministic: the same events give the same bytes.
pub fn render_markdown(events: &[Envelope]) -> String {
    let mut t = Transcript::default();
    t.header(events);
    for env in events {
        t.event(env);
    }
    t.finish()
}

/// An attempt waiting for its overreach verdict.
struct Pending {
    attempt: u32,
    action: ActionDecl,
}

#[derive(Default)]
struct Transcript {
    out: String,
    campaign: Option<Campaign>,
    /// Questions per round, per agent, this turn: the GM's answers come in this order.
    questions: BTreeMap<u32, BTreeMap<String, Vec<String>>>,
    /// Declared actions not yet judged, per agent; rendered with their verdict.
    pending: BTreeMap<String, Vec<Pending>>,
    /// The story's in-game day, as the events so far have moved it.
    day: u32,
}

impl Transcript {
    fn block(&mut self, text: &str) {
        self.out.push_str(text.trim_end_matches('\n'));
        self.out.push_str("\n\n");
    }

    /// A label line and the text quoted under it.
    fn quoted(&mut self, label: &str, text: &str) {
        self.block(&format!("{label}\n{}", quote(text)));
    }

    fn finish(mut self) -> String {
        self.flush_all();
        let mut out = self.out.trim_end().to_string();
        out.push('\n');
        out
    }

    // --- names -------------------------------------------------------------------------------

    fn seat(&self, agent: &str) -> Option<&troupe_campaign::Seat> {
        self.campaign
            .as_ref()?
            .seats
            .iter()
            .find(|s| s.player.agent_id == agent)
    }

    /// The character an agent plays (or the agent id when unknown), escaped for inline use.
    fn character(&self, agent: &str) -> String {
        inline(
            self.seat(agent)
                .map_or(agent, |s| s.character.name.as_str()),
        )
    }

    /// The player's name (or the agent id), escaped for inline use.
    fn player(&self, agent: &str) -> String {
        inline(self.seat(agent).map_or(agent, |s| s.player.name.as_str()))
    }

    /// "Zara-7 (Alex)": the character and the AI player behind it.
    fn who(&self, agent: &str) -> String {
        format!("{} ({})", self.character(agent), self.player(agent))
    }

    fn character_by_id(&self, character_id: &str) -> String {
        let name = self.campaign.as_ref().and_then(|c| {
            c.seats
                .iter()
                .find(|s| s.character.character_id == character_id)
                .map(|s| s.character.name.as_str())
        });
        inline(name.unwrap_or(character_id))
    }

    // --- header ------------------------------------------------------------------------------

    fn header(&mut self, events: &[Envelope]) {
        let started = events.iter().find_map(|e| match &e.event {
            Event::SessionStarted {
                campaign,
                seed,
                model,
                ..
            } => Some((e.session_number, (**campaign).clone(), *seed, model.clone())),
            _ => None,
        });
        let Some((number, campaign, seed, model)) = started else {
            let number = events.first().map_or(0, |e| e.session_number);
            self.block(&format!("# Session {number}"));
            self.block(LEGEND);
            return;
        };
        self.block(&format!("# {} — session {number}", inline(&campaign.name)));
        let ship = &campaign.ship;
        let strengths: Vec<&str> = ship.strengths.iter().map(|s| s.as_str()).collect();
        self.block(&format!(
            "- GM: {}\n- Ship: {} ({}; problem: {})\n- Dice seed: {seed}\n- Model: {}",
            inline(&campaign.gm_name),
            inline(&ship.name),
            strengths.join(", "),
            ship.problem,
            inline(&model)
        ));
        let mut table =
            String::from("| Player | Character | Style | Role | Number |\n|---|---|---|---|---|\n");
        for seat in &campaign.seats {
            table.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                inline(&seat.player.name),
                inline(&seat.character.name),
                seat.character.style,
                seat.character.role,
                seat.character.number.get()
            ));
        }
        self.block(&table);
        self.block(LEGEND);
        self.campaign = Some(campaign);
    }

    // --- events ------------------------------------------------------------------------------

    /// One event into the transcript. Each family of events has its own renderer; an event
    /// none of them knows (the session header, written first; phase bookkeeping; raw model
    /// traffic; any event this transcript does not know yet) is not rendered.
    fn event(&mut self, env: &Envelope) {
        let _ = self.table_event(env)
            || self.question_event(env)
            || self.decision_event(env)
            || self.ruling_event(env)
            || self.party_event(env);
    }

    /// The session and the story around the turns: turns, the story's days, resume and end,
    /// narration, memory, failures, whispers. False when the event is not of this family.
    fn table_event(&mut self, env: &Envelope) -> bool {
        match &env.event {
            Event::TurnStarted => {
                self.flush_all();
                self.questions.clear();
                self.block(&format!("## Turn {}", env.turn_number));
            }
            Event::TurnCompleted => self.flush_all(),
            Event::SessionStarted { day, .. } => self.day = *day,
            event @ (Event::SceneEnded { .. } | Event::TimePassed { .. }) => self.story_mark(event),
            Event::SessionResumed { at, .. } => {
                self.block(&format!(
                    "**[NOTE]** The session was resumed here ({}).",
                    inline(at)
                ));
            }
            Event::SessionEnded { reason } => {
                self.flush_all();
                self.block("## End of session");
                self.block(&format!(
                    "**[NOTE]** The session ended: {}",
                    sentence(&inline(reason))
                ));
            }
            Event::GmNarration { text } => self.quoted("**[GM] Narration:**", text),
            Event::GmOutcome { text } => self.quoted("**[GM] Outcome:**", text),
            Event::MemoryRetrieved {
                agent,
                recalled,
                status,
                ..
            } => self.memory_retrieved(agent, recalled, status),
            Event::MemoryStorage { trigger, turns, .. } => {
                self.memory_storage(trigger.as_deref(), turns);
            }
            Event::PhaseFailed {
                agent,
                error,
                failures,
            } => {
                self.block(&format!(
                    "**[NOTE]** {} failed for {} (failure {failures}): {} — {}.",
                    env.phase.map_or("A phase", Phase::title),
                    self.who(agent),
                    inline(error),
                    lines::failure_then(*failures)
                ));
            }
            Event::GmFailureDecision { agent, choice } => {
                self.failure_decision(env.phase, agent, choice);
            }
            Event::Whisper { to, scope, text } => {
                let to = match to {
                    Some(a) => self.player(a),
                    None => "the whole table".to_string(),
                };
                self.quoted(
                    &format!(
                        "**[GM whisper → {to}]** ({}):",
                        scope.as_str().replace('_', "-")
                    ),
                    text,
                );
            }
            _ => return false,
        }
        true
    }

    /// A scene's end or days passing: the story's day moves, and the GM's line says so.
    fn story_mark(&mut self, event: &Event) {
        if let Event::TimePassed { days } = event {
            self.day = self.day.max(crate::events::FIRST_DAY).saturating_add(*days);
        }
        let line = event.story_mark_line(self.day).unwrap_or_default();
        self.block(&format!("**[GM]** {}", inline(&line)));
    }

    fn memory_retrieved(
        &mut self,
        agent: &str,
        recalled: &[crate::memory::types::Recalled],
        status: &str,
    ) {
        let mut b = format!(
            "**[NOTE]** Memory retrieval for {}: {}",
            self.player(agent),
            sentence(&inline(status))
        );
        for r in recalled {
            let layer = match r.layer {
                crate::memory::types::RecallLayer::Player => "player",
                crate::memory::types::RecallLayer::Character => "character",
            };
            b.push_str(&format!("\n- ({layer}) {}", inline(&r.line())));
        }
        self.block(&b);
    }

    /// The trigger and turns, not the counts: a replay stores nothing, and its transcript must
    /// read the same.
    fn memory_storage(&mut self, trigger: Option<&str>, turns: &[u32]) {
        let what = match trigger {
            None => "held for the next trigger.".to_string(),
            Some(t) if turns.is_empty() => {
                format!("nothing stored ({}).", inline(t))
            }
            Some(t) => format!(
                "turn{} {} stored ({}).",
                if turns.len() == 1 { "" } else { "s" },
                turns
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                inline(t)
            ),
        };
        self.block(&format!("**[NOTE]** Memory storage: {what}"));
    }

    /// Questions to the GM and the answers: the clarification rounds and LASER FEELINGS.
    fn question_event(&mut self, env: &Envelope) -> bool {
        match &env.event {
            Event::ClarifyingQuestions {
                agent,
                round,
                questions,
            } => self.clarifying_questions(agent, *round, questions),
            Event::GmAnswers {
                round,
                answers,
                finished,
            } => self.answers(*round, answers, *finished),
            Event::ClarificationEnded { reason } => {
                self.block(&format!(
                    "**[NOTE]** Questions for the GM are over: {}.",
                    inline(reason)
                ));
            }
            Event::LaserFeelingsQuestion { agent, question } => self.quoted(
                &format!(
                    "**[IC] {} asks the GM a LASER FEELINGS question:**",
                    self.character(agent)
                ),
                question,
            ),
            Event::LaserFeelingsAnswer { agent, answer } => self.quoted(
                &format!(
                    "**[GM] answers {}'s LASER FEELINGS question honestly:**",
                    self.character(agent)
                ),
                answer,
            ),
            _ => return false,
        }
        true
    }

    /// A player's questions, kept by round: the GM's answers are matched to them in order.
    fn clarifying_questions(&mut self, agent: &str, round: u32, questions: &[String]) {
        self.questions
            .entry(round)
            .or_default()
            .insert(agent.to_string(), questions.to_vec());
        if questions.is_empty() {
            self.block(&format!(
                "**[OOC] {}** has no questions for the GM (round {round}).",
                self.player(agent)
            ));
            return;
        }
        let mut b = format!(
            "**[OOC] {} asks the GM** (round {round}):\n",
            self.player(agent)
        );
        for q in questions {
            b.push_str(&format!("\n- {}", inline(q)));
        }
        self.block(&b);
    }

    /// What a player decides and its character attempts: strategy, directive, the attempts and
    /// their overreach checks, insight, reactions.
    fn decision_event(&mut self, env: &Envelope) -> bool {
        match &env.event {
            Event::StrategicIntent { agent, intent } => {
                self.quoted(
                    &format!(
                        "**[OOC] {}'s private strategy** (player only; the character never sees it):",
                        self.player(agent)
                    ),
                    &intent.strategy,
                );
                if let Some(p) = &intent.proposal {
                    self.quoted(
                        &format!("**[OOC] {} proposes to the party:**", self.player(agent)),
                        p,
                    );
                }
            }
            Event::Directive {
                agent,
                character,
                text,
            } => {
                self.quoted(
                    &format!(
                        "**[P2C] {} → {}** (directive; only this character hears it):",
                        self.player(agent),
                        self.character_by_id(character)
                    ),
                    text,
                );
            }
            Event::CharacterAction {
                agent,
                attempt,
                action,
            } => self
                .pending
                .entry(agent.clone())
                .or_default()
                .push(Pending {
                    attempt: *attempt,
                    action: action.clone(),
                }),
            Event::Validation {
                agent,
                attempt,
                verdict,
                result,
                corrected,
            } => self.validation(agent, *attempt, verdict, *result, corrected.as_deref()),
            Event::GmReviewedAction { agent, action } => self.reviewed_action(agent, action),
            Event::InsightDecision { agent, decision } => self.quoted(
                &format!(
                    "**[OOC] {} decides to {}:**",
                    self.player(agent),
                    lines::insight_choice(decision.change_action)
                ),
                &decision.reason,
            ),
            Event::CharacterReaction { agent, text } => {
                self.quoted(&format!("**[IC] {} reacts:**", self.character(agent)), text);
            }
            _ => return false,
        }
        true
    }

    fn reviewed_action(&mut self, agent: &str, action: &str) {
        // The GM typed the action in themself (after a failure): no check, one block.
        let typed = self
            .pending
            .get(agent)
            .and_then(|p| p.last())
            .is_some_and(|p| p.action.action == *action);
        if typed {
            self.flush_as(agent, "none needed (the GM wrote it)");
            return;
        }
        self.flush(agent);
        self.quoted(
            &format!("**[GM] sets {}'s action to:**", self.character(agent)),
            action,
        );
    }

    /// The GM's rulings and the dice: adjudication, forced results, rolls and their overrides.
    fn ruling_event(&mut self, env: &Envelope) -> bool {
        match &env.event {
            Event::GmAdjudication { agent, ruling } => self.ruling(agent, ruling),
            Event::GmForcedResult { success } => self.block(&format!(
                "**[GM] /{}** — {}",
                if *success { "success" } else { "fail" },
                lines::forced_result(*success)
            )),
            Event::DiceRolled {
                agent,
                purpose,
                helping,
                pool,
                result,
                ..
            } => self.dice(agent, *purpose, helping.as_deref(), *pool, result),
            Event::GmRollOverride {
                agent,
                change,
                result,
            } => self.roll_override(agent, change, result),
            Event::GmRoll {
                expression,
                faces,
                total,
                ..
            } => {
                let faces: Vec<String> = faces.iter().map(u32::to_string).collect();
                self.block(&format!(
                    "**[GM] /roll {}** → {} = {total}",
                    inline(expression),
                    faces.join(", ")
                ));
            }
            _ => return false,
        }
        true
    }

    /// The party's discussion out of character: messages, the GM's word, votes, the consensus.
    fn party_event(&mut self, env: &Envelope) -> bool {
        match &env.event {
            Event::OocMessage {
                agent,
                round,
                message,
                stance,
                on,
                proposal,
                directive,
            } => {
                let with = on.as_deref().map(|o| self.player(o));
                let mut text = message.clone();
                if let Some(p) = proposal {
                    text.push_str(&format!("\n\n*Proposes:* {p}"));
                }
                if let Some(d) = directive {
                    text.push_str(&format!("\n\n*Would tell their character:* {d}"));
                }
                self.quoted(
                    &format!(
                        "**[OOC] {}** ({}):",
                        self.player(agent),
                        lines::ooc_position(*round, *stance, with.as_deref())
                    ),
                    &text,
                );
            }
            Event::GmOoc { text, .. } if !text.trim().is_empty() => {
                self.quoted("**[OOC] GM:**", text)
            }
            Event::DiscussionTimedOut { round, elapsed_ms } => self.block(&format!(
                "*{}*",
                lines::discussion_timed_out(*round, *elapsed_ms)
            )),
            Event::DiscussionStalled { round } => {
                self.block(&format!("*{}*", lines::discussion_stalled(*round)))
            }
            Event::VoteCast {
                agent,
                vote,
                remark,
            } => {
                let mut b = format!(
                    "**[OOC] {} votes** for {}'s plan.",
                    self.player(agent),
                    self.player(vote)
                );
                if let Some(r) = remark {
                    b.push_str(&format!(" If outvoted: \"{}\"", inline(r)));
                }
                self.block(&b);
            }
            Event::Consensus {
                round,
                outcome,
                plan,
                proposer,
                positions,
                dissent,
            } => self.consensus(
                *round,
                *outcome,
                plan.as_deref(),
                proposer.as_deref(),
                positions,
                dissent,
            ),
            _ => return false,
        }
        true
    }

    /// The party's consensus: the plan and whose it is, each player's stance, who is not with it.
    fn consensus(
        &mut self,
        round: u32,
        outcome: Outcome,
        plan: Option<&str>,
        proposer: Option<&str>,
        positions: &BTreeMap<String, Stance>,
        dissent: &[String],
    ) {
        let (Some(plan), Some(p)) = (plan, proposer) else {
            self.block(&format!(
                "**Consensus after round {round}: {}** — no plan was put forward.",
                outcome.as_str()
            ));
            return;
        };
        let stances: Vec<String> = positions
            .iter()
            .map(|(a, st)| format!("{} {}", self.player(a), st.as_str()))
            .collect();
        let b = format!(
            "**Consensus after round {round}: {}** — {}'s plan: {}{}{}",
            outcome.as_str(),
            self.player(p),
            inline(plan),
            if stances.is_empty() {
                String::new()
            } else {
                format!(" ({})", stances.join(", "))
            },
            if dissent.is_empty() {
                String::new()
            } else {
                format!(
                    "; not with it: {}",
                    dissent
                        .iter()
                        .map(|a| self.player(a))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        );
        self.block(&b);
    }

    fn answers(&mut self, round: u32, answers: &[String], finished: bool) {
        if finished {
            self.block("**[OOC] GM:** no more questions.");
            return;
        }
        let asked: Vec<(String, String)> = self
            .questions
            .get(&round)
            .map(|by_agent| {
                by_agent
                    .iter()
                    .flat_map(|(a, qs)| qs.iter().map(move |q| (a.clone(), q.clone())))
                    .collect()
            })
            .unwrap_or_default();
        let mut b = format!("**[OOC] GM answers** (round {round}):\n");
        for (i, answer) in answers.iter().enumerate() {
            let answer = if answer.trim().is_empty() {
                "*(no answer)*".to_string()
            } else {
                inline(answer)
            };
            match asked.get(i) {
                Some((agent, q)) => b.push_str(&format!(
                    "\n- {}: {} — **GM:** {answer}",
                    self.player(agent),
                    inline(q)
                )),
                None => b.push_str(&format!("\n- **GM:** {answer}")),
            }
        }
        self.block(&b);
    }

    // --- actions -----------------------------------------------------------------------------

    /// Render every attempt still waiting for a verdict (the GM typed it, or the log ended).
    fn flush_all(&mut self) {
        let agents: Vec<String> = self.pending.keys().cloned().collect();
        for a in agents {
            self.flush(&a);
        }
    }

    fn flush(&mut self, agent: &str) {
        self.flush_as(agent, "not checked");
    }

    fn flush_as(&mut self, agent: &str, check: &str) {
        for p in self.pending.remove(agent).unwrap_or_default() {
            let label = format!(
                "**[IC] {} attempts** (attempt {}):",
                self.character(agent),
                p.attempt
            );
            self.accepted(&label, &p.action.action, &p.action, check);
        }
    }

    fn validation(
        &mut self,
        agent: &str,
        attempt: u32,
        verdict: &Verdict,
        result: VerdictResult,
        corrected: Option<&str>,
    ) {
        // Earlier attempts without a verdict first; then this attempt.
        let mut waiting = self.pending.remove(agent).unwrap_or_default();
        let this = waiting
            .iter()
            .position(|p| p.attempt == attempt)
            .map(|i| waiting.remove(i));
        if !waiting.is_empty() {
            self.pending.insert(agent.to_string(), waiting);
            self.flush(agent);
        }
        let name = self.character(agent);
        let Some(Pending { action, .. }) = this else {
            self.block(&format!(
                "**[NOTE]** Overreach check on {name}'s attempt {attempt}: {}.",
                verdict_word(result)
            ));
            return;
        };
        if result == VerdictResult::Passed {
            let label = format!("**[IC] {name} attempts** (attempt {attempt}):");
            self.accepted(
                &label,
                &action.action,
                &action,
                "passed (states intent only)",
            );
            return;
        }
        let mut b = format!(
            "**[IC] {name} attempts** (attempt {attempt}) — *rejected by the overreach check:*\n{}\n",
            strike(&action.action)
        );
        b.push_str(&format!("\n- Flagged: {}", flagged(verdict)));
        match result {
            VerdictResult::Retry => {
                b.push_str("\n- Sent back: the character declares again, under a sterner warning.");
            }
            VerdictResult::AutoCorrected => {
                b.push_str("\n- That was the last attempt: auto-corrected (below).");
            }
            VerdictResult::FlaggedForGm => {
                b.push_str(&format!(
                    "\n- That was the last attempt, and it could not be corrected cleanly: flagged for the GM, suggesting: {}",
                    corrected.map_or_else(|| "*(nothing)*".to_string(), inline)
                ));
            }
            VerdictResult::Passed => {}
        }
        self.block(&b);
        if let (VerdictResult::AutoCorrected, Some(text)) = (result, corrected) {
            let label =
                format!("**[IC] {name} attempts** (auto-corrected from attempt {attempt}):");
            self.accepted(&label, text, &action, "auto-corrected");
        }
    }

    /// An action as it stands: the text and dialogue quoted, the rest as a short list.
    fn accepted(&mut self, label: &str, text: &str, decl: &ActionDecl, check: &str) {
        let mut b = format!("{label}\n{}", quote(text));
        if !decl.dialogue.trim().is_empty() {
            let lines = quote_lines(&decl.dialogue);
            b.push_str("\n>");
            for (i, line) in lines.iter().enumerate() {
                if i == 0 {
                    b.push_str(&format!("\n> *Says:* {line}"));
                } else if line.is_empty() {
                    b.push_str("\n>");
                } else {
                    b.push_str(&format!("\n> {line}"));
                }
            }
        }
        b.push('\n');
        let mut pool = vec![
            decl.task_type.to_string(),
            if decl.prepared {
                "prepared".into()
            } else {
                "not prepared".into()
            },
            if decl.expert {
                "expert".into()
            } else {
                "not expert".into()
            },
        ];
        if let Some(target) = &decl.helping {
            pool.push(format!("helping {}", self.character_by_id(target)));
        }
        b.push_str(&format!("\n- Suggests: {}", pool.join(", ")));
        if !decl.justification.trim().is_empty() {
            b.push_str(&format!("\n- Why (OOC): {}", inline(&decl.justification)));
        }
        b.push_str(&format!("\n- Overreach check: {check}"));
        self.block(&b);
    }

    fn ruling(&mut self, agent: &str, ruling: &Ruling) {
        let name = self.character(agent);
        match ruling {
            Ruling::Roll {
                task,
                prepared,
                expert,
            } => self.block(&format!(
                "**[GM] Ruling for {name}:** roll {task}, {}, {}.",
                if *prepared {
                    "prepared"
                } else {
                    "not prepared"
                },
                if *expert { "expert" } else { "not expert" }
            )),
            Ruling::Revise { note } => {
                self.quoted(&format!("**[GM] asks {name} to revise the action:**"), note);
            }
            Ruling::NoRoll { note } => {
                let label = format!("**[GM] Ruling for {name}:** no roll needed.");
                if note.trim().is_empty() {
                    self.block(&label);
                } else {
                    self.quoted(&label, note);
                }
            }
        }
    }

    // --- dice --------------------------------------------------------------------------------

    fn dice(
        &mut self,
        agent: &str,
        purpose: RollPurpose,
        helping: Option<&str>,
        pool: u32,
        r: &RollResult,
    ) {
        let name = self.character(agent);
        let mut b = match (purpose, helping) {
            (RollPurpose::Helper, Some(target)) => format!(
                "**[DICE] {name} helps {}** — {pool}d6, {}",
                self.character(target),
                rule(r)
            ),
            _ => format!("**[DICE] {name} rolls {}** — {pool}d6, {}", r.task, rule(r)),
        };
        b.push('\n');
        b.push_str(&roll_details(r));
        if purpose == RollPurpose::Helper {
            let target =
                helping.map_or_else(|| "the helped character".to_string(), |t| self.character(t));
            if helper_succeeded(r) {
                b.push_str(&format!(
                    "\n- The help counts: {target} rolls one more die."
                ));
            } else {
                b.push_str("\n- The help does not count: no extra die.");
            }
        } else if r.laser_feelings() {
            b.push_str(&format!(
                "\n- **LASER FEELINGS!** A die shows exactly {}: {name} may ask the GM a question.",
                r.number.get()
            ));
        }
        self.block(&b);
    }

    fn roll_override(&mut self, agent: &str, change: &RollOverride, r: &RollResult) {
        let name = self.character(agent);
        let b = match change {
            RollOverride::Keep => {
                format!("**[GM]** keeps {name}'s roll as it fell.")
            }
            RollOverride::Faces { faces } => {
                let faces: Vec<String> = faces.iter().map(u8::to_string).collect();
                format!(
                    "**[GM] overrides {name}'s dice** (GM override: the faces are set to {}), {}\n{}{}",
                    faces.join(", "),
                    rule(r),
                    roll_details(r),
                    if r.laser_feelings() {
                        format!(
                            "\n- **LASER FEELINGS!** A die shows exactly {}: {name} may ask the GM a question.",
                            r.number.get()
                        )
                    } else {
                        String::new()
                    }
                )
            }
            RollOverride::Success | RollOverride::Failure => format!(
                "**[GM] overrides {name}'s result: {}** (GM override: the dice stand, the successes are set)\n\n- {}",
                if *change == RollOverride::Success {
                    "success"
                } else {
                    "failure"
                },
                successes(r)
            ),
        };
        self.block(&b);
    }

    fn failure_decision(&mut self, phase: Option<Phase>, agent: &str, choice: &FailureChoice) {
        let who = self.who(agent);
        match choice {
            FailureChoice::Retry => {
                self.block(&format!("**[GM] resolves the failure:** try {who} again."));
            }
            FailureChoice::Skip => self.block(&format!(
                "**[GM] resolves the failure:** skip {who}'s part this time."
            )),
            FailureChoice::TakeOver { text } => {
                // In these phases the GM's words are recorded as the AI's part and shown next.
                let shown_next = matches!(
                    phase,
                    Some(
                        Phase::Clarification
                            | Phase::StrategicIntent
                            | Phase::CharacterAction
                            | Phase::Validation
                            | Phase::LaserFeelings
                            | Phase::CharacterReaction
                    )
                );
                let label = format!("**[GM] resolves the failure:** writes {who}'s part themself");
                if shown_next {
                    self.block(&format!("{label} (below)."));
                } else {
                    self.quoted(&format!("{label}:"), text);
                }
            }
        }
    }
}

const LEGEND: &str = "Channels:

- **[GM]** the game master
- **[IC]** in character: what a character attempts, says or feels
- **[OOC]** out of character: an AI player's questions, private strategy and decisions
- **[P2C]** player to character: the directive a player gives its own character (only that character hears it)
- **[DICE]** dice rolled by the rules
- **[NOTE]** the engine's notices

Quoted blocks are the words as written.";

fn verdict_word(result: VerdictResult) -> &'static str {
    match result {
        VerdictResult::Passed => "passed",
        VerdictResult::Retry => "narrates a result; sent back",
        VerdictResult::AutoCorrected => "narrates a result; auto-corrected",
        VerdictResult::FlaggedForGm => "narrates a result; flagged for the GM",
    }
}

/// Each violation: the words flagged and why.
fn flagged(v: &Verdict) -> String {
    if v.violations.is_empty() {
        return "*(no details)*".into();
    }
    v.violations
        .iter()
        .map(|x| format!("\"{}\" ({})", inline(&x.excerpt), inline(&x.reason)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// "against number 5 (FEELINGS: a die over 5 succeeds; exactly 5 is LASER FEELINGS)".
fn rule(r: &RollResult) -> String {
    let n = r.number.get();
    let side = match r.task {
        TaskType::Lasers => "under",
        TaskType::Feelings => "over",
    };
    format!(
        "against number {n} ({}: a die {side} {n} succeeds; exactly {n} is LASER FEELINGS)",
        r.task
    )
}

/// The faces, each judged, and what the successes mean.
fn roll_details(r: &RollResult) -> String {
    let faces: Vec<String> = r
        .dice
        .iter()
        .map(|d| {
            let how = if d.laser_feelings {
                "LASER FEELINGS"
            } else if d.success {
                "success"
            } else {
                "miss"
            };
            format!("{} ({how})", d.face)
        })
        .collect();
    format!("\n- Dice: {}\n- {}", faces.join(", "), successes(r))
}

fn successes(r: &RollResult) -> String {
    format!(
        "{} success{}: **{}** — {}",
        r.successes,
        if r.successes == 1 { "" } else { "es" },
        r.outcome,
        r.outcome.describe()
    )
}

// --- escaping --------------------------------------------------------------------------------

/// Text as blockquote lines, each safe: no line can start a Markdown block of its own.
fn quote(text: &str) -> String {
    let lines = quote_lines(text);
    if lines.is_empty() {
        return "> *(empty)*".into();
    }
    lines
        .iter()
        .map(|l| {
            if l.is_empty() {
                ">".to_string()
            } else {
                format!("> {l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The lines of a text, trimmed and escaped at their start; runs of blank lines become one
/// empty line, and leading or trailing blank lines are dropped.
fn quote_lines(text: &str) -> Vec<String> {
    let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut lines: Vec<String> = Vec::new();
    for raw in normalized.split('\n') {
        let line = raw.trim();
        if line.is_empty() {
            if lines.last().is_some_and(|l| !l.is_empty()) {
                lines.push(String::new());
            }
        } else {
            lines.push(escape_start(line));
        }
    }
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}

/// Escape what would make a line start a block: headings, quotes, lists, rules, fences, tables,
/// HTML, link definitions, ordered-list numbers.
fn escape_start(line: &str) -> String {
    let mut chars = line.chars();
    let Some(first) = chars.next() else {
        return String::new();
    };
    if matches!(
        first,
        '#' | '>' | '-' | '+' | '*' | '=' | '_' | '`' | '~' | '|' | '<' | '[' | ':'
    ) {
        return format!("\\{line}");
    }
    // "12. " or "3) " would start an ordered list.
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if let Some((number, rest)) = line.split_at_checked(digits)
        && !number.is_empty()
        && (rest.starts_with('.') || rest.starts_with(')'))
    {
        return format!("{number}\\{rest}");
    }
    line.to_string()
}

/// Text for use inside a line: whitespace folded to single spaces, markup that could reach past
/// the text (code spans, links, HTML, strike-through, table cells) escaped. Underscores are left
/// alone: identifiers such as `gm_adjudication` stay readable.
fn inline(text: &str) -> String {
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::with_capacity(folded.len());
    for c in folded.chars() {
        if matches!(
            c,
            '\\' | '*' | '`' | '~' | '|' | '[' | ']' | '<' | '>' | '#'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    escape_start(&out)
}

/// The text with a full stop, unless it already ends a sentence.
fn sentence(text: &str) -> String {
    if text.ends_with(['.', '!', '?']) {
        text.to_string()
    } else {
        format!("{text}.")
    }
}

/// A rejected attempt, struck through on one line.
fn strike(text: &str) -> String {
    let t = inline(text);
    if t.is_empty() {
        "> *(empty)*".into()
    } else {
        format!("> ~~{t}~~")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_starts_are_escaped_inside_quotes() {
        let q = quote("# Heading\n> quote\n- item\n\n\n1. first\n    code\n---");
        assert_eq!(
            q,
            "> \\# Heading\n> \\> quote\n> \\- item\n>\n> 1\\. first\n> code\n> \\---"
        );
        assert_eq!(quote("  \n "), "> *(empty)*");
    }

    #[test]
    fn inline_text_is_one_line() {
        assert_eq!(inline("a\n# b |c|"), "a \\# b \\|c\\|");
        assert_eq!(inline("- x"), "\\- x");
        assert_eq!(inline("2) x"), "2\\) x");
    }

    #[test]
    fn a_resumed_session_is_one_note() {
        let md = render_markdown(&[Envelope {
            seq: 41,
            timestamp: chrono::DateTime::<chrono::Utc>::default(),
            session_id: "s".into(),
            session_number: 1,
            turn_number: 2,
            phase: None,
            event: Event::SessionResumed {
                troupe_version: "0.1.0".into(),
                at: "turn 2, gm_adjudication".into(),
            },
        }]);
        assert!(
            md.contains("\n**[NOTE]** The session was resumed here (turn 2, gm_adjudication).\n"),
            "{md}"
        );
    }
}
