//! Benchmarks of the embedded local model (BENCHMARKS.md, "Embedded local model").
//!
//! ```sh
//! cargo run --release -p troupe-llm --features local --example local_bench -- [MODEL.gguf] [RUNS]
//! ```
//!
//! The model is the argument, else `TROUPE_MODEL`; `TROUPE_THREADS` sets the CPU threads. Prints, as medians over RUNS (default 7):
//! the memory bandwidth and the generation limit it implies, prompt and generation speed, the
//! speed of schema-constrained generation against free generation of the same request, and the
//! time to first token with and without the cached system prompt; then the throughput of calls
//! decoded together, at batch sizes 1, 2, 4 and 8 (`--batch-only` skips everything else).
#![allow(
    clippy::too_many_lines,
    reason = "a measuring program reads top to bottom, as its report is printed"
)]

use std::time::Instant;

use serde_json::json;
use troupe_llm::local::{LocalModel, LocalOptions, LocalTimings};
use troupe_llm::{CallTag, ChatRequest, Message, ResponseSchema};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Read bandwidth in GB/s: `threads` threads each summing their share of a 512 MiB buffer.
fn bandwidth(threads: usize, runs: usize) -> f64 {
    let words: usize = 64 * 1024 * 1024; // 512 MiB of u64
    let buf: Vec<u64> = (0..words as u64).collect();
    let chunk = words.div_ceil(threads.max(1));
    let mut results = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        let total: u64 = std::thread::scope(|s| {
            let handles: Vec<_> = buf
                .chunks(chunk)
                .map(|part| s.spawn(move || part.iter().fold(0u64, |acc, x| acc.wrapping_add(*x))))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or(0))
                .fold(0u64, u64::wrapping_add)
        });
        let secs = started.elapsed().as_secs_f64();
        std::hint::black_box(total);
        results.push((words * 8) as f64 / secs / 1e9);
    }
    median(results)
}

fn request(
    system: &str,
    user: &str,
    max_tokens: u32,
    schema: Option<ResponseSchema>,
) -> ChatRequest {
    let mut req = ChatRequest::new(
        CallTag::new("bench", "bench"),
        vec![Message::system(system), Message::user(user)],
    );
    req.max_tokens = max_tokens;
    req.schema = schema;
    req.temperature = 0.7;
    req
}

fn action_schema() -> ResponseSchema {
    ResponseSchema {
        name: "character_action".into(),
        schema: json!({"type": "object", "properties": {
            "action": {"type": "string", "minLength": 8},
            "dialogue": {"type": "string"},
            "task_type": {"type": "string", "enum": ["lasers", "feelings"]},
            "prepared": {"type": "boolean"},
            "expert": {"type": "boolean"},
            "justification": {"type": "string"}},
            "required": ["action", "dialogue", "task_type", "prepared", "expert", "justification"]}),
    }
}

const SYSTEM: &str = "You are Zara-7, an Android Engineer aboard The Raptor. Stay in character.\n\
Your goal: Understand human emotions.\nHow you speak: Speaks formally; Uses precise numbers.\n\
You carry: Multi-tool, Scanner, Space suit.\nYour number is 5: better at LASERS than FEELINGS.\n\
The rule you never break: say what you TRY to do, never what happens. The GM decides every result.";

