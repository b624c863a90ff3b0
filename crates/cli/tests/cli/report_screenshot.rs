#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The report as a reader sees it: the example party session played through the real binary,
//! `troupe report` written, rendered by headless Chromium, and the screenshot checked for the
//! charts (their colours, in the amounts bars and graphs paint, not just legend swatches). The
//! same page with its charts stripped out is rendered too, and must fail the check: the check
//! sees charts, not tags and text.
//!
//! Needs `chromium` (scripts/setup installs it). Without it the test is skipped with a message,
//! except in CI (`CI` set), where a missing browser fails it.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support;
use crate::support::browser::chromium;
use crate::support::in_ci;
use support::{copy_examples, run};

const WIDTH: u32 = 1280;
/// Tall enough for every chart: tokens, latency, attempts, validation, consensus, leadership,
/// the relationship graphs and the dice.
const HEIGHT: u32 = 5600;
const BACKGROUND: [u8; 3] = [0xfa, 0xfa, 0xfa];

/// The colours the charts paint (troupe-report's palette), and how many pixels of each the
/// example's charts cover at the least: bars and graph nodes are thousands of pixels, a legend
/// swatch or a channel tag a few hundred.
const CHART_COLOURS: &[(&str, [u8; 3], usize)] = &[
    (
        "blue: tokens in, consensus, leadership bars",
        [0x3b, 0x6f, 0xd8],
        30_000,
    ),
    ("teal: model attempts bars", [0x2a, 0xa3, 0xb8], 20_000),
    (
        "green: validation verdict bars, graph edges",
        [0x3a, 0xa6, 0x6a],
        20_000,
    ),
    (
        "orange: consensus bars, graph nodes",
        [0xe0, 0x70, 0x3a],
        10_000,
    ),
    ("gold: dice bars", [0xc9, 0xa2, 0x27], 10_000),
];

/// Headless Chromium's screenshot of a local HTML file, decoded to RGB rows.
fn screenshot(browser: &Path, html: &Path, work: &Path) -> (u32, u32, Vec<u8>) {
    let png_path = work.join(format!(
        "{}.png",
        html.file_stem().unwrap().to_string_lossy()
    ));
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--disable-extensions",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", png_path.display()))
        .arg(format!("--window-size={WIDTH},{HEIGHT}"))
        .arg(format!("file://{}", html.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("could not start {}: {e}", browser.display()));
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "chromium exited with {status}");
            break;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium took over two minutes to take a screenshot");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let bytes = std::fs::read(&png_path).unwrap();
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        png::ColorType::Grayscale => 1,
        png::ColorType::GrayscaleAlpha => 2,
        other => panic!("unexpected PNG colour type {other:?}"),
    };
    let mut rgb = Vec::with_capacity((info.width * info.height * 3) as usize);
    for row in buf[..info.line_size * info.height as usize].chunks(info.line_size) {
        for px in row[..info.width as usize * channels].chunks(channels) {
            if channels < 3 {
                rgb.extend([px[0]; 3]);
            } else {
                rgb.extend(&px[..3]);
            }
        }
    }
    (info.width, info.height, rgb)
}

fn near(a: &[u8], b: [u8; 3]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= 8)
}

/// What a screenshot shows: pixels of each chart colour, the share that is not background,
/// and how many distinct colours there are.
struct Seen {
    colours: BTreeMap<&'static str, usize>,
    ink: f64,
    distinct: usize,
}

fn look(rgb: &[u8]) -> Seen {
    let mut colours: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut ink = 0usize;
    let mut distinct = std::collections::HashSet::new();
    let pixels = rgb.chunks(3);
    let total = rgb.len() / 3;
    for px in pixels {
        if !near(px, BACKGROUND) {
            ink += 1;
        }
        distinct.insert([px[0] & 0xf0, px[1] & 0xf0, px[2] & 0xf0]);
        for (name, c, _) in CHART_COLOURS {
            if near(px, *c) {
                *colours.entry(name).or_default() += 1;
            }
        }
    }
    Seen {
        colours,
        ink: ink as f64 / total as f64,
        distinct: distinct.len(),
    }
}

/// The charts a screenshot lacks.
fn missing_charts(seen: &Seen) -> Vec<String> {
    CHART_COLOURS
        .iter()
        .filter_map(|(name, _, least)| {
            let n = seen.colours.get(name).copied().unwrap_or(0);
            (n < *least).then(|| format!("{name}: {n} pixels, want {least}+"))
        })
        .collect()
}

#[test]
fn the_report_renders_its_charts_in_a_real_browser() {
    let Some(browser) = chromium() else {
        let msg = "chromium is not installed: the report's browser test cannot run (scripts/setup installs it; TROUPE_CHROMIUM names another binary)";
        if in_ci() {
            panic!("{msg}");
        }
        eprintln!("\n*** SKIPPED: {msg} ***\n");
        return;
    };

    // The example party session, played and reported by the real binary.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    copy_examples(
        d,
        &["party.json", "research.gm.yaml", "research.replay.jsonl"],
    );
    for args in [
        &[
            "play",
            "party.json",
            "--gm-script",
            "research.gm.yaml",
            "--replay",
            "research.replay.jsonl",
            "--seed",
            "11",
        ][..],
        &["report", "-o", "report.html"],
    ] {
        run(d, args);
    }
    let report = d.join("report.html");

    // The same page with every chart taken out: the control.
    let html = std::fs::read_to_string(&report).unwrap();
    let mut bare = String::new();
    let mut rest = html.as_str();
    while let Some((before, chart)) = rest.split_once("<svg") {
        bare.push_str(before);
        rest = chart.split_once("</svg>").unwrap().1;
    }
    bare.push_str(rest);
    assert!(!bare.contains("<svg"));
    let control = d.join("no-charts.html");
    std::fs::write(&control, bare).unwrap();

    let (w, h, rgb) = screenshot(&browser, &report, d);
    assert_eq!((w, h), (WIDTH, HEIGHT));
    let seen = look(&rgb);
    eprintln!(
        "report: {:.1}% ink, {} colours, chart pixels {:?}",
        seen.ink * 100.0,
        seen.distinct,
        seen.colours
    );
    assert!(seen.ink > 0.05, "the page is nearly blank: {:.3}", seen.ink);
    assert!(seen.distinct >= 40, "{} distinct colours", seen.distinct);
    let missing = missing_charts(&seen);
    assert!(
        missing.is_empty(),
        "charts missing from the screenshot: {missing:#?}\n{:?}",
        seen.colours
    );

    let (_, _, rgb) = screenshot(&browser, &control, d);
    let without = look(&rgb);
    eprintln!(
        "without charts: {:.1}% ink, chart pixels {:?}",
        without.ink * 100.0,
        without.colours
    );
    assert!(
        without.ink > 0.01,
        "the control page rendered: {:.3}",
        without.ink
    );
    assert_eq!(
        missing_charts(&without).len(),
        CHART_COLOURS.len(),
        "without charts, the check must find none: {:?}",
        without.colours
    );
}
