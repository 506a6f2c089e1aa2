//! Drawing the auto-tag panel: the header (proposals, settings, scope and Apply), the generators
//! with their parameters, the rules editor and the apply options; the plot is in `plot.rs`.

use egui::{RichText, Ui};

use super::model::{self, JOINTS, PARAMS, Scope, example_rules, rules_text, with_param};
use super::{AutotagPanel, Tab};
use crate::core::autotag::ApplyMode;
use crate::core::tags::{ClipId, TagDocument};
use crate::ui::command::AppCommand;
use crate::ui::theme;
use crate::ui::view::ClipContext;

/// Draws the panel.
pub fn autotag_ui(
    ui: &mut Ui,
    panel: &mut AutotagPanel,
    input: &ClipContext<'_>,
    queue: &mut Vec<AppCommand>,
) {
    let doc = &input.project.doc;
    header_ui(ui, panel, input, queue);
    ui.separator();
    let height = ui.available_height();
    let left_width = (ui.available_width() * 0.42).clamp(300.0, 460.0);
    ui.horizontal_top(|ui| {
        ui.allocate_ui_with_layout(
            egui::vec2(left_width, height),
            egui::Layout::top_down(egui::Align::Min),
            |ui| {
                ui.set_min_size(egui::vec2(left_width, height));
                ui.horizontal(|ui| {
                    ui.selectable_value(&mut panel.tab, Tab::Generators, "Generators");
                    ui.selectable_value(&mut panel.tab, Tab::Rules, "Rules (JSON)");
                    ui.selectable_value(&mut panel.tab, Tab::Apply, "Apply options");
                });
                egui::ScrollArea::vertical()
                    .id_salt("autotag_left")
                    .auto_shrink([false, false])
                    .show(ui, |ui| match panel.tab {
                        Tab::Generators => generators_ui(ui, panel),
                        Tab::Rules => rules_ui(ui, panel),
                        Tab::Apply => apply_options_ui(ui, panel, doc, input.clip),
                    });
            },
        );
        ui.separator();
        ui.vertical(|ui| super::plot::plot_ui(ui, panel, input, queue));
    });
    panel.refresh();
}

