//! Small inline SVG charts, drawn here so the report needs nothing from the network.

use std::fmt::Write;

pub const PALETTE: &[&str] = &[
    "#3b6fd8", "#e0703a", "#3aa66a", "#b44bc4", "#c9a227", "#d64562", "#2aa3b8", "#7a7a7a",
];

/// Text or attribute value, escaped for XML/HTML.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

pub struct Series {
    pub name: String,
    pub color: String,
    pub values: Vec<f64>,
}

impl Series {
    pub fn new(name: &str, color: &str, values: Vec<f64>) -> Series {
        Series {
            name: name.into(),
            color: color.into(),
            values,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bars,
    Lines,
}

const W: f64 = 720.0;
const H: f64 = 260.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 28.0;
const BOTTOM: f64 = 48.0;

/// A round upper bound for the y axis and its tick step.
fn nice_max(max: f64) -> (f64, f64) {
    if max <= 0.0 {
        return (1.0, 0.25);
    }
    let raw = max / 4.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| s * 4.0 >= max)
        .unwrap_or(10.0 * mag);
    (step * 4.0, step)
}

fn fmt_num(v: f64) -> String {
    if v.abs() >= 1000.0 {
        format!("{:.1}k", v / 1000.0)
    } else if v.fract().abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// A chart of series over categories: grouped bars or lines with points. `overlay` is drawn as
/// a dashed line over bars (an expectation).
pub fn chart(
    kind: Kind,
    y_label: &str,
    categories: &[String],
    series: &[Series],
    overlay: Option<&Series>,
) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        r#"<svg class="chart" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" xmlns="http://www.w3.org/2000/svg">"#
    );
    let max = series
        .iter()
        .chain(overlay)
        .flat_map(|s| s.values.iter().copied())
        .fold(0.0_f64, f64::max);
    let (ymax, step) = nice_max(max);
    let pw = W - LEFT - RIGHT;
    let ph = H - TOP - BOTTOM;
    let y = |v: f64| TOP + ph - (v / ymax) * ph;
    y_axis(&mut o, y_label, ymax, step, &y);
    let n = categories.len().max(1);
    let slot = pw / n as f64;
    x_labels(&mut o, categories, slot);
    match kind {
        Kind::Bars => bars(&mut o, categories, series, slot, &y),
        Kind::Lines => {
            for s in series {
                line(&mut o, s, slot, &y, false);
            }
        }
    }
    if let Some(s) = overlay {
        line(&mut o, s, slot, &y, true);
    }
    let _ = write!(
        o,
        r##"<line x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#888"/>"##,
        TOP + ph,
        W - RIGHT,
        TOP + ph
    );
    legend(&mut o, series.iter().chain(overlay));
    o.push_str("</svg>");
    o
}

/// The grid, the y axis's ticks every `step` up to `ymax`, and its label.
fn y_axis(o: &mut String, y_label: &str, ymax: f64, step: f64, y: &dyn Fn(f64) -> f64) {
    let ph = H - TOP - BOTTOM;
    let mut t = 0.0;
    while t <= ymax + 1e-9 {
        let yy = y(t);
        let _ = write!(
            o,
            r##"<line x1="{LEFT}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="#e3e3e3"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end" fill="#555">{}</text>"##,
            W - RIGHT,
            LEFT - 6.0,
            yy + 4.0,
            fmt_num(t)
        );
        t += step;
    }
    let _ = write!(
        o,
        r##"<text x="12" y="{:.1}" font-size="11" fill="#555" transform="rotate(-90 12 {:.1})" text-anchor="middle">{}</text>"##,
        TOP + ph / 2.0,
        TOP + ph / 2.0,
        esc(y_label)
    );
}

/// The categories under the x axis, thinned to about 24 so they stay readable.
fn x_labels(o: &mut String, categories: &[String], slot: f64) {
    let ph = H - TOP - BOTTOM;
    let every = categories.len().max(1).div_ceil(24);
    for (i, c) in categories.iter().enumerate() {
        if i % every == 0 {
            let _ = write!(
                o,
                r##"<text x="{:.1}" y="{:.1}" font-size="10" text-anchor="middle" fill="#555">{}</text>"##,
                LEFT + slot * (i as f64 + 0.5),
                TOP + ph + 14.0,
                esc(c)
            );
        }
    }
}

/// Grouped bars: in each category's slot, one bar per series side by side.
fn bars(
    o: &mut String,
    categories: &[String],
    series: &[Series],
    slot: f64,
    y: &dyn Fn(f64) -> f64,
) {
    let ph = H - TOP - BOTTOM;
    let k = series.len().max(1);
    let bw = (slot * 0.8) / k as f64;
    for (si, s) in series.iter().enumerate() {
        for (i, v) in s.values.iter().enumerate() {
            let x = LEFT + slot * i as f64 + slot * 0.1 + bw * si as f64;
            let top = y(*v);
            let _ = write!(
                o,
                r#"<rect x="{x:.1}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {}</title></rect>"#,
                (bw - 1.0).max(1.0),
                (TOP + ph - top).max(0.0),
                esc(&s.color),
                esc(&format!(
                    "{} {}",
                    s.name,
                    categories.get(i).map_or("", String::as_str)
                )),
                fmt_num(*v)
            );
        }
    }
}

