//! The `taglane` command line. Each subcommand is a thin wrapper over a core library call.
//!
//! Exit codes: 0 success, 1 unreadable or invalid input file, 2 bad usage (bad query, unknown tag,
//! bad argument).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// `eprintln!` that shrugs off a stderr it cannot write (a pipe whose reader is gone, as
/// `taglane ... 2>&1 | head -1` leaves it): a message nobody can read is no reason to panic.
/// Defined before the subcommand modules, which use it.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod anim;
mod autotag;
mod compress;
mod cut;
mod find;
mod library;
mod tags;

/// Tag motion-capture takes with frame ranges, query them, preview and compress animation.
#[derive(Debug, Parser)]
#[command(name = "taglane", version, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// A project file to open in the desktop app (without one, the embedded demo opens).
    pub project: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Open a project file in the desktop app.
    Open { project: PathBuf },
    /// Evaluate a tag query over a tag data file.
    Query(tags::QueryArgs),
    /// List the tags of a tag data file with clip and frame counts.
    Tags(tags::TagsArgs),
    /// Describe animation files (BVH, glTF) or compressed clips (.tlc); several: a JSON line each.
    Inspect(anim::InspectArgs),
    /// Import folders of takes into a project (new takes are added, changed ones reported).
    Import(library::ImportArgs),
    /// Sample model-space joint positions of an animation at a time, optionally blended.
    Sample(anim::SampleArgs),
    /// Compress animation clips (BVH, glTF) into the taglane compressed clip format (.tlc).
    Compress(compress::CompressArgs),
    /// Decode a compressed clip back to BVH.
    Decompress(compress::DecompressArgs),
    /// Compare compression settings on one clip, side by side.
    Compare(compress::CompareArgs),
    /// Write a clip in ACL's SJSON clip format.
    ExportAcl(compress::ExportAclArgs),
    /// Write every range a query matches as its own BVH clip into a folder.
    Cut(cut::CutArgs),
    /// Propose tags (foot contacts, locomotion, custom rules) from the motion of animation files.
    Autotag(autotag::AutotagArgs),
    /// Find the moments most similar to a query range, in a project or over animation files.
    Find(find::FindArgs),
}

/// Parses the command line (`args`, the program first), as clap does, after one check clap
/// cannot make: a first word that is neither a subcommand nor an existing file, followed by more
/// arguments or written like a word (no `.` or `/`), is a mistyped subcommand, not a project to
/// open (`taglane inspec`, `taglane inpsect take.bvh`): a usage error naming the nearest
/// subcommand, instead of "cannot read" or a conflict between a project and a subcommand.
pub fn parse(args: Vec<std::ffi::OsString>) -> Result<Cli, ExitCode> {
    use clap::CommandFactory as _;
    if let Some(first) = args.get(1).and_then(|a| a.to_str()) {
        let cmd = Cli::command();
        // `help` is clap's own, added when the command is built.
        let names: Vec<&str> = cmd
            .get_subcommands()
            .flat_map(|c| std::iter::once(c.get_name()).chain(c.get_all_aliases()))
            .chain(["help"])
            .collect();
        let word_like = !first.contains(['.', '/', '\\']);
        if !first.starts_with('-')
            && !names.contains(&first)
            && !std::path::Path::new(first).exists()
            && (args.len() > 2 || word_like)
        {
            let nearest = names
                .iter()
                .map(|n| (edit_distance(first, n), *n))
                .min()
                .filter(|(d, _)| *d <= 2)
                .map(|(_, n)| format!("; did you mean `{n}`?"))
                .unwrap_or_default();
            return Err(fail_usage(format!(
                "unknown subcommand `{first}`{nearest} (`taglane --help` lists them; a project to \
                 open must be an existing file)"
            )));
        }
    }
    Cli::try_parse_from(args).map_err(|e| {
        let _ = e.print();
        ExitCode::from(if e.use_stderr() { 2 } else { 0 })
    })
}

/// Levenshtein distance between two short words (characters inserted, removed or replaced).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let replace = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = replace.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

/// Runs a parsed command line and returns the process exit code.
pub fn run(cli: Cli) -> ExitCode {
    match cli.command {
        None => start_app(cli.project),
        Some(Command::Open { project }) => start_app(Some(project)),
        Some(Command::Query(args)) => tags::query(args),
        Some(Command::Tags(args)) => tags::tags(args),
        Some(Command::Inspect(args)) => anim::inspect(args),
        Some(Command::Import(args)) => library::import(args),
        Some(Command::Sample(args)) => anim::sample(args),
        Some(Command::Compress(args)) => compress::compress(args),
        Some(Command::Decompress(args)) => compress::decompress(args),
        Some(Command::Compare(args)) => compress::compare(args),
        Some(Command::ExportAcl(args)) => compress::export_acl(args),
        Some(Command::Cut(args)) => cut::cut(args),
        Some(Command::Autotag(args)) => autotag::autotag_cmd(args),
        Some(Command::Find(args)) => find::find(args),
    }
}

#[cfg(feature = "ui")]
fn start_app(project: Option<PathBuf>) -> ExitCode {
    match crate::ui::run_app(project) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            say!("taglane: {err}");
            ExitCode::from(1)
        }
    }
}

#[cfg(not(feature = "ui"))]
fn start_app(_project: Option<PathBuf>) -> ExitCode {
    say!(
        "taglane: this build has no desktop app (built without the `ui` feature); use a subcommand, see --help"
    );
    ExitCode::from(2)
}

/// Prints an error for an unreadable or invalid input file and returns exit code 1.
pub(crate) fn fail_input(err: impl std::fmt::Display) -> ExitCode {
    say!("taglane: {err}");
    ExitCode::from(1)
}

