//! placeholder module, filled in by its issue.
