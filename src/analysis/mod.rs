//! Pure statistics over samples: no file, terminal or clock access in here.
