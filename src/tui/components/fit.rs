//! Fits hits' qualified names and `path:line`s into the cells a result column's rows have
//! left, by one rule for the whole column, so a root or a directory reads the same on every
//! row and the eye finds the method and the file in the same shape down the list.
//!
//! What tells hits apart is the method (`send_static_file`) and its file (`blueprints.py:82`),
//! so they go last. The rule shortens, in this order, only as far as the rows need: each list
//! finds the least step at which all its rows fit, and every row of both lists gets the deeper
//! of the two (so a directory reads the same side by side); a row with room then takes back
//! what it can of its class and file name (issue 70: no name cut beside blank cells).
//!
//! 0. the root every hit of both lists shares (`Rack.` of `Rack.MockResponse.body`): it tells
//!    no row from another (a method keeps its class, every name its last part);
//! 1. the directories to their first letters, fish-style (`src/flask/sansio/x.py` →
//!    `s/f/s/x.py`: the depth and a cue stay, and no row says more than its neighbour);
//! 2. the directories away (`x.py:82`; the preview's title has the whole path);
//! 3. the class (the name's qualifier): its outer parts first, the one nearest the method kept
//!    (`SqlMapper.GridReader.Read` → `….GridReader.Read`: what tells classes apart), then that
//!    part from its end (`Blueprint.send_static_file` → `Blue….send_static_file`), down to
//!    its first letter. A row with room shows more of its class than the column's cut: the
//!    widest form that fits, so no name is cut beside blank cells;
//! 4. the file name, cut from the end of its stem to the same cells on every row that needs
//!    it (a row with room keeps it whole), its extension and line kept (`blueprints.py:82` →
//!    `bluep….py:82`), down to five letters.
//!
//! (The other column's rank, `D3`, stays on every row that has one: see `results`.) After
//! step 2, a name with no class to cut (a function's, often a test's; a class's own row) longer
//! than 22 cells gives way from its middle, down to 22, before others' classes and files are
//! cut. A row that fits at no step (a narrow terminal) does not push the others further: it
//! keeps the column's forms where it can and gives way by itself (`fit`): its class to `…`
//! (`….render_progress`: a method never loses its class unmarked), its location, and only then
//! its method, from the middle.

use super::{truncate_end, truncate_middle, width};
use crate::lang::Spelling;

/// A row that fits at no step cuts its method to this many cells before its location gives way
/// (a test's name, often), then to `MIN_NAME`.
const NAME_FLOOR: usize = 22;
/// Below this many cells for the name, the location goes.
const MIN_NAME: usize = 12;
/// The fewest cells a location is cut to while a name needs room (`sess…y:322`).
const MIN_LOCATION: usize = 10;
/// The fewest cells the rule cuts a class to: its first letter and `…`.
const MIN_QUALIFIER: usize = 2;
/// The fewest cells a row with room keeps of its class before its file name takes them back
/// whole: five letters and `…`, as a stem's `MIN_STEM`.
const READABLE_QUALIFIER: usize = 6;
/// The fewest cells the rule cuts a file's stem to: five letters and `…` (`termi….go`; three,
/// `ter….go`, no longer told `terminal.go` from its neighbours).
const MIN_STEM: usize = 6;

/// What a location keeps of its directories (later is shorter).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Dirs {
    Whole,
    Initials,
    Dropped,
}

/// How every row of a column is shortened: one step of the rule in the module's comment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shortening {
    /// How many leading parts of every name go: the root all rows share ([`shared_root`]).
    pub root: usize,
    pub dirs: Dirs,
    /// The most cells a name's qualifier keeps, `…` included; `None`: whole.
    pub qualifier: Option<usize>,
    /// The most cells a file name's stem keeps, `…` included; `None`: whole.
    pub stem: Option<usize>,
}

impl Shortening {
    pub const NONE: Shortening = Shortening { root: 0, dirs: Dirs::Whole, qualifier: None, stem: None };

    /// Each part as short as the shorter of the two makes it (so two lists side by side show a
    /// class, a directory or a file alike; each fits where either did).
    pub fn deepest(self, other: Shortening) -> Shortening {
        Shortening {
            root: self.root.max(other.root),
            dirs: self.dirs.max(other.dirs),
            qualifier: narrower(self.qualifier, other.qualifier),
            stem: narrower(self.stem, other.stem),
        }
    }