const SCENE: &str = "The GM: A sealed blast hatch blocks the corridor to the fuel depot. Its lock \
panel is dark, and scorch marks suggest someone tried to force it before.\n\
Your player wants you to: Open the hatch without damaging the fuel lines.\n\
Say what Zara-7 attempts now, in the first person. Never say whether it works.\n\
Reply with JSON: {\"action\": \"...\", \"dialogue\": \"...\", \"task_type\": \"lasers\" or \
\"feelings\", \"prepared\": false, \"expert\": true, \"justification\": \"...\"}";

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .or_else(|| std::env::var("TROUPE_MODEL").ok())
        .ok_or("give the GGUF path as the first argument or in TROUPE_MODEL")?;
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(7).max(1);
    let batch_only = std::env::args().any(|a| a == "--batch-only");

    let started = Instant::now();
    let mut opts = LocalOptions::new(&path);
    opts.threads = std::env::var("TROUPE_THREADS")
        .ok()
        .and_then(|t| t.parse().ok());
    // TROUPE_SEQUENCES: the sequences of the context (default 8, for the batch table).
    opts.sequences = Some(
        std::env::var("TROUPE_SEQUENCES")
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(8),
    );
    let model = std::sync::Arc::new(LocalModel::load(&opts)?);
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;
    let info = model.info().clone();
    let gbps = bandwidth(info.threads, 5);
    let limit = gbps * 1e9 / info.file_bytes as f64;
    println!(
        "model: {} ({} bytes, {} parameters)",
        info.path.display(),
        info.file_bytes,
        info.parameters
    );
    println!(
        "threads: {}, context: {} tokens, template: {}",
        info.threads, info.context_tokens, info.template
    );
    println!("load: {load_ms:.0} ms");
    println!(
        "memory read bandwidth: {gbps:.1} GB/s -> generation limit {limit:.0} tokens/s (file bytes per token)"
    );

    if batch_only {
        return batches(&model, runs).await;
    }
    // Prompt processing: a long prompt, evaluated from an empty cache each time.
    let long_user = format!("{}\n{}", SCENE, "The corridor hums. ".repeat(80));
    let mut pp = Vec::new();
    let mut ttft_cold = Vec::new();
    let mut prompt_tokens = 0;
    for _ in 0..runs {
        let r = model
            .generate(&request(SYSTEM, &long_user, 1, None), false, true)
            .await?;
        prompt_tokens = r.timings.prompt_tokens;
        pp.push(r.timings.prompt_tps());
    }
    // Time to first token for a real character_action prompt: cold (nothing cached) and warm
    // (the system prompt and earlier turns cached, as in a session).
    let action = request(SYSTEM, SCENE, 200, Some(action_schema()));
    let mut ttft_warm = Vec::new();
    let mut action_prompt = 0;
    for _ in 0..runs {
        let cold = model.generate(&action, false, true).await?;
        ttft_cold.push(cold.timings.first_token_ms);
        action_prompt = cold.timings.prompt_tokens;
        let mut warm_req = action.clone();
        warm_req.messages[1].content = SCENE.replace("Open the hatch", "Get the hatch open");
        let warm = model.generate(&warm_req, false, false).await?;
        ttft_warm.push(warm.timings.first_token_ms);
    }

    // Generation: the same schema request free and constrained; and free prose.
    let mut free = Vec::new();
    let mut constrained = Vec::new();
    let mut resamples = Vec::new();
    let mut free_tokens = Vec::new();
    let mut constrained_tokens = Vec::new();
    let mut valid = 0;
    let prose = request(
        SYSTEM,
        "Describe, in detail and at length, the engine room of The Raptor: every machine, sound and smell.",
        256,
        None,
    );
    let mut prose_tps = Vec::new();
    let mut prose_tokens = Vec::new();
    for _ in 0..runs {
        let f = model.generate(&action, true, false).await?;
        free.push(f.timings.generate_tps());
        free_tokens.push(f64::from(f.timings.generated_tokens));
        let c = model.generate(&action, false, false).await?;
        constrained.push(c.timings.generate_tps());
        constrained_tokens.push(f64::from(c.timings.generated_tokens));
        resamples.push(f64::from(c.timings.grammar_resamples));
        if troupe_llm::extract_json(&c.reply.content).is_some_and(|v| v.is_object()) {
            valid += 1;
        }
        let p: LocalTimings = model.generate(&prose, false, false).await?.timings;
        prose_tps.push(p.generate_tps());
        prose_tokens.push(f64::from(p.generated_tokens));
    }
    let (free_m, con_m, prose_m) = (median(free), median(constrained), median(prose_tps));
    println!("\nmedians over {runs} runs:");
    println!(
        "prompt processing: {:.0} tokens/s ({prompt_tokens}-token prompt)",
        median(pp)
    );
    println!(
        "time to first token, character_action prompt ({action_prompt} tokens): cold {:.0} ms, system prompt cached {:.0} ms",
        median(ttft_cold),
        median(ttft_warm)
    );
    println!(
        "free generation (prose, {:.0} tokens): {prose_m:.1} tokens/s = {:.0}% of the bandwidth limit",
        median(prose_tokens),
        prose_m / limit * 100.0
    );
    println!(
        "character_action free ({:.0} tokens): {free_m:.1} tokens/s; constrained by the schema ({:.0} tokens, {:.0} resampled): {con_m:.1} tokens/s = {:.0}% of free",
        median(free_tokens),
        median(constrained_tokens),
        median(resamples),
        con_m / free_m.max(1e-9) * 100.0
    );
    println!("constrained replies that were JSON objects: {valid}/{runs}");
    batches(&model, runs).await
}

/// Generated tokens per second of B calls decoded together (B = 1, 2, 4, 8): the same prose
/// prompt (cached) with a different seed each, so every sequence writes its own text. The
/// time is the wall time from the first call sent to the last reply.
async fn batches(
    model: &std::sync::Arc<LocalModel>,
    runs: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut prose = request(
        SYSTEM,
        "Describe, in detail and at length, the engine room of The Raptor: every machine, sound and smell.",
        128,
        None,
    );
    model.generate(&prose, false, false).await?;
    println!(
        "\ncalls decoded together (128-token prose replies, prompt cached), medians over {runs} runs:"
    );
    println!("| batch | tokens/s, all sequences | tokens/s per sequence | wall time |");
    println!("|---:|---:|---:|---:|");
    for b in [1usize, 2, 4, 8] {
        let (mut total, mut walls) = (Vec::new(), Vec::new());
        for run in 0..runs {
            let started = Instant::now();
            let handles: Vec<_> = (0..b)
                .map(|i| {
                    prose.seed = Some((run * 8 + i) as u64);
                    let (m, r) = (std::sync::Arc::clone(model), prose.clone());
                    tokio::spawn(async move { m.generate(&r, false, false).await })
                })
                .collect();
            let mut tokens = 0u32;
            for h in handles {
                tokens += h.await??.timings.generated_tokens;
            }
            let wall = started.elapsed().as_secs_f64();
            total.push(f64::from(tokens) / wall);
            walls.push(wall);
        }
        let t = median(total);
        println!(
            "| {b} | {t:.1} | {:.1} | {:.2} s |",
            t / b as f64,
            median(walls)
        );
    }
    Ok(())
}
