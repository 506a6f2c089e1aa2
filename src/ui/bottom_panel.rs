//! The bottom panel: the tools that work on tags and propose lanes for the timeline, one tab each.
//! Each tool keeps its own state in its own module; this file only switches between them.

use egui::Ui;

/// The tools of the bottom panel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BottomTab {
    /// Queries over the tags (`crate::ui::query`).
    #[default]
    Query,
    /// Automatic tagging (`crate::ui::autotag`).
    Autotag,
    /// Find similar: tag by example (`crate::ui::similar`).
    Similar,
}

impl BottomTab {
    /// Every tab, in the order of the tab bar, with its label and tooltip.
    pub const ALL: &'static [(BottomTab, &'static str, &'static str)] = &[
        (
            BottomTab::Query,
            "Query",
            "Query the tags: union, intersection, difference and filters, by two engines",
        ),
        (
            BottomTab::Autotag,
            "Auto-tag",
            "Propose foot contacts, locomotion states, turns and custom rules from the motion",
        ),
        (
            BottomTab::Similar,
            "Similar",
            "Tag by example: find the moments most like a selected range in every clip, accept them as a tag",
        ),
    ];
}

/// The tab bar.
pub fn tab_bar(ui: &mut Ui, tab: &mut BottomTab) {
    ui.horizontal(|ui| {
        for (t, label, tip) in BottomTab::ALL {
            if ui
                .selectable_label(*tab == *t, egui::RichText::new(*label).strong())
                .on_hover_text(*tip)
                .clicked()
            {
                *tab = *t;
            }
        }
    });
}
