//! The README and the book (docs/) say what is true of the binary (issue 46): every relative link
//! in them reaches a file, and an `#anchor` a heading of it; every `troupe …` command line in
//! their code blocks (and every inline `troupe SUB …` span in their prose) names real
//! subcommands, and each of its flags is one that subcommand's `--help` lists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::support::troupe;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// README.md and every Markdown file under docs/ (not the book's build output, docs/book/book).
fn doc_files(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                if path.ends_with("docs/book/book") {
                    continue;
                }
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut files = vec![root.join("README.md")];
    walk(&root.join("docs"), &mut files);
    files
}

fn rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// A line of Markdown outside code fences, with its inline code spans blanked out (links inside
/// backticks are text, not links), or inside a fence with the fence's language.
enum Line<'a> {
    Prose(&'a str),
    Code { lang: &'a str, text: &'a str },
}

fn lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut fence: Option<&str> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix("```") {
            fence = match fence {
                Some(_) => None,
                None => Some(rest.trim()),
            };
            continue;
        }
        match fence {
            Some(lang) => out.push(Line::Code { lang, text: line }),
            None => out.push(Line::Prose(line)),
        }
    }
    out
}

/// The text with every inline code span removed, and the spans themselves.
fn split_code_spans(line: &str) -> (String, Vec<String>) {
    let parts: Vec<&str> = line.split('`').collect();
    let mut prose = String::new();
    let mut spans = Vec::new();
    // Between backticks: code. An unmatched last backtick opens no span.
    let closed = if parts.len() % 2 == 1 {
        parts.len()
    } else {
        parts.len() - 1
    };
    for (i, part) in parts.iter().enumerate() {
        if i >= closed {
            prose.push('`');
            prose.push_str(part);
        } else if i % 2 == 1 {
            spans.push(part.to_string());
        } else {
            prose.push_str(part);
        }
    }
    (prose, spans)
}

/// Every `[text](target)` link target in a line of prose.
fn link_targets(prose: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = prose;
    while let Some((_, after)) = rest.split_once("](") {
        let Some((inside, next)) = after.split_once(')') else {
            break;
        };
        if let Some(target) = inside.split_whitespace().next() {
            out.push(target.to_string());
        }
        rest = next;
    }
    out
}