/// The top row: what is proposed, the settings' state, the scope and Apply (or the job's progress).
fn header_ui(
    ui: &mut Ui,
    panel: &mut AutotagPanel,
    input: &ClipContext<'_>,
    queue: &mut Vec<AppCommand>,
) {
    let doc = &input.project.doc;
    let pal = theme::palette(input.dark);
    // Two rows of fixed height, so nothing below moves while a threshold is dragged or after an
    // apply: what is proposed and the settings' state; then the scope, Apply and its message.
    ui.horizontal(|ui| {
        match (panel.output_for(input.clip), panel.output_error()) {
            (Some(out), _) => {
                let n = out
                    .proposals
                    .iter()
                    .filter(|p| !p.ranges.is_empty())
                    .count();
                ui.label(format!("proposed: {n} of {} tags", out.proposals.len()))
                    .on_hover_text(
                        "Tags with ranges proposed on this clip: the ghost lanes under the tag \
                         lanes (hover one for details)",
                    );
                if !out.warnings.is_empty() {
                    ui.colored_label(pal.warning, format!("{} warning(s)", out.warnings.len()))
                        .on_hover_text(out.warnings.join("\n"));
                }
            }
            (None, Some(e)) => {
                // Cut to the row (a long line would widen the panel over its neighbours); the
                // whole message on hover and, wrapped, where the signal would be.
                ui.add(egui::Label::new(egui::RichText::new(e).color(pal.error)).truncate())
                    .on_hover_text(e);
            }
            (None, None) => {
                ui.weak("preparing the clip...");
            }
        }
        ui.separator();
        let saved = doc.autotag.clone().unwrap_or_default();
        if panel.valid == saved && panel.error.is_none() && panel.rules_error.is_none() {
            ui.weak("settings saved")
                .on_hover_text("The panel's settings are the ones saved in the project");
        } else {
            ui.colored_label(pal.warning, "settings changed")
                .on_hover_text("Saved in the project with the next apply, or now with Save");
            if ui
                .add_enabled(
                    panel.error.is_none() && panel.rules_error.is_none(),
                    egui::Button::new("Save"),
                )
                .on_hover_text("Save these settings in the project (undoable)")
                .clicked()
            {
                queue.push(AppCommand::Edit {
                    edit: panel.save_settings_edit(),
                    label: "auto-tag settings".to_owned(),
                    select: None,
                });
            }
            if ui
                .button("Revert")
                .on_hover_text("Back to the project's settings")
                .clicked()
            {
                panel.load_settings(saved);
            }
        }
        if ui
            .button("Defaults")
            .on_hover_text("Every generator parameter back to its default (rules are kept)")
            .clicked()
        {
            panel.settings.params = Default::default();
            panel.revalidate();
        }
    });
    ui.horizontal(|ui| {
        ui.label("Apply to:");
        let clips = doc.clips.len();
        ui.selectable_value(&mut panel.scope, Scope::Current, "This clip");
        ui.selectable_value(
            &mut panel.scope,
            Scope::Checked,
            format!("Checked clips ({})", panel.checked.len()),
        )
        .on_hover_text("Check clips in Apply options");
        ui.selectable_value(&mut panel.scope, Scope::All, format!("All clips ({clips})"));
        let problem = if panel.job.is_some() {
            Some("an apply is running".to_owned())
        } else if let Some(e) = &panel.error {
            Some(format!("invalid parameter {e}"))
        } else if let Some(e) = &panel.rules_error {
            // Applying the last rules that read would drop the edit being made to them.
            Some(format!("the rules do not read: {e}"))
        } else if panel.enabled_tags().is_empty() {
            Some("no generator chosen".to_owned())
        } else {
            None
        };
        let button = ui
            .add_enabled(
                problem.is_none(),
                egui::Button::new(RichText::new("Apply").strong()),
            )
            .on_hover_text(
                "Add the proposals to the project as one undoable step; tags in Replace mode \
                 ask before removing existing frames",
            );
        let button = match &problem {
            Some(p) => button.on_disabled_hover_text(p),
            None => button,
        };
        if button.clicked() {
            panel.start_apply(input, queue);
        }
    });
    // On its own lines, wrapped: what an apply did (the tags it created, those it did not) is
    // read whole, not cut at the panel's edge.
    if panel.job.is_none()
        && let Some(s) = &panel.status
    {
        ui.add(egui::Label::new(RichText::new(s).weak()).wrap());
    }
    if let Some(j) = &panel.job {
        crate::ui::jobs::progress_ui(ui, &j.job, "clips");
    }
}