/// Parses a query against `doc`'s tags; on an error prints it with a caret under its column and
/// returns exit code 2.
pub(crate) fn parse_query_or_fail(
    doc: &crate::core::tags::TagDocument,
    expr: &str,
) -> Result<crate::core::tags::Query, ExitCode> {
    doc.parse_query(expr).map_err(|e| {
        say!("taglane: query error at {e}");
        say!("  {expr}");
        say!("  {}", e.caret_line_under(expr));
        ExitCode::from(2)
    })
}

/// Widest a table column is padded to, in characters. A longer cell (a long tag or clip name) is
/// printed whole, past its column, instead of every row of the table being padded to its width.
pub(crate) const MAX_COLUMN_WIDTH: usize = 60;

/// Writes `text` to stdout and flushes it, ignoring a closed pipe: `taglane query ... | head -1`
/// must not panic (as `print!` does) when the reader has gone.
pub(crate) fn emit(text: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Prints the warnings of loading the project `file` (each after the file's name), and refuses
/// one whose result would leave clips out: a sidecar project with sidecars that cannot be read
/// (a query, a cut or a search would then answer for the other clips only, with exit code 0).
pub(crate) fn report_load_warnings(
    file: &std::path::Path,
    warnings: &[crate::core::tags::LoadWarning],
) -> Result<(), String> {
    for w in warnings {
        say!("taglane: warning: {}: {w}", file.display());
    }
    let unloaded = warnings
        .iter()
        .filter(|w| crate::core::library::is_unloaded_sidecar(w))
        .count();
    if unloaded > 0 {
        return Err(format!(
            "{}: {unloaded} sidecar(s) or folder(s) cannot be read (listed above), so their \
             clips are not in the project and the result would leave them out; expected every \
             sidecar and folder to read (fix them, rename a sidecar to *.removed to drop its \
             clip, or take a folder out of the project's `folders`)",
            file.display()
        ));
    }
    Ok(())
}

/// Gives `clip`, read from `path` without a unit asked for, the unit `auto` chooses, by the rule
/// of `taglane import` and `inspect` (a BVH skeleton made human-sized, a glTF in the metres of its
/// specification: `core::library::choose_unit`), and returns the line saying what was chosen.
pub(crate) fn auto_unit(path: &std::path::Path, clip: &mut crate::core::anim::Clip) -> String {
    auto_unit_choice(path, clip).0
}

/// [`auto_unit`], and whether the choice is confident (false: the clip should be checked).
pub(crate) fn auto_unit_choice(
    path: &std::path::Path,
    clip: &mut crate::core::anim::Clip,
) -> (String, bool) {
    use crate::core::anim::{AnimFormat, ClipScan};
    let format = AnimFormat::from_path(path).unwrap_or(AnimFormat::Bvh);
    let choice = crate::core::library::choose_unit(
        crate::core::library::UnitSetting::Auto,
        format,
        &ClipScan::of(clip),
    );
    clip.unit_cm = choice.unit_cm;
    // A choice in doubt says so in its reason ("check this clip").
    let reason = choice
        .reason
        .strip_prefix("auto: ")
        .unwrap_or(&choice.reason);
    (
        format!("{}: units: {reason}", path.display()),
        choice.confident,
    )
}

/// `a, b, c`: the paths a command was given, for a message.
pub(crate) fn path_list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// True when the paths name one file (the same path, or the same file once links and `..` are
/// resolved).
pub(crate) fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// Checks that a command writing `what` to `output` from `input` writes over neither its input
/// nor a file of a kind it does not write (`refused`: extensions, lower case, such as a take's
/// `bvh` for a compressed clip): a mistyped `-o` would otherwise replace a take for good.
pub(crate) fn check_output(
    input: &std::path::Path,
    output: &std::path::Path,
    what: &str,
    refused: &[&str],
) -> Result<(), String> {
    if same_file(input, output) {
        return Err(format!(
            "{}: the output is the input file; expected another output path (nothing written)",
            output.display()
        ));
    }
    // The name given, and, through a symbolic link, the file it names: a save replaces that.
    let real = std::fs::canonicalize(output).ok();
    for path in std::iter::once(output).chain(real.as_deref()) {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        if refused.contains(&ext.as_str()) {
            let through = if path == output {
                String::new()
            } else {
                format!(" (a link to {})", path.display())
            };
            return Err(format!(
                "{}{through}: this writes {what}, and a .{ext} file is not one; expected an output with another extension (nothing written)",
                output.display()
            ));
        }
    }
    Ok(())
}

/// Refuses an existing `output` that is not one of this command's own outputs, which it replaces
/// (a `.tlc` compress wrote, an SJSON export-acl wrote): `own` is given the file's first bytes.
/// A project, a take or any other file there is kept: nothing is written.
pub(crate) fn check_replaceable(
    output: &std::path::Path,
    what: &str,
    own: impl Fn(&[u8]) -> bool,
) -> Result<(), String> {
    use std::io::Read as _;
    let Ok(meta) = std::fs::metadata(output) else {
        return Ok(());
    };
    if meta.is_dir() {
        return Err(format!(
            "{}: is a folder; expected a file name for {what} (nothing written)",
            output.display()
        ));
    }
    let mut head = Vec::with_capacity(64);
    let read = std::fs::File::open(output).and_then(|f| f.take(64).read_to_end(&mut head));
    if read.is_err() || !own(&head) {
        return Err(format!(
            "{}: the file exists and is not {what}; expected a new file, or {what} written \
             by taglane to replace (nothing written)",
            output.display()
        ));
    }
    Ok(())
}

/// Prints a usage error and returns exit code 2.
pub(crate) fn fail_usage(err: impl std::fmt::Display) -> ExitCode {
    say!("taglane: {err}");
    ExitCode::from(2)
}
