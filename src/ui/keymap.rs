//! The command table: every user action with its label, its help text and its keys, in one place.
//! It drives the keyboard shortcuts, the menus (label and shortcut text), the tooltips of the
//! transport buttons and the help window, so the four can never disagree.

use egui::{Key, KeyboardShortcut, Modifiers, Ui};

use crate::ui::command::{AppCommand, Guarded, SimilarCommand};

/// An action the user can trigger by name, key, menu or button.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    TogglePlay,
    StepBack,
    StepForward,
    StepBack10,
    StepForward10,
    PrevEdge,
    NextEdge,
    JumpStart,
    JumpEnd,
    ToggleLoop,
    LoopSelection,
    GoToFrame,
    MarkIn,
    MarkOut,
    AddMarker,
    Split,
    Delete,
    Copy,
    Paste,
    PasteIntoActive,
    SelectAll,
    Undo,
    Redo,
    Save,
    SaveAs,
    New,
    Open,
    ImportAnimation,
    ImportFolder,
    ImportTags,
    NewTag,
    Fit,
    ZoomIn,
    ZoomOut,
    Help,
    Quit,
    FindSimilar,
    NextMatch,
    PrevMatch,
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct ActionInfo {
    pub action: Action,
    /// Menu and button label.
    pub label: &'static str,
    /// What it does (tooltips and the help window).
    pub help: &'static str,
    /// Keys, the first one shown in menus and tooltips. May be empty.
    pub keys: &'static [KeyboardShortcut],
}

const fn key(k: Key) -> KeyboardShortcut {
    KeyboardShortcut::new(Modifiers::NONE, k)
}
const fn cmd(k: Key) -> KeyboardShortcut {
    KeyboardShortcut::new(Modifiers::COMMAND, k)
}
const fn shift(k: Key) -> KeyboardShortcut {
    KeyboardShortcut::new(Modifiers::SHIFT, k)
}
const fn cmd_shift(k: Key) -> KeyboardShortcut {
    KeyboardShortcut::new(
        Modifiers {
            alt: false,
            ctrl: false,
            shift: true,
            mac_cmd: false,
            command: true,
        },
        k,
    )
}

