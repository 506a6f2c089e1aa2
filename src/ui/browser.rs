//! The clip browser: clips grouped by folder, filtered by name, tag, duration and "untagged",
//! sorted, with what is loaded shown beside each clip. Several clips can be selected (Ctrl/Shift
//! click) to set their units at once. Only the visible rows are laid out, so thousands of clips
//! scroll smoothly; the row list is rebuilt only when the filters or the document change.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use egui::Ui;

use crate::core::library::ClipStatus;
use crate::core::tags::{ClipId, TagDocument};
use crate::ui::anim_cache::AnimCache;
use crate::ui::command::AppCommand;

/// How clips are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortKey {
    /// Project order.
    #[default]
    Project,
    Name,
    Duration,
    Tags,
}

/// Which clips the tag filter keeps.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum TagFilter {
    #[default]
    Any,
    /// Clips without any range or marker.
    Untagged,
    /// Clips where this tag (by name) has a range or marker.
    Tag(String),
}

/// The browser's filters and sort.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Filters {
    pub search: String,
    pub tag: TagFilter,
    /// Duration bounds in seconds (`None`: no bound).
    pub min_s: Option<f32>,
    pub max_s: Option<f32>,
    pub sort: SortKey,
    pub descending: bool,
    pub group_by_folder: bool,
}

/// One row of the list.
#[derive(Debug, Clone, PartialEq)]
pub enum BrowserRow {
    /// A folder header: its path (the group's key, shown on hover), the shortest end of that path
    /// that tells it from the project's other folders (shown), clip count, collapsed or not.
    Folder {
        folder: String,
        label: String,
        count: usize,
        collapsed: bool,
    },
    Clip(ClipId),
}

/// What folder labels depend on: the clip list's version and length, demo or not, the project's
/// folder.
type LabelsKey = (u64, usize, bool, Option<PathBuf>);

/// Browser state.
#[derive(Debug, Clone, Default)]
pub struct BrowserState {
    pub filters: Filters,
    /// Collapsed folder groups.
    pub collapsed: BTreeSet<String>,
    /// Clips selected for group actions (units); the current clip is separate.
    pub selected: Vec<ClipId>,
    /// The last clip clicked, for Shift+click ranges.
    anchor: Option<ClipId>,
    /// The clips of [`Self::selected`] as last seen, which it follows when the clip list
    /// changes ([`crate::ui::clip_follow`]).
    selected_seen: Option<crate::ui::clip_follow::ClipsSeen>,
    cache_key: Option<(Filters, BTreeSet<String>, u64, u64, usize)>,
    /// Folder labels and the clip list they were made for.
    labels: Option<(LabelsKey, HashMap<String, String>)>,
    rows: Vec<BrowserRow>,
    matches: usize,
    /// Tags (ranges and markers) per clip, from the last rebuild.
    tag_counts: HashMap<ClipId, usize>,
}

/// The folder a clip's take is in, as shown in the browser: the source's folder relative to the
/// project (or absolute), `demo` for the embedded demo, `(no source)` without a source.
pub fn clip_folder(source: Option<&str>, base_dir: Option<&Path>) -> String {
    let Some(s) = source.filter(|s| !s.trim().is_empty()) else {
        return "(no source)".to_owned();
    };
    let p = PathBuf::from(s);
    let parent = p.parent().map(Path::to_path_buf).unwrap_or_default();
    if parent.as_os_str().is_empty() {
        return base_dir.map_or_else(|| ".".to_owned(), |_| ".".to_owned());
    }
    parent.to_string_lossy().replace('\\', "/")
}

