//! `taglane find`: the moments most similar to a query range, in a project or over loose animation
//! files (see `core::similar` and `docs/SIMILAR.md`).
//!
//! - `taglane find PROJECT --clip NAME --range START:STOP`: every clip of the project is searched;
//!   features are cached in `.taglane-cache` beside the project file.
//! - `taglane find ANIM... --query ANIM:START:STOP [--units U]`: the animation files given (and the
//!   query's file) are searched; nothing is written.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use clap::Args;
use serde::Serialize;

use crate::core::anim::{Clip, ImportOptions, load_animation};
use crate::core::project::Project;
use crate::core::similar::{
    CacheOutcome, ClipFeatures, FeatureJob, FeatureOptions, JointOverrides, Match, Query,
    SearchError, SearchIndex, SearchSettings, Weights, clips_features_par, job_features,
    par_map_with_progress,
};

#[derive(Debug, Args)]
pub struct FindArgs {
    /// A project file (with --clip and --range), or animation files .bvh/.glb/.gltf (with --query).
    #[arg(required = true, value_name = "PROJECT | ANIM...")]
    pub inputs: Vec<PathBuf>,
    /// Project: the name of the clip holding the query.
    #[arg(long)]
    pub clip: Option<String>,
    /// Project: the query's frames, START:STOP (half-open: STOP is the first frame after it).
    #[arg(long, value_name = "START:STOP")]
    pub range: Option<String>,
    /// Animation files: the query, ANIM:START:STOP; ANIM#NAME:START:STOP picks the animation NAME
    /// of a file holding several (glTF). ANIM is searched too.
    #[arg(long, value_name = "ANIM:START:STOP")]
    pub query: Option<String>,
    /// Animation files: what one file unit is: auto (as `import` chooses it: the unit that makes a
    /// BVH skeleton 150-200 cm tall, a glTF's metres; reported on stderr), cm, m, mm, in, cmu
    /// (5.644 cm) or a number of cm. Default auto.
    #[arg(long)]
    pub units: Option<String>,
    /// Most matches printed.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// Only matches scoring at most this (0 = identical; about 1.4 for unrelated motion).
    #[arg(long)]
    pub max_score: Option<f32>,
    /// Weight of a feature group, GROUP=W (repeatable). Groups: foot_position, hand_position,
    /// foot_velocity, hand_velocity, root_velocity, root_turn, trajectory.
    #[arg(long = "weight", value_name = "GROUP=W")]
    pub weights: Vec<String>,
    /// Joint to use for a role, ROLE=NAME (repeatable). Roles: root, left_foot, right_foot,
    /// left_hand, right_hand.
    #[arg(long = "joint", value_name = "ROLE=NAME")]
    pub joints: Vec<String>,
    /// Project: neither read nor write the feature cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Print one JSON object: {"query": {...}, "matches": [{"clip", "start", "stop", "score"}]}.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Serialize)]
struct QueryOut<'a> {
    clip: &'a str,
    /// The file of the clip, over loose files.
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    start: usize,
    stop: usize,
    /// Frames of the query's clip (the query range has `stop - start`).
    frames: usize,
}

#[derive(Debug, Serialize)]
struct MatchOut<'a> {
    clip: &'a str,
    /// The file of the clip, over loose files.
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    start: usize,
    stop: usize,
    score: f32,
}

#[derive(Debug, Serialize)]
struct Report<'a> {
    query: QueryOut<'a>,
    matches: Vec<MatchOut<'a>>,
}

/// What the search runs on, whichever the mode.
struct Prepared {
    names: Vec<String>,
    /// Over loose files, the file of each clip (two files of one stem give `x` and `x_2`, so
    /// the name alone does not say which); empty for a project, whose clip names are its own.
    files: Vec<String>,
    features: Vec<Option<ClipFeatures>>,
    query: Query,
}

/// `START:STOP` as two frame numbers.
fn parse_range(text: &str, what: &str) -> Result<(usize, usize), String> {
    let err = || format!("{what}: expected START:STOP (frame numbers), found {text:?}");
    let (a, b) = text.trim().split_once(':').ok_or_else(err)?;
    let a = a.trim().parse::<usize>().map_err(|_| err())?;
    let b = b.trim().parse::<usize>().map_err(|_| err())?;
    Ok((a, b))
}