/// Every action, in the order the help window lists them.
pub const ACTIONS: &[ActionInfo] = &[
    ActionInfo {
        action: Action::TogglePlay,
        label: "Play / pause",
        help: "Play or pause the clip",
        keys: &[key(Key::Space)],
    },
    ActionInfo {
        action: Action::StepBack,
        label: "Previous frame",
        help: "Step one frame back",
        keys: &[key(Key::ArrowLeft)],
    },
    ActionInfo {
        action: Action::StepForward,
        label: "Next frame",
        help: "Step one frame forward",
        keys: &[key(Key::ArrowRight)],
    },
    ActionInfo {
        action: Action::StepBack10,
        label: "Back ten frames",
        help: "Step ten frames back",
        keys: &[shift(Key::ArrowLeft)],
    },
    ActionInfo {
        action: Action::StepForward10,
        label: "Forward ten frames",
        help: "Step ten frames forward",
        keys: &[shift(Key::ArrowRight)],
    },
    ActionInfo {
        action: Action::PrevEdge,
        label: "Previous range edge",
        help: "Jump to the previous range start or stop on the visible lanes",
        keys: &[cmd(Key::ArrowLeft)],
    },
    ActionInfo {
        action: Action::NextEdge,
        label: "Next range edge",
        help: "Jump to the next range start or stop on the visible lanes",
        keys: &[cmd(Key::ArrowRight)],
    },
    ActionInfo {
        action: Action::JumpStart,
        label: "First frame",
        help: "Jump to the first frame",
        keys: &[key(Key::Home)],
    },
    ActionInfo {
        action: Action::JumpEnd,
        label: "Last frame",
        help: "Jump to the last frame",
        keys: &[key(Key::End)],
    },
    ActionInfo {
        action: Action::ToggleLoop,
        label: "Loop",
        help: "Loop playback over the clip (or over the looped range)",
        keys: &[],
    },
    ActionInfo {
        action: Action::LoopSelection,
        label: "Loop selected range",
        help: "Play the selected range in a loop (again to loop the whole clip)",
        keys: &[key(Key::L)],
    },
    ActionInfo {
        action: Action::GoToFrame,
        label: "Go to frame",
        help: "Type a frame number to jump to",
        keys: &[cmd(Key::G)],
    },
    ActionInfo {
        action: Action::MarkIn,
        label: "Mark in",
        help: "Mark in: the start of a range on the active lane, or of a Find similar query (no lane needed)",
        keys: &[key(Key::I)],
    },
    ActionInfo {
        action: Action::MarkOut,
        label: "Mark out",
        help: "Mark the end: a range from mark in to here on the active lane",
        keys: &[key(Key::O)],
    },
    ActionInfo {
        action: Action::AddMarker,
        label: "Add marker",
        help: "A one-frame marker (footstep, sync point) at the playhead on the active lane",
        keys: &[key(Key::M)],
    },
    ActionInfo {
        action: Action::Split,
        label: "Split at playhead",
        help: "Split the range under the playhead (the frame under it is cut out: touching ranges merge; a one-frame range stays)",
        keys: &[key(Key::S)],
    },
    ActionInfo {
        action: Action::Delete,
        label: "Delete selection",
        help: "Delete the selected ranges and markers",
        keys: &[key(Key::Delete), key(Key::Backspace)],
    },
    ActionInfo {
        action: Action::Copy,
        label: "Copy selection",
        help: "Copy the selected ranges and markers",
        keys: &[cmd(Key::C)],
    },
    ActionInfo {
        action: Action::Paste,
        label: "Paste ranges",
        help: "Paste at the playhead, into the tags they were copied from",
        keys: &[cmd(Key::V)],
    },
    ActionInfo {
        action: Action::PasteIntoActive,
        label: "Paste into active lane",
        help: "Paste at the playhead, all into the active lane",
        keys: &[cmd_shift(Key::V)],
    },
    ActionInfo {
        action: Action::SelectAll,
        label: "Select all ranges",
        help: "Select every range on the clip",
        keys: &[cmd(Key::A)],
    },
    ActionInfo {
        action: Action::Undo,
        label: "Undo",
        help: "Undo the last edit",
        keys: &[cmd(Key::Z)],
    },
    ActionInfo {
        action: Action::Redo,
        label: "Redo",
        help: "Redo the edit last undone",
        keys: &[cmd_shift(Key::Z), cmd(Key::Y)],
    },
    ActionInfo {
        action: Action::Save,
        label: "Save",
        help: "Save the project (asks where for a new or demo project)",
        keys: &[cmd(Key::S)],
    },
    ActionInfo {
        action: Action::SaveAs,
        label: "Save as…",
        help: "Save the project to a new file",
        keys: &[cmd_shift(Key::S)],
    },
    ActionInfo {
        action: Action::New,
        label: "New project",
        help: "Start an empty project",
        keys: &[cmd(Key::N)],
    },
    ActionInfo {
        action: Action::Open,
        label: "Open project…",
        help: "Open a project file",
        keys: &[cmd(Key::O)],
    },
    ActionInfo {
        action: Action::ImportAnimation,
        label: "Import animation (BVH, glTF)…",
        help: "Add clips from animation files",
        keys: &[cmd(Key::I)],
    },
    ActionInfo {
        action: Action::ImportFolder,
        label: "Import folder…",
        help: "Add every BVH and glTF take of a folder and its subfolders, in the background",
        keys: &[cmd_shift(Key::I)],
    },
    ActionInfo {
        action: Action::ImportTags,
        label: "Import tags (JSON, CSV)…",
        help: "Merge tags from a project JSON or a CSV file (one undoable step)",
        keys: &[],
    },
    ActionInfo {
        action: Action::NewTag,
        label: "New tag",
        help: "Add a tag lane",
        keys: &[cmd(Key::T)],
    },
    ActionInfo {
        action: Action::Fit,
        label: "Fit clip",
        help: "Fit the whole clip in the timeline",
        keys: &[key(Key::F)],
    },
    ActionInfo {
        action: Action::ZoomIn,
        label: "Zoom in",
        help: "Zoom the timeline in (also Ctrl+wheel)",
        keys: &[key(Key::Plus), key(Key::Equals)],
    },
    ActionInfo {
        action: Action::ZoomOut,
        label: "Zoom out",
        help: "Zoom the timeline out (also Ctrl+wheel)",
        keys: &[key(Key::Minus)],
    },
    ActionInfo {
        action: Action::Help,
        label: "Keyboard shortcuts",
        help: "This help",
        keys: &[key(Key::F1)],
    },
    ActionInfo {
        action: Action::Quit,
        label: "Quit",
        help: "Quit taglane (asks to save changes)",
        keys: &[cmd(Key::Q)],
    },
    ActionInfo {
        action: Action::FindSimilar,
        label: "Find similar",
        help: "Find the moments most like the selected range (or mark in to the playhead) in every clip",
        keys: &[cmd(Key::F)],
    },
    ActionInfo {
        action: Action::NextMatch,
        label: "Next similar match",
        help: "Show the next match of Find similar: its clip, the playhead at its start",
        keys: &[key(Key::CloseBracket)],
    },
    ActionInfo {
        action: Action::PrevMatch,
        label: "Previous similar match",
        help: "Show the previous match of Find similar",
        keys: &[key(Key::OpenBracket)],
    },
];

