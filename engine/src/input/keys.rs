//! Keys: [`Key`] (a key's name, inline: no allocation) and the typed [`KeyCode`] systems ask
//! with, whose names are `winit`'s physical key names; a config file's key name parses into one
//! and a typo is an [`UnknownKey`] naming the closest key.
//!
//! Owns: the key names and their parsing. Must never: allocate to copy or compare a key.

use serde::{Deserialize, Serialize};

/// A key, by the name of its physical position on a US layout (`winit`'s `KeyCode` names:
/// `KeyW`, `Space`, `ArrowLeft`, `Escape`...). Stored inline (up to 23 bytes): copying or
/// comparing one never allocates.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    len: u8,
    bytes: [u8; Key::MAX_LEN],
}

impl Key {
    /// The longest name a key may have, bytes.
    pub(crate) const MAX_LEN: usize = 23;

    /// The key the window reports for a key it cannot name (`Unidentified`).
    pub(crate) const UNIDENTIFIED: Key = {
        let name = *b"Unidentified";
        let mut bytes = [0u8; Key::MAX_LEN];
        let mut i = 0;
        while i < name.len() {
            bytes[i] = name[i];
            i += 1;
        }
        Key {
            len: name.len() as u8,
            bytes,
        }
    };

    /// The key named `name`; `None` when the name is empty, longer than 23 bytes,
    /// or not plain ASCII letters and digits.
    pub(crate) fn named(name: &str) -> Option<Key> {
        if name.is_empty()
            || name.len() > Key::MAX_LEN
            || !name.bytes().all(|b| b.is_ascii_alphanumeric())
        {
            return None;
        }
        let mut bytes = [0u8; Key::MAX_LEN];
        bytes[..name.len()].copy_from_slice(name.as_bytes());
        Some(Key {
            len: name.len() as u8,
            bytes,
        })
    }

    /// The key's name (also its `Display`).
    pub(crate) fn as_str(&self) -> &str {
        // Only `named` builds a Key, from ASCII alphanumerics: always valid UTF-8.
        std::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or("")
    }
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key({})", self.as_str())
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Key {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Key::named(&s).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "`{s}` is no key name (1 to {} ASCII letters and digits, e.g. `KeyW`)",
                Key::MAX_LEN
            ))
        })
    }
}