    /// The steps of the rule, least first, for `rows` whose names share `root` leading parts.
    fn steps(rows: &[Row], root: usize) -> Vec<Shortening> {
        let rooted = Shortening { root, ..Shortening::NONE };
        let longest_qualifier =
            rows.iter().filter_map(|r| qualifier(&rooted.name(r.name)).map(width)).max().unwrap_or(0);
        let longest_stem = rows.iter().map(|r| width(split_file(r.path).1)).max().unwrap_or(0);
        let dirs = [Dirs::Whole, Dirs::Initials, Dirs::Dropped].map(|dirs| Shortening { dirs, ..rooted });
        let classes = (MIN_QUALIFIER..longest_qualifier).rev().map(|cells| Shortening {
            dirs: Dirs::Dropped,
            qualifier: Some(cells),
            ..rooted
        });
        let files = (MIN_STEM..longest_stem).rev().map(|cells| Shortening {
            dirs: Dirs::Dropped,
            qualifier: Some(MIN_QUALIFIER),
            stem: Some(cells),
            ..rooted
        });
        let whole = std::iter::once(Shortening::NONE);
        whole.chain(dirs).chain(classes).chain(files).collect()
    }

    /// `name` at this step: its root dropped, its class cut (a nested hit's `· ` kept).
    pub fn name(&self, name: &str) -> String {
        let (nest, name) = name.split_at(if name.starts_with(NEST) { NEST.len() } else { 0 });
        let name = drop_root(name, self.root);
        match (self.qualifier, name.rsplit_once('.')) {
            (Some(cells), Some((qualifier, last))) if width(qualifier) > cells => {
                format!("{nest}{}.{last}", cut_qualifier(qualifier, cells))
            }
            _ => format!("{nest}{name}"),
        }
    }

    pub fn location(&self, path: &str, line: usize) -> String {
        let (dirs, stem, extension) = split_file(path);
        let stem = match self.stem {
            Some(cells) => truncate_end(stem, cells),
            None => stem.to_string(),
        };
        let dirs = match self.dirs {
            Dirs::Whole => dirs.to_string(),
            Dirs::Initials => dirs.split_terminator('/').map(|d| format!("{}/", initial(d))).collect(),
            Dirs::Dropped => String::new(),
        };
        format!("{dirs}{stem}{extension}:{line}")
    }

    /// `row`'s name at this step as its language writes it (`…::HasOne#valid?`): the rule
    /// cuts the dotted name, and the cells counted are the written one's.
    pub fn shown(&self, row: &Row) -> String {
        row.spelling.write(&self.name(row.name)).into_owned()
    }

    /// The cells a row takes at this step: name, a space, location.
    fn cells(&self, row: &Row) -> usize {
        width(&self.shown(row)) + 1 + width(&self.location(row.path, row.line))
    }
}

/// The narrower of two cuts to cells (`None`: whole).
pub fn narrower(a: Option<usize>, b: Option<usize>) -> Option<usize> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// What a nested hit's row name starts with (`results`' rows).
const NEST: &str = "· ";

/// `name` less its first `root` parts, as long as one part stays.
fn drop_root(name: &str, root: usize) -> &str {
    match name.match_indices('.').nth(root.saturating_sub(1)) {
        Some((at, _)) if root > 0 => &name[at + 1..],
        _ => name,
    }
}

/// A name's qualifier (`Rack.MockResponse` of `Rack.MockResponse.body`), a nested hit's `· `
/// aside; `None` for a name of one part.
pub fn qualifier(name: &str) -> Option<&str> {
    name.strip_prefix(NEST).unwrap_or(name).rsplit_once('.').map(|(q, _)| q)
}

/// `qualifier` in at most `cells` (it is wider): its outer parts elided, the ones nearest the
/// method kept (`….GridReader`); then its last part cut from its end (`GridRe…`), marked cut
/// though it would fit whole, since parts before it went.
fn cut_qualifier(qualifier: &str, cells: usize) -> String {
    let mut tail = qualifier;
    while let Some((_, rest)) = tail.split_once('.') {
        tail = rest;
        let elided = format!("….{tail}");
        if width(&elided) <= cells {
            return elided;
        }
    }
    let cells = if tail == qualifier { cells } else { cells.min(width(tail).saturating_sub(1)) };
    truncate_end(tail, cells)
}

