//! Input: the window's events as an ordered per-frame queue that systems read, recorded and
//! replayable like the controller's decisions.
//!
//! Owns: [`InputEvent`] (what a window reports, in a form with no window library in it),
//! [`Key`] (a key's name, inline: no allocation), [`Input`] (the world's view of input: this
//! step's events in arrival order, the keys held, the cursor, focus) and [`RecordedInput`].
//! Must never: depend on a windowing library (`crate::window` translates `winit`'s events
//! into these), read a clock, or reorder events.
//!
//! # How events reach systems
//! 1. The window (or a test, a network layer, a bot) calls
//!    [`Engine::push_input`](crate::Engine::push_input) on the owner thread.
//! 2. At the start of the next frame the engine hands every pending event to the world
//!    ([`Input::events`]) and logs it with the frame's number (the run summary's `inputs`).
//! 3. The frame's first fixed step's systems read them (`world.input()`); the step's end
//!    clears them, so a frame that runs two steps does not see a key press twice, and a frame
//!    that runs none keeps them for the next. Held keys, cursor and focus persist.
//! 4. A replay ([`Engine::replay`](crate::Engine::replay)) hands the logged
//!    events over at the same frames instead, and ignores live input: a lockstep run with the
//!    same seed, decisions and inputs ends in the same world hash.
//!
//! | file | idea |
//! |------|------|
//! | `keys` | Keys: `Key` (a key's name, inline: no allocation) and the typed `KeyCode` systems ask with, whose names are `winit`'s physical key ... |

use serde::{Deserialize, Serialize};

mod keys;
pub use keys::{Key, KeyCode, UnknownKey};

/// A mouse button.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MouseButton {
    /// The primary button.
    Left,
    /// The secondary button.
    Right,
    /// The wheel button.
    Middle,
    /// "Back" (button 4).
    Back,
    /// "Forward" (button 5).
    Forward,
    /// Any other, by the platform's number.
    Other(u16),
}

/// One thing the player or the window did.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum InputEvent {
    /// A key went down or up (`repeat`: the platform's auto-repeat while held).
    Key {
        /// Which key.
        key: Key,
        /// Down (true) or up.
        pressed: bool,
        /// An auto-repeat of a key already down.
        repeat: bool,
    },
    /// The cursor moved, in the window's physical pixels from its top-left corner.
    CursorMoved {
        /// Pixels from the left edge.
        x: f32,
        /// Pixels from the top edge.
        y: f32,
    },
    /// A mouse button went down or up.
    MouseButton {
        /// Which button.
        button: MouseButton,
        /// Down (true) or up.
        pressed: bool,
    },
    /// The wheel turned, in lines (pixel deltas are converted at 1 line per 20 pixels).
    Wheel {
        /// Lines right.
        dx: f32,
        /// Lines down... or up: positive is away from the player, as `winit` reports.
        dy: f32,
    },
    /// The window's drawable area changed, physical pixels.
    Resized {
        /// Width.
        width: u32,
        /// Height.
        height: u32,
    },
    /// The window gained (true) or lost keyboard focus.
    Focused {
        /// Focused now.
        focused: bool,
    },
    /// The window was minimised (true) or restored; it presents nothing while minimised.
    Minimised {
        /// Minimised now.
        minimised: bool,
    },
    /// The player asked to close the window.
    CloseRequested,
}

/// An event and the frame it was handed to the world in.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RecordedInput {
    /// The frame (1-based, [`FrameOutcome::frame`](crate::FrameOutcome::frame)).
    pub frame: u64,
    /// The event.
    pub event: InputEvent,
}

/// Events logged per run at most (about 40 bytes each in memory); the rest are counted in
/// [`Engine::input_log_dropped`](crate::hooks::EngineHooks::input_log_dropped) and make the run
/// unreplayable.
pub(crate) const MAX_LOGGED_INPUTS: usize = 1 << 20;

/// The world's view of input (`world.input()`): this step's events and the state they left.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Input {
    events: Vec<InputEvent>,
    held: Vec<Key>,
    buttons: Vec<MouseButton>,
    cursor: Option<(f32, f32)>,
    focused: bool,
    minimised: bool,
    close_requested: bool,
}

impl Input {
    /// This step's events, in the order they happened (empty after the frame's first step).
    pub fn events(&self) -> &[InputEvent] {
        &self.events
    }

    /// Whether `key` is held down: a [`KeyCode`] (`KeyCode::KeyW`), or any [`Key`] the window
    /// reported.
    pub fn is_down(&self, key: impl Into<Key>) -> bool {
        let key = key.into();
        self.held.contains(&key)
    }

    /// Whether `key` went down during this step (auto-repeats excluded).
    pub fn just_pressed(&self, key: impl Into<Key>) -> bool {
        let key = key.into();
        self.events.iter().any(
            |e| matches!(e, InputEvent::Key { key: k, pressed: true, repeat: false } if *k == key),
        )
    }