/// Mouse gestures, listed in the help window after the keys.
pub const GESTURES: &[(&str, &str)] = &[
    (
        "Drag on a lane",
        "Create a range (Shift/Ctrl+drag: box select)",
    ),
    (
        "Double-click on a lane",
        "Add a marker (a one-frame event) on that frame",
    ),
    (
        "Drag a range, a marker or an edge",
        "Move / resize, snapped to frames, the playhead, markers and other ranges' edges (hold Alt: no snapping)",
    ),
    ("Click / Shift+click", "Select / add to selection"),
    ("Shift+wheel", "Pan the timeline"),
    ("Ctrl+wheel", "Zoom the timeline"),
    ("Enter / Esc in a dialog", "Confirm / cancel (every dialog)"),
];

impl Action {
    /// The table row of this action.
    pub fn info(self) -> &'static ActionInfo {
        ACTIONS
            .iter()
            .find(|i| i.action == self)
            .expect("every action has a row in ACTIONS (tested)")
    }

    /// The command it queues.
    pub fn command(self) -> AppCommand {
        match self {
            Action::TogglePlay => AppCommand::TogglePlay,
            Action::StepBack => AppCommand::StepFrames(-1),
            Action::StepForward => AppCommand::StepFrames(1),
            Action::StepBack10 => AppCommand::StepFrames(-10),
            Action::StepForward10 => AppCommand::StepFrames(10),
            Action::PrevEdge => AppCommand::JumpEdge(false),
            Action::NextEdge => AppCommand::JumpEdge(true),
            Action::JumpStart => AppCommand::JumpStart,
            Action::JumpEnd => AppCommand::JumpEnd,
            Action::ToggleLoop => AppCommand::ToggleLoop,
            Action::LoopSelection => AppCommand::LoopSelection,
            Action::GoToFrame => AppCommand::FocusGoToFrame,
            Action::MarkIn => AppCommand::MarkIn,
            Action::MarkOut => AppCommand::MarkOut,
            Action::AddMarker => AppCommand::AddMarker(None),
            Action::Split => AppCommand::SplitAtPlayhead,
            Action::Delete => AppCommand::DeleteSelection,
            Action::Copy => AppCommand::Copy,
            Action::Paste => AppCommand::Paste { into_active: false },
            Action::PasteIntoActive => AppCommand::Paste { into_active: true },
            Action::SelectAll => AppCommand::SelectAll,
            Action::Undo => AppCommand::Undo,
            Action::Redo => AppCommand::Redo,
            Action::Save => AppCommand::Save,
            Action::SaveAs => AppCommand::SaveAs(None),
            Action::New => AppCommand::Guarded(Guarded::New),
            Action::Open => AppCommand::Guarded(Guarded::Open(None)),
            Action::ImportAnimation => AppCommand::ImportAnimation(None),
            Action::ImportFolder => AppCommand::ImportFolder(None),
            Action::ImportTags => AppCommand::ImportTags(None),
            Action::NewTag => AppCommand::NewTag,
            Action::Fit => AppCommand::FitView,
            Action::ZoomIn => AppCommand::Zoom(1.25),
            Action::ZoomOut => AppCommand::Zoom(0.8),
            Action::Help => AppCommand::ShowHelp(true),
            Action::Quit => AppCommand::Guarded(Guarded::Quit),
            Action::FindSimilar => AppCommand::Similar(SimilarCommand::Find),
            Action::NextMatch => AppCommand::Similar(SimilarCommand::Step(true)),
            Action::PrevMatch => AppCommand::Similar(SimilarCommand::Step(false)),
        }
    }
}

fn modifier_count(m: Modifiers) -> u32 {
    u32::from(m.alt) + u32::from(m.shift) + u32::from(m.command || m.ctrl || m.mac_cmd)
}

/// Whether `key` went down this frame, key repeats aside: a confirmation ("Replace?", "Save
/// changes?") is answered by a new press, never by the repeats of a key held since the action
/// that raised it (a held Enter replaced a file the moment its question appeared).
pub fn pressed_once(i: &egui::InputState, key: Key) -> bool {
    i.events.iter().any(
        |e| matches!(e, egui::Event::Key { key: k, pressed: true, repeat: false, .. } if *k == key),
    )
}

