//! The engine's settings from a TOML file (feature `toml-config`).
//!
//! Owns: the file's schema and the mapping of `toml`'s parse errors onto [`ConfigError`]s that
//! name the key and the line. Must never: accept an unknown key (a typo must not be silently
//! ignored) or a value [`EngineConfig::validate`] refuses.
//!
//! # The file
//! ```toml
//! [engine]
//! target_fps = 60.0          # frame-time target the budget controller holds
//! fixed_step_hz = 60         # simulation step while no agent declares one
//! vulkan = true              # for the game's renderer (the demo's draws through Vulkan when true)
//! lanes = "physics=2,render=1,asset=1"   # optional: overrides the automatic plan
//! pin = true                 # pin lane workers to their cores
//! sync_test = 8              # optional, a debugging mode: re-simulate the last 8 steps each step
//!
//! [telemetry]
//! spans = true               # record trace spans
//! system_spans = true        # and every system run as a span (about 7 ns each)
//! trace_frames = 120         # frames of spans kept for trace.json and the report
//! record_frames = 3600       # frames the run record keeps whole for the report
//!
//! [budget]
//! adaptive = true            # false pins every agent to its first strategy
//!
//! [window]
//! present_mode = "fifo"      # fifo (vsync), mailbox or immediate, for a game in a window
//!
//! [gpu]
//! churn_alert_per_second = 1000.0 # GPU allocations + frees per second that log a warning
//!
//! [assets]
//! max_file_bytes = 268435456 # largest asset file read (256 MiB)
//! max_image_pixels = 67108864 # largest decoded image (64 Mi pixels)
//! ```
//! Every key is optional; unknown keys are errors (a typo must not be silently ignored).

use std::path::Path;

use serde::Deserialize;