/// How many leading parts every qualified name of both lists shares (`Rack.` of
/// `Rack.MockResponse.body` and `Rack.Lint.check`), for step 0: at most what leaves each
/// method (`true` beside its name) its class and every other name its last part; none where
/// fewer than two names are qualified (one name shares with nothing).
pub fn shared_root<'a>(names: impl IntoIterator<Item = (&'a str, bool)>) -> usize {
    let mut root: Option<Vec<&str>> = None;
    let mut qualified = 0;
    for (name, method) in names {
        let parts: Vec<&str> = name.split('.').collect();
        if parts.len() < 2 {
            continue;
        }
        qualified += 1;
        let most = parts.len() - if method { 2 } else { 1 };
        let shared = match &root {
            Some(root) => root.iter().zip(&parts).take(most).take_while(|(a, b)| a == b).count(),
            None => most,
        };
        root = Some(parts[..shared].to_vec());
    }
    if qualified < 2 {
        return 0;
    }
    root.map_or(0, |r| r.len())
}

/// A path's directories (with their last `/`), its file's stem, and its extension (with its
/// dot; a leading dot, `.pythonrc`, is the stem's).
fn split_file(path: &str) -> (&str, &str, &str) {
    let cut = path.rfind('/').map_or(0, |i| i + 1);
    let (dirs, file) = path.split_at(cut);
    match file.rfind('.').filter(|&i| i > 0) {
        Some(i) => (dirs, &file[..i], &file[i..]),
        None => (dirs, file, ""),
    }
}

/// A directory's first letter; a hidden or private one's first two (`.g`, `_v`).
fn initial(dir: &str) -> &str {
    let skip = usize::from(dir.starts_with(['.', '_']));
    let end = dir.char_indices().nth(skip + 1).map_or(dir.len(), |(i, _)| i);
    &dir[..end]
}

/// A hit as its row shows it: its dotted name (`crate::chunk::Chunk::name`, with the row's
/// `· ` or ` +2`) and how its language writes it.
#[derive(Clone, Copy, Debug)]
pub struct Row<'a> {
    pub name: &'a str,
    pub path: &'a str,
    pub line: usize,
    pub spelling: Spelling,
}

/// The column's step: the least at which every row fits in `available` cells; a row that fits
/// at no step does not count (it gives way by itself, in `fit`).
pub fn choose(rows: &[Row], root: usize, available: usize) -> Shortening {
    let steps = Shortening::steps(rows, root);
    // Once the directories are gone, a name with no class to cut (a function's, often a
    // test's; a class's own) gives way to `NAME_FLOOR` cells before others' names and files.
    let cells = |step: &Shortening, row: &Row| match step.name(row.name) {
        name if !name.contains('.') && step.dirs == Dirs::Dropped => {
            width(&step.shown(row)).min(NAME_FLOOR) + 1 + width(&step.location(row.path, row.line))
        }
        _ => step.cells(row),
    };
    let needed = |row: &Row| steps.iter().position(|s| cells(s, row) <= available);
    let at = rows.iter().filter_map(needed).max().unwrap_or(0);
    steps[at]
}

/// The cells the column's widest row takes whole (name, a space, `path:line`).
pub fn widest(rows: &[Row]) -> usize {
    rows.iter().map(|r| Shortening::NONE.cells(r)).max().unwrap_or(0)
}

/// The cuts of `row`'s class (at `step` otherwise) a row with room may show, widest first:
/// whole, then one cell less each down to `least` (`None`: whole only).
fn wider_cuts(row: &Row, step: Shortening, least: Option<usize>) -> impl Iterator<Item = Option<usize>> {
    let cells = qualifier(&Shortening { qualifier: None, ..step }.name(row.name)).map_or(0, width);
    let least = least.unwrap_or(cells);
    std::iter::once(None).chain((least..cells).rev().map(Some))
}

