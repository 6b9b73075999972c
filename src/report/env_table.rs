//! `oslab env` as aligned text.

use crate::env::Environment;

pub fn render(env: &Environment) -> String {
    format!("{env:#?}\n")
}