/// Checks a query range against a clip of `frames` frames.
fn check_range(clip: &str, start: usize, stop: usize, frames: usize) -> Result<(), String> {
    if start >= stop {
        Err(format!(
            "the range {start}:{stop} is empty; clip `{clip}` has {frames} frames (a range \
             START:STOP needs START < STOP <= {frames})"
        ))
    } else if stop > frames {
        Err(format!(
            "the range {start}:{stop} is outside clip `{clip}`, which has {frames} frames (a range \
             lies within 0:{frames})"
        ))
    } else {
        Ok(())
    }
}

fn parse_pairs(list: &[String], what: &str) -> Result<Vec<(String, String)>, String> {
    list.iter()
        .map(|p| {
            p.split_once('=')
                .map(|(a, b)| (a.trim().to_owned(), b.trim().to_owned()))
                .ok_or_else(|| format!("--{what}: expected NAME=VALUE, found {p:?}"))
        })
        .collect()
}

fn weights_of(args: &FindArgs) -> Result<Weights, String> {
    let mut w = Weights::default();
    for (name, value) in parse_pairs(&args.weights, "weight")? {
        let v = value
            .parse::<f32>()
            .map_err(|_| format!("--weight {name}: expected a number, found {value:?}"))?;
        w.set(&name, v).map_err(|e| format!("--weight: {e}"))?;
    }
    w.validate().map_err(|e| format!("--weight: {e}"))?;
    Ok(w)
}

fn joints_of(args: &FindArgs) -> Result<JointOverrides, String> {
    let mut j = JointOverrides::default();
    for (role, name) in parse_pairs(&args.joints, "joint")? {
        j.set(&role, &name).map_err(|e| format!("--joint: {e}"))?;
    }
    Ok(j)
}

/// An error with its exit code: 1 for input files, 2 for usage.
enum Fail {
    Input(String),
    Usage(String),
}

impl Fail {
    /// A clip's features could not be built (`error`), said as `message`: a `--joint` naming no
    /// joint of the clip is a bad argument (2), anything else a bad file (1).
    fn features(message: String, error: &str) -> Self {
        if crate::core::similar::features::is_override_error(error) {
            Fail::Usage(message)
        } else {
            Fail::Input(message)
        }
    }

    fn exit(self) -> ExitCode {
        match self {
            Fail::Input(e) => super::fail_input(e),
            Fail::Usage(e) => super::fail_usage(e),
        }
    }
}

pub fn find(args: FindArgs) -> ExitCode {
    let usage = |e: String| Fail::Usage(e).exit();
    let weights = match weights_of(&args) {
        Ok(w) => w,
        Err(e) => return usage(e),
    };
    let joints = match joints_of(&args) {
        Ok(j) => j,
        Err(e) => return usage(e),
    };
    if args.top == 0 {
        return usage("--top must be at least 1".to_owned());
    }
    if let Some(s) = args.max_score
        && !(s.is_finite() && s >= 0.0)
    {
        return usage(format!("--max-score must be a number >= 0, found {s}"));
    }
    let prepared = if args.query.is_some() {
        prepare_files(&args, &joints)
    } else {
        prepare_project(&args, &joints)
    };
    let p = match prepared {
        Ok(p) => p,
        Err(f) => return f.exit(),
    };
    let refs: Vec<Option<&ClipFeatures>> = p.features.iter().map(Option::as_ref).collect();
    let index = match SearchIndex::build_sparse(&refs, &weights) {
        Ok(i) => i,
        Err(SearchError::BadFeatures { clip, message }) => {
            return Fail::Input(format!("clip `{}`: {message}", p.names[clip])).exit();
        }
        Err(e) => return usage(e.to_string()),
    };
    let settings = SearchSettings {
        top: args.top,
        max_score: args.max_score,
        ..SearchSettings::default()
    };
    let matches = match index.search(&p.query, &settings) {
        Ok(m) => m,
        Err(e) => return usage(e.to_string()),
    };
    print_report(&args, &p, &index, &matches)
}

