//! WCAG 2 contrast: code in the preview stays readable (AA, 4.5:1) on the pane and on the
//! chunk band, whatever the syntect theme's choices (InspiredGitHub's grey docstrings sit at
//! 2.6:1 on a light background).

use ratatui::style::Color;

/// WCAG AA for normal text.
pub const MIN_CONTRAST: f64 = 4.5;

/// Relative luminance of an sRGB colour (WCAG 2).
fn luminance((r, g, b): (u8, u8, u8)) -> f64 {
    let channel = |c: u8| {
        let c = f64::from(c) / 255.0;
        if c <= 0.03928 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)
}

/// Contrast ratio of two colours, 1 to 21.
pub fn ratio(a: (u8, u8, u8), b: (u8, u8, u8)) -> f64 {
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

/// `fg`, moved towards black on a light `bg` (white on a dark one) just far enough to reach
/// [`MIN_CONTRAST`]; colours that are not RGB are left alone (the terminal chooses them).
pub fn readable(fg: Color, bg: Option<Color>) -> Color {
    let (Color::Rgb(r, g, b), Some(Color::Rgb(br, bgg, bb))) = (fg, bg) else {
        return fg;
    };
    let back = (br, bgg, bb);
    if ratio((r, g, b), back) >= MIN_CONTRAST {
        return fg;
    }
    let target = if luminance(back) > 0.18 { 0.0 } else { 255.0 };
    for step in 1..=20 {
        let k = f64::from(step) / 20.0;
        let towards = |c: u8| (f64::from(c) + (target - f64::from(c)) * k).round() as u8;
        let moved = (towards(r), towards(g), towards(b));
        if ratio(moved, back) >= MIN_CONTRAST {
            return Color::Rgb(moved.0, moved.1, moved.2);
        }
    }
    if target == 0.0 {
        Color::Rgb(0, 0, 0)
    } else {
        Color::Rgb(255, 255, 255)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_match_the_wcag_examples() {
        assert!((ratio((0, 0, 0), (255, 255, 255)) - 21.0).abs() < 1e-9);
        // The reported light-theme docstring: grey 150,152,150 on 243,241,228, about 2.6:1.
        assert!((ratio((150, 152, 150), (243, 241, 228)) - 2.6).abs() < 0.1);
    }

    #[test]
    fn too_faint_colours_are_darkened_or_lightened_just_enough() {
        let light = Some(Color::Rgb(243, 241, 228));
        let Color::Rgb(r, g, b) = readable(Color::Rgb(150, 152, 150), light) else { panic!() };
        assert!(ratio((r, g, b), (243, 241, 228)) >= MIN_CONTRAST);
        assert!(r < 150, "darkened on a light background");
        let dark = Some(Color::Rgb(31, 36, 45));
        let Color::Rgb(r, ..) = readable(Color::Rgb(80, 80, 90), dark) else { panic!() };
        assert!(r > 80, "lightened on a dark background");
        assert_eq!(readable(Color::Rgb(0, 0, 0), light), Color::Rgb(0, 0, 0), "readable colours stay");
        assert_eq!(readable(Color::Red, light), Color::Red, "terminal colours stay");
    }
}