impl Action {
    /// Whether holding the key repeats the action (stepping, undo, zoom): the others act once a
    /// press (a held Space toggled playback thirty times a second).
    fn repeats(self) -> bool {
        matches!(
            self,
            Action::StepBack
                | Action::StepForward
                | Action::StepBack10
                | Action::StepForward10
                | Action::PrevEdge
                | Action::NextEdge
                | Action::Undo
                | Action::Redo
                | Action::ZoomIn
                | Action::ZoomOut
                | Action::NextMatch
                | Action::PrevMatch
        )
    }
}

/// The commands of the keys pressed this frame, in the order they were pressed, one for each
/// press (none while a text field has the keyboard or a modal window is open): I, three arrows
/// and O typed within one frame mark the range they walk, and Ctrl+Z then Ctrl+Shift+Z undo
/// before they redo. Combinations with more modifiers are tried first, so Ctrl+Shift+Z is never
/// taken as Ctrl+Z.
pub fn shortcuts(ctx: &egui::Context) -> Vec<AppCommand> {
    let under_modal = !ctx.memory(|m| m.is_above_modal_layer(egui::LayerId::background()));
    if ctx.egui_wants_keyboard_input() || under_modal {
        return Vec::new();
    }
    let mut keys: Vec<(KeyboardShortcut, Action)> = ACTIONS
        .iter()
        .flat_map(|i| i.keys.iter().map(move |k| (*k, i.action)))
        .collect();
    keys.sort_by_key(|(k, _)| std::cmp::Reverse(modifier_count(k.modifiers)));
    let mut out = Vec::new();
    ctx.input_mut(|i| {
        // egui turns Ctrl+C / Ctrl+V into clipboard events on some platforms (Ctrl+V into an
        // image paste when the clipboard holds an image: the ranges copied here paste all the
        // same).
        let paste_event = i
            .events
            .iter()
            .any(|e| matches!(e, egui::Event::Paste(_) | egui::Event::PasteImage(_)));
        let copy_event = i.events.iter().any(|e| matches!(e, egui::Event::Copy));
        i.events.retain(|e| {
            let egui::Event::Key {
                key,
                modifiers,
                pressed: true,
                repeat,
                ..
            } = e
            else {
                return true;
            };
            let found = keys
                .iter()
                .find(|(k, _)| k.logical_key == *key && modifiers.matches_logically(k.modifiers));
            match found {
                Some((_, action)) => {
                    if !*repeat || action.repeats() {
                        out.push(*action);
                    }
                    false
                }
                None => true,
            }
        });
        if paste_event && !out.contains(&Action::Paste) && !out.contains(&Action::PasteIntoActive) {
            out.push(Action::Paste);
        }
        if copy_event && !out.contains(&Action::Copy) {
            out.push(Action::Copy);
        }
    });
    out.into_iter().map(Action::command).collect()
}

/// The first key of `action`, as the platform writes it (`Ctrl+S`), or "".
pub fn shortcut_text(ctx: &egui::Context, action: Action) -> String {
    action
        .info()
        .keys
        .first()
        .map_or(String::new(), |k| format_key(ctx, k))
}

/// A key as the platform writes it (`Ctrl+S`), brackets as themselves (`]`, not `CloseBracket`).
fn format_key(ctx: &egui::Context, k: &KeyboardShortcut) -> String {
    let text = ctx.format_shortcut(k);
    let symbol = match k.logical_key {
        Key::OpenBracket => "[",
        Key::CloseBracket => "]",
        _ => return text,
    };
    match text.strip_suffix(k.logical_key.name()) {
        Some(modifiers) => format!("{modifiers}{symbol}"),
        None => text,
    }
}

/// Every key of `action`, joined (`Delete / Backspace`).
pub fn all_keys_text(ctx: &egui::Context, action: Action) -> String {
    action
        .info()
        .keys
        .iter()
        .map(|k| format_key(ctx, k))
        .collect::<Vec<_>>()
        .join(" / ")
}

/// `text` (a help line or a message naming keys as `Ctrl+...`) as this platform names the keys:
/// on macOS the command key is Cmd, which is what the shortcuts and zoom take there.
pub fn for_os(ctx: &egui::Context, text: &str) -> String {
    if ctx.os() == egui::os::OperatingSystem::Mac {
        text.replace("Ctrl+", "Cmd+")
            .replace("Ctrl/", "Cmd/")
            .replace("/Ctrl", "/Cmd")
    } else {
        text.to_owned()
    }
}