    /// Whether `button` is held down.
    pub fn button_down(&self, button: MouseButton) -> bool {
        self.buttons.contains(&button)
    }

    /// The cursor's last position in the window (physical pixels), once it has moved.
    pub fn cursor(&self) -> Option<(f32, f32)> {
        self.cursor
    }

    /// Whether the window has keyboard focus.
    pub fn focused(&self) -> bool {
        self.focused
    }

    /// Whether the window is minimised.
    pub fn minimised(&self) -> bool {
        self.minimised
    }

    /// Whether the player has asked to close the window (sticky).
    pub fn close_requested(&self) -> bool {
        self.close_requested
    }

    /// Hands `event` to the world: appended to [`events`](Self::events), state updated.
    pub(crate) fn deliver(&mut self, event: InputEvent) {
        match event {
            InputEvent::Key { key, pressed, .. } => set_held(&mut self.held, key, pressed),
            InputEvent::MouseButton { button, pressed } => {
                set_held(&mut self.buttons, button, pressed)
            }
            InputEvent::CursorMoved { x, y } => self.cursor = Some((x, y)),
            InputEvent::Focused { focused } => {
                self.focused = focused;
                if !focused {
                    // A key released while another window had focus never reaches us.
                    self.held.clear();
                    self.buttons.clear();
                }
            }
            InputEvent::Minimised { minimised } => self.minimised = minimised,
            InputEvent::CloseRequested => self.close_requested = true,
            InputEvent::Wheel { .. } | InputEvent::Resized { .. } => {}
        }
        self.events.push(event);
    }

    /// The end of a step: its events are consumed (the capacity is kept).
    pub(crate) fn end_step(&mut self) {
        self.events.clear();
    }
}

/// Adds `item` to the held set when `pressed` (once), removes it when released.
fn set_held<T: PartialEq>(held: &mut Vec<T>, item: T, pressed: bool) {
    let at = held.iter().position(|h| *h == item);
    match (pressed, at) {
        (true, None) => held.push(item),
        (false, Some(i)) => {
            held.swap_remove(i);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str, pressed: bool) -> InputEvent {
        InputEvent::Key {
            key: Key::named(name).unwrap(),
            pressed,
            repeat: false,
        }
    }

    #[test]
    fn key_names_are_checked_and_kept_inline() {
        assert_eq!(Key::named("KeyW").unwrap().as_str(), "KeyW");
        assert_eq!(
            Key::named("MediaTrackPrevious").unwrap().as_str(),
            "MediaTrackPrevious"
        );
        assert!(Key::named("").is_none());
        assert!(Key::named("Key W").is_none());
        assert!(Key::named(&"A".repeat(Key::MAX_LEN + 1)).is_none());
        assert_eq!(std::mem::size_of::<Key>(), 24);
    }

    #[test]
    fn events_round_trip_through_json_and_bad_keys_are_named() {
        let events = vec![
            key("KeyW", true),
            InputEvent::CursorMoved { x: 1.5, y: 2.0 },
            InputEvent::MouseButton {
                button: MouseButton::Other(9),
                pressed: true,
            },
            InputEvent::Wheel { dx: 0.0, dy: -1.0 },
            InputEvent::Resized {
                width: 640,
                height: 480,
            },
            InputEvent::Focused { focused: false },
            InputEvent::Minimised { minimised: true },
            InputEvent::CloseRequested,
        ];
        let json = serde_json::to_string(&events).unwrap();
        assert!(json.contains(r#"{"kind":"key","key":"KeyW","pressed":true,"repeat":false}"#));
        let back: Vec<InputEvent> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, events);
        let e = serde_json::from_str::<InputEvent>(
            r#"{"kind":"key","key":"no such key!","pressed":true,"repeat":false}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("is no key name"), "{e}");
    }

    #[test]
    fn state_follows_the_events_and_a_step_consumes_them() {
        let mut i = Input::default();
        i.deliver(key("KeyW", true));
        i.deliver(key("KeyA", true));
        assert!(i.is_down(KeyCode::KeyW) && i.just_pressed(KeyCode::KeyW));
        i.end_step();
        assert!(i.events().is_empty());
        assert!(i.is_down(KeyCode::KeyW) && !i.just_pressed(KeyCode::KeyW));
        i.deliver(key("KeyW", false));
        assert!(!i.is_down(KeyCode::KeyW) && i.is_down(KeyCode::KeyA));
        i.deliver(InputEvent::MouseButton {
            button: MouseButton::Left,
            pressed: true,
        });
        assert!(i.button_down(MouseButton::Left));
        // Losing focus releases everything held.
        i.deliver(InputEvent::Focused { focused: false });
        assert!(!i.is_down(KeyCode::KeyA) && !i.button_down(MouseButton::Left));
        i.deliver(InputEvent::CloseRequested);
        i.end_step();
        assert!(i.close_requested(), "close stays requested");
        assert_eq!(i.events().len(), 0);
    }
}
