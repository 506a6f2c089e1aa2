//! Guessing a clip's length unit from the size of its skeleton. The code lives in
//! [`crate::core::anim::units`] (the library import uses it too); re-exported here.

pub use crate::core::anim::units::{
    CMU_CM_PER_UNIT, HEIGHT_SAMPLES, HUMAN_HEIGHT_CM, UNIT_CANDIDATES, UnitGuess, guess_unit,
    guess_unit_from_height, standing_height_units,
};