/// The name and the location of `row` at the column's `step` in `available` cells (one of
/// them goes between the two). A row that does not fit keeps the column's forms and gives way
/// by itself, keeping its method (the last part of its name) whole as long as it can: its
/// class to its first letter, then to `…` (`….method`, so every qualified row reads alike),
/// its directories, its file name from the middle down to 10 cells; then its method from the
/// middle, to 22 cells, then to 12; then the location goes.
pub fn fit(row: &Row, step: Shortening, available: usize) -> (String, String) {
    // A row with room shows more of its class than the column's cut, the widest that fits
    // (issue 70: `Rack.MockRes….body` beside 24 blank cells), and its file name whole though
    // the column cuts others' (a stem cut where nothing needs it reads worse than two forms of
    // one file name); the file name gives way first when that buys its class a readable
    // `READABLE_QUALIFIER` cells (`T….AddParameter` does not tell which class it is).
    let fitting = |qualifier: Option<usize>, stem: Option<usize>| {
        let name = Shortening { qualifier, ..step }.shown(row);
        let location = Shortening { stem, ..step }.location(row.path, row.line);
        (width(&name) + 1 + width(&location) <= available).then_some((name, location))
    };
    let readable = step.qualifier.map(|q| q.max(READABLE_QUALIFIER));
    let tries =
        [(readable, None), (readable, step.stem), (step.qualifier, None), (step.qualifier, step.stem)];
    let mut forms =
        tries.into_iter().flat_map(|(least, stem)| wider_cuts(row, step, least).map(move |q| (q, stem)));
    if let Some(shown) = forms.find_map(|(qualifier, stem)| fitting(qualifier, stem)) {
        return shown;
    }
    let name = step.shown(row);
    let location = step.location(row.path, row.line);
    let method = row.name.rsplit('.').next().unwrap_or(row.name);
    // A qualified name keeps `….` (as its language writes it, `…#`) where its class was.
    let marker = if step.name(row.name).contains('.') {
        row.spelling.write("….").into_owned()
    } else {
        String::new()
    };
    let marker = marker.as_str();
    let bare = format!("{marker}{method}");
    let least = Shortening { dirs: Dirs::Dropped, qualifier: Some(MIN_QUALIFIER), ..step };
    // The name whole (at the column's step, its class cut further, its class as `…`), else
    // `….` and the method from its middle in at least `keep` cells.
    let squeeze = |room: usize, keep: usize| {
        let whole = [name.clone(), least.shown(row), bare.clone()];
        let whole = whole.into_iter().find(|n| width(n) <= room);
        let cut = room.checked_sub(width(marker)).filter(|&r| r >= keep);
        whole.or_else(|| cut.map(|r| format!("{marker}{}", truncate_middle(method, r))))
    };
    let whole = width(method);
    let floor = whole.min(NAME_FLOOR);
    let least_name = floor.min(MIN_NAME);
    let file = least.location(row.path, row.line);
    // The file name from its middle, leaving the name `keep` cells (not below `MIN_LOCATION`).
    let cut_file = |keep: usize| {
        let cells = available.saturating_sub(keep + width(marker) + 1).min(width(&file));
        (cells >= width(&file).min(MIN_LOCATION)).then(|| truncate_middle(&file, cells))
    };
    let attempts = [
        (Some(location), whole),
        (Some(file.clone()), whole),
        (cut_file(whole), whole),
        (Some(file.clone()), floor),
        (cut_file(floor), floor),
        (Some(file.clone()), least_name),
        (cut_file(least_name), least_name),
    ];
    for (location, keep) in attempts {
        let Some(location) = location else { continue };
        if let Some(name) = squeeze(available.saturating_sub(width(&location) + 1), keep) {
            return (name, location);
        }
    }
    (squeeze(available, 0).unwrap_or_default(), String::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLUEPRINT: Row = Row {
        name: "Blueprint.send_static_file",
        path: "src/flask/sansio/blueprints.py",
        line: 82,
        spelling: Spelling::DOTTED,
    };
    const FLASK: Row = Row {
        name: "Flask.send_static_file",
        path: "src/flask/app.py",
        line: 392,
        spelling: Spelling::DOTTED,
    };

    fn shown(row: &Row, step: Shortening, available: usize) -> String {
        let (name, location) = fit(row, step, available);
        format!("{name} {location}")
    }

    #[test]
    fn the_steps_shorten_directories_then_the_class_then_the_file() {
        let dirs = |dirs| Shortening { dirs, ..Shortening::NONE };
        assert_eq!(dirs(Dirs::Whole).location(BLUEPRINT.path, 82), "src/flask/sansio/blueprints.py:82");
        assert_eq!(dirs(Dirs::Initials).location(BLUEPRINT.path, 82), "s/f/s/blueprints.py:82");
        assert_eq!(dirs(Dirs::Initials).location(".github/_vendor/x.py", 1), ".g/_v/x.py:1");
        assert_eq!(dirs(Dirs::Initials).location("setup.py", 1), "setup.py:1");
        assert_eq!(dirs(Dirs::Dropped).location(BLUEPRINT.path, 82), "blueprints.py:82");
        let class = Shortening { qualifier: Some(5), ..dirs(Dirs::Dropped) };
        assert_eq!(class.name(BLUEPRINT.name), "Blue….send_static_file");
        assert_eq!(class.name(FLASK.name), "Flask.send_static_file", "a short class stays");
        // A nested class keeps the part nearest its method (issue 70: `Oute….method` cut it).
        assert_eq!(class.name("Outer.Inner.method"), "Inn….method");
        assert_eq!(Shortening { qualifier: Some(7), ..class }.name("Outer.Inner.method"), "….Inner.method");
        assert_eq!(class.name("function"), "function");
        let file = Shortening { stem: Some(6), ..class };
        assert_eq!(file.location(BLUEPRINT.path, 82), "bluep….py:82");
        assert_eq!(file.location("src/.pythonrc_startup", 3), ".pyth…:3");
    }

    #[test]
    fn the_column_takes_the_least_step_its_longest_row_needs() {
        let rows = [BLUEPRINT, FLASK];
        assert_eq!(choose(&rows, 0, 60), Shortening::NONE);
        assert_eq!(choose(&rows, 0, 49).dirs, Dirs::Initials);
        assert_eq!(choose(&rows, 0, 43), Shortening { dirs: Dirs::Dropped, ..Shortening::NONE });
        let step = choose(&rows, 0, 39);
        assert_eq!(step, Shortening { dirs: Dirs::Dropped, qualifier: Some(5), ..Shortening::NONE });
        assert_eq!(shown(&BLUEPRINT, step, 39), "Blue….send_static_file blueprints.py:82");
        assert_eq!(shown(&FLASK, step, 39), "Flask.send_static_file app.py:392");
        // At 30 no step fits the Blueprint row (its stem stops at five letters): it gives way
        // by itself, its class to `…`, its file name from the middle; the Flask row sets the step.
        let step = choose(&rows, 0, 30);
        assert_eq!(step, Shortening { dirs: Dirs::Dropped, qualifier: Some(2), ..Shortening::NONE });
        assert_eq!(shown(&BLUEPRINT, step, 30), "….send_static_file bluep…py:82");
        assert_eq!(shown(&FLASK, step, 30), "F….send_static_file app.py:392");
    }

    #[test]
    fn a_row_with_room_shows_more_of_its_class_and_its_file_name_whole_than_the_column() {
        let step = Shortening { dirs: Dirs::Dropped, qualifier: Some(2), stem: Some(6), ..Shortening::NONE };
        // Issue 70: no class is cut beside blank cells (this row read `B….send_static_file`
        // at 40, 44 and 60 alike).
        assert_eq!(shown(&BLUEPRINT, step, 44), "Blueprint.send_static_file blueprints.py:82");
        assert_eq!(shown(&BLUEPRINT, step, 40), "Bluep….send_static_file blueprints.py:82");
        // Below five letters of its class, the class takes the cells its file name gives up.
        assert_eq!(shown(&BLUEPRINT, step, 36), "Bluep….send_static_file bluep….py:82");
        assert_eq!(shown(&BLUEPRINT, step, 32), "B….send_static_file bluep….py:82");
    }

    #[test]
    fn a_row_that_fits_at_no_step_does_not_cut_the_others() {
        let test = Row {
            name: "test_blueprint_send_static_file_with_max_age",
            path: "tests/test_bp.py",
            line: 9,
            spelling: Spelling::DOTTED,
        };
        let step = choose(&[test, BLUEPRINT, FLASK], 0, 44);
        assert_eq!(step, Shortening { dirs: Dirs::Dropped, ..Shortening::NONE });
        assert_eq!(shown(&BLUEPRINT, step, 44), "Blueprint.send_static_file blueprints.py:82");
        // That function gives way by itself, from its middle, before its file name does.
        assert_eq!(shown(&test, step, 44), "test_blueprint_…le_with_max_age test_bp.py:9");
    }

    #[test]
    fn a_row_that_fits_at_no_step_cuts_its_class_then_its_method_then_its_location() {
        let name = "SecureCookieSessionInterface.get_signing_serializer";
        let row = Row { name, path: "src/flask/sessions.py", line: 322, spelling: Spelling::DOTTED };
        let step = choose(&[row], 0, 60);
        assert_eq!(shown(&row, step, 60), "SecureCookieSessionI….get_signing_serializer sessions.py:322");
        // The class goes to `…` (the row still reads as a method), the method stays whole...
        assert_eq!(shown(&row, step, 40), "….get_signing_serializer sessions.py:322");
        // ...until only its middle can give way.
        assert_eq!(shown(&row, step, 30), "….get_s…alizer sessions.py:322");
        assert_eq!(shown(&row, step, 24), "….get_signing_serializer ", "too narrow: the location goes");
        assert_eq!(shown(&row, step, 20), "….get_sign…erializer ");
    }

    /// Issue 70's Rack rows: every name under `Rack.`, methods of `MockResponse` and `Lint`.
    #[test]
    fn the_root_every_name_shares_goes_first_and_a_method_keeps_its_class() {
        let rack = [
            ("Rack.MockResponse.body", true),
            ("Rack.MockResponse", false),
            ("Rack.Lint.check", true),
            ("<module>", false),
        ];
        assert_eq!(shared_root(rack), 1, "`Rack.`");
        // Every hit in one class: the class stays on its methods; a lone name shares nothing.
        assert_eq!(shared_root([("Rack.MockResponse.body", true), ("Rack.MockResponse.cookies", true)]), 1);
        assert_eq!(shared_root([("Cart.total", true), ("Cart.add", true)]), 0);
        assert_eq!(shared_root([("Rack.MockResponse.body", true)]), 0);
        assert_eq!(shared_root([("Rack.Lint", false), ("Sinatra.Base", false)]), 0);
        let rooted = Shortening { root: 1, ..Shortening::NONE };
        assert_eq!(rooted.name("Rack.MockResponse.body"), "MockResponse.body");
        assert_eq!(rooted.name("· Rack.MockResponse.body +2"), "· MockResponse.body +2");
        assert_eq!(rooted.name("helper"), "helper");
        // The root goes before the directories do.
        let row = Row {
            name: "Rack.MockResponse.body",
            path: "lib/rack/mock_response.rb",
            line: 45,
            spelling: Spelling::DOTTED,
        };
        let step = choose(&[row], 1, 46);
        assert_eq!(step, rooted, "the root, and nothing else");
        assert_eq!(shown(&row, step, 46), "MockResponse.body lib/rack/mock_response.rb:45");
    }

    /// A nested class keeps the part nearest its method, which tells it from its siblings
    /// (`SqlMapper.GridReader` and `SqlMapper.Identity`), its outer parts elided.
    #[test]
    fn a_nested_class_is_cut_from_its_outer_parts() {
        let cut = |cells| Shortening { qualifier: Some(cells), ..Shortening::NONE };
        let name = "Dapper.SqlMapper.GridReader.Read";
        assert_eq!(cut(30).name(name), name);
        assert_eq!(cut(22).name(name), "….SqlMapper.GridReader.Read");
        assert_eq!(cut(12).name(name), "….GridReader.Read");
        assert_eq!(cut(8).name(name), "GridRea….Read");
        assert_eq!(cut(2).name(name), "G….Read");
        // A part that would fit whole after the others went is marked cut all the same.
        assert_eq!(cut(5).name("Outer.Inner.method"), "Inn….method");
    }

    /// Issue 81: a name is cut as the rule says and shown as its language writes it; the cells
    /// counted are the written name's (`::` is one wider than `.`), so the row still fits.
    #[test]
    fn a_name_is_written_as_its_language_writes_it_in_the_cells_it_has() {
        let spelling = Spelling { path: "::", member: "#" };
        let row =
            Row { name: "Rack.MockResponse.body", path: "lib/rack/mock_response.rb", line: 45, spelling };
        assert_eq!(shown(&row, Shortening::NONE, 60), "Rack::MockResponse#body lib/rack/mock_response.rb:45");
        let step = choose(&[row], 0, 40);
        assert_eq!(shown(&row, step, 40), "…::MockResponse#body mock_response.rb:45");
        let step = choose(&[row], 0, 24);
        assert_eq!(shown(&row, step, 24), "M…#body mock_resp….rb:45");
        assert_eq!(shown(&row, step, 12), "M…#body ", "too narrow: the location goes");
    }
}
