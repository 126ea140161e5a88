//! The icons, compiled in from `assets/` (drawn by `assets/make-icons.sh`), and which one the
//! tray shows: a pure function of the state.

use super::menu::Dots;
use super::state::UiState;

/// What the tray icon says at a glance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// Nothing is safe to stop (or the first scan is not in yet).
    Idle,
    /// Something is safe to stop.
    Safe,
    /// The last scan failed.
    Error,
}

pub fn look(state: &UiState) -> Look {
    match &state.scan {
        Some(Err(_)) => Look::Error,
        Some(Ok(_)) if state.safe().next().is_some() => Look::Safe,
        _ => Look::Idle,
    }
}

/// The title beside the icon (drawn on macOS): the number of projects safe to stop.
pub fn title(state: &UiState) -> String {
    match state.safe().count() {
        0 => String::new(),
        n => n.to_string(),
    }
}

const IDLE: &[u8] = include_bytes!("../../../assets/tray-idle.png");
const SAFE: &[u8] = include_bytes!("../../../assets/tray-safe.png");
const ERROR: &[u8] = include_bytes!("../../../assets/tray-error.png");
const TEMPLATE: &[u8] = include_bytes!("../../../assets/tray-template.png");
const DOT_GREEN: &[u8] = include_bytes!("../../../assets/dot-green.png");
const DOT_YELLOW: &[u8] = include_bytes!("../../../assets/dot-yellow.png");
const DOT_RED: &[u8] = include_bytes!("../../../assets/dot-red.png");

/// Why a compiled-in icon could not be used (a broken build of `assets/`).
#[derive(Debug, thiserror::Error)]
pub enum IconError {
    /// Not a PNG that decodes.
    #[error(transparent)]
    Png(#[from] png::DecodingError),
    /// A PNG, but not the 8-bit RGBA `make-icons.sh` writes.
    #[error("an icon must be 8-bit RGBA, not {0:?} {1:?}")]
    NotRgba(png::ColorType, png::BitDepth),
    /// Pixels the tray would not take.
    #[error(transparent)]
    Tray(#[from] tray_icon::BadIcon),
}

/// Decodes an 8-bit RGBA PNG (what `make-icons.sh` writes) into (pixels, width, height).
pub fn decode(png_bytes: &[u8]) -> Result<(Vec<u8>, u32, u32), IconError> {
    let decoder = png::Decoder::new(png_bytes);
    let mut reader = decoder.read_info()?;
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf)?;
    if info.color_type != png::ColorType::Rgba || info.bit_depth != png::BitDepth::Eight {
        return Err(IconError::NotRgba(info.color_type, info.bit_depth));
    }
    buf.truncate(info.buffer_size());
    Ok((buf, info.width, info.height))
}

/// The tray icon for a look. On macOS the template icon is used for every look (the menu bar
/// tints it) and the title carries the count.
pub fn tray_icon(look: Look) -> Result<tray_icon::Icon, IconError> {
    let bytes = if cfg!(target_os = "macos") {
        TEMPLATE
    } else {
        match look {
            Look::Idle => IDLE,
            Look::Safe => SAFE,
            Look::Error => ERROR,
        }
    };
    let (rgba, w, h) = decode(bytes)?;
    Ok(tray_icon::Icon::from_rgba(rgba, w, h)?)
}

/// The level dots for card titles.
pub fn dots() -> Dots {
    let dot = |bytes: &[u8]| {
        decode(bytes)
            .ok()
            .and_then(|(rgba, w, h)| tray_icon::menu::Icon::from_rgba(rgba, w, h).ok())
    };
    Dots {
        green: dot(DOT_GREEN),
        yellow: dot(DOT_YELLOW),
        red: dot(DOT_RED),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_icon_decodes_to_rgba() {
        for bytes in [IDLE, SAFE, ERROR, TEMPLATE, DOT_GREEN, DOT_YELLOW, DOT_RED] {
            let (rgba, w, h) = decode(bytes).unwrap();
            assert_eq!(rgba.len() as u32, w * h * 4);
        }
        for look in [Look::Idle, Look::Safe, Look::Error] {
            tray_icon(look).unwrap();
        }
    }

    #[test]
    fn a_non_png_is_a_sentence_not_a_panic() {
        assert!(decode(b"not a png").is_err());
    }
}
