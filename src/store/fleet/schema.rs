//! The fleet store's schema on PostgreSQL, in its own schema `oslab` (beside whatever else
//! the database holds), and the statements that read and write it.
//!
//! A run is stored as what `oslab export` writes, split where queries need it: the run's row
//! (its identity and the machine fields the fleet view groups by, and the rest as JSON), a
//! row per result (its samples taken out), a row per sample, and a row per configuration with
//! the figure every view of oslab prints for it (the median and interval of
//! `report::pool`), so the fleet view reads no samples.

/// The schema, as ordered steps: step `i` takes `oslab.meta`'s `schema_version` from `i` to
/// `i + 1`. A new step is appended, never an old one edited.
pub(super) const MIGRATIONS: &[&str] = &[SCHEMA_V1, SCHEMA_V2];

pub(super) const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The advisory lock every migration takes (`pg_advisory_lock`): "oslb" and 1. Without
/// it, clients creating the tables at once fail (`CREATE TABLE IF NOT EXISTS` races on the
/// catalog's unique index: 7 of 80 attempts with 8 clients, FINDINGS.md).
pub(super) const MIGRATION_LOCK: i64 = 0x6F73_6C62_0000_0001;

const SCHEMA_V1: &str = r#"
CREATE SCHEMA IF NOT EXISTS oslab;

CREATE TABLE oslab.meta (
    key    text PRIMARY KEY,
    value  text NOT NULL
);
INSERT INTO oslab.meta (key, value) VALUES
    ('application', 'oslab'),
    ('store_id', gen_random_uuid()::text);

CREATE TABLE oslab.runs (
    id             bigserial PRIMARY KEY,
    run_uuid       uuid NOT NULL UNIQUE,
    started_at     double precision,
    finished_at    double precision,
    tag            text,
    oslab_version  text NOT NULL,
    -- HMAC-SHA256 of the machine id (model::identity::machine_hash), never the id itself.
    machine        text,
    hostname       text,
    os             text NOT NULL,
    os_release     text,
    kernel         text,
    arch           text NOT NULL,
    cpu            text,
    pushed_at      timestamptz NOT NULL DEFAULT now(),
    -- The run without its results, as `oslab export` writes it.
    header         jsonb NOT NULL
);
CREATE INDEX runs_by_start ON oslab.runs (started_at, id);
CREATE INDEX runs_by_tag ON oslab.runs (tag, started_at);

CREATE TABLE oslab.results (
    run_id    bigint NOT NULL REFERENCES oslab.runs (id) ON DELETE CASCADE,
    position  integer NOT NULL,
    -- The result without its samples.
    doc       jsonb NOT NULL,
    PRIMARY KEY (run_id, position)
);

CREATE TABLE oslab.samples (
    run_id     bigint NOT NULL,
    position   integer NOT NULL,
    idx        integer NOT NULL,
    ns_per_op  double precision,
    doc        jsonb NOT NULL,
    PRIMARY KEY (run_id, position, idx),
    FOREIGN KEY (run_id, position) REFERENCES oslab.results ON DELETE CASCADE
);

CREATE TABLE oslab.figures (
    run_id      bigint NOT NULL REFERENCES oslab.runs (id) ON DELETE CASCADE,
    position    integer NOT NULL,
    -- experiment, parameters and suite label: what makes two results one configuration.
    config      text NOT NULL,
    name        text NOT NULL,
    experiment  text NOT NULL,
    unit        text NOT NULL,
    status      text NOT NULL,
    processes   integer NOT NULL,
    median      double precision,
    low         double precision,
    high        double precision,
    PRIMARY KEY (run_id, position)
);
CREATE INDEX figures_by_config ON oslab.figures (config);
"#;

/// Schema 2: each run's fingerprint (`store::fingerprint`, as `oslab import` compares runs),
/// so a push of another run under a UUID the store holds is refused instead of taken for the
/// same run. NULL for runs pushed before: the push that meets one reads it back to compare.
const SCHEMA_V2: &str = r#"
ALTER TABLE oslab.runs ADD COLUMN fingerprint text;
"#;

/// Whether there is an `oslab.meta` yet (a query naming a missing table fails as a whole).
pub(super) const HAS_META: &str = "SELECT to_regclass('oslab.meta') IS NOT NULL";