/// Generators, their tags and parameters.
fn generators_ui(ui: &mut Ui, panel: &mut AutotagPanel) {
    let mut changed = false;
    let found = panel.found_joints();
    for g in model::Generator::ALL {
        ui.add_space(4.0);
        let tags = g.tags();
        let mut on = tags.iter().any(|t| !panel.disabled.contains(*t));
        ui.horizontal(|ui| {
            if ui
                .checkbox(&mut on, RichText::new(g.label()).strong())
                .on_hover_text(g.help())
                .changed()
            {
                for t in tags {
                    if on {
                        panel.disabled.remove(*t);
                    } else {
                        panel.disabled.insert((*t).to_owned());
                    }
                }
            }
        });
        ui.horizontal_wrapped(|ui| {
            ui.add_space(18.0);
            for t in tags {
                let mut tag_on = !panel.disabled.contains(*t);
                if ui.checkbox(&mut tag_on, *t).changed() {
                    if tag_on {
                        panel.disabled.remove(*t);
                    } else {
                        panel.disabled.insert((*t).to_owned());
                    }
                }
            }
        });
        egui::Grid::new(("autotag_params", g.group()))
            .num_columns(2)
            .spacing([8.0, 2.0])
            .show(ui, |ui| {
                for spec in PARAMS.iter().filter(|p| p.generator == g) {
                    let path = format!("params.{}.{}", g.group(), spec.key);
                    let bad = panel.error.as_ref().is_some_and(|e| e.path == path);
                    let text = RichText::new(spec.label);
                    let text = if bad {
                        text.color(ui.visuals().error_fg_color)
                    } else {
                        text
                    };
                    let label = ui
                        .label(text)
                        .on_hover_text(format!("{}\n{path}", spec.help));
                    let mut v = f64::from((spec.get)(&panel.settings.params));
                    let suffix = if spec.unit.is_empty() {
                        String::new()
                    } else {
                        format!(" {}", spec.unit)
                    };
                    let r = ui
                        .add(
                            egui::DragValue::new(&mut v)
                                .speed(spec.speed)
                                .range(spec.min..=spec.max)
                                .max_decimals(spec.decimals)
                                .suffix(suffix),
                        )
                        .labelled_by(label.id);
                    if r.changed() {
                        let (next, error) = with_param(&panel.settings, spec, v as f32);
                        panel.settings = next;
                        panel.error = error;
                        if panel.error.is_none() {
                            panel.valid = panel.settings.clone();
                        }
                    }
                    ui.end_row();
                    // Why the value is refused, under its field.
                    if let Some(e) = panel.error.as_ref().filter(|e| e.path == path) {
                        ui.label("");
                        ui.colored_label(ui.visuals().error_fg_color, &e.message)
                            .on_hover_text(e.to_string());
                        ui.end_row();
                    }
                }
                for spec in JOINTS.iter().filter(|j| j.generator == g) {
                    let path = format!("params.{}.{}", g.group(), spec.key);
                    let label = ui
                        .label(spec.label)
                        .on_hover_text(format!("{}\n{path}", spec.help));
                    let current = (spec.get)(&panel.settings.params).clone();
                    let auto = match found.get(spec.key) {
                        Some(Some(n)) => format!("automatic ({n})"),
                        _ => "automatic".to_owned(),
                    };
                    let shown = current.clone().unwrap_or_else(|| auto.clone());
                    let names = panel
                        .live
                        .as_ref()
                        .map(|l| l.names.clone())
                        .unwrap_or_default();
                    let mut next = current.clone();
                    egui::ComboBox::from_id_salt(("autotag_joint", spec.key))
                        .selected_text(shown)
                        .height(300.0)
                        .show_ui(ui, |ui| {
                            ui.selectable_value(&mut next, None, auto);
                            for n in names {
                                ui.selectable_value(&mut next, Some(n.clone()), n);
                            }
                        })
                        .response
                        .labelled_by(label.id);
                    if next != current {
                        (spec.set)(&mut panel.settings.params, next);
                        changed = true;
                    }
                    ui.end_row();
                }
            });
    }
    // Rules: one checkbox per rule tag.
    ui.add_space(4.0);
    ui.label(RichText::new("Rules").strong())
        .on_hover_text("Custom rules, edited in the Rules (JSON) tab");
    if panel.valid.rules.is_empty() {
        ui.weak("  none: write some in the Rules (JSON) tab");
    }
    let skipped: Vec<String> = panel
        .live
        .as_ref()
        .and_then(|l| l.output.as_ref().ok())
        .map(|o| o.warnings.clone())
        .unwrap_or_default();
    for r in &panel.valid.rules {
        let mut on = !panel.disabled.contains(&r.tag);
        ui.horizontal(|ui| {
            ui.add_space(18.0);
            if ui.checkbox(&mut on, &r.tag).changed() {
                if on {
                    panel.disabled.remove(&r.tag);
                } else {
                    panel.disabled.insert(r.tag.clone());
                }
            }
            if let Some(w) = skipped.iter().find(|w| w.contains(&format!("`{}`", r.tag))) {
                ui.colored_label(ui.visuals().warn_fg_color, "skipped on this clip")
                    .on_hover_text(w);
            }
        });
    }
    // An error no field shows.
    if let Some(e) = panel.error.as_ref().filter(|e| {
        !PARAMS
            .iter()
            .any(|p| e.path == format!("params.{}.{}", p.generator.group(), p.key))
    }) {
        ui.colored_label(ui.visuals().error_fg_color, e.to_string());
    }
    if changed {
        panel.revalidate();
    }
}