/// The label of each folder: the fewest last components of its path that no other folder of
/// `folders` ends with, as editors name tabs of files that share a name (`/a/x/walk` and
/// `/b/y/walk` read `x/walk` and `y/walk`; `/data/day1` alone reads `day1`). A path of no
/// named component (`.`, `/`) keeps its whole text.
pub fn folder_labels<'a>(folders: impl IntoIterator<Item = &'a str>) -> HashMap<String, String> {
    let mut all: Vec<&str> = folders.into_iter().collect();
    all.sort_unstable();
    all.dedup();
    let parts: Vec<Vec<&str>> = all
        .iter()
        .map(|f| {
            f.split('/')
                .filter(|c| !c.is_empty() && *c != "." && *c != "..")
                .collect()
        })
        .collect();
    // How many folders end with each run of last components.
    let mut ends: HashMap<&[&str], usize> = HashMap::new();
    for p in &parts {
        for k in 1..=p.len() {
            *ends.entry(&p[p.len() - k..]).or_default() += 1;
        }
    }
    all.iter()
        .zip(&parts)
        .map(|(f, p)| {
            let label = (1..=p.len())
                .map(|k| &p[p.len() - k..])
                .find(|tail| ends[tail] == 1)
                .map_or_else(|| (*f).to_owned(), |tail| tail.join("/"));
            ((*f).to_owned(), label)
        })
        .collect()
}

/// The label of every folder of `doc`'s clips (see [`folder_labels`]): from every clip, not only
/// those a search matches, so a label does not change as the search narrows.
pub fn folder_label_map(
    doc: &TagDocument,
    base_dir: Option<&Path>,
    is_demo: bool,
) -> HashMap<String, String> {
    if is_demo {
        return HashMap::from([("demo".to_owned(), "demo".to_owned())]);
    }
    let folders: BTreeSet<String> = doc
        .clips
        .iter()
        .map(|c| clip_folder(c.source.as_deref(), base_dir))
        .collect();
    folder_labels(folders.iter().map(String::as_str))
}

/// Builds the rows for `doc` under `filters`: `(rows, clips matched, tag counts)`. Folder headers
/// read `labels` ([`folder_label_map`], which depends on the clips only: the browser keeps it
/// between tag edits and searches).
pub fn build_rows(
    doc: &TagDocument,
    base_dir: Option<&Path>,
    is_demo: bool,
    filters: &Filters,
    collapsed: &BTreeSet<String>,
    labels: &HashMap<String, String>,
) -> (Vec<BrowserRow>, usize, HashMap<ClipId, usize>) {
    let mut tag_counts: HashMap<ClipId, usize> = HashMap::new();
    for t in &doc.tags {
        for c in t.clips_used() {
            *tag_counts.entry(c).or_default() += 1;
        }
    }
    let wanted_tag = match &filters.tag {
        TagFilter::Tag(name) => doc.tag_index(name),
        _ => None,
    };
    let needle = filters.search.to_lowercase();
    let mut clips: Vec<ClipId> = doc
        .clips
        .iter()
        .enumerate()
        .filter(|(i, c)| {
            let id = *i as ClipId;
            let secs = duration_s(c.frames, c.fps);
            (needle.is_empty() || c.name.to_lowercase().contains(&needle))
                && filters.min_s.is_none_or(|m| secs >= m)
                && filters.max_s.is_none_or(|m| secs <= m)
                && match &filters.tag {
                    TagFilter::Any => true,
                    TagFilter::Untagged => !tag_counts.contains_key(&id),
                    TagFilter::Tag(_) => wanted_tag.is_some_and(|t| {
                        let t = &doc.tags[t];
                        !t.ranges_on(id).is_empty() || !t.markers_on(id).is_empty()
                    }),
                }
        })
        .map(|(i, _)| i as ClipId)
        .collect();
    let info = |c: ClipId| &doc.clips[c as usize];
    match filters.sort {
        SortKey::Project => {}
        SortKey::Name => clips.sort_by(|a, b| info(*a).name.cmp(&info(*b).name)),
        SortKey::Duration => clips.sort_by(|a, b| {
            let (x, y) = (info(*a), info(*b));
            duration_s(x.frames, x.fps).total_cmp(&duration_s(y.frames, y.fps))
        }),
        SortKey::Tags => clips.sort_by_key(|c| tag_counts.get(c).copied().unwrap_or(0)),
    }
    if filters.descending {
        clips.reverse();
    }
    let matched = clips.len();
    if !filters.group_by_folder {
        return (
            clips.into_iter().map(BrowserRow::Clip).collect(),
            matched,
            tag_counts,
        );
    }
    let folder_of = |c: ClipId| {
        if is_demo {
            "demo".to_owned()
        } else {
            clip_folder(info(c).source.as_deref(), base_dir)
        }
    };
    // Folders in the order their first clip comes; clips keep the sort within a folder.
    let mut order: Vec<String> = Vec::new();
    let mut groups: HashMap<String, Vec<ClipId>> = HashMap::new();
    for c in clips {
        let f = folder_of(c);
        if !groups.contains_key(&f) {
            order.push(f.clone());
        }
        groups.entry(f).or_default().push(c);
    }
    if filters.sort == SortKey::Project || filters.sort == SortKey::Name {
        order.sort();
        if filters.descending {
            order.reverse();
        }
    }
    let mut rows = Vec::new();
    for f in order {
        let list = groups.remove(&f).unwrap_or_default();
        let is_collapsed = collapsed.contains(&f);
        rows.push(BrowserRow::Folder {
            label: labels.get(&f).cloned().unwrap_or_else(|| f.clone()),
            folder: f,
            count: list.len(),
            collapsed: is_collapsed,
        });
        if !is_collapsed {
            rows.extend(list.into_iter().map(BrowserRow::Clip));
        }
    }
    (rows, matched, tag_counts)
}

