//! Engine configuration: the settings a builder takes and their validation.
//!
//! Owns: [`EngineConfig`] and its validation, and [`ConfigError`], which names the file, the key
//! and the line of every problem. Must never: start anything (the builder does), or accept a
//! value it cannot honour (a bad value is an error, not a silent default). The TOML file that
//! sets these is read by `config_file` (feature `toml-config`).

use std::path::PathBuf;

/// Most frames of spans kept (each frame of the demo is a few hundred spans).
pub(crate) const MAX_TRACE_FRAMES: usize = 10_000;
/// Most frames the run record keeps whole (about 60 bytes each, plus 8 per lane).
pub(crate) const MAX_RECORD_FRAMES: usize = 1_000_000;
/// The most steps the SyncTest mode re-simulates each step (each costs a whole step).
pub(crate) const MAX_SYNC_TEST_DISTANCE: usize = 64;

/// Everything an [`Engine`](super::Engine) is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineConfig {
    /// Frame-time target in frames per second (the controller's frame budget is `1000 / fps`).
    pub target_fps: f64,
    /// Default fixed step, Hz (agents may declare a smaller step).
    pub fixed_step_hz: u32,
    /// Whether the game's renderer should bring up Vulkan (the runtime itself draws nothing:
    /// the demo's renderer reads this, and runs without drawing when false or without a
    /// driver).
    pub vulkan: bool,
    /// A `name=workers,...` lane spec overriding the automatic plan.
    pub lanes: Option<String>,
    /// Pin lane workers to cores.
    pub pin: bool,
    /// Record trace spans.
    pub spans: bool,
    /// Record every system run as a span too (while `spans` is on; see
    /// [`World::set_system_spans`](crate::hooks::WorldHooks::set_system_spans)).
    pub system_spans: bool,
    /// Frames of spans kept for export.
    pub trace_frames: usize,
    /// Frames the run record keeps whole, 1 to 1,000,000: the report's frame chart. The
    /// summary's whole-run figures (frame-time and per-system percentiles, lane means, frames
    /// over the target) cover every frame whatever this is.
    pub record_frames: usize,
    /// Let the budget controller adapt (false: every agent stays on its first strategy).
    pub adaptive: bool,
    /// The limits every asset load is held to.
    pub asset_limits: super::loaders::AssetLimits,
    /// How a game in a window presents: `fifo` (vsync, the default), `mailbox` or
    /// `immediate` (the latter two fall back to fifo where the display lacks them).
    pub present_mode: String,
    /// GPU allocations plus frees per second above which the render lane logs a (rate-limited)
    /// churn warning naming the allocation that churned most.
    pub gpu_churn_alert_per_second: f64,
    /// Runs every fixed step under a SyncTest that re-simulates the last `n` steps (1 to 64)
    /// from snapshots, systems and physics hook, comparing checksums after every system and
    /// after the hook; `None` (the default) turns it off. A debugging mode: each step then
    /// costs `n + 1` steps. The first desync is logged once (`LG-SYNC-DESYNC`) and reported in
    /// the run summary's `sync_test`; the world goes on from its re-simulated state.
    pub sync_test: Option<usize>,
}

/// The present modes `window.present_mode` accepts.
pub(crate) const PRESENT_MODES: [&str; 3] = ["fifo", "mailbox", "immediate"];

/// The largest `assets.max_file_bytes` accepted: 16 GiB.
pub(crate) const MAX_ASSET_FILE_LIMIT: u64 = 16 << 30;
/// The largest `assets.max_image_pixels` accepted: 1 Gi pixels (4 GiB of RGBA8).
pub(crate) const MAX_IMAGE_PIXELS_LIMIT: u64 = 1 << 30;

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            target_fps: 60.0,
            fixed_step_hz: crate::game_loop::FixedStep::DEFAULT_HZ,
            vulkan: true,
            lanes: None,
            pin: true,
            spans: true,
            system_spans: true,
            trace_frames: 120,
            record_frames: 3600,
            adaptive: true,
            asset_limits: super::loaders::AssetLimits::default(),
            present_mode: "fifo".into(),
            gpu_churn_alert_per_second: super::gpu_memory::DEFAULT_CHURN_ALERT_PER_SECOND,
            sync_test: None,
        }
    }
}

/// A configuration problem: which file, which key, which line, what is wrong and how to fix it.
/// Its text quotes at most 80 characters of the key, of any value the message quotes (between
/// backticks or double quotes), and 240 of the message, control characters escaped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: `{}`: {}; fix: {fix}", .file.as_ref().map(|f| format!("{}: ", crate::world::quoted(&f.display().to_string(), 160))).unwrap_or_default(), .line.map(|l| format!("line {l}")).unwrap_or_else(|| "config".into()), crate::world::quoted(.key, 80), crate::world::quoted(&values_cut(.message, 80), 240))]
pub struct ConfigError {
    /// The file, when the configuration came from one.
    pub file: Option<PathBuf>,
    /// The dotted key (`engine.target_fps`), or the closest the parser could tell.
    pub key: String,
    /// 1-based line of the key, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub fix: String,
}

