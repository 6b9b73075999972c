//! What differs between two runs besides their figures: the machine (environment) and the
//! settings, each flattened to dotted fields and compared field by field.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::model::Run;

/// Environment fields left out of the environment diff: they change from one second to the
/// next on the same machine (free memory, the CPU frequency read at that instant), so a
/// difference says nothing about whether the comparison is fair.
pub const VOLATILE_ENV_FIELDS: [&str; 2] = ["mem_available_bytes", "cpu_mhz"];
/// Settings left out of the settings diff: the command line (it always differs, if only by
/// the tag), the file experiments' directory (a temporary path) and why the CPU was chosen
/// (it quotes interrupt counts, which grow between any two runs; the CPU itself is `cpus`).
pub const IGNORED_SETTINGS: [&str; 3] = ["argv", "dir", "cpu_choice"];

/// One field that differs between the runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldDiff {
    pub field: String,
    pub a: Option<String>,
    pub b: Option<String>,
}

/// The environment fields shown first when they differ: the system, its kernel and its C
/// library, which decide what an experiment calls at all.
pub const SYSTEM_FIELDS: [&str; 5] = [
    "os",
    "os_release",
    "kernel_release",
    "kernel_version",
    "libc_version",
];

/// The machine descriptions compared, without the fields that change from second to second:
/// the system's fields first ([`SYSTEM_FIELDS`]), then the rest by name.
pub fn environment_diff(a: &Run, b: &Run) -> Vec<FieldDiff> {
    let mut diff = diff_values(
        &serde_json::to_value(&a.environment).unwrap_or(Value::Null),
        &serde_json::to_value(&b.environment).unwrap_or(Value::Null),
        &VOLATILE_ENV_FIELDS,
    );
    // Stable: the fields keep their order within each part.
    diff.sort_by_key(|d| {
        SYSTEM_FIELDS
            .iter()
            .position(|f| *f == d.field)
            .unwrap_or(SYSTEM_FIELDS.len())
    });
    diff
}

/// The run settings plus the clock source and the recorded oslab version: what the user chose
/// or what oslab chose for them.
pub fn settings_diff(a: &Run, b: &Run) -> Vec<FieldDiff> {
    let doc = |r: &Run| {
        let mut v = serde_json::to_value(&r.settings).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut v {
            m.insert("clock_source".into(), Value::String(r.clock.source.clone()));
        }
        v
    };
    diff_values(&doc(a), &doc(b), &IGNORED_SETTINGS)
}

/// Flatten a JSON document to dotted keys: nested objects and maps become `parent.child`,
/// arrays of objects `parent.0.child`, arrays of plain values one comma-separated value;
/// `null` fields are absent.
pub fn flatten(value: &Value) -> BTreeMap<String, String> {
    fn walk(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
        let key = |k: &str| {
            if prefix.is_empty() {
                k.to_string()
            } else {
                format!("{prefix}.{k}")
            }
        };
        match v {
            Value::Null => {}
            Value::Object(m) => {
                for (k, v) in m {
                    walk(&key(k), v, out);
                }
            }
            Value::Array(items) if items.iter().any(|i| i.is_object() || i.is_array()) => {
                for (i, item) in items.iter().enumerate() {
                    walk(&key(&i.to_string()), item, out);
                }
            }
            Value::Array(items) => {
                let text: Vec<String> = items.iter().map(scalar).collect();
                out.insert(prefix.to_string(), text.join(","));
            }
            other => {
                out.insert(prefix.to_string(), scalar(other));
            }
        }
    }
    fn scalar(v: &Value) -> String {
        match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
    let mut out = BTreeMap::new();
    walk("", value, &mut out);
    out
}

/// Every flattened field whose value differs (or exists on one side only), sorted by name;
/// fields whose top-level name is in `skip` are left out.
pub fn diff_values(a: &Value, b: &Value, skip: &[&str]) -> Vec<FieldDiff> {
    let (fa, fb) = (flatten(a), flatten(b));
    let skipped = |k: &str| skip.contains(&k.split('.').next().unwrap_or(k));
    let mut keys: Vec<&String> = fa.keys().chain(fb.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| !skipped(k) && fa.get(*k) != fb.get(*k))
        .map(|k| FieldDiff {
            field: k.clone(),
            a: fa.get(k).cloned(),
            b: fb.get(k).cloned(),
        })
        .collect()
}
