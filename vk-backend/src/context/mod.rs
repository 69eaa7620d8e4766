//! The Vulkan instance, the chosen device, its queue and its memory allocator.
//!
//! Owns: loading the loader, validation layers and the debug messenger, device selection
//! (rules in [`select`]), the one graphics + compute queue, the `gpu-allocator` instance, and
//! tearing all of it down in the right order. Must never: unwrap a `vk::Result` (every one
//! becomes a [`GpuError`] naming the call), or destroy the device while a resource made from
//! it lives (resources hold an `Arc` of `Shared`).
//!
//! # Teardown order (`Drop for Shared`)
//! 1. `vkDeviceWaitIdle`: nothing in flight may touch what is freed next.
//! 2. The allocator (frees its memory blocks; every buffer and image is gone by then because
//!    they each hold an `Arc<Shared>`).
//! 3. The device. 4. The debug messenger. 5. The instance. 6. The loader library (`Entry`).

pub mod messenger;
pub mod select;

use std::ffi::{c_char, CStr};
use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex, MutexGuard};

use ash::vk;
use gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};
use gpu_allocator::{AllocationSizes, AllocatorDebugSettings};

use crate::error::{alloc_err, vk_err, GpuError};
use messenger::ValidationCounts;
use select::{Candidate, DeviceKind, DevicePick, FamilyCandidate};

/// The Khronos validation layer's name.
pub const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// Memory block sizes for `gpu-allocator`: 32 MiB device-local, 8 MiB host-visible. The
/// allocator's defaults (256 / 64 MiB) are sized for games with many textures; the headless
/// passes here need a few MiB, and on lavapipe every block is host RAM.
const DEVICE_BLOCK_BYTES: u64 = 32 << 20;
const HOST_BLOCK_BYTES: u64 = 8 << 20;

/// How to bring the device up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuConfig {
    /// Enable `VK_LAYER_KHRONOS_validation` and a debug messenger routed into `tracing` and
    /// counted ([`Gpu::validation_counts`]). Always on in tests; off in benches (the layers slow
    /// timestamp recording about 12x).
    pub validation: bool,
    /// Which physical device.
    pub device: DevicePick,
    /// Use `VK_EXT_memory_budget` for the memory monitor when the device has it. `false`
    /// forces the monitor's fallback (the backend's own ledger against heap sizes).
    pub memory_budget: bool,
    /// Use `VK_KHR/EXT_calibrated_timestamps` when the device has it. `false` forces the
    /// offset estimate (for testing that path on a device that has the extension).
    pub calibrated_timestamps: bool,
}

impl Default for GpuConfig {
    fn default() -> Self {
        GpuConfig {
            validation: false,
            device: DevicePick::Best,
            calibrated_timestamps: true,
            memory_budget: true,
        }
    }
}

/// Facts about the device that was picked.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceInfo {
    /// `deviceName`.
    pub name: String,
    /// `deviceType`.
    pub kind: DeviceKind,
    /// Vulkan version the device supports (`major.minor.patch`).
    pub api_version: String,
    /// The queue family all work goes to.
    pub queue_family: u32,
    /// That family's `timestampValidBits` (0: no GPU profiler).
    pub timestamp_valid_bits: u32,
    /// `timestampPeriod`: nanoseconds per timestamp tick.
    pub timestamp_period_ns: f32,
    /// Which calibrated-timestamps extension is in use, if any.
    pub calibration: Option<&'static str>,
}

/// `vkGetCalibratedTimestamps*` of whichever extension the device has (same signature).
pub(crate) enum Calibrator {
    Khr(ash::khr::calibrated_timestamps::Device),
    Ext(ash::ext::calibrated_timestamps::Device),
}

/// State shared by everything made from one device (see the module docs for teardown).
pub(crate) struct Shared {
    pub(crate) entry: ManuallyDrop<ash::Entry>,
    pub(crate) instance: ash::Instance,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    counts: Arc<ValidationCounts>,
    pub(crate) device: ash::Device,
    /// Queue submission must be externally synchronised (spec: vkQueueSubmit `queue`).
    queue: Mutex<vk::Queue>,
    pub(crate) allocator: ManuallyDrop<Mutex<Allocator>>,
    pub(crate) info: DeviceInfo,
    pub(crate) calibrator: Option<Calibrator>,
    pub(crate) physical: vk::PhysicalDevice,
    /// `VK_EXT_memory_budget` is enabled (the memory monitor reads the driver's figures).
    pub(crate) memory_budget: bool,
    /// Every allocation and free, for the memory monitor.
    pub(crate) ledger: crate::ledger::MemoryLedger,
}

