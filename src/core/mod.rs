//! The core: tags, animation, compression and file formats. Never imports egui, eframe or rfd.

pub mod anim;
pub mod autotag;
pub mod compress;
pub mod cut;
pub mod demo;
pub mod doc;
pub mod io;
pub mod json;
pub mod library;
pub mod limits;
pub mod names;
pub mod project;
pub mod rng;
pub mod settings;
pub mod similar;
pub mod source;
pub mod stress;
pub mod tags;
pub mod text;
