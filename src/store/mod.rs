//! The results database.
