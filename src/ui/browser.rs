//! The clip browser: search, and one row per clip with its frame count, rate, duration and number
//! of tags. Only the visible rows are laid out, so 10,000 clips scroll smoothly.

use egui::Ui;

use crate::core::tags::{ClipId, TagDocument};
use crate::ui::command::AppCommand;

/// Browser state: the search text and the cached list of matching clips.
#[derive(Debug, Clone, Default)]
pub struct BrowserState {
    pub search: String,
    cache_key: Option<(String, usize, usize)>,
    matches: Vec<ClipId>,
}

impl BrowserState {
    /// Clip ids whose name contains the search text (case-insensitive), recomputed only when the
    /// search text or the clip list changes.
    pub fn matches(&mut self, doc: &TagDocument) -> &[ClipId] {
        let names_hash = doc.clips.iter().map(|c| c.name.len()).sum::<usize>();
        let key = (self.search.clone(), doc.clips.len(), names_hash);
        if self.cache_key.as_ref() != Some(&key) {
            let needle = self.search.to_lowercase();
            self.matches = doc
                .clips
                .iter()
                .enumerate()
                .filter(|(_, c)| needle.is_empty() || c.name.to_lowercase().contains(&needle))
                .map(|(i, _)| i as ClipId)
                .collect();
            self.cache_key = Some(key);
        }
        &self.matches
    }
}

pub fn browser_ui(
    ui: &mut Ui,
    doc: &TagDocument,
    current: ClipId,
    state: &mut BrowserState,
    out: &mut Vec<AppCommand>,
) {
    ui.heading("Clips");
    ui.horizontal(|ui| {
        let label = ui.label("Search");
        ui.add(
            egui::TextEdit::singleline(&mut state.search)
                .hint_text("clip name")
                .desired_width(f32::INFINITY),
        )
        .labelled_by(label.id);
    });
    let total = doc.clips.len();
    let matches = state.matches(doc).to_vec();
    ui.weak(format!("{} of {total} clips", matches.len()));
    ui.separator();
    let row_height = ui.text_style_height(&egui::TextStyle::Body) * 2.0 + 8.0;
    egui::ScrollArea::vertical().auto_shrink(false).show_rows(
        ui,
        row_height,
        matches.len(),
        |ui, rows| {
            for &c in &matches[rows] {
                let clip = &doc.clips[c as usize];
                let tags = doc
                    .tags
                    .iter()
                    .filter(|t| t.ranges.contains_key(&c))
                    .count();
                let duration = if clip.frames > 1 {
                    (clip.frames - 1) as f32 / clip.fps
                } else {
                    0.0
                };
                let text = format!(
                    "{}\n{} f · {:.0} fps · {:.2} s · {} tags",
                    clip.name, clip.frames, clip.fps, duration, tags
                );
                let resp = ui.add_sized(
                    [ui.available_width(), row_height - 4.0],
                    egui::Button::selectable(c == current, text),
                );
                let resp = match &clip.source {
                    Some(s) => resp.on_hover_text(format!("source: {s}")),
                    None => resp,
                };
                if resp.clicked() {
                    out.push(AppCommand::SelectClip(c));
                }
                resp.context_menu(|ui| {
                    if ui.button("Re-link source file…").clicked() {
                        out.push(AppCommand::Relink {
                            clip: c,
                            path: None,
                        });
                    }
                });
            }
        },
    );
}
