//! What a mirror must be, for every game's tests: its lines are its table's rows, byte for byte,
//! undo marks included; and a mirror cut short as a kill would cut it. Used by Lasers &
//! Feelings' tests (a session's mirror) and the games' (an encounter's and a scene's).

use std::path::Path;

use troupe_engine::{GameStore, Logged, read_jsonl};
/// The mirror's lines against the table's rows: the same bodies, byte for byte, in `seq`
/// order; and a row is marked undone exactly when a later `undone` line's `from`/`from_seq`
/// reaches back over it (what docs/log-schema.md tells a reader of the mirror).
pub fn assert_mirror_is_the_table<E: Logged>(dir: &Path, store: &GameStore<E>, run: u32) {
    let text = std::fs::read_to_string(store.mirror_path(run).unwrap()).unwrap();
    let conn = rusqlite::Connection::open(dir.join("campaign.db")).unwrap();
    let sql = format!(
        "SELECT body, undone FROM {} WHERE {} = ?1 ORDER BY seq",
        E::EVENTS,
        E::KEY
    );
    let mut stmt = conn.prepare(&sql).unwrap();
    let rows: Vec<(String, bool)> = stmt
        .query_map([run], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(!rows.is_empty());
    let bodies: Vec<&str> = rows.iter().map(|(b, _)| b.as_str()).collect();
    assert_eq!(text.lines().collect::<Vec<_>>(), bodies);
    assert!(text.ends_with('\n'));
    let lines: Vec<E> = read_jsonl(&store.mirror_path(run).unwrap()).unwrap();
    let marks: Vec<bool> = rows.iter().map(|(_, undone)| *undone).collect();
    assert_eq!(undone_by_the_lines(&lines), marks);
}

/// Which lines a reader of the mirror takes as undone: those a later undo line reaches back over.
fn undone_by_the_lines<E: Logged>(lines: &[E]) -> Vec<bool> {
    lines
        .iter()
        .map(|line| {
            lines.iter().any(|undo| {
                undo.undoes()
                    .is_some_and(|from| from <= line.seq() && line.seq() < undo.seq())
            })
        })
        .collect()
}

/// Cut the mirror as a kill would: its last line lost and the one before torn in half.
pub fn cut_short(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.pop();
    let torn = lines.pop().unwrap();
    let half: String = torn.chars().take(torn.chars().count() / 2).collect();
    let kept = lines.join("\n") + "\n" + &half;
    std::fs::write(path, kept).unwrap();
}
