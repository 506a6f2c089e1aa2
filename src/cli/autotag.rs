//! `taglane autotag`: propose tags from the motion of animation files and write them as a tag
//! document.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use crate::core::anim::{ImportOptions, load_animation};
use crate::core::autotag::{AutotagParams, Rule, autotag, guess_unit, known_tags, parse_rules};
use crate::core::tags::{ClipInfo, Tag, TagDocument};

#[derive(Debug, Args)]
pub struct AutotagArgs {
    /// Animation files (.bvh, .glb, .gltf); every clip of each is tagged.
    #[arg(required = true)]
    pub anims: Vec<PathBuf>,
    /// What one file unit is: cm, m, in, cmu (5.644 cm), a number of cm, or auto (the unit that
    /// makes the skeleton 150-200 cm tall, reported on stderr).
    #[arg(long, default_value = "auto")]
    pub units: String,
    /// A JSON rule file with custom rules (see docs/AUTOTAG.md).
    #[arg(long)]
    pub rules: Option<PathBuf>,
    /// Only these tags, comma-separated (built-in tag names or rule tags).
    #[arg(long, value_delimiter = ',')]
    pub only: Option<Vec<String>>,
    /// Write the tag document to this file (`.taglane.json`).
    #[arg(short = 'o', long = "out")]
    pub out: Option<PathBuf>,
    /// Print the tag document as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `None` for `auto`, else centimetres per unit.
fn parse_units_arg(s: &str) -> Result<Option<f32>, String> {
    if s.eq_ignore_ascii_case("auto") {
        Ok(None)
    } else {
        super::compress::parse_units(s)
            .map(Some)
            .map_err(|e| e.replace("expected cm,", "expected auto, cm,"))
    }
}

/// `path` relative to the folder `base` when both can be made absolute, else `path` as given.
fn relative_to(path: &Path, base: &Path) -> String {
    let (Ok(p), Ok(b)) = (std::path::absolute(path), std::path::absolute(base)) else {
        return path.display().to_string();
    };
    fn normal(x: &Path) -> Vec<Component<'_>> {
        x.components()
            .filter(|c| !matches!(c, Component::CurDir))
            .collect()
    }
    let (pc, bc) = (normal(&p), normal(&b));
    let common = pc.iter().zip(&bc).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return p.display().to_string();
    }
    let mut rel = PathBuf::new();
    for _ in common..bc.len() {
        rel.push("..");
    }
    for c in &pc[common..] {
        rel.push(c.as_os_str());
    }
    rel.to_string_lossy().replace('\\', "/")
}