impl Shared {
    /// The queue, locked for a submit (a poisoned lock only guards a handle: recover it).
    pub(crate) fn queue(&self) -> MutexGuard<'_, vk::Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until the device is idle before a resource is destroyed, so a resource dropped
    /// while a frame still uses it cannot be freed under the GPU (cold path: drops only; on an
    /// idle device this returns at once). Errors are logged: a lost device is idle.
    pub(crate) fn idle_before_destroy(&self) {
        let _queue = self.queue();
        // SAFETY: the queue lock is held, so no submit races the wait.
        if let Err(e) = unsafe { self.device.device_wait_idle() } {
            tracing::debug!(result = ?e, "vkDeviceWaitIdle before a destroy failed");
        }
    }

    /// The allocator, locked (cold path: resource creation only).
    pub(crate) fn allocator(&self) -> MutexGuard<'_, Allocator> {
        self.allocator.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: the whole teardown, in the order of the module docs:
        // - Every resource made from this device holds an `Arc<Shared>`, so none is alive now.
        // - Waiting idle first means no command buffer still uses anything freed below.
        // - Each handle is destroyed exactly once, child before parent.
        unsafe {
            if let Err(e) = self.device.device_wait_idle() {
                tracing::warn!(result = ?e, "vkDeviceWaitIdle failed during teardown");
            }
            ManuallyDrop::drop(&mut self.allocator);
            self.device.destroy_device(None);
            if let Some((loader, messenger)) = self.debug.take() {
                loader.destroy_debug_utils_messenger(messenger, None);
            }
            self.instance.destroy_instance(None);
            ManuallyDrop::drop(&mut self.entry);
        }
    }
}

/// A Vulkan device ready for work: cheap to clone (an `Arc`).
#[derive(Clone)]
pub struct Gpu {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("info", &self.shared.info)
            .finish()
    }
}

/// Instance-level objects created so far; destroys them if device bring-up fails half way.
struct Partial {
    entry: Option<ash::Entry>,
    instance: Option<ash::Instance>,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    surface: Option<(ash::khr::surface::Instance, vk::SurfaceKHR)>,
}

impl Drop for Partial {
    fn drop(&mut self) {
        // SAFETY: only reached on an error path, before any device exists; each handle is
        // destroyed once, the messenger before its instance.
        unsafe {
            if let Some((loader, surface)) = self.surface.take() {
                loader.destroy_surface(surface, None);
            }
            if let Some((loader, messenger)) = self.debug.take() {
                loader.destroy_debug_utils_messenger(messenger, None);
            }
            if let Some(instance) = self.instance.take() {
                instance.destroy_instance(None);
            }
        }
    }
}

impl Gpu {
    /// Loads the Vulkan loader, creates the instance (with validation when asked), picks a
    /// device per `config`, and creates the device, its queue and the memory allocator.
    ///
    /// Errors: [`GpuError::LoaderMissing`] / [`GpuError::NoDevice`] /
    /// [`GpuError::ValidationLayerMissing`] when this machine has no usable Vulkan (see
    /// [`GpuError::is_unavailable`]); [`GpuError::DeviceNotFound`] for an override that matches
    /// nothing; a call error for anything the driver refuses.
    pub fn new(config: &GpuConfig) -> Result<Gpu, GpuError> {
        Gpu::bring_up(config, None).map(|(gpu, _)| gpu)
    }

