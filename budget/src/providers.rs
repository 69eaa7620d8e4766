//! Where thermal, battery and memory readings come from.
//!
//! Owns: the reading types and the one trait the platform layer implements (and tests
//! simulate). Must never: block, allocate per poll, or hold platform code (that lives with the
//! platform layer; the controller only polls these once per tick).

/// Device thermal state, in the four levels mobile and console platforms report (the names of
/// Apple's `ProcessInfo.ThermalState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum ThermalState {
    /// No thermal concern.
    #[default]
    Nominal,
    /// Warm: shave a little work off.
    Fair,
    /// Hot: the platform is about to throttle.
    Serious,
    /// Throttling or about to shut down: shed load at once.
    Critical,
}

/// A battery reading.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BatteryState {
    /// Charge left, 0.0 ..= 1.0.
    pub level: f64,
    /// True while on external power (then the battery never constrains).
    pub charging: bool,
}

/// A memory reading.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MemoryState {
    /// Bytes in use (the tracking allocator's current bytes, or the platform's figure).
    pub used_bytes: u64,
    /// The budget those bytes are held against.
    pub budget_bytes: u64,
}

impl MemoryState {
    /// `used / budget`; 0 when no budget is set.
    pub(crate) fn fraction(&self) -> f64 {
        if self.budget_bytes == 0 {
            0.0
        } else {
            self.used_bytes as f64 / self.budget_bytes as f64
        }
    }
}

/// One tick's provider readings (what the controller polled, and what a recording replays).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Readings {
    /// Thermal state (Nominal when no provider).
    pub thermal: ThermalState,
    /// Battery, when a provider reports one.
    pub battery: Option<BatteryState>,
    /// Memory, when a provider reports it.
    pub memory: Option<MemoryState>,
    /// GPU memory, when a provider reports it (the engine installs one fed by its render pass's
    /// GPU memory monitor).
    pub gpu_memory: Option<MemoryState>,
}

/// Where the controller's device readings come from: the platform layer implements it (and
/// tests simulate it with [`FixedReadings`]). One trait for every signal: a platform reports
/// what it can and leaves the rest at its default, which reads as "no concern".
pub trait ReadingsProvider: Send {
    /// The readings now. Polled once per controller tick; must not block.
    fn read(&mut self) -> Readings;
}

/// The providers a controller polls: the game's device readings and the engine's GPU memory
/// signal (fed by its render pass). Where both report GPU memory, the game's reading wins.
#[derive(Default)]
pub(crate) struct Providers {
    /// The game's (or platform layer's) readings. Writer: `ControllerDriver::set_providers`.
    pub(crate) device: Option<Box<dyn ReadingsProvider>>,
    /// The engine's GPU memory signal; only its `gpu_memory` is read. Writer:
    /// `ControllerDriver::set_gpu_memory_provider`.
    pub(crate) gpu_memory: Option<Box<dyn ReadingsProvider>>,
}

impl std::fmt::Debug for Providers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Providers")
            .field("device", &self.device.is_some())
            .field("gpu_memory", &self.gpu_memory.is_some())
            .finish()
    }
}

impl Providers {
    /// Polls every provider once.
    pub(crate) fn poll(&mut self) -> Readings {
        let mut r = self.device.as_mut().map(|p| p.read()).unwrap_or_default();
        if r.gpu_memory.is_none() {
            r.gpu_memory = self.gpu_memory.as_mut().and_then(|p| p.read().gpu_memory);
        }
        r
    }
}

/// A provider that reports a fixed value (tests and simulations change it through the handle).
#[derive(Debug, Clone, Default)]
pub struct FixedReadings(pub std::sync::Arc<std::sync::Mutex<Readings>>);

impl FixedReadings {
    /// Sets what the next polls return.
    pub fn set(&self, r: Readings) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = r;
    }

    fn get(&self) -> Readings {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl ReadingsProvider for FixedReadings {
    fn read(&mut self) -> Readings {
        self.get()
    }
}
