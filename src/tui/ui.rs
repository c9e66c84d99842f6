//! The whole screen, as a pure function of the app's state.

use crate::tui::app::App;
use crate::tui::components::{editor, help, neighbours, preview, results, status};
use crate::tui::layout::Areas;
use ratatui::Frame;

pub fn render(app: &App, frame: &mut Frame) {
    let area = frame.area();
    frame.buffer_mut().set_style(area, app.theme.style("background"));
    let areas = Areas::compute(area, app);
    editor::render(app, frame, areas.editor);
    for index in 0..2 {
        results::render(app, frame, areas.columns, index);
    }
    preview::render(app, frame, areas.preview);
    neighbours::render(app, frame, areas.neighbours);
    if let Some(gauge) = areas.gauge {
        status::render_gauge(app, frame, gauge);
    }
    status::render_status(app, frame, areas.status);
    if app.help.is_some() {
        help::render(app, frame, area);
    }
}
