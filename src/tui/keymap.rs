//! Terminal events → [`Action`]s, depending on the focused pane. [`BINDINGS`] documents every
//! key; the help overlay is generated from it and `KEYS.md` is tested to list the same keys.

use crate::tui::action::{Action, EditOp, MouseInput, Pane};
use crate::tui::app::App;
use ratatui::crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEventKind,
};

/// One documented binding: help section, keys, what they do.
pub struct Binding {
    pub section: &'static str,
    pub keys: &'static str,
    pub action: &'static str,
}

const fn b(section: &'static str, keys: &'static str, action: &'static str) -> Binding {
    Binding { section, keys, action }
}

pub const BINDINGS: &[Binding] = &[
    b("Anywhere", "Ctrl-S  F5", "run the search"),
    b("Anywhere", "Tab  Shift-Tab", "next / previous result pane (not the editor)"),
    b("Anywhere", "F1", "this help (? outside the editor)"),
    b("Anywhere", "F6", "right column: dense, hybrid, history (also t)"),
    b("Anywhere", "Ctrl-L", "clear the issue"),
    b("Anywhere", "Ctrl-P  Ctrl-N", "previous / next query of this repository"),
    b("Anywhere", "Alt-Left", "back after a call-graph jump"),
    b("Anywhere", "Ctrl-C  Ctrl-Q", "quit (q outside the editor)"),
    b("Issue editor", "type, paste", "multi-line issue text; pasting code is fine"),
    b("Issue editor", "Enter", "new line"),
    b("Issue editor", "arrows  Home  End", "move the cursor (Ctrl-A/E: line start/end)"),
    b("Issue editor", "Ctrl-Left  Ctrl-Right", "word left / right (also Alt-B / Alt-F)"),
    b("Issue editor", "Ctrl-Home  Ctrl-End", "start / end of the issue"),
    b("Issue editor", "Ctrl-W  Alt-Backspace", "delete the word before the cursor"),
    b("Issue editor", "Ctrl-U  Ctrl-K", "delete to line start / line end"),
    b("Issue editor", "Ctrl-D  Delete", "delete the character under the cursor"),
    b("Issue editor", "Esc", "go to the results"),
    b("Results", "j k  Down Up", "move the selection"),
    b("Results", "PgDn PgUp  Space", "move by a page"),
    b("Results", "g G  Home End", "first / last hit"),
    b("Results", "h l  Left Right  1 2", "BM25 column / right column"),
    b("Results", "Enter  o  e", "open in $EDITOR at the chunk's line"),
    b("Results", "y", "send path:line to the clipboard (OSC 52)"),
    b("Results", "t", "right column: dense, hybrid, history"),
    b("Results", "T", "hide / show hits in test files"),
    b("Results", "x", "show / hide a file's other hits (+N)"),
    b("Results", "f", "one row per file, or chunk by chunk"),
    b("Results", "Ctrl-D  Ctrl-U", "scroll the preview half a page"),
    b("Results", "p  n", "go to the preview / the call graph"),
    b("Results", "i  /", "edit the issue (or click it; Tab never does)"),
    b("Results", "?  q", "help / quit"),
    b("Preview", "j k  Down Up", "scroll a line"),
    b("Preview", "PgDn PgUp  Space", "scroll a page"),
    b("Preview", "g G", "top / bottom of the file"),
    b("Preview", "h l  Left Right", "scroll long lines sideways"),
    b("Preview", "Enter  o  e  y", "open in $EDITOR / copy path:line"),
    b("Preview", "Esc", "back to the result list"),
    b("Call graph", "j k  Down Up", "select a caller or callee"),
    b("Call graph", "Enter  l  Right", "jump to it (the preview follows)"),
    b("Call graph", "Backspace  b  h  Left  Ctrl-O", "go back"),
    b("Call graph", "o  e  y", "open / copy the selected neighbour"),
    b("Call graph", "Esc", "back to the result list"),
    b("Mouse", "wheel", "scroll the list or preview under the pointer"),
    b("Mouse", "click", "select; a 2nd click on a neighbour jumps"),
    b("Mouse", "Shift-drag", "select text (the terminal's own selection)"),
    b("Help", "j k  PgDn PgUp", "scroll this help"),
    b("Help", "Esc  q  ?  F1", "close this help"),
];