/// The rules editor: a settings file without parameters; JSON path errors under it.
fn rules_ui(ui: &mut Ui, panel: &mut AutotagPanel) {
    ui.horizontal(|ui| {
        if ui
            .button("Insert example")
            .on_hover_text("Add a rule tagging pose:HandsUp while both hands are above the head")
            .clicked()
        {
            let mut rules = panel.valid.rules.clone();
            for r in example_rules() {
                if !rules.iter().any(|x| x.tag == r.tag) {
                    rules.push(r);
                }
            }
            panel.rules_text = rules_text(&rules);
            panel.apply_rules_text();
        }
        if ui
            .add_enabled(panel.rules_error.is_none(), egui::Button::new("Format"))
            .on_hover_text("Rewrite the text from the rules it holds")
            .clicked()
        {
            panel.rules_text = rules_text(&panel.valid.rules);
        }
        ui.weak("docs/AUTOTAG.md: rule format");
    });
    let label = ui.label("Rules (JSON)");
    let r = ui
        .add(
            egui::TextEdit::multiline(&mut panel.rules_text)
                .code_editor()
                .desired_rows(10)
                .desired_width(f32::INFINITY),
        )
        .labelled_by(label.id);
    if r.changed() {
        panel.apply_rules_text();
    }
    // A whole settings file pasted in: its parameters can go to the fields.
    if panel
        .rules_error
        .as_ref()
        .is_some_and(|e| e.path == "params")
        && ui
            .button("Take parameters")
            .on_hover_text("Move the text's `params` into the fields and keep its rules here")
            .clicked()
    {
        match crate::core::autotag::parse_settings(&panel.rules_text) {
            Ok(s) => {
                panel.rules_text = rules_text(&s.rules);
                panel.rules_error = None;
                panel.settings = s;
                panel.revalidate();
            }
            Err(e) => panel.rules_error = Some(e),
        }
    }
    match &panel.rules_error {
        Some(e) => {
            ui.colored_label(
                ui.visuals().error_fg_color,
                format!("{}: {}", e.path, e.message),
            );
            ui.weak("the rules in use are the last ones that read");
        }
        None => {
            ui.weak(format!("{} rule(s)", panel.valid.rules.len()));
        }
    }
}

/// Per-tag replace or merge, and the clips of "Checked clips".
fn apply_options_ui(ui: &mut Ui, panel: &mut AutotagPanel, doc: &TagDocument, clip: ClipId) {
    ui.label(RichText::new("Tags that already have ranges").strong())
        .on_hover_text(
            "Merge adds the proposals to the existing ranges and never removes a frame. Replace \
             makes the tag's ranges on each applied clip exactly the proposal; if that removes \
             existing frames you are asked first.",
        );
    egui::Grid::new("autotag_modes")
        .num_columns(3)
        .spacing([8.0, 2.0])
        .show(ui, |ui| {
            for tag in panel.enabled_tags() {
                ui.label(&tag);
                let existing = doc.tag_index(&tag).map(|t| {
                    let lists = &doc.tags[t].ranges;
                    (lists.range_count(), lists.len())
                });
                match existing {
                    None => {
                        ui.weak("new tag");
                    }
                    Some((n, clips)) => {
                        ui.weak(format!("{n} range(s) on {clips} clip(s)"));
                    }
                }
                let mut mode = panel.modes.get(&tag).copied().unwrap_or_default();
                ui.horizontal(|ui| {
                    ui.selectable_value(&mut mode, ApplyMode::Merge, "Merge")
                        .on_hover_text(format!("{tag}: keep existing ranges, add the proposals"));
                    ui.selectable_value(&mut mode, ApplyMode::Replace, "Replace")
                        .on_hover_text(format!(
                            "{tag}: the ranges become the proposals (asks before removing frames)"
                        ));
                });
                if mode == ApplyMode::Merge {
                    panel.modes.remove(&tag);
                } else {
                    panel.modes.insert(tag.clone(), mode);
                }
                ui.end_row();
            }
        });
    ui.add_space(6.0);
    ui.horizontal(|ui| {
        ui.label(RichText::new("Checked clips").strong());
        if ui.small_button("all").clicked() {
            panel.checked = (0..doc.clips.len() as ClipId).collect();
        }
        if ui.small_button("none").clicked() {
            panel.checked.clear();
        }
        if ui.small_button("this clip").clicked() {
            panel.checked.insert(clip);
        }
    });
    for (i, c) in doc.clips.iter().enumerate() {
        let id = i as ClipId;
        let mut on = panel.checked.contains(&id);
        let text = if id == clip {
            RichText::new(format!("{} (on screen)", c.name)).strong()
        } else {
            RichText::new(&c.name)
        };
        if ui.checkbox(&mut on, text).changed() {
            if on {
                panel.checked.insert(id);
            } else {
                panel.checked.remove(&id);
            }
            panel.scope = Scope::Checked;
        }
    }
}