/// A physical key, typed: a typo is a compile error, not a key that is never down. The names
/// are `winit`'s `KeyCode` names (a key's position on a US layout), the same the window reports
/// in [`Key`]. Config files name keys by string: [`KeyCode::from_str`](std::str::FromStr) turns
/// a name into a `KeyCode` or an [`UnknownKey`] error naming the closest key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyCode {
    /// `KeyA`.
    KeyA,
    /// `KeyB`.
    KeyB,
    /// `KeyC`.
    KeyC,
    /// `KeyD`.
    KeyD,
    /// `KeyE`.
    KeyE,
    /// `KeyF`.
    KeyF,
    /// `KeyG`.
    KeyG,
    /// `KeyH`.
    KeyH,
    /// `KeyI`.
    KeyI,
    /// `KeyJ`.
    KeyJ,
    /// `KeyK`.
    KeyK,
    /// `KeyL`.
    KeyL,
    /// `KeyM`.
    KeyM,
    /// `KeyN`.
    KeyN,
    /// `KeyO`.
    KeyO,
    /// `KeyP`.
    KeyP,
    /// `KeyQ`.
    KeyQ,
    /// `KeyR`.
    KeyR,
    /// `KeyS`.
    KeyS,
    /// `KeyT`.
    KeyT,
    /// `KeyU`.
    KeyU,
    /// `KeyV`.
    KeyV,
    /// `KeyW`.
    KeyW,
    /// `KeyX`.
    KeyX,
    /// `KeyY`.
    KeyY,
    /// `KeyZ`.
    KeyZ,
    /// `Digit0`.
    Digit0,
    /// `Digit1`.
    Digit1,
    /// `Digit2`.
    Digit2,
    /// `Digit3`.
    Digit3,
    /// `Digit4`.
    Digit4,
    /// `Digit5`.
    Digit5,
    /// `Digit6`.
    Digit6,
    /// `Digit7`.
    Digit7,
    /// `Digit8`.
    Digit8,
    /// `Digit9`.
    Digit9,
    /// `ArrowUp`.
    ArrowUp,
    /// `ArrowDown`.
    ArrowDown,
    /// `ArrowLeft`.
    ArrowLeft,
    /// `ArrowRight`.
    ArrowRight,
    /// `Space`.
    Space,
    /// `Enter`.
    Enter,
    /// `Escape`.
    Escape,
    /// `Tab`.
    Tab,
    /// `Backspace`.
    Backspace,
    /// `Delete`.
    Delete,
    /// `Insert`.
    Insert,
    /// `Home`.
    Home,
    /// `End`.
    End,
    /// `PageUp`.
    PageUp,
    /// `PageDown`.
    PageDown,
    /// `ShiftLeft`.
    ShiftLeft,
    /// `ShiftRight`.
    ShiftRight,
    /// `ControlLeft`.
    ControlLeft,
    /// `ControlRight`.
    ControlRight,
    /// `AltLeft`.
    AltLeft,
    /// `AltRight`.
    AltRight,
    /// `SuperLeft`.
    SuperLeft,
    /// `SuperRight`.
    SuperRight,
    /// `CapsLock`.
    CapsLock,
    /// `Minus`.
    Minus,
    /// `Equal`.
    Equal,
    /// `BracketLeft`.
    BracketLeft,
    /// `BracketRight`.
    BracketRight,
    /// `Backslash`.
    Backslash,
    /// `Semicolon`.
    Semicolon,
    /// `Quote`.
    Quote,
    /// `Backquote`.
    Backquote,
    /// `Comma`.
    Comma,
    /// `Period`.
    Period,
    /// `Slash`.
    Slash,
    /// `F1`.
    F1,
    /// `F2`.
    F2,
    /// `F3`.
    F3,
    /// `F4`.
    F4,
    /// `F5`.
    F5,
    /// `F6`.
    F6,
    /// `F7`.
    F7,
    /// `F8`.
    F8,
    /// `F9`.
    F9,
    /// `F10`.
    F10,
    /// `F11`.
    F11,
    /// `F12`.
    F12,
    /// `Numpad0`.
    Numpad0,
    /// `Numpad1`.
    Numpad1,
    /// `Numpad2`.
    Numpad2,
    /// `Numpad3`.
    Numpad3,
    /// `Numpad4`.
    Numpad4,
    /// `Numpad5`.
    Numpad5,
    /// `Numpad6`.
    Numpad6,
    /// `Numpad7`.
    Numpad7,
    /// `Numpad8`.
    Numpad8,
    /// `Numpad9`.
    Numpad9,
    /// `NumpadAdd`.
    NumpadAdd,
    /// `NumpadSubtract`.
    NumpadSubtract,
    /// `NumpadMultiply`.
    NumpadMultiply,
    /// `NumpadDivide`.
    NumpadDivide,
    /// `NumpadEnter`.
    NumpadEnter,
    /// `NumpadDecimal`.
    NumpadDecimal,
}

impl KeyCode {
    /// Every typed key, in declaration order.
    pub(crate) const ALL: [KeyCode; 99] = [
        KeyCode::KeyA,
        KeyCode::KeyB,
        KeyCode::KeyC,
        KeyCode::KeyD,
        KeyCode::KeyE,
        KeyCode::KeyF,
        KeyCode::KeyG,
        KeyCode::KeyH,
        KeyCode::KeyI,
        KeyCode::KeyJ,
        KeyCode::KeyK,
        KeyCode::KeyL,
        KeyCode::KeyM,
        KeyCode::KeyN,
        KeyCode::KeyO,
        KeyCode::KeyP,
        KeyCode::KeyQ,
        KeyCode::KeyR,
        KeyCode::KeyS,
        KeyCode::KeyT,
        KeyCode::KeyU,
        KeyCode::KeyV,
        KeyCode::KeyW,
        KeyCode::KeyX,
        KeyCode::KeyY,
        KeyCode::KeyZ,
        KeyCode::Digit0,
        KeyCode::Digit1,
        KeyCode::Digit2,
        KeyCode::Digit3,
        KeyCode::Digit4,
        KeyCode::Digit5,
        KeyCode::Digit6,
        KeyCode::Digit7,
        KeyCode::Digit8,
        KeyCode::Digit9,
        KeyCode::ArrowUp,
        KeyCode::ArrowDown,
        KeyCode::ArrowLeft,
        KeyCode::ArrowRight,
        KeyCode::Space,
        KeyCode::Enter,
        KeyCode::Escape,
        KeyCode::Tab,
        KeyCode::Backspace,
        KeyCode::Delete,
        KeyCode::Insert,
        KeyCode::Home,
        KeyCode::End,
        KeyCode::PageUp,
        KeyCode::PageDown,
        KeyCode::ShiftLeft,
        KeyCode::ShiftRight,
        KeyCode::ControlLeft,
        KeyCode::ControlRight,
        KeyCode::AltLeft,
        KeyCode::AltRight,
        KeyCode::SuperLeft,
        KeyCode::SuperRight,
        KeyCode::CapsLock,
        KeyCode::Minus,
        KeyCode::Equal,
        KeyCode::BracketLeft,
        KeyCode::BracketRight,
        KeyCode::Backslash,
        KeyCode::Semicolon,
        KeyCode::Quote,
        KeyCode::Backquote,
        KeyCode::Comma,
        KeyCode::Period,
        KeyCode::Slash,
        KeyCode::F1,
        KeyCode::F2,
        KeyCode::F3,
        KeyCode::F4,
        KeyCode::F5,
        KeyCode::F6,
        KeyCode::F7,
        KeyCode::F8,
        KeyCode::F9,
        KeyCode::F10,
        KeyCode::F11,
        KeyCode::F12,
        KeyCode::Numpad0,
        KeyCode::Numpad1,
        KeyCode::Numpad2,
        KeyCode::Numpad3,
        KeyCode::Numpad4,
        KeyCode::Numpad5,
        KeyCode::Numpad6,
        KeyCode::Numpad7,
        KeyCode::Numpad8,
        KeyCode::Numpad9,
        KeyCode::NumpadAdd,
        KeyCode::NumpadSubtract,
        KeyCode::NumpadMultiply,
        KeyCode::NumpadDivide,
        KeyCode::NumpadEnter,
        KeyCode::NumpadDecimal,
    ];