/// The action for a terminal event, if any.
pub fn map_event(app: &App, event: Event) -> Option<Action> {
    match event {
        Event::Key(key) if key.kind != KeyEventKind::Release => map_key(app, key),
        Event::Paste(text) => Some(Action::Paste(text)),
        Event::Resize(w, h) => Some(Action::Resize(w, h)),
        Event::Mouse(m) => {
            let (x, y) = (m.column, m.row);
            match m.kind {
                MouseEventKind::Down(MouseButton::Left) => Some(Action::Mouse(MouseInput::Click { x, y })),
                MouseEventKind::ScrollUp => Some(Action::Mouse(MouseInput::ScrollUp { x, y })),
                MouseEventKind::ScrollDown => Some(Action::Mouse(MouseInput::ScrollDown { x, y })),
                _ => None,
            }
        }
        _ => None,
    }
}

fn map_key(app: &App, key: KeyEvent) -> Option<Action> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    // Keys that work everywhere, the help overlay included.
    match key.code {
        KeyCode::Char('c' | 'q') if ctrl => return Some(Action::Quit),
        KeyCode::F(1) => return Some(Action::ToggleHelp),
        _ => {}
    }
    if app.help.is_some() {
        return map_help_key(key);
    }
    let global = match key.code {
        KeyCode::Char('s') if ctrl => Some(Action::RunSearch),
        KeyCode::F(5) => Some(Action::RunSearch),
        KeyCode::F(6) => Some(Action::ToggleHybrid),
        KeyCode::Tab => Some(Action::FocusNext),
        KeyCode::BackTab => Some(Action::FocusPrev),
        KeyCode::Char('l') if ctrl => Some(Action::ClearQuery),
        KeyCode::Char('p') if ctrl => Some(Action::HistoryPrev),
        KeyCode::Char('n') if ctrl => Some(Action::HistoryNext),
        KeyCode::Left if alt => Some(Action::Back),
        _ => None,
    };
    if global.is_some() {
        return global;
    }
    match app.focus {
        Pane::Editor => map_editor_key(app, key, ctrl, alt),
        // Esc steps back towards the results, never into the editor: keys typed after a
        // reflexive Esc must not land in the issue (it is entered with `i`, `/` or a click).
        Pane::Preview | Pane::Neighbours if key.code == KeyCode::Esc => {
            Some(Action::Focus([Pane::Left, Pane::Right][app.active_column]))
        }
        pane => map_pane_key(pane, key, ctrl),
    }
}

fn map_help_key(key: KeyEvent) -> Option<Action> {
    match key.code {
        KeyCode::Esc | KeyCode::Char('q' | '?') | KeyCode::Enter => Some(Action::ToggleHelp),
        KeyCode::Char('j') | KeyCode::Down => Some(Action::Move(1)),
        KeyCode::Char('k') | KeyCode::Up => Some(Action::Move(-1)),
        KeyCode::PageDown | KeyCode::Char(' ') => Some(Action::Page(1)),
        KeyCode::PageUp => Some(Action::Page(-1)),
        KeyCode::Char('g') | KeyCode::Home => Some(Action::Top),
        KeyCode::Char('G') | KeyCode::End => Some(Action::Bottom),
        _ => None,
    }
}