pub fn autotag_cmd(args: AutotagArgs) -> ExitCode {
    let unit_cm = match parse_units_arg(&args.units) {
        Ok(u) => u,
        Err(e) => return super::fail_usage(e),
    };
    let rules: Vec<Rule> = match &args.rules {
        None => Vec::new(),
        Some(path) => {
            let text = match crate::core::limits::read_limited(path, 16 << 20) {
                Ok(b) => String::from_utf8_lossy(&b).into_owned(),
                Err(e) => {
                    return super::fail_usage(format!(
                        "{}: cannot read the rule file: {e}",
                        path.display()
                    ));
                }
            };
            match parse_rules(&text) {
                Ok(set) => set.rules,
                Err(e) => return super::fail_usage(format!("{}: {e}", path.display())),
            }
        }
    };
    let only: Option<Vec<String>> = args.only.as_ref().map(|list| {
        list.iter()
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
            .collect()
    });
    if let Some(only) = &only {
        let known = known_tags(&rules);
        if only.is_empty() {
            return super::fail_usage("--only: expected at least one tag name");
        }
        if let Some(bad) = only.iter().find(|t| !known.contains(t)) {
            return super::fail_usage(format!(
                "--only: unknown tag `{bad}`; known tags: {}",
                known.join(", ")
            ));
        }
    }
    let out_dir = args
        .out
        .as_ref()
        .map(|o| o.parent().unwrap_or(Path::new("")).to_path_buf());
    let params = AutotagParams::default();
    let options = ImportOptions {
        unit_cm,
        ..ImportOptions::default()
    };
    let mut clips: Vec<ClipInfo> = Vec::new();
    let mut ranges: BTreeMap<String, BTreeMap<u32, Vec<crate::core::tags::Range>>> =
        BTreeMap::new();
    let mut tag_order: Vec<String> = Vec::new();
    for path in &args.anims {
        let imported = match load_animation(path, &options) {
            Ok(i) => i,
            Err(e) => {
                eprintln!("taglane: skipped: {e}");
                continue;
            }
        };
        let several = imported.clips.len() > 1;
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        for mut clip in imported.clips {
            if unit_cm.is_none() {
                match guess_unit(&clip) {
                    Some(g) => {
                        eprintln!(
                            "taglane: {}: units: {} ({} cm per unit; standing height {:.1} units = {:.0} cm)",
                            path.display(),
                            g.name,
                            g.unit_cm,
                            g.height_units,
                            g.height_cm()
                        );
                        clip.unit_cm = g.unit_cm;
                    }
                    None => eprintln!(
                        "taglane: {}: units: cannot measure the skeleton, keeping {} cm per unit",
                        path.display(),
                        clip.unit_cm
                    ),
                }
            }
            let result = match autotag(&clip, &params, &rules, only.as_deref()) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("taglane: skipped: {}: {e}", path.display());
                    continue;
                }
            };
            for w in &result.warnings {
                eprintln!("taglane: {}: {w}", path.display());
            }
            let base = if several {
                format!("{stem}/{}", clip.name)
            } else {
                stem.clone()
            };
            let mut name = base.clone();
            let mut k = 2;
            while clips.iter().any(|c| c.name == name) {
                name = format!("{base}_{k}");
                k += 1;
            }
            let id = clips.len() as u32;
            let source = match &out_dir {
                Some(dir) => relative_to(path, dir),
                None => path.display().to_string(),
            };
            clips.push(ClipInfo {
                name,
                frames: clip.frame_count as u32,
                fps: clip.fps,
                source: Some(source),
                unit_cm: Some(clip.unit_cm),
            });
            for p in result.proposals {
                if !tag_order.contains(&p.tag) {
                    tag_order.push(p.tag.clone());
                }
                if !p.ranges.is_empty() {
                    ranges.entry(p.tag).or_default().insert(id, p.ranges);
                }
            }
        }
    }
    if clips.is_empty() {
        return super::fail_input("no clip could be tagged");
    }
    let doc = TagDocument {
        clips,
        tags: tag_order
            .into_iter()
            .map(|name| Tag {
                ranges: ranges.remove(&name).unwrap_or_default(),
                name,
                color: None,
                markers: Default::default(),
                notes: Default::default(),
                version: 0,
            })
            .collect(),
        queries: Vec::new(),
        ..Default::default()
    };
    if let Some(out) = &args.out
        && let Err(e) = doc.save(out, false)
    {
        return super::fail_input(e);
    }
    if args.json {
        match doc.to_json_string() {
            Ok(text) => {
                let mut stdout = std::io::stdout().lock();
                let _ = stdout.write_all(text.as_bytes());
                let _ = stdout.write_all(b"\n");
                let _ = stdout.flush();
            }
            Err(e) => return super::fail_input(e),
        }
    } else {
        let mut text = String::new();
        for (c, clip) in doc.clips.iter().enumerate() {
            text.push_str(&format!("{} ({} frames)\n", clip.name, clip.frames));
            for t in &doc.tags {
                let list = t.ranges.get(&(c as u32)).map_or(&[][..], Vec::as_slice);
                let frames: u32 = list.iter().map(|r| r.len()).sum();
                text.push_str(&format!(
                    "  {:<22} {:>4} ranges {:>7} frames\n",
                    t.name,
                    list.len(),
                    frames
                ));
            }
        }
        if let Some(out) = &args.out {
            text.push_str(&format!("wrote {}\n", out.display()));
        }
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
    }
    ExitCode::SUCCESS
}