    pub(crate) fn bring_up(
        config: &GpuConfig,
        window: Option<WindowHandles>,
    ) -> Result<Surfaced, GpuError> {
        // SAFETY: `Entry::load` runs the system loader's initialisers; we trust the installed
        // libvulkan as every Vulkan program must. The returned `Entry` keeps it loaded.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| GpuError::LoaderMissing {
            detail: e.to_string(),
        })?;
        let counts = Arc::new(ValidationCounts::default());
        let mut partial = Partial {
            entry: Some(entry.clone()),
            instance: None,
            debug: None,
            surface: None,
        };
        let entry = &entry;
        let surface_exts: &[*const c_char] = match window {
            Some((display, _)) => {
                ash_window::enumerate_required_extensions(display).map_err(|e| {
                    GpuError::NoPresent {
                        why: format!("this window system has no Vulkan surface extension ({e:?})"),
                    }
                })?
            }
            None => &[],
        };
        create_instance(entry, config, &counts, &mut partial, surface_exts)?;
        let instance = partial.instance.clone().ok_or(GpuError::NoDevice {
            why: "internal: instance vanished".into(),
        })?;
        if let Some((display, handle)) = window {
            // SAFETY: the instance was created with the extensions this display needs; the
            // handles come from a live window (the caller's `Arc`, held here until the call
            // returns and then by the `Surface`, which drops it only after destroying the
            // surface). The surface is destroyed before the instance (`Partial` on error,
            // `Surface`'s drop holding the `Gpu` otherwise).
            let surface =
                unsafe { ash_window::create_surface(entry, &instance, display, handle, None) }
                    .map_err(vk_err("vkCreate*SurfaceKHR"))?;
            partial.surface = Some((ash::khr::surface::Instance::new(entry, &instance), surface));
        }

        let (physical, family, cands) = pick_device(&instance, &config.device)?;
        let chosen = &cands.1;
        if let Some((loader, surface)) = &partial.surface {
            // SAFETY: the physical device, family and surface all belong to this instance.
            let ok =
                unsafe { loader.get_physical_device_surface_support(physical, family, *surface) }
                    .map_err(vk_err("vkGetPhysicalDeviceSurfaceSupportKHR"))?;
            if !ok {
                return Err(GpuError::NoPresent {
                    why: format!(
                        "{}'s queue family {family} cannot present to this window",
                        chosen.name
                    ),
                });
            }
        }
        let calib_name = calibration_extension(entry, &instance, physical, config)?;
        let memory_budget = config.memory_budget && {
            // SAFETY: enumeration on a valid physical device.
            let exts = unsafe { instance.enumerate_device_extension_properties(physical) }
                .map_err(vk_err("vkEnumerateDeviceExtensionProperties"))?;
            exts.iter()
                .any(|e| e.extension_name_as_c_str() == Ok(ash::ext::memory_budget::NAME))
        };
        let mut extra: Vec<&'static CStr> = calib_name.into_iter().collect();
        if memory_budget {
            extra.push(ash::ext::memory_budget::NAME);
        }
        let device = create_device(
            &instance,
            physical,
            family,
            &extra,
            partial.surface.is_some(),
        )?;
        // SAFETY: family/index 0 were requested in `create_device`.
        let queue = unsafe { device.get_device_queue(family, 0) };
        let calibrator = calib_name.map(|name| {
            if name == ash::khr::calibrated_timestamps::NAME {
                Calibrator::Khr(ash::khr::calibrated_timestamps::Device::new(
                    &instance, &device,
                ))
            } else {
                Calibrator::Ext(ash::ext::calibrated_timestamps::Device::new(
                    &instance, &device,
                ))
            }
        });
        let allocator = Allocator::new(&AllocatorCreateDesc {
            instance: instance.clone(),
            device: device.clone(),
            physical_device: physical,
            debug_settings: AllocatorDebugSettings::default(),
            buffer_device_address: false,
            allocation_sizes: AllocationSizes::new(DEVICE_BLOCK_BYTES, HOST_BLOCK_BYTES),
        });
        let allocator = match allocator {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: the device was just created and nothing was made from it.
                unsafe { device.destroy_device(None) };
                return Err(alloc_err("the memory allocator")(e));
            }
        };
        // SAFETY: plain property queries on a valid physical device.
        let props = unsafe { instance.get_physical_device_properties(physical) };
        let info = DeviceInfo {
            name: chosen.name.clone(),
            kind: chosen.kind,
            api_version: format!(
                "{}.{}.{}",
                vk::api_version_major(props.api_version),
                vk::api_version_minor(props.api_version),
                vk::api_version_patch(props.api_version)
            ),
            queue_family: family,
            timestamp_valid_bits: chosen.families[family as usize].timestamp_valid_bits,
            timestamp_period_ns: props.limits.timestamp_period,
            calibration: calib_name.map(|n| {
                if n == ash::khr::calibrated_timestamps::NAME {
                    "VK_KHR_calibrated_timestamps"
                } else {
                    "VK_EXT_calibrated_timestamps"
                }
            }),
        };
        tracing::info!(device = %info.name, kind = ?info.kind, api = %info.api_version,
            timestamp_bits = info.timestamp_valid_bits, period_ns = info.timestamp_period_ns,
            calibration = ?info.calibration, validation = config.validation, "vulkan device up");
        let entry = partial.entry.take();
        let instance = partial.instance.take();
        let debug = partial.debug.take();
        let surface = partial.surface.take().map(|(_, s)| s);
        let (Some(entry), Some(instance)) = (entry, instance) else {
            return Err(GpuError::NoDevice {
                why: "internal: instance vanished".into(),
            });
        };
        let gpu = Gpu {
            shared: Arc::new(Shared {
                entry: ManuallyDrop::new(entry),
                instance,
                debug,
                counts,
                device,
                queue: Mutex::new(queue),
                allocator: ManuallyDrop::new(Mutex::new(allocator)),
                info,
                calibrator,
                physical,
                memory_budget,
                ledger: Default::default(),
            }),
        };
        Ok((gpu, surface))
    }

    /// The raw `ash` device, for a game's own passes: creating pipelines and recording
    /// commands into a [`crate::Recording`]. Every call on it is `unsafe` (Vulkan's valid-usage
    /// rules); an object that holds handles made from it should also hold a clone of this
    /// `Gpu`, declared after the handles, so the device outlives them.
    pub fn device(&self) -> &ash::Device {
        &self.shared.device
    }

    /// What was picked.
    pub fn info(&self) -> &DeviceInfo {
        &self.shared.info
    }

    /// Validation-layer messages received so far (all zero without validation).
    pub fn validation_counts(&self) -> &ValidationCounts {
        &self.shared.counts
    }

    /// A handle on the message counts that outlives this `Gpu` (to check that teardown itself
    /// raised no message).
    pub fn validation_counter(&self) -> Arc<ValidationCounts> {
        self.shared.counts.clone()
    }

    /// Whether validation layers are on.
    pub fn validation_enabled(&self) -> bool {
        self.shared.debug.is_some()
    }

    /// Waits until the device has finished all work (shutdown, tests; never per frame).
    pub fn wait_idle(&self) -> Result<(), GpuError> {
        let _queue = self.shared.queue();
        // SAFETY: the queue lock is held so no submit races the wait.
        unsafe { self.shared.device.device_wait_idle() }.map_err(vk_err("vkDeviceWaitIdle"))
    }
}