fn print_report(args: &FindArgs, p: &Prepared, index: &SearchIndex, matches: &[Match]) -> ExitCode {
    let q = &p.query;
    let qname = p.names[q.clip].as_str();
    let frames = index.frames(q.clip).unwrap_or(0);
    if args.json {
        let report = Report {
            query: QueryOut {
                clip: qname,
                file: p.files.get(q.clip).map(String::as_str),
                start: q.start,
                stop: q.stop,
                frames,
            },
            matches: matches
                .iter()
                .map(|m| MatchOut {
                    clip: &p.names[m.clip],
                    file: p.files.get(m.clip).map(String::as_str),
                    start: m.start,
                    stop: m.stop,
                    score: m.score,
                })
                .collect(),
        };
        match serde_json::to_string_pretty(&report) {
            Ok(text) => super::emit(&format!("{text}\n")),
            Err(e) => return super::fail_input(e),
        }
    } else {
        let width = matches
            .iter()
            .map(|m| crate::core::text::width(&crate::core::text::one_line(&p.names[m.clip])))
            .max()
            .unwrap_or(4)
            .clamp(4, super::MAX_COLUMN_WIDTH);
        let mut text = format!(
            "query: {qname} {}:{} ({} of {frames} frames)\n",
            q.start,
            q.stop,
            q.stop - q.start
        );
        if matches.is_empty() {
            text.push_str("no match\n");
        } else {
            // Over loose files, a last column names each match's file.
            let file_head = if p.files.is_empty() { "" } else { "  file" };
            text.push_str(&format!(
                "{:>4}  {:>6}  {}  {:>13}  {:>6}{file_head}\n",
                "rank",
                "score",
                crate::core::text::pad_right("clip", width),
                "start:stop",
                "frames"
            ));
            for (i, m) in matches.iter().enumerate() {
                let file = p
                    .files
                    .get(m.clip)
                    .map_or(String::new(), |f| format!("  {f}"));
                text.push_str(&format!(
                    "{:>4}  {:>6.3}  {}  {:>13}  {:>6}{file}\n",
                    i + 1,
                    m.score,
                    crate::core::text::pad_right(
                        &crate::core::text::one_line(&p.names[m.clip]),
                        width
                    ),
                    format!("{}:{}", m.start, m.stop),
                    m.stop - m.start
                ));
            }
        }
        super::emit(&text);
    }
    say!(
        "taglane: searched {} clips, {} frames",
        p.features.iter().flatten().count(),
        index.total_frames()
    );
    ExitCode::SUCCESS
}