fn map_editor_key(app: &App, key: KeyEvent, ctrl: bool, alt: bool) -> Option<Action> {
    let op = match key.code {
        KeyCode::Esc => return Some(Action::Focus([Pane::Left, Pane::Right][app.active_column])),
        KeyCode::Enter => EditOp::Newline,
        KeyCode::Backspace if alt || ctrl => EditOp::DeleteWordBack,
        KeyCode::Backspace => EditOp::Backspace,
        KeyCode::Delete => EditOp::Delete,
        KeyCode::Left if ctrl => EditOp::WordLeft,
        KeyCode::Right if ctrl => EditOp::WordRight,
        KeyCode::Left => EditOp::Left,
        KeyCode::Right => EditOp::Right,
        KeyCode::Up => EditOp::Up,
        KeyCode::Down => EditOp::Down,
        KeyCode::Home if ctrl => EditOp::DocStart,
        KeyCode::End if ctrl => EditOp::DocEnd,
        KeyCode::Home => EditOp::LineStart,
        KeyCode::End => EditOp::LineEnd,
        KeyCode::Char(c) if ctrl => match c {
            'a' => EditOp::LineStart,
            'e' => EditOp::LineEnd,
            'u' => EditOp::KillToLineStart,
            'k' => EditOp::KillToLineEnd,
            'w' => EditOp::DeleteWordBack,
            'd' => EditOp::Delete,
            'h' => EditOp::Backspace,
            _ => return None,
        },
        KeyCode::Char(c) if alt => match c {
            'b' => EditOp::WordLeft,
            'f' => EditOp::WordRight,
            // Esc then a key within the terminal's escape time (tmux) arrives as Alt-key:
            // it means "leave the editor, then the key", never a character in the issue.
            _ => {
                let pane = [Pane::Left, Pane::Right][app.active_column];
                let key = KeyEvent::new(key.code, key.modifiers - KeyModifiers::ALT);
                let then = map_pane_key(pane, key, false);
                return Some(Action::Sequence(std::iter::once(Action::Focus(pane)).chain(then).collect()));
            }
        },
        KeyCode::Char(c) => return Some(Action::Insert(c)),
        _ => return None,
    };
    Some(Action::Edit(op))
}