/// A window's raw display and window handles.
pub(crate) type WindowHandles = (
    raw_window_handle::RawDisplayHandle,
    raw_window_handle::RawWindowHandle,
);

/// A device, and the surface made on its instance when it was brought up for a window.
pub(crate) type Surfaced = (Gpu, Option<vk::SurfaceKHR>);

fn create_instance(
    entry: &ash::Entry,
    config: &GpuConfig,
    counts: &ValidationCounts,
    partial: &mut Partial,
    surface_exts: &[*const c_char],
) -> Result<(), GpuError> {
    let mut layers: Vec<*const c_char> = Vec::new();
    let mut extensions: Vec<*const c_char> = surface_exts.to_vec();
    if config.validation {
        // SAFETY: enumeration calls with no preconditions.
        let available = unsafe { entry.enumerate_instance_layer_properties() }
            .map_err(vk_err("vkEnumerateInstanceLayerProperties"))?;
        let has = available
            .iter()
            .any(|l| l.layer_name_as_c_str() == Ok(VALIDATION_LAYER));
        if !has {
            return Err(GpuError::ValidationLayerMissing);
        }
        layers.push(VALIDATION_LAYER.as_ptr());
        extensions.push(ash::ext::debug_utils::NAME.as_ptr());
        // SAFETY: enumeration with a valid layer name.
        let layer_exts =
            unsafe { entry.enumerate_instance_extension_properties(Some(VALIDATION_LAYER)) }
                .map_err(vk_err("vkEnumerateInstanceExtensionProperties"))?;
        if layer_exts
            .iter()
            .any(|e| e.extension_name_as_c_str() == Ok(ash::ext::validation_features::NAME))
        {
            extensions.push(ash::ext::validation_features::NAME.as_ptr());
        }
    }
    let sync_validation = extensions.contains(&ash::ext::validation_features::NAME.as_ptr());
    let app = vk::ApplicationInfo::default()
        .application_name(c"lanegraph")
        .engine_name(c"lanegraph")
        .api_version(vk::API_VERSION_1_2);
    let mut debug_info = messenger::create_info(counts);
    let mut info = vk::InstanceCreateInfo::default()
        .application_info(&app)
        .enabled_layer_names(&layers)
        .enabled_extension_names(&extensions);
    // Synchronization validation on top of the core checks: it reports missing or wrong
    // barriers (read-after-write, write-after-read hazards) that core validation cannot see.
    // Best practices too: legal but wasteful or suspect use (an empty semaphore array given a
    // pointer, a debugging extension left on: see `messenger` for the one exception).
    let enables = [
        vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION,
        vk::ValidationFeatureEnableEXT::BEST_PRACTICES,
    ];
    let mut features = vk::ValidationFeaturesEXT::default().enabled_validation_features(&enables);
    if config.validation {
        // Chained so instance creation and destruction themselves are validated too.
        info = info.push_next(&mut debug_info);
        if sync_validation {
            info = info.push_next(&mut features);
        }
    }
    // SAFETY: `info` and everything it points at live until the call returns.
    let instance = unsafe { entry.create_instance(&info, None) }.map_err(|r| match r {
        vk::Result::ERROR_INCOMPATIBLE_DRIVER => GpuError::NoDevice {
            why: "the loader found no Vulkan 1.2 driver (vkCreateInstance: INCOMPATIBLE_DRIVER)"
                .into(),
        },
        vk::Result::ERROR_LAYER_NOT_PRESENT => GpuError::ValidationLayerMissing,
        r => vk_err("vkCreateInstance")(r),
    })?;
    partial.instance = Some(instance.clone());
    if config.validation {
        let loader = ash::ext::debug_utils::Instance::new(entry, &instance);
        let ci = messenger::create_info(counts);
        // SAFETY: valid instance with VK_EXT_debug_utils enabled; `counts` outlives the
        // messenger (see `Shared`).
        let messenger = unsafe { loader.create_debug_utils_messenger(&ci, None) }
            .map_err(vk_err("vkCreateDebugUtilsMessengerEXT"))?;
        partial.debug = Some((loader, messenger));
    }
    Ok(())
}

