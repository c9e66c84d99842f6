//! Fits a hit's qualified name and `path:line` into the cells a result row has left. The name
//! is what tells hits apart (`Flask.send_static_file` vs `Blueprint.send_static_file`), so the
//! path gives way first, from the middle (`src/…/blueprints.py:82`) down to its file name and
//! line; then the name's qualifier from its end (`Bluep….send_static_file`), keeping the last
//! part (the method) whole; only then the file name's middle, and last the method's.

use super::{truncate_end, truncate_middle, width};

/// The fewest cells a location is cut to while a name needs room (`sess…y:322`).
const MIN_LOCATION: usize = 10;
/// Below this many cells for the name the location goes instead.
const MIN_NAME: usize = 12;

/// The name and the location for `available` cells (one of them goes between the two).
pub fn fit(name: &str, path: &str, line: usize, available: usize) -> (String, String) {
    let full = format!("{path}:{line}");
    let file_line = format!("{}:{line}", path.rsplit('/').next().unwrap_or(path));
    let (nw, fw) = (width(name), width(&file_line));
    if nw + 1 + width(&full) <= available {
        return (name.to_string(), full);
    }
    if nw + 1 + fw <= available {
        return (name.to_string(), shorten_path(path, line, available - nw - 1));
    }
    let floor = name_floor(name);
    if available >= floor + 1 + fw {
        return (shorten_name(name, available - 1 - fw), file_line);
    }
    let location_w = fw.min(MIN_LOCATION).max(available.saturating_sub(floor + 1));
    if available.saturating_sub(location_w + 1) < floor.min(MIN_NAME) {
        return (shorten_name(name, available), String::new());
    }
    (shorten_name(name, available - 1 - location_w), truncate_middle(&file_line, location_w))
}

/// Whether `fit` keeps both the name and the file name whole in `available` cells.
pub fn fits_whole(name: &str, path: &str, line: usize, available: usize) -> bool {
    let file_line = width(path.rsplit('/').next().unwrap_or(path)) + 1 + line.to_string().len();
    width(name) + 1 + file_line <= available
}

/// The narrowest the name is cut to while the location can give way: a method whole after
/// the first letter of its class (`B….send_static_file`); a long function (a test's, often)
/// from its middle, to its first and last words.
fn name_floor(name: &str) -> usize {
    const FUNCTION_FLOOR: usize = 22;
    match name.rsplit_once('.') {
        Some((_, last)) => width(name).min(width(last) + 3),
        None => width(name).min(FUNCTION_FLOOR),
    }
}

/// `name` in at most `max` cells: the qualifier cut from its end first, then the last part
/// from its middle.
pub fn shorten_name(name: &str, max: usize) -> String {
    if width(name) <= max {
        return name.to_string();
    }
    if let Some((qualifier, last)) = name.rsplit_once('.') {
        let room = max.saturating_sub(width(last) + 1);
        if room >= 1 {
            return format!("{}.{last}", truncate_end(qualifier, room));
        }
    }
    truncate_middle(name.rsplit('.').next().unwrap_or(name), max)
}

/// `path:line` in at most `max` cells, the longest of: whole; the first directory, `…` and as
/// many of the last directories as fit; `…/` and the file; the file. Below that, the file's
/// middle goes.
pub fn shorten_path(path: &str, line: usize, max: usize) -> String {
    let parts: Vec<&str> = path.split('/').collect();
    let (file, dirs) = parts.split_last().map(|(f, d)| (*f, d)).unwrap_or((path, &[]));
    let mut candidates = vec![format!("{path}:{line}")];
    if dirs.len() >= 2 {
        for keep in (0..dirs.len() - 1).rev() {
            let tail: String = dirs[dirs.len() - keep..].iter().map(|d| format!("{d}/")).collect();
            candidates.push(format!("{}/…/{tail}{file}:{line}", dirs[0]));
        }
    }
    if !dirs.is_empty() {
        candidates.push(format!("…/{file}:{line}"));
    }
    let file_line = format!("{file}:{line}");
    candidates.push(file_line.clone());
    candidates.into_iter().find(|c| width(c) <= max).unwrap_or_else(|| truncate_middle(&file_line, max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_gives_way_from_its_middle_before_the_name() {
        let path = "src/flask/sansio/blueprints.py";
        assert_eq!(shorten_path(path, 82, 99), "src/flask/sansio/blueprints.py:82");
        assert_eq!(shorten_path(path, 82, 29), "src/…/sansio/blueprints.py:82");
        assert_eq!(shorten_path(path, 82, 22), "src/…/blueprints.py:82");
        assert_eq!(shorten_path(path, 82, 20), "…/blueprints.py:82");
        assert_eq!(shorten_path(path, 82, 16), "blueprints.py:82");
        assert_eq!(shorten_path(path, 82, 10), "blue…py:82", "the line stays");
        let (n, l) = fit("Blueprint.send_static_file", path, 82, 56);
        assert_eq!((n.as_str(), l.as_str()), ("Blueprint.send_static_file", "src/…/sansio/blueprints.py:82"));
    }

    #[test]
    fn the_qualifier_is_cut_from_its_end_and_the_method_stays_whole() {
        let (n, l) = fit("Blueprint.send_static_file", "src/flask/sansio/blueprints.py", 82, 41);
        assert_eq!((n.as_str(), l.as_str()), ("Bluepr….send_static_file", "blueprints.py:82"));
        let (f, _) = fit("Flask.send_static_file", "src/flask/app.py", 392, 41);
        assert_ne!(n, f, "Flask and Blueprint stay apart");
        assert_eq!(shorten_name("Outer.Inner.method", 12), "Oute….method");
        assert_eq!(shorten_name("a_very_long_function_name", 12), "a_ver…n_name");
    }

    #[test]
    fn a_long_name_in_a_narrow_row_keeps_its_method_and_the_line() {
        let name = "SecureCookieSessionInterface.get_signing_serializer";
        let (n, l) = fit(name, "src/flask/sessions.py", 322, 36);
        assert!(width(&n) + 1 + width(&l) <= 36, "{n} {l}");
        assert_eq!((n.as_str(), l.as_str()), ("S….get_signing_serializer", "sess…y:322"));
        let (n, l) = fit(name, "src/flask/sessions.py", 322, 14);
        assert_eq!((n.as_str(), l.as_str()), ("get_si…ializer", ""), "too narrow: the location goes");
        // A long test name gives way before its file's name does.
        let (n, l) = fit("test_from_prefixed_env_nested", "tests/test_config.py", 121, 41);
        assert_eq!((n.as_str(), l.as_str()), ("test_from_…_env_nested", "test_config.py:121"));
    }
}
