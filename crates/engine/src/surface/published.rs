//! A game's table watched by a surface, as every game's is ([`Published`]): each committed
//! event published as the game renders it, whose model works, how far each reply has come.

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

/// A table's watch on a surface: `render` turns each committed event, with the game's state
/// after it, into what changes on the pages.
pub struct Published<R> {
    surface: Arc<dyn Surface>,
    gm: GmShown,
    render: R,
}

impl<R> Published<R> {
    pub fn new(surface: Arc<dyn Surface>, gm: GmShown, render: R) -> Self {
        Published {
            surface,
            gm,
            render,
        }
    }
}

impl<R: Send> CallWatch for Published<R> {
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

impl<S: ?Sized, E, R: FnMut(&S, &E) -> Update + Send> Watch<S, E> for Published<R> {
    fn on_event(&mut self, state: &S, env: &E) {
        self.surface.publish((self.render)(state, env));
    }
}