/// Chosen physical device, its queue family, and (all candidates, the chosen one).
type Picked = (vk::PhysicalDevice, u32, (Vec<Candidate>, Candidate));

fn pick_device(instance: &ash::Instance, pick: &DevicePick) -> Result<Picked, GpuError> {
    // SAFETY: enumeration and property queries on a valid instance.
    let physicals = unsafe { instance.enumerate_physical_devices() }
        .map_err(vk_err("vkEnumeratePhysicalDevices"))?;
    let cands: Vec<Candidate> = physicals
        .iter()
        .map(|&pd| {
            // SAFETY: `pd` came from this instance.
            let (props, families) = unsafe {
                (
                    instance.get_physical_device_properties(pd),
                    instance.get_physical_device_queue_family_properties(pd),
                )
            };
            let too_old = props.api_version < vk::API_VERSION_1_2;
            Candidate {
                name: props
                    .device_name_as_c_str()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|_| "<unnamed>".into()),
                kind: match props.device_type {
                    vk::PhysicalDeviceType::DISCRETE_GPU => DeviceKind::Discrete,
                    vk::PhysicalDeviceType::INTEGRATED_GPU => DeviceKind::Integrated,
                    vk::PhysicalDeviceType::VIRTUAL_GPU => DeviceKind::Virtual,
                    vk::PhysicalDeviceType::CPU => DeviceKind::Cpu,
                    _ => DeviceKind::Other,
                },
                families: families
                    .iter()
                    .map(|f| FamilyCandidate {
                        graphics_compute: !too_old
                            && f.queue_flags
                                .contains(vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE),
                        timestamp_valid_bits: f.timestamp_valid_bits,
                    })
                    .collect(),
            }
        })
        .collect();
    let index = select::choose_device(&cands, pick)?;
    let family = select::choose_family(&cands[index].families).ok_or(GpuError::NoDevice {
        why: "internal: chosen device lost its queue family".into(),
    })?;
    let chosen = cands[index].clone();
    Ok((physicals[index], family, (cands, chosen)))
}