fn duration_s(frames: u32, fps: f32) -> f32 {
    if frames > 1 && fps > 0.0 {
        (frames - 1) as f32 / fps
    } else {
        0.0
    }
}

/// What the browser reads.
pub struct BrowserInput<'a> {
    pub doc: &'a TagDocument,
    pub base_dir: Option<PathBuf>,
    pub is_demo: bool,
    pub current: ClipId,
    pub anim: &'a AnimCache,
}

impl BrowserState {
    fn refresh(&mut self, input: &BrowserInput<'_>) {
        let doc = input.doc;
        self.follow_selected_clips(doc);
        let tags_version: u64 = doc
            .tags
            .iter()
            .fold(0u64, |h, t| h.wrapping_mul(31).wrapping_add(t.version));
        let key = (
            self.filters.clone(),
            self.collapsed.clone(),
            doc.clips_version,
            tags_version,
            doc.clips.len(),
        );
        if self.cache_key.as_ref() != Some(&key) {
            let labels_key = (
                doc.clips_version,
                doc.clips.len(),
                input.is_demo,
                input.base_dir.clone(),
            );
            if self.filters.group_by_folder
                && self.labels.as_ref().is_none_or(|(k, _)| *k != labels_key)
            {
                let map = folder_label_map(doc, input.base_dir.as_deref(), input.is_demo);
                self.labels = Some((labels_key, map));
            }
            let none = HashMap::new();
            let labels = self.labels.as_ref().map_or(&none, |(_, m)| m);
            let (rows, matches, counts) = build_rows(
                doc,
                input.base_dir.as_deref(),
                input.is_demo,
                &self.filters,
                &self.collapsed,
                labels,
            );
            self.rows = rows;
            self.matches = matches;
            self.tag_counts = counts;
            self.cache_key = Some(key);
            // The selection holds the clips shown: one the search or a collapsed folder hides is
            // no longer selected (the context menu's "Units of N clips" set the units of clips
            // the list did not show, and a Shift+click from a hidden anchor selected one clip).
            let shown: std::collections::HashSet<ClipId> = self.shown_clips().collect();
            self.selected.retain(|c| shown.contains(c));
            if self.anchor.is_some_and(|a| !shown.contains(&a)) {
                self.anchor = None;
            }
        }
    }

    /// Keeps [`Self::selected`] on the same clips across a change of the clip list
    /// ([`crate::ui::clip_follow`]).
    fn follow_selected_clips(&mut self, doc: &crate::core::tags::TagDocument) {
        if crate::ui::clip_follow::follow_clips(&mut self.selected_seen, &mut self.selected, doc) {
            self.anchor = None;
        }
    }

