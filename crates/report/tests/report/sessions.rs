//! The session readers on recorded Lasers & Feelings logs with a kind a newer troupe writes in
//! the middle: every figure, flag, cost and audit count is as without it, and the report is the
//! same byte for byte but for that row, listed under its kind; a known kind that does not read
//! is shown as unreadable, with why, and named by the metrics.

use serde_json::{Value, json};

use crate::support::{LASERS_LOGS, rows};

/// A recorded log with a hole in its seqs in the middle (as an undone event leaves), and the
/// same log with a newer troupe's kind in that hole, stamped like its neighbour.
fn with_and_without_a_newer_kind(log: &str) -> (Vec<Value>, Vec<Value>, Value) {
    let mut before = rows(log);
    let middle = before.len() / 2;
    for e in &mut before[middle..] {
        e["seq"] = json!(e["seq"].as_u64().unwrap() + 1);
    }
    let mut newer = before[middle - 1].clone();
    let o = newer.as_object_mut().unwrap();
    o.retain(|k, _| {
        matches!(
            k.as_str(),
            "timestamp" | "session_id" | "session_number" | "turn_number" | "phase"
        )
    });
    o.insert(
        "seq".into(),
        json!(before[middle]["seq"].as_u64().unwrap() - 1),
    );
    o.insert("event_type".into(), json!("weather_changed"));
    o.insert("sky".into(), json!("red <and> stormy"));
    let mut after = before.clone();
    after.insert(middle, newer.clone());
    (before, after, newer)
}

fn json_of(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v).unwrap()
}

#[test]
fn a_newer_kind_changes_no_figure_flag_cost_or_audit_count() {
    for log in LASERS_LOGS {
        let (before, after, _) = with_and_without_a_newer_kind(log);
        assert_eq!(
            json_of(&troupe_report::metrics(&after)),
            json_of(&troupe_report::metrics(&before))
        );
        assert_eq!(
            json_of(&troupe_report::flags(&after)),
            json_of(&troupe_report::flags(&before))
        );
        assert_eq!(
            json_of(&troupe_report::scorecard(&after)),
            json_of(&troupe_report::scorecard(&before))
        );
        assert_eq!(
            json_of(&troupe_report::costs(&after)),
            json_of(&troupe_report::costs(&before))
        );
        let (mut a, b) = (troupe_report::audit(&after), troupe_report::audit(&before));
        assert!(a.complete(), "{:?}", a.gaps);
        assert_eq!(a.events, b.events + 1, "the audit counts every row logged");
        a.events = b.events;
        assert_eq!(json_of(&a), json_of(&b));
    }
}

#[test]
fn the_report_lists_a_newer_kind_and_is_otherwise_the_same() {
    for log in LASERS_LOGS {
        let (before, after, newer) = with_and_without_a_newer_kind(log);
        let html_before = troupe_report::render_html("t", &before);
        let html_after = troupe_report::render_html("t", &after);
        let anchor = format!("s1-ev-{}", newer["seq"]);
        // The row: its tag, what it said, its fields, up to the end of its reasoning column.
        let start = format!("<div class=\"row\" id=\"{anchor}\">");
        let (said, mind) = html_after
            .split(&start)
            .nth(1)
            .unwrap()
            .split_once("<div class=\"mind\">")
            .unwrap();
        let (mind, _) = mind.split_once("</div></div>").unwrap();
        let row = format!("{said}<div class=\"mind\">{mind}</div></div>");
        assert!(
            row.contains("<code>weather_changed</code>") && row.contains("red &lt;and&gt; stormy"),
            "{row}"
        );
        let listed = format!("{start}{row}");
        // The subtitle counts the rows logged, the newer one among them.
        let (n, m) = (before.len(), after.len());
        let expected =
            html_before.replacen(&format!(" · {n} events"), &format!(" · {m} events"), 1);
        let got = html_after.replacen(&listed, "", 1);
        let at = got
            .bytes()
            .zip(expected.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(expected.len()));
        assert!(
            got == expected,
            "the report changed beyond the newer row, at byte {at}: …{}… against …{}…",
            got.get(at.saturating_sub(80)..at + 80).unwrap_or(""),
            expected.get(at.saturating_sub(80)..at + 80).unwrap_or("")
        );
    }
}

#[test]
fn a_known_kind_that_does_not_read_is_shown_unreadable_and_named() {
    let mut log = rows(LASERS_LOGS[0]);
    let i = log
        .iter()
        .position(|r| r["event_type"] == "character_reaction")
        .unwrap();
    log[i]["text"] = json!(["not", "text"]);
    let seq = log[i]["seq"].as_u64().unwrap();
    let m = troupe_report::metrics(&log);
    assert_eq!(m.unreadable.len(), 1);
    assert_eq!(
        (m.unreadable[0].event_type.as_str(), m.unreadable[0].seq),
        ("character_reaction", seq)
    );
    let html = troupe_report::render_html("t", &log);
    let row = html
        .split(&format!("id=\"s1-ev-{seq}\""))
        .nth(1)
        .unwrap()
        .split("<div class=\"row")
        .next()
        .unwrap();
    assert!(
        row.contains("<code>character_reaction</code> <span class=\"bad\">(unreadable: "),
        "{row}"
    );
    assert!(
        row.contains("&quot;not&quot;") || row.contains("\"not\""),
        "{row}"
    );
    // The audit names it too, and troupe stats says it first.
    let audit = troupe_report::audit(&log);
    assert!(
        audit
            .gaps
            .iter()
            .any(|g| g.seq == seq && g.what.starts_with("character_reaction (unreadable: ")),
        "{:?}",
        audit.gaps
    );
    let roster = troupe_report::Roster::from_events(&log);
    let text = troupe_report::render_stats("t", &m, &audit, &[], &roster);
    assert!(
        text.contains(&format!(
            "session 1, event {seq}: character_reaction (unreadable: "
        )),
        "{text}"
    );
}