/// A swatch and a name per series, left to right along the top.
fn legend<'a>(o: &mut String, series: impl Iterator<Item = &'a Series>) {
    let mut lx = LEFT;
    for s in series {
        let _ = write!(
            o,
            r##"<rect x="{lx:.1}" y="8" width="12" height="12" fill="{}"/><text x="{:.1}" y="18" font-size="11" fill="#333">{}</text>"##,
            esc(&s.color),
            lx + 16.0,
            esc(&s.name)
        );
        lx += 26.0 + 7.0 * s.name.chars().count() as f64;
    }
}

fn line(o: &mut String, s: &Series, slot: f64, y: &dyn Fn(f64) -> f64, dashed: bool) {
    let pts: Vec<String> = s
        .values
        .iter()
        .enumerate()
        .map(|(i, v)| format!("{:.1},{:.1}", LEFT + slot * (i as f64 + 0.5), y(*v)))
        .collect();
    let dash = if dashed {
        r#" stroke-dasharray="6 4""#
    } else {
        ""
    };
    let _ = write!(
        o,
        r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2"{dash}/>"#,
        pts.join(" "),
        esc(&s.color)
    );
    if !dashed {
        for p in &pts {
            let (px, py) = p.split_once(',').unwrap_or(("0", "0"));
            let _ = write!(
                o,
                r#"<circle cx="{px}" cy="{py}" r="3" fill="{}"/>"#,
                esc(&s.color)
            );
        }
    }
}

/// A node of the relationship graph.
pub struct Node {
    pub label: String,
    pub color: String,
}

/// A directed edge: `weight` sets the thickness; `tone` above 0 is warm (agreement, help),
/// below 0 cold (disagreement).
pub struct Edge {
    pub from: usize,
    pub to: usize,
    pub weight: f64,
    pub tone: f64,
    pub label: String,
}

/// Nodes on a circle, directed edges between them (slightly offset, so A→B and B→A both show).
pub fn graph(title: &str, nodes: &[Node], edges: &[Edge], max_weight: f64) -> String {
    let (w, h) = (340.0, 300.0);
    let (cx, cy, r) = (w / 2.0, h / 2.0 + 10.0, 100.0);
    let mut o = String::new();
    let _ = write!(
        o,
        r#"<svg class="graph" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" xmlns="http://www.w3.org/2000/svg">"#
    );
    let _ = write!(
        o,
        r##"<text x="{cx}" y="18" font-size="13" text-anchor="middle" fill="#222" font-weight="bold">{}</text>"##,
        esc(title)
    );
    let n = nodes.len().max(1) as f64;
    let pos: Vec<(f64, f64)> = (0..nodes.len())
        .map(|i| {
            let a = std::f64::consts::TAU * i as f64 / n - std::f64::consts::FRAC_PI_2;
            (cx + r * a.cos(), cy + r * a.sin())
        })
        .collect();
    for e in edges {
        let (Some(&(x1, y1)), Some(&(x2, y2))) = (pos.get(e.from), pos.get(e.to)) else {
            continue;
        };
        let (dx, dy) = (x2 - x1, y2 - y1);
        let len = (dx * dx + dy * dy).sqrt().max(1.0);
        // Offset to the right of the direction of travel, and stop short of the nodes.
        let (ox, oy) = (-dy / len * 5.0, dx / len * 5.0);
        let (sx, sy) = (x1 + dx / len * 28.0 + ox, y1 + dy / len * 28.0 + oy);
        let (ex, ey) = (x2 - dx / len * 28.0 + ox, y2 - dy / len * 28.0 + oy);
        let width = 1.0 + 7.0 * (e.weight / max_weight.max(1.0));
        let color = if e.tone >= 0.0 { "#3aa66a" } else { "#d64562" };
        let _ = write!(
            o,
            r#"<line x1="{sx:.1}" y1="{sy:.1}" x2="{ex:.1}" y2="{ey:.1}" stroke="{color}" stroke-width="{width:.1}" stroke-linecap="round" opacity="0.8"><title>{}</title></line>"#,
            esc(&e.label)
        );
        // An arrow head: a small circle at the receiving end.
        let _ = write!(
            o,
            r#"<circle cx="{ex:.1}" cy="{ey:.1}" r="{:.1}" fill="{color}"/>"#,
            width / 2.0 + 2.0
        );
    }
    for (i, node) in nodes.iter().enumerate() {
        let (x, y) = pos[i];
        let _ = write!(
            o,
            r##"<circle cx="{x:.1}" cy="{y:.1}" r="24" fill="{}" stroke="#fff" stroke-width="2"/><text x="{x:.1}" y="{:.1}" font-size="12" text-anchor="middle" fill="#fff" font-weight="bold">{}</text>"##,
            esc(&node.color),
            y + 4.0,
            esc(&node.label.chars().take(8).collect::<String>())
        );
    }
    o.push_str("</svg>");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_bounds_are_round() {
        assert_eq!(nice_max(7.0), (8.0, 2.0));
        assert_eq!(nice_max(9.0), (10.0, 2.5));
        assert_eq!(nice_max(1234.0), (2000.0, 500.0));
        assert_eq!(nice_max(0.0), (1.0, 0.25));
    }

    #[test]
    fn labels_are_escaped() {
        let svg = chart(
            Kind::Bars,
            "n",
            &["<b>".into()],
            &[Series::new("a&b", "#000", vec![1.0])],
            None,
        );
        assert!(
            svg.contains("&lt;b&gt;") && svg.contains("a&amp;b"),
            "{svg}"
        );
        assert!(!svg.contains("<b>"));
    }
}
