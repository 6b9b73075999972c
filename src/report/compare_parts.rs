//! The parts of `oslab compare` after its table of experiments, as values ([`ComparePart`]):
//! each sets one kind of figure both runs measured side by side (scaling curves, reclaim
//! counters), in text and in JSON, and is left out where the runs have none in common.
//! `oslab compare` shows them all, in [`PARTS`]'s order: adding one is its function pair
//! and one line there.

use serde_json::Value;

use super::{reclaim, scaling};
use crate::model::Run;

/// One part of the comparison of run `a` with run `b`, with the noise band `compare` uses.
pub struct ComparePart {
    /// Its key in `compare --json`'s document (absent when its array is empty).
    pub key: &'static str,
    /// Its text (empty when there is nothing to compare).
    pub text: fn(&Run, &Run, f64) -> String,
    /// Its JSON: an array, empty when there is nothing to compare.
    pub json: fn(&Run, &Run, f64) -> Value,
}

/// The parts, in the order they are shown.
pub const PARTS: &[ComparePart] = &[
    ComparePart {
        key: "scaling",
        text: |a, b, _| scaling::compare_section(a, b),
        json: |a, b, _| scaling::compare_document(a, b),
    },
    ComparePart {
        key: "reclaim",
        text: reclaim::compare_section,
        json: reclaim::compare_document,
    },
];

/// Every part that has something to compare, into `doc` (an object) under its key.
pub fn add_to(doc: &mut Value, a: &Run, b: &Run, noise: f64) {
    for part in PARTS {
        let value = (part.json)(a, b, noise);
        if value.as_array().is_some_and(|v| !v.is_empty())
            && let Some(map) = doc.as_object_mut()
        {
            map.insert(part.key.into(), value);
        }
    }
}

/// Every part's text, in order.
pub fn text(a: &Run, b: &Run, noise: f64) -> String {
    PARTS.iter().map(|part| (part.text)(a, b, noise)).collect()
}