    /// The rows of the last refresh (tests).
    pub fn rows(&self) -> &[BrowserRow] {
        &self.rows
    }

    /// The clips the list shows, in its order.
    fn shown_clips(&self) -> impl Iterator<Item = ClipId> + '_ {
        self.rows.iter().filter_map(|r| match r {
            BrowserRow::Clip(c) => Some(*c),
            BrowserRow::Folder { .. } => None,
        })
    }

    /// Clicking clip `c` with these modifiers: the new selection.
    fn click(&mut self, c: ClipId, ctrl: bool, shift: bool) {
        if shift && let Some(a) = self.anchor {
            let ids: Vec<ClipId> = self.shown_clips().collect();
            let (i, j) = (
                ids.iter().position(|&x| x == a),
                ids.iter().position(|&x| x == c),
            );
            if let (Some(i), Some(j)) = (i, j) {
                self.selected = ids[i.min(j)..=i.max(j)].to_vec();
                return;
            }
        }
        if ctrl {
            if let Some(k) = self.selected.iter().position(|&x| x == c) {
                self.selected.remove(k);
            } else {
                self.selected.push(c);
            }
        } else {
            self.selected = vec![c];
        }
        self.anchor = Some(c);
    }
}

/// Draws the browser; queues commands into `out`.
pub fn browser_ui(
    ui: &mut Ui,
    input: &BrowserInput<'_>,
    state: &mut BrowserState,
    out: &mut Vec<AppCommand>,
) {
    let doc = input.doc;
    ui.heading("Clips");
    filters_ui(ui, doc, &mut state.filters);
    state.refresh(input);
    let snapshot = input.anim.snapshot();
    ui.horizontal_wrapped(|ui| {
        ui.weak(format!("{} of {} clips", state.matches, doc.clips.len()));
        if state.selected.len() > 1 {
            ui.weak(format!("· {} selected", state.selected.len()));
        }
        ui.weak(format!(
            "· {} loaded, {:.0} / {:.0} MiB",
            snapshot.loaded.len(),
            snapshot.used_bytes as f64 / 1048576.0,
            snapshot.budget_bytes as f64 / 1048576.0
        ))
        .on_hover_text(
            "Animations load when a clip is shown; beyond the memory budget (View menu) the \
             least recently shown are unloaded. A dot beside a clip: loaded (filled), loading \
             (ring), failed (red).",
        );
    });
    ui.separator();
    let row_height = ui.text_style_height(&egui::TextStyle::Body) * 2.0 + 8.0;
    let rows = state.rows.clone();
    let (ctrl, shift) = ui.input(|i| (i.modifiers.command, i.modifiers.shift));
    let pal = crate::ui::theme::palette(ui.visuals().dark_mode);
    // The height each row's widget takes (egui adds the spacing between rows): a row drawn
    // 4 points shorter than the height given here made rows jump at each boundary while
    // scrolling and left a blank band at the bottom.
    egui::ScrollArea::vertical().auto_shrink(false).show_rows(
        ui,
        row_height - 4.0,
        rows.len(),
        |ui, range| {
            for row in &rows[range] {
                match row {
                    BrowserRow::Folder {
                        folder,
                        label,
                        count,
                        collapsed,
                    } => {
                        let arrow = if *collapsed { "+" } else { "-" };
                        let r = ui
                            .add_sized(
                                [ui.available_width(), row_height - 4.0],
                                egui::Button::new(
                                    egui::RichText::new(format!("{arrow} {label}  ({count})"))
                                        .strong(),
                                )
                                .frame(false),
                            )
                            .on_hover_text(format!("{folder}: click to show or hide its clips"));
                        if r.clicked() && !state.collapsed.remove(folder) {
                            state.collapsed.insert(folder.clone());
                        }
                    }
                    BrowserRow::Clip(c) => {
                        let c = *c;
                        let clip = &doc.clips[c as usize];
                        let tags = state.tag_counts.get(&c).copied().unwrap_or(0);
                        let unit = clip
                            .unit_cm
                            .map(|u| format!(" · {}", crate::core::library::describe_unit(u)))
                            .unwrap_or_default();
                        let details = format!(
                            "{} f · {} fps · {:.2} s · {} tags{unit}",
                            clip.frames,
                            crate::ui::view::fps_text(clip.fps),
                            duration_s(clip.frames, clip.fps),
                            tags
                        );
                        let picked = c == input.current || state.selected.contains(&c);
                        let resp = ui.add_sized(
                            [ui.available_width(), row_height - 4.0],
                            egui::Button::selectable(picked, ""),
                        );
                        let label = format!("{}\n{details}", clip.name);
                        resp.widget_info(|| {
                            egui::WidgetInfo::selected(
                                egui::Role::Button,
                                ui.is_enabled(),
                                picked,
                                &label,
                            )
                        });
                        let color = ui.style().interact_selectable(&resp, picked).text_color();
                        paint_two_lines(ui, resp.rect, [&clip.name, &details], color);
                        // What is loaded: a dot at the right.
                        let dot = egui::pos2(resp.rect.right() - 8.0, resp.rect.top() + 9.0);
                        match input.anim.status(c) {
                            ClipStatus::Ready(_) => {
                                ui.painter().circle_filled(dot, 3.5, pal.loaded);
                            }
                            ClipStatus::Queued | ClipStatus::Loading => {
                                ui.painter().circle_stroke(
                                    dot,
                                    3.5,
                                    egui::Stroke::new(1.5, pal.loaded),
                                );
                            }
                            ClipStatus::Failed(_) => {
                                ui.painter().circle_filled(dot, 3.5, pal.error);
                            }
                            ClipStatus::NotLoaded => {}
                        }
                        // The whole of both lines, which the row may cut, and the source.
                        let resp = match &clip.source {
                            Some(s) => resp.on_hover_text(format!("{label}\nsource: {s}")),
                            None => resp.on_hover_text(label),
                        };
                        if resp.clicked() {
                            state.click(c, ctrl, shift);
                            if !ctrl && !shift {
                                out.push(AppCommand::SelectClip(c));
                            }
                        }
                        resp.context_menu(|ui| clip_menu(ui, c, state, out));
                    }
                }
            }
        },
    );
}