/// `message` with every value it quotes (between backticks or double quotes) cut to `max`
/// characters, an ellipsis marking the cut: a 10 MB value in a config file is named, not
/// echoed.
fn values_cut(message: &str, max: usize) -> String {
    let mut out = String::with_capacity(message.len().min(4 * max));
    let mut open: Option<char> = None;
    let mut run = 0usize;
    for c in message.chars() {
        match open {
            Some(q) if c == q => {
                open = None;
                out.push(c);
            }
            Some(_) => {
                run += 1;
                if run <= max {
                    out.push(c);
                } else if run == max + 1 {
                    out.push('…');
                }
            }
            None => {
                if c == '`' || c == '"' {
                    open = Some(c);
                    run = 0;
                }
                out.push(c);
            }
        }
    }
    out
}

impl EngineConfig {
    /// Checks every value; the error names the key (its line is filled in by the file reader).
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.check_rates()?;
        self.check_lanes()?;
        self.check_limits()
    }

    /// The present mode, the GPU churn alert, the target frame rate and the fixed step rate.
    fn check_rates(&self) -> Result<(), ConfigError> {
        if !(self.gpu_churn_alert_per_second.is_finite() && self.gpu_churn_alert_per_second > 0.0) {
            return Err(ConfigError::at_key(
                "gpu.churn_alert_per_second",
                format!("{} is not a positive rate", self.gpu_churn_alert_per_second),
                "a positive number of allocations plus frees per second, e.g. 1000.0",
            ));
        }
        if !PRESENT_MODES.contains(&self.present_mode.as_str()) {
            return Err(ConfigError::at_key(
                "window.present_mode",
                format!("`{}` is no present mode", self.present_mode),
                "one of fifo (vsync), mailbox or immediate",
            ));
        }
        if !(self.target_fps.is_finite() && self.target_fps >= 4.0 && self.target_fps <= 1000.0) {
            return Err(ConfigError::at_key(
                "engine.target_fps",
                format!("{} is not a frame rate between 4 and 1000", self.target_fps),
                "use a rate such as 30, 60 or 144 (the controller's frame budget is 1000 / fps ms, at most 250 ms)",
            ));
        }
        if !(1..=1000).contains(&self.fixed_step_hz) {
            return Err(ConfigError::at_key(
                "engine.fixed_step_hz",
                format!("{} Hz is outside 1..=1000", self.fixed_step_hz),
                "use a step rate such as 60 or 120",
            ));
        }
        Ok(())
    }

    /// The lane spec, against this machine's cores.
    fn check_lanes(&self) -> Result<(), ConfigError> {
        if let Some(spec) = &self.lanes {
            // Against this machine's cores: the worker bound is per core.
            let cores = lanegraph_jobs::plan::machine_cores();
            if let Err(e) = lanegraph_jobs::LanePlan::from_spec(spec, &cores) {
                // The plan's message carries its own fix: split it so it is said once.
                let text = e.to_string();
                let (message, fix) = text
                    .split_once("; fix: ")
                    .unwrap_or((text.as_str(), "write name=workers[,name=workers...]"));
                return Err(ConfigError::at_key(
                    "engine.lanes",
                    message.to_string(),
                    fix,
                ));
            }
        }
        Ok(())
    }

    /// The asset limits, the telemetry windows and the SyncTest distance.
    fn check_limits(&self) -> Result<(), ConfigError> {
        let l = &self.asset_limits;
        if !(1..=MAX_ASSET_FILE_LIMIT).contains(&l.max_file_bytes) {
            return Err(ConfigError::at_key(
                "assets.max_file_bytes",
                format!("{} is outside 1..={MAX_ASSET_FILE_LIMIT}", l.max_file_bytes),
                "give the largest asset file you load, in bytes (default 268435456: 256 MiB)",
            ));
        }
        if !(1..=MAX_IMAGE_PIXELS_LIMIT).contains(&l.max_image_pixels) {
            return Err(ConfigError::at_key(
                "assets.max_image_pixels",
                format!(
                    "{} is outside 1..={MAX_IMAGE_PIXELS_LIMIT}",
                    l.max_image_pixels
                ),
                "give the largest image you load, in pixels (default 67108864: 8192 x 8192)",
            ));
        }
        if self.trace_frames == 0 || self.trace_frames > MAX_TRACE_FRAMES {
            return Err(ConfigError::at_key(
                "telemetry.trace_frames",
                format!("{} is outside 1..={MAX_TRACE_FRAMES}", self.trace_frames),
                "keep a few hundred frames (each is a few hundred spans)",
            ));
        }
        if self.record_frames == 0 || self.record_frames > MAX_RECORD_FRAMES {
            return Err(ConfigError::at_key(
                "telemetry.record_frames",
                format!("{} is outside 1..={MAX_RECORD_FRAMES}", self.record_frames),
                "keep the last minutes whole (3600 is one minute at 60 fps)",
            ));
        }
        if let Some(n) = self.sync_test {
            if n == 0 || n > MAX_SYNC_TEST_DISTANCE {
                return Err(ConfigError::at_key(
                    "engine.sync_test",
                    format!("{n} is outside 1..={MAX_SYNC_TEST_DISTANCE}"),
                    "re-simulate a few steps (8 catches most desyncs), or leave the key out",
                ));
            }
        }
        Ok(())
    }
}

impl ConfigError {
    /// An error for `key` with its fix, from the config's values alone (a file reader fills in
    /// the file and the line).
    pub(crate) fn at_key(key: &str, message: impl Into<String>, fix: &str) -> ConfigError {
        ConfigError {
            file: None,
            key: key.into(),
            line: None,
            message: message.into(),
            fix: fix.into(),
        }
    }
}