    /// The key's name (`"ArrowUp"`).
    ///
    /// One arm per key (a table of about 100 lines): a `match` keeps it exhaustive, checked by
    /// the compiler whenever a key is added.
    pub const fn name(self) -> &'static str {
        match self {
            KeyCode::KeyA => "KeyA",
            KeyCode::KeyB => "KeyB",
            KeyCode::KeyC => "KeyC",
            KeyCode::KeyD => "KeyD",
            KeyCode::KeyE => "KeyE",
            KeyCode::KeyF => "KeyF",
            KeyCode::KeyG => "KeyG",
            KeyCode::KeyH => "KeyH",
            KeyCode::KeyI => "KeyI",
            KeyCode::KeyJ => "KeyJ",
            KeyCode::KeyK => "KeyK",
            KeyCode::KeyL => "KeyL",
            KeyCode::KeyM => "KeyM",
            KeyCode::KeyN => "KeyN",
            KeyCode::KeyO => "KeyO",
            KeyCode::KeyP => "KeyP",
            KeyCode::KeyQ => "KeyQ",
            KeyCode::KeyR => "KeyR",
            KeyCode::KeyS => "KeyS",
            KeyCode::KeyT => "KeyT",
            KeyCode::KeyU => "KeyU",
            KeyCode::KeyV => "KeyV",
            KeyCode::KeyW => "KeyW",
            KeyCode::KeyX => "KeyX",
            KeyCode::KeyY => "KeyY",
            KeyCode::KeyZ => "KeyZ",
            KeyCode::Digit0 => "Digit0",
            KeyCode::Digit1 => "Digit1",
            KeyCode::Digit2 => "Digit2",
            KeyCode::Digit3 => "Digit3",
            KeyCode::Digit4 => "Digit4",
            KeyCode::Digit5 => "Digit5",
            KeyCode::Digit6 => "Digit6",
            KeyCode::Digit7 => "Digit7",
            KeyCode::Digit8 => "Digit8",
            KeyCode::Digit9 => "Digit9",
            KeyCode::ArrowUp => "ArrowUp",
            KeyCode::ArrowDown => "ArrowDown",
            KeyCode::ArrowLeft => "ArrowLeft",
            KeyCode::ArrowRight => "ArrowRight",
            KeyCode::Space => "Space",
            KeyCode::Enter => "Enter",
            KeyCode::Escape => "Escape",
            KeyCode::Tab => "Tab",
            KeyCode::Backspace => "Backspace",
            KeyCode::Delete => "Delete",
            KeyCode::Insert => "Insert",
            KeyCode::Home => "Home",
            KeyCode::End => "End",
            KeyCode::PageUp => "PageUp",
            KeyCode::PageDown => "PageDown",
            KeyCode::ShiftLeft => "ShiftLeft",
            KeyCode::ShiftRight => "ShiftRight",
            KeyCode::ControlLeft => "ControlLeft",
            KeyCode::ControlRight => "ControlRight",
            KeyCode::AltLeft => "AltLeft",
            KeyCode::AltRight => "AltRight",
            KeyCode::SuperLeft => "SuperLeft",
            KeyCode::SuperRight => "SuperRight",
            KeyCode::CapsLock => "CapsLock",
            KeyCode::Minus => "Minus",
            KeyCode::Equal => "Equal",
            KeyCode::BracketLeft => "BracketLeft",
            KeyCode::BracketRight => "BracketRight",
            KeyCode::Backslash => "Backslash",
            KeyCode::Semicolon => "Semicolon",
            KeyCode::Quote => "Quote",
            KeyCode::Backquote => "Backquote",
            KeyCode::Comma => "Comma",
            KeyCode::Period => "Period",
            KeyCode::Slash => "Slash",
            KeyCode::F1 => "F1",
            KeyCode::F2 => "F2",
            KeyCode::F3 => "F3",
            KeyCode::F4 => "F4",
            KeyCode::F5 => "F5",
            KeyCode::F6 => "F6",
            KeyCode::F7 => "F7",
            KeyCode::F8 => "F8",
            KeyCode::F9 => "F9",
            KeyCode::F10 => "F10",
            KeyCode::F11 => "F11",
            KeyCode::F12 => "F12",
            KeyCode::Numpad0 => "Numpad0",
            KeyCode::Numpad1 => "Numpad1",
            KeyCode::Numpad2 => "Numpad2",
            KeyCode::Numpad3 => "Numpad3",
            KeyCode::Numpad4 => "Numpad4",
            KeyCode::Numpad5 => "Numpad5",
            KeyCode::Numpad6 => "Numpad6",
            KeyCode::Numpad7 => "Numpad7",
            KeyCode::Numpad8 => "Numpad8",
            KeyCode::Numpad9 => "Numpad9",
            KeyCode::NumpadAdd => "NumpadAdd",
            KeyCode::NumpadSubtract => "NumpadSubtract",
            KeyCode::NumpadMultiply => "NumpadMultiply",
            KeyCode::NumpadDivide => "NumpadDivide",
            KeyCode::NumpadEnter => "NumpadEnter",
            KeyCode::NumpadDecimal => "NumpadDecimal",
        }
    }

    /// The key as the window reports it (a game writes `Key::from(code)`).
    pub(crate) fn key(self) -> Key {
        // Every name above is 1 to 14 ASCII letters and digits: always a valid `Key`.
        Key::named(self.name()).unwrap_or(Key::UNIDENTIFIED)
    }
}

