//! Hooks into the system scheduler that a game does not call: the `timing` bench's baseline.
//!
//! Owns: nothing of its own. Must never: be needed for a game to run (nothing here is timed,
//! enforced or reported).

use crate::world::World;

/// Runs every system of `world` once exactly like [`World::run_systems`] but without timing,
/// windows or budget checks: the baseline the `timing` bench measures the timing overhead
/// against.
pub fn run_systems_untimed(world: &mut World) {
    world.run_systems_untimed();
}