fn map_pane_key(pane: Pane, key: KeyEvent, ctrl: bool) -> Option<Action> {
    if ctrl {
        return match key.code {
            KeyCode::Char('d') => Some(Action::PreviewHalfPage(1)),
            KeyCode::Char('u') => Some(Action::PreviewHalfPage(-1)),
            KeyCode::Char('o') => Some(Action::Back),
            _ => None,
        };
    }
    let results = pane.column().is_some();
    let graph = pane == Pane::Neighbours;
    let action = match key.code {
        KeyCode::Char('q') => Action::Quit,
        KeyCode::Char('?') => Action::ToggleHelp,
        KeyCode::Char('i' | '/') => Action::Focus(Pane::Editor),
        KeyCode::Char('j') | KeyCode::Down => Action::Move(1),
        KeyCode::Char('k') | KeyCode::Up => Action::Move(-1),
        KeyCode::PageDown | KeyCode::Char(' ') => Action::Page(1),
        KeyCode::PageUp => Action::Page(-1),
        KeyCode::Char('g') | KeyCode::Home => Action::Top,
        KeyCode::Char('G') | KeyCode::End => Action::Bottom,
        KeyCode::Char('h') | KeyCode::Left if results => Action::Focus(Pane::Left),
        KeyCode::Char('l') | KeyCode::Right if results => Action::Focus(Pane::Right),
        KeyCode::Char('1') => Action::Focus(Pane::Left),
        KeyCode::Char('2') => Action::Focus(Pane::Right),
        KeyCode::Enter | KeyCode::Char('l') | KeyCode::Right if graph => Action::Jump,
        KeyCode::Char('h') | KeyCode::Left if graph => Action::Back,
        KeyCode::Enter | KeyCode::Char('o' | 'e') => Action::OpenInEditor,
        KeyCode::Char('y') => Action::CopyLocation,
        KeyCode::Char('t') => Action::ToggleHybrid,
        KeyCode::Char('T') if results => Action::ToggleTests,
        KeyCode::Char('x') if results => Action::ToggleExpand,
        KeyCode::Char('f') if results => Action::ToggleOrder,
        KeyCode::Backspace | KeyCode::Char('b') => Action::Back,
        KeyCode::Char('p') => Action::Focus(Pane::Preview),
        KeyCode::Char('h') | KeyCode::Left if pane == Pane::Preview => Action::ScrollSideways(-8),
        KeyCode::Char('l') | KeyCode::Right if pane == Pane::Preview => Action::ScrollSideways(8),
        KeyCode::Char('n' | 'c') => Action::Focus(Pane::Neighbours),
        _ => return None,
    };
    Some(action)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::app::History;
    use crate::tui::{Session, Theme};

    fn app() -> App {
        App::new(Session::default(), Theme::default(), (100, 30), History::default())
    }

    fn press(app: &App, code: KeyCode, modifiers: KeyModifiers) -> Option<Action> {
        map_event(app, Event::Key(KeyEvent::new(code, modifiers)))
    }

    #[test]
    fn letters_type_in_the_editor_but_command_elsewhere() {
        let mut app = app();
        assert!(matches!(press(&app, KeyCode::Char('q'), KeyModifiers::NONE), Some(Action::Insert('q'))));
        app.update(Action::Focus(Pane::Left));
        assert!(matches!(press(&app, KeyCode::Char('q'), KeyModifiers::NONE), Some(Action::Quit)));
        assert!(matches!(press(&app, KeyCode::Char('j'), KeyModifiers::NONE), Some(Action::Move(1))));
    }

    /// Esc then `j` inside tmux's escape time arrives as Alt-j: it leaves the editor and moves
    /// the selection, and types nothing into the issue.
    #[test]
    fn esc_and_a_key_as_one_alt_key_leave_the_editor_and_act() {
        let mut app = app();
        let action = press(&app, KeyCode::Char('j'), KeyModifiers::ALT).unwrap();
        let Action::Sequence(steps) = &action else { panic!("not a sequence") };
        assert!(matches!(steps[..], [Action::Focus(Pane::Left), Action::Move(1)]));
        app.update(action);
        assert_eq!(app.focus, Pane::Left);
        assert!(app.editor.text().is_empty(), "nothing typed into the issue");
    }

    #[test]
    fn search_quit_and_help_work_from_the_editor() {
        let app = app();
        assert!(matches!(press(&app, KeyCode::Char('s'), KeyModifiers::CONTROL), Some(Action::RunSearch)));
        assert!(matches!(press(&app, KeyCode::F(5), KeyModifiers::NONE), Some(Action::RunSearch)));
        assert!(matches!(press(&app, KeyCode::Char('c'), KeyModifiers::CONTROL), Some(Action::Quit)));
        assert!(matches!(press(&app, KeyCode::F(1), KeyModifiers::NONE), Some(Action::ToggleHelp)));
    }

    #[test]
    fn enter_jumps_in_the_call_graph_and_opens_elsewhere() {
        let mut app = app();
        app.update(Action::Focus(Pane::Neighbours));
        assert!(matches!(press(&app, KeyCode::Enter, KeyModifiers::NONE), Some(Action::Jump)));
        app.update(Action::Focus(Pane::Right));
        assert!(matches!(press(&app, KeyCode::Enter, KeyModifiers::NONE), Some(Action::OpenInEditor)));
    }

    #[test]
    fn help_swallows_keys_except_quit() {
        let mut app = app();
        app.update(Action::ToggleHelp);
        assert!(press(&app, KeyCode::Char('x'), KeyModifiers::NONE).is_none());
        assert!(matches!(press(&app, KeyCode::Esc, KeyModifiers::NONE), Some(Action::ToggleHelp)));
        assert!(matches!(press(&app, KeyCode::Char('c'), KeyModifiers::CONTROL), Some(Action::Quit)));
    }

    #[test]
    fn help_rows_fit_an_80_column_terminal() {
        for binding in BINDINGS {
            assert!(
                binding.keys.len() <= 30 && binding.action.len() <= 46,
                "too long for 80 columns: {}",
                binding.action
            );
        }
    }

    #[test]
    fn keys_md_documents_every_binding() {
        let doc = include_str!("KEYS.md");
        for binding in BINDINGS {
            assert!(doc.contains(binding.keys), "KEYS.md lacks `{}`", binding.keys);
            assert!(doc.contains(binding.action), "KEYS.md lacks `{}`", binding.action);
        }
    }
}