/// A menu entry for `action`: its label, its key on the right, its help on hover.
pub fn menu_item(ui: &mut Ui, action: Action, enabled: bool, queue: &mut Vec<AppCommand>) {
    let info = action.info();
    let button = egui::Button::new(info.label).shortcut_text(shortcut_text(ui.ctx(), action));
    if ui
        .add_enabled(enabled, button)
        .on_hover_text(for_os(ui.ctx(), info.help))
        .clicked()
    {
        queue.push(action.command());
    }
}

/// The tooltip of a button for `action`: its help and keys (`Play or pause the clip (Space)`).
pub fn tooltip(ctx: &egui::Context, action: Action) -> String {
    let keys = all_keys_text(ctx, action);
    let help = for_os(ctx, action.info().help);
    if keys.is_empty() {
        help
    } else {
        format!("{help} ({keys})")
    }
}

/// A button with `text` for `action`, with the table's tooltip.
pub fn action_button(ui: &mut Ui, text: &str, action: Action, queue: &mut Vec<AppCommand>) {
    let tip = tooltip(ui.ctx(), action);
    if ui.button(text).on_hover_text(tip).clicked() {
        queue.push(action.command());
    }
}

/// The help window: every action with a key, then the mouse gestures.
pub fn help_ui(ctx: &egui::Context, open: &mut bool) {
    // Centred below the menu bar, never taller than the window: the list scrolls.
    let screen = ctx.content_rect();
    let max_height = (screen.height() - 120.0).max(160.0);
    // Esc closes it, as every dialog.
    if *open && ctx.input(|i| i.key_pressed(egui::Key::Escape)) {
        *open = false;
    }
    egui::Window::new("Keyboard shortcuts")
        .id(egui::Id::unique("Keyboard shortcuts"))
        .open(open)
        .resizable(false)
        .collapsible(false)
        .pivot(egui::Align2::CENTER_TOP)
        .default_pos(egui::pos2(screen.center().x, screen.top() + 48.0))
        .max_height(max_height)
        .show(ctx, |ui| {
            egui::ScrollArea::vertical()
                .max_height(max_height)
                .min_scrolled_height(max_height)
                .auto_shrink([true, true])
                .show(ui, |ui| {
                    // Room for the scroll bar right of the longest row.
                    ui.add_space(2.0);
                    egui::Grid::new("shortcuts")
                        .striped(true)
                        .spacing([24.0, 4.0])
                        .min_col_width(0.0)
                        .show(ui, |ui| {
                            for info in ACTIONS.iter().filter(|i| !i.keys.is_empty()) {
                                ui.monospace(all_keys_text(ctx, info.action));
                                ui.label(for_os(ctx, info.help));
                                ui.end_row();
                            }
                            for (what, how) in GESTURES {
                                ui.monospace(for_os(ctx, what));
                                ui.horizontal(|ui| {
                                    ui.label(for_os(ctx, how));
                                    ui.add_space(14.0);
                                });
                                ui.end_row();
                            }
                        });
                });
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_are_written_as_themselves() {
        let ctx = egui::Context::default();
        assert_eq!(all_keys_text(&ctx, Action::NextMatch), "]");
        assert_eq!(all_keys_text(&ctx, Action::PrevMatch), "[");
        assert_eq!(shortcut_text(&ctx, Action::FindSimilar), "Ctrl+F");
    }

    /// On macOS the help names the command key Cmd, as the shortcuts and zoom take it there.
    #[test]
    fn help_names_the_command_key_of_the_platform() {
        let ctx = egui::Context::default();
        ctx.set_os(egui::os::OperatingSystem::Mac);
        let texts = ACTIONS
            .iter()
            .map(|i| i.help)
            .chain(GESTURES.iter().flat_map(|(a, b)| [*a, *b]));
        for t in texts {
            assert!(!for_os(&ctx, t).contains("Ctrl"), "{t}");
        }
        let zoom = Action::ZoomIn.info().help;
        assert!(for_os(&ctx, zoom).contains("Cmd+wheel"));
        ctx.set_os(egui::os::OperatingSystem::Nix);
        assert!(for_os(&ctx, zoom).contains("Ctrl+wheel"));
    }

    #[test]
    fn every_action_has_one_row_and_no_key_is_used_twice() {
        let mut seen = std::collections::HashSet::new();
        let mut keys = std::collections::HashSet::new();
        for info in ACTIONS {
            assert!(seen.insert(info.action), "{:?} twice", info.action);
            for k in info.keys {
                assert!(keys.insert(*k), "{k:?} bound twice");
            }
        }
        // `info()` finds every action (it would panic otherwise).
        for info in ACTIONS {
            assert_eq!(info.action.info().label, info.label);
        }
        assert_eq!(Action::Redo.info().keys.len(), 2);
    }
}
