//! Provider traits: where thermal, battery and memory readings come from.
//!
//! Owns: the reading types and the three traits the platform layer implements (and tests
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

/// Reports the device's thermal state.
pub trait ThermalProvider: Send {
    /// The state now.
    fn thermal(&mut self) -> ThermalState;
}

/// Reports the battery; `None` on machines without one.
pub trait BatteryProvider: Send {
    /// The battery now.
    fn battery(&mut self) -> Option<BatteryState>;
}

/// Reports memory use against its budget.
pub trait MemoryProvider: Send {
    /// Memory now.
    fn memory(&mut self) -> Option<MemoryState>;
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

/// The providers a controller polls. Each is optional: a missing one reads as "no concern".
#[derive(Default)]
pub struct Providers {
    /// Thermal source.
    pub thermal: Option<Box<dyn ThermalProvider>>,
    /// Battery source.
    pub battery: Option<Box<dyn BatteryProvider>>,
    /// Memory source.
    pub memory: Option<Box<dyn MemoryProvider>>,
    /// GPU memory source.
    pub gpu_memory: Option<Box<dyn MemoryProvider>>,
}

impl std::fmt::Debug for Providers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Providers")
            .field("thermal", &self.thermal.is_some())
            .field("battery", &self.battery.is_some())
            .field("memory", &self.memory.is_some())
            .field("gpu_memory", &self.gpu_memory.is_some())
            .finish()
    }
}

impl Providers {
    /// Polls every provider once.
    pub(crate) fn poll(&mut self) -> Readings {
        Readings {
            thermal: self
                .thermal
                .as_mut()
                .map(|p| p.thermal())
                .unwrap_or_default(),
            battery: self.battery.as_mut().and_then(|p| p.battery()),
            memory: self.memory.as_mut().and_then(|p| p.memory()),
            gpu_memory: self.gpu_memory.as_mut().and_then(|p| p.memory()),
        }
    }
}

/// A provider that replays a fixed value (tests and simulations change it through the handle).
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

impl ThermalProvider for FixedReadings {
    fn thermal(&mut self) -> ThermalState {
        self.get().thermal
    }
}

impl BatteryProvider for FixedReadings {
    fn battery(&mut self) -> Option<BatteryState> {
        self.get().battery
    }
}

impl MemoryProvider for FixedReadings {
    fn memory(&mut self) -> Option<MemoryState> {
        self.get().memory
    }
}