use super::config::{ConfigError, EngineConfig};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDoc {
    #[serde(default)]
    engine: FileEngine,
    #[serde(default)]
    telemetry: FileTelemetry,
    #[serde(default)]
    budget: FileBudget,
    #[serde(default)]
    assets: FileAssets,
    #[serde(default)]
    window: FileWindow,
    #[serde(default)]
    gpu: FileGpu,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileGpu {
    churn_alert_per_second: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileWindow {
    present_mode: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileEngine {
    target_fps: Option<f64>,
    fixed_step_hz: Option<u32>,
    vulkan: Option<bool>,
    lanes: Option<String>,
    pin: Option<bool>,
    sync_test: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileTelemetry {
    spans: Option<bool>,
    system_spans: Option<bool>,
    trace_frames: Option<usize>,
    record_frames: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileBudget {
    adaptive: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileAssets {
    max_file_bytes: Option<u64>,
    max_image_pixels: Option<u64>,
}

/// The largest config file read: 1 MiB (the keys documented fit in a few hundred bytes).
const MAX_CONFIG_BYTES: u64 = 1 << 20;

impl EngineConfig {
    /// Reads a TOML file over the defaults (see the module docs for the keys).
    pub fn from_file(path: &Path) -> Result<EngineConfig, ConfigError> {
        let refused = |why: String| ConfigError {
            file: Some(path.to_path_buf()),
            key: "(file)".into(),
            line: None,
            message: format!("cannot read the file: {why}"),
            fix: "pass the path of a readable TOML file to --config".into(),
        };
        // A regular file within the limit, checked before it is read: a FIFO or a device
        // would block the start, a huge file would be read whole for nothing.
        let bytes = crate::files::read_regular(path, MAX_CONFIG_BYTES).map_err(|e| {
            use crate::files::ReadRefused;
            refused(match e {
                ReadRefused::Io(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    "it does not exist".into()
                }
                ReadRefused::Io(e) => e.to_string(),
                ReadRefused::NotAFile => "not a regular file".into(),
                ReadRefused::TooLarge(size) => format!(
                    "it is {size} bytes, over the {MAX_CONFIG_BYTES}-byte limit of a config file"
                ),
            })
        })?;
        let text = String::from_utf8(bytes).map_err(|_| refused("it is not UTF-8 text".into()))?;
        Self::from_toml(&text).map_err(|mut e| {
            e.file = Some(path.to_path_buf());
            e
        })
    }

    /// Parses TOML text over the defaults.
    pub fn from_toml(text: &str) -> Result<EngineConfig, ConfigError> {
        let doc: FileDoc = toml::from_str(text).map_err(|e| parse_error(text, &e))?;
        let mut c = EngineConfig::default();
        let e = doc.engine;
        c.target_fps = e.target_fps.unwrap_or(c.target_fps);
        c.fixed_step_hz = e.fixed_step_hz.unwrap_or(c.fixed_step_hz);
        c.vulkan = e.vulkan.unwrap_or(c.vulkan);
        c.lanes = e.lanes.or(c.lanes);
        c.pin = e.pin.unwrap_or(c.pin);
        c.sync_test = e.sync_test.or(c.sync_test);
        c.spans = doc.telemetry.spans.unwrap_or(c.spans);
        c.system_spans = doc.telemetry.system_spans.unwrap_or(c.system_spans);
        c.trace_frames = doc.telemetry.trace_frames.unwrap_or(c.trace_frames);
        c.record_frames = doc.telemetry.record_frames.unwrap_or(c.record_frames);
        c.adaptive = doc.budget.adaptive.unwrap_or(c.adaptive);
        c.present_mode = doc.window.present_mode.unwrap_or(c.present_mode);
        c.gpu_churn_alert_per_second = doc
            .gpu
            .churn_alert_per_second
            .unwrap_or(c.gpu_churn_alert_per_second);
        let a = doc.assets;
        c.asset_limits.max_file_bytes = a.max_file_bytes.unwrap_or(c.asset_limits.max_file_bytes);
        c.asset_limits.max_image_pixels = a
            .max_image_pixels
            .unwrap_or(c.asset_limits.max_image_pixels);
        c.validate().map_err(|mut err| {
            err.line = find_key_line(text, &err.key);
            err
        })?;
        Ok(c)
    }
}

/// Turns a TOML parse error into a [`ConfigError`] with the key and the line of its span.
fn parse_error(text: &str, e: &toml::de::Error) -> ConfigError {
    let line = e.span().map(|s| line_of(text, s.start));
    let key = line
        .and_then(|l| text.lines().nth(l - 1))
        .and_then(|l| l.split_once('=').map(|(k, _)| k.trim().to_string()))
        .filter(|k| !k.is_empty())
        .or_else(|| {
            // "unknown field `x`" names the key itself (other messages quote the tokens the
            // parser expected, which are no key).
            let m = e.message();
            let start = m.find("field `")? + "field `".len();
            let end = start + m[start..].find('`')?;
            Some(m[start..end].to_string())
        })
        .or_else(|| {
            // A line that is not `key = value` at all: the line itself is what to fix.
            line.and_then(|l| text.lines().nth(l - 1))
                .map(|l| l.trim().to_string())
                .filter(|l| !l.is_empty())
        })
        .unwrap_or_else(|| "(document)".into());
    let key = match line {
        Some(l) => qualify(text, l, &key),
        None => key,
    };
    ConfigError {
        file: None,
        key,
        line,
        message: e.message().trim().to_string(),
        fix: "see the keys and types in docs/quickstart.md#configuration".into(),
    }
}

/// 1-based line of byte `offset`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Prefixes `key` with the `[table]` that encloses line `line`.
fn qualify(text: &str, line: usize, key: &str) -> String {
    let table = text
        .lines()
        .take(line)
        .filter_map(|l| {
            let t = l.trim();
            (t.starts_with('[') && t.ends_with(']')).then(|| t.trim_matches(['[', ']']).trim())
        })
        .last();
    match table {
        Some(t) if !key.contains('.') && !key.starts_with('[') => format!("{t}.{key}"),
        _ => key.to_string(),
    }
}

/// The 1-based line where dotted `key` (`table.key`) is set, if it is.
fn find_key_line(text: &str, key: &str) -> Option<usize> {
    let (table, leaf) = key.rsplit_once('.')?;
    let mut current = "";
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if t.starts_with('[') && t.ends_with(']') {
            current = t.trim_matches(['[', ']']).trim();
            continue;
        }
        if let Some((k, _)) = t.split_once('=') {
            if current == table && k.trim() == leaf {
                return Some(i + 1);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_key_over_the_defaults() {
        let c = EngineConfig::from_toml(
            "[engine]\ntarget_fps = 30.0\nfixed_step_hz = 120\nvulkan = false\nlanes = \"physics=2\"\n\n[telemetry]\ntrace_frames = 10\nrecord_frames = 64\nsystem_spans = false\n\n[budget]\nadaptive = false\n",
        )
        .unwrap();
        assert_eq!(c.target_fps, 30.0);
        assert_eq!(c.fixed_step_hz, 120);
        assert!(!c.vulkan && !c.adaptive && c.spans && !c.system_spans);
        assert!(EngineConfig::default().system_spans);
        assert_eq!(c.lanes.as_deref(), Some("physics=2"));
        assert_eq!(c.trace_frames, 10);
        assert_eq!(c.record_frames, 64);
    }

    #[test]
    fn asset_limits_come_from_the_file_and_are_bounded() {
        let c = EngineConfig::from_toml("[assets]\nmax_file_bytes = 1024\nmax_image_pixels = 64\n")
            .unwrap();
        assert_eq!(
            (
                c.asset_limits.max_file_bytes,
                c.asset_limits.max_image_pixels
            ),
            (1024, 64)
        );
        let e = EngineConfig::from_toml("[assets]\n\nmax_file_bytes = 0\n").unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("assets.max_file_bytes", Some(3)));
        let e =
            EngineConfig::from_toml("[assets]\nmax_image_pixels = 99999999999999\n").unwrap_err();
        assert_eq!(e.key, "assets.max_image_pixels");
        assert!(e.to_string().contains("fix:"), "{e}");
    }

    #[test]
    fn the_present_mode_comes_from_the_file_and_a_wrong_one_names_the_choices() {
        let c = EngineConfig::from_toml("[window]\npresent_mode = \"mailbox\"\n").unwrap();
        assert_eq!(c.present_mode, "mailbox");
        assert_eq!(EngineConfig::default().present_mode, "fifo");
        let e = EngineConfig::from_toml("[window]\n\npresent_mode = \"vsync\"\n").unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("window.present_mode", Some(3)));
        assert!(
            e.to_string().contains("fifo (vsync), mailbox or immediate"),
            "{e}"
        );
    }

    #[test]
    fn a_wrong_type_names_the_key_and_the_line() {
        let e = EngineConfig::from_toml("[engine]\n\ntarget_fps = \"fast\"\n").unwrap_err();
        assert_eq!(e.key, "engine.target_fps");
        assert_eq!(e.line, Some(3));
        assert!(e.to_string().contains("line 3"), "{e}");
    }

    #[test]
    fn an_unknown_key_names_the_key_and_the_line() {
        let e =
            EngineConfig::from_toml("[telemetry]\nspans = true\ntrace_frame = 3\n").unwrap_err();
        assert_eq!(e.key, "telemetry.trace_frame");
        assert_eq!(e.line, Some(3));
    }

    #[test]
    fn a_line_that_is_no_assignment_is_named_not_the_expected_token() {
        let e = EngineConfig::from_toml("[engine]\nvulkan = false\ngarbage\n").unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("engine.garbage", Some(3)));
        assert!(e.to_string().contains("`engine.garbage`"), "{e}");
    }

    #[test]
    fn an_out_of_range_value_names_the_key_and_the_line() {
        let e =
            EngineConfig::from_toml("[engine]\nvulkan = false\ntarget_fps = 0.5\n").unwrap_err();
        assert_eq!(e.key, "engine.target_fps");
        assert_eq!(e.line, Some(3));
        let e = EngineConfig::from_toml("[engine]\nlanes = \"physics=0\"\n").unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("engine.lanes", Some(2)));
        let e = EngineConfig::from_toml("[telemetry]\nrecord_frames = 2000000\n").unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.line),
            ("telemetry.record_frames", Some(2))
        );
        assert!(e.fix.contains("3600 is one minute"), "{e}");
        let e = EngineConfig::from_toml("[telemetry]\nrecord_frames = 0\n").unwrap_err();
        assert_eq!(e.key, "telemetry.record_frames");
    }
}
