//! Every SQL statement the store runs, in one place: the migrations that build the schema and
//! the queries that read and write it. The Rust side (`write.rs`, `read.rs`) only binds
//! parameters and maps rows, so a reader checking a column name or an index finds it here.

/// `PRAGMA application_id` of an oslab database: "oslb" in ASCII. It lets `file(1)` and oslab
/// itself tell our databases from other programs' SQLite files (sqlite.org/fileformat2.html,
/// "Application ID").
pub(super) const APPLICATION_ID: i32 = 0x6F73_6C62;

/// The schema, as ordered steps: step `i` (0-based) takes `PRAGMA user_version` from `i` to
/// `i + 1`. A new schema is a new step appended here, never an edit of an old one, because
/// databases already written with the old step exist on users' disks.
pub(super) const MIGRATIONS: &[&str] = &[
    SCHEMA_V1, SCHEMA_V2, SCHEMA_V3, SCHEMA_V4, SCHEMA_V5, SCHEMA_V6, SCHEMA_V7,
];

/// The newest schema this build reads and writes.
pub(super) const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Run on every connection: foreign keys are off by default in SQLite, per connection
/// (sqlite.org/foreignkeys.html), and without them the cascades below do nothing.
pub(super) const CONNECTION_SETUP: &str = "PRAGMA foreign_keys = ON;";

/// What `open` reads before it writes anything. Reading `sqlite_schema` is what makes SQLite
/// look at the file header, so a file that is not a database fails here (SQLITE_NOTADB) and
/// not later, in the middle of a migration.
pub(super) const INSPECT: &str = "SELECT (SELECT application_id FROM pragma_application_id), \
            (SELECT user_version FROM pragma_user_version), \
            (SELECT count(*) FROM sqlite_schema)";

/// Schema 1.
///
/// Notes on the column types:
/// - Integers that are `u64` in the model (`ops`, counter counts) are stored as INTEGER, which
///   SQLite caps at 2^63 - 1; the writer refuses larger values instead of wrapping them.
/// - SQLite stores a NaN REAL as NULL. Columns for `f64` fields that are not `Option` are
///   therefore nullable (even `runs.started_at`), and the reader turns NULL back into NaN, so
///   a NaN round-trips instead of failing a NOT NULL constraint and losing the experiment.
/// - Every other `f64` keeps its exact bits in a REAL column, except that -0.0 reads back as
///   0.0: SQLite stores an integral REAL as an integer on disk, and integer zero has no sign.
///   The two compare equal, and no timing or count means anything different by the sign.
/// - Lists and maps whose shape belongs to the model rather than to queries (parameters,
///   pinned CPUs, run settings, the environment) are JSON text.
/// - `status` and `stop_reason` carry no CHECK constraint: SQLite cannot alter a CHECK without
///   rebuilding the table, and the reader already refuses an unknown value.
const SCHEMA_V1: &str = r#"
CREATE TABLE environments (
    id    INTEGER PRIMARY KEY,
    -- FNV-1a 64 of `json`, as 16 hex digits: finds a candidate duplicate without an index
    -- over the whole JSON text; equality of `json` decides.
    hash  TEXT NOT NULL,
    json  TEXT NOT NULL
);
CREATE INDEX environments_by_hash ON environments (hash);

CREATE TABLE runs (
    id                   INTEGER PRIMARY KEY,
    started_at           REAL,
    finished_at          REAL,
    tag                  TEXT,
    oslab_version        TEXT NOT NULL,
    settings             TEXT NOT NULL,
    clock_source         TEXT NOT NULL,
    clock_reason         TEXT NOT NULL,
    clock_tsc_hz         REAL,
    clock_overhead_ns    REAL,
    clock_resolution_ns  REAL,
    -- RESTRICT, not CASCADE: removing a machine description must never remove measurements.
    environment_id       INTEGER NOT NULL REFERENCES environments (id) ON DELETE RESTRICT
);
CREATE INDEX runs_by_environment ON runs (environment_id);
CREATE INDEX runs_by_start ON runs (started_at);
CREATE INDEX runs_by_tag ON runs (tag, started_at);