impl From<KeyCode> for Key {
    fn from(k: KeyCode) -> Key {
        k.key()
    }
}

impl std::fmt::Display for KeyCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A key name that names no [`KeyCode`] (a config file's typo).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{name}` is no key name{} (fix: use a physical key name such as `KeyW`, `Space` or `ArrowUp`)", closest.map_or(String::new(), |c| format!("; did you mean `{c}`?")))]
pub struct UnknownKey {
    /// The name given.
    pub name: String,
    /// The key whose name matches it ignoring case, when one does.
    pub closest: Option<KeyCode>,
}

impl std::str::FromStr for KeyCode {
    type Err = UnknownKey;
    fn from_str(name: &str) -> Result<KeyCode, UnknownKey> {
        if let Some(k) = KeyCode::ALL.iter().find(|k| k.name() == name) {
            return Ok(*k);
        }
        Err(UnknownKey {
            name: name.to_string(),
            closest: KeyCode::ALL
                .iter()
                .find(|k| k.name().eq_ignore_ascii_case(name))
                .copied(),
        })
    }
}

#[cfg(test)]
mod key_code_tests {
    use super::*;
    use crate::input::{Input, InputEvent};

    #[test]
    fn typed_keys_match_the_windows_names_and_a_config_typo_is_a_typed_error() {
        for k in KeyCode::ALL {
            assert_eq!(k.key().as_str(), k.name());
            assert_eq!(k.name().parse::<KeyCode>(), Ok(k));
        }
        let e = "ArrowUP".parse::<KeyCode>().unwrap_err();
        assert_eq!(e.closest, Some(KeyCode::ArrowUp));
        assert!(e.to_string().contains("did you mean `ArrowUp`"), "{e}");
        assert_eq!("Jump".parse::<KeyCode>().unwrap_err().closest, None);
        let mut input = Input::default();
        input.deliver(InputEvent::Key {
            key: KeyCode::KeyW.key(),
            pressed: true,
            repeat: false,
        });
        assert!(input.is_down(KeyCode::KeyW));
        assert!(input.just_pressed(KeyCode::KeyW));
        assert!(!input.is_down(KeyCode::KeyS));
        assert_eq!(Key::UNIDENTIFIED.as_str(), "Unidentified");
    }
}
