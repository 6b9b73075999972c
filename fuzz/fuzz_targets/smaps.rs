#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| oslab_fuzz::smaps(data));