CREATE TABLE results (
    id                 INTEGER PRIMARY KEY,
    run_id             INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    position           INTEGER NOT NULL,
    experiment         TEXT NOT NULL,
    params             TEXT NOT NULL,
    unit               TEXT NOT NULL,
    status             TEXT NOT NULL,
    reason             TEXT,
    stop_reason        TEXT,
    ops_per_sample     INTEGER NOT NULL,
    timer_overhead_ns  REAL,
    loop_overhead_ns   REAL,
    baseline_ns        REAL,
    other_cpus_busy    REAL,
    warmup_ns          REAL,
    cpus               TEXT NOT NULL,
    started_at         REAL,
    duration_s         REAL,
    UNIQUE (run_id, position)
);
CREATE INDEX results_by_experiment ON results (experiment);

CREATE TABLE samples (
    result_id   INTEGER NOT NULL REFERENCES results (id) ON DELETE CASCADE,
    idx         INTEGER NOT NULL,
    ops         INTEGER NOT NULL,
    elapsed_ns  REAL,
    ns_per_op   REAL,
    utime_us    INTEGER NOT NULL,
    stime_us    INTEGER NOT NULL,
    maxrss_kb   INTEGER NOT NULL,
    minflt      INTEGER NOT NULL,
    majflt      INTEGER NOT NULL,
    inblock     INTEGER NOT NULL,
    oublock     INTEGER NOT NULL,
    nvcsw       INTEGER NOT NULL,
    nivcsw      INTEGER NOT NULL,
    PRIMARY KEY (result_id, idx)
) WITHOUT ROWID;

CREATE TABLE sample_counters (
    result_id   INTEGER NOT NULL,
    sample_idx  INTEGER NOT NULL,
    name        TEXT NOT NULL,
    value       REAL,
    raw         INTEGER NOT NULL,
    enabled_ns  INTEGER NOT NULL,
    running_ns  INTEGER NOT NULL,
    PRIMARY KEY (result_id, sample_idx, name),
    FOREIGN KEY (result_id, sample_idx) REFERENCES samples (result_id, idx) ON DELETE CASCADE
) WITHOUT ROWID;

-- getrusage-shaped figures of other tasks over a sample: `partner` (the other process of a
-- two-process experiment, read by the platform layer) and `children` (RUSAGE_CHILDREN delta).
CREATE TABLE sample_rusage (
    result_id   INTEGER NOT NULL,
    sample_idx  INTEGER NOT NULL,
    who         TEXT NOT NULL CHECK (who IN ('partner', 'children')),
    utime_us    INTEGER NOT NULL,
    stime_us    INTEGER NOT NULL,
    maxrss_kb   INTEGER NOT NULL,
    minflt      INTEGER NOT NULL,
    majflt      INTEGER NOT NULL,
    inblock     INTEGER NOT NULL,
    oublock     INTEGER NOT NULL,
    nvcsw       INTEGER NOT NULL,
    nivcsw      INTEGER NOT NULL,
    PRIMARY KEY (result_id, sample_idx, who),
    FOREIGN KEY (result_id, sample_idx) REFERENCES samples (result_id, idx) ON DELETE CASCADE
) WITHOUT ROWID;