/// The anchor GitHub and mdBook give a heading: lowercase, whitespace to '-', every character
/// but letters, digits, '-' and '_' dropped (after a link's or code's markup is taken off).
fn slug(heading: &str) -> String {
    let mut text = String::new();
    // `[text](url)` -> text
    let mut rest = heading;
    while let Some((before, after)) = rest.split_once('[') {
        text.push_str(before);
        let link = after
            .split_once("](")
            .and_then(|(label, tail)| Some((label, tail.split_once(')')?.1)));
        match link {
            Some((label, next)) if !label.contains(']') => {
                text.push_str(label);
                rest = next;
            }
            _ => {
                text.push('[');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    text.trim()
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                Some(c.to_lowercase().next().unwrap_or(c))
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// The anchors of a Markdown file's headings (mdBook's `{{#include FILE}}` followed), with the
/// `-1`, `-2` suffixes repeated headings get.
fn anchors(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    let mut add = |heading: &str, out: &mut BTreeSet<String>| {
        let base = slug(heading);
        let n = seen.entry(base.clone()).or_insert(0);
        out.insert(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    };
    for line in lines(&text) {
        let Line::Prose(line) = line else { continue };
        if let Some(target) = include_target(line) {
            let included = path.parent().unwrap().join(target);
            out.extend(anchors(&included));
        } else if line.starts_with('#') {
            let heading = line.trim_start_matches('#');
            if heading.starts_with(' ') {
                add(heading, &mut out);
            }
        }
    }
    out
}

fn include_target(line: &str) -> Option<&str> {
    let inner = line
        .trim()
        .strip_prefix("{{#include ")?
        .strip_suffix("}}")?;
    Some(inner.trim())
}

/// The broken links of one file, as messages.
fn broken_links(root: &Path, file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let dir = file.parent().unwrap();
    let mut broken = Vec::new();
    for line in lines(&text) {
        let Line::Prose(line) = line else { continue };
        let at = format!("{}: `{}`", rel(root, file), line.trim());
        if let Some(target) = include_target(line) {
            if !dir.join(target).is_file() {
                broken.push(format!("{at}: includes {target}, which is not there"));
            }
            continue;
        }
        let (prose, _) = split_code_spans(line);
        for target in link_targets(&prose) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let linked = if path.is_empty() {
                file.to_path_buf()
            } else {
                dir.join(path)
            };
            if !linked.exists() {
                broken.push(format!("{at}: {target}: no such file"));
                continue;
            }
            if let Some(anchor) = anchor
                && linked.extension().is_some_and(|e| e == "md")
                && !anchors(&linked).contains(anchor)
            {
                broken.push(format!(
                    "{at}: {target}: {} has no heading #{anchor}",
                    rel(root, &linked)
                ));
            }
        }
    }
    broken
}

#[test]
fn every_link_in_the_readme_and_the_book_reaches_its_file_and_heading() {
    let root = repo_root();
    let files = doc_files(&root);
    assert!(
        files
            .iter()
            .any(|f| f.ends_with("docs/book/src/SUMMARY.md")),
        "the book is missing: {files:?}"
    );
    let broken: Vec<String> = files.iter().flat_map(|f| broken_links(&root, f)).collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_link_checker_finds_a_missing_file_and_a_missing_heading() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("other.md"),
        "# The other page\n\n## Who sits where: an AI GM, people\n",
    )
    .unwrap();
    let page = dir.path().join("page.md");
    std::fs::write(
        &page,
        "# Page\n\n[ok](other.md#who-sits-where-an-ai-gm-people) [ok](#page) [code](`x.md`)\n\
         `[not a link](nowhere.md)`\n\n```sh\n[in a fence](nowhere.md)\n```\n\
         [gone](missing.md) [bad](other.md#no-such-heading)\n",
    )
    .unwrap();
    let broken = broken_links(dir.path(), &page);
    assert_eq!(broken.len(), 2, "{broken:#?}");
    assert!(
        broken[0].contains("missing.md: no such file"),
        "{broken:#?}"
    );
    assert!(
        broken[1].contains("has no heading #no-such-heading"),
        "{broken:#?}"
    );
    assert_eq!(
        slug("The table online: people at their own browsers"),
        "the-table-online-people-at-their-own-browsers"
    );
    assert_eq!(
        slug("Export for analysis: Parquet tables"),
        "export-for-analysis-parquet-tables"
    );
    assert_eq!(
        slug("`troupe bench`: the [scores](x.md)"),
        "troupe-bench-the-scores"
    );
}

/// Split a shell line into words: quotes group, an unquoted `#` at a word's start begins a
/// comment, `|`, `;`, `&&` and `<`, `>` redirections end a command.
fn shell_commands(line: &str) -> Vec<Vec<String>> {
    let mut commands = vec![Vec::new()];
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    let mut redirect = false;
    let end_word = |word: &mut String,
                    in_word: &mut bool,
                    commands: &mut Vec<Vec<String>>,
                    redirect: &mut bool| {
        if *in_word {
            if *redirect {
                *redirect = false;
            } else {
                commands.last_mut().unwrap().push(std::mem::take(word));
            }
            word.clear();
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    in_word = true;
                }
                '#' if !in_word => break,
                '|' | ';' | '&' => {
                    end_word(&mut word, &mut in_word, &mut commands, &mut redirect);
                    if c == '&' && chars.peek() == Some(&'&') {
                        chars.next();
                    }
                    commands.push(Vec::new());
                }
                '<' | '>' => {
                    end_word(&mut word, &mut in_word, &mut commands, &mut redirect);
                    redirect = true;
                }
                c if c.is_whitespace() => {
                    end_word(&mut word, &mut in_word, &mut commands, &mut redirect)
                }
                c => {
                    word.push(c);
                    in_word = true;
                }
            },
        }
    }
    end_word(&mut word, &mut in_word, &mut commands, &mut redirect);
    commands.retain(|c| !c.is_empty());
    commands
}

/// The words after `troupe` (or `cargo run --release --`) in a command, with environment
/// assignments before it skipped; None when the command runs something else.
fn troupe_args(command: &[String]) -> Option<Vec<String>> {
    let mut words = command.iter().skip_while(|w| {
        w.contains('=')
            && !w.starts_with('-')
            && w.chars().next().is_some_and(|c| c.is_ascii_uppercase())
    });
    let first = words.next()?;
    let rest: Vec<String> = words.cloned().collect();
    if first == "troupe" {
        return Some(rest);
    }
    if first == "cargo" && rest.first().map(String::as_str) == Some("run") {
        // `cargo run [--release] -- ARGS` runs troupe; `cargo run -p CRATE --example …` does not.
        let dashes = rest.iter().position(|w| w == "--")?;
        if rest[1..dashes].iter().all(|w| w == "--release") {
            return Some(rest[dashes + 1..].to_vec());
        }
    }
    None
}

/// What `troupe [SUB…] --help` says, once per command path.
struct Helps(BTreeMap<Vec<String>, Help>);

struct Help {
    /// Long and short flags, with whether each takes a value.
    flags: BTreeMap<String, bool>,
    subcommands: BTreeSet<String>,
    /// Whether it takes words of its own beside its subcommands (`troupe simulate CAMPAIGN…`
    /// and `troupe simulate merge`): a usage line with an argument other than `<COMMAND>`.
    takes_args: bool,
}

impl Helps {
    fn get(&mut self, path: &[String]) -> &Help {
        self.0.entry(path.to_vec()).or_insert_with(|| {
            let out = troupe().args(path).arg("--help").output().unwrap();
            assert!(
                out.status.success(),
                "troupe {} --help failed: {out:?}",
                path.join(" ")
            );
            parse_help(&String::from_utf8(out.stdout).unwrap())
        })
    }
}

fn parse_help(help: &str) -> Help {
    let mut flags = BTreeMap::new();
    let mut subcommands = BTreeSet::new();
    let mut in_commands = false;
    let mut takes_args = false;
    let mut in_usage = false;
    for line in help.lines() {
        if let Some(usage) = line.strip_prefix("Usage:").or(if in_usage {
            line.strip_prefix("       ")
        } else {
            None
        }) {
            in_usage = true;
            takes_args |= usage.split_whitespace().skip(2).any(|w| {
                (w.starts_with('<') || w.starts_with('['))
                    && !matches!(w, "<COMMAND>" | "[COMMAND]" | "[OPTIONS]")
            });
            continue;
        }
        in_usage = false;
        let trimmed = line.trim_start();
        if !line.starts_with(' ') {
            // A section title: "Options:", "Commands:", "Play at this terminal (…):".
            in_commands = line.ends_with(':')
                && !line.starts_with("Options")
                && !line.starts_with("Arguments");
            continue;
        }
        if trimmed.starts_with('-') && line.len() - trimmed.len() <= 6 {
            // "  -o, --out <DIR>  …" or "      --seeds <SEEDS>"
            let spec = trimmed.split("  ").next().unwrap_or("");
            let takes_value = spec.contains('<');
            for part in spec.split(", ") {
                let name = part.split([' ', '=', '[', '<']).next().unwrap_or("");
                if name.starts_with('-') && name.len() > 1 {
                    flags.insert(name.to_string(), takes_value);
                }
            }
        } else if in_commands
            && line.len() - trimmed.len() == 2
            && let Some(name) = trimmed.split_whitespace().next()
        {
            subcommands.insert(name.to_string());
        }
    }
    Help {
        flags,
        subcommands,
        takes_args,
    }
}

/// What is wrong with one `troupe …` command line, if anything. `strict`: the words must name a
/// subcommand (a code block's command); otherwise (an inline span of prose) a line whose first
/// word is not one is not checked.
fn check_command(helps: &mut Helps, args: &[String], strict: bool) -> Result<(), String> {
    let mut path: Vec<String> = Vec::new();
    let mut i = 0;
    // Find the subcommand path: top-level flags (with their values) may come first.
    loop {
        let help = helps.get(&path);
        let Some(word) = args.get(i) else {
            return if path.is_empty() && strict {
                Err("names no subcommand".into())
            } else {
                Ok(())
            };
        };
        if word.starts_with('-') && word != "--" {
            let name = word.split('=').next().unwrap();
            match help.flags.get(name) {
                Some(&takes_value) => {
                    i += if takes_value && !word.contains('=') {
                        2
                    } else {
                        1
                    }
                }
                None if help.subcommands.is_empty() => break,
                None => {
                    return Err(format!(
                        "`{name}` is not a flag of `troupe {}` (its --help lists {:?})",
                        path.join(" "),
                        help.flags.keys().collect::<Vec<_>>()
                    ));
                }
            }
            continue;
        }
        if help.subcommands.contains(word.as_str()) {
            path.push(word.clone());
            i += 1;
            continue;
        }
        if word == "…" || word == "..." {
            // An elided command (`troupe encounter …`): nothing more to check.
            return Ok(());
        }
        if !help.subcommands.is_empty() && !help.takes_args {
            if !strict && path.is_empty() {
                return Ok(());
            }
            return Err(format!(
                "`{word}` is not a subcommand of `troupe {}` (it has {:?})",
                path.join(" "),
                help.subcommands
            ));
        }
        break;
    }
    // The rest: every flag must be the subcommand's. After a bare `--`, simulate and bench pass
    // the arguments on to `troupe play`; other commands take no flags there.
    let mut target = path.clone();
    for word in &args[i..] {
        if word == "--" {
            if matches!(path.first().map(String::as_str), Some("simulate" | "bench")) {
                target = vec!["play".to_string()];
                continue;
            }
            break;
        }
        let is_flag = word.starts_with("--") && word.len() > 2
            || word.len() == 2
                && word.starts_with('-')
                && word.chars().nth(1).is_some_and(|c| c.is_ascii_alphabetic());
        if !is_flag {
            continue;
        }
        let name = word.split('=').next().unwrap();
        let help = helps.get(&target);
        if !help.flags.contains_key(name) {
            return Err(format!(
                "`{name}` is not a flag of `troupe {}` (its --help lists {:?})",
                target.join(" "),
                help.flags.keys().collect::<Vec<_>>()
            ));
        }
    }
    Ok(())
}

/// Every `troupe …` command of a Markdown file: (the line it is on, its words after `troupe`,
/// whether it is from a code block).
fn commands_of(text: &str) -> Vec<(String, Vec<String>, bool)> {
    let mut out = Vec::new();
    let mut continued = String::new();
    for line in lines(text) {
        match line {
            Line::Code { lang, text } => {
                if !matches!(lang, "" | "sh" | "bash" | "shell" | "console") {
                    continue;
                }
                let text = text.trim().trim_start_matches("$ ");
                if let Some(head) = text.strip_suffix('\\') {
                    continued.push_str(head);
                    continued.push(' ');
                    continue;
                }
                let whole = std::mem::take(&mut continued) + text;
                for command in shell_commands(&whole) {
                    if let Some(args) = troupe_args(&command) {
                        out.push((whole.clone(), args, true));
                    }
                }
            }
            Line::Prose(text) => {
                for span in split_code_spans(text).1 {
                    if !span.starts_with("troupe ") {
                        continue;
                    }
                    for command in shell_commands(&span) {
                        if let Some(args) = troupe_args(&command) {
                            out.push((span.clone(), args, false));
                        }
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_troupe_command_in_the_readme_and_the_book_has_real_subcommands_and_flags() {
    let root = repo_root();
    let mut helps = Helps(BTreeMap::new());
    let mut wrong = Vec::new();
    let mut checked = 0;
    for file in doc_files(&root) {
        let text = std::fs::read_to_string(&file).unwrap();
        for (line, args, strict) in commands_of(&text) {
            checked += 1;
            if let Err(why) = check_command(&mut helps, &args, strict) {
                wrong.push(format!("{}: `{line}`: {why}", rel(&root, &file)));
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} troupe commands found in the docs: is the parser broken?"
    );
    assert!(
        wrong.is_empty(),
        "{} command lines the binary does not accept:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn the_command_checker_refuses_a_stale_flag_and_an_unknown_subcommand() {
    let mut helps = Helps(BTreeMap::new());
    let text = "```sh\n\
        troupe encounter run SPEC --campaign my-table --players ai,ai --max-turns 10   # stale\n\
        troupe --campaign DIR sessions\n\
        troupe simulate party.json --seeds 1..=8 --out runs \\\n    -- --gm-script g.yaml --no-such-play-flag\n\
        troupe encounters list\n\
        echo \"I shoot\" | troupe validate --jsn\n\
        ```\n\
        In prose `troupe play --gm ai` is checked, `troupe COMMAND --help` is not, \
        and `troupe memory query --as alex --no-such-flag` is.\n";
    let results: Vec<_> = commands_of(text)
        .into_iter()
        .map(|(line, args, strict)| (line, check_command(&mut helps, &args, strict)))
        .collect();
    let verdicts: Vec<bool> = results.iter().map(|(_, r)| r.is_ok()).collect();
    assert_eq!(
        verdicts,
        [false, true, false, false, false, true, true, false],
        "{results:#?}"
    );
    let (_, stale) = &results[0];
    assert!(
        stale
            .as_ref()
            .unwrap_err()
            .contains("`--max-turns` is not a flag of `troupe encounter run`"),
        "{stale:?}"
    );
    assert!(
        results[2]
            .1
            .as_ref()
            .unwrap_err()
            .contains("`--no-such-play-flag` is not a flag of `troupe play`")
    );
    assert!(
        results[3]
            .1
            .as_ref()
            .unwrap_err()
            .contains("`encounters` is not a subcommand of `troupe `")
    );
}
