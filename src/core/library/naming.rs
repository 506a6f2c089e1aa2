//! Clip names for imported takes.
//!
//! A take's clip is named after its file without the extension (`walk_01`); a file holding several
//! animations (glTF) gives one clip per animation, `FILE#ANIMATION` (`Fox#Survey`), and the
//! animation is found again by that suffix when the clip is loaded.
//!
//! When names collide (with each other or with clips already in the project), the colliding new
//! names get their folders in front, one folder at a time from the innermost, until they differ:
//! `day1/walk` and `day2/walk`; `a/x/walk` and `b/x/walk`. Files in the same folder that still
//! collide (`walk.bvh` and `walk.glb`) keep their extension (`day1/walk.glb`, and
//! `day1/Fox.glb#Run` for an animation: the extension stays with the file's name), and anything
//! left gets a number (`walk_2`, `Fox#Run_2`). Clips already in the project are never renamed.

use std::collections::{HashMap, HashSet};

/// One name to make: the base name and where the file is.
#[derive(Debug, Clone, PartialEq)]
pub struct NameRequest {
    /// The file's name without its extension.
    pub base: String,
    /// The animation's name, for a file that holds several.
    pub animation: Option<String>,
    /// Folders from the import root's folder down to the file's folder.
    pub folders: Vec<String>,
    /// The file's extension as written (`bvh`, `GLB`).
    pub extension: String,
}

/// The separator between a file's stem and an animation's name in a clip name.
pub use crate::core::source::ANIMATION_SEPARATOR;

/// The base name of a clip: the stem, plus `#animation` when the file holds several animations.
pub fn base_name(stem: &str, animation: Option<&str>) -> String {
    match animation {
        Some(a) => format!("{stem}{ANIMATION_SEPARATOR}{a}"),
        None => stem.to_owned(),
    }
}

fn candidate(r: &NameRequest, level: usize) -> String {
    let depth = level.min(r.folders.len());
    let mut name = String::new();
    for f in &r.folders[r.folders.len() - depth..] {
        name.push_str(f);
        name.push('/');
    }
    name.push_str(&r.base);
    if level > r.folders.len() && !r.extension.is_empty() {
        name.push('.');
        name.push_str(&r.extension);
    }
    if let Some(a) = &r.animation {
        name.push(ANIMATION_SEPARATOR);
        name.push_str(a);
    }
    name
}

/// Unique names for `requests`, none of them in `taken` (see the module documentation). The result
/// has one name per request, in order, and is deterministic.
pub fn unique_names(requests: &[NameRequest], taken: &HashSet<String>) -> Vec<String> {
    let mut levels = vec![0usize; requests.len()];
    let max_level = |r: &NameRequest| r.folders.len() + usize::from(!r.extension.is_empty());
    loop {
        let names: Vec<String> = requests
            .iter()
            .zip(&levels)
            .map(|(r, &l)| candidate(r, l))
            .collect();
        let mut groups: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, n) in names.iter().enumerate() {
            groups.entry(n.as_str()).or_default().push(i);
        }
        let mut bumped = false;
        for (name, members) in &groups {
            if members.len() > 1 || taken.contains(*name) {
                for &i in members {
                    if levels[i] < max_level(&requests[i]) {
                        levels[i] += 1;
                        bumped = true;
                    }
                }
            }
        }
        if !bumped {
            break;
        }
    }
    // What is still taken gets a number, in request order.
    let mut used: HashSet<String> = taken.clone();
    requests
        .iter()
        .zip(&levels)
        .map(|(r, &l)| {
            let mut unique = candidate(r, l);
            if used.contains(&unique) {
                // Numbered without the extension: `day1/walk_2`.
                let name = candidate(r, l.min(r.folders.len()));
                let mut n = 2;
                while used.contains(&unique) {
                    unique = format!("{name}_{n}");
                    n += 1;
                }
            }
            used.insert(unique.clone());
            unique
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(path: &str) -> NameRequest {
        let parts: Vec<&str> = path.split('/').collect();
        let (file, folders) = parts.split_last().unwrap();
        let (stem, ext) = file.rsplit_once('.').unwrap();
        NameRequest {
            base: stem.to_owned(),
            animation: None,
            folders: folders.iter().map(|s| s.to_string()).collect(),
            extension: ext.to_owned(),
        }
    }

    fn names(paths: &[&str], taken: &[&str]) -> Vec<String> {
        let reqs: Vec<NameRequest> = paths.iter().map(|p| req(p)).collect();
        unique_names(&reqs, &taken.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn unique_stems_stay_plain() {
        assert_eq!(
            names(&["lib/a/walk.bvh", "lib/b/run.bvh"], &[]),
            vec!["walk", "run"]
        );
    }

    #[test]
    fn duplicates_take_their_folders() {
        assert_eq!(
            names(
                &["lib/day1/walk.bvh", "lib/day2/walk.bvh", "lib/run.bvh"],
                &[]
            ),
            vec!["day1/walk", "day2/walk", "run"]
        );
        assert_eq!(
            names(
                &["lib/a/x/walk.bvh", "lib/b/x/walk.bvh", "lib/c/walk.bvh"],
                &[]
            ),
            vec!["a/x/walk", "b/x/walk", "c/walk"]
        );
        // The same folder: the extension, then a number.
        assert_eq!(
            names(&["lib/walk.bvh", "lib/walk.glb"], &[]),
            vec!["lib/walk.bvh", "lib/walk.glb"]
        );
        assert_eq!(
            names(&["lib/walk.bvh", "lib/walk.bvh"], &[]),
            vec!["lib/walk.bvh", "lib/walk_2"]
        );
    }

    #[test]
    fn names_in_the_project_are_kept() {
        assert_eq!(
            names(&["lib/day2/walk.bvh", "lib/day2/run.bvh"], &["walk"]),
            vec!["day2/walk", "run"]
        );
        assert_eq!(names(&["walk.bvh"], &["walk", "walk.bvh"]), vec!["walk_2"]);
    }

    /// An animation's name follows its file's: the extension stays with the file
    /// (`Fox.glb#Run`, which loads back; `Fox#Run.glb` named an animation `Run.glb`).
    #[test]
    fn an_animation_keeps_its_files_extension_before_it() {
        let anim = |path: &str, a: &str| NameRequest {
            animation: Some(a.to_owned()),
            ..req(path)
        };
        let reqs = [
            anim("lib/takes/Fox.glb", "Run"),
            anim("lib/takes/Fox.gltf", "Run"),
            anim("lib/takes/Fox.glb", "Walk"),
            anim("lib/takes/Twin.glb", "Idle"),
            anim("lib/takes/Twin.glb", "Idle"),
        ];
        assert_eq!(
            unique_names(&reqs, &HashSet::new()),
            vec![
                "lib/takes/Fox.glb#Run",
                "lib/takes/Fox.gltf#Run",
                "Fox#Walk",
                "lib/takes/Twin.glb#Idle",
                "lib/takes/Twin#Idle_2",
            ]
        );
    }
}