fn prepare_project(args: &FindArgs, joints: &JointOverrides) -> Result<Prepared, Fail> {
    let usage = |m: &str| Fail::Usage(m.to_owned());
    if let Some(anim) = args
        .inputs
        .iter()
        .find(|p| crate::core::anim::AnimFormat::from_path(p).is_some())
    {
        return Err(Fail::Usage(format!(
            "{}: an animation file; search animation files with --query ANIM:START:STOP",
            anim.display()
        )));
    }
    if args.inputs.len() != 1 {
        return Err(usage(
            "give one project file with --clip and --range, or animation files with --query",
        ));
    }
    if args.units.is_some() {
        return Err(usage(
            "--units applies to animation files given with --query; a project's clips carry their \
             own unit (unit_cm)",
        ));
    }
    let (Some(clip_name), Some(range)) = (&args.clip, &args.range) else {
        return Err(usage(
            "a project search needs --clip NAME and --range START:STOP (or give animation files \
             and --query ANIM:START:STOP)",
        ));
    };
    let (start, stop) = parse_range(range, "--range").map_err(Fail::Usage)?;
    let path = &args.inputs[0];
    let (project, warnings) = Project::load_with_warnings(path).map_err(Fail::Input)?;
    super::report_load_warnings(path, &warnings).map_err(Fail::Input)?;
    let doc = &project.doc;
    let Some(qc) = doc.clip_index(clip_name) else {
        let names: Vec<&str> = doc.clips.iter().take(8).map(|c| c.name.as_str()).collect();
        return Err(Fail::Usage(format!(
            "no clip named `{clip_name}` in {} (it has {} clips: {}{})",
            path.display(),
            doc.clips.len(),
            names.join(", "),
            if doc.clips.len() > names.len() {
                ", ..."
            } else {
                ""
            }
        )));
    };
    let qc = qc as usize;
    // The project's frame count first: a usage error needs no animation loaded.
    check_range(clip_name, start, stop, doc.clips[qc].frames as usize).map_err(Fail::Usage)?;
    let mut options = FeatureOptions::for_project(&project, joints.clone());
    if args.no_cache {
        options.cache_dir = None;
    }
    let jobs = FeatureJob::for_project(&project);
    let query_features = match &jobs[qc] {
        Ok(job) => job_features(job, &options),
        Err(e) => Err(e.clone()),
    }
    .map_err(|e| Fail::features(format!("the query clip `{clip_name}`: {e}"), &e))?;
    // The animation may have another length than the project says.
    check_range(clip_name, start, stop, query_features.0.frames).map_err(Fail::Usage)?;
    let others: Vec<usize> = (0..jobs.len()).filter(|&c| c != qc).collect();
    let built = par_map_with_progress(
        &others,
        |&c| match &jobs[c] {
            Ok(job) => job_features(job, &options),
            Err(e) => Err(e.clone()),
        },
        &|_, _| {},
        &AtomicBool::new(false),
    )
    .map_err(|e| Fail::Input(e.to_string()))?;
    let mut features: Vec<Option<ClipFeatures>> = vec![None; jobs.len()];
    let (mut hits, mut fresh) = (0, 0);
    let mut tally = |o: &CacheOutcome| match o {
        CacheOutcome::Hit => hits += 1,
        CacheOutcome::Built { write_error, .. } => {
            fresh += 1;
            if let Some(e) = write_error {
                say!("taglane: warning: feature cache not written: {e}");
            }
        }
        CacheOutcome::Uncached => fresh += 1,
    };
    tally(&query_features.1);
    features[qc] = Some(query_features.0);
    for (&c, r) in others.iter().zip(built) {
        match r {
            Ok((f, outcome)) => {
                tally(&outcome);
                features[c] = Some(f);
            }
            Err(e) => say!("taglane: skipped clip `{}`: {e}", doc.clips[c].name),
        }
    }
    if options.cache_dir.is_some() {
        say!("taglane: features: {hits} from the cache, {fresh} built");
    }
    Ok(Prepared {
        files: Vec::new(),
        names: doc.clips.iter().map(|c| c.name.clone()).collect(),
        features,
        query: Query {
            clip: qc,
            start,
            stop,
        },
    })
}

/// `ANIM[#NAME]:START:STOP`.
fn parse_query_spec(text: &str) -> Result<(PathBuf, Option<String>, usize, usize), String> {
    let err =
        || format!("--query: expected ANIM:START:STOP or ANIM#NAME:START:STOP, found {text:?}");
    let mut parts = text.rsplitn(3, ':');
    let (Some(stop), Some(start), Some(file)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(err());
    };
    let (start, stop) = parse_range(&format!("{start}:{stop}"), "--query").map_err(|_| err())?;
    if file.is_empty() {
        return Err(err());
    }
    // `#NAME` picks an animation, unless the whole text is a file (`take#1.bvh`).
    let (file, name) = match file.rsplit_once('#') {
        Some((f, n)) if !f.is_empty() && !n.is_empty() && !Path::new(file).is_file() => {
            (f, Some(n.to_owned()))
        }
        _ => (file, None),
    };
    Ok((PathBuf::from(file), name, start, stop))
}

