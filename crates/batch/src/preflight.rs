//! What `troupe simulate` checks before it starts a single run: a batch that cannot work is
//! refused with one error that names the file, the field or the value, instead of starting every
//! run and letting each fail the same way.
//!
//! Checked: every campaign file loads (what `troupe check` says of it), the GM script named
//! after `--` exists, and every model can be used (troupe-host's preflight: a replay file that
//! reads, an API key that is set, a model server that accepts a connection, a local GGUF file
//! that is there).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use troupe_host::models::ModelArgs;
use troupe_host::preflight::check_model;

use crate::model_spec::ModelSpec;

/// Every check, in the order a user would fix them; the first failure is the error.
pub fn check_batch(
    campaigns: &[PathBuf],
    models: &[ModelSpec],
    play_args: &[String],
) -> anyhow::Result<()> {
    let mut loaded = Vec::new();
    for file in campaigns {
        let campaign = troupe_campaign::load(file).map_err(|e| {
            anyhow::anyhow!(
                "campaign file {} cannot be played (no run was started):\n{}",
                file.display(),
                troupe_engine::error_chain(&e)
            )
        })?;
        loaded.push((file, campaign.model));
    }
    if let Some(script) = flag_value(play_args, "--gm-script")
        && !Path::new(&script).is_file()
    {
        bail!("the GM script {script} (--gm-script after --) does not exist; no run was started");
    }
    // The same model is checked once, not once per campaign file.
    let mut seen: Vec<String> = Vec::new();
    for (file, settings) in &loaded {
        let dir = file.parent().unwrap_or(Path::new("."));
        let specs: Vec<Option<&ModelSpec>> = if models.is_empty() {
            vec![None]
        } else {
            models.iter().map(Some).collect()
        };
        for spec in specs {
            let args = model_args(spec, play_args);
            let key = format!("{args:?}{settings:?}{}", dir.display());
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            check_model(&args, settings.as_ref(), dir).with_context(|| {
                let which = spec.map_or_else(
                    || format!("the model of {}", file.display()),
                    |s| format!("--model {}:{}", s.provider, s.model),
                );
                format!("{which} cannot be used (no run was started)")
            })?;
        }
    }
    Ok(())
}

/// The value of `--flag VALUE` or `--flag=VALUE` among the play arguments.
fn flag_value(args: &[String], flag: &str) -> Option<String> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == flag {
            return it.next().cloned();
        }
        if let Some(v) = a.strip_prefix(&format!("{flag}=")) {
            return Some(v.to_string());
        }
    }
    None
}

/// The model flags a run's `troupe play` receives: simulate's --model, or those after `--`.
fn model_args(spec: Option<&ModelSpec>, play_args: &[String]) -> ModelArgs {
    let mut args = ModelArgs {
        base_url: flag_value(play_args, "--base-url"),
        api_key_env: flag_value(play_args, "--api-key-env"),
        ..ModelArgs::default()
    };
    match spec {
        Some(s) if s.provider == "replay" => args.replay = Some(PathBuf::from(&s.model)),
        Some(s) => {
            args.provider = Some(s.provider.clone());
            // `troupe bench local`: the provider's own default model.
            args.model = Some(s.model.clone()).filter(|m| !m.is_empty());
        }
        None => {
            args.provider = flag_value(play_args, "--provider");
            args.model = flag_value(play_args, "--model");
            args.replay = flag_value(play_args, "--replay").map(PathBuf::from);
        }
    }
    args
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn play_arguments_choose_the_model_when_simulate_does_not() {
        let play: Vec<String> = ["--gm-script", "g.yaml", "--provider", "openai-compatible"]
            .iter()
            .chain(&["--base-url=http://h:1/v1", "--model", "m"])
            .map(|s| s.to_string())
            .collect();
        let args = model_args(None, &play);
        assert_eq!(args.provider.as_deref(), Some("openai-compatible"));
        assert_eq!(args.base_url.as_deref(), Some("http://h:1/v1"));
        assert_eq!(args.model.as_deref(), Some("m"));
        let spec = crate::model_spec::parse_model("replay:r.jsonl").unwrap();
        assert_eq!(
            model_args(Some(&spec), &play).replay,
            Some(PathBuf::from("r.jsonl"))
        );
    }
}
