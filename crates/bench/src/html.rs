//! `bench.html`: the results as one self-contained page in the style of `troupe report` (the
//! same fonts, cards, tables and inline SVG charts; no script, no fetch): a chart per skill
//! with every model's value and interval, the same per scenario family, the pairwise table and
//! the cost.

use std::fmt::Write as _;

use crate::render::Bench;
use crate::stats::{Estimate, Pair, skill};

const CSS: &str = r#"
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d1d1f;background:#fafafa;margin:0}
main{max-width:1180px;margin:0 auto;padding:24px}
h1{font-size:26px;margin:0 0 4px}h2{font-size:20px;margin:36px 0 10px;border-bottom:2px solid #ddd;padding-bottom:4px}
h3{font-size:16px;margin:22px 0 8px}
.sub{color:#666;margin:0 0 16px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:10px}
.card{background:#fff;border:1px solid #e2e2e2;border-radius:8px;padding:10px 12px}
.card b{display:block;font-size:22px}.card span{color:#666;font-size:13px}
.chart{background:#fff;border:1px solid #e2e2e2;border-radius:8px;max-width:100%;height:auto}
.graphs{display:flex;flex-wrap:wrap;gap:10px}
table{border-collapse:collapse;background:#fff;margin:6px 0}td,th{border:1px solid #e2e2e2;padding:4px 8px;text-align:left;vertical-align:top;font-size:14px}
th{background:#f1f1f1}
.bad{color:#b3261e}.ok{color:#1e7d3a}.meta{color:#777;font-size:12px}
"#;

const COLOURS: &[&str] = &[
    "#3b6fd8", "#e0703a", "#2aa3b8", "#b44bc4", "#3a7d5c", "#c9a227",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The page.
pub fn render_html(bench: &Bench) -> String {
    let mut o = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><meta http-equiv=\"Content-Security-Policy\" content=\"default-src &#39;none&#39;; style-src &#39;unsafe-inline&#39;\"><title>troupe bench {v}</title><style>{CSS}</style></head><body><main><h1>troupe bench: suite {v}, seed {s}</h1><p class=\"sub\">Every score is counted from the session logs (no judge model); each bar is the value with its 95 % bootstrap interval over scenarios.</p>",
        v = esc(&bench.suite_version),
        s = bench.seed
    );
    cards(&mut o, bench);
    let _ = write!(o, "<h2>Skills</h2><div class=\"graphs\">");
    for (i, _) in crate::stats::SKILLS.iter().enumerate() {
        let rows: Vec<(&str, &Estimate)> = bench
            .models
            .iter()
            .filter_map(|m| Some((m.model.as_str(), m.skills.get(i)?)))
            .collect();
        o.push_str(&chart(&rows));
    }
    o.push_str("</div>");
    families(&mut o, bench);
    pairwise(&mut o, &bench.pairwise);
    o.push_str("</main></body></html>\n");
    o
}

fn cards(o: &mut String, bench: &Bench) {
    let items: u32 = bench.models.first().map_or(0, |m| {
        m.skills
            .iter()
            .filter(|e| e.skill != "replies_valid")
            .map(|e| e.items)
            .sum()
    });
    let _ = write!(o, "<div class=\"cards\">");
    for (value, what) in [
        (bench.scenarios.len().to_string(), "scenarios"),
        (items.to_string(), "scored items (first model)"),
        (bench.models.len().to_string(), "models, baselines included"),
        (bench.baselines.join(", "), "baselines"),
    ] {
        let _ = write!(
            o,
            "<div class=\"card\"><b>{}</b><span>{what}</span></div>",
            esc(&value)
        );
    }
    o.push_str("</div>");
}

/// One skill: a row per model, the interval as a line and the value as a dot.
fn chart(rows: &[(&str, &Estimate)]) -> String {
    let Some(first) = rows.first() else {
        return String::new();
    };
    let sk = skill(first.1.skill);
    let title = sk.map_or(first.1.skill, |s| s.title);
    let top = rows.iter().filter_map(|r| r.1.high).fold(
        if sk.is_some_and(|s| s.scale > 1.0) {
            10.0
        } else {
            1.0
        },
        f64::max,
    );
    let (w, left, row_h) = (380.0, 150.0, 22.0);
    let h = 34.0 + row_h * rows.len() as f64;
    let x = |v: f64| left + (w - left - 16.0) * (v / top);
    let mut s = format!(
        "<svg class=\"chart\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\"><title>{t}</title><text x=\"8\" y=\"16\" font-size=\"13\" font-weight=\"600\">{t}</text>",
        t = esc(title)
    );
    for (i, (model, e)) in rows.iter().enumerate() {
        let y = 34.0 + row_h * i as f64;
        let c = COLOURS[i % COLOURS.len()];
        let _ = write!(
            s,
            "<text x=\"8\" y=\"{}\" font-size=\"11\">{}</text>",
            y + 4.0,
            esc(&short(model))
        );
        if let (Some(v), Some(l), Some(hi)) = (e.value, e.low, e.high) {
            let _ = write!(
                s,
                "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{y}\" y2=\"{y}\" stroke=\"{c}\" stroke-width=\"3\"/><circle cx=\"{:.1}\" cy=\"{y}\" r=\"4\" fill=\"{c}\"><title>{v} [{l}, {hi}], {} items</title></circle><text x=\"{:.1}\" y=\"{}\" font-size=\"10\" fill=\"#666\">{v:.2}</text>",
                x(l),
                x(hi),
                x(v),
                e.items,
                x(hi) + 4.0,
                y + 4.0
            );
        } else {
            let _ = write!(
                s,
                "<text x=\"{left}\" y=\"{}\" font-size=\"10\" fill=\"#999\">no items</text>",
                y + 4.0
            );
        }
    }
    s.push_str("</svg>");
    s
}

fn short(model: &str) -> String {
    if model.chars().count() > 22 {
        model.chars().take(21).collect::<String>() + "…"
    } else {
        model.to_string()
    }
}

fn families(o: &mut String, bench: &Bench) {
    let Some(first) = bench.models.first() else {
        return;
    };
    o.push_str("<h2>By scenario family</h2>");
    for (fi, f) in first.by_family.iter().enumerate() {
        let _ = write!(o, "<h3>{}</h3><div class=\"graphs\">", esc(&f.family));
        for e in &f.skills {
            let rows: Vec<(&str, &Estimate)> = bench
                .models
                .iter()
                .filter_map(|m| {
                    let fam = m.by_family.get(fi)?;
                    Some((
                        m.model.as_str(),
                        fam.skills.iter().find(|x| x.skill == e.skill)?,
                    ))
                })
                .collect();
            o.push_str(&chart(&rows));
        }
        o.push_str("</div>");
    }
}

fn pairwise(o: &mut String, pairs: &[Pair]) {
    if pairs.is_empty() {
        return;
    }
    o.push_str("<h2>Pairwise</h2><p class=\"meta\">A minus B on the same scenarios; clear when the 95 % interval of the difference leaves out 0.</p><table><tr><th>A</th><th>B</th><th>skill</th><th>difference</th><th>95 %</th><th>clear</th></tr>");
    for p in pairs {
        let title = skill(p.skill).map_or(p.skill, |s| s.title);
        let num = |v: Option<f64>| v.map_or("–".into(), |x| format!("{x:+.2}"));
        let clear = match &p.better {
            Some(b) => format!("<span class=\"ok\">yes: {}</span>", esc(b)),
            None => "<span class=\"meta\">no</span>".into(),
        };
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>[{}, {}]</td><td>{clear}</td></tr>",
            esc(&p.a),
            esc(&p.b),
            esc(title),
            num(p.difference),
            num(p.low),
            num(p.high)
        );
    }
    o.push_str("</table>");
}