/// The calibrated-timestamps extension to enable, if the device has one that can correlate the
/// device clock with `CLOCK_MONOTONIC` (the CPU clock spans are reported in).
fn calibration_extension(
    entry: &ash::Entry,
    instance: &ash::Instance,
    physical: vk::PhysicalDevice,
    config: &GpuConfig,
) -> Result<Option<&'static CStr>, GpuError> {
    if !config.calibrated_timestamps {
        return Ok(None);
    }
    // SAFETY: enumeration on a valid physical device.
    let exts = unsafe { instance.enumerate_device_extension_properties(physical) }
        .map_err(vk_err("vkEnumerateDeviceExtensionProperties"))?;
    let has = |name: &CStr| exts.iter().any(|e| e.extension_name_as_c_str() == Ok(name));
    let domains_ok = |domains: Vec<vk::TimeDomainKHR>| {
        domains.contains(&vk::TimeDomainKHR::DEVICE)
            && domains.contains(&vk::TimeDomainKHR::CLOCK_MONOTONIC)
    };
    if has(ash::khr::calibrated_timestamps::NAME) {
        let loader = ash::khr::calibrated_timestamps::Instance::new(entry, instance);
        // SAFETY: the device advertises the extension.
        let domains = unsafe { loader.get_physical_device_calibrateable_time_domains(physical) }
            .map_err(vk_err("vkGetPhysicalDeviceCalibrateableTimeDomainsKHR"))?;
        if domains_ok(domains) {
            return Ok(Some(ash::khr::calibrated_timestamps::NAME));
        }
    }
    if has(ash::ext::calibrated_timestamps::NAME) {
        let loader = ash::ext::calibrated_timestamps::Instance::new(entry, instance);
        // SAFETY: the device advertises the extension.
        let domains = unsafe { loader.get_physical_device_calibrateable_time_domains(physical) }
            .map_err(vk_err("vkGetPhysicalDeviceCalibrateableTimeDomainsEXT"))?;
        if domains_ok(domains) {
            return Ok(Some(ash::ext::calibrated_timestamps::NAME));
        }
    }
    Ok(None)
}

fn create_device(
    instance: &ash::Instance,
    physical: vk::PhysicalDevice,
    family: u32,
    extensions: &[&'static CStr],
    swapchain: bool,
) -> Result<ash::Device, GpuError> {
    let priorities = [1.0f32];
    let queues = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(family)
        .queue_priorities(&priorities)];
    let mut extensions: Vec<*const c_char> = extensions.iter().map(|n| n.as_ptr()).collect();
    if swapchain {
        // SAFETY: enumeration on a valid physical device.
        let exts = unsafe { instance.enumerate_device_extension_properties(physical) }
            .map_err(vk_err("vkEnumerateDeviceExtensionProperties"))?;
        if !exts
            .iter()
            .any(|e| e.extension_name_as_c_str() == Ok(ash::khr::swapchain::NAME))
        {
            return Err(GpuError::NoPresent {
                why: "the device has no VK_KHR_swapchain".into(),
            });
        }
        extensions.push(ash::khr::swapchain::NAME.as_ptr());
    }
    let info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queues)
        .enabled_extension_names(&extensions);
    // SAFETY: `info` and what it points at live until the call returns; the family exists.
    unsafe { instance.create_device(physical, &info, None) }.map_err(vk_err("vkCreateDevice"))
}