/// Whether `oslab.meta` has oslab's shape: the columns `key` and `value`, both text, and no
/// other. Asked of the catalogue, so a foreign table of any columns answers it.
pub(super) const META_IS_OURS: &str = "SELECT count(*) = 2 AND count(*) FILTER \
     (WHERE column_name IN ('key', 'value') AND data_type = 'text') = 2 \
     FROM information_schema.columns WHERE table_schema = 'oslab' AND table_name = 'meta'";

/// oslab writes `application` = `oslab` in the transaction that creates `oslab.meta`.
pub(super) const READ_APPLICATION: &str = "SELECT value FROM oslab.meta WHERE key = 'application'";

pub(super) const READ_VERSION: &str = "SELECT value FROM oslab.meta WHERE key = 'schema_version'";

pub(super) const META: &str = "SELECT key, value FROM oslab.meta \
     WHERE key IN ('application', 'store_id')";

pub(super) const SET_VERSION: &str = "INSERT INTO oslab.meta (key, value) \
     VALUES ('schema_version', $1) \
     ON CONFLICT (key) DO UPDATE SET value = excluded.value";

// --- writing ---

/// Nothing when the run is there already (pushed by this machine or another): the UNIQUE
/// constraint decides, also between two clients pushing the same run at once.
pub(super) const INSERT_RUN: &str = "INSERT INTO oslab.runs (run_uuid, started_at, \
     finished_at, tag, oslab_version, machine, hostname, os, os_release, kernel, arch, cpu, \
     header, fingerprint) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, \
     $14) ON CONFLICT (run_uuid) DO NOTHING RETURNING id";

/// The run of a UUID and its fingerprint (NULL when pushed before schema 2).
pub(super) const FIND_RUN: &str = "SELECT id, fingerprint FROM oslab.runs WHERE run_uuid = $1";

/// A fingerprint found by reading a run pushed before schema 2, kept for the next push.
pub(super) const SET_FINGERPRINT: &str =
    "UPDATE oslab.runs SET fingerprint = $2 WHERE id = $1 AND fingerprint IS NULL";

pub(super) const COPY_RESULTS: &str =
    "COPY oslab.results (run_id, position, doc) FROM STDIN (FORMAT binary)";

pub(super) const COPY_SAMPLES: &str = "COPY oslab.samples (run_id, position, idx, ns_per_op, \
     doc) FROM STDIN (FORMAT binary)";

pub(super) const COPY_FIGURES: &str = "COPY oslab.figures (run_id, position, config, name, \
     experiment, unit, status, processes, median, low, high) FROM STDIN (FORMAT binary)";

// --- reading ---

pub(super) const SELECT_HEADER: &str = "SELECT header FROM oslab.runs WHERE id = $1";

pub(super) const SELECT_RESULTS: &str =
    "SELECT doc FROM oslab.results WHERE run_id = $1 ORDER BY position";

pub(super) const SELECT_SAMPLES: &str =
    "SELECT position, doc FROM oslab.samples WHERE run_id = $1 ORDER BY position, idx";

pub(super) const LATEST_RUN: &str =
    "SELECT id FROM oslab.runs ORDER BY started_at DESC NULLS LAST, id DESC LIMIT 1";

pub(super) const LATEST_RUN_WITH_TAG: &str = "SELECT id FROM oslab.runs WHERE tag = $1 \
     ORDER BY started_at DESC NULLS LAST, id DESC LIMIT 1";

pub(super) const RUN_BY_UUID: &str = "SELECT id FROM oslab.runs WHERE run_uuid::text = $1";

pub(super) const LIST_RUNS: &str = "SELECT r.id, r.started_at, r.finished_at, r.tag, \
     (SELECT count(*) FROM oslab.results s WHERE s.run_id = r.id), r.hostname, r.kernel \
     FROM oslab.runs r ORDER BY r.started_at NULLS FIRST, r.id";

/// Every configuration's figure with the fields of its run the fleet view groups by.
pub(super) const FLEET_FIGURES: &str = "SELECT r.id, r.run_uuid::text, r.machine, r.hostname, \
     r.os, r.kernel, r.cpu, r.arch, r.tag, f.config, f.name, f.unit, f.status, f.median \
     FROM oslab.figures f JOIN oslab.runs r ON r.id = f.run_id \
     ORDER BY f.config, r.id";