CREATE TABLE counter_status (
    result_id  INTEGER NOT NULL REFERENCES results (id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    name       TEXT NOT NULL,
    supported  INTEGER NOT NULL,
    reason     TEXT,
    PRIMARY KEY (result_id, position)
) WITHOUT ROWID;

CREATE TABLE probe_counts (
    result_id   INTEGER NOT NULL REFERENCES results (id) ON DELETE CASCADE,
    position    INTEGER NOT NULL,
    name        TEXT NOT NULL,
    ops         INTEGER NOT NULL,
    value       REAL,
    raw         INTEGER NOT NULL,
    enabled_ns  INTEGER NOT NULL,
    running_ns  INTEGER NOT NULL,
    PRIMARY KEY (result_id, position)
) WITHOUT ROWID;

CREATE TABLE validations (
    result_id   INTEGER NOT NULL REFERENCES results (id) ON DELETE CASCADE,
    position    INTEGER NOT NULL,
    check_name  TEXT NOT NULL,
    ok          INTEGER NOT NULL,
    detail      TEXT NOT NULL,
    PRIMARY KEY (result_id, position)
) WITHOUT ROWID;

-- Runs brought in by `oslab import`, by the fingerprint of the exported run (FNV-1a 128 of
-- its canonical JSON with the id left out, 32 hex digits): importing the same file again
-- finds it here instead of storing the run twice.
CREATE TABLE imports (
    fingerprint  TEXT PRIMARY KEY,
    run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE
);
CREATE INDEX imports_by_run ON imports (run_id);
"#;
/// Schema 2: a suite's name for a configuration (`label`), the background load a result ran
/// beside with what it recorded (`load`, JSON of `model::LoadRecord`), and the figures an
/// experiment measured besides its timed operation (`result_facts`, see `model::Fact`).
const SCHEMA_V2: &str = r#"
ALTER TABLE results ADD COLUMN label TEXT;
ALTER TABLE results ADD COLUMN load TEXT;

CREATE TABLE result_facts (
    result_id  INTEGER NOT NULL REFERENCES results (id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    name       TEXT NOT NULL,
    value      REAL,
    unit       TEXT NOT NULL,
    note       TEXT NOT NULL,
    PRIMARY KEY (result_id, position)
) WITHOUT ROWID;
"#;

/// Schema 3: the medians of the same configuration in the store's earlier runs on the same
/// machine, as a JSON array (NULL when there were none), which floor the interval a rerun
/// falls in. Stored with the result rather than looked up when shown, so a run's interval
/// stays what it was when measured, after export and import too.
const SCHEMA_V3: &str = r#"
ALTER TABLE results ADD COLUMN earlier_medians TEXT;
"#;

/// Schema 4: profiles (`oslab profile`, `model::profile`). A result has at most one; its
/// folded stacks are rows of their own, so a store reads one experiment's stacks without the
/// others'. `batch_ns_per_op` is a JSON array; `problem` is NULL when nothing went wrong.
const SCHEMA_V4: &str = r#"
CREATE TABLE profiles (
    result_id        INTEGER PRIMARY KEY REFERENCES results (id) ON DELETE CASCADE,
    event            TEXT NOT NULL,
    frequency_hz     INTEGER NOT NULL,
    lost             INTEGER NOT NULL,
    batch_ns_per_op  TEXT NOT NULL,
    problem          TEXT
);

CREATE TABLE profile_stacks (
    result_id  INTEGER NOT NULL REFERENCES profiles (result_id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    stack      TEXT NOT NULL,
    count      INTEGER NOT NULL,
    PRIMARY KEY (result_id, position)
) WITHOUT ROWID;
"#;

/// Schema 5: the user-mode emulator a result was measured under (NULL on native hardware),
/// which decides which of its expectations are checked when it is pooled again.
const SCHEMA_V5: &str = r#"
ALTER TABLE results ADD COLUMN emulation TEXT;
"#;

/// Schema 6: every run's identity (`uuid`, see `model::identity`), unique in the file, and the
/// fleet stores each run was pushed to (`pushes.store` is the server's own id, never its URL:
/// no host, user or password is kept here). The newest step is followed by
/// `open::fill_run_uuids`, which gives the runs already stored the UUID of their fingerprint
/// (reading a run whole needs every step's columns).
const SCHEMA_V6: &str = r#"
ALTER TABLE runs ADD COLUMN uuid TEXT;
CREATE UNIQUE INDEX runs_by_uuid ON runs (uuid);

CREATE TABLE pushes (
    run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    store      TEXT NOT NULL,
    pushed_at  REAL NOT NULL,
    PRIMARY KEY (run_id, store)
) WITHOUT ROWID;
"#;

/// Schema 7: the medians of the earlier runs left out of `earlier_medians` for a slow kernel
/// phase of the host as long as the run (`model::ExperimentResult::earlier_slow_medians`),
/// and the kernel canaries of those kept (`earlier_kernel_canaries`), as JSON arrays (NULL
/// when empty).
const SCHEMA_V7: &str = r#"
ALTER TABLE results ADD COLUMN earlier_slow_medians TEXT;
ALTER TABLE results ADD COLUMN earlier_kernel_canaries TEXT;
"#;

pub(super) const RUNS_WITHOUT_UUID: &str = "SELECT id FROM runs WHERE uuid IS NULL ORDER BY id";

pub(super) const SET_RUN_UUID: &str = "UPDATE runs SET uuid = ?2 WHERE id = ?1";

pub(super) const FIND_RUN_UUID: &str = "SELECT id FROM runs WHERE uuid = ?1";

pub(super) const RECORD_PUSH: &str =
    "INSERT OR REPLACE INTO pushes (run_id, store, pushed_at) VALUES (?1, ?2, ?3)";

/// Runs not yet pushed to store ?1, oldest first.
pub(super) const RUNS_NOT_PUSHED: &str = "SELECT id FROM runs r WHERE NOT EXISTS \
     (SELECT 1 FROM pushes p WHERE p.run_id = r.id AND p.store = ?1) ORDER BY started_at, id";

// Every foreign key above is the leading column(s) of a primary key, a UNIQUE constraint or
// an index, so a cascade or a per-result lookup never scans a whole table.

// --- writing ---

pub(super) const FIND_ENVIRONMENT: &str =
    "SELECT id FROM environments WHERE hash = ?1 AND json = ?2 ORDER BY id LIMIT 1";

pub(super) const INSERT_ENVIRONMENT: &str = "INSERT INTO environments (hash, json) VALUES (?1, ?2)";

pub(super) const INSERT_RUN: &str = "INSERT INTO runs (started_at, finished_at, tag, \
     oslab_version, settings, clock_source, clock_reason, clock_tsc_hz, clock_overhead_ns, \
     clock_resolution_ns, environment_id, uuid) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";

pub(super) const RUN_EXISTS: &str = "SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?1)";

pub(super) const NEXT_POSITION: &str =
    "SELECT COALESCE(MAX(position) + 1, 0) FROM results WHERE run_id = ?1";

pub(super) const INSERT_RESULT: &str = "INSERT INTO results (run_id, position, experiment, \
     params, unit, status, reason, stop_reason, ops_per_sample, timer_overhead_ns, \
     loop_overhead_ns, warmup_ns, cpus, started_at, duration_s, baseline_ns, other_cpus_busy, \
     label, load, earlier_medians, emulation, earlier_slow_medians, earlier_kernel_canaries) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, \
     ?19, ?20, ?21, ?22, ?23)";

pub(super) const INSERT_SAMPLE: &str = "INSERT INTO samples (result_id, idx, ops, elapsed_ns, \
     ns_per_op, utime_us, stime_us, maxrss_kb, minflt, majflt, inblock, oublock, nvcsw, nivcsw) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)";

pub(super) const INSERT_SAMPLE_COUNTER: &str = "INSERT INTO sample_counters (result_id, \
     sample_idx, name, value, raw, enabled_ns, running_ns) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";

pub(super) const INSERT_SAMPLE_RUSAGE: &str = "INSERT INTO sample_rusage (result_id, \
     sample_idx, who, utime_us, stime_us, maxrss_kb, minflt, majflt, inblock, oublock, nvcsw, \
     nivcsw) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";

pub(super) const INSERT_COUNTER_STATUS: &str = "INSERT INTO counter_status (result_id, \
     position, name, supported, reason) VALUES (?1, ?2, ?3, ?4, ?5)";

pub(super) const INSERT_PROBE_COUNT: &str = "INSERT INTO probe_counts (result_id, position, \
     name, ops, value, raw, enabled_ns, running_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

pub(super) const INSERT_VALIDATION: &str = "INSERT INTO validations (result_id, position, \
     check_name, ok, detail) VALUES (?1, ?2, ?3, ?4, ?5)";

pub(super) const INSERT_FACT: &str = "INSERT INTO result_facts (result_id, position, name, \
     value, unit, note) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";

pub(super) const INSERT_PROFILE: &str = "INSERT INTO profiles (result_id, event, \
     frequency_hz, lost, batch_ns_per_op, problem) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";

pub(super) const INSERT_PROFILE_STACK: &str = "INSERT INTO profile_stacks (result_id, \
     position, stack, count) VALUES (?1, ?2, ?3, ?4)";

pub(super) const FINISH_RUN: &str = "UPDATE runs SET finished_at = ?2 WHERE id = ?1";

pub(super) const FIND_IMPORT: &str = "SELECT run_id FROM imports WHERE fingerprint = ?1";

pub(super) const INSERT_IMPORT: &str = "INSERT INTO imports (fingerprint, run_id) VALUES (?1, ?2)";

/// Local runs that could be the same as an imported one: a run keeps its start time through
/// export and import, so only these need their fingerprint computed.
pub(super) const RUNS_STARTED_AT: &str = "SELECT id FROM runs WHERE started_at = ?1 ORDER BY id";

// --- reading ---

pub(super) const SELECT_RUN: &str = "SELECT r.id, r.started_at, r.finished_at, r.tag, \
     r.oslab_version, r.settings, r.clock_source, r.clock_reason, r.clock_tsc_hz, \
     r.clock_overhead_ns, r.clock_resolution_ns, e.json, r.uuid \
     FROM runs r JOIN environments e ON e.id = r.environment_id WHERE r.id = ?1";

pub(super) const SELECT_RESULTS: &str = "SELECT id, experiment, params, unit, status, reason, \
     stop_reason, ops_per_sample, timer_overhead_ns, loop_overhead_ns, warmup_ns, cpus, \
     started_at, duration_s, baseline_ns, other_cpus_busy, label, load, earlier_medians, \
     emulation, earlier_slow_medians, earlier_kernel_canaries \
     FROM results \
     WHERE run_id = ?1 ORDER BY position";

pub(super) const SELECT_SAMPLES: &str = "SELECT idx, ops, elapsed_ns, ns_per_op, utime_us, \
     stime_us, maxrss_kb, minflt, majflt, inblock, oublock, nvcsw, nivcsw \
     FROM samples WHERE result_id = ?1 ORDER BY idx";

pub(super) const SELECT_SAMPLE_COUNTERS: &str = "SELECT sample_idx, name, value, raw, \
     enabled_ns, running_ns FROM sample_counters WHERE result_id = ?1 \
     ORDER BY sample_idx, name";

pub(super) const SELECT_SAMPLE_RUSAGE: &str = "SELECT sample_idx, who, utime_us, stime_us, \
     maxrss_kb, minflt, majflt, inblock, oublock, nvcsw, nivcsw FROM sample_rusage \
     WHERE result_id = ?1 ORDER BY sample_idx, who";

pub(super) const SELECT_COUNTER_STATUS: &str = "SELECT name, supported, reason \
     FROM counter_status WHERE result_id = ?1 ORDER BY position";

pub(super) const SELECT_PROBE_COUNTS: &str = "SELECT name, ops, value, raw, enabled_ns, \
     running_ns FROM probe_counts WHERE result_id = ?1 ORDER BY position";

pub(super) const SELECT_VALIDATIONS: &str = "SELECT check_name, ok, detail \
     FROM validations WHERE result_id = ?1 ORDER BY position";

pub(super) const SELECT_FACTS: &str = "SELECT name, value, unit, note \
     FROM result_facts WHERE result_id = ?1 ORDER BY position";

pub(super) const SELECT_PROFILE: &str = "SELECT event, frequency_hz, lost, batch_ns_per_op, \
     problem FROM profiles WHERE result_id = ?1";

pub(super) const SELECT_PROFILE_STACKS: &str = "SELECT stack, count FROM profile_stacks \
     WHERE result_id = ?1 ORDER BY position";

/// "Latest" means the most recently started, so a run imported from another machine after a
/// local one does not hide it; the id breaks ties between runs started in the same instant.
/// Stored before, by id: the order runs were stored in on this database (an imported run
/// counts from when it was imported).
pub(super) const RUN_IDS_BEFORE: &str =
    "SELECT id FROM runs WHERE id < ?1 ORDER BY id DESC LIMIT ?2";

pub(super) const LATEST_RUN: &str = "SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1";

pub(super) const LATEST_RUN_WITH_TAG: &str =
    "SELECT id FROM runs WHERE tag = ?1 ORDER BY started_at DESC, id DESC LIMIT 1";

/// Oldest first, so the newest run ends up next to the prompt in a terminal listing.
pub(super) const LIST_RUNS: &str = "SELECT r.id, r.started_at, r.finished_at, r.tag, \
     (SELECT count(*) FROM results s WHERE s.run_id = r.id), \
     json_extract(e.json, '$.hostname'), json_extract(e.json, '$.kernel_release') \
     FROM runs r JOIN environments e ON e.id = r.environment_id \
     ORDER BY r.started_at, r.id";