/// Two left-aligned lines in a row's `rect`, each cut with an ellipsis: a long name never wraps
/// into the next row (room is left at the right for the loaded dot).
fn paint_two_lines(ui: &Ui, rect: egui::Rect, lines: [&str; 2], color: egui::Color32) {
    let inner = rect.shrink2(egui::vec2(6.0, 3.0));
    let line_h = inner.height() / 2.0;
    for (k, line) in lines.into_iter().enumerate() {
        let mut job = egui::text::LayoutJob::simple_singleline(
            line.to_owned(),
            egui::TextStyle::Body.resolve(ui.style()),
            color,
        );
        job.wrap = egui::text::TextWrapping {
            max_width: inner.width() - 12.0,
            max_rows: 1,
            break_anywhere: true,
            overflow_character: Some('…'),
        };
        let galley = ui.painter().layout_job(job);
        let y = inner.top() + line_h * k as f32 + (line_h - galley.size().y) / 2.0;
        ui.painter()
            .galley(egui::pos2(inner.left(), y), galley, color);
    }
}

fn filters_ui(ui: &mut Ui, doc: &TagDocument, f: &mut Filters) {
    ui.horizontal(|ui| {
        let label = ui.label("Search");
        ui.add(
            egui::TextEdit::singleline(&mut f.search)
                .hint_text("clip name")
                .desired_width(f32::INFINITY),
        )
        .labelled_by(label.id);
    });
    ui.horizontal(|ui| {
        let text = match &f.tag {
            TagFilter::Any => "any tag".to_owned(),
            TagFilter::Untagged => "untagged".to_owned(),
            TagFilter::Tag(t) => t.clone(),
        };
        let tag_label = ui.label("Tag");
        egui::ComboBox::from_id_salt("browser_tag")
            .selected_text(text)
            .width(90.0)
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut f.tag, TagFilter::Any, "any tag");
                ui.selectable_value(&mut f.tag, TagFilter::Untagged, "untagged")
                    .on_hover_text("Clips without any range or marker");
                for t in &doc.tags {
                    ui.selectable_value(&mut f.tag, TagFilter::Tag(t.name.clone()), &t.name);
                }
            })
            .response
            .labelled_by(tag_label.id)
            .on_hover_text("Show only clips with this tag");
    });
    ui.horizontal(|ui| {
        let sort_label = ui.label("Sort");
        egui::ComboBox::from_id_salt("browser_sort")
            .selected_text(match f.sort {
                SortKey::Project => "project order",
                SortKey::Name => "by name",
                SortKey::Duration => "by duration",
                SortKey::Tags => "by tag count",
            })
            .width(90.0)
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut f.sort, SortKey::Project, "project order");
                ui.selectable_value(&mut f.sort, SortKey::Name, "by name");
                ui.selectable_value(&mut f.sort, SortKey::Duration, "by duration");
                ui.selectable_value(&mut f.sort, SortKey::Tags, "by tag count");
            })
            .response
            .labelled_by(sort_label.id);
        if ui
            .selectable_label(f.descending, if f.descending { "desc" } else { "asc" })
            .on_hover_text("Reverse the order")
            .clicked()
        {
            f.descending = !f.descending;
        }
    });
    ui.horizontal(|ui| {
        let label = ui.label("Duration");
        let bound = |ui: &mut Ui, v: &mut Option<f32>, hint: &str| {
            let mut on = v.is_some();
            let mut x = v.unwrap_or(0.0);
            ui.add(egui::Checkbox::without_text(&mut on))
                .on_hover_text(format!("Only clips {hint}"));
            ui.add_enabled(
                on,
                egui::DragValue::new(&mut x)
                    .range(0.0..=36_000.0)
                    .speed(0.1)
                    .suffix(" s"),
            )
            .on_hover_text(hint.to_owned());
            *v = on.then_some(x);
        };
        bound(ui, &mut f.min_s, "at least this long");
        ui.label("to").labelled_by(label.id);
        bound(ui, &mut f.max_s, "at most this long");
    });
    ui.checkbox(&mut f.group_by_folder, "Group by folder")
        .on_hover_text("One collapsible group per folder of takes");
}

