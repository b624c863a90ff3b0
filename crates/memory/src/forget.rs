//! Taking memories back: `troupe undo` removes what the undone turns put into memory, so the
//! replayed turn is remembered as it is played again, not twice.

use crate::{Error, MemoryStore};

impl MemoryStore {
    /// Forget every episode and fact formed in `session` from `from_turn` on, with their entity
    /// links, vectors and conflicts; facts they had closed are true again. Returns the facts
    /// forgotten.
    pub fn forget_from(&mut self, session: u32, from_turn: u32) -> Result<usize, Error> {
        let path = self.path().to_path_buf();
        let db = |e| crate::store::db(&path, e);
        let tx = self.conn.transaction().map_err(db)?;
        let cond = "SELECT id FROM memory_facts WHERE session = ?1 AND turn >= ?2";
        let statements = [
            // Recalls made in the undone turns no longer count.
            "UPDATE memory_facts SET rehearsals = MAX(rehearsals - (SELECT COUNT(*) FROM memory_rehearsals r WHERE r.fact = memory_facts.id AND r.session = ?1 AND r.turn >= ?2), 0) WHERE id IN (SELECT fact FROM memory_rehearsals WHERE session = ?1 AND turn >= ?2)".to_string(),
            "DELETE FROM memory_rehearsals WHERE session = ?1 AND turn >= ?2".to_string(),
            format!(
                "UPDATE memory_facts SET invalid_session = NULL, invalid_turn = NULL, invalid_day = NULL, invalidated_by = NULL WHERE invalidated_by IN ({cond})"
            ),
            format!(
                "DELETE FROM memory_conflicts WHERE new_fact IN ({cond}) OR old_fact IN ({cond})"
            ),
            format!("DELETE FROM memory_fact_entities WHERE fact IN ({cond})"),
            format!("DELETE FROM memory_vectors WHERE fact IN ({cond})"),
            "INSERT INTO memory_fts(memory_fts, rowid, text) SELECT 'delete', id, text FROM memory_facts WHERE session = ?1 AND turn >= ?2".to_string(),
        ];
        for sql in &statements {
            tx.execute(sql, rusqlite::params![session, from_turn])
                .map_err(db)?;
        }
        let n = tx
            .execute(
                "DELETE FROM memory_facts WHERE session = ?1 AND turn >= ?2",
                rusqlite::params![session, from_turn],
            )
            .map_err(db)?;
        tx.execute(
            "DELETE FROM memory_episodes WHERE session = ?1 AND turn >= ?2",
            rusqlite::params![session, from_turn],
        )
        .map_err(db)?;
        crate::mirror::commit(tx, &path, &mut self.mirror)?;
        self.refresh_speakers()?;
        Ok(n)
    }
}
