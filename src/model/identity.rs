//! Identities that travel with a run: its UUID, and the hashed id of the machine that
//! measured it (what the fleet store groups a machine's runs by).

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// A new run's identity: a random (version 4) UUID, hyphenated and lower-case.
pub fn new_run_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The identity of a run that has none (a document exported before runs had UUIDs, a row
/// stored before schema 6): a version 8 UUID made of its 128-bit fingerprint (32 hex digits).
/// The same run gives the same UUID on every machine, so it cannot be stored twice in a fleet.
pub fn run_uuid_from_fingerprint(fingerprint: &str) -> Option<String> {
    let value = u128::from_str_radix(fingerprint, 16).ok()?;
    Some(uuid::Uuid::new_v8(value.to_be_bytes()).to_string())
}

/// `text` is a UUID in the form oslab writes (hyphenated, lower-case).
pub fn is_run_uuid(text: &str) -> bool {
    uuid::Uuid::try_parse(text).is_ok_and(|u| u.to_string() == text)
}

/// What is stored of a machine id (`/etc/machine-id`, FreeBSD's hostid, Windows'
/// MachineGuid): HMAC-SHA256 keyed by the id over "oslab", the first 16 bytes in hex — the
/// scheme of systemd's `sd_id128_get_machine_app_specific()`. machine-id(5) asks that the id
/// itself not leave the machine; this tells two machines apart without revealing either.
pub fn machine_hash(machine_id: &str) -> Option<String> {
    let id = machine_id.trim();
    if id.is_empty() {
        return None;
    }
    let mut mac = Hmac::<Sha256>::new_from_slice(id.as_bytes()).ok()?;
    mac.update(b"oslab");
    let digest = mac.finalize().into_bytes();
    Some(digest.iter().take(16).map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_canonical_and_derived_ones_stable() {
        let a = new_run_uuid();
        assert!(is_run_uuid(&a), "{a}");
        assert_ne!(a, new_run_uuid());
        let fp = "0123456789abcdef0123456789abcdef";
        let d = run_uuid_from_fingerprint(fp).unwrap();
        assert_eq!(d, run_uuid_from_fingerprint(fp).unwrap());
        assert!(is_run_uuid(&d));
        assert_eq!(&d[14..15], "8", "version 8: {d}");
        assert_eq!(run_uuid_from_fingerprint("not hex"), None);
        assert!(!is_run_uuid("0123"));
        assert!(!is_run_uuid(&a.to_uppercase()));
    }

    #[test]
    fn machine_hash_hides_the_id_and_tells_machines_apart() {
        // Checked with `printf oslab | openssl dgst -sha256 -hmac 0123456789abcdef0123456789abcdef`
        // (the id's trailing newline is not part of the key).
        let h = machine_hash("0123456789abcdef0123456789abcdef\n").unwrap();
        assert_eq!(h, "048f672b17ab6e08bc891ee33eb278f1");
        assert!(!h.contains("0123456789abcdef"));
        assert_ne!(h, machine_hash("fedcba9876543210fedcba9876543210").unwrap());
        assert_eq!(machine_hash("  \n"), None);
    }
}