fn prepare_files(args: &FindArgs, joints: &JointOverrides) -> Result<Prepared, Fail> {
    let usage = |m: &str| Fail::Usage(m.to_owned());
    if args.clip.is_some() || args.range.is_some() {
        return Err(usage(
            "--clip and --range are for a project; with animation files the query is --query \
             ANIM:START:STOP",
        ));
    }
    let spec = args.query.as_deref().unwrap_or_default();
    let (qfile, qname, start, stop) = parse_query_spec(spec).map_err(Fail::Usage)?;
    let unit_cm = match args.units.as_deref() {
        None => None,
        Some(u) => super::autotag::parse_units_arg(u).map_err(Fail::Usage)?,
    };
    if let Some(p) = args.inputs.iter().find(|p| {
        p.extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
    }) {
        return Err(Fail::Usage(format!(
            "{}: a project file; search a project with --clip and --range instead of --query",
            p.display()
        )));
    }
    let mut files = args.inputs.clone();
    let qi = match files.iter().position(|f| super::same_file(f, &qfile)) {
        Some(i) => i,
        None => {
            files.push(qfile.clone());
            files.len() - 1
        }
    };
    let options = ImportOptions {
        unit_cm,
        ..ImportOptions::default()
    };
    let mut clips: Vec<Clip> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut clip_file: Vec<usize> = Vec::new();
    let mut query_clip = None;
    for (fi, path) in files.iter().enumerate() {
        let imported = load_animation(path, &options).map_err(|e| Fail::Input(e.to_string()))?;
        let several = imported.clips.len() > 1;
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let anims: Vec<String> = imported.clips.iter().map(|c| c.name.clone()).collect();
        if fi == qi {
            let pick = match &qname {
                Some(n) => anims.iter().position(|a| a == n).ok_or_else(|| {
                    Fail::Usage(format!(
                        "--query: {} has no animation named {n:?} (it has {})",
                        path.display(),
                        anims.join(", ")
                    ))
                })?,
                None if several => {
                    return Err(Fail::Usage(format!(
                        "--query: {} holds {} animations ({}); pick one with ANIM#NAME:START:STOP",
                        path.display(),
                        anims.len(),
                        anims.join(", ")
                    )));
                }
                None => 0,
            };
            query_clip = Some(clips.len() + pick);
        }
        for mut clip in imported.clips {
            if unit_cm.is_none() {
                say!("taglane: {}", super::auto_unit(path, &mut clip));
            }
            let base = if several {
                format!("{stem}/{}", clip.name)
            } else {
                stem.clone()
            };
            let mut name = base.clone();
            let mut k = 2;
            while names.contains(&name) {
                name = format!("{base}_{k}");
                k += 1;
            }
            names.push(name);
            clips.push(clip);
            clip_file.push(fi);
        }
    }
    let Some(qc) = query_clip.filter(|&q| q < clips.len()) else {
        return Err(Fail::Input(format!(
            "{}: no animation to query",
            qfile.display()
        )));
    };
    check_range(&names[qc], start, stop, clips[qc].frame_count).map_err(Fail::Usage)?;
    let built = clips_features_par(&clips, joints, &|_, _| {}, &AtomicBool::new(false))
        .map_err(|e| Fail::Input(e.to_string()))?;
    let mut features = Vec::with_capacity(built.len());
    for (i, r) in built.into_iter().enumerate() {
        match r {
            Ok(f) => features.push(Some(f)),
            Err(e) => {
                let file = &files[clip_file[i]];
                return Err(Fail::features(format!("{}: {e}", file.display()), &e));
            }
        }
    }
    Ok(Prepared {
        files: clip_file
            .iter()
            .map(|&f| files[f].display().to_string())
            .collect(),
        names,
        features,
        query: Query {
            clip: qc,
            start,
            stop,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `#NAME` picks an animation, unless the file's own name has a `#` in it.
    #[test]
    fn query_specs_with_hash() {
        let (f, n, a, b) = parse_query_spec("Fox.glb#Walk:0:30").unwrap();
        assert_eq!(
            (f, n, a, b),
            ("Fox.glb".into(), Some("Walk".to_owned()), 0, 30)
        );
        let dir = std::env::temp_dir().join(format!("taglane-find-hash-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let take = dir.join("take#1.bvh");
        std::fs::write(&take, "x").unwrap();
        let (f, n, _, _) = parse_query_spec(&format!("{}:2:9", take.display())).unwrap();
        assert_eq!((f, n), (take.clone(), None));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
