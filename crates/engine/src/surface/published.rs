//! A game's table watched by a surface, as every game's is ([`Published`]): each committed
//! event published as the game renders it, whose model works, how far each reply has come
//! ([`SurfaceCalls`], which a game with more to publish holds in its own watch).

use std::sync::Arc;

use troupe_llm::Progress;

use super::{Draft, GM, Surface, Update};
use crate::watch::{CallWatch, Watch};

/// What a game says about its GM's seat on the pages: the name they give its model while it
/// works ("The GM", "The narrator"), and whether that model's draft may show on the GM's page.
/// Every other seat's model is named by its seat and its draft shows on that seat's own page
/// (its prompt is that seat's view).
#[derive(Clone, Copy, Debug)]
pub struct GmShown {
    pub name: &'static str,
    pub draft: Draft,
}

/// A table's model calls shown on a surface, as every game's are: every page told whose model
/// works (the GM's seat's by its [`GmShown`] name) and how many tokens it has written, each
/// draft only where it may show.
pub struct SurfaceCalls {
    surface: Arc<dyn Surface>,
    gm: GmShown,
}

impl SurfaceCalls {
    pub fn new(surface: Arc<dyn Surface>, gm: GmShown) -> Self {
        SurfaceCalls { surface, gm }
    }
}

impl CallWatch for SurfaceCalls {
    fn thinking(&mut self, seat: &str, _doing: &str) {
        let who = if seat == GM { self.gm.name } else { seat };
        self.surface.thinking(Some(who.to_string()));
    }

    /// Every page counts the tokens; the draft shows only where the game's rule allows.
    fn progress(&mut self, seat: &str, progress: &Progress) {
        let draft = if seat == GM {
            self.gm.draft
        } else {
            Draft::Shown
        };
        self.surface.progress(seat, progress, draft);
    }

    fn idle(&mut self) {
        self.surface.thinking(None);
    }
}

/// A table's watch on a surface: its calls shown as [`SurfaceCalls`] shows them, and `render`
/// turning each committed event, with the game's state after it, into what changes on the
/// pages.
pub struct Published<R> {
    calls: SurfaceCalls,
    render: R,
}

impl<R> Published<R> {
    pub fn new(surface: Arc<dyn Surface>, gm: GmShown, render: R) -> Self {
        Published {
            calls: SurfaceCalls::new(surface, gm),
            render,
        }
    }
}

impl<R: Send> CallWatch for Published<R> {
    fn thinking(&mut self, seat: &str, doing: &str) {
        self.calls.thinking(seat, doing);
    }
    fn progress(&mut self, seat: &str, progress: &Progress) {
        self.calls.progress(seat, progress);
    }
    fn idle(&mut self) {
        self.calls.idle();
    }
}

impl<S: ?Sized, E, R: FnMut(&S, &E) -> Update + Send> Watch<S, E> for Published<R> {
    fn on_event(&mut self, state: &S, env: &E) {
        self.calls.surface.publish((self.render)(state, env));
    }
}
