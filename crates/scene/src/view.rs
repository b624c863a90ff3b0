//! What one audience may see. A character's view lists only what it perceives: hidden entities
//! appear once revealed to it. The GM view shows everything, hidden marked.

use std::fmt::Write;

use crate::model::State;
use crate::tools::{exits, visible_here};

/// `/state`: what `viewer` sees now.
pub fn character_view(state: &State, viewer: &str) -> String {
    let mut out = String::new();
    let Some(me) = state.entities.get(viewer) else {
        return format!("no character '{viewer}'\n");
    };
    let zone = state.name_of(&me.zone);
    let _ = writeln!(
        out,
        "{} — {}/{} hp, guard {}, marks {} — in {zone}",
        me.name, me.hp, me.max_hp, me.guard, me.marks
    );
    if !me.inventory.is_empty() {
        let items: Vec<String> = me
            .inventory
            .iter()
            .map(|(i, n)| format!("{} ×{n}", state.name_of(i)))
            .collect();
        let _ = writeln!(out, "carrying: {}", items.join(", "));
    }
    for e in visible_here(state, viewer, |_| true) {
        let _ = writeln!(out, "  here: {} ({}/{} hp)", e.name, e.hp, e.max_hp);
    }
    let ways: Vec<&str> = exits(state, viewer)
        .into_iter()
        .map(|z| state.name_of(z))
        .collect();
    let _ = writeln!(out, "ways on: {}", ways.join(", "));
    common(state, &mut out);
    out
}

/// `--gm-view`: every entity, zone and clock, hidden ones marked with whom they are revealed to.
pub fn gm_view(state: &State) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "scene {} — turn {} — {} to act — goal: {}",
        state.id,
        state.turn + 1,
        state.name_of(state.current_actor()),
        state.goal
    );
    for zone in state.zones.values() {
        let _ = writeln!(out, "[{}] {}", zone.id, zone.name);
        for e in state.entities.values().filter(|e| e.zone == zone.id) {
            let hidden = if e.hidden {
                let to: Vec<&str> = e.revealed_to.iter().map(String::as_str).collect();
                format!(" HIDDEN (revealed to: {})", to.join(", "))
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "  {} ({}) {}/{} hp guard {} marks {}{hidden}",
                e.name, e.id, e.hp, e.max_hp, e.guard, e.marks
            );
        }
    }
    common(state, &mut out);
    out
}

fn common(state: &State, out: &mut String) {
    let clocks: Vec<String> = state
        .clocks
        .values()
        .map(|c| format!("{} {}/{}", c.name, c.value, c.size))
        .collect();
    let _ = writeln!(out, "clocks: {}", clocks.join(", "));
    let tags: Vec<String> = state.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let _ = writeln!(out, "tags: {}", tags.join(", "));
}