/// The context menu of a clip: re-link, units for the selection (or this clip).
fn clip_menu(ui: &mut Ui, c: ClipId, state: &BrowserState, out: &mut Vec<AppCommand>) {
    if ui.button("Re-link source file…").clicked() {
        out.push(AppCommand::Relink {
            clip: c,
            path: None,
        });
        ui.close();
    }
    let clips: Vec<ClipId> = if state.selected.contains(&c) {
        state.selected.clone()
    } else {
        vec![c]
    };
    let n = clips.len();
    ui.menu_button(format!("Units of {n} clip(s)"), |ui| {
        if ui
            .button("Guess from the skeleton")
            .on_hover_text("The unit that makes the skeleton stand 150-200 cm tall")
            .clicked()
        {
            out.push(AppCommand::GuessClipUnits(clips.clone()));
            ui.close();
        }
        ui.separator();
        for (label, u) in [
            ("centimetres", Some(1.0)),
            ("metres", Some(100.0)),
            ("millimetres", Some(0.1)),
            ("inches", Some(2.54)),
            ("CMU (5.644 cm)", Some(5.644)),
            ("the file's convention (BVH cm, glTF m)", None),
        ] {
            if ui.button(label).clicked() {
                out.push(AppCommand::SetClipUnits {
                    clips: clips.clone(),
                    unit_cm: u,
                });
                ui.close();
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::project::Project;

    #[test]
    fn filters_sort_and_groups() {
        let mut doc = Project::demo().doc;
        doc.clips[0].source = Some("day1/walk.bvh".into());
        doc.clips[1].source = Some("day2/run.bvh".into());
        let all = doc.clips.len();
        let mut f = Filters::default();
        let (rows, n, _) = rows_of(&doc, &f, &BTreeSet::new());
        assert_eq!((rows.len(), n), (all, all));
        f.search = "RUN".into();
        let (rows, _, _) = rows_of(&doc, &f, &BTreeSet::new());
        assert!(rows.iter().all(|r| match r {
            BrowserRow::Clip(c) => doc.clips[*c as usize].name.contains("run"),
            BrowserRow::Folder { .. } => false,
        }));
        // Untagged: a new clip with nothing on it.
        f = Filters {
            tag: TagFilter::Untagged,
            ..Filters::default()
        };
        assert_eq!(rows_of(&doc, &f, &BTreeSet::new()).1, 0);
        doc.add_clip(crate::core::tags::ClipInfo {
            name: "empty".into(),
            frames: 10,
            fps: 30.0,
            source: Some("day2/empty.bvh".into()),
            unit_cm: None,
        })
        .unwrap();
        assert_eq!(rows_of(&doc, &f, &BTreeSet::new()).1, 1);
        // A tag and a duration window.
        f = Filters {
            tag: TagFilter::Tag("Running".into()),
            min_s: Some(6.5),
            ..Filters::default()
        };
        let (rows, _, _) = rows_of(&doc, &f, &BTreeSet::new());
        for r in &rows {
            let BrowserRow::Clip(c) = r else { panic!() };
            let info = &doc.clips[*c as usize];
            assert!(duration_s(info.frames, info.fps) >= 6.5);
            let t = &doc.tags[doc.tag_index("Running").unwrap()];
            assert!(!t.ranges_on(*c).is_empty());
        }
        // Sorted by duration, longest first.
        f = Filters {
            sort: SortKey::Duration,
            descending: true,
            ..Filters::default()
        };
        let (rows, _, _) = rows_of(&doc, &f, &BTreeSet::new());
        let d: Vec<f32> = rows
            .iter()
            .map(|r| match r {
                BrowserRow::Clip(c) => {
                    let i = &doc.clips[*c as usize];
                    duration_s(i.frames, i.fps)
                }
                BrowserRow::Folder { .. } => panic!(),
            })
            .collect();
        assert!(d.windows(2).all(|w| w[0] >= w[1]), "{d:?}");
        // Grouped by folder, one group collapsed.
        f = Filters {
            group_by_folder: true,
            ..Filters::default()
        };
        let collapsed: BTreeSet<String> = ["day2".to_owned()].into();
        let (rows, _, _) = rows_of(&doc, &f, &collapsed);
        assert!(rows.contains(&BrowserRow::Folder {
            folder: "day1".into(),
            label: "day1".into(),
            count: 1,
            collapsed: false
        }));
        assert!(rows.contains(&BrowserRow::Folder {
            folder: "day2".into(),
            label: "day2".into(),
            count: 2,
            collapsed: true
        }));
        assert!(!rows.contains(&BrowserRow::Clip(1)));
        assert!(rows.contains(&BrowserRow::Clip(0)));
    }

    /// A frame's refresh of the browser over the demo's `doc`.
    fn refresh(state: &mut BrowserState, doc: &TagDocument) {
        state.refresh(&BrowserInput {
            doc,
            base_dir: None,
            is_demo: true,
            current: 0,
            anim: &AnimCache::default(),
        });
    }

    /// Clips selected for a group action stay the same clips when the list changes under them:
    /// a clip removed before them (a merge on save, an undo) shifted their numbers, and "Units
    /// of 2 clip(s)" then set the units of the clips after them. A rename keeps its clip.
    #[test]
    fn a_selection_follows_its_clips_when_the_list_changes() {
        use crate::core::doc::Edit;
        let mut doc = Project::demo().doc;
        let mut state = BrowserState::default();
        refresh(&mut state, &doc);
        state.selected = vec![3, 5];
        refresh(&mut state, &doc);
        let names = |state: &BrowserState, doc: &TagDocument| -> Vec<String> {
            state
                .selected
                .iter()
                .map(|&c| doc.clips[c as usize].name.clone())
                .collect()
        };
        let before = names(&state, &doc);
        Edit::RemoveClip { index: 1 }.apply(&mut doc).unwrap();
        refresh(&mut state, &doc);
        assert_eq!(state.selected, [2, 4]);
        assert_eq!(names(&state, &doc), before);
        doc.rename_clip(2, "renamed").unwrap();
        refresh(&mut state, &doc);
        assert_eq!(state.selected, [2, 4]);
        // A selected clip removed leaves the selection.
        Edit::RemoveClip { index: 4 }.apply(&mut doc).unwrap();
        refresh(&mut state, &doc);
        assert_eq!(state.selected, [2]);
    }

    /// The rows are kept between frames and rebuilt when the clip list's version changes: a
    /// rename (through the edit path) is seen by the search filter and the name sort.
    #[test]
    fn renaming_a_clip_refreshes_the_filtered_rows() {
        let mut doc = Project::demo().doc;
        let mut state = BrowserState::default();
        state.filters.search = "zz_renamed".into();
        refresh(&mut state, &doc);
        assert!(state.rows().is_empty());
        doc.rename_clip(2, "zz_renamed").unwrap();
        refresh(&mut state, &doc);
        assert_eq!(state.rows(), [BrowserRow::Clip(2)]);
        // Sorted by name, descending: the renamed clip comes first.
        state.filters = Filters {
            sort: SortKey::Name,
            descending: true,
            ..Filters::default()
        };
        refresh(&mut state, &doc);
        assert_eq!(state.rows()[0], BrowserRow::Clip(2));
        doc.rename_clip(2, "aaa").unwrap();
        refresh(&mut state, &doc);
        assert_eq!(state.rows().last(), Some(&BrowserRow::Clip(2)));
    }

    fn rows_of(
        doc: &TagDocument,
        f: &Filters,
        collapsed: &BTreeSet<String>,
    ) -> (Vec<BrowserRow>, usize, HashMap<ClipId, usize>) {
        build_rows(
            doc,
            None,
            false,
            f,
            collapsed,
            &folder_label_map(doc, None, false),
        )
    }

    #[test]
    fn folder_labels_are_the_shortest_ends_that_tell_folders_apart() {
        let l = folder_labels([
            "/data/capture/day1",
            "/data/capture/day2",
            "/a/x/walk",
            "/b/y/walk",
            "/c/y/walk/deep",
            ".",
            "../shared/mocap",
            "/work/shared/mocap",
            "(no source)",
        ]);
        assert_eq!(l["/data/capture/day1"], "day1");
        assert_eq!(l["/data/capture/day2"], "day2");
        assert_eq!(l["/a/x/walk"], "x/walk");
        assert_eq!(l["/b/y/walk"], "y/walk");
        assert_eq!(l["/c/y/walk/deep"], "deep");
        assert_eq!(l["."], ".");
        // The same end twice: one of them cannot be shorter than its whole path.
        assert_eq!(l["../shared/mocap"], "../shared/mocap");
        assert_eq!(l["/work/shared/mocap"], "work/shared/mocap");
        assert_eq!(l["(no source)"], "(no source)");
        // One folder alone: its last name.
        assert_eq!(
            folder_labels(["/check/work/shared/mocap"])["/check/work/shared/mocap"],
            "mocap"
        );
    }

    #[test]
    fn ctrl_and_shift_clicks_select_clips() {
        let mut s = BrowserState {
            rows: (0..6).map(BrowserRow::Clip).collect(),
            ..BrowserState::default()
        };
        s.click(1, false, false);
        s.click(4, false, true);
        assert_eq!(s.selected, vec![1, 2, 3, 4]);
        s.click(2, true, false);
        assert_eq!(s.selected, vec![1, 3, 4]);
        s.click(5, false, false);
        assert_eq!(s.selected, vec![5]);
    }
}
