//! Whether a bench binary measures or only checks that it works.
//!
//! `cargo bench` passes `--bench`; `cargo test --benches` (the test command) runs each bench binary
//! without it, in an unoptimised build, and criterion then runs every benchmark once. The benches
//! use this to shrink their generated inputs in that mode: the code paths are the same, the sizes
//! are not, so the test command stays quick. Figures only ever come from `cargo bench`.

/// True when the bench measures (`cargo bench`).
pub fn measuring() -> bool {
    std::env::args().any(|a| a == "--bench")
}
